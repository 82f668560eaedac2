/*
 * prompt.c: the agent's side of the loop: the prompt it gets (a template
 * with {{placeholders}} and a hint per lens), the proposal it may write
 * back, and its way of saying it has nothing to try (NO CANDIDATE).
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "loop.h"
#include "strbuf.h"
#include "util.h"

const char loop_default_prompt[] =
"You are improving the performance of this project, one change at a time.\n"
"hotloop measures every change and keeps it only when it is correct and\n"
"measurably faster. This is round {{round}} of at most {{rounds}}.\n"
"\n"
"Rules:\n"
"1. Pick ONE owned hot function from the brief below whose attributed share\n"
"   is at least {{min_share}}: {{targets}}.\n"
"2. Read the knowledge base below first: do not repeat an idea that was\n"
"   rejected, unless you say what is different this time.\n"
"3. Change only that function (and what it needs). Never touch tests,\n"
"   benchmarks, inputs or hotloop.conf; these paths are protected and a\n"
"   change to them is rejected before it is built: {{protected}}.\n"
"4. Keep the output identical: every workload's output is compared with\n"
"   the baseline's, and the tests ({{test}}) must pass.\n"
"5. Before you finish, write your proposal as JSON to the file named in\n"
"   $HOTLOOP_PROPOSAL: {\"function\": \"...\", \"title\": \"a few words\",\n"
"   \"hypothesis\": \"why it will be faster\", \"expected_gain_pct\": N}.\n"
"6. If you see nothing worth trying, change nothing and print a line\n"
"   NO CANDIDATE.\n"
"\n"
"Lens for this round: {{lens}}. {{lens_hint}}\n"
"\n"
"The gate: build ({{build}}), tests, output fingerprints, then the\n"
"candidate against the current best in interleaved pairs on every workload\n"
"({{workloads}}); the primary must improve by at least {{min_improvement}}\n"
"and no other workload may regress by more than {{guard_regression}}.\n"
"\n"
"# Brief of the current best\n"
"\n"
"{{brief}}\n"
"\n"
"# Knowledge base (what was tried before)\n"
"\n"
"{{kb}}\n";

int loop_render(const char *tmpl, const struct loop_var *vars, size_t nr, struct strbuf *out)
{
	const char *p = tmpl, *open;

	while ((open = strstr(p, "{{"))) {
		const char *close = strstr(open + 2, "}}");
		size_t len;
		size_t i;

		if (!close)
			break;
		strbuf_add(out, p, (size_t)(open - p));
		len = (size_t)(close - open - 2);
		for (i = 0; i < nr; i++)
			if (strlen(vars[i].name) == len && !strncmp(vars[i].name, open + 2, len))
				break;
		if (i == nr)
			return error("unknown placeholder '{{%.*s}}' in the prompt template", (int)len, open + 2);
		strbuf_addstr(out, vars[i].value ? vars[i].value : "");
		p = close + 2;
	}
	strbuf_addstr(out, p);
	return 0;
}

/*
 * A string of the proposal, made printable: the agent wrote it, and it is
 * printed, committed and stored (newlines kept only where 'lines').
 */
static int take_string(json_t *doc, const char *key, bool lines, char **out, struct strbuf *why)
{
	json_t *v = json_object_get(doc, key);
	struct strbuf sb = STRBUF_INIT;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		strbuf_addf(why, "\"%s\" is not a string", key);
		return -1;
	}
	strbuf_add_printable(&sb, json_string_value(v), json_string_length(v), SIZE_MAX, lines);
	*out = strbuf_detach(&sb, NULL);
	return 0;
}

int loop_parse_proposal(const char *text, size_t len, struct loop_proposal *p, struct strbuf *why)
{
	json_error_t jerr;
	json_t *doc = json_loadb(text, len, 0, &jerr), *gain;
	int ret = -1;

	memset(p, 0, sizeof(*p));
	p->expected_gain_pct = NAN;
	if (!doc) {
		/* jansson quotes the bytes near the error: the agent's, printed and stored */
		strbuf_addstr(why, "not JSON: ");
		strbuf_add_printable(why, jerr.text, strlen(jerr.text), SIZE_MAX, false);
		strbuf_addf(why, " (line %d)", jerr.line);
		return -1;
	}
	if (!json_is_object(doc)) {
		strbuf_addstr(why, "not a JSON object");
		goto out;
	}
	if (take_string(doc, "function", false, &p->function, why) ||
	    take_string(doc, "hypothesis", true, &p->hypothesis, why) ||
	    take_string(doc, "title", false, &p->title, why))
		goto out;
	gain = json_object_get(doc, "expected_gain_pct");
	if (gain && !json_is_null(gain)) {
		if (!json_is_number(gain) || !isfinite(json_number_value(gain))) {
			strbuf_addstr(why, "\"expected_gain_pct\" is not a number");
			goto out;
		}
		p->expected_gain_pct = json_number_value(gain);
	}
	ret = 0;
out:
	if (ret)
		loop_proposal_release(p);
	json_decref(doc);
	return ret;
}

void loop_proposal_release(struct loop_proposal *p)
{
	free(p->function);
	free(p->hypothesis);
	free(p->title);
	memset(p, 0, sizeof(*p));
	p->expected_gain_pct = NAN;
}

bool loop_no_candidate(const char *output)
{
	const char *p = output;

	while (p && *p) {
		size_t len = strcspn(p, "\n");
		const char *s = p;

		while (len && (*s == ' ' || *s == '\t')) {
			s++;
			len--;
		}
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
			len--;
		if (len == strlen("NO CANDIDATE") && !strncmp(s, "NO CANDIDATE", len))
			return true;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static const struct { const char *lens, *hint; } lens_hints[] = {
	{ "algorithmic", "Look for a better algorithm or data structure: fewer steps, not faster steps." },
	{ "locality", "Look at memory: access order, layout, contiguous data, fewer cache misses." },
	{ "dedup", "Look for work done twice: hoist it out of loops, cache or memoize it." },
	{ "datashape", "Look at the shape of the data: smaller types, fewer indirections, better packing." },
	{ "branchflat", "Look at branches: make hot ones predictable, or remove them." },
};

const char *loop_lens_hint(const char *lens)
{
	for (size_t i = 0; i < ARRAY_SIZE(lens_hints); i++)
		if (!strcmp(lens_hints[i].lens, lens))
			return lens_hints[i].hint;
	return "";
}
