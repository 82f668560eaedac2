/*
 * catalog-review.h: the catalog at code-review time. git's diff (-U0) is
 * read into the changed lines of each file (review-diff.h), and the
 * catalog's findings are kept only where they touch such a line, in the
 * working tree or in the index (what a commit would record). A result owns
 * its strings until review_result_release().
 */
#ifndef HOTLOOP_CATALOG_REVIEW_H
#define HOTLOOP_CATALOG_REVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog-match.h"
#include "review-diff.h"

struct review_spec {
	const char *dir;	/* in the repository; NULL: the current directory */
	const char *base;	/* the revision to compare with; NULL: the default (below) */
	bool cached;		/* the index against base, content from the index */
};

enum review_base_how {
	REVIEW_BASE_GIVEN,	/* --base */
	REVIEW_BASE_UPSTREAM,	/* the merge-base of HEAD and its upstream */
	REVIEW_BASE_HEAD,	/* HEAD (no upstream) */
	REVIEW_BASE_EMPTY,	/* no commit yet: the empty tree */
};

struct review_result {
	struct cat_check check;	/* the findings on changed lines; files: those matched */
	char *top;		/* the repository's top level; paths are relative to it */
	char *base;		/* the commit (or tree) id compared with */
	char *upstream;		/* REVIEW_BASE_UPSTREAM: its name (origin/main) */
	enum review_base_how how;
	size_t changed;		/* files the diff changes, of any language */
};
#define REVIEW_RESULT_INIT { CAT_CHECK_INIT, NULL, NULL, NULL, REVIEW_BASE_GIVEN, 0 }

/*
 * Review the diff spec names with catalog c: 0, or -1 with an error (not
 * a git repository, a base that names no commit, git failing, a catalog
 * that does not compile). Files that cannot be read are noted and counted
 * as check's are.
 */
int cat_review(struct catalog *c, const struct review_spec *spec, struct review_result *out);
void review_result_release(struct review_result *r);
const char *review_base_how_name(enum review_base_how how);

#endif
