/*
 * store-feed.c: the loop's events into the store (see store-feed.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "gate.h"
#include "loop.h"
#include "project.h"
#include "run.h"
#include "store-feed.h"
#include "store.h"
#include "util.h"

static void failed(struct store_feed *f, const char *what)
{
	if (!f->warned)
		warning("cannot write %s to the store; going on without it", what);
	f->warned = true;
}

static void note(struct store_feed *f, enum store_level level, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void note(struct store_feed *f, enum store_level level, const char *kind, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (store_activity(f->store, f->loop_id, level, kind, NULL, "%s", msg))
		failed(f, "the activity");
}

/* The store, opened (a warning, not an error, when it cannot be). */
static bool open_store(struct store_feed *f)
{
	char *path = store_repo_path(f->top);

	if (!path || store_open(path, &f->store)) {
		warning("going on without the store '%s/%s'", f->top, STORE_FILE);
		f->store = NULL;
	}
	free(path);
	return f->store != NULL;
}

static void loop_started(struct store_feed *f, const struct loop_result *r)
{
	struct store_loop sl = STORE_LOOP_INIT;

	if (!f->store && !open_store(f))
		return;
	sl.repo = r->repo;
	sl.branch = r->branch;
	sl.base_commit = r->start;
	sl.status = STORE_LOOP_RUNNING;
	sl.rounds_planned = r->rounds_planned;
	if (store_loop_begin(f->store, &sl, &f->loop_id)) {
		failed(f, "the loop");
		f->loop_id = STORE_NULL_INT;
	}
	note(f, STORE_INFO, "loop-start", "loop on %s from %.12s, %ld rounds at most, agent: %s",
	     r->branch, r->start, r->rounds_planned, r->agent);
}

static void add_measurements(struct store_measurement *m, size_t *n, int64_t run_id,
			     const char *workload, enum store_side side, const struct compare_side *s)
{
	for (size_t i = 0; i < s->nr_runs; i++) {
		const struct compare_run *k = &s->runs[i];
		struct store_measurement *x = &m[(*n)++];

		*x = (struct store_measurement)STORE_MEASUREMENT_INIT;
		x->run_id = run_id;
		x->workload = workload;
		x->side = side;
		x->warmup = k->warmup;
		if (k->pair >= 0) {
			x->pair_index = k->pair;
			x->position = k->position;
		}
		x->wall_s = k->wall_s;
		x->user_s = k->user_s;
		x->sys_s = k->sys_s;
		x->cpu_s = k->user_s + k->sys_s;
		x->max_rss_kib = (int64_t)k->vd.peak_rss_kb;
		if (k->instructions >= 0)
			x->instructions = k->instructions;
		x->exit_status = k->exit_status;
		if (k->signal)
			x->signal = k->signal;
		if (isfinite(k->value))
			x->value = k->value;
	}
}

/* The compare behind an attempt: one run row, every measurement. */
static int add_compare(struct store_feed *f, const struct attempt *a, int64_t attempt_id)
{
	const struct gate_result *g = &a->gate;
	const struct compare *c = &g->compare;
	struct store_run r = STORE_RUN_INIT;
	struct store_measurement *m;
	json_t *doc = gate_result_to_json(g);
	char *summary;
	size_t n = 0, total = 0;
	int64_t run_id;
	int ret = -1;

	json_object_del(doc, "runs");
	summary = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(doc);
	r.loop_id = f->loop_id;
	r.attempt_id = attempt_id;
	r.kind = STORE_RUN_COMPARE;
	r.commit_sha = a->commit;
	r.workload = c->nr_results ? c->results[c->primary].spec->name : NULL;
	r.metric = gate_metric_name(c->opts->metric);
	r.finished_at = store_now();
	r.summary_json = summary;
	for (size_t i = 0; i < c->nr_results; i++)
		total += c->results[i].base.nr_runs + c->results[i].cand.nr_runs;
	m = xcalloc(total + 1, sizeof(*m));
	if (!store_run_add(f->store, &r, &run_id)) {
		for (size_t i = 0; i < c->nr_results; i++) {
			const struct compare_result *w = &c->results[i];

			add_measurements(m, &n, run_id, w->spec->name, STORE_SIDE_BASE, &w->base);
			add_measurements(m, &n, run_id, w->spec->name, STORE_SIDE_CAND, &w->cand);
		}
		ret = store_measurements_add(f->store, m, n);
	}
	free(m);
	free(summary);
	return ret;
}

/*
 * The best so far, profiled at a round's start: a baseline run with its
 * profile and brief, and its top hotspots as the summary (the dashboard's
 * "where the time goes now").
 */
static void profiled(struct store_feed *f, const struct event *ev)
{
	const struct run_outcome *o = ev->run;
	struct store_run r = STORE_RUN_INIT;
	json_t *doc = json_object(), *hot = json_array();
	char *profile = xstrfmt("%s/profile.pb.gz", o->dir);
	char *brief = xstrfmt("%s/brief.md", o->dir), *summary;
	int64_t id;

	/* the brief's hotspots: files relative to the project, tags, snippets */
	if (o->brief_json) {
		json_t *h;
		size_t i;

		json_array_foreach(json_object_get(o->brief_json, "hotspots"), i, h) {
			json_t *keep = json_object();
			static const char *const keys[] = { "rank", "function", "file", "line", "self_pct",
				"total_pct", "attributed_pct", "tags", "snippet" };

			if (i == 10)
				break;
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if (json_object_get(h, keys[k]))
					json_object_set(keep, keys[k], json_object_get(h, keys[k]));
			json_array_append_new(hot, keep);
		}
	}
	json_object_set_new(doc, "round", json_integer(ev->round));
	json_object_set_new(doc, "samples", json_integer(o->have_brief ? (json_int_t)o->brief.total : 0));
	json_object_set_new(doc, "sample_type", o->have_brief && o->brief.sample_type ?
			    json_string(o->brief.sample_type) : json_null());
	json_object_set_new(doc, "hotspots", hot);
	summary = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(doc);
	r.loop_id = f->loop_id;
	r.kind = STORE_RUN_BASELINE;
	r.commit_sha = ev->commit;
	r.workload = ev->workload;
	r.metric = "cpu";
	r.finished_at = store_now();
	r.profile_path = profile;
	r.brief_path = o->have_brief ? brief : NULL;
	r.summary_json = summary;
	if (store_run_add(f->store, &r, &id))
		failed(f, "the round's profile");
	else
		note(f, STORE_INFO, "profiled", "round %ld: %s profiled at %.12s", ev->round,
		     ev->workload, ev->commit);
	free(summary);
	free(profile);
	free(brief);
}

static void attempt_done(struct store_feed *f, const struct attempt *a)
{
	struct store_attempt sa = STORE_ATTEMPT_INIT;
	int64_t id = 0;

	sa.loop_id = f->loop_id;
	sa.round = a->round;
	sa.lens = a->lens;
	sa.function = a->have_prop ? a->prop.function : NULL;
	sa.hypothesis = a->have_prop ? a->prop.hypothesis : NULL;
	if (a->have_prop && !isnan(a->prop.expected_gain_pct))
		sa.expected_gain_pct = a->prop.expected_gain_pct;
	sa.verdict = a->verdict;
	sa.reasons = a->reasons;
	sa.nr_reasons = a->nr_reasons;
	sa.stage = a->stage;
	if (a->have_change) {
		sa.change_pct = a->change_pct;
		sa.ci_low_pct = a->ci_low;
		sa.ci_high_pct = a->ci_high;
	}
	sa.diff = a->diff;
	sa.commit_sha = a->commit;
	sa.kb_slug = a->kb_slug;
	sa.agent_exit_status = WIFEXITED(a->agent_status) ? WEXITSTATUS(a->agent_status)
							  : 128 + WTERMSIG(a->agent_status);
	sa.agent_seconds = a->agent_seconds;
	sa.started_at = a->started_at;
	sa.finished_at = a->finished_at;
	if (store_attempt_add(f->store, &sa, &id) || (a->measured && add_compare(f, a, id)))
		failed(f, "an attempt");
	note(f, a->commit ? STORE_INFO : STORE_WARN, "verdict", "round %ld (%s): %s at %s%s%s",
	     a->round, a->lens, verdict_kind_name(a->verdict), gate_stage_name(a->stage),
	     a->nr_reasons ? ": " : "", a->nr_reasons ? a->reasons[0] : "");
}

static void notify(const struct event *ev, void *data)
{
	struct store_feed *f = data;
	const struct attempt *a = ev->attempt;
	const struct loop_result *r = ev->loop;

	if (ev->kind == EV_LOOP_STARTED)
		loop_started(f, r);
	if (!f->store)
		return;
	switch (ev->kind) {
	case EV_ROUND_STARTED:
		note(f, STORE_INFO, "round-start", "round %ld: %zu agent%s", ev->round, ev->total,
		     ev->total == 1 ? "" : "s");
		break;
	case EV_AGENT_FINISHED:
		note(f, STORE_INFO, "agent-done", "round %ld (%s): the agent %s after %.1f s", a->round,
		     a->lens, a->agent_timed_out ? "was killed" :
		     WIFEXITED(a->agent_status) && !WEXITSTATUS(a->agent_status) ? "finished" : "failed",
		     a->agent_seconds);
		break;
	case EV_KEPT:
		if (store_loop_set_best(f->store, f->loop_id, ev->commit))
			failed(f, "the loop's best commit");
		note(f, STORE_INFO, "kept", "%s", ev->message ? ev->message : ev->commit);
		break;
	case EV_ATTEMPT:
		attempt_done(f, a);
		break;
	case EV_PROFILED:
		profiled(f, ev);
		break;
	case EV_LOOP_ENDED:
		if (store_loop_end(f->store, f->loop_id, r->finished ? STORE_LOOP_FINISHED : STORE_LOOP_STOPPED,
				   r->stop_reason))
			failed(f, "the loop's end");
		note(f, STORE_INFO, "loop-end", "%zu kept; %s", r->kept, r->stop_reason);
		break;
	default:
		break;
	}
}

void store_feed_init(struct store_feed *f, const struct project *p)
{
	memset(f, 0, sizeof(*f));
	f->obs.notify = notify;
	f->obs.data = f;
	f->top = xstrdup(p->top);
	f->loop_id = STORE_NULL_INT;
}

void store_feed_close(struct store_feed *f)
{
	if (f->store)
		store_close(f->store);
	f->store = NULL;
	free(f->top);
	f->top = NULL;
}
