/*
 * share-diff.c: per-function shares of two profiles and their change
 * (see share-diff.h). Each function's samples in a profile are taken as
 * binomial counts of that profile's samples; the change in share gets
 * Newcombe's interval, the ratio of shares Katz's log interval, both at a
 * level split over the functions tested (Bonferroni). Given the work each
 * profile covers, counts are Poisson instead, compared by rate.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json.h"
#include "profile.h"
#include "report.h"
#include "share-diff.h"
#include "stats.h"
#include "strbuf.h"
#include "util.h"

void share_wilson(double k, double n, double z, double *low, double *high)
{
	double p, z2 = z * z, centre, half;

	if (n <= 0) {
		*low = 0;
		*high = 1;
		return;
	}
	p = k / n;
	centre = (p + z2 / (2 * n)) / (1 + z2 / n);
	half = z / (1 + z2 / n) * sqrt(p * (1 - p) / n + z2 / (4 * n * n));
	*low = fmax(0, centre - half);
	*high = fmin(1, centre + half);
}

void share_newcombe(double k1, double n1, double k2, double n2, double z, double *low, double *high)
{
	double p1 = n1 > 0 ? k1 / n1 : 0, p2 = n2 > 0 ? k2 / n2 : 0, l1, u1, l2, u2, d = p2 - p1;

	share_wilson(k1, n1, z, &l1, &u1);
	share_wilson(k2, n2, z, &l2, &u2);
	*low = d - sqrt((p2 - l2) * (p2 - l2) + (u1 - p1) * (u1 - p1));
	*high = d + sqrt((u2 - p2) * (u2 - p2) + (p1 - l1) * (p1 - l1));
}

const char *share_class_name(enum share_class c)
{
	switch (c) {
	case SHARE_SAME:
		return "same";
	case SHARE_CHEAPER:
		return "cheaper";
	case SHARE_DEARER:
		return "dearer";
	case SHARE_UNTESTED:
		return "untested";
	}
	return "?";
}

/*
 * The sample type to count and how many samples one unit of it is: a
 * type counted in samples as it is; another (cpu in nanoseconds) through
 * the profile's period, when the period is in that unit; else an error.
 */
static int pick_counts(const struct profile *p, const char *name, const char *what, int *idx,
		       double *per_sample)
{
	const char *unit;

	if ((*idx = profile_pick_sample_type(p, name)) < 0)
		return -1;
	unit = profile_string(p, p->sample_type[*idx].unit);
	if (!strcmp(unit, "count")) {
		*per_sample = 1;
		return 0;
	}
	if (!name) {
		/* the default is not a count: a profile with both (Go's samples and cpu) has one */
		for (size_t i = 0; i < p->nr_sample_type; i++)
			if (!strcmp(profile_string(p, p->sample_type[i].unit), "count")) {
				*idx = (int)i;
				*per_sample = 1;
				return 0;
			}
	}
	if (p->period > 0 && !strcmp(profile_string(p, p->period_type.unit), unit)) {
		*per_sample = (double)p->period;
		return 0;
	}
	return error("%s: its values of '%s' are in %s, and no period says how many samples that is: "
		     "give a sample type counted in samples (--sample-type)", what,
		     profile_string(p, p->sample_type[*idx].type), unit);
}

static int cmp_row_name(const void *a, const void *b)
{
	return strcmp((*(const struct report_row *const *)a)->name,
		      (*(const struct report_row *const *)b)->name);
}

/* The report's rows sorted by name, merging rows of one name (the same function in two DSOs). */
static const struct report_row **by_name(const struct report *r)
{
	const struct report_row **v = xmalloc((r->nr + 1) * sizeof(*v));

	for (size_t i = 0; i < r->nr; i++)
		v[i] = &r->rows[i];
	qsort(v, r->nr, sizeof(*v), cmp_row_name);
	return v;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct share_row *x = a, *y = b;
	static const int order[] = { [SHARE_DEARER] = 0, [SHARE_CHEAPER] = 1, [SHARE_SAME] = 2,
				     [SHARE_UNTESTED] = 3 };
	double kx, ky;

	if (x->cls != y->cls)
		return order[x->cls] - order[y->cls];
	if (x->cls == SHARE_UNTESTED) {
		kx = fmax(x->base_share, x->cand_share);
		ky = fmax(y->base_share, y->cand_share);
	} else {
		kx = fabs(x->delta);
		ky = fabs(y->delta);
	}
	if (kx != ky)
		return kx < ky ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void add_row(struct share_diff *d, size_t *alloc, const char *name, const struct report_row *b,
		    const struct report_row *c, bool by_total, double bper, double cper)
{
	struct share_row *row;

	ALLOC_GROW(d->rows, d->nr + 1, *alloc);
	row = &d->rows[d->nr++];
	memset(row, 0, sizeof(*row));
	row->name = name;
	if (b)
		row->base_count = (double)(by_total ? b->total : b->self) / bper;
	if (c)
		row->cand_count = (double)(by_total ? c->total : c->self) / cper;
}

/* Rows of the same name in a sorted run: their counts summed into the last row added. */
static void merge_same_names(const struct report_row **v, size_t n, size_t *i, struct report_row *sum)
{
	*sum = *v[*i];
	while (*i + 1 < n && !strcmp(v[*i + 1]->name, sum->name)) {
		(*i)++;
		sum->self += v[*i]->self;
		sum->total += v[*i]->total;
	}
}

/* The change of a function's share: Newcombe's interval, Katz's for the ratio. */
static void share_change(struct share_row *r, double nb, double nc, double z)
{
	r->delta = r->cand_share - r->base_share;
	share_newcombe(r->base_count, nb, r->cand_count, nc, z, &r->low, &r->high);
	if (r->base_count > 0 && r->cand_count > 0) {
		double lr = log(r->cand_share / r->base_share);
		double se = sqrt(1 / r->cand_count - 1 / nc + 1 / r->base_count - 1 / nb);

		r->rel = exp(lr) - 1;
		r->rel_low = exp(lr - z * se) - 1;
		r->rel_high = exp(lr + z * se) - 1;
	}
}

/* The change of its samples per unit of work, counts as Poisson: normal for the difference, log for the ratio. */
static void rate_change(struct share_row *r, double wb, double wc, double z)
{
	double se = sqrt(r->base_count / (wb * wb) + r->cand_count / (wc * wc));

	r->base_rate = r->base_count / wb;
	r->cand_rate = r->cand_count / wc;
	r->delta = r->cand_rate - r->base_rate;
	r->low = r->delta - z * se;
	r->high = r->delta + z * se;
	if (r->base_count > 0 && r->cand_count > 0) {
		double lr = log(r->cand_rate / r->base_rate), sl = sqrt(1 / r->base_count + 1 / r->cand_count);

		r->rel = exp(lr) - 1;
		r->rel_low = exp(lr - z * sl) - 1;
		r->rel_high = exp(lr + z * sl) - 1;
	}
}

int share_diff_build(const struct share_diff_spec *spec, struct share_diff *out)
{
	double conf = spec->confidence ? spec->confidence : 0.95;
	double min_share = spec->min_share ? spec->min_share : 0.005;
	double tol = spec->tolerance ? spec->tolerance : 0.05, bper, cper, z;
	struct report rb = REPORT_INIT, rc = REPORT_INIT;
	const struct report_row **vb = NULL, **vc = NULL;
	size_t alloc = 0, i = 0, j = 0;
	int bi, ci, ret = -1;

	memset(out, 0, sizeof(*out));
	if (!(conf > 0 && conf < 1))
		return error("the confidence must be between 0 and 1, not %g", conf);
	if (!(min_share >= 0 && min_share < 1))
		return error("the smallest share tested must be between 0 and 1, not %g", min_share);
	if ((spec->base_work || spec->cand_work) && !(spec->base_work > 0 && spec->cand_work > 0))
		return error("the work of both profiles must be given, each more than 0 (%g, %g)",
			     spec->base_work, spec->cand_work);
	if (pick_counts(spec->base, spec->sample_type, "the base profile", &bi, &bper) ||
	    pick_counts(spec->cand, spec->sample_type, "the candidate profile", &ci, &cper))
		return -1;
	if (strcmp(profile_string(spec->base, spec->base->sample_type[bi].type),
		   profile_string(spec->cand, spec->cand->sample_type[ci].type)))
		return error("the profiles count different things: '%s' in the base, '%s' in the candidate "
			     "(--sample-type)", profile_string(spec->base, spec->base->sample_type[bi].type),
			     profile_string(spec->cand, spec->cand->sample_type[ci].type));
	if (report_build(&rb, spec->base, bi, REPORT_BY_FUNCTION) ||
	    report_build(&rc, spec->cand, ci, REPORT_BY_FUNCTION))
		goto out;
	out->base_samples = (double)rb.total / bper;
	out->cand_samples = (double)rc.total / cper;
	out->min_share = min_share;
	out->per_work = spec->base_work > 0;
	out->base_work = spec->base_work;
	out->cand_work = spec->cand_work;
	if (out->base_samples <= 0 || out->cand_samples <= 0) {
		error("the %s profile has no samples", out->base_samples <= 0 ? "base" : "candidate");
		goto out;
	}
	vb = by_name(&rb);
	vc = by_name(&rc);
	while (i < rb.nr || j < rc.nr) {
		int c = i >= rb.nr ? 1 : j >= rc.nr ? -1 : strcmp(vb[i]->name, vc[j]->name);
		struct report_row sb, sc;

		if (c <= 0)
			merge_same_names(vb, rb.nr, &i, &sb);
		if (c >= 0)
			merge_same_names(vc, rc.nr, &j, &sc);
		add_row(out, &alloc, c <= 0 ? vb[i]->name : vc[j]->name, c <= 0 ? &sb : NULL,
			c >= 0 ? &sc : NULL, spec->by_total, bper, cper);
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	for (size_t k = 0; k < out->nr; k++) {
		struct share_row *r = &out->rows[k];

		r->base_share = r->base_count / out->base_samples;
		r->cand_share = r->cand_count / out->cand_samples;
		if (fmax(r->base_share, r->cand_share) >= min_share)
			out->tested++;
	}
	out->confidence_each = out->tested ? 1 - (1 - conf) / (double)out->tested : conf;
	z = stats_normal_quantile(1 - (1 - out->confidence_each) / 2);
	for (size_t k = 0; k < out->nr; k++) {
		struct share_row *r = &out->rows[k];

		r->rel = r->rel_low = r->rel_high = r->base_rate = r->cand_rate = NAN;
		if (fmax(r->base_share, r->cand_share) < min_share) {
			r->cls = SHARE_UNTESTED;
			r->delta = r->cand_share - r->base_share;
			continue;
		}
		if (out->per_work)
			rate_change(r, spec->base_work, spec->cand_work, z);
		else
			share_change(r, out->base_samples, out->cand_samples, z);
		if (r->low > 0 && (tol < 0 || isnan(r->rel) || r->rel > tol))
			r->cls = SHARE_DEARER;
		else if (r->high < 0 && (tol < 0 || isnan(r->rel) || r->rel < -tol))
			r->cls = SHARE_CHEAPER;
		else
			r->cls = SHARE_SAME;
		out->dearer += r->cls == SHARE_DEARER;
		out->cheaper += r->cls == SHARE_CHEAPER;
	}
	qsort(out->rows, out->nr, sizeof(*out->rows), cmp_rows);
	ret = 0;
out:
	free(vb);
	free(vc);
	/* the rows' names are the profiles' strings, not the reports' */
	report_release(&rb);
	report_release(&rc);
	if (ret)
		share_diff_release(out);
	return ret;
}

void share_diff_release(struct share_diff *d)
{
	free(d->rows);
	memset(d, 0, sizeof(*d));
}

static void format_row(const struct share_row *r, bool per_work, struct strbuf *out)
{
	if (per_work)
		strbuf_addf(out, "  %+9.4g [%+.4g, %+.4g]  %9.4g -> %-9.4g", r->delta, r->low, r->high,
			    r->base_rate, r->cand_rate);
	else
		strbuf_addf(out, "  %+6.2f pts [%+.2f, %+.2f]  %5.2f%% -> %5.2f%%", r->delta * 100,
			    r->low * 100, r->high * 100, r->base_share * 100, r->cand_share * 100);
	if (isnan(r->rel))
		strbuf_addf(out, "  %-22s", r->base_count > 0 ? "(gone)" : "(new)");
	else
		strbuf_addf(out, "  %+5.0f%% [%+.0f%%, %+.0f%%]%*s", r->rel * 100, r->rel_low * 100,
			    r->rel_high * 100, 3, "");
	strbuf_addf(out, "  %s\n", r->name);
}

void share_diff_format_text(const struct share_diff *d, size_t top, struct strbuf *out)
{
	size_t same = 0, shown;
	double largest = 0;

	if (d->per_work)
		strbuf_addf(out, "per unit of work: base %.4g samples, candidate %.4g\n", d->base_samples / d->base_work,
			    d->cand_samples / d->cand_work);
	strbuf_addf(out, "base %.0f samples, candidate %.0f; %zu functions tested (at least %.1f%% of "
		    "either), each interval at %.2f%%\n", d->base_samples, d->cand_samples, d->tested,
		    d->min_share * 100, d->confidence_each * 100);
	for (int pass = 0; pass < 2; pass++) {
		enum share_class want = pass ? SHARE_CHEAPER : SHARE_DEARER;
		size_t n = pass ? d->cheaper : d->dearer;

		if (!n)
			continue;
		strbuf_addf(out, "\n%s (%zu): %s change [interval], base -> candidate, relative\n",
			    pass ? "cheaper" : "dearer", n, d->per_work ? "samples per unit of work:" : "share");
		shown = 0;
		for (size_t i = 0; i < d->nr; i++)
			if (d->rows[i].cls == want && (!top || shown++ < top))
				format_row(&d->rows[i], d->per_work, out);
		if (top && n > top)
			strbuf_addf(out, "  ... %zu more\n", n - top);
	}
	for (size_t i = 0; i < d->nr; i++)
		if (d->rows[i].cls == SHARE_SAME) {
			same++;
			if (fabs(d->rows[i].delta) > fabs(largest))
				largest = d->rows[i].delta;
		}
	if (!d->cheaper && !d->dearer)
		strbuf_addf(out, "\nno function's %s changed beyond what the counts and the tolerance allow\n",
			    d->per_work ? "samples per unit of work" : "share");
	if (same && d->per_work)
		strbuf_addf(out, "\nthe same: %zu function%s (the largest change %+.4g samples per unit)\n",
			    same, same == 1 ? "" : "s", largest);
	else if (same)
		strbuf_addf(out, "\nthe same: %zu function%s (the largest change %+.2f pts)\n", same,
			    same == 1 ? "" : "s", largest * 100);
}

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

json_t *share_diff_to_json(const struct share_diff *d)
{
	json_t *doc = json_object(), *rows = json_array();

	json_object_set_new(doc, "base_samples", json_real(d->base_samples));
	json_object_set_new(doc, "cand_samples", json_real(d->cand_samples));
	json_object_set_new(doc, "per_work", json_boolean(d->per_work));
	json_object_set_new(doc, "base_work", d->per_work ? json_real(d->base_work) : json_null());
	json_object_set_new(doc, "cand_work", d->per_work ? json_real(d->cand_work) : json_null());
	json_object_set_new(doc, "tested", json_integer((json_int_t)d->tested));
	json_object_set_new(doc, "confidence_each", json_real(d->confidence_each));
	json_object_set_new(doc, "dearer", json_integer((json_int_t)d->dearer));
	json_object_set_new(doc, "cheaper", json_integer((json_int_t)d->cheaper));
	for (size_t i = 0; i < d->nr; i++) {
		const struct share_row *r = &d->rows[i];
		json_t *o = json_object();

		json_object_set_new(o, "function", json_text(r->name));
		json_object_set_new(o, "class", json_text(share_class_name(r->cls)));
		json_object_set_new(o, "base_samples", json_real(r->base_count));
		json_object_set_new(o, "cand_samples", json_real(r->cand_count));
		json_object_set_new(o, "base_share", json_real(r->base_share));
		json_object_set_new(o, "cand_share", json_real(r->cand_share));
		json_object_set_new(o, "base_rate", num(r->base_rate));
		json_object_set_new(o, "cand_rate", num(r->cand_rate));
		json_object_set_new(o, "change", json_real(r->delta));
		json_object_set_new(o, "change_low", r->cls == SHARE_UNTESTED ? json_null() : num(r->low));
		json_object_set_new(o, "change_high", r->cls == SHARE_UNTESTED ? json_null() : num(r->high));
		json_object_set_new(o, "relative", num(r->rel));
		json_object_set_new(o, "relative_low", num(r->rel_low));
		json_object_set_new(o, "relative_high", num(r->rel_high));
		json_array_append_new(rows, o);
	}
	json_object_set_new(doc, "functions", rows);
	return doc;
}
