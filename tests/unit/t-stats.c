/*
 * t-stats.c: unit tests for the gate's statistics on fixed tables. The
 * signed-rank distribution is checked against a brute-force enumeration of
 * sign vectors, and the interval against the test it inverts: ranks of
 * |d - theta| computed here directly, not through Walsh averages.
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

#include "util.h"
#include "stats.h"

#define EPS 1e-9

static void test_stats__summary_table(void **state)
{
	static const struct {
		const char *what;
		double x[8];
		size_t n;
		double median, mad, min, max, mean, cv;
	} cases[] = {
		{ "one value", { 5 }, 1, 5, 0, 5, 5, 5, 0 },
		{ "odd count", { 3, 1, 2 }, 3, 2, 1, 1, 3, 2, 0.5 },
		{ "even count", { 4, 1, 3, 2 }, 4, 2.5, 1, 1, 4, 2.5, 0.5163977794943222 },
		{ "an outlier moves the mean, not the median", { 1, 1, 1, 1, 100 }, 5,
		  1, 0, 1, 100, 20.8, 2.128564709350761 },
		{ "mean zero gives cv 0", { -1, 1 }, 2, 0, 1, -1, 1, 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct stats_summary s;
		double med;

		assert_int_equal(stats_summarize(cases[i].x, cases[i].n, &s), 0);
		if (fabs(s.median - cases[i].median) > EPS || fabs(s.mad - cases[i].mad) > EPS ||
		    s.min != cases[i].min || s.max != cases[i].max ||
		    fabs(s.mean - cases[i].mean) > EPS || fabs(s.cv - cases[i].cv) > 1e-9)
			fail_msg("%s: median %g mad %g min %g max %g mean %g cv %.16g", cases[i].what,
				 s.median, s.mad, s.min, s.max, s.mean, s.cv);
		assert_int_equal(stats_median(cases[i].x, cases[i].n, &med), 0);
		assert_true(med == s.median);
	}
}

static void test_stats__bad_input_rejected(void **state)
{
	double nan_row[] = { 1, NAN, 3 }, inf_row[] = { 1, INFINITY };
	double base[] = { 1.0, 0.0, 2.0 }, neg[] = { 1.0, -1.0, 2.0 }, ok[] = { 1.0, 1.0, 1.0 };
	double out[3] = { 7, 7, 7 }, med = 7;
	struct stats_summary s;
	struct stats_interval iv;

	assert_int_equal(stats_summarize(nan_row, 3, &s), -1);
	assert_int_equal(s.n, 0);
	assert_int_equal(stats_summarize(inf_row, 2, &s), -1);
	assert_int_equal(stats_summarize(ok, 0, &s), -1);
	assert_int_equal(stats_median(nan_row, 3, &med), -1);
	assert_true(med == 0);
	/* a zero base time must not become an infinite ratio */
	assert_int_equal(stats_log_ratios(base, ok, 3, out), -1);
	for (size_t i = 0; i < 3; i++)
		assert_true(out[i] == 0);
	assert_int_equal(stats_log_ratios(ok, base, 3, out), -1);
	assert_int_equal(stats_log_ratios(ok, neg, 3, out), -1);
	assert_int_equal(stats_log_ratios(nan_row, ok, 3, out), -1);
	assert_int_equal(stats_log_ratios(ok, ok, 3, out), 0);
	assert_int_equal(stats_hl_interval(nan_row, 3, 0.95, STATS_METHOD_AUTO, &iv), -1);
	assert_int_equal(stats_hl_interval(ok, 0, 0.95, STATS_METHOD_AUTO, &iv), -1);
	assert_int_equal(stats_hl_interval(ok, 3, 1.0, STATS_METHOD_AUTO, &iv), -1);
	assert_int_equal(stats_hl_interval(ok, 3, NAN, STATS_METHOD_AUTO, &iv), -1);
	assert_int_equal(stats_hl_interval(ok, STATS_MAX_PAIRS + 1, 0.95, STATS_METHOD_AUTO, &iv), -1);
	assert_int_equal(stats_counts_interval(base, ok, 3, 0.95, &iv), -1);
	assert_int_equal(iv.n, 0);
	assert_int_equal(stats_signrank_rank(51, 0.95, STATS_METHOD_EXACT, NULL), -1);
	assert_true(stats_signrank_cdf(51, 3) < 0);
	assert_true(isnan(stats_normal_quantile(1.5)));
}

/* P(T+ <= t) by enumerating every sign vector of ranks 1..n. */
static double brute_cdf(size_t n, long t)
{
	uint64_t hits = 0;

	for (uint64_t mask = 0; mask < (1ull << n); mask++) {
		long sum = 0;
		for (size_t r = 1; r <= n; r++)
			if (mask & (1ull << (r - 1)))
				sum += (long)r;
		hits += sum <= t;
	}
	return (double)hits / (double)(1ull << n);
}

static void test_stats__signrank_cdf_matches_enumeration(void **state)
{
	for (size_t n = 1; n <= 14; n++) {
		long total = (long)(n * (n + 1) / 2);
		for (long t = -1; t <= total; t++)
			if (fabs(stats_signrank_cdf(n, t) - brute_cdf(n, t)) > 1e-15)
				fail_msg("n=%zu t=%ld: %g vs %g", n, t, stats_signrank_cdf(n, t),
					 brute_cdf(n, t));
	}
}

/* Two-sided 5% critical values of the signed-rank statistic from printed tables. */
static void test_stats__signrank_rank_table(void **state)
{
	static const struct { size_t n; double conf; long k; } cases[] = {
		{ 5, 0.95, 0 },		/* 2^-5 > 0.025: no interval reaches 95% */
		{ 6, 0.95, 1 },		/* critical value 0 */
		{ 8, 0.95, 4 },		/* critical value 3 */
		{ 10, 0.95, 9 },	/* critical value 8 */
		{ 20, 0.95, 53 },	/* critical value 52 */
		{ 10, 0.99, 4 },	/* 1% critical value 3 */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		double cov;
		long k = stats_signrank_rank(cases[i].n, cases[i].conf, STATS_METHOD_AUTO, &cov);
		if (k != cases[i].k)
			fail_msg("n=%zu conf=%g: k=%ld, want %ld", cases[i].n, cases[i].conf, k,
				 cases[i].k);
		if (k > 0) {
			/* the actual coverage is the level asked for or more, and is exact */
			assert_true(cov >= cases[i].conf);
			assert_true(fabs(cov - (1 - 2 * brute_cdf(cases[i].n, k - 1))) < 1e-12);
			assert_true(brute_cdf(cases[i].n, k) > (1 - cases[i].conf) / 2);
		} else {
			assert_true(cov < cases[i].conf);
		}
	}
}

/* Near n = 50 the ranks differ by at most 3 of ~400 and the coverage by 0.3%. */
static void test_stats__exact_and_normal_agree_at_switch_over(void **state)
{
	static const double levels[] = { 0.90, 0.95, 0.98333, 0.99 };

	for (size_t n = 40; n <= STATS_EXACT_MAX; n++) {
		for (size_t i = 0; i < ARRAY_SIZE(levels); i++) {
			double ce, cn;
			long ke = stats_signrank_rank(n, levels[i], STATS_METHOD_EXACT, &ce);
			long kn = stats_signrank_rank(n, levels[i], STATS_METHOD_NORMAL, &cn);
			if (labs(ke - kn) > 3 || fabs(ce - cn) > 0.003 || cn < levels[i] - 0.001)
				fail_msg("n=%zu level %g: exact k=%ld (%.4f) normal k=%ld (%.4f)", n,
					 levels[i], ke, ce, kn, cn);
		}
	}
	/* AUTO switches at STATS_EXACT_MAX */
	assert_int_equal(stats_signrank_rank(STATS_EXACT_MAX + 1, 0.95, STATS_METHOD_AUTO, NULL),
			 stats_signrank_rank(STATS_EXACT_MAX + 1, 0.95, STATS_METHOD_NORMAL, NULL));
	assert_int_equal(stats_signrank_rank(STATS_EXACT_MAX, 0.95, STATS_METHOD_AUTO, NULL),
			 stats_signrank_rank(STATS_EXACT_MAX, 0.95, STATS_METHOD_EXACT, NULL));
	assert_true(fabs(stats_normal_quantile(0.975) - 1.959963984540054) < 1e-9);
	assert_true(fabs(stats_normal_quantile(0.5)) < 1e-12);
}

static void test_stats__hl_small_table(void **state)
{
	static const struct {
		const char *what;
		double d[8];
		size_t n;
		double estimate, low, high;
		bool reached;
	} cases[] = {
		/* 21 Walsh averages of 1..6, median 3.5; k = 1 at 95%: the extremes */
		{ "1..6", { 1, 2, 3, 4, 5, 6 }, 6, 3.5, 1, 6, true },
		{ "order does not matter", { 6, 1, 5, 2, 4, 3 }, 6, 3.5, 1, 6, true },
		/* k = 4 of 36 Walsh averages */
		{ "eight pairs", { -3, -1, 0, 2, 4, 5, 7, 10 }, 8, 3, -1, 7, true },
		{ "one pair cannot reach 95%", { 0.1 }, 1, 0.1, 0.1, 0.1, false },
		{ "five pairs cannot reach 95%", { 1, 2, 3, 4, 5 }, 5, 3, 1, 5, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct stats_interval iv;

		assert_int_equal(stats_hl_interval(cases[i].d, cases[i].n, 0.95, STATS_METHOD_AUTO, &iv), 0);
		if (fabs(iv.estimate - cases[i].estimate) > EPS || fabs(iv.low - cases[i].low) > EPS ||
		    fabs(iv.high - cases[i].high) > EPS || iv.reached != cases[i].reached)
			fail_msg("%s: %g [%g, %g] reached %d", cases[i].what, iv.estimate, iv.low,
				 iv.high, iv.reached);
		assert_int_equal(iv.n, cases[i].n);
		assert_true(iv.exact);
	}
}

/* T+ of d - theta with ranks of |d - theta| computed directly (no ties in use). */
static long signed_rank(const double *d, size_t n, double theta)
{
	long t = 0;

	for (size_t i = 0; i < n; i++) {
		double a = fabs(d[i] - theta);
		long rank = 1;
		if (d[i] - theta <= 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (j != i && fabs(d[j] - theta) < a)
				rank++;
		t += rank;
	}
	return t;
}

/* A fixed, irregular table of log-ratios (no ties among Walsh averages). */
static void fill_pseudo(double *d, size_t n, double center, double spread)
{
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		d[i] = center + spread * ((double)(x >> 11) / 9007199254740992.0 - 0.5);
	}
}

static void test_stats__interval_inverts_the_test(void **state)
{
	static const size_t sizes[] = { 7, 12, 19, 30, 50, 60 };

	for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
		size_t n = sizes[s], total = n * (n + 1) / 2;
		double d[64], step = 1e-9;
		struct stats_interval iv;
		long k;

		fill_pseudo(d, n, 0.01 * (double)s, 0.2);
		assert_int_equal(stats_hl_interval(d, n, 0.95, STATS_METHOD_AUTO, &iv), 0);
		k = stats_signrank_rank(n, 0.95, STATS_METHOD_AUTO, NULL);
		assert_true(k > 0);
		/* inside the interval the test does not reject: k <= T+ <= total - k */
		for (int j = 1; j <= 9; j++) {
			double theta = iv.low + (iv.high - iv.low) * j / 10;
			long t = signed_rank(d, n, theta);
			if (t < k || t > (long)total - k)
				fail_msg("n=%zu theta=%g inside but T+=%ld k=%ld", n, theta, t, k);
		}
		/* just outside, it does */
		assert_true(signed_rank(d, n, iv.low - step) > (long)total - k);
		assert_true(signed_rank(d, n, iv.high + step) < k);
		assert_true(iv.low <= iv.estimate && iv.estimate <= iv.high);
	}
}

static void test_stats__pct_and_noise(void **state)
{
	double base[] = { 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 };
	double cand[] = { 0.9, 0.9, 0.9, 0.9, 0.9, 0.9 };
	double d[6];
	struct stats_interval iv;

	assert_true(fabs(stats_pct(log(0.9)) - -10.0) < 1e-9);
	assert_true(fabs(stats_pct(0)) == 0);
	assert_int_equal(stats_log_ratios(base, cand, 6, d), 0);
	assert_int_equal(stats_hl_interval(d, 6, 0.95, STATS_METHOD_AUTO, &iv), 0);
	assert_true(fabs(stats_pct(iv.estimate) - -10.0) < 1e-9);
	assert_true(iv.noise == 0);
	/* noise is the scaled MAD of the log-ratios */
	{
		double e[] = { -0.1, 0.0, 0.1, 0.2, -0.2 };
		assert_int_equal(stats_hl_interval(e, 5, 0.95, STATS_METHOD_AUTO, &iv), 0);
		assert_true(fabs(iv.noise - 0.1 * STATS_MAD_NORMAL) < 1e-12);
	}
}

static void test_stats__counts_exact_or_noisy(void **state)
{
	static const struct {
		const char *what;
		double base[4], cand[4];
		size_t n;
		int ret;
		bool point, reached;
		double pct;
	} cases[] = {
		{ "identical repeats: exact", { 1000, 1000 }, { 950, 950 }, 2, 1, true, true, -5 },
		{ "three identical", { 4e9, 4e9, 4e9 }, { 4.4e9, 4.4e9, 4.4e9 }, 3, 1, true, true, 10 },
		{ "no repeat: not confirmed", { 1000 }, { 950 }, 1, 0, false, false, -5 },
		{ "base repeat differs: noisy", { 1000, 1001 }, { 950, 950 }, 2, 0, false, false, 0 },
		{ "candidate repeat differs: noisy", { 1000, 1000 }, { 950, 951 }, 2, 0, false, false, 0 },
		{ "a zero count", { 0, 0 }, { 950, 950 }, 2, -1, false, false, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct stats_interval iv;
		int ret = stats_counts_interval(cases[i].base, cases[i].cand, cases[i].n, 0.95, &iv);

		if (ret != cases[i].ret || iv.point != cases[i].point || iv.reached != cases[i].reached)
			fail_msg("%s: ret %d point %d reached %d", cases[i].what, ret, iv.point, iv.reached);
		if (ret == 1) {
			assert_true(fabs(stats_pct(iv.estimate) - cases[i].pct) < 1e-9);
			assert_true(iv.low == iv.estimate && iv.high == iv.estimate);
			assert_true(iv.noise == 0);
		}
	}
}

static void test_stats__judge_improvement(void **state)
{
	static const struct {
		const char *what;
		struct stats_interval iv;
		double min;
		enum stats_judgement want;
	} cases[] = {
		{ "clear win", { .estimate = -0.10, .low = -0.12, .high = -0.08, .reached = true }, 0.03, STATS_IMPROVED },
		{ "far end crosses zero", { .estimate = -0.10, .low = -0.2, .high = 0.01, .reached = true }, 0.03, STATS_OPEN },
		{ "real but too small", { .estimate = -0.01, .low = -0.02, .high = -0.005, .reached = true }, 0.03, STATS_SHORT },
		{ "a regression", { .estimate = 0.05, .low = 0.04, .high = 0.06, .reached = true }, 0.03, STATS_SHORT },
		{ "level not reached", { .estimate = -0.10, .low = -0.12, .high = -0.08 }, 0.03, STATS_OPEN },
		{ "exact point at threshold", { .estimate = -0.030459207484708574, .low = -0.030459207484708574,
		  .high = -0.030459207484708574, .reached = true, .point = true }, 0.03, STATS_IMPROVED },
		{ "exact point of no change", { .reached = true, .point = true }, 0, STATS_SHORT },
		{ "bad threshold", { .estimate = -0.10, .low = -0.12, .high = -0.08, .reached = true }, 1.5, STATS_OPEN },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (stats_judge_improvement(&cases[i].iv, cases[i].min) != cases[i].want)
			fail_msg("%s", cases[i].what);
}

static void test_stats__sequential_schedule(void **state)
{
	struct stats_schedule sch = STATS_SCHEDULE_DEFAULT;
	struct stats_schedule bad = { { 12, 12 }, 2, 0.95 };
	double win[36], flat[36], wide[36];
	static const struct {
		const char *what;
		int table;
		size_t n;
		enum stats_decision want;
		size_t pairs;
	} cases[] = {
		{ "before the first look", 0, 11, STATS_NEED_MORE, 0 },
		{ "a clear win at the first look", 0, 12, STATS_DECIDED_KEEP, 12 },
		{ "between looks: the last look counts", 0, 15, STATS_DECIDED_KEEP, 12 },
		{ "no change is decided early", 1, 12, STATS_DECIDED_REJECT, 12 },
		{ "too noisy at the first look", 2, 12, STATS_NEED_MORE, 12 },
		{ "too noisy at the second look", 2, 30, STATS_NEED_MORE, 24 },
		{ "too noisy within the budget", 2, 36, STATS_INCONCLUSIVE, 36 },
	};
	double *tables[] = { win, flat, wide };

	fill_pseudo(win, 36, log(0.90), 0.04);
	fill_pseudo(flat, 36, 0, 0.01);
	fill_pseudo(wide, 36, log(0.97), 0.5);
	assert_true(fabs(stats_schedule_look_confidence(&sch) - (1 - 0.05 / 3)) < 1e-12);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum stats_decision dec;
		struct stats_interval iv;

		assert_int_equal(stats_sequential_decide(&sch, tables[cases[i].table], cases[i].n,
							 0.03, &dec, &iv), 0);
		if (dec != cases[i].want || iv.n != cases[i].pairs)
			fail_msg("%s: %s over %zu pairs", cases[i].what, stats_decision_name(dec), iv.n);
	}
	assert_int_equal(stats_schedule_check(&bad), -1);
	{
		enum stats_decision dec;
		assert_int_equal(stats_sequential_decide(&bad, win, 36, 0.03, &dec, NULL), -1);
		assert_int_equal(stats_sequential_decide(&sch, win, 36, -0.1, &dec, NULL), -1);
	}
}

/*
 * The schedule's error control on simulated A/A sequences: log-ratios of
 * symmetric noise (a sum of uniforms, ~5% spread) around no change. With
 * min-improvement 0 a keep needs only the interval below 0, so the
 * overall false keep rate must stay under (1 - 0.95) / 2 = 2.5%; using the
 * full 95% at each of the three looks gives 4.7% here (1.7% as split). An injected 10%
 * slowdown must be rejected, and a 10% speedup kept, nearly always.
 */
static void test_stats__schedule_error_control(void **state)
{
	struct stats_schedule sch = STATS_SCHEDULE_DEFAULT;
	static const struct { double shift; double min; enum stats_decision want; double at_most; } cases[] = {
		{ 0.0, 0.0, STATS_DECIDED_KEEP, 0.025 },		/* false keeps */
		{ log(1.10), 0.03, STATS_DECIDED_REJECT, -0.99 },	/* >= 99% rejected */
		{ log(0.90), 0.03, STATS_DECIDED_KEEP, -0.95 },		/* >= 95% kept */
	};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	const int runs = 2000;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		int hits = 0;
		for (int r = 0; r < runs; r++) {
			double d[36];
			enum stats_decision dec = STATS_NEED_MORE;
			for (size_t i = 0; i < 36; i++) {
				double sum = 0;
				for (int u = 0; u < 4; u++) {
					x ^= x << 13;
					x ^= x >> 7;
					x ^= x << 17;
					sum += (double)(x >> 11) / 9007199254740992.0 - 0.5;
				}
				d[i] = cases[c].shift + 0.05 * sqrt(3.0) * sum;
			}
			for (size_t n = 1; n <= 36 && dec == STATS_NEED_MORE; n++)
				assert_int_equal(stats_sequential_decide(&sch, d, n, cases[c].min,
									 &dec, NULL), 0);
			hits += dec == cases[c].want;
		}
		if (cases[c].at_most >= 0 ? hits > cases[c].at_most * runs
					  : hits < -cases[c].at_most * runs)
			fail_msg("shift %g: %d of %d %s", cases[c].shift, hits, runs,
				 stats_decision_name(cases[c].want));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats__summary_table),
		cmocka_unit_test(test_stats__bad_input_rejected),
		cmocka_unit_test(test_stats__signrank_cdf_matches_enumeration),
		cmocka_unit_test(test_stats__signrank_rank_table),
		cmocka_unit_test(test_stats__exact_and_normal_agree_at_switch_over),
		cmocka_unit_test(test_stats__hl_small_table),
		cmocka_unit_test(test_stats__interval_inverts_the_test),
		cmocka_unit_test(test_stats__pct_and_noise),
		cmocka_unit_test(test_stats__counts_exact_or_noisy),
		cmocka_unit_test(test_stats__judge_improvement),
		cmocka_unit_test(test_stats__sequential_schedule),
		cmocka_unit_test(test_stats__schedule_error_control),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
