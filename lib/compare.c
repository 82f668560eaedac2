/*
 * compare.c: measure a baseline against a candidate in alternating pairs
 * on the sequential schedule, keep how every run ended and what it
 * printed, and hand the verdict its measurements (see compare.h and
 * docs/compare.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"
#include "json.h"
#include "scenario.h"
#include "util.h"

void compare_init(struct compare *c, const struct compare_opts *opts,
		  const struct compare_workload_spec *w, size_t nr)
{
	memset(c, 0, sizeof(*c));
	c->opts = opts;
	c->results = xcalloc(nr ? nr : 1, sizeof(*c->results));
	c->nr_results = nr;
	c->decision = STATS_NEED_MORE;
	c->machine_quiet = true;
	c->checked = true;
	for (size_t i = 0; i < nr; i++) {
		c->results[i].spec = &w[i];
		if (w[i].primary)
			c->primary = i;
	}
}

static void side_release(struct compare_side *s)
{
	for (size_t i = 0; i < s->nr_runs; i++) {
		for (size_t k = 0; k < s->runs[i].nr_metrics; k++)
			free(s->runs[i].metrics[k].name);
		free(s->runs[i].metrics);
	}
	free(s->runs);
	free(s->vd);
}

static void free_metric_values(struct compare_result *r)
{
	for (size_t k = 0; k < r->nr_metrics; k++) {
		free((double *)r->metrics[k].base);
		free((double *)r->metrics[k].cand);
	}
	free(r->metrics);
	r->metrics = NULL;
	r->nr_metrics = r->alloc_metrics = 0;
}

void compare_release(struct compare *c)
{
	for (size_t i = 0; i < c->nr_results; i++) {
		struct compare_result *r = &c->results[i];

		side_release(&r->base);
		side_release(&r->cand);
		free(r->base_values);
		free(r->cand_values);
		for (size_t k = 0; k < r->nr_ref_fingerprints; k++)
			free(r->ref_fingerprints[k]);
		free(r->ref_fingerprints);
		free_metric_values(r);
	}
	free(c->results);
	free(c->vd_workloads);
	memset(c, 0, sizeof(*c));
}

static uint64_t next_random(uint64_t *state)
{
	/* xorshift64*: a coin flip per pair needs nothing stronger */
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 2685821657736338717ull;
}

bool compare_base_first(enum compare_order order, size_t k, uint64_t *rng)
{
	if (order == COMPARE_ORDER_RANDOM)
		return next_random(rng) >> 63;
	return k % 2 == 0;
}

int compare_default_looks(size_t pairs, struct stats_schedule *s)
{
	static const size_t defaults[] = { 12, 24, 36 };

	memset(s, 0, sizeof(*s));
	s->confidence = STATS_DEFAULT_CONFIDENCE;
	if (pairs > STATS_MAX_PAIRS)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(defaults); i++)
		if (!pairs || defaults[i] < pairs)
			s->looks[s->nr_looks++] = defaults[i];
	if (pairs)
		s->looks[s->nr_looks++] = pairs;
	return 0;
}

int compare_schedule(size_t pairs, bool have_looks, struct stats_schedule *s)
{
	size_t last;

	if (!have_looks)
		return compare_default_looks(pairs, s) ?
		       error("--pairs %zu is over %d", pairs, STATS_MAX_PAIRS) : 0;
	last = s->looks[s->nr_looks - 1];
	if (pairs && last > pairs)
		return error("the last look (%zu) is beyond --pairs %zu", last, pairs);
	if (pairs && last < pairs) {
		if (s->nr_looks == STATS_MAX_LOOKS)
			return error("too many looks: at most %d with --pairs", STATS_MAX_LOOKS);
		s->looks[s->nr_looks++] = pairs;
	}
	return 0;
}

static bool run_failed(const struct run_result *r)
{
	return r->exit_status || r->signal || r->timed_out || r->interrupted;
}

static void set_reference(struct compare_result *w, const struct run_result *r)
{
	w->have_reference = true;
	w->ref_hash = r->stdout_hash;
	w->nr_ref_fingerprints = r->nr_fingerprints;
	w->ref_fingerprints = xcalloc(r->nr_fingerprints ? r->nr_fingerprints : 1,
				      sizeof(*w->ref_fingerprints));
	for (size_t i = 0; i < r->nr_fingerprints; i++)
		w->ref_fingerprints[i] = xstrdup(r->fingerprints[i]);
	w->fingerprint = r->stdout_bytes ? VD_FINGERPRINT_MATCH : VD_FINGERPRINT_NONE;
}

/*
 * Does r print what the reference printed? The FINGERPRINT= values when
 * the reference printed any, else the whole of stdout.
 */
static bool matches_reference(const struct compare_result *w, const struct run_result *r)
{
	if (!w->nr_ref_fingerprints)
		return r->stdout_hash == w->ref_hash;
	if (r->nr_fingerprints != w->nr_ref_fingerprints)
		return false;
	for (size_t i = 0; i < r->nr_fingerprints; i++)
		if (strcmp(r->fingerprints[i], w->ref_fingerprints[i]))
			return false;
	return true;
}

/* Keep what matters of one finished run. */
static struct compare_run *keep_run(struct compare *c, struct compare_result *w, bool cand,
				    const struct run_result *r, bool warmup)
{
	struct compare_side *s = cand ? &w->cand : &w->base;
	struct compare_run *k;

	ALLOC_GROW(s->runs, s->nr_runs + 1, s->alloc_runs);
	k = &s->runs[s->nr_runs++];
	memset(k, 0, sizeof(*k));
	k->vd.wait_status = r->signal ? r->signal & 0x7f : (r->exit_status & 0xff) << 8;
	k->vd.timed_out = r->timed_out;
	k->vd.peak_rss_kb = r->max_rss_kib > 0 ? (uint64_t)r->max_rss_kib : 0;
	k->value = run_result_metric(r, c->opts->metric);
	k->warmup = warmup;
	k->pair = -1;
	k->wall_s = (double)r->wall_ns / 1e9;
	k->user_s = (double)r->user_ns / 1e9;
	k->sys_s = (double)r->sys_ns / 1e9;
	k->instructions = r->instructions;
	k->exit_status = r->exit_status;
	k->signal = r->signal;
	if (r->nr_metrics) {
		k->metrics = xcalloc(r->nr_metrics, sizeof(*k->metrics));
		for (size_t i = 0; i < r->nr_metrics; i++) {
			k->metrics[i].name = xstrdup(r->metrics[i].name);
			k->metrics[i].value = r->metrics[i].value;
		}
		k->nr_metrics = r->nr_metrics;
	}
	if (!c->opts->fingerprint || run_failed(r))
		return k;
	if (!w->have_reference && !cand) {
		set_reference(w, r);
		return k;
	}
	if (!w->have_reference)
		return k;
	/* empty output where the baseline printed something */
	if (!r->stdout_bytes && w->fingerprint != VD_FINGERPRINT_NONE)
		k->vd.no_output = true;
	if (cand && !matches_reference(w, r))
		w->fingerprint = VD_FINGERPRINT_MISMATCH;
	return k;
}

struct plan {
	size_t done, total;
};

static int run_one(struct compare *c, struct runner *const rn[2], struct plan *p,
		   struct compare_result *w, bool cand, bool warmup, struct compare_run **out)
{
	const struct compare_opts *o = c->opts;
	struct run_spec spec = { 0 };
	struct run_result r;
	int ret = 0;

	*out = NULL;
	if (c->interrupted || hl_cancelled()) {
		c->interrupted = true;
		return 0;
	}
	spec.command = cand ? w->spec->cand_cmd : w->spec->base_cmd;
	spec.env = o->env;
	spec.cpus = o->cpus;
	spec.nr_cpus = o->nr_cpus;
	spec.dir = cand ? w->spec->cand_dir : w->spec->base_dir;
	spec.timeout = w->spec->timeout > 0 ? w->spec->timeout : o->timeout;
	spec.instructions = o->metric == GATE_METRIC_INSTRUCTIONS && !warmup;
	spec.heap = o->heap;
	emit_progress(o->obs, "compare", p->done, p->total, "run %zu/%zu: %s %s%s", p->done + 1,
		      p->total, w->spec->name, cand ? "candidate" : "baseline", warmup ? " (check)" : "");
	run_result_init(&r);
	if (w->spec->scenario) {
		struct compare_side *side = cand ? &w->cand : &w->base;
		char *dir = xstrfmt("%s/%s-%zu", w->spec->scenario_out, cand ? "cand" : "base", side->nr_runs + 1);
		struct scenario_spec ss = {
			.conf = w->spec->scenario, .dir = spec.dir, .out_dir = dir,
			.label = cand ? "candidate" : "baseline", .sandbox = rn[cand]->sandbox,
			.heap = spec.heap,
		};

		ret = scenario_measure(&ss, &r);
		free(dir);
		if (ret)
			goto out;
	} else if (runner_run(rn[cand], &spec, &r)) {
		ret = -1;
		goto out;
	}
	p->done++;
	/* an interrupted run measured nothing: it is dropped */
	if (r.interrupted || hl_cancelled()) {
		c->interrupted = true;
		goto out;
	}
	*out = keep_run(c, w, cand, &r, warmup);
out:
	run_result_release(&r);
	return ret;
}

static bool run_bad(const struct compare_run *k)
{
	const struct vd_run *v = &k->vd;

	return v->timed_out || v->wait_status != 0 || v->no_output;
}

/* The check runs: each command once; 1 when one did not exit 0. */
static int check_runs(struct compare *c, struct runner *const rn[2], struct plan *p)
{
	for (size_t i = 0; i < c->nr_results; i++) {
		struct compare_result *w = &c->results[i];

		if (w->spec->scenario)
			continue;	/* its first pair checks */
		for (int cand = 0; cand < 2; cand++) {
			struct compare_run *k;

			if (run_one(c, rn, p, w, cand, true, &k))
				return -1;
			if (!k)
				return 0;
			if (k->vd.wait_status == 127 << 8) {
				/* the shell's "not found" */
				error("'%s': command not found (the shell exited with 127)",
				      cand ? w->spec->cand_cmd : w->spec->base_cmd);
				return HL_EXIT_NOT_FOUND;
			}
			if (run_bad(k))
				c->checked = false;
		}
	}
	return 0;
}

static int warm_up(struct compare *c, struct runner *const rn[2], struct plan *p)
{
	for (long n = 0; n < c->opts->warmup; n++) {
		for (size_t i = 0; i < c->nr_results; i++) {
			if (c->results[i].spec->scenario)
				continue;
			for (int cand = 0; cand < 2; cand++) {
				struct compare_run *k;

				if (run_one(c, rn, p, &c->results[i], cand, true, &k))
					return -1;
				if (!k)
					return 0;
				if (run_bad(k)) {
					c->failed_run = true;
					return 0;
				}
			}
		}
	}
	return 0;
}

static void add_pair(struct compare_result *w, double base, double cand)
{
	if (w->nr_pairs + 1 > w->alloc_pairs) {
		w->alloc_pairs = (w->alloc_pairs + 16) * 3 / 2;
		w->base_values = xrealloc(w->base_values, w->alloc_pairs * sizeof(double));
		w->cand_values = xrealloc(w->cand_values, w->alloc_pairs * sizeof(double));
	}
	w->base_values[w->nr_pairs] = base;
	w->cand_values[w->nr_pairs] = cand;
	w->nr_pairs++;
}

/* Pair k over every workload. 0, or -1 when a run could not be started. */
static int one_pair(struct compare *c, struct runner *const rn[2], struct plan *p, size_t k, uint64_t *rng)
{
	for (size_t i = 0; i < c->nr_results; i++) {
		struct compare_result *w = &c->results[i];
		bool base_first = compare_base_first(c->opts->order, k, rng);
		struct compare_run *a, *b;

		if (run_one(c, rn, p, w, !base_first, false, &a))
			return -1;
		if (!a)
			return 0;
		if (run_bad(a)) {
			c->failed_run = true;
			return 0;
		}
		if (run_one(c, rn, p, w, base_first, false, &b))
			return -1;
		if (!b)
			return 0;
		if (run_bad(b)) {
			c->failed_run = true;
			return 0;
		}
		a->pair = b->pair = (long)w->nr_pairs;
		b->position = 1;
		if (base_first)
			add_pair(w, a->value, b->value);
		else
			add_pair(w, b->value, a->value);
		if (c->opts->obs) {
			const struct stats_schedule *s = &c->opts->schedule;
			struct event ev = {
				.kind = EV_PAIR, .source = "compare", .workload = w->spec->name,
				.done = w->nr_pairs, .total = s->nr_looks ? s->looks[s->nr_looks - 1] : 2,
				.base = w->base_values[w->nr_pairs - 1],
				.cand = w->cand_values[w->nr_pairs - 1],
			};

			emit(c->opts->obs, &ev);
		}
	}
	return 0;
}

static int quiesce(struct compare *c)
{
	struct quiesce_state s;

	if (quiesce_wait(&c->opts->quiesce, &s))
		return -1;
	c->machine = s;
	if (!s.quiet) {
		c->machine_quiet = false;
		snprintf(c->noisy, sizeof(c->noisy), "%s", s.reason);
	}
	return 0;
}

static bool stopped(const struct compare *c)
{
	return c->interrupted || c->failed_run;
}

static int run_pairs(struct compare *c, struct runner *const rn[2], struct plan *p)
{
	const struct stats_schedule *s = &c->opts->schedule;
	struct compare_result *pw = &c->results[c->primary];
	uint64_t rng = c->opts->seed;
	double *d = NULL;
	int ret = 0;

	c->confidence = stats_schedule_look_confidence(s);
	for (size_t look = 0; look < s->nr_looks && !stopped(c); look++) {
		struct stats_interval iv;

		if (quiesce(c)) {
			ret = -1;
			break;
		}
		while (pw->nr_pairs < s->looks[look] && !stopped(c)) {
			if (one_pair(c, rn, p, pw->nr_pairs, &rng)) {
				ret = -1;
				goto out;
			}
		}
		if (stopped(c))
			break;
		c->looks_taken = look + 1;
		free(d);
		d = xcalloc(pw->nr_pairs ? pw->nr_pairs : 1, sizeof(*d));
		if (stats_log_ratios(pw->base_values, pw->cand_values, pw->nr_pairs, d) ||
		    stats_sequential_decide(s, d, pw->nr_pairs, c->opts->min_improvement,
					    &c->decision, &iv)) {
			/* unusable numbers: the verdict says why */
			c->decision = STATS_INCONCLUSIVE;
			break;
		}
		if (c->decision != STATS_NEED_MORE)
			break;
	}
out:
	free(d);
	return ret;
}

/* Instructions: one run per side plus a confirming repeat. */
static int run_counts(struct compare *c, struct runner *const rn[2], struct plan *p)
{
	uint64_t rng = c->opts->seed;

	c->confidence = STATS_DEFAULT_CONFIDENCE;
	if (quiesce(c))
		return -1;
	for (size_t k = 0; k < 2 && !stopped(c); k++)
		if (one_pair(c, rn, p, k, &rng))
			return -1;
	c->looks_taken = 1;
	return 0;
}

int compare_run(struct compare *c, struct runner *base, struct runner *cand)
{
	struct runner *const rn[2] = { base, cand ? cand : base };
	const struct compare_opts *o = c->opts;
	size_t per_pair = 2 * c->nr_results;
	struct plan p = { 0, 0 };
	int ret;

	if (!c->nr_results)
		return error("nothing to compare: no workloads");
	if (o->metric == GATE_METRIC_INSTRUCTIONS)
		p.total = per_pair * 3;
	else
		p.total = per_pair * (1 + (size_t)o->warmup +
				      o->schedule.looks[o->schedule.nr_looks - 1]);
	if ((ret = check_runs(c, rn, &p)))
		return ret;
	if (!c->checked || stopped(c))
		return 0;
	if (o->metric == GATE_METRIC_INSTRUCTIONS)
		return run_counts(c, rn, &p);
	if (warm_up(c, rn, &p))
		return -1;
	if (stopped(c))
		return 0;
	return run_pairs(c, rn, &p);
}

/* Gather each metric name's values per side for the verdict. */
static void gather_metrics(struct compare_result *w)
{
	free_metric_values(w);
	for (int cand = 0; cand < 2; cand++) {
		const struct compare_side *s = cand ? &w->cand : &w->base;

		for (size_t i = 0; i < s->nr_runs; i++) {
			const struct compare_run *k = &s->runs[i];

			for (size_t m = 0; m < k->nr_metrics; m++) {
				struct vd_metric_values *mv = NULL;
				double **vals;
				size_t *nr;

				for (size_t j = 0; j < w->nr_metrics; j++)
					if (!strcmp(w->metrics[j].name, k->metrics[m].name))
						mv = &w->metrics[j];
				if (!mv) {
					ALLOC_GROW(w->metrics, w->nr_metrics + 1, w->alloc_metrics);
					mv = &w->metrics[w->nr_metrics++];
					memset(mv, 0, sizeof(*mv));
					mv->name = k->metrics[m].name;
				}
				vals = (double **)(cand ? &mv->cand : &mv->base);
				nr = cand ? &mv->nr_cand : &mv->nr_base;
				*vals = xrealloc(*vals, (*nr + 1) * sizeof(double));
				(*vals)[(*nr)++] = k->metrics[m].value;
			}
		}
	}
}

static struct vd_run *side_vd(struct compare_side *s)
{
	free(s->vd);
	s->vd = xcalloc(s->nr_runs ? s->nr_runs : 1, sizeof(*s->vd));
	for (size_t i = 0; i < s->nr_runs; i++)
		s->vd[i] = s->runs[i].vd;
	return s->vd;
}

void compare_measurements(struct compare *c, struct vd_measurements *m)
{
	free(c->vd_workloads);
	c->vd_workloads = xcalloc(c->nr_results ? c->nr_results : 1, sizeof(*c->vd_workloads));
	for (size_t i = 0; i < c->nr_results; i++) {
		struct compare_result *w = &c->results[i];
		struct vd_workload *v = &c->vd_workloads[i];

		gather_metrics(w);
		v->name = w->spec->name;
		v->primary = i == c->primary;
		v->base = w->base_values;
		v->cand = w->cand_values;
		v->nr_pairs = w->nr_pairs;
		v->base_runs = side_vd(&w->base);
		v->nr_base_runs = w->base.nr_runs;
		v->cand_runs = side_vd(&w->cand);
		v->nr_cand_runs = w->cand.nr_runs;
		v->metrics = w->metrics;
		v->nr_metrics = w->nr_metrics;
		v->fingerprint = c->opts->fingerprint ? w->fingerprint : VD_FINGERPRINT_NONE;
	}
	memset(m, 0, sizeof(*m));
	m->workloads = c->vd_workloads;
	m->nr_workloads = c->nr_results;
	m->test = VD_TEST_NOT_RUN;
	m->confidence = c->confidence;
}

static void side_runs_json(json_t *a, const char *workload, const char *side,
			   const struct compare_side *s)
{
	for (size_t i = 0; i < s->nr_runs; i++) {
		const struct compare_run *k = &s->runs[i];
		json_t *o = json_object();

		json_object_set_new(o, "workload", json_text(workload));
		json_object_set_new(o, "side", json_string(side));
		json_object_set_new(o, "pair", k->pair >= 0 ? json_integer(k->pair) : json_null());
		json_object_set_new(o, "position", k->pair >= 0 ? json_integer(k->position) : json_null());
		json_object_set_new(o, "warmup", json_boolean(k->warmup));
		json_object_set_new(o, "wall_s", json_real(k->wall_s));
		json_object_set_new(o, "user_s", json_real(k->user_s));
		json_object_set_new(o, "sys_s", json_real(k->sys_s));
		json_object_set_new(o, "max_rss_kib", json_integer((json_int_t)k->vd.peak_rss_kb));
		json_object_set_new(o, "instructions", k->instructions >= 0 ? json_integer(k->instructions)
									     : json_null());
		json_object_set_new(o, "exit_status", json_integer(k->exit_status));
		json_object_set_new(o, "signal", k->signal ? json_integer(k->signal) : json_null());
		json_object_set_new(o, "timed_out", json_boolean(k->vd.timed_out));
		json_object_set_new(o, "value", isfinite(k->value) ? json_real(k->value) : json_null());
		json_array_append_new(a, o);
	}
}

json_t *compare_runs_json(const struct compare *c)
{
	json_t *a = json_array();

	for (size_t i = 0; i < c->nr_results; i++) {
		const struct compare_result *w = &c->results[i];

		side_runs_json(a, w->spec->name, "base", &w->base);
		side_runs_json(a, w->spec->name, "cand", &w->cand);
	}
	return a;
}
