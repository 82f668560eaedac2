/*
 * catalog-hook.h: a git pre-commit hook that runs `hotloop catalog review
 * --cached` (the staged content) and blocks the commit at a severity. The
 * hooks directory is git's own (core.hooksPath honoured). A hook that is not
 * hotloop's is never overwritten: it is moved aside and chained (run first),
 * and put back on removal. Strings in a hook_status are its own.
 */
#ifndef HOTLOOP_CATALOG_HOOK_H
#define HOTLOOP_CATALOG_HOOK_H

#include "catalog-rule.h"

/* The line that marks a hook as hotloop's */
#define CAT_HOOK_MARKER "# hotloop-catalog-hook 1"
/* Where a hook that was there before goes, beside pre-commit */
#define CAT_HOOK_CHAINED "pre-commit.hotloop-chained"

enum cat_hook_state {
	CAT_HOOK_NONE,		/* no pre-commit hook */
	CAT_HOOK_OURS,		/* hotloop's (maybe chaining another) */
	CAT_HOOK_FOREIGN,	/* someone else's */
};

struct cat_hook_status {
	char *hooks_dir, *path;	/* git's hooks directory, its pre-commit */
	enum cat_hook_state state;
	bool chained;		/* hotloop's hook runs CAT_HOOK_CHAINED first */
};
#define CAT_HOOK_STATUS_INIT { NULL, NULL, CAT_HOOK_NONE, false }

/* The hook of the repository holding 'dir': 0, or -1 with an error (not a repository) */
int cat_hook_status(const char *dir, struct cat_hook_status *st);
/*
 * Install (or rewrite) hotloop's hook, running 'hotloop' (an absolute
 * path) with --severity 'min'; a foreign hook is chained. 0, or -1 with
 * an error (and nothing changed).
 */
int cat_hook_install(const char *dir, const char *hotloop, enum cat_severity min,
		     struct cat_hook_status *st);
/* Remove hotloop's hook and put back the one it chained; a foreign hook is an error. */
int cat_hook_remove(const char *dir, struct cat_hook_status *st);
void cat_hook_status_release(struct cat_hook_status *st);

#endif
