/*
 * scale.c: growth exponents (see scale.h). Profiles of each size go through
 * report.c (by function: self, and total counted once per stack), their rows
 * are merged by function into one table across sizes, and each row's costs
 * are fitted on a log-log scale by ordinary least squares.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util.h"
#include "intern.h"
#include "json.h"
#include "profile.h"
#include "report.h"
#include "scale.h"
#include "strbuf.h"

/* ---- the fit ---------------------------------------------------------- */

double scale_t975(size_t df)
{
	/* t(0.975, df) for df 1..30, then 40, 60, 120 and the normal limit */
	static const double t[30] = {
		12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
		2.446911851, 2.364624252, 2.306004135, 2.262157163, 2.228138852,
		2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546,
		2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447,
		2.079613845, 2.073873068, 2.068657610, 2.063898562, 2.059538553,
		2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456,
	};
	static const struct { double df, t; } tail[] = {
		{ 30, 2.042272456 }, { 40, 2.021075390 }, { 60, 2.000297822 },
		{ 120, 1.979930405 }, { INFINITY, 1.959963985 },
	};

	if (!df)
		BUG("t quantile with no degrees of freedom");
	if (df <= 30)
		return t[df - 1];
	/* between the tabled points, t is close to linear in 1/df */
	for (size_t i = 1; i < ARRAY_SIZE(tail); i++) {
		if ((double)df <= tail[i].df) {
			double a = 1 / tail[i - 1].df, b = 1 / tail[i].df, x = 1 / (double)df;

			return tail[i - 1].t + (tail[i].t - tail[i - 1].t) * (a - x) / (a - b);
		}
	}
	return tail[ARRAY_SIZE(tail) - 1].t;
}

static void not_fitted(struct scale_fit *fit, const char *why)
{
	fit->fitted = false;
	snprintf(fit->reason, sizeof(fit->reason), "%s", why);
}

void scale_fit_power(const double *x, const double *y, size_t n, struct scale_fit *fit)
{
	double x0, y0, mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, ss_res = 0, scale2 = 0, se, t;

	memset(fit, 0, sizeof(*fit));
	fit->points = n;
	if (n < SCALE_MIN_POINTS) {
		not_fitted(fit, "too few sizes");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]) || x[i] <= 0 || y[i] <= 0) {
			not_fitted(fit, "a size or cost is not above 0");
			return;
		}
	}
	/* centered on the first point, so equal values cancel exactly */
	x0 = log(x[0]);
	y0 = log(y[0]);
	for (size_t i = 0; i < n; i++) {
		mx += log(x[i]) - x0;
		my += log(y[i]) - y0;
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double dx = log(x[i]) - x0 - mx, dy = log(y[i]) - y0 - my;

		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
		scale2 += log(y[i]) * log(y[i]);
	}
	if (!(sxx > 0)) {
		not_fitted(fit, "every size is the same");
		return;
	}
	fit->exponent = sxy / sxx;
	fit->intercept = (my + y0) - fit->exponent * (mx + x0);
	for (size_t i = 0; i < n; i++) {
		double r = log(y[i]) - (fit->intercept + fit->exponent * log(x[i]));

		ss_res += r * r;
	}
	/* residuals at the level of rounding are a perfect fit, whatever syy is */
	if (ss_res <= 1e-24 * (double)n * (1 + scale2 / (double)n)) {
		ss_res = 0;
		fit->r2 = 1;
	} else {
		fit->r2 = syy > 0 ? 1 - ss_res / syy : 0;
		if (fit->r2 < 0)
			fit->r2 = 0;
	}
	se = n > 2 ? sqrt(ss_res / (double)(n - 2) / sxx) : 0;
	t = scale_t975(n - 2);
	fit->ci_low = fit->exponent - t * se;
	fit->ci_high = fit->exponent + t * se;
	fit->fitted = true;
}

bool scale_is_superlinear(const struct scale_fit *f)
{
	return f->fitted && f->exponent > SCALE_SUPERLINEAR_EXPONENT &&
	       f->r2 >= SCALE_SUPERLINEAR_R2;
}

void scale_describe(const struct scale_fit *f, struct strbuf *out)
{
	double k = f->exponent;
	const char *what;

	if (!f->fitted) {
		strbuf_addstr(out, "too few samples");
		return;
	}
	/* a flat cost explains no variance: judge it by its slope and interval */
	if (fabs(k) < SCALE_CONST_EXPONENT &&
	    (f->r2 >= SCALE_SUPERLINEAR_R2 || (f->ci_low > -0.5 && f->ci_high < 0.5))) {
		strbuf_addstr(out, "~const");
		return;
	}
	if (f->r2 < SCALE_SUPERLINEAR_R2) {
		strbuf_addstr(out, "poor fit");
		return;
	}
	if (k > SCALE_SUPERLINEAR_EXPONENT)
		what = "superlinear";
	else if (k >= SCALE_LINEAR_LOW)
		what = "linear";
	else if (k > 0)
		what = "sublinear";
	else
		what = "decreasing";
	/* -0.04 must not print as "-0.0" */
	strbuf_addf(out, "~n^%.1f %s", fabs(k) < 0.05 ? 0.0 : k, what);
}

/* ---- the table of functions ------------------------------------------ */

void scale_init(struct scale *s, const uint64_t *sizes, size_t nr)
{
	memset(s, 0, sizeof(*s));
	s->nr_sizes = nr;
	s->sizes = xcalloc(nr ? nr : 1, sizeof(*s->sizes));
	if (nr)
		memcpy(s->sizes, sizes, nr * sizeof(*sizes));
	s->seconds = xcalloc(nr ? nr : 1, sizeof(*s->seconds));
	s->samples = xcalloc(nr ? nr : 1, sizeof(*s->samples));
	s->wall_seconds = xcalloc(nr ? nr : 1, sizeof(*s->wall_seconds));
	s->profiles = xcalloc(nr ? nr : 1, sizeof(*s->profiles));
}

void scale_set_run(struct scale *s, size_t idx, double wall_seconds, const char *profile)
{
	if (idx >= s->nr_sizes)
		BUG("size %zu of %zu", idx, s->nr_sizes);
	s->wall_seconds[idx] = wall_seconds;
	free(s->profiles[idx]);
	s->profiles[idx] = profile ? xstrdup(profile) : NULL;
}

void scale_release(struct scale *s)
{
	for (size_t i = 0; i < s->nr_fns; i++) {
		struct scale_fn *f = &s->fns[i];

		free(f->function);
		free(f->file);
		free(f->dso);
		free(f->cost);
		free(f->self);
		free(f->samples);
	}
	free(s->fns);
	free(s->sizes);
	free(s->seconds);
	free(s->samples);
	free(s->wall_seconds);
	for (size_t i = 0; i < s->nr_sizes; i++)
		free(s->profiles[i]);
	free(s->profiles);
	hindex_release(&s->index);
	memset(s, 0, sizeof(*s));
}

/* A function is its name and file; without a file, its name and DSO. */
static const char *key_dso(const char *file, const char *dso)
{
	return *file ? "" : dso;
}

static uint64_t fn_hash(const char *name, const char *file, const char *dso)
{
	uint64_t h = HASH_SEED;

	h = hash_bytes(h, name, strlen(name) + 1);
	h = hash_bytes(h, file, strlen(file) + 1);
	return hash_bytes(h, dso, strlen(dso) + 1);
}

struct fn_key {
	const char *name, *file, *kd;
};

static bool fn_eq(const void *table, size_t i, const void *key_)
{
	const struct scale_fn *f = &((const struct scale *)table)->fns[i];
	const struct fn_key *key = key_;

	return !strcmp(f->function, key->name) && !strcmp(f->file, key->file) &&
	       !strcmp(key_dso(f->file, f->dso), key->kd);
}

static struct scale_fn *fn_for(struct scale *s, const char *name, const char *file,
			       const char *dso)
{
	struct fn_key key = { name, file, key_dso(file, dso) };
	uint64_t hash = fn_hash(name, file, key.kd);
	struct scale_fn *f;
	size_t slot, i;

	if ((i = hindex_probe(&s->index, hash, fn_eq, s, &key, &slot)) != HINDEX_NONE)
		return &s->fns[i];
	ALLOC_GROW(s->fns, s->nr_fns + 1, s->alloc_fns);
	f = &s->fns[s->nr_fns];
	memset(f, 0, sizeof(*f));
	f->function = xstrdup(name);
	f->file = xstrdup(file);
	f->dso = xstrdup(dso);
	f->cost = xcalloc(s->nr_sizes, sizeof(*f->cost));
	f->self = xcalloc(s->nr_sizes, sizeof(*f->self));
	f->samples = xcalloc(s->nr_sizes, sizeof(*f->samples));
	hindex_set(&s->index, slot, hash, s->nr_fns++);
	return f;
}

static bool is_type(const struct profile *p, const struct pf_value_type *t,
		    const char *type, const char *unit)
{
	return !strcmp(profile_string(p, t->type), type) && !strcmp(profile_string(p, t->unit), unit);
}

static int find_type(const struct profile *p, const char *type, const char *unit)
{
	for (size_t i = 0; i < p->nr_sample_type; i++)
		if (is_type(p, &p->sample_type[i], type, unit))
			return (int)i;
	return -1;
}

int scale_add_profile(struct scale *s, size_t idx, const struct profile *p,
		      double seconds_per_sample)
{
	struct report counts = REPORT_INIT, times = REPORT_INIT;
	int count_idx = find_type(p, "samples", "count");
	int time_idx = find_type(p, "cpu", "nanoseconds");
	double per_unit;	/* seconds per unit of the time report's type */
	int ret = -1;

	if (idx >= s->nr_sizes)
		BUG("size %zu of %zu", idx, s->nr_sizes);
	if (count_idx < 0)
		return error("the profile has no samples/count sample type");
	if (time_idx >= 0) {
		per_unit = 1e-9;
	} else if (!strcmp(profile_string(p, p->period_type.unit), "nanoseconds") && p->period > 0) {
		time_idx = count_idx;
		per_unit = (double)p->period * 1e-9;
	} else if (seconds_per_sample > 0 && isfinite(seconds_per_sample)) {
		time_idx = count_idx;
		per_unit = seconds_per_sample;
	} else {
		return error("the profile's samples carry no time: give the sampling frequency");
	}
	if (report_build(&counts, p, count_idx, REPORT_BY_FUNCTION) ||
	    report_build(&times, p, time_idx, REPORT_BY_FUNCTION))
		goto out;
	/* negative weights come only from foreign profiles; they count as none */
	if (counts.total > 0)
		s->samples[idx] += (uint64_t)counts.total;
	if (times.total > 0)
		s->seconds[idx] += (double)times.total * per_unit;
	for (size_t i = 0; i < counts.nr; i++) {
		const struct report_row *r = &counts.rows[i];
		struct scale_fn *f = fn_for(s, r->name, r->file, r->dso);

		if (r->total > 0)
			f->samples[idx] += (uint64_t)r->total;
	}
	for (size_t i = 0; i < times.nr; i++) {
		const struct report_row *r = &times.rows[i];
		struct scale_fn *f = fn_for(s, r->name, r->file, r->dso);

		if (r->total > 0)
			f->cost[idx] += (double)r->total * per_unit;
		if (r->self > 0)
			f->self[idx] += (double)r->self * per_unit;
	}
	ret = 0;
out:
	report_release(&counts);
	report_release(&times);
	return ret;
}

/* Fit cost[] over the sizes with at least min_samples samples. */
static void fit_row(const struct scale *s, const double *cost, const uint64_t *samples,
		    uint64_t min_samples, struct scale_fit *fit)
{
	double *x = xcalloc(s->nr_sizes ? s->nr_sizes : 1, sizeof(*x));
	double *y = xcalloc(s->nr_sizes ? s->nr_sizes : 1, sizeof(*y));
	size_t n = 0;

	for (size_t i = 0; i < s->nr_sizes; i++) {
		if (samples[i] < min_samples || !(cost[i] > 0))
			continue;
		x[n] = (double)s->sizes[i];
		y[n++] = cost[i];
	}
	if (n < SCALE_MIN_POINTS) {
		memset(fit, 0, sizeof(*fit));
		fit->points = n;
		snprintf(fit->reason, sizeof(fit->reason),
			 "too few samples: %zu of %zu sizes have %llu or more, %d are needed",
			 n, s->nr_sizes, (unsigned long long)min_samples, SCALE_MIN_POINTS);
	} else {
		scale_fit_power(x, y, n, fit);
	}
	free(x);
	free(y);
}

/* By cost at size *last (the largest), most first; then by name. */
static int cmp_fn(const void *a, const void *b, void *last)
{
	const struct scale_fn *x = a, *y = b;
	size_t i = *(const size_t *)last;
	int c;

	if (x->cost[i] != y->cost[i])
		return x->cost[i] > y->cost[i] ? -1 : 1;
	if ((c = strcmp(x->function, y->function)))
		return c;
	if ((c = strcmp(x->file, y->file)))
		return c;
	return strcmp(x->dso, y->dso);
}

void scale_fit_all(struct scale *s, uint64_t min_samples)
{
	size_t last;

	fit_row(s, s->seconds, s->samples, min_samples, &s->program);
	for (size_t i = 0; i < s->nr_fns; i++) {
		struct scale_fn *f = &s->fns[i];

		fit_row(s, f->cost, f->samples, min_samples, &f->fit);
		f->superlinear = scale_is_superlinear(&f->fit);
	}
	if (!s->nr_sizes || !s->nr_fns)
		return;
	last = s->nr_sizes - 1;
	qsort_r(s->fns, s->nr_fns, sizeof(*s->fns), cmp_fn, &last);
	/* the index points at positions that moved: index them again */
	hindex_release(&s->index);
	for (size_t i = 0; i < s->nr_fns; i++) {
		const struct scale_fn *f = &s->fns[i];

		hindex_add(&s->index, fn_hash(f->function, f->file, key_dso(f->file, f->dso)), i);
	}
}

/* ---- JSON ------------------------------------------------------------- */

static json_t *num_or_null(bool have, double v)
{
	return have && isfinite(v) ? json_real(v) : json_null();
}

static void add_fit(json_t *o, const struct scale_fit *f)
{
	json_object_set_new(o, "exponent", num_or_null(f->fitted, f->exponent));
	json_object_set_new(o, "ci_low", num_or_null(f->fitted, f->ci_low));
	json_object_set_new(o, "ci_high", num_or_null(f->fitted, f->ci_high));
	json_object_set_new(o, "r2", num_or_null(f->fitted, f->r2));
}

static json_t *reals(const double *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_real(isfinite(v[i]) ? v[i] : 0));
	return a;
}

static json_int_t count_json(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (json_int_t)v;
}

static json_t *counts(const uint64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(count_json(v[i])));
	return a;
}

static void add_verdict(json_t *o, const struct scale_fit *f)
{
	struct strbuf sb = STRBUF_INIT;

	scale_describe(f, &sb);
	json_object_set_new(o, "verdict", json_string(sb.buf));
	json_object_set_new(o, "fitted", json_boolean(f->fitted));
	json_object_set_new(o, "reason", f->fitted ? json_null() : json_string(f->reason));
	json_object_set_new(o, "points", json_integer((json_int_t)f->points));
	strbuf_release(&sb);
}

json_t *scale_to_json(const struct scale *s, const char *workload, const char *command)
{
	json_t *doc = json_object(), *sizes = json_array(), *runs = json_array();
	json_t *prog = json_object(), *fns = json_array();

	json_object_set_new(doc, "workload", json_text(workload));
	json_object_set_new(doc, "command", json_text(command));
	for (size_t i = 0; i < s->nr_sizes; i++) {
		json_t *r = json_object();

		json_array_append_new(sizes, json_integer(count_json(s->sizes[i])));
		json_object_set_new(r, "n", json_integer(count_json(s->sizes[i])));
		json_object_set_new(r, "samples", json_integer(count_json(s->samples[i])));
		json_object_set_new(r, "seconds", json_real(s->seconds[i]));
		json_object_set_new(r, "wall_seconds", json_real(s->wall_seconds[i]));
		json_object_set_new(r, "profile", json_text(s->profiles[i]));
		json_array_append_new(runs, r);
	}
	json_object_set_new(doc, "sizes", sizes);
	json_object_set_new(doc, "runs", runs);

	add_fit(prog, &s->program);
	json_object_set_new(prog, "superlinear", json_boolean(scale_is_superlinear(&s->program)));
	add_verdict(prog, &s->program);
	json_object_set_new(prog, "cost_seconds", reals(s->seconds, s->nr_sizes));
	json_object_set_new(prog, "samples", counts(s->samples, s->nr_sizes));
	json_object_set_new(doc, "program", prog);
	for (size_t i = 0; i < s->nr_fns; i++) {
		const struct scale_fn *f = &s->fns[i];
		json_t *o = json_object();

		json_object_set_new(o, "function", json_text(f->function));
		json_object_set_new(o, "file", json_text(f->file));
		json_object_set_new(o, "dso", json_text(f->dso));
		add_fit(o, &f->fit);
		json_object_set_new(o, "superlinear", json_boolean(f->superlinear));
		add_verdict(o, &f->fit);
		json_object_set_new(o, "cost_seconds", reals(f->cost, s->nr_sizes));
		json_object_set_new(o, "self_seconds", reals(f->self, s->nr_sizes));
		json_object_set_new(o, "samples", counts(f->samples, s->nr_sizes));
		json_array_append_new(fns, o);
	}
	json_object_set_new(doc, "functions", fns);
	return doc;
}

/* ---- the table `hotloop scale` prints ---- */

/* The functions the table shows: --min-samples at one size at least, --top of them. */
static size_t pick_rows(const struct scale *s, size_t top, size_t *rows)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_fns && (!top || n < top); i++)
		if (s->fns[i].fit.points)
			rows[n++] = i;
	return n;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void format_row(struct strbuf *out, const char *name, const char *file, int wname, int wfile,
		      const struct scale_fit *fit, const double *cost, size_t nr_sizes)
{
	struct strbuf verdict = STRBUF_INIT;
	char expo[64] = "-", r2[16] = "-";

	if (fit->fitted) {
		snprintf(expo, sizeof(expo), "%.2f [%.2f, %.2f]", fit->exponent, fit->ci_low, fit->ci_high);
		snprintf(r2, sizeof(r2), "%.3f", fit->r2);
	}
	scale_describe(fit, &verdict);
	strbuf_addf(out, "%-*.*s  %-*.*s  %-22s  %5s  %-20s", wname, wname, name, wfile, wfile,
	       base_name(file), expo, r2, verdict.buf);
	for (size_t k = 0; k < nr_sizes; k++)
		strbuf_addf(out, "  %9.3fs", cost[k]);
	strbuf_addf(out, "\n");
	strbuf_release(&verdict);
}

void scale_format_table(const struct scale *s, const char *workload, size_t top,
			uint64_t min_samples, struct strbuf *out)
{
	size_t *rows = xcalloc(s->nr_fns + 1, sizeof(*rows)), shown = pick_rows(s, top, rows);
	size_t wname = strlen("(program)"), wfile = 4;

	for (size_t i = 0; i < shown; i++) {
		const struct scale_fn *f = &s->fns[rows[i]];
		size_t n = strlen(f->function), b = strlen(base_name(f->file));

		wname = n > wname ? n : wname;
		wfile = b > wfile ? b : wfile;
	}
	wname = wname > 40 ? 40 : wname;
	wfile = wfile > 24 ? 24 : wfile;
	strbuf_addf(out, "# '%s' at %zu sizes, %llu to %llu; cost: total (inclusive) CPU seconds\n",
	       workload, s->nr_sizes, (unsigned long long)s->sizes[0],
	       (unsigned long long)s->sizes[s->nr_sizes - 1]);
	strbuf_addf(out, "%-*s  %-*s  %-22s  %5s  %-20s", (int)wname, "function", (int)wfile, "file",
	       "exponent [95%]", "R^2", "verdict");
	for (size_t k = 0; k < s->nr_sizes; k++) {
		char head[32];

		snprintf(head, sizeof(head), "n=%llu", (unsigned long long)s->sizes[k]);
		strbuf_addf(out, "  %10s", head);
	}
	strbuf_addf(out, "\n");
	for (size_t i = 0; i < shown; i++) {
		const struct scale_fn *f = &s->fns[rows[i]];

		format_row(out, f->function, f->file, (int)wname, (int)wfile, &f->fit, f->cost, s->nr_sizes);
	}
	if (shown < s->nr_fns)
		strbuf_addf(out, "# %zu more functions: fewer than %llu samples at every size, or past --top\n",
		       s->nr_fns - shown, (unsigned long long)min_samples);
	format_row(out, "(program)", "", (int)wname, (int)wfile, &s->program, s->seconds, s->nr_sizes);
	free(rows);
}
