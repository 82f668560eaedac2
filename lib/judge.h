/*
 * judge.h: the canary's judge, as pure functions over per-window values
 * of two builds run side by side: per metric a Mann-Whitney U test with
 * the two-sample Hodges-Lehmann shift and its interval, a class (pass,
 * high, low, nodata) from a direction and a tolerance, a check of the
 * spread between windows, and a weighted score with critical metrics.
 * Nothing here prints, reads the clock or keeps a caller's pointer.
 */
#ifndef HOTLOOP_JUDGE_H
#define HOTLOOP_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

/* More windows than this per build are refused: m * n shifts must fit in memory. */
#define JUDGE_MAX_WINDOWS 2000
/* Up to this many windows per build (and no ties) the exact U distribution is used. */
#define JUDGE_EXACT_MAX 25

enum judge_direction {
	JUDGE_INCREASE_BAD,	/* latency, CPU per request, errors, RSS */
	JUDGE_DECREASE_BAD,	/* throughput */
	JUDGE_EITHER_BAD,
};

enum judge_class {
	JUDGE_PASS,		/* no change beyond the tolerance that the test can tell */
	JUDGE_HIGH,		/* the candidate's values are higher, beyond the tolerance */
	JUDGE_LOW,		/* ... lower */
	JUDGE_NODATA,		/* too few windows on a side, or a value that is not finite */
};

struct judge_metric_spec {
	const char *name;
	enum judge_direction direction;
	double tolerance;	/* a shift within this fraction of the base's median is no change */
	double abs_tolerance;	/* ... or within this much, in the metric's unit */
	double weight;		/* its share of the score (0: 1) */
	bool critical;		/* a failure fails the canary whatever the score */
	bool spread;		/* also fail when the spread between windows rose (judge.c) */
	double spread_tolerance; /* a rise of the spread (MAD) within this fraction is no change (0: 0.5) */
};

/* One metric's windows: base[0..n_base) and cand[0..n_cand), warm-up included. */
struct judge_series {
	const double *base, *cand;
	size_t n_base, n_cand;
};

struct judge_spec {
	const struct judge_metric_spec *metrics;
	size_t nr_metrics;
	size_t warmup;		/* the first windows of each build, dropped */
	size_t min_windows;	/* fewer on a side after the warm-up: nodata (0: 5) */
	double confidence;	/* of each test and interval (0: 0.99: a canary judges many metrics) */
	double pass_score;	/* the score to pass (0: 95) */
	double marginal_score;	/* ... to be marginal (0: 75); below it the canary fails */
};

struct judge_metric_result {
	enum judge_class cls;
	bool failed;		/* a class in the bad direction, or the spread check */
	size_t n_base, n_cand;	/* windows judged */
	double base_median, cand_median;
	double shift, low, high;	/* Hodges-Lehmann shift cand - base and its interval */
	double rel, rel_low, rel_high;	/* the same as fractions of the base's median; NaN when it is 0 */
	double p;		/* two-sided Mann-Whitney p-value */
	bool exact;		/* from the exact U distribution */
	bool spread_checked, spread_failed;
	double base_mad, cand_mad;	/* raw MADs of the windows */
	double spread_p;	/* one-sided: the candidate's deviations are larger */
	char reason[200];	/* a sentence saying why the class */
};

enum judge_verdict { JUDGE_VERDICT_PASS, JUDGE_VERDICT_MARGINAL, JUDGE_VERDICT_FAIL };

struct judge_result {
	struct judge_metric_result *metrics;	/* nr_metrics, in the spec's order */
	size_t nr_metrics;
	double score;		/* 0-100: the weights of metrics that did not fail, of all with data */
	enum judge_verdict verdict;
	bool critical_failed;
	char reason[200];
};

/*
 * Judge every metric of spec over series[0..spec->nr_metrics). -1 with an
 * error for a spec that is not one (no metrics, a tolerance < 0, scores
 * out of order, more than JUDGE_MAX_WINDOWS windows); bad data is a
 * metric's nodata, not an error. judge_release() frees the result.
 */
int judge_canary(const struct judge_spec *spec, const struct judge_series *series,
		 struct judge_result *out);
void judge_release(struct judge_result *r);

const char *judge_class_name(enum judge_class c);
const char *judge_verdict_name(enum judge_verdict v);

/*
 * The Mann-Whitney test of y against x: U counts the pairs with y > x
 * (ties a half); *p is two-sided. Exact when both sides have at most
 * JUDGE_EXACT_MAX values and no ties, else the normal approximation with
 * the tie correction and a continuity correction. -1 on empty or
 * non-finite input.
 */
int judge_mann_whitney(const double *x, size_t m, const double *y, size_t n, double *u, double *p,
		       bool *exact);
/* P(U <= u) for m and n values without ties, exactly; -1 beyond JUDGE_EXACT_MAX. */
double judge_u_cdf(size_t m, size_t n, long u);
/*
 * The Hodges-Lehmann shift of y from x (the median of every y_j - x_i)
 * and its distribution-free interval at 'confidence' (Moses's: order
 * statistics of the shifts at the U quantiles). -1 on bad input.
 */
int judge_hl_shift(const double *x, size_t m, const double *y, size_t n, double confidence,
		   double *shift, double *low, double *high);

#endif
