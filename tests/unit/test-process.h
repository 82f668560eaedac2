/*
 * test-process.h: is a process still running? For the tests that prove
 * what a child leaves behind dies with it: the child starts
 * "sleep 30.<pid>" (a marker no other process has) and the test asks.
 */
#ifndef TEST_PROCESS_H
#define TEST_PROCESS_H

#include <stdbool.h>
#include <stdlib.h>

#include "util.h"

/* Is a process whose command line holds 'marker' alive (not a zombie)? */
static bool marker_running(const char *marker)
{
	/* [s]: the pattern does not match the search's own command line */
	char *cmd = xstrfmt("for p in /proc/[0-9]*; do tr '\\0' ' ' <$p/cmdline 2>/dev/null | "
			    "grep -q -- '[%c]%s' && ! grep -q '^State:.Z' $p/status && exit 0; done; exit 1",
			    marker[0], marker + 1);
	int r = system(cmd);

	free(cmd);
	return r == 0;
}

#endif
