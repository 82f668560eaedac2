/*
 * stats.c: summaries, the Hodges-Lehmann estimate with its Wilcoxon
 * signed-rank interval, the sequential schedule and the exact path for
 * deterministic counts (see stats.h). The exact null distribution of the
 * signed-rank statistic is counted by dynamic programming over ranks.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static bool all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

/* Median of an array sorted ascending. */
static double sorted_median(const double *x, size_t n)
{
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Median and raw MAD of x[0..n), n > 0, values finite. */
static void median_mad(const double *x, size_t n, double *median, double *mad)
{
	double *tmp = xmalloc(n * sizeof(*tmp));
	double m;

	memcpy(tmp, x, n * sizeof(*tmp));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	m = sorted_median(tmp, n);
	if (mad) {
		for (size_t i = 0; i < n; i++)
			tmp[i] = fabs(x[i] - m);
		qsort(tmp, n, sizeof(*tmp), cmp_double);
		*mad = sorted_median(tmp, n);
	}
	*median = m;
	free(tmp);
}

int stats_median(const double *x, size_t n, double *out)
{
	*out = 0;
	if (!n || !all_finite(x, n))
		return -1;
	median_mad(x, n, out, NULL);
	return 0;
}

int stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
	double sum = 0, ss = 0;

	memset(out, 0, sizeof(*out));
	if (!n || !all_finite(x, n))
		return -1;
	out->n = n;
	out->min = out->max = x[0];
	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < out->min)
			out->min = x[i];
		if (x[i] > out->max)
			out->max = x[i];
	}
	out->mean = sum / n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - out->mean) * (x[i] - out->mean);
	if (n > 1 && out->mean != 0)
		out->cv = sqrt(ss / (n - 1)) / fabs(out->mean);
	median_mad(x, n, &out->median, &out->mad);
	return 0;
}

int stats_log_ratios(const double *base, const double *cand, size_t n, double *out)
{
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(base[i]) || !isfinite(cand[i]) || base[i] <= 0 || cand[i] <= 0) {
			memset(out, 0, n * sizeof(*out));
			return -1;
		}
		out[i] = log(cand[i] / base[i]);
	}
	return 0;
}

double stats_pct(double log_ratio)
{
	return expm1(log_ratio) * 100;
}

/* counts[t] = number of subsets of {1..n} whose sum is t, t in [0, n(n+1)/2]. */
static uint64_t *signrank_counts(size_t n)
{
	size_t m = n * (n + 1) / 2;
	uint64_t *c = xcalloc(m + 1, sizeof(*c));

	c[0] = 1;
	for (size_t r = 1; r <= n; r++)
		for (size_t t = r * (r + 1) / 2; t >= r; t--)
			c[t] += c[t - r];
	return c;
}

double stats_signrank_cdf(size_t n, long t)
{
	size_t m = n * (n + 1) / 2;
	uint64_t *c, cum = 0;

	if (!n || n > STATS_EXACT_MAX)
		return -1;
	if (t < 0)
		return 0;
	if ((size_t)t >= m)
		return 1;
	c = signrank_counts(n);
	for (long i = 0; i <= t; i++)
		cum += c[i];
	free(c);
	return ldexp((double)cum, -(int)n);
}

static double normal_cdf(double x)
{
	return 0.5 * erfc(-x / sqrt(2.0));
}

double stats_normal_quantile(double p)
{
	double lo = -40, hi = 40;

	if (!(p > 0 && p < 1))
		return NAN;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (normal_cdf(mid) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

long stats_signrank_rank(size_t n, double confidence, enum stats_method m, double *coverage)
{
	double alpha2 = (1 - confidence) / 2;
	size_t total = n * (n + 1) / 2;
	long k = 0;

	if (coverage)
		*coverage = 0;
	if (!n || n > STATS_MAX_PAIRS || !(confidence > 0 && confidence < 1))
		return -1;
	if (m == STATS_METHOD_AUTO)
		m = n <= STATS_EXACT_MAX ? STATS_METHOD_EXACT : STATS_METHOD_NORMAL;
	if (m == STATS_METHOD_EXACT) {
		uint64_t *c, cum = 0;
		double limit = ldexp(alpha2, (int)n);

		if (n > STATS_EXACT_MAX)
			return -1;
		c = signrank_counts(n);
		/* k qualifies while P(T+ <= k - 1) = cum(k - 1) / 2^n <= alpha2 */
		for (size_t t = 0; t <= total; t++) {
			if ((double)(cum + c[t]) > limit)
				break;
			cum += c[t];
			k = (long)t + 1;
		}
		if (coverage) {
			uint64_t at = k ? cum : c[0];
			*coverage = 1 - 2 * ldexp((double)at, -(int)n);
		}
		free(c);
	} else {
		double mu = total / 2.0;
		double sigma = sqrt(n * (n + 1.0) * (2.0 * n + 1) / 24);
		double z = stats_normal_quantile(1 - alpha2);

		k = (long)floor(mu - z * sigma + 0.5);
		if (k < 0)
			k = 0;
		if (coverage)
			*coverage = 1 - 2 * normal_cdf(((k ? k : 1) - 0.5 - mu) / sigma);
	}
	return k;
}

int stats_hl_interval(const double *d, size_t n, double confidence, enum stats_method m,
		      struct stats_interval *out)
{
	size_t total, w = 0;
	double *walsh, coverage;
	long k;

	memset(out, 0, sizeof(*out));
	if (!n || n > STATS_MAX_PAIRS || !all_finite(d, n))
		return -1;
	k = stats_signrank_rank(n, confidence, m, &coverage);
	if (k < 0)
		return -1;
	total = n * (n + 1) / 2;
	walsh = xmalloc(total * sizeof(*walsh));
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			walsh[w++] = (d[i] + d[j]) / 2;
	qsort(walsh, total, sizeof(*walsh), cmp_double);

	out->n = n;
	out->estimate = sorted_median(walsh, total);
	out->confidence = confidence;
	out->coverage = coverage;
	out->reached = k > 0;
	out->exact = m == STATS_METHOD_EXACT || (m == STATS_METHOD_AUTO && n <= STATS_EXACT_MAX);
	out->low = walsh[k ? k - 1 : 0];
	out->high = walsh[total - (k ? k : 1)];
	median_mad(d, n, &coverage, &out->noise);
	out->noise *= STATS_MAD_NORMAL;
	free(walsh);
	return 0;
}

int stats_counts_interval(const double *base, const double *cand, size_t n, double confidence,
			  struct stats_interval *out)
{
	double *d;
	bool same = n >= 2;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!n || n > STATS_MAX_PAIRS)
		return -1;
	d = xmalloc(n * sizeof(*d));
	if (stats_log_ratios(base, cand, n, d) < 0)
		goto out_free;
	for (size_t i = 1; i < n; i++)
		if (base[i] != base[0] || cand[i] != cand[0])
			same = false;
	if (same) {
		out->n = n;
		out->estimate = out->low = out->high = d[0];
		out->confidence = confidence;
		out->coverage = 1;
		out->reached = out->exact = out->point = true;
		ret = 1;
	} else if (!stats_hl_interval(d, n, confidence, STATS_METHOD_AUTO, out)) {
		ret = 0;
	}
out_free:
	free(d);
	return ret;
}

/* Slack for comparing log-ratios computed along different paths. */
#define LOG_EPS 1e-12

enum stats_judgement stats_judge_improvement(const struct stats_interval *iv, double min_improvement)
{
	double need = log1p(-min_improvement);

	if (!iv->reached || !(min_improvement >= 0 && min_improvement < 1))
		return STATS_OPEN;
	if (iv->estimate <= need + LOG_EPS && iv->high < 0)
		return STATS_IMPROVED;
	if (iv->point || iv->low > need + LOG_EPS)
		return STATS_SHORT;
	return STATS_OPEN;
}

int stats_schedule_check(const struct stats_schedule *s)
{
	if (!s->nr_looks || s->nr_looks > STATS_MAX_LOOKS ||
	    !(s->confidence > 0 && s->confidence < 1))
		return -1;
	for (size_t i = 0; i < s->nr_looks; i++)
		if (!s->looks[i] || s->looks[i] > STATS_MAX_PAIRS ||
		    (i && s->looks[i] <= s->looks[i - 1]))
			return -1;
	return 0;
}

double stats_schedule_look_confidence(const struct stats_schedule *s)
{
	return 1 - (1 - s->confidence) / (s->nr_looks ? s->nr_looks : 1);
}

const char *stats_decision_name(enum stats_decision d)
{
	switch (d) {
	case STATS_NEED_MORE: return "need-more";
	case STATS_DECIDED_KEEP: return "decided-keep";
	case STATS_DECIDED_REJECT: return "decided-reject";
	case STATS_INCONCLUSIVE: return "inconclusive";
	}
	return "?";
}

int stats_sequential_decide(const struct stats_schedule *s, const double *d, size_t n,
			    double min_improvement, enum stats_decision *decision,
			    struct stats_interval *out)
{
	struct stats_interval iv;
	size_t look = 0;

	*decision = STATS_NEED_MORE;
	if (out)
		memset(out, 0, sizeof(*out));
	if (stats_schedule_check(s) < 0 || !(min_improvement >= 0 && min_improvement < 1))
		return -1;
	while (look < s->nr_looks && s->looks[look] <= n)
		look++;
	if (!look)
		return 0;
	if (stats_hl_interval(d, s->looks[look - 1], stats_schedule_look_confidence(s),
			      STATS_METHOD_AUTO, &iv) < 0)
		return -1;
	switch (stats_judge_improvement(&iv, min_improvement)) {
	case STATS_IMPROVED:
		*decision = STATS_DECIDED_KEEP;
		break;
	case STATS_SHORT:
		*decision = STATS_DECIDED_REJECT;
		break;
	case STATS_OPEN:
		*decision = look == s->nr_looks ? STATS_INCONCLUSIVE : STATS_NEED_MORE;
		break;
	}
	if (out)
		*out = iv;
	return 0;
}

int stats_parse_looks(const char *arg, struct stats_schedule *s)
{
	const char *p = arg;

	s->nr_looks = 0;
	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 1 || v > STATS_MAX_PAIRS || (*end && *end != ',') ||
		    s->nr_looks == STATS_MAX_LOOKS)
			goto bad;
		s->looks[s->nr_looks++] = (size_t)v;
		p = *end ? end + 1 : end;
	}
	if (stats_schedule_check(s))
		goto bad;
	return 0;
bad:
	return error("invalid value '%s' for --looks: expected at most %d increasing pair "
		     "counts up to %d, like 12,24,36", arg, STATS_MAX_LOOKS, STATS_MAX_PAIRS);
}
