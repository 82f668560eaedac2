/*
 * t-verdict-cases.c: the gate's decision, cases as data. Every
 * tests/data/verdict/NAME.json holds the rules, the measurements and what
 * verdict_decide() must make of them; the format is in
 * tests/data/verdict/README.md. A new case is a new file, no code.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "verdict.h"

static char *data_dir(void)
{
	const char *env = getenv("HOTLOOP_TEST_DATA");
	const char *file = __FILE__, *slash;

	if (env)
		return xstrfmt("%s/verdict", env);
	slash = strstr(file, "tests/unit/");
	if (!slash)
		return xstrdup("tests/data/verdict");
	return xstrfmt("%.*stests/data/verdict", (int)(slash - file), file);
}

/* ---- reading a case ----------------------------------------------------- */

/* What one case allocated, freed together when it is done. */
struct arena {
	void **v;
	size_t nr, alloc;
};

static void *keep(struct arena *a, void *p)
{
	ALLOC_GROW(a->v, a->nr + 1, a->alloc);
	a->v[a->nr++] = p;
	return p;
}

static void arena_release(struct arena *a)
{
	for (size_t i = 0; i < a->nr; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* Problems with the case file itself, not with the verdict. */
struct reader {
	struct arena mem;
	struct strbuf err;
};

ATTR_PRINTF(2, 3)
static void bad(struct reader *rd, const char *fmt, ...)
{
	va_list ap;

	strbuf_addstr(&rd->err, "    ");
	va_start(ap, fmt);
	strbuf_vaddf(&rd->err, fmt, ap);
	va_end(ap);
	strbuf_addch(&rd->err, '\n');
}

/* Every key of o is one of 'allowed': a misspelled key must not go unread. */
static void only_keys(struct reader *rd, json_t *o, const char *where, const char *const *allowed)
{
	const char *key;
	json_t *val;

	if (!json_is_object(o)) {
		bad(rd, "%s: not an object", where);
		return;
	}
	json_object_foreach(o, key, val) {
		const char *const *a;

		for (a = allowed; *a && strcmp(*a, key); a++)
			;
		if (!*a)
			bad(rd, "%s: unknown key '%s'", where, key);
	}
}

static double get_number(struct reader *rd, json_t *o, const char *key, double dflt,
			 const char *where)
{
	json_t *x = json_object_get(o, key);

	if (!x)
		return dflt;
	if (!json_is_number(x))
		bad(rd, "%s: '%s' is not a number", where, key);
	return json_number_value(x);
}

static bool get_bool(struct reader *rd, json_t *o, const char *key, const char *where)
{
	json_t *x = json_object_get(o, key);

	if (x && !json_is_boolean(x))
		bad(rd, "%s: '%s' is not true or false", where, key);
	return json_is_true(x);
}

/* An array of numbers; "nan", "inf" and "-inf" stand for what JSON cannot hold. */
static double *get_values(struct reader *rd, json_t *o, const char *key, size_t *nr,
			  const char *where)
{
	json_t *a = json_object_get(o, key), *x;
	double *v;
	size_t i;

	*nr = 0;
	if (!a)
		return NULL;
	if (!json_is_array(a)) {
		bad(rd, "%s: '%s' is not an array", where, key);
		return NULL;
	}
	v = keep(&rd->mem, xcalloc(json_array_size(a) + 1, sizeof(*v)));
	json_array_foreach(a, i, x) {
		const char *s = json_string_value(x);

		if (json_is_number(x))
			v[i] = json_number_value(x);
		else if (s && !strcmp(s, "nan"))
			v[i] = NAN;
		else if (s && !strcmp(s, "inf"))
			v[i] = INFINITY;
		else if (s && !strcmp(s, "-inf"))
			v[i] = -INFINITY;
		else
			bad(rd, "%s: %s[%zu] is not a number", where, key, i);
	}
	*nr = json_array_size(a);
	return v;
}

/*
 * A side's runs: each object one run, or "repeat" of them. Without the
 * key, one run per pair that exited 0 and measured no RSS.
 */
static struct vd_run *get_runs(struct reader *rd, json_t *w, const char *key, size_t pairs,
			       size_t *nr, const char *where)
{
	static const char *const run_keys[] = { "repeat", "exit", "signal", "wait_status",
						"timed_out", "no_output", "peak_rss_kb", NULL };
	json_t *a = json_object_get(w, key), *x;
	struct vd_run *runs = NULL;
	size_t alloc = 0, i;

	*nr = 0;
	if (!a) {
		*nr = pairs;
		return keep(&rd->mem, xcalloc(pairs + 1, sizeof(*runs)));
	}
	if (!json_is_array(a)) {
		bad(rd, "%s: '%s' is not an array", where, key);
		return NULL;
	}
	json_array_foreach(a, i, x) {
		char *at = xstrfmt("%s.%s[%zu]", where, key, i);
		struct vd_run run = { 0 };
		double repeat = get_number(rd, x, "repeat", 1, at);
		double status = get_number(rd, x, "exit", 0, at);
		double sig = get_number(rd, x, "signal", 0, at);

		only_keys(rd, x, at, run_keys);
		run.wait_status = sig ? (int)sig : (int)status << 8;
		run.wait_status = (int)get_number(rd, x, "wait_status", run.wait_status, at);
		run.timed_out = get_bool(rd, x, "timed_out", at);
		run.no_output = get_bool(rd, x, "no_output", at);
		run.peak_rss_kb = (uint64_t)get_number(rd, x, "peak_rss_kb", 0, at);
		if (!(repeat >= 1 && repeat <= 10000))
			bad(rd, "%s: 'repeat' must be from 1 to 10000", at);
		for (int k = 0; k < repeat && k < 10000; k++) {
			ALLOC_GROW(runs, *nr + 1, alloc);
			runs[(*nr)++] = run;
		}
		free(at);
	}
	return keep(&rd->mem, runs);
}

static void get_metric_values(struct reader *rd, json_t *w, struct vd_workload *out,
			      const char *where)
{
	static const char *const keys[] = { "name", "base", "cand", NULL };
	json_t *a = json_object_get(w, "metrics"), *x;
	struct vd_metric_values *mv;
	size_t i;

	if (!a)
		return;
	if (!json_is_array(a)) {
		bad(rd, "%s: 'metrics' is not an array", where);
		return;
	}
	mv = keep(&rd->mem, xcalloc(json_array_size(a) + 1, sizeof(*mv)));
	json_array_foreach(a, i, x) {
		char *at = xstrfmt("%s.metrics[%zu]", where, i);

		only_keys(rd, x, at, keys);
		mv[i].name = json_string_value(json_object_get(x, "name"));
		if (!mv[i].name)
			bad(rd, "%s: no 'name'", at);
		mv[i].base = get_values(rd, x, "base", &mv[i].nr_base, at);
		mv[i].cand = get_values(rd, x, "cand", &mv[i].nr_cand, at);
		free(at);
	}
	out->metrics = mv;
	out->nr_metrics = json_array_size(a);
}

static void get_workload(struct reader *rd, json_t *w, struct vd_workload *out, const char *where)
{
	static const char *const keys[] = { "name", "primary", "base", "cand", "base_runs",
					    "cand_runs", "metrics", "fingerprint", NULL };
	const char *fp = json_string_value(json_object_get(w, "fingerprint"));
	size_t nr_cand;

	only_keys(rd, w, where, keys);
	out->name = json_string_value(json_object_get(w, "name"));
	if (!out->name)
		bad(rd, "%s: no 'name'", where);
	out->primary = get_bool(rd, w, "primary", where);
	out->base = get_values(rd, w, "base", &out->nr_pairs, where);
	out->cand = get_values(rd, w, "cand", &nr_cand, where);
	if (nr_cand != out->nr_pairs)
		bad(rd, "%s: %zu base values but %zu cand values", where, out->nr_pairs, nr_cand);
	out->base_runs = get_runs(rd, w, "base_runs", out->nr_pairs, &out->nr_base_runs, where);
	out->cand_runs = get_runs(rd, w, "cand_runs", out->nr_pairs, &out->nr_cand_runs, where);
	get_metric_values(rd, w, out, where);
	if (!fp || !strcmp(fp, "none"))
		out->fingerprint = VD_FINGERPRINT_NONE;
	else if (!strcmp(fp, "match"))
		out->fingerprint = VD_FINGERPRINT_MATCH;
	else if (!strcmp(fp, "mismatch"))
		out->fingerprint = VD_FINGERPRINT_MISMATCH;
	else
		bad(rd, "%s: fingerprint '%s': use none, match or mismatch", where, fp);
}

static void get_measurements(struct reader *rd, json_t *m, struct vd_measurements *out)
{
	static const char *const keys[] = { "workloads", "test", "confidence", NULL };
	const char *test = json_string_value(json_object_get(m, "test"));
	json_t *ws = json_object_get(m, "workloads"), *w;
	struct vd_workload *v;
	size_t i;

	only_keys(rd, m, "measurements", keys);
	if (!test || !strcmp(test, "not-run"))
		out->test = VD_TEST_NOT_RUN;
	else if (!strcmp(test, "passed"))
		out->test = VD_TEST_PASSED;
	else if (!strcmp(test, "failed"))
		out->test = VD_TEST_FAILED;
	else
		bad(rd, "measurements: test '%s': use passed, failed or not-run", test);
	out->confidence = get_number(rd, m, "confidence", 0, "measurements");
	if (!json_is_array(ws)) {
		bad(rd, "measurements: 'workloads' is not an array");
		return;
	}
	v = keep(&rd->mem, xcalloc(json_array_size(ws) + 1, sizeof(*v)));
	json_array_foreach(ws, i, w) {
		char *at = xstrfmt("workloads[%zu]", i);

		get_workload(rd, w, &v[i], at);
		free(at);
	}
	out->workloads = v;
	out->nr_workloads = json_array_size(ws);
}

static void get_rules(struct reader *rd, json_t *r, struct gate_rules *out)
{
	static const char *const keys[] = { "metric", "min_improvement", "guard_regression",
					    "guard_floor_s", "ram_budget", "suspicious_speedup",
					    "metrics", NULL };
	static const char *const metric_keys[] = { "name", "higher_is_better", "tolerance", NULL };
	struct gate_rules def = GATE_RULES_DEFAULT;
	const char *metric = json_string_value(json_object_get(r, "metric"));
	json_t *ms = json_object_get(r, "metrics"), *x;
	size_t i;

	*out = def;
	if (!r)
		return;
	only_keys(rd, r, "rules", keys);
	if (metric) {
		int m = gate_metric_parse(metric);

		if (m < 0)
			bad(rd, "rules: metric '%s': use cpu, wall or instructions", metric);
		else
			out->metric = (enum gate_metric)m;
	}
	out->min_improvement = get_number(rd, r, "min_improvement", out->min_improvement, "rules");
	out->guard_regression = get_number(rd, r, "guard_regression", out->guard_regression, "rules");
	out->guard_floor_s = get_number(rd, r, "guard_floor_s", out->guard_floor_s, "rules");
	out->ram_budget = (uint64_t)get_number(rd, r, "ram_budget", 0, "rules");
	out->suspicious_speedup = get_number(rd, r, "suspicious_speedup", out->suspicious_speedup,
					     "rules");
	if (!ms)
		return;
	if (!json_is_array(ms)) {
		bad(rd, "rules: 'metrics' is not an array");
		return;
	}
	out->metrics = keep(&rd->mem, xcalloc(json_array_size(ms) + 1, sizeof(*out->metrics)));
	json_array_foreach(ms, i, x) {
		char *at = xstrfmt("rules.metrics[%zu]", i);

		only_keys(rd, x, at, metric_keys);
		/* the strings stay the document's; the rules only borrow them here */
		out->metrics[i].name = (char *)json_string_value(json_object_get(x, "name"));
		if (!out->metrics[i].name)
			bad(rd, "%s: no 'name'", at);
		out->metrics[i].higher_is_better = get_bool(rd, x, "higher_is_better", at);
		out->metrics[i].tolerance = get_number(rd, x, "tolerance", 0, at);
		free(at);
	}
	out->nr_metrics = json_array_size(ms);
}

/* ---- matching the verdict ----------------------------------------------- */

/* {"approx": X, "within": T}, {"above": X}, {"below": X}: a number, loosely. */
static bool is_bound(json_t *want)
{
	return json_is_object(want) && (json_object_get(want, "approx") ||
					json_object_get(want, "above") ||
					json_object_get(want, "below"));
}

static bool number_ok(json_t *want, double have)
{
	json_t *approx = json_object_get(want, "approx"), *above = json_object_get(want, "above");
	json_t *below = json_object_get(want, "below");

	if (approx && !(fabs(have - json_number_value(approx)) <=
			json_number_value(json_object_get(want, "within"))))
		return false;
	if (above && !(have > json_number_value(above)))
		return false;
	if (below && !(have < json_number_value(below)))
		return false;
	return true;
}

/*
 * Does 'have' (the verdict's JSON) hold 'want'? Objects match when every
 * key of want matches (have may hold more); arrays element by element and
 * of the same length; numbers within 1e-9 relative, or by a bound; the
 * strings of "reasons" are parts of the reason at the same place.
 */
static void match(struct strbuf *out, const char *path, json_t *want, json_t *have, bool parts)
{
	char *s_want, *s_have;

	if (is_bound(want)) {
		if (!json_is_number(have) || !number_ok(want, json_number_value(have)))
			goto differ;
		return;
	}
	switch (json_typeof(want)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *w;

		if (!json_is_object(have))
			goto differ;
		json_object_foreach(want, key, w) {
			char *p = xstrfmt("%s%s%s", path, *path ? "." : "", key);
			json_t *h = json_object_get(have, key);

			if (!h)
				strbuf_addf(out, "  %s: missing from the verdict\n", p);
			else
				match(out, p, w, h, !strcmp(key, "reasons") && !*path);
			free(p);
		}
		return;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *w;

		if (!json_is_array(have) || json_array_size(have) != json_array_size(want)) {
			if (json_is_array(have))
				strbuf_addf(out, "  %s: %zu elements, the verdict has %zu\n", path,
					    json_array_size(want), json_array_size(have));
			else
				goto differ;
			return;
		}
		json_array_foreach(want, i, w) {
			char *p = xstrfmt("%s[%zu]", path, i);

			match(out, p, w, json_array_get(have, i), parts);
			free(p);
		}
		return;
	}
	case JSON_STRING:
		if (!json_is_string(have))
			goto differ;
		if (parts ? !strstr(json_string_value(have), json_string_value(want))
			  : strcmp(json_string_value(have), json_string_value(want)))
			goto differ;
		return;
	case JSON_INTEGER:
	case JSON_REAL: {
		double w = json_number_value(want), h = json_number_value(have);

		if (!json_is_number(have) || !(fabs(h - w) <= 1e-9 * fmax(1, fabs(w))))
			goto differ;
		return;
	}
	default:
		if (json_typeof(want) != json_typeof(have))
			goto differ;
		return;
	}
differ:
	s_want = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
	s_have = json_dumps(have, JSON_ENCODE_ANY | JSON_COMPACT);
	strbuf_addf(out, "  %s: want %s%s, got %s\n", path, parts ? "a part " : "", s_want, s_have);
	free(s_want);
	free(s_have);
}

/* ---- running the cases -------------------------------------------------- */

static struct strbuf errors = STRBUF_INIT;

static void collect(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s\n", msg);
}

/* Check one case; what is wrong goes to 'out'. */
static void run_case(const char *path, struct strbuf *out)
{
	static const char *const keys[] = { "about", "rules", "measurements", "expect", NULL };
	static const char *const error_keys[] = { "error", NULL };
	struct reader rd = { .err = STRBUF_INIT };
	struct vd_measurements m = { 0 };
	struct verdict v = VERDICT_INIT;
	struct gate_rules r;
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr), *expect, *want_error, *have;
	report_fn old;
	int ret;

	if (!doc) {
		strbuf_addf(out, "  not JSON: %s (line %d)\n", jerr.text, jerr.line);
		return;
	}
	only_keys(&rd, doc, "the case", keys);
	get_rules(&rd, json_object_get(doc, "rules"), &r);
	get_measurements(&rd, json_object_get(doc, "measurements"), &m);
	expect = json_object_get(doc, "expect");
	if (!json_is_object(expect))
		bad(&rd, "no 'expect' object");
	else if (json_object_get(expect, "error"))
		only_keys(&rd, expect, "expect (an error)", error_keys);
	if (rd.err.len) {
		strbuf_addf(out, "  the case cannot be read:\n%s", rd.err.buf);
		goto out;
	}
	want_error = json_object_get(expect, "error");
	strbuf_reset(&errors);
	old = set_error_routine(collect);
	ret = verdict_decide(&m, &r, &v);
	set_error_routine(old);
	if (want_error) {
		if (!ret)
			strbuf_addf(out, "  verdict_decide() succeeded, want an error with \"%s\"\n",
				    json_string_value(want_error));
		else if (!strstr(errors.buf, json_string_value(want_error)))
			strbuf_addf(out, "  error \"%s\" does not hold \"%s\"\n", errors.buf,
				    json_string_value(want_error));
		goto out_verdict;
	}
	if (ret) {
		strbuf_addf(out, "  verdict_decide() failed: %s", errors.buf);
		goto out_verdict;
	}
	have = verdict_to_json(&v);
	{
		size_t before = out->len;

		match(out, "", expect, have, false);
		if (out->len > before) {
			char *dump = json_dumps(have, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

			strbuf_addf(out, "  the verdict:\n%s\n", dump);
			free(dump);
		}
	}
	json_decref(have);
out_verdict:
	verdict_release(&v);
out:
	json_decref(doc);
	arena_release(&rd.mem);
	strbuf_release(&rd.err);
}

static void test_verdict__cases(void **state)
{
	char *dir = data_dir();
	struct strbuf out = STRBUF_INIT;
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	size_t ran = 0, failed = 0;

	if (n < 0)
		fail_msg("cannot list '%s'", dir);
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		size_t len = strlen(name);

		if (len > 5 && !strcmp(name + len - 5, ".json")) {
			char *path = xstrfmt("%s/%s", dir, name);
			struct strbuf one = STRBUF_INIT;

			run_case(path, &one);
			if (one.len) {
				strbuf_addf(&out, "%s:\n%s", name, one.buf);
				failed++;
			}
			ran++;
			strbuf_release(&one);
			free(path);
		}
		free(ents[i]);
	}
	free(ents);
	free(dir);
	if (failed) {
		/* cmocka cuts long messages: the details go to stderr whole */
		fprintf(stderr, "%s", out.buf);
		strbuf_release(&out);
		fail_msg("%zu of %zu verdict cases failed", failed, ran);
	}
	assert_true(ran > 0);
	strbuf_release(&out);
	strbuf_release(&errors);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict__cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
