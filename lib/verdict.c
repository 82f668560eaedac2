/*
 * verdict.c: the gate's decision from measurements and rules (see
 * verdict.h), and its JSON form (docs/internals/verdict.md). Checks run in
 * a fixed order (correctness, primary, guards, memory, metrics); each adds
 * its reasons and marks the verdict failed (reject) or open (inconclusive).
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util.h"
#include "json.h"
#include "strbuf.h"
#include "stats.h"
#include "heap-stats.h"
#include "verdict.h"

struct decide {
	struct verdict *v;
	const struct gate_rules *r;
	double confidence;
	bool failed;		/* a check failed: reject */
	bool open;		/* the data cannot tell: inconclusive */
	size_t nr_fail, nr_open;	/* reasons so far: failures first, then open questions */
};

enum severity { NOTE, OPEN, FAIL };

ATTR_PRINTF(3, 4)
static void reason(struct decide *d, enum severity sev, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	struct verdict *v = d->v;
	size_t at;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	/* what decided reads first: failures, then open questions, then notes */
	at = sev == FAIL ? d->nr_fail : sev == OPEN ? d->nr_fail + d->nr_open : v->nr_reasons;
	ALLOC_GROW(v->reasons, v->nr_reasons + 1, v->alloc_reasons);
	memmove(v->reasons + at + 1, v->reasons + at, (v->nr_reasons - at) * sizeof(*v->reasons));
	v->reasons[at] = strbuf_detach(&sb, NULL);
	v->nr_reasons++;
	if (sev == FAIL) {
		d->failed = true;
		d->nr_fail++;
	} else if (sev == OPEN) {
		d->open = true;
		d->nr_open++;
	}
}

const char *const verdict_kind_names[VERDICT_NR] = {
	[VERDICT_NONE] = NULL,
	[VERDICT_KEEP] = "keep",
	[VERDICT_REJECT] = "reject",
	[VERDICT_INCONCLUSIVE] = "inconclusive",
	[VERDICT_ERROR] = "error",
	[VERDICT_NO_CANDIDATE] = "no-candidate",
};

const char *verdict_kind_name(enum verdict_kind k)
{
	if ((size_t)k >= VERDICT_NR)
		BUG("verdict %d out of range", (int)k);
	return verdict_kind_names[k] ? verdict_kind_names[k] : "";
}

int verdict_kind_parse(const char *s)
{
	return name_index(verdict_kind_names, VERDICT_NR, s);
}

/* Counts change by hundredths of a percent; times by tenths. */
static int pct_digits(const struct decide *d)
{
	return d->r->metric == GATE_METRIC_INSTRUCTIONS ? 3 : 1;
}

/* "improved 4.1%", "regressed 2.0%", "did not change" */
static void describe_change(struct strbuf *sb, const struct decide *d, double pct)
{
	int p = pct_digits(d);

	if (pct < 0)
		strbuf_addf(sb, "improved %.*f%%", p, -pct);
	else if (pct > 0)
		strbuf_addf(sb, "regressed %.*f%%", p, pct);
	else
		strbuf_addstr(sb, "did not change");
}

/* "workload 'x' regressed 4.1% (interval +2.9% to +5.3%, 24 pairs)" */
static char *describe_estimate(const struct decide *d, const char *role,
			       const struct verdict_estimate *e)
{
	struct strbuf sb = STRBUF_INIT;
	int p = pct_digits(d);

	strbuf_addf(&sb, "%s '%s' ", role, e->workload);
	describe_change(&sb, d, e->change_pct);
	if (e->exact)
		strbuf_addf(&sb, " (exact: identical repeats, %zu pairs)", e->pairs);
	else
		strbuf_addf(&sb, " (interval %+.*f%% to %+.*f%%, %zu pairs)", p, e->ci_low_pct,
			    p, e->ci_high_pct, e->pairs);
	return strbuf_detach(&sb, NULL);
}

static const char *side_name(bool cand)
{
	return cand ? "candidate" : "baseline";
}

static void describe_run(struct strbuf *sb, const struct vd_run *run)
{
	if (run->timed_out)
		strbuf_addstr(sb, "timed out");
	else if (WIFSIGNALED(run->wait_status))
		strbuf_addf(sb, "was killed by signal %d (%s)", WTERMSIG(run->wait_status),
			    strsignal(WTERMSIG(run->wait_status)));
	else if (WIFEXITED(run->wait_status) && WEXITSTATUS(run->wait_status))
		strbuf_addf(sb, "exited with status %d", WEXITSTATUS(run->wait_status));
	else if (!WIFEXITED(run->wait_status))
		strbuf_addf(sb, "ended with wait status 0x%x", (unsigned)run->wait_status);
	else
		strbuf_addstr(sb, "printed nothing");
}

static bool run_failed(const struct vd_run *run)
{
	return run->timed_out || !WIFEXITED(run->wait_status) || WEXITSTATUS(run->wait_status) ||
	       run->no_output;
}

static bool runs_ok(const struct vd_workload *w)
{
	for (size_t i = 0; i < w->nr_base_runs; i++)
		if (run_failed(&w->base_runs[i]))
			return false;
	for (size_t i = 0; i < w->nr_cand_runs; i++)
		if (run_failed(&w->cand_runs[i]))
			return false;
	return true;
}

/* One reason per workload and side: the first failed run and how many failed. */
static bool check_runs(struct decide *d, const struct vd_workload *w, bool cand)
{
	const struct vd_run *runs = cand ? w->cand_runs : w->base_runs;
	size_t nr = cand ? w->nr_cand_runs : w->nr_base_runs, failed = 0, first = 0;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < nr; i++)
		if (run_failed(&runs[i]) && !failed++)
			first = i;
	if (!failed)
		return true;
	describe_run(&sb, &runs[first]);
	reason(d, FAIL, "%s run %zu of workload '%s' %s (%zu of %zu runs failed)%s",
	       side_name(cand), first + 1, w->name, sb.buf, failed, nr,
	       cand ? "" : ": the baseline itself is broken");
	strbuf_release(&sb);
	return false;
}

static void check_correctness(struct decide *d, const struct vd_measurements *m)
{
	struct verdict *v = d->v;
	bool ok = true;

	v->correctness.test = m->test;
	if (m->test == VD_TEST_FAILED) {
		reason(d, FAIL, "tests failed: the test command failed on the candidate");
		ok = false;
	}
	for (size_t i = 0; i < m->nr_workloads; i++) {
		const struct vd_workload *w = &m->workloads[i];
		struct verdict_fingerprint *f;

		ok &= check_runs(d, w, false);
		ok &= check_runs(d, w, true);
		if (w->fingerprint == VD_FINGERPRINT_NONE)
			continue;
		v->correctness.fingerprints = xrealloc(v->correctness.fingerprints,
			(v->correctness.nr_fingerprints + 1) * sizeof(*f));
		f = &v->correctness.fingerprints[v->correctness.nr_fingerprints++];
		f->workload = xstrdup(w->name);
		f->match = w->fingerprint == VD_FINGERPRINT_MATCH;
		if (!f->match) {
			reason(d, FAIL, "workload '%s' printed a different fingerprint than the baseline: "
			       "the candidate computes something else", w->name);
			ok = false;
		}
	}
	v->correctness.ok = ok;
}

/*
 * The estimate of one workload; false (with a reason unless its runs
 * already failed) when there is nothing usable. *iv gets the interval.
 */
static bool estimate(struct decide *d, const struct vd_workload *w, bool runs_ok,
		     struct verdict_estimate *e, struct stats_interval *iv)
{
	double *lr = NULL;
	bool ok = false;
	int ret;

	e->workload = xstrdup(w->name);
	memset(iv, 0, sizeof(*iv));
	if (w->nr_pairs > STATS_MAX_PAIRS) {
		reason(d, OPEN, "workload '%s' has %zu measured pairs, more than the %d the "
		       "statistics take", w->name, w->nr_pairs, STATS_MAX_PAIRS);
		return false;
	}
	if (!w->nr_pairs) {
		if (runs_ok)
			reason(d, OPEN, "workload '%s' has 0 measured pairs: cannot compare", w->name);
		return false;
	}
	if (d->r->metric == GATE_METRIC_INSTRUCTIONS) {
		ret = stats_counts_interval(w->base, w->cand, w->nr_pairs, d->confidence, iv);
	} else {
		lr = xmalloc(w->nr_pairs * sizeof(*lr));
		ret = stats_log_ratios(w->base, w->cand, w->nr_pairs, lr);
		if (!ret)
			ret = stats_hl_interval(lr, w->nr_pairs, d->confidence, STATS_METHOD_AUTO, iv);
	}
	if (ret < 0) {
		size_t i = 0;
		while (i + 1 < w->nr_pairs && isfinite(w->base[i]) && isfinite(w->cand[i]) &&
		       w->base[i] > 0 && w->cand[i] > 0)
			i++;
		reason(d, OPEN, "workload '%s' pair %zu is unusable (baseline %g, candidate %g): "
		       "a %s must be a positive number", w->name, i + 1, w->base[i], w->cand[i],
		       d->r->metric == GATE_METRIC_INSTRUCTIONS ? "count" : "time");
		goto out_free;
	}
	e->valid = true;
	e->change_pct = stats_pct(iv->estimate);
	e->ci_low_pct = stats_pct(iv->low);
	e->ci_high_pct = stats_pct(iv->high);
	e->noise_pct = stats_pct(iv->noise);
	e->pairs = iv->n;
	e->exact = iv->point;
	ok = true;
	if (!iv->reached) {
		reason(d, OPEN, "workload '%s' has %zu pairs%s: too few for a %g%% interval",
		       w->name, w->nr_pairs,
		       d->r->metric == GATE_METRIC_INSTRUCTIONS ?
		       " whose counts differ between repeats" : "",
		       d->confidence * 100);
		ok = false;
	}
out_free:
	free(lr);
	return ok;
}

static void check_suspicious(struct decide *d, const char *role, const struct verdict_estimate *e,
			     const struct stats_interval *iv)
{
	double factor = exp(-iv->estimate);

	if (d->r->suspicious_speedup > 0 && factor > d->r->suspicious_speedup) {
		d->v->suspicious = true;
		reason(d, NOTE, "%s '%s' ran %.1fx faster than the baseline, over the %gx that "
		       "is suspicious: check that it still does the work", role, e->workload,
		       factor, d->r->suspicious_speedup);
	}
}

static void check_primary(struct decide *d, const struct vd_workload *w, bool runs_ok)
{
	struct verdict_estimate *e = &d->v->primary;
	double need = d->r->min_improvement * 100;
	struct stats_interval iv;
	char *what;

	if (!estimate(d, w, runs_ok, e, &iv))
		return;
	what = describe_estimate(d, "primary", e);
	switch (stats_judge_improvement(&iv, d->r->min_improvement)) {
	case STATS_IMPROVED:
		reason(d, NOTE, "%s, at least the %g%% required", what, need);
		break;
	case STATS_SHORT:
		reason(d, FAIL, "%s, %s the %g%% improvement required", what,
		       e->change_pct < 0 ? "less than" : "not", need);
		break;
	case STATS_OPEN:
		reason(d, OPEN, "%s: cannot tell whether it improved by %g%% with its interval "
		       "still below 0", what, need);
		break;
	}
	free(what);
	check_suspicious(d, "primary", e, &iv);
}

static void check_guard(struct decide *d, const struct vd_workload *w, bool runs_ok,
			struct verdict_estimate *e)
{
	const struct gate_rules *r = d->r;
	bool timed = r->metric != GATE_METRIC_INSTRUCTIONS;
	struct stats_interval iv;
	double base_median, slower_s;
	char *what;

	if (!estimate(d, w, runs_ok, e, &iv))
		return;
	check_suspicious(d, "guard", e, &iv);
	if (e->ci_low_pct <= r->guard_regression * 100)
		return;
	/* the interval's low end: the least regression the data allows */
	stats_median(w->base, w->nr_pairs, &base_median);
	slower_s = base_median * expm1(iv.low);
	if (timed && slower_s <= r->guard_floor_s)
		return;
	e->regressed = true;
	what = describe_estimate(d, "guard", e);
	if (timed)
		reason(d, FAIL, "%s, more than %g%% + %g ms", what, r->guard_regression * 100,
		       r->guard_floor_s * 1000);
	else
		reason(d, FAIL, "%s, more than %g%%", what, r->guard_regression * 100);
	free(what);
}

static void check_memory(struct decide *d, const struct vd_measurements *m)
{
	struct verdict *v = d->v;

	for (size_t i = 0; i < m->nr_workloads; i++) {
		const struct vd_workload *w = &m->workloads[i];
		for (size_t j = 0; j < w->nr_base_runs; j++)
			if (w->base_runs[j].peak_rss_kb > v->memory.base_peak_rss_kb)
				v->memory.base_peak_rss_kb = w->base_runs[j].peak_rss_kb;
		for (size_t j = 0; j < w->nr_cand_runs; j++)
			if (w->cand_runs[j].peak_rss_kb > v->memory.cand_peak_rss_kb)
				v->memory.cand_peak_rss_kb = w->cand_runs[j].peak_rss_kb;
	}
	for (size_t i = 0; i < m->nr_workloads; i++) {
		const struct vd_workload *w = &m->workloads[i];

		for (size_t j = 0; j < w->nr_metrics; j++) {
			const struct vd_metric_values *mv = &w->metrics[j];

			if (!mv->name || strcmp(mv->name, HEAP_METRIC_PEAK))
				continue;
			v->memory.heap_measured = true;
			for (size_t k = 0; k < mv->nr_base; k++)
				if (mv->base[k] > (double)v->memory.base_heap_peak)
					v->memory.base_heap_peak = (uint64_t)mv->base[k];
			for (size_t k = 0; k < mv->nr_cand; k++)
				if (mv->cand[k] > (double)v->memory.cand_heap_peak)
					v->memory.cand_heap_peak = (uint64_t)mv->cand[k];
		}
	}
	v->memory.budget_kb = d->r->ram_budget / 1024;
	v->memory.on = d->r->ram_on;
	v->memory.ok = true;
	if (!d->r->ram_budget)
		return;
	if (d->r->ram_on == GATE_RAM_HEAP) {
		if (!v->memory.heap_measured) {
			v->memory.ok = false;
			reason(d, OPEN, "the candidate's heap peak was not measured: cannot check the "
			       "ram budget of %" PRIu64 " kB on it", v->memory.budget_kb);
		} else if (v->memory.cand_heap_peak > d->r->ram_budget) {
			v->memory.ok = false;
			reason(d, FAIL, "the candidate's heap peak of %" PRIu64 " kB is over the ram "
			       "budget of %" PRIu64 " kB (baseline %" PRIu64 " kB)",
			       v->memory.cand_heap_peak / 1024, v->memory.budget_kb,
			       v->memory.base_heap_peak / 1024);
		}
		return;
	}
	if (!v->memory.cand_peak_rss_kb) {
		v->memory.ok = false;
		reason(d, OPEN, "the candidate's peak RSS was not measured: cannot check the "
		       "ram budget of %" PRIu64 " kB", v->memory.budget_kb);
	} else if (v->memory.cand_peak_rss_kb > v->memory.budget_kb) {
		v->memory.ok = false;
		reason(d, FAIL, "the candidate's peak RSS of %" PRIu64 " kB is over the ram budget "
		       "of %" PRIu64 " kB (baseline %" PRIu64 " kB)", v->memory.cand_peak_rss_kb,
		       v->memory.budget_kb, v->memory.base_peak_rss_kb);
	}
}

static void check_metric(struct decide *d, const struct metric_rule *rule,
			 const struct vd_workload *w, const struct vd_metric_values *mv)
{
	struct verdict *v = d->v;
	struct verdict_metric *out;
	double tol = rule->tolerance * 100, base, cand, slack;

	v->metrics = xrealloc(v->metrics, (v->nr_metrics + 1) * sizeof(*v->metrics));
	out = &v->metrics[v->nr_metrics++];
	memset(out, 0, sizeof(*out));
	out->name = xstrdup(rule->name);
	out->workload = xstrdup(w->name);
	out->tolerance_pct = tol;
	out->higher_is_better = rule->higher_is_better;
	out->change_pct = NAN;
	if (!mv->nr_cand) {
		reason(d, FAIL, "metric '%s' was not printed by the candidate of workload '%s'",
		       rule->name, w->name);
		return;
	}
	if (stats_median(mv->base, mv->nr_base, &base) < 0 ||
	    stats_median(mv->cand, mv->nr_cand, &cand) < 0) {
		reason(d, OPEN, "metric '%s' of workload '%s' has no usable %svalue",
		       rule->name, w->name, mv->nr_base ? "" : "baseline ");
		return;
	}
	out->base = base;
	out->cand = cand;
	if (base != 0)
		out->change_pct = (cand / base - 1) * 100;
	slack = rule->tolerance * fabs(base);
	out->ok = rule->higher_is_better ? cand >= base - slack : cand <= base + slack;
	if (out->ok)
		return;
	if (base != 0)
		reason(d, FAIL, "metric '%s' of workload '%s' %s %.1f%% (%g to %g), more than its "
		       "%g%% tolerance (%s is better)", rule->name, w->name,
		       cand < base ? "fell" : "rose", fabs(out->change_pct), base, cand, tol,
		       rule->higher_is_better ? "higher" : "lower");
	else
		reason(d, FAIL, "metric '%s' of workload '%s' went from 0 to %g (%s is better)",
		       rule->name, w->name, cand, rule->higher_is_better ? "higher" : "lower");
}

static void check_metrics(struct decide *d, const struct vd_measurements *m)
{
	for (size_t k = 0; k < d->r->nr_metrics; k++) {
		const struct metric_rule *rule = &d->r->metrics[k];
		bool seen = false;

		for (size_t i = 0; i < m->nr_workloads; i++) {
			const struct vd_workload *w = &m->workloads[i];
			for (size_t j = 0; j < w->nr_metrics; j++) {
				if (!w->metrics[j].name || strcmp(w->metrics[j].name, rule->name))
					continue;
				seen = true;
				check_metric(d, rule, w, &w->metrics[j]);
			}
		}
		if (!seen)
			reason(d, FAIL, "metric '%s' is declared but no workload printed it",
			       rule->name);
	}
}

int verdict_decide(const struct vd_measurements *m, const struct gate_rules *r, struct verdict *v)
{
	struct decide d = { .v = v, .r = r,
			    .confidence = m->confidence ? m->confidence : STATS_DEFAULT_CONFIDENCE };
	size_t primary = m->nr_workloads;

	*v = (struct verdict)VERDICT_INIT;
	v->metric = r->metric;
	if (!m->nr_workloads)
		return error("no workloads measured: nothing to decide");
	for (size_t i = 0; i < m->nr_workloads; i++) {
		if (!m->workloads[i].primary)
			continue;
		if (primary < m->nr_workloads)
			return error("workloads '%s' and '%s' are both primary",
				     m->workloads[primary].name, m->workloads[i].name);
		primary = i;
	}
	if (primary == m->nr_workloads)
		primary = 0;
	if (!(d.confidence > 0 && d.confidence < 1))
		return error("confidence %g is not between 0 and 1", d.confidence);
	if (!(r->min_improvement >= 0 && r->min_improvement < 1) ||
	    !(r->guard_regression >= 0) || !(r->guard_floor_s >= 0))
		return error("gate rules out of range: min-improvement %g, guard-regression %g, "
			     "guard-floor %g s", r->min_improvement, r->guard_regression,
			     r->guard_floor_s);

	check_correctness(&d, m);
	check_primary(&d, &m->workloads[primary], runs_ok(&m->workloads[primary]));
	v->guards = xcalloc(m->nr_workloads, sizeof(*v->guards));
	for (size_t i = 0; i < m->nr_workloads; i++)
		if (i != primary)
			check_guard(&d, &m->workloads[i], runs_ok(&m->workloads[i]),
				    &v->guards[v->nr_guards++]);
	check_memory(&d, m);
	check_metrics(&d, m);

	if (d.failed)
		v->kind = VERDICT_REJECT;
	else if (d.open)
		v->kind = VERDICT_INCONCLUSIVE;
	else
		v->kind = VERDICT_KEEP;
	return 0;
}

static void estimate_release(struct verdict_estimate *e)
{
	free(e->workload);
	e->workload = NULL;
}

void verdict_release(struct verdict *v)
{
	for (size_t i = 0; i < v->nr_reasons; i++)
		free(v->reasons[i]);
	free(v->reasons);
	estimate_release(&v->primary);
	for (size_t i = 0; i < v->nr_guards; i++)
		estimate_release(&v->guards[i]);
	free(v->guards);
	for (size_t i = 0; i < v->nr_metrics; i++) {
		free(v->metrics[i].name);
		free(v->metrics[i].workload);
	}
	free(v->metrics);
	for (size_t i = 0; i < v->correctness.nr_fingerprints; i++)
		free(v->correctness.fingerprints[i].workload);
	free(v->correctness.fingerprints);
	*v = (struct verdict)VERDICT_INIT;
}

/* jansson refuses NaN and infinities: they become null. */
static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

json_t *verdict_estimate_to_json(const struct verdict *v, const struct verdict_estimate *e, bool guard)
{
	json_t *o = json_object();

	json_object_set_new(o, "workload", json_text(e->workload));
	json_object_set_new(o, "metric", json_string(gate_metric_name(v->metric)));
	json_object_set_new(o, "change_pct", e->valid ? jnum(e->change_pct) : json_null());
	json_object_set_new(o, "ci_low_pct", e->valid ? jnum(e->ci_low_pct) : json_null());
	json_object_set_new(o, "ci_high_pct", e->valid ? jnum(e->ci_high_pct) : json_null());
	json_object_set_new(o, "pairs", json_integer((json_int_t)e->pairs));
	json_object_set_new(o, "noise_pct", e->valid ? jnum(e->noise_pct) : json_null());
	json_object_set_new(o, "exact", json_boolean(e->exact));
	if (guard)
		json_object_set_new(o, "regressed", json_boolean(e->regressed));
	return o;
}

static const char *test_name(enum vd_test t)
{
	switch (t) {
	case VD_TEST_PASSED: return "passed";
	case VD_TEST_FAILED: return "failed";
	case VD_TEST_NOT_RUN: return "not-run";
	}
	return "?";
}

struct json_t *verdict_to_json(const struct verdict *v)
{
	json_t *o = json_object(), *a, *x;

	json_object_set_new(o, "verdict", json_string(verdict_kind_name(v->kind)));
	a = json_array();
	for (size_t i = 0; i < v->nr_reasons; i++)
		json_array_append_new(a, json_text(v->reasons[i]));
	json_object_set_new(o, "reasons", a);
	json_object_set_new(o, "suspicious", json_boolean(v->suspicious));
	json_object_set_new(o, "primary", verdict_estimate_to_json(v, &v->primary, false));
	a = json_array();
	for (size_t i = 0; i < v->nr_guards; i++)
		json_array_append_new(a, verdict_estimate_to_json(v, &v->guards[i], true));
	json_object_set_new(o, "guards", a);

	x = json_object();
	json_object_set_new(x, "base_peak_rss_kb", json_integer((json_int_t)v->memory.base_peak_rss_kb));
	json_object_set_new(x, "cand_peak_rss_kb", json_integer((json_int_t)v->memory.cand_peak_rss_kb));
	json_object_set_new(x, "budget_kb", v->memory.budget_kb ?
			    json_integer((json_int_t)v->memory.budget_kb) : json_null());
	json_object_set_new(x, "budget_on", json_string(gate_ram_name(v->memory.on)));
	json_object_set_new(x, "base_heap_peak", v->memory.heap_measured ?
			    json_integer((json_int_t)v->memory.base_heap_peak) : json_null());
	json_object_set_new(x, "cand_heap_peak", v->memory.heap_measured ?
			    json_integer((json_int_t)v->memory.cand_heap_peak) : json_null());
	json_object_set_new(x, "ok", json_boolean(v->memory.ok));
	json_object_set_new(o, "memory", x);

	a = json_array();
	for (size_t i = 0; i < v->nr_metrics; i++) {
		const struct verdict_metric *mt = &v->metrics[i];
		x = json_object();
		json_object_set_new(x, "name", json_text(mt->name));
		json_object_set_new(x, "workload", json_text(mt->workload));
		json_object_set_new(x, "base", jnum(mt->base));
		json_object_set_new(x, "cand", jnum(mt->cand));
		json_object_set_new(x, "change_pct", jnum(mt->change_pct));
		json_object_set_new(x, "tolerance_pct", jnum(mt->tolerance_pct));
		json_object_set_new(x, "better", json_string(mt->higher_is_better ? "higher" : "lower"));
		json_object_set_new(x, "ok", json_boolean(mt->ok));
		json_array_append_new(a, x);
	}
	json_object_set_new(o, "metrics", a);

	x = json_object();
	json_object_set_new(x, "test", json_string(test_name(v->correctness.test)));
	a = json_array();
	for (size_t i = 0; i < v->correctness.nr_fingerprints; i++) {
		json_t *f = json_object();
		json_object_set_new(f, "workload", json_text(v->correctness.fingerprints[i].workload));
		json_object_set_new(f, "match", json_boolean(v->correctness.fingerprints[i].match));
		json_array_append_new(a, f);
	}
	json_object_set_new(x, "fingerprints", a);
	json_object_set_new(x, "ok", json_boolean(v->correctness.ok));
	json_object_set_new(o, "correctness", x);
	return o;
}
