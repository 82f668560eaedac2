/*
 * stats.h: the gate's statistics, as pure functions over arrays of numbers:
 * summaries (median, MAD, CV), paired log-ratios with a Hodges-Lehmann
 * estimate and a Wilcoxon signed-rank interval, the sequential schedule of
 * looks, and the exact path for deterministic counts. Callers own every
 * array; nothing here keeps a pointer, prints or reads the clock.
 *
 * Invalid input (NaN, infinity, a time or count <= 0 where a ratio is taken,
 * more than STATS_MAX_PAIRS pairs) makes a function return -1 quietly and
 * leave its output zeroed: the verdict turns that into a reason.
 */
#ifndef HOTLOOP_STATS_H
#define HOTLOOP_STATS_H

#include <stdbool.h>
#include <stddef.h>

#define STATS_DEFAULT_CONFIDENCE 0.95
/* Pairs up to this use the exact signed-rank distribution, above it the normal one. */
#define STATS_EXACT_MAX 50
/* More pairs than this are refused: n(n+1)/2 Walsh averages must fit in memory. */
#define STATS_MAX_PAIRS 2000
/* MAD * this estimates the standard deviation of normal data. */
#define STATS_MAD_NORMAL 1.4826
#define STATS_MAX_LOOKS 8

struct stats_summary {
	size_t n;
	double median;
	double mad;		/* raw: median |x - median|, NOT scaled by 1.4826 */
	double min, max, mean;
	double cv;		/* sample sd / mean; 0 when n < 2 or mean == 0 */
};

/* Summaries of x[0..n): -1 when n == 0 or a value is not finite. */
int stats_summarize(const double *x, size_t n, struct stats_summary *out);
/* The median of x[0..n) (x is not changed); -1 when n == 0 or not finite. */
int stats_median(const double *x, size_t n, double *out);

/*
 * out[i] = log(cand[i] / base[i]): -1 when a value is not finite or <= 0
 * (a zero base time must not become an infinite ratio).
 */
int stats_log_ratios(const double *base, const double *cand, size_t n, double *out);

/* Percent change from a log-ratio: (exp(x) - 1) * 100. */
double stats_pct(double log_ratio);

/*
 * A location estimate with its interval, all in log-ratio units (use
 * stats_pct() to show them). 'coverage' is the interval's actual coverage
 * (the signed-rank distribution is discrete, so it is at least the level
 * asked for); when n is too small to reach the level at all the interval is
 * the whole range of Walsh averages and 'reached' is false.
 */
struct stats_interval {
	size_t n;
	double estimate;	/* Hodges-Lehmann: median of Walsh averages */
	double low, high;
	double confidence;	/* the level asked for */
	double coverage;	/* the level obtained */
	bool reached;		/* coverage >= confidence */
	bool exact;		/* exact null distribution (n <= STATS_EXACT_MAX) or a point */
	bool point;		/* deterministic counts: low == high == estimate, no sampling */
	double noise;		/* MAD of the log-ratios * STATS_MAD_NORMAL */
};

enum stats_method {
	STATS_METHOD_AUTO,	/* exact up to STATS_EXACT_MAX pairs, normal above */
	STATS_METHOD_EXACT,
	STATS_METHOD_NORMAL,
};

/*
 * The signed-rank interval's rank: the largest k with P(T+ <= k - 1) <=
 * (1 - confidence) / 2 under the null, so that the interval is the k-th
 * smallest to the k-th largest Walsh average. 0 when no k reaches the level
 * (then *coverage is what k = 1 would give). -1 on bad arguments (n == 0,
 * exact with n > STATS_EXACT_MAX, confidence not in (0, 1)).
 */
long stats_signrank_rank(size_t n, double confidence, enum stats_method m, double *coverage);
/* P(T+ <= t) for n pairs under the null, exactly (n <= STATS_EXACT_MAX); -1 otherwise. */
double stats_signrank_cdf(size_t n, long t);
/* The standard normal quantile: stats_normal_quantile(0.975) = 1.95996... */
double stats_normal_quantile(double p);

/* Hodges-Lehmann estimate and interval of the log-ratios d[0..n). */
int stats_hl_interval(const double *d, size_t n, double confidence, enum stats_method m,
		      struct stats_interval *out);

/*
 * Deterministic counts (instructions): 'exact' when every base value is
 * the same and every candidate value is the same (one run per side plus at
 * least one confirming repeat): the interval is then the point change with
 * noise 0. Otherwise the counts are treated as noisy pairs and go through
 * stats_hl_interval(). Returns 1 for exact, 0 for noisy, -1 on bad input.
 */
int stats_counts_interval(const double *base, const double *cand, size_t n, double confidence,
			  struct stats_interval *out);

/*
 * How a primary's interval stands against the improvement it must show
 * (min_improvement as a fraction, 0.03 for 3%): IMPROVED when the estimate
 * improved by at least that much and the interval's far (high) end is
 * still an improvement; SHORT when even the interval's low end does not
 * reach the required improvement, or a point (exact counts) is not
 * IMPROVED: more pairs would not help; else OPEN (also when the interval
 * did not reach its level).
 */
enum stats_judgement { STATS_OPEN, STATS_IMPROVED, STATS_SHORT };
enum stats_judgement stats_judge_improvement(const struct stats_interval *iv, double min_improvement);

/*
 * The sequential schedule: pre-declared looks (cumulative pair counts,
 * increasing) with the overall confidence split over them by Bonferroni:
 * each look uses confidence 1 - (1 - overall) / nr_looks. This is
 * conservative (it ignores that the looks share data) but holds whatever
 * the correlation between looks, needs no tables, and a stop at any look
 * keeps the overall chance of a false keep below 1 - overall.
 */
struct stats_schedule {
	size_t looks[STATS_MAX_LOOKS];
	size_t nr_looks;
	double confidence;	/* overall */
};
#define STATS_SCHEDULE_DEFAULT { { 12, 24, 36 }, 3, STATS_DEFAULT_CONFIDENCE }

/* -1 when looks are empty, not increasing, over STATS_MAX_PAIRS or the level is not in (0, 1). */
int stats_schedule_check(const struct stats_schedule *s);
/* "12,24,36" (--looks) into s->looks; -1 with an error naming the option when it is not a schedule. */
int stats_parse_looks(const char *arg, struct stats_schedule *s);
double stats_schedule_look_confidence(const struct stats_schedule *s);

enum stats_decision {
	STATS_NEED_MORE,	/* run pairs up to the next look */
	STATS_DECIDED_KEEP,
	STATS_DECIDED_REJECT,
	STATS_INCONCLUSIVE,	/* the last look passed and it is still open */
};
const char *stats_decision_name(enum stats_decision d);

/*
 * Given the primary's log-ratios so far (n pairs) decide at the latest
 * look reached: NEED_MORE before the first look and between looks while
 * open. *out (may be NULL) receives the interval at the per-look level when
 * a look was reached. -1 on bad input.
 */
int stats_sequential_decide(const struct stats_schedule *s, const double *d, size_t n,
			    double min_improvement, enum stats_decision *decision,
			    struct stats_interval *out);

#endif
