/*
 * gate.c: build, test, measure, decide (see gate.h). Each step is a stage;
 * the first that fails decides, and nothing after it runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "events.h"
#include "gate.h"
#include "project.h"
#include "run-command.h"
#include "runner.h"
#include "util.h"

int gate_spec_from_project(struct gate_spec *s, const struct project *p, const char *base_dir,
			   const char *cand_dir)
{
	const struct config *cf = &p->cf;
	size_t scenario_runs = 0;

	s->base_dir = base_dir;
	s->cand_dir = cand_dir;
	s->build = cf->build;
	s->build_timeout = cf->build_timeout_s;
	s->build_base = s->build_cand = true;
	s->test = cf->test;
	s->test_timeout = cf->gate_timeout_s;
	s->rules = cf->rules;
	s->opts.fingerprint = cf->fingerprint;
	s->opts.heap = cf->heap;
	s->opts.warmup = 1;
	s->opts.quiesce = (struct quiesce_opts)QUIESCE_OPTS_INIT;
	compare_default_looks(0, &s->opts.schedule);
	s->own_workloads = xcalloc(cf->nr_workloads + 1, sizeof(*s->own_workloads));
	s->own_lines = xcalloc(cf->nr_workloads + 1, sizeof(*s->own_lines));
	s->workloads = s->own_workloads;
	s->nr_workloads = 0;
	for (size_t i = 0; i < cf->nr_workloads; i++) {
		struct compare_workload_spec *w = &s->own_workloads[i];
		const struct config_scenario *sc = config_workload_scenario(cf, &cf->workloads[i]);

		if (sc) {
			/* each run of a service under load is kept: own_lines holds where */
			if (project_scenario_dir(p, sc->name, "gate", &s->own_lines[i]))
				return -1;
			w->scenario = sc;
			w->scenario_out = s->own_lines[i];
			if ((size_t)sc->runs > scenario_runs)
				scenario_runs = (size_t)sc->runs;
		} else if (!(s->own_lines[i] = project_command_line(&cf->workloads[i], NULL))) {
			return -1;
		} else {
			w->base_cmd = w->cand_cmd = s->own_lines[i];
		}
		w->name = cf->workloads[i].name;
		w->primary = i == cf->primary;
		w->base_dir = base_dir;
		w->cand_dir = cand_dir;
		w->timeout = cf->workloads[i].timeout_s;
		s->nr_workloads++;
	}
	/* a scenario's runs are long: its 'runs' pairs, one look, for every workload */
	if (scenario_runs && compare_schedule(scenario_runs, false, &s->opts.schedule))
		return -1;
	return 0;
}

void gate_spec_release(struct gate_spec *s)
{
	for (size_t i = 0; s->own_lines && s->own_lines[i]; i++)
		free(s->own_lines[i]);
	free(s->own_lines);
	free(s->own_workloads);
	s->own_lines = NULL;
	s->own_workloads = NULL;
	s->workloads = NULL;
	s->nr_workloads = 0;
}

/* What the compare in a result points to, owned by the result. */
struct gate_copy {
	struct compare_opts opts;
	struct compare_workload_spec *workloads;
	size_t nr;
};

static struct gate_copy *copy_spec(const struct gate_spec *s)
{
	struct gate_copy *c = xcalloc(1, sizeof(*c));

	c->opts = s->opts;
	c->nr = s->nr_workloads;
	c->workloads = xcalloc(c->nr + 1, sizeof(*c->workloads));
	for (size_t i = 0; i < c->nr; i++) {
		const struct compare_workload_spec *w = &s->workloads[i];
		struct compare_workload_spec *d = &c->workloads[i];

		/* a scenario's config stays the project's: it outlives every result */
		*d = *w;
		d->name = xstrdup(w->name);
		d->base_cmd = w->base_cmd ? xstrdup(w->base_cmd) : NULL;
		d->cand_cmd = w->cand_cmd ? xstrdup(w->cand_cmd) : NULL;
		d->base_dir = w->base_dir ? xstrdup(w->base_dir) : NULL;
		d->cand_dir = w->cand_dir ? xstrdup(w->cand_dir) : NULL;
		d->scenario_out = w->scenario_out ? xstrdup(w->scenario_out) : NULL;
	}
	return c;
}

static void free_copy(struct gate_copy *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++) {
		free((char *)c->workloads[i].name);
		free((char *)c->workloads[i].base_cmd);
		free((char *)c->workloads[i].cand_cmd);
		free((char *)c->workloads[i].base_dir);
		free((char *)c->workloads[i].cand_dir);
		free((char *)c->workloads[i].scenario_out);
	}
	free(c->workloads);
	free(c);
}

void gate_result_init(struct gate_result *r)
{
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->detail, 0);
	r->v = (struct verdict)VERDICT_INIT;
}

static void clear_reasons(struct gate_result *r)
{
	for (size_t i = 0; i < r->nr_reasons; i++)
		free(r->reasons[i]);
	free(r->reasons);
	r->reasons = NULL;
	r->nr_reasons = r->alloc_reasons = 0;
}

void gate_result_release(struct gate_result *r)
{
	clear_reasons(r);
	strbuf_release(&r->detail);
	compare_release(&r->compare);
	verdict_release(&r->v);
	free_copy(r->copy);
	gate_result_init(r);
}

static void add_reason(struct gate_result *r, char *reason)
{
	ALLOC_GROW(r->reasons, r->nr_reasons + 1, r->alloc_reasons);
	r->reasons[r->nr_reasons++] = reason;
}

static void stage_event(const struct gate_spec *s, enum gate_stage stage, bool passed)
{
	struct event ev = { .kind = EV_STAGE, .source = s->source, .stage = stage, .passed = passed };

	emit(s->obs, &ev);
}

int gate_shell_step(const char *cmd, const char *dir, double timeout, const struct sandbox *sb,
		    const char *log, struct strbuf *how, struct strbuf *tail)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	int ret = 0;

	cp.shell = cmd;
	cp.dir = dir;
	cp.timeout = timeout;
	cp.cancellable = true;
	cp.sandbox = sb;
	if (run_command(&cp))
		return -1;
	if (log)
		write_file_atomic(log, cp.out.buf, cp.out.len);
	if (!child_succeeded(&cp)) {
		ret = 1;
		if (how)
			child_describe(&cp, how);
		if (tail)
			output_tail(&cp.out, 10, tail);
	}
	child_process_release(&cp);
	return ret;
}

static char *log_path(const struct gate_spec *s, const char *name)
{
	return s->log_dir ? xstrfmt("%s/%s", s->log_dir, name) : NULL;
}

int gate_build(const struct gate_spec *s, bool cand, const char *log, char **why, struct strbuf *tail)
{
	const char *role = cand ? "candidate" : "baseline", *dir = cand ? s->cand_dir : s->base_dir;
	struct strbuf how = STRBUF_INIT;
	char *path = log_path(s, log);
	int ret;

	emit_note(s->obs, s->source, "building the %s in %s", role, dir);
	ret = gate_shell_step(s->build, dir, s->build_timeout, cand ? s->cand_sandbox : s->base_sandbox,
			      path, &how, tail);
	if (ret > 0 && !strncmp(how.buf, "timed out", 9))
		*why = xstrfmt("the %s's build timed out after %g s ('%s' in %s; [project] build-timeout)",
			       role, s->build_timeout, s->build, dir);
	else if (ret > 0)
		*why = xstrfmt("the %s's build failed ('%s' in %s, %s)", role, s->build, dir, how.buf);
	strbuf_release(&how);
	free(path);
	return ret;
}

/* [gate] test in the candidate: VD_TEST_*, or -1 with an error when it could not run. */
static int run_test(const struct gate_spec *s, struct gate_result *r)
{
	struct strbuf how = STRBUF_INIT;
	char *path = log_path(s, "test.log");
	int ret;

	emit_note(s->obs, s->source, "testing the candidate: %s", s->test);
	ret = gate_shell_step(s->test, s->cand_dir, s->test_timeout, s->cand_sandbox, path,
			      &how, &r->detail);
	if (ret > 0) {
		r->interrupted = hl_cancelled();
		emit_note(s->obs, s->source, "the test command failed (%s)%s", how.buf, r->detail.buf);
		ret = VD_TEST_FAILED;
	} else if (!ret) {
		ret = VD_TEST_PASSED;
	}
	strbuf_release(&how);
	free(path);
	return ret;
}

/* Each side's runs in its own sandbox (when it has one): one cannot touch the other's tree. */
static int measure(const struct gate_spec *s, struct gate_result *r)
{
	struct runner base = RUNNER_INIT, cand = RUNNER_INIT;
	int ret;

	if (s->rules.metric == GATE_METRIC_INSTRUCTIONS && runner_instructions_unavailable())
		return error("cannot measure instructions: %s", runner_instructions_unavailable());
	if (runner_start(&base, s->base_sandbox))
		return -1;
	if (runner_start(&cand, s->cand_sandbox)) {
		runner_stop(&base);
		return -1;
	}
	emit_note(s->obs, s->source, "measuring the candidate against the baseline");
	ret = compare_run(&r->compare, &base, &cand);
	runner_stop(&base);
	runner_stop(&cand);
	if (ret)
		return ret;
	r->measured = true;
	r->interrupted |= r->compare.interrupted;
	return 0;
}

int gate_run(const struct gate_spec *s, struct gate_result *r)
{
	struct compare_opts *o;
	struct vd_measurements m;
	char *why = NULL;
	int ret = -1, b;

	gate_result_release(r);
	r->copy = copy_spec(s);
	o = &r->copy->opts;
	o->metric = s->rules.metric;
	o->min_improvement = s->rules.min_improvement;
	/* a ram budget on the heap peak needs the heap measured */
	if (s->rules.ram_budget && s->rules.ram_on == GATE_RAM_HEAP)
		o->heap = true;
	o->obs = s->obs;
	if (!o->seed)
		o->seed = now_ns();
	compare_init(&r->compare, o, r->copy->workloads, r->copy->nr);
	r->test = VD_TEST_NOT_RUN;
	if (s->build && *s->build && s->build_base) {
		struct strbuf tail = STRBUF_INIT;

		b = gate_build(s, false, "base-build.log", &why, &tail);
		if (b > 0)
			error("%s%s", why, tail.buf);
		strbuf_release(&tail);
		if (b)
			goto out;
	}
	if (s->build && *s->build && s->build_cand) {
		b = gate_build(s, true, "build.log", &why, &r->detail);
		if (b < 0)
			goto out;
		if (b > 0) {
			r->verdict = VERDICT_REJECT;
			r->stage = GATE_STAGE_BUILD;
			r->interrupted = hl_cancelled();
			stage_event(s, GATE_STAGE_BUILD, false);
			add_reason(r, why);
			why = NULL;
			ret = 0;
			goto out;
		}
		stage_event(s, GATE_STAGE_BUILD, true);
	}
	if (s->test && *s->test) {
		int t = run_test(s, r);

		if (t < 0)
			goto out;
		r->test = (enum vd_test)t;
		stage_event(s, GATE_STAGE_TEST, t != VD_TEST_FAILED);
	}
	if (r->test != VD_TEST_FAILED && (ret = measure(s, r)))
		goto out;
	ret = -1;
	compare_measurements(&r->compare, &m);
	m.test = r->test;
	if (verdict_decide(&m, &s->rules, &r->v))
		goto out;
	r->verdict = r->v.kind;
	for (size_t i = 0; i < r->v.nr_reasons; i++)
		add_reason(r, xstrdup(r->v.reasons[i]));
	if (r->test == VD_TEST_FAILED)
		r->stage = GATE_STAGE_TEST;
	else if (r->verdict != VERDICT_KEEP && gate_output_changed(r))
		r->stage = GATE_STAGE_FINGERPRINT;
	else
		r->stage = GATE_STAGE_COMPARE;
	if (r->test != VD_TEST_FAILED)
		stage_event(s, r->stage, r->verdict == VERDICT_KEEP);
	ret = 0;
out:
	free(why);
	return ret;
}

int gate_primary(const struct gate_result *r, const struct verdict_estimate **e)
{
	if (!r->measured || !r->v.primary.valid)
		return -1;
	*e = &r->v.primary;
	return 0;
}

bool gate_output_changed(const struct gate_result *r)
{
	for (size_t i = 0; i < r->v.correctness.nr_fingerprints; i++)
		if (!r->v.correctness.fingerprints[i].match)
			return true;
	return false;
}

json_t *gate_result_to_json(const struct gate_result *r)
{
	const struct compare *c = &r->compare;
	const struct compare_opts *o = c->opts;
	json_t *doc = verdict_to_json(&r->v), *looks = json_array(), *m;

	for (size_t i = 0; o && i < o->schedule.nr_looks; i++)
		json_array_append_new(looks, json_integer((json_int_t)o->schedule.looks[i]));
	json_object_set_new(doc, "interrupted", json_boolean(r->interrupted));
	json_object_set_new(doc, "pairs", json_integer(c->nr_results ?
						       (json_int_t)c->results[c->primary].nr_pairs : 0));
	json_object_set_new(doc, "looks", looks);
	json_object_set_new(doc, "looks_taken", json_integer((json_int_t)c->looks_taken));
	json_object_set_new(doc, "decision", json_string(stats_decision_name(c->decision)));
	json_object_set_new(doc, "order", json_string(o && o->order == COMPARE_ORDER_RANDOM ? "random" : "abba"));
	json_object_set_new(doc, "confidence", json_real(c->confidence));
	if ((m = quiesce_to_json(&c->machine))) {
		/* quiet: every check of the run, not only the last */
		json_object_set_new(m, "quiet", json_boolean(c->machine_quiet));
		if (!c->machine_quiet)
			json_object_set_new(m, "reason", json_string(c->noisy));
	}
	json_object_set_new(doc, "machine", m ? m : json_null());
	json_object_set_new(doc, "runs", compare_runs_json(c));
	return doc;
}

int gate_exit_status(const struct gate_result *r)
{
	if (r->interrupted)
		return 130;
	if (r->verdict == VERDICT_KEEP)
		return HL_EXIT_OK;
	return r->verdict == VERDICT_REJECT ? HL_EXIT_REJECT : HL_EXIT_FAILURE;
}

static void format_estimate(struct strbuf *out, const char *role, const struct verdict_estimate *e,
			    enum gate_metric m)
{
	if (!e->valid)
		strbuf_addf(out, "%-9s '%s': no usable pairs\n", role, e->workload ? e->workload : "?");
	else if (e->exact)
		strbuf_addf(out, "%-9s '%s': %+.2f%% %s (exact, %zu runs per side)\n", role, e->workload,
			    e->change_pct, gate_metric_name(m), e->pairs);
	else
		strbuf_addf(out, "%-9s '%s': %+.2f%% %s (interval %+.2f%% to %+.2f%%), %zu pairs, noise %.2f%%\n",
			    role, e->workload, e->change_pct, gate_metric_name(m), e->ci_low_pct,
			    e->ci_high_pct, e->pairs, e->noise_pct);
}

void gate_result_format_text(const struct gate_result *r, struct strbuf *out)
{
	const struct compare *c = &r->compare;
	const struct verdict *v = &r->v;

	strbuf_addf(out, "verdict: %s%s\n", verdict_kind_name(v->kind),
		    r->interrupted ? " (interrupted: partial)" : "");
	format_estimate(out, "primary", &v->primary, v->metric);
	for (size_t i = 0; i < v->nr_guards; i++)
		format_estimate(out, "guard", &v->guards[i], v->metric);
	strbuf_addf(out, "memory:   peak RSS base %llu KiB, candidate %llu KiB",
		    (unsigned long long)v->memory.base_peak_rss_kb,
		    (unsigned long long)v->memory.cand_peak_rss_kb);
	if (v->memory.heap_measured)
		strbuf_addf(out, "; heap peak base %llu KiB, candidate %llu KiB",
			    (unsigned long long)(v->memory.base_heap_peak / 1024),
			    (unsigned long long)(v->memory.cand_heap_peak / 1024));
	if (v->memory.budget_kb)
		strbuf_addf(out, ", budget %llu KiB%s", (unsigned long long)v->memory.budget_kb,
			    v->memory.on == GATE_RAM_HEAP ? " on the heap peak" : "");
	strbuf_addf(out, "\nschedule: %s after %zu look%s\n", stats_decision_name(c->decision),
		    c->looks_taken, c->looks_taken == 1 ? "" : "s");
	if (c->machine.probes) {
		strbuf_addstr(out, "machine:  ");
		quiesce_describe(&c->machine, out);
		strbuf_addstr(out, c->machine_quiet ? " (quiet)\n" : " (not quiet)\n");
	} else {
		strbuf_addstr(out, "machine:  not checked (nothing was measured)\n");
	}
	strbuf_addstr(out, "reasons:\n");
	for (size_t i = 0; i < v->nr_reasons; i++)
		strbuf_addf(out, "  - %s\n", v->reasons[i]);
	if (!c->machine_quiet)
		strbuf_addf(out, "  - the machine was not quiet: %s\n", c->noisy);
}
