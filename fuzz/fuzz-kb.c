/*
 * fuzz-kb.c: libFuzzer target for the knowledge base's report.md reader.
 * Each input is parsed as a report; one that parses is written out again
 * and must read back to the same fields, every field of struct kb_entry
 * (a mismatch aborts, so the fuzzer reports it as a crash), and its JSON
 * must have exactly the keys docs/kb.md lists. The input is also made
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

/*
 * The keys of an attempt in docs/kb.md ("## JSON"), in its order; "diff"
 * comes on top with --diff. A key kb_entry_to_json() adds or drops fails
 * here by name: add it to the docs and to this list.
 */
static const char *const json_keys[] = {
	"slug", "dir", "title", "function", "verdict", "date", "round", "lens", "agent",
	"expected_gain_pct", "change", "commit", "what", "hypothesis", "results", "reasons",
};

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

static bool is_listed(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(json_keys); i++)
		if (!strcmp(json_keys[i], key))
			return true;
	return false;
}

/* Exactly the documented keys (and "diff" when asked for), each of its type. */
static void check_json(const struct kb_entry *e, const char *diff)
{
	json_t *j = kb_entry_to_json(e, diff), *v, *r;
	const char *key, *name = verdict_kind_names[e->verdict];

	if (!json_is_object(j)) {
		fprintf(stderr, "no JSON for a parsed report\n");
		abort();
	}
	json_object_foreach(j, key, v) {
		if (!is_listed(key) && !(diff && !strcmp(key, "diff"))) {
			fprintf(stderr, "the JSON has \"%s\", which docs/kb.md does not list\n", key);
			abort();
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(json_keys); i++) {
		v = json_object_get(j, json_keys[i]);
		if (!v) {
			fprintf(stderr, "the JSON lacks \"%s\", which docs/kb.md lists\n", json_keys[i]);
			abort();
		}
		if (!strcmp(json_keys[i], "round") ? !json_is_integer(v) && !json_is_null(v) :
		    !strcmp(json_keys[i], "expected_gain_pct") ? !json_is_real(v) && !json_is_null(v) :
		    !strcmp(json_keys[i], "reasons") ? !json_is_array(v) :
		    !json_is_string(v) && !json_is_null(v)) {
			fprintf(stderr, "\"%s\" has the wrong type in the JSON\n", json_keys[i]);
			abort();
		}
	}
	if (json_object_size(j) != ARRAY_SIZE(json_keys) + !!diff ||
	    (diff && !json_is_string(json_object_get(j, "diff")))) {
		fprintf(stderr, "the JSON has %zu keys, not %zu\n", json_object_size(j),
			ARRAY_SIZE(json_keys) + !!diff);
		abort();
	}
	v = json_object_get(j, "verdict");
	r = json_object_get(j, "reasons");
	if ((name ? !json_is_string(v) || strcmp(json_string_value(v), name) : !json_is_null(v)) ||
	    json_array_size(r) != e->nr_reasons) {
		fprintf(stderr, "the JSON's verdict or reasons differ from the entry's\n");
		abort();
	}
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf text = STRBUF_INIT, title = STRBUF_INIT;
	struct kb_entry e, again;
	json_t *a, *b;

	strbuf_add(&title, data, size < 256 ? size : 256);
	check_slug(title.buf);
	strbuf_release(&title);

	if (kb_parse_report((const char *)data, size, "report.md", &e)) {
		kb_entry_release(&e);
		return 0;
	}
	/* unknown verdict words are VERDICT_NONE, never out of range */
	if ((unsigned)e.verdict >= VERDICT_NR || e.slug || e.dir) {
		fprintf(stderr, "verdict %d, slug or dir set by the parser\n", (int)e.verdict);
		abort();
	}
	kb_format_report(&e, &text);
	if (kb_parse_report(text.buf, text.len, "report.md", &again)) {
		fprintf(stderr, "a report written out does not parse:\n%s", text.buf);
		abort();
	}
	/* every field of struct kb_entry but slug and dir (not in report.md: NULL) */
	same("title", e.title, again.title, &text);
	same("function", e.function, again.function, &text);
	same("lens", e.lens, again.lens, &text);
	same("agent", e.agent, again.agent, &text);
	same("change", e.change, again.change, &text);
	same("commit", e.commit, again.commit, &text);
	same("what", e.what, again.what, &text);
	same("hypothesis", e.hypothesis, again.hypothesis, &text);
	same("results", e.results, again.results, &text);
	same("slug", e.slug, again.slug, &text);
	same("dir", e.dir, again.dir, &text);
	if (e.verdict != again.verdict) {
		fprintf(stderr, "verdict %d reads back as %d from:\n%s", (int)e.verdict, (int)again.verdict,
			text.buf);
		abort();
	}
	if (e.nr_reasons != again.nr_reasons || e.round != again.round || e.when != again.when ||
	    e.utc_offset != again.utc_offset || isnan(e.expected_gain_pct) != isnan(again.expected_gain_pct) ||
	    (!isnan(e.expected_gain_pct) && e.expected_gain_pct != again.expected_gain_pct)) {
		fprintf(stderr, "fields read back differently from:\n%s", text.buf);
		abort();
	}
	for (size_t i = 0; i < e.nr_reasons; i++)
		same("reason", e.reasons[i], again.reasons[i], &text);

	check_json(&e, NULL);
	check_json(&e, "diff text");
	/* and the whole of what the JSON shows, so a field the checks above miss still counts */
	a = kb_entry_to_json(&e, NULL);
	b = kb_entry_to_json(&again, NULL);
	if (!json_equal(a, b)) {
		fprintf(stderr, "the JSON reads back differently from:\n%s", text.buf);
		abort();
	}
	json_decref(a);
	json_decref(b);
	kb_entry_release(&again);
	kb_entry_release(&e);
	strbuf_release(&text);
	return 0;
}
