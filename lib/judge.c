/*
 * judge.c: the canary's judge (see judge.h). The exact null distribution
 * of U is counted by dynamic programming over which build holds the
 * largest of the pooled values; above JUDGE_EXACT_MAX, or with ties, the
 * normal approximation with the tie correction stands in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "stats.h"
#include "util.h"

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

static double sorted_median(const double *x, size_t n)
{
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Median and raw MAD of x[0..n), n > 0, values finite: the gate's summary. */
static void median_mad(const double *x, size_t n, double *median, double *mad)
{
	struct stats_summary s;

	stats_summarize(x, n, &s);
	*median = s.median;
	*mad = s.mad;
}

static double normal_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/*
 * counts[u] for u in 0..m*n: how many of the C(m+n, m) orders of m x's
 * and n y's give U = u. The largest pooled value is a y (it tops every x:
 * m more) or an x (nothing more), so c(m, n, u) = c(m, n-1, u-m) +
 * c(m-1, n, u); built up for every m' <= m, n' <= n.
 */
static double *u_counts(size_t m, size_t n)
{
	size_t w = m * n + 1, stride = (n + 1) * w;
	double *c = xcalloc((m + 1) * stride, sizeof(*c)), *out;

#define C(i, j, u) c[(i) * stride + (j) * w + (u)]
	for (size_t i = 0; i <= m; i++)
		for (size_t j = 0; j <= n; j++) {
			if (!i || !j) {
				C(i, j, 0) = 1;
				continue;
			}
			for (size_t u = 0; u <= i * j; u++)
				C(i, j, u) = (u >= i ? C(i, j - 1, u - i) : 0) + C(i - 1, j, u);
		}
	out = xmalloc(w * sizeof(*out));
	memcpy(out, &C(m, n, 0), w * sizeof(*out));
#undef C
	free(c);
	return out;
}

double judge_u_cdf(size_t m, size_t n, long u)
{
	double *c, total = 0, below = 0;

	if (!m || !n || m > JUDGE_EXACT_MAX || n > JUDGE_EXACT_MAX)
		return -1;
	if (u < 0)
		return 0;
	c = u_counts(m, n);
	for (size_t k = 0; k <= m * n; k++) {
		total += c[k];
		if ((long)k <= u)
			below += c[k];
	}
	free(c);
	return below / total;
}

/* U (pairs with y > x, ties a half) and whether any pooled values tie; the tie term sum(t^3 - t). */
static double u_stat(const double *x, size_t m, const double *y, size_t n, double *ties)
{
	double u = 0, *pool = xmalloc((m + n) * sizeof(*pool));

	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < m; i++)
			u += y[j] > x[i] ? 1 : y[j] == x[i] ? 0.5 : 0;
	memcpy(pool, x, m * sizeof(*pool));
	memcpy(pool + m, y, n * sizeof(*pool));
	qsort(pool, m + n, sizeof(*pool), cmp_double);
	*ties = 0;
	for (size_t i = 0; i < m + n;) {
		size_t k = i;

		while (k < m + n && pool[k] == pool[i])
			k++;
		*ties += pow((double)(k - i), 3) - (double)(k - i);
		i = k;
	}
	free(pool);
	return u;
}

int judge_mann_whitney(const double *x, size_t m, const double *y, size_t n, double *u, double *p,
		       bool *exact)
{
	double ties, mean = (double)m * (double)n / 2, var, d;

	*u = 0;
	*p = 1;
	*exact = false;
	if (!m || !n || !all_finite(x, m) || !all_finite(y, n))
		return -1;
	*u = u_stat(x, m, y, n, &ties);
	if (!ties && m <= JUDGE_EXACT_MAX && n <= JUDGE_EXACT_MAX) {
		/* symmetric: P(U >= u) = P(U <= mn - u) */
		double lo = judge_u_cdf(m, n, (long)*u), hi = judge_u_cdf(m, n, (long)(m * n) - (long)*u);

		*p = fmin(1, 2 * fmin(lo, hi));
		*exact = true;
		return 0;
	}
	var = (double)m * (double)n / 12 *
	      ((double)(m + n + 1) - ties / ((double)(m + n) * (double)(m + n - 1)));
	if (var <= 0)
		return 0;	/* every value the same: no difference to see */
	d = fmax(0, fabs(*u - mean) - 0.5);
	*p = fmin(1, 2 * (1 - normal_cdf(d / sqrt(var))));
	return 0;
}

int judge_hl_shift(const double *x, size_t m, const double *y, size_t n, double confidence,
		   double *shift, double *low, double *high)
{
	size_t mn = m * n;
	double *d, alpha = 1 - confidence;
	long k;

	*shift = *low = *high = 0;
	if (!m || !n || m > JUDGE_MAX_WINDOWS || n > JUDGE_MAX_WINDOWS || !all_finite(x, m) ||
	    !all_finite(y, n) || !(confidence > 0 && confidence < 1))
		return -1;
	d = xmalloc(mn * sizeof(*d));
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < m; i++)
			d[j * m + i] = y[j] - x[i];
	qsort(d, mn, sizeof(*d), cmp_double);
	*shift = sorted_median(d, mn);
	/* k: the largest with P(U <= k - 1) <= alpha / 2; the interval is d_(k) .. d_(mn + 1 - k) */
	if (m <= JUDGE_EXACT_MAX && n <= JUDGE_EXACT_MAX) {
		double *c = u_counts(m, n), total = 0, cum = 0;

		for (size_t u = 0; u <= mn; u++)
			total += c[u];
		for (k = 0; k < (long)mn && (cum + c[k]) / total <= alpha / 2; k++)
			cum += c[k];
		free(c);
	} else {
		k = (long)floor((double)mn / 2 - stats_normal_quantile(1 - alpha / 2) *
				sqrt((double)mn * (double)(m + n + 1) / 12));
	}
	if (k < 1)
		k = 1;		/* too few windows for the level: the whole range */
	if ((size_t)k > (mn + 1) / 2)
		k = (long)((mn + 1) / 2);
	*low = d[k - 1];
	*high = d[mn - (size_t)k];
	free(d);
	return 0;
}

const char *judge_class_name(enum judge_class c)
{
	switch (c) {
	case JUDGE_PASS:
		return "pass";
	case JUDGE_HIGH:
		return "high";
	case JUDGE_LOW:
		return "low";
	case JUDGE_NODATA:
		return "nodata";
	}
	return "?";
}

const char *judge_verdict_name(enum judge_verdict v)
{
	switch (v) {
	case JUDGE_VERDICT_PASS:
		return "pass";
	case JUDGE_VERDICT_MARGINAL:
		return "marginal";
	case JUDGE_VERDICT_FAIL:
		return "fail";
	}
	return "?";
}

static int check_spec(const struct judge_spec *s, const struct judge_series *series)
{
	double pass = s->pass_score ? s->pass_score : 95, marginal = s->marginal_score ? s->marginal_score : 75;

	if (!s->nr_metrics)
		return error("a canary needs at least one metric to judge");
	if (s->confidence && !(s->confidence > 0 && s->confidence < 1))
		return error("the judge's confidence must be between 0 and 1, not %g", s->confidence);
	if (!(pass >= 0 && pass <= 100 && marginal >= 0 && marginal <= pass))
		return error("the judge's scores must be 0 <= marginal (%g) <= pass (%g) <= 100", marginal, pass);
	for (size_t i = 0; i < s->nr_metrics; i++) {
		const struct judge_metric_spec *ms = &s->metrics[i];

		if (!(ms->tolerance >= 0) || !(ms->abs_tolerance >= 0) || !(ms->weight >= 0) ||
		    !(ms->spread_tolerance >= 0))
			return error("metric '%s': tolerances and weight must be numbers >= 0", ms->name);
		if (series[i].n_base > JUDGE_MAX_WINDOWS || series[i].n_cand > JUDGE_MAX_WINDOWS)
			return error("metric '%s': more than %d windows a build (%zu, %zu): use longer windows",
				     ms->name, JUDGE_MAX_WINDOWS, series[i].n_base, series[i].n_cand);
	}
	return 0;
}

/* "+12.3%" of the base's median, or the absolute shift when the base's median is 0. */
static void fmt_shift(char *buf, size_t len, const struct judge_metric_result *r)
{
	if (isnan(r->rel))
		snprintf(buf, len, "%+.4g [%+.4g, %+.4g]", r->shift, r->low, r->high);
	else
		snprintf(buf, len, "%+.1f%% [%+.1f%%, %+.1f%%]", r->rel * 100, r->rel_low * 100,
			 r->rel_high * 100);
}

/*
 * The spread between windows: the candidate's deviations from its median
 * against the base's, relative to each median when both are positive (a
 * level that rose 20% must not read as a wider spread). A second look at
 * the same windows, so it asks for a tenth of the test's alpha and at
 * least 1 + spread_tolerance times the base's MAD.
 */
static void judge_spread(const struct judge_metric_spec *ms, const double *x, size_t m, const double *y,
			 size_t n, double alpha, struct judge_metric_result *r)
{
	double *dx = xmalloc(m * sizeof(*dx)), *dy = xmalloc(n * sizeof(*dy)), u, p, one_sided;
	double rise = ms->spread_tolerance ? ms->spread_tolerance : 0.5;
	bool relative = r->base_median > 0 && r->cand_median > 0, exact;
	double bs = relative ? r->base_median : 1, cs = relative ? r->cand_median : 1;
	double bmad = r->base_mad / bs, cmad = r->cand_mad / cs;

	for (size_t i = 0; i < m; i++)
		dx[i] = fabs(x[i] - r->base_median) / bs;
	for (size_t j = 0; j < n; j++)
		dy[j] = fabs(y[j] - r->cand_median) / cs;
	judge_mann_whitney(dx, m, dy, n, &u, &p, &exact);
	one_sided = u > (double)m * (double)n / 2 ? p / 2 : 1 - p / 2;
	r->spread_checked = true;
	r->spread_p = one_sided;
	r->spread_failed = one_sided < alpha / 10 &&
			   (bmad > 0 ? cmad > bmad * (1 + rise) : cmad * cs > ms->abs_tolerance);
	free(dx);
	free(dy);
}

static void judge_metric(const struct judge_spec *s, const struct judge_metric_spec *ms,
			 const struct judge_series *in, struct judge_metric_result *r)
{
	size_t skip = s->warmup, min = s->min_windows ? s->min_windows : 5;
	double confidence = s->confidence ? s->confidence : 0.99, allowed, u;
	const double *x = in->base + (in->n_base > skip ? skip : in->n_base);
	const double *y = in->cand + (in->n_cand > skip ? skip : in->n_cand);
	size_t m = in->n_base > skip ? in->n_base - skip : 0, n = in->n_cand > skip ? in->n_cand - skip : 0;
	char shift[96];

	memset(r, 0, sizeof(*r));
	r->rel = r->rel_low = r->rel_high = NAN;
	r->n_base = m;
	r->n_cand = n;
	if (m < min || n < min) {
		r->cls = JUDGE_NODATA;
		snprintf(r->reason, sizeof(r->reason), "%s: %zu and %zu windows after the warm-up, "
			 "fewer than the %zu needed", ms->name, m, n, min);
		return;
	}
	if (!all_finite(x, m) || !all_finite(y, n)) {
		r->cls = JUDGE_NODATA;
		snprintf(r->reason, sizeof(r->reason), "%s: a window without a value", ms->name);
		return;
	}
	median_mad(x, m, &r->base_median, &r->base_mad);
	median_mad(y, n, &r->cand_median, &r->cand_mad);
	judge_mann_whitney(x, m, y, n, &u, &r->p, &r->exact);
	judge_hl_shift(x, m, y, n, confidence, &r->shift, &r->low, &r->high);
	if (r->base_median != 0) {
		double b = fabs(r->base_median);

		r->rel = r->shift / b;
		r->rel_low = r->low / b;
		r->rel_high = r->high / b;
	}
	allowed = fmax(ms->tolerance * fabs(r->base_median), ms->abs_tolerance);
	if (r->low > 0 && r->shift > allowed)
		r->cls = JUDGE_HIGH;
	else if (r->high < 0 && r->shift < -allowed)
		r->cls = JUDGE_LOW;
	else
		r->cls = JUDGE_PASS;
	r->failed = (r->cls == JUDGE_HIGH && ms->direction != JUDGE_DECREASE_BAD) ||
		    (r->cls == JUDGE_LOW && ms->direction != JUDGE_INCREASE_BAD);
	fmt_shift(shift, sizeof(shift), r);
	if (r->cls == JUDGE_PASS)
		snprintf(r->reason, sizeof(r->reason), "%s: %s, p = %.2g: no change beyond %s", ms->name,
			 shift, r->p, ms->tolerance ? "the tolerance" : "chance");
	else
		snprintf(r->reason, sizeof(r->reason), "%s: %s, p = %.2g: %s%s", ms->name, shift, r->p,
			 r->cls == JUDGE_HIGH ? "higher" : "lower",
			 r->failed ? ", beyond the tolerance" : " (better)");
	if (ms->spread) {
		judge_spread(ms, x, m, y, n, 1 - confidence, r);
		if (r->spread_failed) {
			r->failed = true;
			snprintf(r->reason, sizeof(r->reason), "%s: the spread between windows rose from %.4g "
				 "to %.4g (MAD; p = %.2g) with the median %s", ms->name, r->base_mad, r->cand_mad,
				 r->spread_p, shift);
		}
	}
}

int judge_canary(const struct judge_spec *spec, const struct judge_series *series,
		 struct judge_result *out)
{
	double pass = spec->pass_score ? spec->pass_score : 95;
	double marginal = spec->marginal_score ? spec->marginal_score : 75, all = 0, ok = 0;
	const char *critical = NULL;

	memset(out, 0, sizeof(*out));
	if (check_spec(spec, series))
		return -1;
	out->metrics = xcalloc(spec->nr_metrics, sizeof(*out->metrics));
	out->nr_metrics = spec->nr_metrics;
	for (size_t i = 0; i < spec->nr_metrics; i++) {
		const struct judge_metric_spec *ms = &spec->metrics[i];
		struct judge_metric_result *r = &out->metrics[i];
		double w = ms->weight ? ms->weight : 1;

		judge_metric(spec, ms, &series[i], r);
		if (r->cls == JUDGE_NODATA)
			continue;
		all += w;
		if (!r->failed)
			ok += w;
		else if (ms->critical && !critical)
			critical = ms->name;
	}
	out->critical_failed = critical != NULL;
	out->score = all > 0 ? 100 * ok / all : 0;
	if (all <= 0) {
		out->verdict = JUDGE_VERDICT_FAIL;
		snprintf(out->reason, sizeof(out->reason), "no metric had enough windows to judge");
	} else if (critical) {
		out->verdict = JUDGE_VERDICT_FAIL;
		snprintf(out->reason, sizeof(out->reason), "the critical metric '%s' failed", critical);
	} else if (out->score >= pass) {
		out->verdict = JUDGE_VERDICT_PASS;
		snprintf(out->reason, sizeof(out->reason), "score %.0f, at least the %.0f to pass", out->score, pass);
	} else if (out->score >= marginal) {
		out->verdict = JUDGE_VERDICT_MARGINAL;
		snprintf(out->reason, sizeof(out->reason), "score %.0f: under the %.0f to pass, at least the "
			 "%.0f of a marginal canary", out->score, pass, marginal);
	} else {
		out->verdict = JUDGE_VERDICT_FAIL;
		snprintf(out->reason, sizeof(out->reason), "score %.0f, under the %.0f of a marginal canary",
			 out->score, marginal);
	}
	return 0;
}

void judge_release(struct judge_result *r)
{
	free(r->metrics);
	memset(r, 0, sizeof(*r));
}
