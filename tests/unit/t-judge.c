/*
 * t-judge.c: unit tests for the canary's judge. The exact U distribution
 * is checked against an enumeration of every order of the pooled values;
 * the judge is calibrated on simulated canaries (seeded, so the same on
 * every machine): A/A canaries must not fail, planted regressions must.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "judge.h"
#include "util.h"

/* U for the order coded by the bits of 'mask' (bit set: a y) over m + n ranked values. */
static long u_of_order(unsigned mask, size_t total)
{
	long u = 0, xs_below = 0;

	for (size_t r = 0; r < total; r++) {
		if (mask >> r & 1)
			u += xs_below;
		else
			xs_below++;
	}
	return u;
}

static void test_judge__u_cdf_enumerated(void **state)
{
	(void)state;
	for (size_t m = 1; m <= 6; m++)
		for (size_t n = 1; n <= 6; n++) {
			size_t total = m + n;
			double *count = xcalloc(m * n + 1, sizeof(*count)), all = 0, cum = 0;

			for (unsigned mask = 0; mask < 1u << total; mask++)
				if ((size_t)__builtin_popcount(mask) == n) {
					count[u_of_order(mask, total)]++;
					all++;
				}
			for (size_t u = 0; u <= m * n; u++) {
				cum += count[u];
				assert_true(fabs(judge_u_cdf(m, n, (long)u) - cum / all) < 1e-12);
			}
			free(count);
		}
	assert_true(judge_u_cdf(JUDGE_EXACT_MAX + 1, 3, 1) < 0);
	assert_true(judge_u_cdf(3, 3, -1) == 0);
}

static void test_judge__mann_whitney(void **state)
{
	static const double x[] = { 1, 2, 3 }, y[] = { 4, 5, 6 }, same[] = { 7, 7, 7, 7 };
	double u, p, big_x[40], big_y[40];
	bool exact;

	(void)state;
	/* every y above every x: U = 9, and 2 * P(U >= 9) = 2 / C(6, 3) */
	assert_int_equal(judge_mann_whitney(x, 3, y, 3, &u, &p, &exact), 0);
	assert_true(u == 9 && exact);
	assert_true(fabs(p - 0.1) < 1e-12);
	assert_int_equal(judge_mann_whitney(y, 3, x, 3, &u, &p, &exact), 0);
	assert_true(u == 0 && fabs(p - 0.1) < 1e-12);
	/* all tied: no difference, p = 1 */
	assert_int_equal(judge_mann_whitney(same, 4, same, 4, &u, &p, &exact), 0);
	assert_true(u == 8 && p == 1 && !exact);
	/* the normal approximation: 40 interleaved against 40 shifted by half a step */
	for (int i = 0; i < 40; i++) {
		big_x[i] = i;
		big_y[i] = i + 0.5;
	}
	assert_int_equal(judge_mann_whitney(big_x, 40, big_y, 40, &u, &p, &exact), 0);
	assert_true(!exact && p > 0.5);
	for (int i = 0; i < 40; i++)
		big_y[i] = i + 100;
	assert_int_equal(judge_mann_whitney(big_x, 40, big_y, 40, &u, &p, &exact), 0);
	assert_true(u == 1600 && p < 1e-12);
	big_x[3] = NAN;
	assert_int_equal(judge_mann_whitney(big_x, 40, big_y, 40, &u, &p, &exact), -1);
	assert_int_equal(judge_mann_whitney(x, 0, y, 3, &u, &p, &exact), -1);
}

static void test_judge__hl_shift(void **state)
{
	static const double x[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, y[] = { 11, 12, 13, 14, 15, 16, 17, 18 };
	double shift, low, high;

	(void)state;
	assert_int_equal(judge_hl_shift(x, 8, y, 8, 0.95, &shift, &low, &high), 0);
	assert_true(shift == 10);
	/* the interval holds the shift and is inside the range of the differences */
	assert_true(low <= 10 && 10 <= high && low >= 3 && high <= 17 && low < high);
	/* a higher level, a wider interval */
	{
		double l99, h99;

		assert_int_equal(judge_hl_shift(x, 8, y, 8, 0.99, &shift, &l99, &h99), 0);
		assert_true(l99 <= low && h99 >= high);
	}
	/* three against three cannot reach 99%: the whole range */
	assert_int_equal(judge_hl_shift(x, 3, y, 3, 0.99, &shift, &low, &high), 0);
	assert_true(low == 11 - 3 && high == 13 - 1);
	assert_int_equal(judge_hl_shift(x, 8, y, 8, 1.5, &shift, &low, &high), -1);
}

/* ---- simulated canaries ---- */

static uint64_t rng;

static double uniform(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static double poisson(double mean)
{
	double l = exp(-mean), p = 1;
	int k = 0;

	do {
		k++;
		p *= uniform();
	} while (p > l);
	return k - 1;
}

enum { P50, P99, CPU, RPS, ERR, RSS, NR_METRICS };

static const struct judge_metric_spec metrics[NR_METRICS] = {
	[P50] = { "latency p50", JUDGE_INCREASE_BAD, 0.05, 0, 1, false, true, 0 },
	[P99] = { "latency p99", JUDGE_INCREASE_BAD, 0.05, 0, 3, false, true, 0 },
	[CPU] = { "cpu per request", JUDGE_INCREASE_BAD, 0.02, 0, 1, false, false, 0 },
	[RPS] = { "throughput", JUDGE_DECREASE_BAD, 0.02, 0, 1, false, false, 0 },
	[ERR] = { "error rate", JUDGE_INCREASE_BAD, 0, 0, 1, true, false, 0 },
	[RSS] = { "rss", JUDGE_INCREASE_BAD, 0.10, 0, 1, false, false, 0 },
};

struct planted {
	double p99, cpu, p99_spread, errors;	/* factors on the candidate; errors: a rate */
};

#define WINDOWS 60
#define WARMUP 5

/*
 * One build's windows (a minute of 1 s windows): a 1000 requests a second service with log-normal
 * noise per window (p99 noisier than p50), its first WARMUP windows slow
 * and wild as a cold start is.
 */
static void simulate(const struct planted *pl, double v[NR_METRICS][WINDOWS])
{
	for (int w = 0; w < WINDOWS; w++) {
		double cold = w < WARMUP ? 3 + 2 * uniform() : 1;

		v[P50][w] = 2.0 * cold * exp(0.05 * gauss());
		v[P99][w] = 9.0 * cold * pl->p99 * exp(0.10 * pl->p99_spread * gauss());
		v[CPU][w] = 120 * cold * pl->cpu * exp(0.03 * gauss());
		v[RPS][w] = 1000 * exp(0.01 * gauss()) / (w < WARMUP ? cold : 1);
		v[ERR][w] = poisson(1000 * pl->errors) / 1000;
		v[RSS][w] = 40e6 * exp(0.01 * gauss());
	}
}

static void canary(uint64_t seed, const struct planted *cand, struct judge_result *r)
{
	static const struct planted same = { 1, 1, 1, 0 };
	static double base[NR_METRICS][WINDOWS], c[NR_METRICS][WINDOWS];
	struct judge_series series[NR_METRICS];
	struct judge_spec spec = { metrics, NR_METRICS, WARMUP, 0, 0, 0, 0 };

	rng = seed;
	simulate(&same, base);
	simulate(cand, c);
	for (int i = 0; i < NR_METRICS; i++)
		series[i] = (struct judge_series){ base[i], c[i], WINDOWS, WINDOWS };
	assert_int_equal(judge_canary(&spec, series, r), 0);
}

/* How many of 20 canaries with 'cand' fail; *flagged: how many had metric 'which' failed or high. */
static int failures(const struct planted *cand, int which, int *flagged)
{
	int fails = 0;

	*flagged = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct judge_result r;

		canary(seed * 7919, cand, &r);
		fails += r.verdict == JUDGE_VERDICT_FAIL;
		if (which >= 0)
			*flagged += r.metrics[which].failed;
		judge_release(&r);
	}
	return fails;
}

static void test_judge__calibration(void **state)
{
	static const struct planted aa = { 1, 1, 1, 0 }, p99 = { 1.2, 1, 1, 0 }, cpu = { 1, 1.05, 1, 0 },
				    errors = { 1, 1, 1, 0.01 }, spread = { 1, 1, 3, 0 };
	int flagged;

	(void)state;
	assert_int_equal(failures(&aa, -1, &flagged), 0);
	assert_int_equal(failures(&p99, P99, &flagged), 20);
	assert_int_equal(flagged, 20);
	/* +5% CPU per request alone: flagged every time; one metric of weight 1 makes it marginal */
	failures(&cpu, CPU, &flagged);
	assert_int_equal(flagged, 20);
	assert_int_equal(failures(&errors, ERR, &flagged), 20);
	assert_int_equal(flagged, 20);
	/* the same median, three times the spread between windows */
	assert_int_equal(failures(&spread, P99, &flagged), 20);
	assert_int_equal(flagged, 20);
}

static void test_judge__verdicts(void **state)
{
	static const struct planted aa = { 1, 1, 1, 0 }, errors = { 1, 1, 1, 0.01 }, cpu = { 1, 1.05, 1, 0 };
	struct judge_result r;

	(void)state;
	canary(11, &aa, &r);
	assert_int_equal(r.verdict, JUDGE_VERDICT_PASS);
	assert_true(r.score == 100);
	for (int i = 0; i < NR_METRICS; i++) {
		assert_int_equal(r.metrics[i].n_base, WINDOWS - WARMUP);
		assert_false(r.metrics[i].failed);
	}
	judge_release(&r);

	canary(11, &errors, &r);
	assert_true(r.critical_failed && r.verdict == JUDGE_VERDICT_FAIL);
	assert_int_equal(r.metrics[ERR].cls, JUDGE_HIGH);
	assert_true(isnan(r.metrics[ERR].rel));	/* the base had no errors: no ratio */
	assert_non_null(strstr(r.reason, "error rate"));
	judge_release(&r);

	canary(11, &cpu, &r);
	assert_int_equal(r.metrics[CPU].cls, JUDGE_HIGH);
	assert_true(r.metrics[CPU].rel_low > 0.02 && r.metrics[CPU].rel_high < 0.08);
	assert_int_equal(r.verdict, JUDGE_VERDICT_MARGINAL);
	assert_true(fabs(r.score - 100.0 * 7 / 8) < 1e-9);
	judge_release(&r);
}

static void test_judge__lower_is_better(void **state)
{
	static const double base[] = { 10, 11, 10, 12, 11, 10, 11, 12 }, cand[] = { 5, 6, 5, 6, 5, 6, 5, 6 };
	static const struct judge_metric_spec lat = { "latency", JUDGE_INCREASE_BAD, 0.05, 0, 1, false, false, 0 };
	static const struct judge_metric_spec thr = { "throughput", JUDGE_DECREASE_BAD, 0.05, 0, 1, false, false, 0 };
	struct judge_series s = { base, cand, 8, 8 };
	struct judge_spec spec = { &lat, 1, 0, 0, 0.95, 0, 0 };
	struct judge_result r;

	(void)state;
	assert_int_equal(judge_canary(&spec, &s, &r), 0);
	assert_int_equal(r.metrics[0].cls, JUDGE_LOW);
	assert_false(r.metrics[0].failed);
	assert_int_equal(r.verdict, JUDGE_VERDICT_PASS);
	assert_non_null(strstr(r.metrics[0].reason, "better"));
	judge_release(&r);
	spec.metrics = &thr;
	assert_int_equal(judge_canary(&spec, &s, &r), 0);
	assert_true(r.metrics[0].failed && r.verdict == JUDGE_VERDICT_FAIL);
	judge_release(&r);
}

static void test_judge__bad_input(void **state)
{
	static const double few[] = { 1, 2, 3 }, nan_[] = { 1, 2, NAN, 4, 5, 6 }, ok[] = { 1, 2, 3, 4, 5, 6 };
	static const struct judge_metric_spec m = { "m", JUDGE_INCREASE_BAD, 0.05, 0, 1, false, false, 0 };
	struct judge_metric_spec bad = m;
	struct judge_series s = { few, ok, 3, 6 };
	struct judge_spec spec = { &m, 1, 0, 0, 0, 0, 0 };
	struct judge_result r;

	(void)state;
	/* too few windows, or a window without a value: nodata; with nothing else, a failed canary */
	assert_int_equal(judge_canary(&spec, &s, &r), 0);
	assert_int_equal(r.metrics[0].cls, JUDGE_NODATA);
	assert_int_equal(r.verdict, JUDGE_VERDICT_FAIL);
	assert_non_null(strstr(r.reason, "no metric"));
	judge_release(&r);
	s = (struct judge_series){ nan_, ok, 6, 6 };
	assert_int_equal(judge_canary(&spec, &s, &r), 0);
	assert_int_equal(r.metrics[0].cls, JUDGE_NODATA);
	judge_release(&r);
	/* the warm-up takes windows away */
	s = (struct judge_series){ ok, ok, 6, 6 };
	spec.warmup = 2;
	assert_int_equal(judge_canary(&spec, &s, &r), 0);
	assert_int_equal(r.metrics[0].cls, JUDGE_NODATA);
	judge_release(&r);
	spec.warmup = 0;
	/* a spec that is not one: errors */
	spec.nr_metrics = 0;
	assert_int_equal(judge_canary(&spec, &s, &r), -1);
	spec.nr_metrics = 1;
	spec.pass_score = 50;
	spec.marginal_score = 80;
	assert_int_equal(judge_canary(&spec, &s, &r), -1);
	spec.pass_score = spec.marginal_score = 0;
	bad.tolerance = -1;
	spec.metrics = &bad;
	assert_int_equal(judge_canary(&spec, &s, &r), -1);
	bad.tolerance = NAN;
	assert_int_equal(judge_canary(&spec, &s, &r), -1);
	spec.metrics = &m;
	s.n_base = JUDGE_MAX_WINDOWS + 1;
	assert_int_equal(judge_canary(&spec, &s, &r), -1);
	spec.confidence = 1;
	s.n_base = 6;
	assert_int_equal(judge_canary(&spec, &s, &r), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge__u_cdf_enumerated),
		cmocka_unit_test(test_judge__mann_whitney),
		cmocka_unit_test(test_judge__hl_shift),
		cmocka_unit_test(test_judge__calibration),
		cmocka_unit_test(test_judge__verdicts),
		cmocka_unit_test(test_judge__lower_is_better),
		cmocka_unit_test(test_judge__bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
