/*
 * t-verdict.c: unit tests for the gate's decision on a fixed scenario
 * (primary 10% faster, one quiet guard, fingerprints, memory and a metric
 * all fine): that it keeps, what no number in its JSON may be, the exact
 * point of identical instruction counts, and measurements that are not a
 * comparison. Pairs come from a fixed pseudo-random sequence, so every run
 * sees the same numbers. The decisions themselves, one broken thing at a
 * time, are cases as data: tests/data/verdict, run by t-verdict-cases.c.
 */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util.h"
#include "stats.h"
#include "verdict.h"

#define MAXP 64

struct side {
	double base[MAXP], cand[MAXP];
	struct vd_run base_runs[MAXP], cand_runs[MAXP];
	double mbase[4], mcand[4];
	struct vd_metric_values metric;
};

struct fixture {
	struct side side[2];
	struct vd_workload w[2];
	struct vd_measurements m;
	struct metric_rule rule;
	struct gate_rules r;
	struct verdict v;
};

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

/* n pairs around base seconds, the candidate 'factor' times as long, +-jitter/2 each. */
static void fill_pairs(struct fixture *f, int wi, size_t n, double base, double factor, double jitter)
{
	struct side *s = &f->side[wi];

	for (size_t i = 0; i < n; i++) {
		s->base[i] = base * (1 + jitter * uniform());
		s->cand[i] = base * factor * (1 + jitter * uniform());
	}
	f->w[wi].nr_pairs = n;
	f->w[wi].nr_base_runs = f->w[wi].nr_cand_runs = n;
}

/* The good scenario: 'big' 10% faster over 12 pairs, guard 'small' unchanged. */
static void setup(struct fixture *f)
{
	struct gate_rules def = GATE_RULES_DEFAULT;

	memset(f, 0, sizeof(*f));
	rng = 88172645463325252ull;
	for (int wi = 0; wi < 2; wi++) {
		struct side *s = &f->side[wi];
		f->w[wi].base = s->base;
		f->w[wi].cand = s->cand;
		f->w[wi].base_runs = s->base_runs;
		f->w[wi].cand_runs = s->cand_runs;
		f->w[wi].fingerprint = VD_FINGERPRINT_MATCH;
		for (int i = 0; i < MAXP; i++)
			s->base_runs[i].peak_rss_kb = s->cand_runs[i].peak_rss_kb = 1000 + wi;
	}
	f->w[0].name = "big";
	f->w[0].primary = true;
	f->w[1].name = "small";
	fill_pairs(f, 0, 12, 1.0, 0.90, 0.02);
	fill_pairs(f, 1, 12, 0.5, 1.00, 0.02);
	f->side[0].mbase[0] = f->side[0].mbase[1] = 1000;
	f->side[0].mcand[0] = f->side[0].mcand[1] = 1100;
	f->side[0].metric = (struct vd_metric_values){ "events/s", f->side[0].mbase, 2,
						      f->side[0].mcand, 2 };
	f->w[0].metrics = &f->side[0].metric;
	f->w[0].nr_metrics = 1;
	f->m.workloads = f->w;
	f->m.nr_workloads = 2;
	f->m.test = VD_TEST_PASSED;
	f->r = def;
	f->r.ram_budget = 4096 * 1024;
	f->rule = (struct metric_rule){ "events/s", true, 0.02 };
	f->r.metrics = &f->rule;
	f->r.nr_metrics = 1;
	f->v = (struct verdict)VERDICT_INIT;
}

static bool has_reason(const struct verdict *v, const char *needle)
{
	for (size_t i = 0; i < v->nr_reasons; i++)
		if (strstr(v->reasons[i], needle))
			return true;
	return false;
}

static void print_reasons(const struct verdict *v)
{
	fprintf(stderr, "verdict %s\n", verdict_kind_name(v->kind));
	for (size_t i = 0; i < v->nr_reasons; i++)
		fprintf(stderr, "  %s\n", v->reasons[i]);
}

static void decide(struct fixture *f)
{
	assert_int_equal(verdict_decide(&f->m, &f->r, &f->v), 0);
}

static void test_verdict__good_scenario_keeps(void **state)
{
	struct fixture f;

	setup(&f);
	decide(&f);
	if (f.v.kind != VERDICT_KEEP)
		print_reasons(&f.v);
	assert_int_equal(f.v.kind, VERDICT_KEEP);
	assert_true(has_reason(&f.v, "primary 'big' improved"));
	assert_true(has_reason(&f.v, "at least the 3% required"));
	assert_string_equal(f.v.primary.workload, "big");
	assert_int_equal(f.v.primary.pairs, 12);
	assert_true(f.v.primary.change_pct < -8 && f.v.primary.change_pct > -12);
	assert_true(f.v.primary.ci_low_pct <= f.v.primary.change_pct);
	assert_true(f.v.primary.ci_high_pct < 0);
	assert_true(f.v.primary.noise_pct > 0 && f.v.primary.noise_pct < 3);
	assert_int_equal(f.v.nr_guards, 1);
	assert_false(f.v.guards[0].regressed);
	assert_true(f.v.memory.ok);
	assert_int_equal(f.v.memory.cand_peak_rss_kb, 1001);
	assert_int_equal(f.v.memory.budget_kb, 4096);
	assert_int_equal(f.v.nr_metrics, 1);
	assert_true(f.v.metrics[0].ok);
	assert_true(fabs(f.v.metrics[0].change_pct - 10) < 1e-9);
	assert_true(f.v.correctness.ok);
	assert_int_equal(f.v.correctness.nr_fingerprints, 2);
	assert_false(f.v.suspicious);
	verdict_release(&f.v);
	verdict_release(&f.v);	/* released twice is harmless */
}

static void test_verdict__unusable_numbers(void **state)
{
	static const struct {
		const char *what;
		int wi;
		size_t pair;
		double base, cand;
		const char *reason;
	} cases[] = {
		{ "zero base time", 0, 2, 0.0, 0.9, "workload 'big' pair 3 is unusable (baseline 0, candidate 0.9)" },
		{ "negative candidate time", 1, 0, 0.5, -0.1, "workload 'small' pair 1 is unusable" },
		{ "NaN time", 0, 11, NAN, 0.9, "workload 'big' pair 12 is unusable (baseline nan" },
		{ "infinite time", 0, 5, 1.0, INFINITY, "pair 6 is unusable" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fixture f;
		json_t *j;
		char *text;

		setup(&f);
		f.side[cases[i].wi].base[cases[i].pair] = cases[i].base;
		f.side[cases[i].wi].cand[cases[i].pair] = cases[i].cand;
		decide(&f);
		if (f.v.kind != VERDICT_INCONCLUSIVE || !has_reason(&f.v, cases[i].reason)) {
			print_reasons(&f.v);
			fail_msg("%s", cases[i].what);
		}
		/* no inf or nan reaches the document: every number is there, finite or null */
		j = verdict_to_json(&f.v);
		text = json_dumps(j, JSON_COMPACT);
		assert_non_null(text);
		for (int k = 0; k < 2; k++) {
			json_t *e = k ? json_array_get(json_object_get(j, "guards"), 0)
				      : json_object_get(j, "primary");
			static const char *keys[] = { "change_pct", "ci_low_pct", "ci_high_pct", "noise_pct" };
			for (size_t n = 0; n < ARRAY_SIZE(keys); n++) {
				json_t *x = json_object_get(e, keys[n]);
				assert_non_null(x);
				assert_true(json_is_null(x) || isfinite(json_real_value(x)));
			}
		}
		assert_true(json_is_null(json_object_get(cases[i].wi ?
			json_array_get(json_object_get(j, "guards"), 0) : json_object_get(j, "primary"),
			"change_pct")));
		free(text);
		json_decref(j);
		verdict_release(&f.v);
	}
}

static void test_verdict__instructions(void **state)
{
	static const struct {
		const char *what;
		double pb[2], pc[2], gb[2], gc[2];
		enum verdict_kind want;
		const char *reason;
	} cases[] = {
		{ "exact win", { 1e9, 1e9 }, { 9.5e8, 9.5e8 }, { 1e6, 1e6 }, { 1e6, 1e6 },
		  VERDICT_KEEP, "primary 'big' improved 5.000% (exact: identical repeats, 2 pairs)" },
		{ "exact win too small", { 1e9, 1e9 }, { 9.8e8, 9.8e8 }, { 1e6, 1e6 }, { 1e6, 1e6 },
		  VERDICT_REJECT, "less than the 3% improvement required" },
		{ "tiny exact guard regression has no floor", { 1e9, 1e9 }, { 9e8, 9e8 },
		  { 1e6, 1e6 }, { 1.03e6, 1.03e6 }, VERDICT_REJECT,
		  "guard 'small' regressed 3.000% (exact: identical repeats, 2 pairs), more than 2%" },
		{ "repeat differs: noisy", { 1e9, 1.001e9 }, { 9e8, 9e8 }, { 1e6, 1e6 }, { 1e6, 1e6 },
		  VERDICT_INCONCLUSIVE, "2 pairs whose counts differ between repeats" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fixture f;

		setup(&f);
		f.r.metric = GATE_METRIC_INSTRUCTIONS;
		memcpy(f.side[0].base, cases[i].pb, sizeof(cases[i].pb));
		memcpy(f.side[0].cand, cases[i].pc, sizeof(cases[i].pc));
		memcpy(f.side[1].base, cases[i].gb, sizeof(cases[i].gb));
		memcpy(f.side[1].cand, cases[i].gc, sizeof(cases[i].gc));
		f.w[0].nr_pairs = f.w[1].nr_pairs = 2;
		f.w[0].nr_base_runs = f.w[0].nr_cand_runs = 2;
		f.w[1].nr_base_runs = f.w[1].nr_cand_runs = 2;
		decide(&f);
		if (f.v.kind != cases[i].want || !has_reason(&f.v, cases[i].reason)) {
			print_reasons(&f.v);
			fail_msg("%s", cases[i].what);
		}
		if (cases[i].want == VERDICT_KEEP) {
			assert_true(f.v.primary.exact);
			assert_true(f.v.primary.noise_pct == 0);
			assert_true(f.v.primary.ci_low_pct == f.v.primary.ci_high_pct);
		}
		verdict_release(&f.v);
	}
}

static void test_verdict__bad_measurements_are_errors(void **state)
{
	struct fixture f;

	setup(&f);
	f.m.nr_workloads = 0;
	assert_int_equal(verdict_decide(&f.m, &f.r, &f.v), -1);
	verdict_release(&f.v);
	setup(&f);
	f.w[1].primary = true;
	assert_int_equal(verdict_decide(&f.m, &f.r, &f.v), -1);
	verdict_release(&f.v);
	setup(&f);
	f.r.min_improvement = NAN;
	assert_int_equal(verdict_decide(&f.m, &f.r, &f.v), -1);
	verdict_release(&f.v);
	/* no primary flag: the first workload is the primary */
	setup(&f);
	f.w[0].primary = false;
	decide(&f);
	assert_string_equal(f.v.primary.workload, "big");
	assert_int_equal(f.v.kind, VERDICT_KEEP);
	verdict_release(&f.v);
}

static void expect_type(json_t *o, const char *key, int type)
{
	json_t *x = json_object_get(o, key);

	if (!x || json_typeof(x) != type)
		fail_msg("key '%s': %s", key, x ? "wrong type" : "missing");
}

static void test_verdict__json_shape(void **state)
{
	struct fixture f;
	json_t *j, *x;

	setup(&f);
	f.side[0].mbase[0] = f.side[0].mbase[1] = 0;	/* a base of 0: change_pct null */
	decide(&f);
	j = verdict_to_json(&f.v);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "keep");
	expect_type(j, "reasons", JSON_ARRAY);
	expect_type(j, "suspicious", JSON_FALSE);
	x = json_object_get(j, "primary");
	expect_type(x, "workload", JSON_STRING);
	assert_string_equal(json_string_value(json_object_get(x, "metric")), "cpu");
	expect_type(x, "change_pct", JSON_REAL);
	expect_type(x, "ci_low_pct", JSON_REAL);
	expect_type(x, "ci_high_pct", JSON_REAL);
	expect_type(x, "pairs", JSON_INTEGER);
	expect_type(x, "noise_pct", JSON_REAL);
	assert_null(json_object_get(x, "regressed"));
	x = json_array_get(json_object_get(j, "guards"), 0);
	assert_string_equal(json_string_value(json_object_get(x, "workload")), "small");
	expect_type(x, "regressed", JSON_FALSE);
	expect_type(x, "ci_high_pct", JSON_REAL);
	x = json_object_get(j, "memory");
	assert_int_equal(json_integer_value(json_object_get(x, "base_peak_rss_kb")), 1001);
	assert_int_equal(json_integer_value(json_object_get(x, "cand_peak_rss_kb")), 1001);
	assert_int_equal(json_integer_value(json_object_get(x, "budget_kb")), 4096);
	expect_type(x, "ok", JSON_TRUE);
	x = json_array_get(json_object_get(j, "metrics"), 0);
	assert_string_equal(json_string_value(json_object_get(x, "name")), "events/s");
	expect_type(x, "base", JSON_REAL);
	expect_type(x, "cand", JSON_REAL);
	expect_type(x, "change_pct", JSON_NULL);
	expect_type(x, "tolerance_pct", JSON_REAL);
	assert_string_equal(json_string_value(json_object_get(x, "better")), "higher");
	expect_type(x, "ok", JSON_TRUE);
	x = json_object_get(j, "correctness");
	assert_string_equal(json_string_value(json_object_get(x, "test")), "passed");
	expect_type(x, "ok", JSON_TRUE);
	x = json_array_get(json_object_get(x, "fingerprints"), 1);
	assert_string_equal(json_string_value(json_object_get(x, "workload")), "small");
	expect_type(x, "match", JSON_TRUE);
	json_decref(j);
	verdict_release(&f.v);

	/* no budget: budget_kb is null; a name that is not UTF-8 still gives a document */
	setup(&f);
	f.r.ram_budget = 0;
	f.w[1].name = "sm\xff";
	f.m.test = VD_TEST_NOT_RUN;
	decide(&f);
	j = verdict_to_json(&f.v);
	expect_type(json_object_get(j, "memory"), "budget_kb", JSON_NULL);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(j, "guards"), 0), "workload")), "sm\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "correctness"),
							      "test")), "not-run");
	json_decref(j);
	verdict_release(&f.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict__good_scenario_keeps),
		cmocka_unit_test(test_verdict__unusable_numbers),
		cmocka_unit_test(test_verdict__instructions),
		cmocka_unit_test(test_verdict__bad_measurements_are_errors),
		cmocka_unit_test(test_verdict__json_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
