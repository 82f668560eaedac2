/*
 * t-verdict.c: unit tests for the gate's decision on fixed tables. A good
 * scenario (primary 10% faster, one quiet guard, fingerprints, memory and a
 * metric all fine) keeps; each case breaks one thing and checks the
 * verdict and the reason it gives. Pairs come from a fixed pseudo-random
 * sequence, so every run of the test sees the same numbers.
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

enum breakage {
	TEST_FAILED, CAND_SEGV, CAND_TIMEOUT, CAND_EXIT, CAND_SILENT, BASE_EXIT,
	FP_MISMATCH, PRIMARY_SMALL, PRIMARY_SLOWER, GUARD_SLOWER, RSS_OVER,
	METRIC_FELL, METRIC_LOWER_ROSE, METRIC_MISSING, METRIC_UNDECLARED,
};

static void breakit(struct fixture *f, enum breakage b)
{
	switch (b) {
	case TEST_FAILED:
		f->m.test = VD_TEST_FAILED;
		break;
	case CAND_SEGV:
		f->side[0].cand_runs[3].wait_status = 11;	/* killed by SIGSEGV */
		f->side[0].cand_runs[5].wait_status = 11;
		break;
	case CAND_TIMEOUT:
		f->side[1].cand_runs[0].timed_out = true;
		f->side[1].cand_runs[0].wait_status = 9;
		break;
	case CAND_EXIT:
		f->side[0].cand_runs[0].wait_status = 1 << 8;
		break;
	case CAND_SILENT:
		f->side[0].cand_runs[7].no_output = true;
		break;
	case BASE_EXIT:
		f->side[1].base_runs[2].wait_status = 2 << 8;
		break;
	case FP_MISMATCH:
		f->w[1].fingerprint = VD_FINGERPRINT_MISMATCH;
		break;
	case PRIMARY_SMALL:
		fill_pairs(f, 0, 12, 1.0, 0.99, 0.004);
		break;
	case PRIMARY_SLOWER:
		fill_pairs(f, 0, 12, 1.0, 1.05, 0.01);
		break;
	case GUARD_SLOWER:
		fill_pairs(f, 1, 12, 0.5, 1.05, 0.01);
		break;
	case RSS_OVER:
		f->side[1].cand_runs[4].peak_rss_kb = 5000;
		break;
	case METRIC_FELL:
		f->side[0].mcand[0] = f->side[0].mcand[1] = 950;
		break;
	case METRIC_LOWER_ROSE:
		f->rule.higher_is_better = false;
		break;
	case METRIC_MISSING:
		f->side[0].metric.nr_cand = 0;
		break;
	case METRIC_UNDECLARED:
		f->rule.name = "latency";
		break;
	}
}

static const struct reject_case {
	const char *what;
	enum breakage b;
	const char *reason;
} reject_cases[] = {
	{ "test command failed", TEST_FAILED, "tests failed: the test command failed on the candidate" },
	{ "candidate crashed", CAND_SEGV,
	  "candidate run 4 of workload 'big' was killed by signal 11 (Segmentation fault) (2 of 12 runs failed)" },
	{ "candidate timed out", CAND_TIMEOUT, "candidate run 1 of workload 'small' timed out" },
	{ "candidate exited 1", CAND_EXIT, "candidate run 1 of workload 'big' exited with status 1" },
	{ "candidate printed nothing", CAND_SILENT, "candidate run 8 of workload 'big' printed nothing" },
	{ "baseline broken", BASE_EXIT, "baseline run 3 of workload 'small' exited with status 2 (1 of 12 runs failed): the baseline itself is broken" },
	{ "fingerprint mismatch", FP_MISMATCH, "workload 'small' printed a different fingerprint" },
	{ "primary improved too little", PRIMARY_SMALL, "less than the 3% improvement required" },
	{ "primary got slower", PRIMARY_SLOWER, "primary 'big' regressed 5." },
	{ "guard got slower", GUARD_SLOWER, "more than 2% + 5 ms" },
	{ "peak RSS over budget", RSS_OVER,
	  "the candidate's peak RSS of 5000 kB is over the ram budget of 4096 kB (baseline 1001 kB)" },
	{ "metric fell", METRIC_FELL,
	  "metric 'events/s' of workload 'big' fell 5.0% (1000 to 950), more than its 2% tolerance (higher is better)" },
	{ "lower-is-better metric rose", METRIC_LOWER_ROSE, "rose 10.0% (1000 to 1100)" },
	{ "metric not printed", METRIC_MISSING, "metric 'events/s' was not printed by the candidate of workload 'big'" },
	{ "metric printed nowhere", METRIC_UNDECLARED, "metric 'latency' is declared but no workload printed it" },
};

static void test_verdict__every_reject_reason(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(reject_cases); i++) {
		const struct reject_case *c = &reject_cases[i];
		struct fixture f;

		setup(&f);
		breakit(&f, c->b);
		decide(&f);
		if (f.v.kind != VERDICT_REJECT || !has_reason(&f.v, c->reason)) {
			print_reasons(&f.v);
			fail_msg("%s: want reject with \"%s\"", c->what, c->reason);
		}
		switch (c->b) {
		case TEST_FAILED: case CAND_SEGV: case CAND_TIMEOUT: case CAND_EXIT:
		case CAND_SILENT: case BASE_EXIT: case FP_MISMATCH:
			assert_false(f.v.correctness.ok);
			break;
		case GUARD_SLOWER:
			assert_true(f.v.guards[0].regressed);
			assert_true(f.v.guards[0].ci_low_pct > 2);
			break;
		case RSS_OVER:
			assert_false(f.v.memory.ok);
			break;
		case METRIC_FELL: case METRIC_LOWER_ROSE: case METRIC_MISSING:
			assert_false(f.v.metrics[0].ok);
			break;
		default:
			assert_true(f.v.correctness.ok);
		}
		verdict_release(&f.v);
	}
}

static void test_verdict__reject_lists_every_reason(void **state)
{
	struct fixture f;

	setup(&f);
	breakit(&f, TEST_FAILED);
	breakit(&f, GUARD_SLOWER);
	breakit(&f, RSS_OVER);
	breakit(&f, METRIC_FELL);
	decide(&f);
	assert_int_equal(f.v.kind, VERDICT_REJECT);
	for (size_t i = 0; i < ARRAY_SIZE(reject_cases); i++) {
		enum breakage b = reject_cases[i].b;
		if (b == TEST_FAILED || b == GUARD_SLOWER || b == RSS_OVER || b == METRIC_FELL)
			assert_true(has_reason(&f.v, reject_cases[i].reason));
	}
	/* the primary still improved and says so */
	assert_true(has_reason(&f.v, "primary 'big' improved"));
	verdict_release(&f.v);
}

static void test_verdict__inconclusive(void **state)
{
	static const struct {
		const char *what;
		size_t n;
		double factor, jitter;
		const char *reason;
	} cases[] = {
		{ "too noisy to tell", 12, 0.95, 0.6, "cannot tell whether it improved by 3%" },
		{ "too few pairs", 5, 0.90, 0.02, "workload 'big' has 5 pairs: too few for a 95% interval" },
		{ "no pairs", 0, 0.90, 0.02, "workload 'big' has 0 measured pairs" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fixture f;

		setup(&f);
		fill_pairs(&f, 0, cases[i].n, 1.0, cases[i].factor, cases[i].jitter);
		f.w[0].nr_base_runs = f.w[0].nr_cand_runs = 12;
		decide(&f);
		if (f.v.kind != VERDICT_INCONCLUSIVE || !has_reason(&f.v, cases[i].reason)) {
			print_reasons(&f.v);
			fail_msg("%s", cases[i].what);
		}
		verdict_release(&f.v);
	}
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

/* 20 ms guard, 10% slower: 2 ms is under the 5 ms floor; with a 1 ms floor it fails. */
static void test_verdict__absolute_floor(void **state)
{
	static const struct { double floor_s; enum verdict_kind want; bool regressed; } cases[] = {
		{ 0.005, VERDICT_KEEP, false },
		{ 0.001, VERDICT_REJECT, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fixture f;

		setup(&f);
		fill_pairs(&f, 1, 12, 0.020, 1.10, 0.06);
		f.r.guard_floor_s = cases[i].floor_s;
		decide(&f);
		if (f.v.kind != cases[i].want) {
			print_reasons(&f.v);
			fail_msg("floor %g", cases[i].floor_s);
		}
		assert_true(f.v.guards[0].ci_low_pct > 2);
		assert_int_equal(f.v.guards[0].regressed, cases[i].regressed);
		if (cases[i].regressed)
			assert_true(has_reason(&f.v, "more than 2% + 1 ms"));
		verdict_release(&f.v);
	}
}

static void test_verdict__suspicious_speedup(void **state)
{
	struct fixture f;

	setup(&f);
	fill_pairs(&f, 0, 12, 1.0, 0.03, 0.02);
	decide(&f);
	assert_int_equal(f.v.kind, VERDICT_KEEP);
	assert_true(f.v.suspicious);
	assert_true(has_reason(&f.v, "over the 20x that is suspicious"));
	verdict_release(&f.v);

	setup(&f);
	fill_pairs(&f, 0, 12, 1.0, 0.06, 0.02);
	decide(&f);
	assert_false(f.v.suspicious);
	verdict_release(&f.v);
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

static void test_verdict__memory_and_metric_edges(void **state)
{
	struct fixture f;

	/* exactly at the budget is within it */
	setup(&f);
	f.side[1].cand_runs[0].peak_rss_kb = 4096;
	decide(&f);
	assert_int_equal(f.v.kind, VERDICT_KEEP);
	assert_true(f.v.memory.ok);
	verdict_release(&f.v);
	/* a budget with nothing measured cannot be checked */
	setup(&f);
	for (int wi = 0; wi < 2; wi++)
		for (int i = 0; i < MAXP; i++)
			f.side[wi].cand_runs[i].peak_rss_kb = 0;
	decide(&f);
	assert_int_equal(f.v.kind, VERDICT_INCONCLUSIVE);
	assert_true(has_reason(&f.v, "peak RSS was not measured: cannot check the ram budget of 4096 kB"));
	verdict_release(&f.v);
	/* a metric the baseline never printed cannot be compared */
	setup(&f);
	f.side[0].metric.nr_base = 0;
	decide(&f);
	assert_int_equal(f.v.kind, VERDICT_INCONCLUSIVE);
	assert_true(has_reason(&f.v, "metric 'events/s' of workload 'big' has no usable baseline value"));
	verdict_release(&f.v);
	/* within tolerance in the wrong direction holds */
	setup(&f);
	f.side[0].mcand[0] = f.side[0].mcand[1] = 985;
	decide(&f);
	assert_int_equal(f.v.kind, VERDICT_KEEP);
	assert_true(f.v.metrics[0].ok);
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
		json_object_get(j, "guards"), 0), "workload")), "sm?");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "correctness"),
							      "test")), "not-run");
	json_decref(j);
	verdict_release(&f.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict__good_scenario_keeps),
		cmocka_unit_test(test_verdict__every_reject_reason),
		cmocka_unit_test(test_verdict__reject_lists_every_reason),
		cmocka_unit_test(test_verdict__inconclusive),
		cmocka_unit_test(test_verdict__unusable_numbers),
		cmocka_unit_test(test_verdict__absolute_floor),
		cmocka_unit_test(test_verdict__suspicious_speedup),
		cmocka_unit_test(test_verdict__instructions),
		cmocka_unit_test(test_verdict__bad_measurements_are_errors),
		cmocka_unit_test(test_verdict__memory_and_metric_edges),
		cmocka_unit_test(test_verdict__json_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
