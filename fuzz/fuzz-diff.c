/*
 * fuzz-diff.c: libFuzzer target for the loop's target stage (target.h):
 * the diff parser, the C brace scanner and the mapping of changed lines to
 * functions, on text from an untrusted agent's change. A parsed diff has
 * a path for every file, known statuses and ranges in order (an insertion
 * between two neighbouring lines); the scanner's functions end where they
 * start or later, within the text; classify names only functions it was
 * given. Anything else aborts. Seeds: tests/data/diff/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "target.h"
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

static void bad(const char *what, const uint8_t *data, size_t size)
{
	fprintf(stderr, "%s, from %zu bytes:\n%.*s\n", what, size, (int)size, (const char *)data);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct target_diff d;
	struct target_fns scanned = { 0 }, *fns;
	struct target_result r;
	struct target_share shares[] = { { "f", 0.5 }, { "main", 0.1 } };
	struct strbuf why = STRBUF_INIT;
	int64_t lines = 1;

	for (size_t i = 0; i < size; i++)
		lines += text[i] == '\n';
	/* the scanner on the same bytes, as source */
	target_scan_source(text, size, &scanned);
	target_fns_sort(&scanned);
	for (size_t i = 0; i < scanned.nr; i++) {
		const struct target_fn *f = &scanned.v[i];

		if (!f->name || !*f->name || f->lo < 1 || f->hi < f->lo || f->hi > lines)
			bad("a scanned function outside the text", data, size);
		if (i && f->lo <= scanned.v[i - 1].lo)
			bad("scanned functions out of order after sorting", data, size);
	}
	if (target_parse_diff(text, size, &d, &why)) {
		if (!why.len)
			bad("a diff refused without a reason", data, size);
		if (d.nr || d.files)
			bad("a refused diff that kept files", data, size);
		goto out;
	}
	for (size_t i = 0; i < d.nr; i++) {
		const struct target_file *f = &d.files[i];

		if (!f->path || !strchr("MADB", f->status))
			bad("a file without a path or with an unknown status", data, size);
		for (size_t k = 0; k < f->nr; k++) {
			const struct target_range *rg = &f->v[k];

			if (rg->lo < 0 || rg->hi < rg->lo || (rg->insert && rg->hi != rg->lo + 1))
				bad("a changed range that is not one", data, size);
		}
	}
	/* every file gets the scanned functions: the mapping names only those */
	fns = xcalloc(d.nr + 1, sizeof(*fns));
	for (size_t i = 0; i < d.nr; i++)
		fns[i] = scanned;
	target_classify(&d, fns, shares, 2, &r);
	for (size_t i = 0; i < r.nr; i++) {
		bool known = false;

		for (size_t k = 0; k < scanned.nr && !known; k++)
			known = !strcmp(r.changed[i].function, scanned.v[k].name);
		if (!known || (i && r.changed[i].share > r.changed[i - 1].share))
			bad("a changed function it was not given, or out of order", data, size);
	}
	target_changed_text(&r, 5, &why);
	target_result_release(&r);
	free(fns);
	target_diff_release(&d);
out:
	target_fns_release(&scanned);
	strbuf_release(&why);
	return 0;
}
