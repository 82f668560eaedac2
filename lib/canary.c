/*
 * canary.c: the canary of a running service (see canary.h). Both builds'
 * services are started as a scenario starts one (scenario_service_*), then
 * each round gives each build one window of the same schedule, one after
 * the other (the order flipped each round, so neither always goes first),
 * its process tree sampled at the window's start and end. The windows go
 * to the judge; the files are written by canary_write_files().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>

#include <jansson.h>

#include "canary.h"
#include "events.h"
#include "gate.h"
#include "json.h"
#include "project.h"
#include "revs.h"
#include "run-command.h"
#include "scenario.h"
#include "strbuf.h"
#include "util.h"

static const char *const side_labels[2] = { "base", "cand" };

void canary_result_init(struct canary_result *r)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 2; i++) {
		r->sides[i].label = side_labels[i];
		histogram_init(&r->sides[i].latency);
	}
}

void canary_result_release(struct canary_result *r)
{
	for (int i = 0; i < 2; i++) {
		free(r->sides[i].dir);
		free(r->sides[i].windows);
		free(r->sides[i].problem);
		histogram_release(&r->sides[i].latency);
	}
	judge_release(&r->judge);
	free(r->reason);
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 2; i++) {
		r->sides[i].label = side_labels[i];
		r->sides[i].latency = (struct histogram)HISTOGRAM_INIT;
	}
}

/* ---- one build's service and load ---------------------------------------- */

struct side_run {
	struct canary_side *side;
	struct config_scenario conf;		/* the canary's service keys, this build's start */
	struct scenario_spec spec;
	struct scenario_result svc;
	struct scenario_service *service;
	struct loadgen_spec load;
	struct strbuf *requests;
	size_t nr_requests, alloc_requests;
	struct child_process ext;		/* the load command, when it runs */
	int idx;				/* CANARY_BASE or CANARY_CAND */
	bool up;
};

static int read_file_into(const char *dir, const char *name, struct strbuf *out)
{
	char *path = name[0] == '/' ? xstrdup(name) : xstrfmt("%s/%s", dir, name);
	int ret = read_file(out, path, LOADGEN_MAX_REPLY * 4);

	free(path);
	return ret < 0 ? -1 : 0;
}

/* The built-in load against this build's port: its address and requests. */
static int make_load(const struct canary_spec *s, struct side_run *sr)
{
	const struct config_canary *k = s->conf;
	char *url, *host = NULL, *path = NULL;
	int ret = 0;

	if (k->proto == CANARY_HTTP)
		url = xstrfmt("http://127.0.0.1:%d%s", sr->side->port, k->path ? k->path : "/");
	else
		url = xstrfmt("127.0.0.1:%d", sr->side->port);
	memset(&sr->load, 0, sizeof(sr->load));
	if (loadgen_parse_url(url, &sr->load, &host, &path)) {
		ret = -1;
		goto out;
	}
	sr->load.proto = k->proto == CANARY_HTTP ? LOADGEN_HTTP : LOADGEN_LINE;
	if (k->proto == CANARY_LINE) {
		ALLOC_GROW(sr->requests, 1, sr->alloc_requests);
		strbuf_init(&sr->requests[0], 0);
		strbuf_addf(&sr->requests[0], "%s\n", k->line_text);
		sr->nr_requests = 1;
	} else if (k->request_file) {
		struct strbuf text = STRBUF_INIT;

		ret = read_file_into(s->builds[CANARY_BASE].dir, k->request_file, &text);
		if (!ret)
			ret = loadgen_split_requests(text.buf, text.len, &sr->requests, &sr->nr_requests,
						     &sr->alloc_requests);
		if (!ret && !sr->nr_requests)
			ret = error("'%s' holds no request", k->request_file);
		strbuf_release(&text);
	} else {
		const char *method = k->method ? k->method : k->body ? "POST" : "GET";

		ALLOC_GROW(sr->requests, 1, sr->alloc_requests);
		strbuf_init(&sr->requests[0], 0);
		loadgen_http_request(&sr->requests[0], method, host, path, (const char **)k->headers.v,
				     k->headers.nr, k->body, k->body ? strlen(k->body) : 0);
		sr->nr_requests = 1;
	}
	sr->load.requests = sr->requests;
	sr->load.nr_requests = sr->nr_requests;
	sr->load.sched = k->poisson ? LOADGEN_POISSON : LOADGEN_CONSTANT;
	sr->load.rate = k->rate;
	sr->load.connections = (int)k->connections;
	sr->load.duration = k->window_s;
	sr->load.warmup = 0;
	sr->load.window = k->window_s;
	sr->load.timeout = k->timeout_s;
out:
	free(url);
	free(host);
	free(path);
	return ret;
}

static void pause_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

static void set_problem(struct canary_side *side, const char *fmt, ...) ATTR_PRINTF(2, 3);
static void set_problem(struct canary_side *side, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (side->problem)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	side->problem = strbuf_detach(&sb, NULL);
}

static int start_side(const struct canary_spec *s, struct side_run *sr, int i)
{
	const struct canary_build *b = &s->builds[i];

	sr->conf = s->conf->svc;
	if (b->start)
		sr->conf.start = (char *)b->start;
	sr->conf.nr_phases = 0;
	sr->side->dir = xstrfmt("%s/%s", s->out_dir, side_labels[i]);
	sr->spec = (struct scenario_spec){ .conf = &sr->conf, .dir = b->dir, .out_dir = sr->side->dir,
					   .label = side_labels[i], .sandbox = b->sandbox ? b->sandbox : s->sandbox,
					   .observer = s->observer };
	scenario_result_init(&sr->svc);
	emit_note(s->observer, "canary", "starting the %s's service in %s", side_labels[i], b->dir);
	if (scenario_service_start(&sr->spec, &sr->svc, &sr->service)) {
		set_problem(sr->side, "%s", sr->svc.error ? sr->svc.error : "the service did not start");
		return -1;
	}
	sr->side->port = sr->svc.port;
	sr->up = true;
	if (!s->conf->load && make_load(s, sr)) {
		set_problem(sr->side, "%s", last_error());
		return -1;
	}
	return 0;
}

static void stop_side(struct side_run *sr)
{
	if (sr->service && scenario_service_stop(sr->service) && sr->up && sr->svc.end == SCENARIO_EXITED)
		set_problem(sr->side, "%s", sr->svc.error);
	sr->service = NULL;
	sr->up = false;
	scenario_result_release(&sr->svc);
	for (size_t i = 0; i < sr->nr_requests; i++)
		strbuf_release(&sr->requests[i]);
	free(sr->requests);
	sr->requests = NULL;
	sr->nr_requests = 0;
}

/* The process tree's CPU over the last sample's interval, and its RSS. */
static void last_sample(const struct scenario_result *svc, double *cpu_s, uint64_t *rss_kb)
{
	const struct timeline *tl = &svc->tl;

	*cpu_s = 0;
	*rss_kb = 0;
	if (tl->nr_points < 2)
		return;
	*cpu_s = tl->points[tl->nr_points - 1].cpu_pct / 100 *
		 (tl->points[tl->nr_points - 1].t - tl->points[tl->nr_points - 2].t);
	*rss_kb = tl->points[tl->nr_points - 1].rss_kb;
}

static void window_values(struct canary_window *w)
{
	bool any = w->c.answered > 0;

	w->values[CANARY_THROUGHPUT] = w->throughput;
	w->values[CANARY_P50] = any ? (double)w->latency.p50 / 1e9 : NAN;
	w->values[CANARY_P90] = any ? (double)w->latency.p90 / 1e9 : NAN;
	w->values[CANARY_P99] = any ? (double)w->latency.p99 / 1e9 : NAN;
	w->values[CANARY_P999] = any ? (double)w->latency.p999 / 1e9 : NAN;
	w->values[CANARY_ERRORS] = w->c.scheduled ? (double)w->c.nr_errors / (double)w->c.scheduled : 0;
	w->values[CANARY_CPU_PER_REQUEST] = any ? w->cpu_s / (double)w->c.answered : NAN;
	w->values[CANARY_RSS] = (double)w->rss_kb;
}

static void add_counts(struct loadgen_counts *to, const struct loadgen_counts *c)
{
	to->scheduled += c->scheduled;
	to->sent += c->sent;
	to->late += c->late;
	to->answered += c->answered;
	to->ok += c->ok;
	for (int e = 0; e < LOADGEN_ERR__COUNT; e++)
		to->errors[e] += c->errors[e];
	to->nr_errors += c->nr_errors;
}

/* One window of the built-in load on one build. 0, or -1 with an error when the load cannot run. */
static int load_window(const struct canary_spec *s, struct side_run *sr, size_t round, bool warm,
		       uint64_t t0)
{
	struct loadgen_result lr = LOADGEN_RESULT_INIT;
	struct canary_side *side = sr->side;
	struct canary_window *w;
	int ret;

	sr->load.seed = s->conf->seed + round;	/* the same schedule for both builds in a round */
	scenario_service_sample(sr->service);
	ALLOC_GROW(side->windows, side->nr_windows + 1, side->alloc_windows);
	w = &side->windows[side->nr_windows];
	memset(w, 0, sizeof(*w));
	w->index = round;
	w->warmup = warm;
	w->start = (double)(now_ns() - t0) / 1e9;
	ret = loadgen_run(&sr->load, &lr);
	scenario_service_sample(sr->service);
	w->end = (double)(now_ns() - t0) / 1e9;
	if (ret) {
		loadgen_result_release(&lr);
		return -1;
	}
	w->c = lr.total;
	w->throughput = lr.measured > 0 ? (double)lr.total.answered / lr.measured : 0;
	w->latency = lr.summary;
	last_sample(&sr->svc, &w->cpu_s, &w->rss_kb);
	window_values(w);
	side->nr_windows++;
	if (!warm) {
		histogram_merge(&side->latency, &lr.latency);
		add_counts(&side->total, &lr.total);
		side->measured_s += lr.measured;
		side->cpu_s += w->cpu_s;
	}
	if (w->rss_kb > side->rss_max_kb)
		side->rss_max_kb = w->rss_kb;
	loadgen_result_release(&lr);
	return 0;
}

/*
 * The load command, once for this build: it runs for the whole canary
 * while the tree is sampled each window; the windows have CPU and RSS
 * only (what a command's load does is not counted here).
 */
static int command_windows(const struct canary_spec *s, struct side_run *sr, size_t nr_windows, uint64_t t0)
{
	struct canary_side *side = sr->side;
	char *port = xstrfmt("%d", side->port), *cmd = NULL, *env = xstrfmt("HOTLOOP_PORT=%d", side->port);
	char *log = xstrfmt("%s/load.log", side->dir);
	const char *envv[2] = { env, NULL };
	struct strbuf sb = STRBUF_INIT;
	const char *p, *line = s->conf->load;
	int ret = 0;

	while ((p = strstr(line, "{port}"))) {
		strbuf_add(&sb, line, (size_t)(p - line));
		strbuf_addstr(&sb, port);
		line = p + 6;
	}
	strbuf_addstr(&sb, line);
	cmd = strbuf_detach(&sb, NULL);
	child_process_init(&sr->ext);
	sr->ext.shell = cmd;
	sr->ext.dir = s->builds[sr->idx].dir;
	sr->ext.env = envv;
	sr->ext.out_file = log;
	sr->ext.guard = true;
	sr->ext.sandbox = s->builds[sr->idx].sandbox ? s->builds[sr->idx].sandbox : s->sandbox;
	if (start_command(&sr->ext)) {
		set_problem(side, "cannot start the load '%s': %s", cmd, last_error());
		ret = -1;
		goto out;
	}
	for (size_t i = 0; i < nr_windows && !hl_cancelled(); i++) {
		struct canary_window *w;
		uint64_t due;

		scenario_service_sample(sr->service);
		ALLOC_GROW(side->windows, side->nr_windows + 1, side->alloc_windows);
		w = &side->windows[side->nr_windows];
		memset(w, 0, sizeof(*w));
		w->index = i;
		w->warmup = i < (size_t)(s->conf->warmup_s / s->conf->window_s + 0.5);
		w->start = (double)(now_ns() - t0) / 1e9;
		due = now_ns() + (uint64_t)(s->conf->window_s * 1e9);
		while (now_ns() < due && !hl_cancelled())
			pause_ns(due - now_ns() > 50000000 ? 50000000 : due - now_ns());
		scenario_service_sample(sr->service);
		w->end = (double)(now_ns() - t0) / 1e9;
		last_sample(&sr->svc, &w->cpu_s, &w->rss_kb);
		for (int m = 0; m < CANARY__NR_METRICS; m++)
			w->values[m] = NAN;
		w->values[CANARY_RSS] = (double)w->rss_kb;
		w->values[CANARY_CPU_PER_REQUEST] = w->cpu_s / (w->end - w->start);	/* CPU seconds per second */
		side->nr_windows++;
		if (!w->warmup) {
			side->cpu_s += w->cpu_s;
			side->measured_s += w->end - w->start;
		}
		if (w->rss_kb > side->rss_max_kb)
			side->rss_max_kb = w->rss_kb;
		if (scenario_service_exited(sr->service)) {
			set_problem(side, "%s", sr->svc.error);
			break;
		}
		if (check_command(&sr->ext) == 1 && !child_succeeded(&sr->ext)) {
			struct strbuf how = STRBUF_INIT;

			child_describe(&sr->ext, &how);
			set_problem(side, "the load '%s' failed (%s)", cmd, how.buf);
			strbuf_release(&how);
			break;
		}
	}
	if (check_command(&sr->ext) == 0) {
		signal_command(&sr->ext, SIGTERM);
		for (int i = 0; i < 40 && !check_command(&sr->ext); i++)
			pause_ns(50000000);
		if (!check_command(&sr->ext)) {
			kill_command(&sr->ext);
			finish_command(&sr->ext);
		}
	}
out:
	child_process_release(&sr->ext);
	free(cmd);
	free(port);
	free(env);
	free(log);
	return ret;
}

/* ---- the judge ------------------------------------------------------------ */

static void judge_windows(const struct canary_spec *s, struct canary_result *r)
{
	const struct config_canary *k = s->conf;
	struct judge_series series[CANARY__NR_METRICS];
	double *vals[2][CANARY__NR_METRICS] = { { 0 } };
	struct judge_spec js = { .metrics = r->metrics, .warmup = r->warmup_windows,
				 .confidence = k->confidence, .pass_score = k->pass_score,
				 .marginal_score = k->marginal_score };

	r->nr_metrics = 0;
	for (size_t m = 0; m < CANARY__NR_METRICS; m++) {
		const struct config_canary_metric *c = &k->metrics[m];

		if (c->weight <= 0)
			continue;
		if (k->load && m != CANARY_RSS && m != CANARY_CPU_PER_REQUEST)
			continue;	/* a command's load: only what the tree says */
		r->metric_ids[r->nr_metrics] = m;
		r->metrics[r->nr_metrics] = (struct judge_metric_spec){
			.name = m == CANARY_CPU_PER_REQUEST && k->load ? "cpu" : canary_metric_names[m],
			.direction = (enum judge_direction)c->direction, .tolerance = c->tolerance,
			.abs_tolerance = c->abs_tolerance, .weight = c->weight, .critical = c->critical,
			.spread = c->spread };
		for (int b = 0; b < 2; b++) {
			const struct canary_side *side = &r->sides[b];

			vals[b][r->nr_metrics] = xcalloc(side->nr_windows + 1, sizeof(double));
			for (size_t w = 0; w < side->nr_windows; w++)
				vals[b][r->nr_metrics][w] = side->windows[w].values[m];
		}
		series[r->nr_metrics] = (struct judge_series){ vals[0][r->nr_metrics], vals[1][r->nr_metrics],
							       r->sides[0].nr_windows, r->sides[1].nr_windows };
		r->nr_metrics++;
	}
	js.nr_metrics = r->nr_metrics;
	if (r->nr_metrics && !judge_canary(&js, series, &r->judge))
		r->judged = true;
	for (size_t i = 0; i < r->nr_metrics; i++) {
		free(vals[0][i]);
		free(vals[1][i]);
	}
}

/* What the errors were, "closed 12, timeout 3", into sb. */
static void error_kinds(const struct loadgen_counts *c, struct strbuf *sb)
{
	const char *sep = "";

	for (int e = 0; e < LOADGEN_ERR__COUNT; e++)
		if (c->errors[e]) {
			strbuf_addf(sb, "%s%s %" PRIu64, sep, loadgen_error_name(e), c->errors[e]);
			sep = ", ";
		}
	if (!*sep)
		strbuf_addstr(sb, "none");
}

static void decide(struct canary_result *r)
{
	const struct canary_side *cand = &r->sides[CANARY_CAND], *base = &r->sides[CANARY_BASE];
	struct strbuf sb = STRBUF_INIT;

	if (cand->problem) {
		r->verdict = JUDGE_VERDICT_FAIL;
		strbuf_addf(&sb, "the candidate: %s", cand->problem);
	} else if (!r->judged) {
		r->verdict = JUDGE_VERDICT_FAIL;
		strbuf_addstr(&sb, "nothing could be judged");
	} else {
		r->verdict = r->judge.verdict;
		strbuf_addstr(&sb, r->judge.reason);
		for (size_t i = 0; i < r->nr_metrics; i++) {
			const struct judge_metric_result *m = &r->judge.metrics[i];

			if (!m->failed)
				continue;
			strbuf_addf(&sb, "; %s", m->reason);
			if (r->metric_ids[i] == CANARY_ERRORS) {
				strbuf_addf(&sb, " (the candidate's errors after the warm-up: ");
				error_kinds(&cand->total, &sb);
				strbuf_addf(&sb, " of %" PRIu64 " requests; the base's: ", cand->total.scheduled);
				error_kinds(&base->total, &sb);
				strbuf_addstr(&sb, ")");
			}
		}
	}
	r->reason = strbuf_detach(&sb, NULL);
}

int canary_run(const struct canary_spec *s, struct canary_result *r)
{
	const struct config_canary *k = s->conf;
	struct side_run runs[2] = { { 0 } };
	size_t warm = (size_t)ceil(k->warmup_s / k->window_s - 1e-9);
	size_t rounds = warm + (size_t)ceil(k->duration_s / k->window_s - 1e-9);
	uint64_t t0 = now_ns();
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int ret = 0;

	canary_result_release(r);
	for (int i = 0; i < 2; i++)
		histogram_init(&r->sides[i].latency);
	r->warmup_windows = warm;
	r->mode = CANARY_ALTERNATE;
	snprintf(r->mode_why, sizeof(r->mode_why), "alternating windows of %g s, the order flipped each round, "
		 "on %ld CPUs", k->window_s, ncpus);
	if (mkdir_p(s->out_dir))
		return -1;
	for (int i = 0; i < 2; i++) {
		runs[i].side = &r->sides[i];
		runs[i].idx = i;
	}
	for (int i = 0; i < 2; i++)
		if (start_side(s, &runs[i], i))
			break;
	if (r->sides[CANARY_BASE].problem || r->sides[CANARY_CAND].problem)
		goto out_stop;
	if (k->load) {
		emit_note(s->observer, "canary", "the load '%s' on each build in turn, %zu windows of %g s",
			  k->load, rounds, k->window_s);
		for (int i = 0; i < 2 && !hl_cancelled(); i++)
			if (command_windows(s, &runs[i], rounds, t0) || r->sides[i].problem)
				break;
		goto out_stop;
	}
	emit_note(s->observer, "canary", "%zu rounds (%zu of warm-up), %s", rounds, warm, r->mode_why);
	for (size_t round = 0; round < rounds && !hl_cancelled(); round++) {
		for (int j = 0; j < 2; j++) {
			int i = round % 2 ? 1 - j : j;

			if (load_window(s, &runs[i], round, round < warm, t0)) {
				ret = -1;
				goto out_stop;
			}
			if (scenario_service_exited(runs[i].service)) {
				set_problem(&r->sides[i], "%s", runs[i].svc.error);
				goto out_stop;
			}
		}
	}
out_stop:
	for (int i = 0; i < 2; i++)
		stop_side(&runs[i]);
	r->interrupted = hl_cancelled();
	r->wall_s = (double)(now_ns() - t0) / 1e9;
	for (int i = 0; i < 2; i++)
		histogram_summary(&r->sides[i].latency, &r->sides[i].summary);
	if (ret)
		return -1;
	if (r->interrupted)
		return error("canary '%s': interrupted", k->name);
	if (r->sides[CANARY_BASE].problem)
		return error("canary '%s': the base build cannot be judged: %s", k->name,
			     r->sides[CANARY_BASE].problem);
	if (!r->sides[CANARY_CAND].problem || r->sides[CANARY_CAND].nr_windows)
		judge_windows(s, r);
	decide(r);
	return 0;
}

int canary_exit_status(const struct canary_result *r)
{
	return r->verdict == JUDGE_VERDICT_FAIL ? HL_EXIT_REJECT : HL_EXIT_OK;
}

/* ---- --base and --cand ---------------------------------------------------- */

int canary_prepare(const struct project *p, const char *base, const char *cand, bool build,
		   const char *log_dir, struct revs_pair *trees, char **why)
{
	struct gate_spec spec = GATE_SPEC_INIT;
	int ret = 0;

	*why = NULL;
	if (revs_pair_open(trees, p, base, cand) ||
	    gate_spec_from_project(&spec, p, trees->base.dir, trees->cand.dir)) {
		ret = -1;
		goto out;
	}
	spec.log_dir = log_dir;
	spec.source = "canary";
	if (build && spec.build && *spec.build) {
		struct strbuf tail = STRBUF_INIT;

		for (int i = 0; i < 2 && !ret; i++) {
			strbuf_reset(&tail);
			ret = gate_build(&spec, i == 1, i ? "cand-build.log" : "base-build.log", why, &tail);
			if (ret > 0) {
				char *w = xstrfmt("%s%s", *why, tail.buf);

				free(*why);
				*why = w;
			}
		}
		strbuf_release(&tail);
	}
out:
	gate_spec_release(&spec);
	return ret;
}
