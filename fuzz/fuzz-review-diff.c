/*
 * fuzz-review-diff.c: libFuzzer target for `catalog review`'s diff
 * parser (review-diff.h), on git diff text of untrusted trees: a parsed
 * diff names every file (no NUL in a name), its ranges are 1-based, in
 * order and apart, and a line is touched exactly when a range holds it.
 * Anything else aborts. Seeds: tests/data/review-diff/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review-diff.h"
#include "strbuf.h"
#include "util.h"

static void quiet(const char *prefix, const char *msg)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct review_diff d;
	struct strbuf why = STRBUF_INIT;

	if (review_parse_diff((const char *)data, size, &d, &why)) {
		if (!why.len)
			abort();
		strbuf_release(&why);
		return 0;
	}
	for (size_t i = 0; i < d.nr; i++) {
		const struct review_file *f = &d.files[i];

		if (!f->path || !*f->path)
			abort();
		for (size_t j = 0; j < f->nr; j++) {
			if (!f->v[j].lo || f->v[j].hi < f->v[j].lo)
				abort();
			if (j && f->v[j].lo <= f->v[j - 1].hi + 1)
				abort();
			if (!review_file_touches(f, f->v[j].lo, f->v[j].lo) ||
			    review_file_touches(f, f->v[j].hi + 1, f->v[j].hi + 1) != (j + 1 < f->nr && f->v[j + 1].lo == f->v[j].hi + 1))
				abort();
		}
	}
	review_diff_release(&d);
	strbuf_release(&why);
	return 0;
}
