/*
 * review-diff.h: a unified diff as git writes it, read into the new side's
 * lines that each file's hunks add or change (for `catalog review`). Plain
 * data and a pure parser of untrusted text (fuzz/fuzz-review-diff.c). A
 * review_diff owns its files and their strings until review_diff_release().
 */
#ifndef HOTLOOP_REVIEW_DIFF_H
#define HOTLOOP_REVIEW_DIFF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

/* New-side lines [lo, hi] (1-based) that the diff adds or changes */
struct review_range {
	unsigned lo, hi;
};

enum review_status {
	REVIEW_MODIFIED,
	REVIEW_ADDED,
	REVIEW_DELETED,
	REVIEW_RENAMED,		/* renamed or copied, maybe changed too */
	REVIEW_BINARY,
};

struct review_file {
	char *path;		/* the new side's path (the old one when deleted) */
	enum review_status status;
	struct review_range *v;	/* in order, not overlapping */
	size_t nr, alloc;
};

struct review_diff {
	struct review_file *files;
	size_t nr, alloc;
};

/*
 * Parse a unified diff as git writes it (any context; C-quoted names, renames,
 * binary, new and deleted files); a hunk whose lines do not add up, or
 * a bad hunk header, is an error. 0, or -1 with the reason in 'why'.
 */
int review_parse_diff(const char *text, size_t len, struct review_diff *d, struct strbuf *why);
void review_diff_release(struct review_diff *d);
/* Does the diff add or change a line of f in [lo, hi]? */
bool review_file_touches(const struct review_file *f, unsigned lo, unsigned hi);

#endif
