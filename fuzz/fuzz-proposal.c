/*
 * fuzz-proposal.c: libFuzzer target for the proposal an agent writes to
 * $HOTLOOP_PROPOSAL (loop_parse_proposal()), hostile input from an
 * untrusted program. A proposal that parses holds the strings the JSON
 * gives, made printable (what strbuf_add_printable() makes of them), and a
 * finite gain or NAN; one that does not leaves nothing behind and a reason
 * that is one printable line. Anything else aborts.
 * Seeds: tests/data/proposal/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "loop.h"

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

/*
 * The field holds the JSON's string made printable (newlines kept where
 * 'lines'), with no control character left, or is NULL when the key is
 * not a string.
 */
static void same_string(const char *field, json_t *doc, const char *key, bool lines,
			const uint8_t *data, size_t size)
{
	json_t *v = json_object_get(doc, key);
	struct strbuf want = STRBUF_INIT;

	if (!json_is_string(v)) {
		if (field)
			bad("a string where the JSON has none", data, size);
		return;
	}
	strbuf_add_printable(&want, json_string_value(v), json_string_length(v), SIZE_MAX, lines);
	if (!field || strcmp(field, want.buf))
		bad("a string that is not the JSON's", data, size);
	for (const char *p = field; *p; p++)
		if ((unsigned char)*p < 0x20 && !(lines && (*p == '\n' || *p == '\t')))
			bad("a control character in a proposal's string", data, size);
	strbuf_release(&want);
}

/* The reason: not empty, one line, UTF-8 without control characters (it is printed and stored). */
static void check_why(const struct strbuf *why, const uint8_t *data, size_t size)
{
	if (!why->len || strlen(why->buf) != why->len)
		bad("a failure without a reason", data, size);
	for (size_t i = 0, n; i < why->len; i += n) {
		int32_t c = utf8_decode((const unsigned char *)why->buf + i, &n);

		if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0))
			bad("a reason that is not one printable line of UTF-8", data, size);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct loop_proposal p;
	struct strbuf why = STRBUF_INIT;
	json_t *doc;

	if (loop_parse_proposal((const char *)data, size, &p, &why)) {
		check_why(&why, data, size);
		if (p.function || p.hypothesis || p.title || !isnan(p.expected_gain_pct))
			bad("a failed proposal that was not released", data, size);
		goto out;
	}
	if (why.len)
		bad("a reason for a proposal that parsed", data, size);
	if (!isnan(p.expected_gain_pct) && !isfinite(p.expected_gain_pct))
		bad("an expected gain that is not finite", data, size);
	/* jansson reads the same bytes the same way: the proposal must hold what they say */
	doc = json_loadb((const char *)data, size, 0, NULL);
	if (!json_is_object(doc))
		bad("a proposal from what is not a JSON object", data, size);
	same_string(p.function, doc, "function", false, data, size);
	same_string(p.hypothesis, doc, "hypothesis", true, data, size);
	same_string(p.title, doc, "title", false, data, size);
	if (isnan(p.expected_gain_pct) ? json_is_number(json_object_get(doc, "expected_gain_pct")) :
	    p.expected_gain_pct != json_number_value(json_object_get(doc, "expected_gain_pct")))
		bad("an expected gain that is not the JSON's", data, size);
	json_decref(doc);
out:
	loop_proposal_release(&p);
	if (p.function || p.hypothesis || p.title || !isnan(p.expected_gain_pct))
		bad("a released proposal that still holds something", data, size);
	strbuf_release(&why);
	return 0;
}
