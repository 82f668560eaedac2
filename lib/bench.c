/*
 * bench.c: one command measured N times (see bench.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench.h"
#include "events.h"
#include "json.h"
#include "strbuf.h"
#include "util.h"

bool bench_run_failed(const struct run_result *r)
{
	return r->exit_status || r->timed_out || r->interrupted;
}

char *bench_failure(const struct run_result *r, double timeout)
{
	if (r->interrupted)
		return xstrdup("interrupted");
	if (r->timed_out)
		return xstrfmt("timed out after %g s (its process group was killed)", timeout);
	if (r->signal)
		return xstrfmt("killed by signal %d (%s)", r->signal, strsignal(r->signal));
	if (r->exit_status)
		return xstrfmt("exit status %d", r->exit_status);
	return NULL;
}

static void add_warning(struct bench_result *b, char *msg)
{
	ALLOC_GROW(b->warnings, b->nr_warnings + 1, b->alloc_warnings);
	b->warnings[b->nr_warnings++] = msg;
}

void bench_summary(const struct bench_result *b, enum gate_metric m, struct stats_summary *s)
{
	double *v = xcalloc(b->nr_runs, sizeof(*v));

	for (size_t i = 0; i < b->nr_runs; i++)
		v[i] = run_result_metric(&b->runs[i], m);
	if (stats_summarize(v, b->nr_runs, s))
		memset(s, 0, sizeof(*s));
	free(v);
}

size_t bench_metric_names(const struct bench_result *b, const char ***names)
{
	size_t nr = 0, alloc = 0;

	*names = NULL;
	for (size_t i = 0; i < b->nr_runs; i++)
		for (size_t k = 0; k < b->runs[i].nr_metrics; k++) {
			const char *name = b->runs[i].metrics[k].name;
			size_t j = 0;

			while (j < nr && strcmp((*names)[j], name))
				j++;
			if (j < nr)
				continue;
			ALLOC_GROW(*names, nr + 1, alloc);
			(*names)[nr++] = name;
		}
	return nr;
}

void bench_metric_summary(const struct bench_result *b, const char *name, struct stats_summary *s)
{
	double *v = xcalloc(b->nr_runs + 1, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < b->nr_runs; i++)
		for (size_t k = 0; k < b->runs[i].nr_metrics; k++)
			if (!strcmp(b->runs[i].metrics[k].name, name)) {
				v[n++] = b->runs[i].metrics[k].value;
				break;
			}
	if (stats_summarize(v, n, s))
		memset(s, 0, sizeof(*s));
	free(v);
}

void bench_rss_summary(const struct bench_result *b, struct stats_summary *s)
{
	double *v = xcalloc(b->nr_runs, sizeof(*v));

	for (size_t i = 0; i < b->nr_runs; i++)
		v[i] = (double)b->runs[i].max_rss_kib;
	if (stats_summarize(v, b->nr_runs, s))
		memset(s, 0, sizeof(*s));
	free(v);
}

static void find_warnings(struct bench_result *b)
{
	struct stats_summary s;

	if (!b->machine.quiet)
		add_warning(b, xstrfmt("the machine was not quiet: %s (waited %.1f s)",
				       b->machine.reason, b->machine.waited));
	if (!b->nr_runs)
		return;
	bench_summary(b, b->metric, &s);
	if (b->nr_warm && !bench_run_failed(&b->warm[0]) && s.median > 0 &&
	    run_result_metric(&b->warm[0], b->metric) > 1.5 * s.median)
		add_warning(b, xstrfmt("slow first run: the warm-up took %.1fx the median "
				       "(cold caches); it was discarded",
				       run_result_metric(&b->warm[0], b->metric) / s.median));
	if (b->nr_runs >= 3 && s.cv > 0.05)
		add_warning(b, xstrfmt("noisy: the %s CV is %.1f%% (above 5%%); "
				       "more runs or a quieter machine give a firmer number",
				       gate_metric_name(b->metric), 100 * s.cv));
	for (size_t i = 1; i < b->nr_runs; i++) {
		if (b->runs[i].stdout_hash != b->runs[0].stdout_hash) {
			add_warning(b, xstrfmt("the output differs between runs 1 and %zu", i + 1));
			break;
		}
	}
}

static json_t *run_json(size_t i, const struct run_result *r, double timeout)
{
	json_t *o = json_object(), *fps = json_array(), *metrics = json_object();
	char hash[17], *why = bench_failure(r, timeout);

	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)r->stdout_hash);
	json_object_set_new(o, "index", json_integer((json_int_t)i + 1));
	json_object_set_new(o, "wall", json_real((double)r->wall_ns / 1e9));
	json_object_set_new(o, "user", json_real((double)r->user_ns / 1e9));
	json_object_set_new(o, "sys", json_real((double)r->sys_ns / 1e9));
	json_object_set_new(o, "cpu", json_real((double)(r->user_ns + r->sys_ns) / 1e9));
	json_object_set_new(o, "max_rss_kib", json_integer(r->max_rss_kib));
	json_object_set_new(o, "exit_status", json_integer(r->exit_status));
	json_object_set_new(o, "signal", r->signal ? json_integer(r->signal) : json_null());
	json_object_set_new(o, "timed_out", json_boolean(r->timed_out));
	json_object_set_new(o, "interrupted", json_boolean(r->interrupted));
	json_object_set_new(o, "failure", json_text(why));
	json_object_set_new(o, "stdout_hash", json_string(hash));
	json_object_set_new(o, "stdout_bytes", json_integer((json_int_t)r->stdout_bytes));
	for (size_t k = 0; k < r->nr_fingerprints; k++)
		json_array_append_new(fps, json_text(r->fingerprints[k]));
	json_object_set_new(o, "fingerprints", fps);
	for (size_t k = 0; k < r->nr_metrics; k++)
		json_object_set_new(metrics, r->metrics[k].name, json_real(r->metrics[k].value));
	json_object_set_new(o, "metrics", metrics);
	json_object_set_new(o, "instructions",
			    r->instructions >= 0 ? json_integer(r->instructions) : json_null());
	free(why);
	return o;
}

static json_t *summary_json(const struct stats_summary *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "median", json_real(s->median));
	json_object_set_new(o, "mad", json_real(s->mad));
	json_object_set_new(o, "min", json_real(s->min));
	json_object_set_new(o, "max", json_real(s->max));
	json_object_set_new(o, "mean", json_real(s->mean));
	json_object_set_new(o, "cv", json_real(s->cv));
	return o;
}

json_t *bench_to_json(const struct bench_result *b, const char *command)
{
	json_t *doc = json_object(), *runs = json_array(), *warm = json_array();
	json_t *sum = json_object(), *w = json_array(), *m;
	struct stats_summary s;

	json_object_set_new(doc, "command", json_text(command));
	json_object_set_new(doc, "metric", json_string(gate_metric_name(b->metric)));
	json_object_set_new(doc, "complete", json_boolean(b->complete));
	for (size_t i = 0; i < b->nr_warm; i++)
		json_array_append_new(warm, run_json(i, &b->warm[i], b->timeout));
	json_object_set_new(doc, "warmup_runs", warm);
	for (size_t i = 0; i < b->nr_runs; i++)
		json_array_append_new(runs, run_json(i, &b->runs[i], b->timeout));
	json_object_set_new(doc, "runs", runs);
	bench_summary(b, b->metric, &s);
	json_object_set_new(sum, "metric", summary_json(&s));
	bench_summary(b, GATE_METRIC_CPU, &s);
	json_object_set_new(sum, "cpu", summary_json(&s));
	bench_summary(b, GATE_METRIC_WALL, &s);
	json_object_set_new(sum, "wall", summary_json(&s));
	bench_rss_summary(b, &s);
	json_object_set_new(sum, "max_rss_kib", summary_json(&s));
	{
		json_t *ms = json_object();
		const char **names;
		size_t n = bench_metric_names(b, &names);

		for (size_t i = 0; i < n; i++) {
			bench_metric_summary(b, names[i], &s);
			json_object_set_new(ms, names[i], summary_json(&s));
		}
		free(names);
		json_object_set_new(sum, "metrics", ms);
	}
	json_object_set_new(sum, "peak_rss_kib", json_integer((json_int_t)s.max));
	json_object_set_new(doc, "summary", sum);
	m = quiesce_to_json(&b->machine);
	json_object_set_new(doc, "machine", m ? m : json_null());
	for (size_t i = 0; i < b->nr_warnings; i++)
		json_array_append_new(w, json_text(b->warnings[i]));
	json_object_set_new(doc, "warnings", w);
	return doc;
}


static int measure(const struct bench_spec *s, struct bench_result *b, struct runner *rn,
		   const struct run_spec *spec)
{
	uint64_t start = now_ns();
	long total = s->warmup + s->runs;

	for (long i = 0; i < total && !hl_cancelled(); i++) {
		bool is_warm = i < s->warmup;
		struct run_result *r = is_warm ? &b->warm[b->nr_warm] : &b->runs[b->nr_runs];
		double per = i ? (double)(now_ns() - start) / 1e9 / (double)i : 0;

		emit_progress(s->obs, "bench", (size_t)i, (size_t)total, "%s %ld/%ld, ETA %.0f s",
			      is_warm ? "warm-up" : "run", i + 1, total, per * (double)(total - i));
		run_result_init(r);
		if (runner_run(rn, spec, r)) {
			run_result_release(r);
			return -1;
		}
		if (is_warm)
			b->nr_warm++;
		else
			b->nr_runs++;
		if (bench_run_failed(r))
			break;
	}
	return 0;
}

int bench_run(const struct bench_spec *s, struct bench_result *b)
{
	struct runner rn = RUNNER_INIT;
	struct run_spec spec = { 0 };
	struct quiesce_opts q = s->quiesce;
	int ret = -1;

	memset(b, 0, sizeof(*b));
	b->metric = s->metric;
	b->timeout = s->timeout;
	if (s->metric == GATE_METRIC_INSTRUCTIONS && runner_instructions_unavailable())
		return error("cannot measure instructions: %s", runner_instructions_unavailable());
	spec.command = s->command;
	spec.dir = s->dir;
	spec.env = s->env;
	spec.timeout = s->timeout;
	spec.cpus = s->cpus;
	spec.nr_cpus = s->nr_cpus;
	spec.instructions = s->metric == GATE_METRIC_INSTRUCTIONS;
	spec.heap = s->heap;
	q.cpus = s->cpus;
	q.nr_cpus = s->nr_cpus;
	b->warm = xcalloc((size_t)s->warmup + 1, sizeof(*b->warm));
	b->runs = xcalloc((size_t)s->runs + 1, sizeof(*b->runs));
	if (runner_start(&rn, NULL))
		return -1;
	if (quiesce_wait(&q, &b->machine) || measure(s, b, &rn, &spec))
		goto out;
	b->interrupted = hl_cancelled();
	b->complete = b->nr_runs == (size_t)s->runs && !b->interrupted;
	for (size_t i = 0; i < b->nr_warm + b->nr_runs; i++)
		if (bench_run_failed(i < b->nr_warm ? &b->warm[i] : &b->runs[i - b->nr_warm]))
			b->complete = false;
	find_warnings(b);
	ret = 0;
out:
	runner_stop(&rn);
	return ret;
}

void bench_result_release(struct bench_result *b)
{
	for (size_t i = 0; i < b->nr_warm; i++)
		run_result_release(&b->warm[i]);
	for (size_t i = 0; i < b->nr_runs; i++)
		run_result_release(&b->runs[i]);
	free(b->warm);
	free(b->runs);
	for (size_t i = 0; i < b->nr_warnings; i++)
		free(b->warnings[i]);
	free(b->warnings);
	memset(b, 0, sizeof(*b));
}
