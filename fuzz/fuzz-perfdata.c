/*
 * fuzz-perfdata.c: libFuzzer target for the perf.data reader. Every input
 * goes through perfdata_decode(): it either builds a profile that
 * validates, or fails with an error; a crash, a sanitizer report, a leak or
 * a hang is a bug. Seeds: tests/data/perfdata/ (small real files) and
 * tests/data/perfdata-bad/.
 */
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#include "profile.h"
#include "perfdata.h"

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;

	set_error_routine(quiet);
	set_warn_routine(quiet);
	profile_init(&p);
	if (!perfdata_decode(&p, data, size, "fuzz") && profile_validate(&p))
		BUG("perfdata_decode returned a profile that does not validate");
	profile_release(&p);
	return 0;
}
