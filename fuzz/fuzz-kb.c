/*
 * fuzz-kb.c: libFuzzer target for the knowledge base's report.md reader.
 * Each input is parsed as a report; one that parses is written out again
 * and must read back to the same fields (a mismatch aborts, so the fuzzer
 * reports it as a crash), and its JSON must build. The input is also made
 * into a slug, which must be lowercase a-z, 0-9 and single inner '-'.
 * Seeds: tests/data/kb/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "kb.h"

static void quiet(const char *prefix, const char *msg)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

static void same(const char *what, const char *a, const char *b, const struct strbuf *text)
{
	if ((!a) != (!b) || (a && strcmp(a, b))) {
		fprintf(stderr, "%s reads back as '%s', not '%s', from:\n%s", what, b ? b : "(null)",
			a ? a : "(null)", text->buf);
		abort();
	}
}

static void check_slug(const char *title)
{
	char *s = kb_slug(title);
	size_t n = strlen(s);

	if (!n || n > KB_SLUG_MAX || s[0] == '-' || s[n - 1] == '-' || strstr(s, "--") ||
	    s[strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-")]) {
		fprintf(stderr, "bad slug '%s'\n", s);
		abort();
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf text = STRBUF_INIT, title = STRBUF_INIT;
	struct kb_entry e, again;
	json_t *j;

	strbuf_add(&title, data, size < 256 ? size : 256);
	check_slug(title.buf);
	strbuf_release(&title);

	if (kb_parse_report((const char *)data, size, "report.md", &e)) {
		kb_entry_release(&e);
		return 0;
	}
	kb_format_report(&e, &text);
	if (kb_parse_report(text.buf, text.len, "report.md", &again)) {
		fprintf(stderr, "a report written out does not parse:\n%s", text.buf);
		abort();
	}
	same("title", e.title, again.title, &text);
	same("function", e.function, again.function, &text);
	same("lens", e.lens, again.lens, &text);
	same("verdict", verdict_kind_names[e.verdict], verdict_kind_names[again.verdict], &text);
	same("change", e.change, again.change, &text);
	same("commit", e.commit, again.commit, &text);
	same("what", e.what, again.what, &text);
	same("hypothesis", e.hypothesis, again.hypothesis, &text);
	same("results", e.results, again.results, &text);
	if (e.nr_reasons != again.nr_reasons || e.round != again.round || e.when != again.when ||
	    e.utc_offset != again.utc_offset || isnan(e.expected_gain_pct) != isnan(again.expected_gain_pct) ||
	    (!isnan(e.expected_gain_pct) && e.expected_gain_pct != again.expected_gain_pct)) {
		fprintf(stderr, "fields read back differently from:\n%s", text.buf);
		abort();
	}
	for (size_t i = 0; i < e.nr_reasons; i++)
		same("reason", e.reasons[i], again.reasons[i], &text);
	j = kb_entry_to_json(&e, NULL);
	if (!j || json_object_size(j) != 15) {
		fprintf(stderr, "no JSON for a parsed report\n");
		abort();
	}
	json_decref(j);
	kb_entry_release(&again);
	kb_entry_release(&e);
	strbuf_release(&text);
	return 0;
}
