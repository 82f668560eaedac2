/*
 * run.c: a workload profiled end to end, and the brief every caller
 * builds (see run.h). Everything runs in this process but the build and
 * the workload itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "events.h"
#include "flame.h"
#include "git.h"
#include "json.h"
#include "kb.h"
#include "profile-io.h"
#include "project.h"
#include "report.h"
#include "run-command.h"
#include "run.h"
#include "sandbox.h"
#include "scale.h"
#include "scenario.h"
#include "util.h"

/* ---- the brief ------------------------------------------------------------ */

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * The roots: [project] owned of the config (resolved in 'dir', the
 * project's directory in the profiled tree), else the git top level, else
 * the current directory.
 */
static int find_owned(const struct brief_request *rq, struct brief_owned *o)
{
	const struct project *p = rq->project;
	char *top;
	int ret;

	if (p && p->conf_path) {
		const char *name = strrchr(p->conf_path, '/');
		char *conf = xstrfmt("%s/%s", rq->dir ? rq->dir : p->dir, name ? name + 1 : p->conf_path);

		ret = brief_owned_from_config(o, &p->cf, conf);
		free(conf);
		return ret;
	}
	if ((top = git_find_top("."))) {
		o->how = xstrdup("the git top level");
		ret = brief_owned_add(o, top, false, true);
		free(top);
		return ret;
	}
	o->how = xstrdup("the current directory");
	return brief_owned_add(o, ".", false, true);
}

/* The knowledge base given (it must exist), else the project's when it exists. */
static int add_kb(const struct brief_request *rq, struct brief *b)
{
	struct kb kb = KB_INIT;
	char *dir = NULL;
	int ret = 0;

	if (rq->kb_dir) {
		struct stat st;

		if (stat(rq->kb_dir, &st))
			return error("no knowledge base at '%s': %s", rq->kb_dir, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return error("no knowledge base at '%s': not a directory", rq->kb_dir);
		dir = xstrdup(rq->kb_dir);
	} else if (rq->project && rq->project->conf_path) {
		dir = project_kb_dir(rq->project);
		if (!is_dir(dir)) {
			free(dir);
			return 0;
		}
	} else {
		return 0;
	}
	ret = kb_load(dir, &kb);
	if (!ret)
		brief_add_kb(b, &kb);
	kb_release(&kb);
	free(dir);
	return ret;
}

int brief_for_workload(const struct brief_request *rq, const struct profile *p,
		       struct brief_owned *owned, struct brief *b)
{
	struct brief_opts bo = rq->opts;
	char *scale = NULL;
	int idx, ret = -1;

	if (!rq->owned && find_owned(rq, owned))
		return -1;
	bo.owned = rq->owned ? rq->owned : owned;
	if (rq->workload)
		bo.workload = rq->workload;
	if ((idx = profile_pick_sample_type(p, rq->sample_type)) < 0 || brief_build(b, p, idx, &bo))
		return -1;
	if (add_kb(rq, b))
		goto out;
	if (rq->scale_path)
		scale = xstrdup(rq->scale_path);
	else if (rq->workload && rq->project && rq->project->conf_path)
		scale = project_scale_path(rq->project, rq->workload);
	if (scale && (rq->scale_path || !access(scale, R_OK)) && brief_add_scale(b, scale))
		goto out;
	ret = 0;
out:
	if (ret)
		brief_release(b);
	free(scale);
	return ret;
}

size_t brief_budget(const struct project *p)
{
	return p && p->conf_path ? (size_t)p->cf.brief_budget : CONFIG_BRIEF_BUDGET;
}

/* ---- a run ------------------------------------------------------------------- */

void run_outcome_init(struct run_outcome *o)
{
	memset(o, 0, sizeof(*o));
	profile_init(&o->profile);
	strbuf_init(&o->brief_md, 0);
}

void run_outcome_release(struct run_outcome *o)
{
	if (o->have_brief)
		brief_release(&o->brief);
	brief_owned_release(&o->owned);
	profile_release(&o->profile);
	strbuf_release(&o->brief_md);
	json_decref(o->brief_json);
	free(o->dir);
	free(o->id);
	free(o->command);
	memset(o, 0, sizeof(*o));
}

static char *in_dir(const struct run_outcome *o, const char *name)
{
	return xstrfmt("%s/%s", o->dir, name);
}

static int save(const struct run_outcome *o, const char *name, const char *text, size_t len)
{
	char *path = in_dir(o, name);
	int ret = write_file_atomic(path, text, len);

	free(path);
	return ret;
}

static int build(const struct run_request *rq, const char *dir, struct run_outcome *o)
{
	const struct config *cf = &rq->project->cf;
	struct child_process cp = CHILD_PROCESS_INIT;
	struct strbuf tail = STRBUF_INIT;
	int ret = 0;

	emit_note(rq->obs, rq->source, "building in %s: %s", dir, cf->build);
	cp.shell = cf->build;
	cp.dir = dir;
	cp.timeout = cf->build_timeout_s;
	cp.cancellable = true;
	if (run_command(&cp)) {
		ret = -1;
		goto out;
	}
	save(o, "build.log", cp.out.buf, cp.out.len);
	output_tail(&cp.out, 10, &tail);
	if (cp.cancelled)
		ret = error("the build was interrupted");
	else if (cp.timed_out)
		ret = error("the build timed out after %g s ('%s' in %s)%s", cf->build_timeout_s,
			    cf->build, dir, tail.buf);
	else if (!child_succeeded(&cp))
		ret = error("the build failed ('%s' in %s, %s %d)%s", cf->build, dir,
			    WIFEXITED(cp.status) ? "exit status" : "signal",
			    WIFEXITED(cp.status) ? WEXITSTATUS(cp.status) : WTERMSIG(cp.status), tail.buf);
out:
	child_process_release(&cp);
	strbuf_release(&tail);
	return ret;
}

/* The last lines of a log, for an error about the step that wrote it. */
static void log_tail(const char *path, struct strbuf *sb)
{
	struct strbuf text = STRBUF_INIT;

	if (!access(path, R_OK) && read_file(&text, path, 1 << 20) >= 0)
		output_tail(&text, 10, sb);
	strbuf_release(&text);
}

static int record(const struct run_request *rq, const char *dir, struct run_outcome *o)
{
	const char *name = rq->workload->name;
	char *argv[] = { "/bin/sh", "-c", o->command, NULL };
	char *prof = in_dir(o, "profile.pb.gz"), *out = in_dir(o, "stdout.txt");
	char *log = in_dir(o, "record.log");
	struct record_options ro = { 0 };
	struct strbuf tail = STRBUF_INIT;
	int st, ret = -1;

	const char **boxed = NULL;

	emit_note(rq->obs, rq->source, "recording '%s' in %s%s: %s", name, dir,
		  rq->sandbox ? " (in the sandbox)" : "", rq->workload->run);
	ro.sampler = rq->sampler;
	ro.argv = argv;
	if (rq->sandbox) {
		/* the sampler follows bwrap's children: the workload is what it samples */
		boxed = sandbox_argv(rq->sandbox, dir, (const char *const *)argv);
		ro.argv = (char **)boxed;
	}
	ro.dir = dir;
	ro.output = prof;
	ro.stdout_file = out;
	ro.stderr_file = log;
	unlink(log);
	if (record_run(&ro, &o->rec) < 0)
		goto out;	/* its message names the command */
	st = o->rec.wait_status;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		log_tail(log, &tail);
		if (WIFEXITED(st))
			error("recording workload '%s' failed (exit status %d; see '%s')%s", name,
			      WEXITSTATUS(st), log, tail.buf);
		else
			error("recording workload '%s' failed: killed by signal %d (see '%s')%s", name,
			      WTERMSIG(st), log, tail.buf);
		goto out;
	}
	/* the log ends as `hotloop record` would have ended it */
	record_summary(&o->rec, prof, &tail);
	{
		FILE *f = fopen(log, "a");

		if (f) {
			fputs(tail.buf, f);
			fclose(f);
		}
	}
	if (o->rec.stats.lost || o->rec.stats.throttled)
		warning("%.*s", (int)tail.len - 1, tail.buf);
	ret = profile_read_any(&o->profile, prof);
out:
	sandbox_argv_free(boxed);
	strbuf_release(&tail);
	free(prof);
	free(out);
	free(log);
	return ret;
}

/*
 * A workload judged by a scenario: the service under its load, its CPU
 * profile over the judged phase as the run's profile; the scenario's
 * files under the run's directory, in scenario/.
 */
static int record_scenario(const struct run_request *rq, const struct config_scenario *sc, const char *dir,
			   struct run_outcome *o)
{
	struct scenario_spec spec = { .conf = sc, .dir = dir, .profile_cpu = true, .observer = rq->obs };
	struct scenario_result r;
	char *out = in_dir(o, "scenario"), *prof = NULL;
	int ret = -1;

	emit_note(rq->obs, rq->source, "running scenario '%s' of workload '%s' in %s", sc->name,
		  rq->workload->name, dir);
	spec.out_dir = out;
	scenario_result_init(&r);
	if (scenario_run(&spec, &r))
		goto out;	/* its message says why */
	if (!r.profiled) {
		error("scenario '%s' of workload '%s': no CPU profile of the service: %s", sc->name,
		      rq->workload->name, r.profile_error ? r.profile_error : "not recorded");
		goto out;
	}
	prof = xstrfmt("%s/profile.pb.gz", out);
	ret = profile_read_any(&o->profile, prof);
out:
	scenario_result_release(&r);
	free(prof);
	free(out);
	return ret;
}

static int report_and_flame(const struct run_request *rq, struct run_outcome *o)
{
	struct flame_options fo = FLAME_OPTIONS_INIT;
	struct report r = REPORT_INIT;
	struct strbuf sb = STRBUF_INIT;
	char *title = xstrfmt("%s: %s", rq->workload->name, o->command), *text = NULL;
	json_t *doc;
	int idx, ret = -1;

	if ((idx = profile_pick_sample_type(&o->profile, NULL)) < 0 ||
	    report_build(&r, &o->profile, idx, REPORT_BY_FUNCTION))
		goto out;
	report_sort(&r, REPORT_SORT_SELF);
	report_format_text(&o->profile, &r, 40, REPORT_SORT_SELF, &sb);
	if (save(o, "report.txt", sb.buf, sb.len))
		goto out;
	doc = report_to_json(&o->profile, &r, 200, REPORT_SORT_SELF);
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(doc);
	if (!text || save(o, "report.json", text, strlen(text)))
		goto out;
	strbuf_reset(&sb);
	fo.title = title;
	fo.name = "profile.pb.gz";
	if (flame_render(&o->profile, NULL, &fo, &sb) || save(o, "flame.svg", sb.buf, sb.len))
		goto out;
	ret = 0;
out:
	report_release(&r);
	strbuf_release(&sb);
	free(title);
	free(text);
	return ret;
}

/*
 * `run --scale`: the workload at each of its sizes, as `hotloop scale`
 * runs it, saved where the brief looks for growth exponents.
 */
static int scale_check(const struct run_request *rq, const char *dir)
{
	const struct config_workload *w = rq->workload;
	struct scale_spec spec = { .repeat = 1, .min_samples = SCALE_MIN_SAMPLES };
	struct scale sc;
	json_t *doc = NULL;
	int ret;

	if (w->scenario)
		return error("[workload \"%s\"] is judged by scenario '%s': --scale runs a command at sizes",
			     w->name, w->scenario);
	if (!w->nr_sizes)
		return error("[workload \"%s\"] has no sizes for --scale: add 'sizes = 1000 2000 4000' "
			     "to it in '%s'", w->name, rq->project->conf_path);
	if (!strstr(w->run, "{n}"))
		return error("[workload \"%s\"] runs '%s', which has no {n} for --scale: add {n} "
			     "to its 'run' line where the size goes", w->name, w->run);
	spec.workload = w->name;
	spec.run = spec.command = w->run;
	spec.dir = dir;
	spec.timeout = w->timeout_s;
	spec.sizes = w->sizes;
	spec.nr_sizes = w->nr_sizes;
	spec.sampler = rq->sampler;
	spec.top = rq->project->top;
	spec.obs = rq->obs;
	ret = scale_run(&spec, &sc, &doc);
	json_decref(doc);
	scale_release(&sc);
	return ret ? -1 : 0;
}

static int write_brief(const struct run_request *rq, const char *dir, struct run_outcome *o)
{
	struct brief_request br = { 0 };
	char *text;
	int ret;

	br.project = rq->project;
	br.dir = dir;
	br.workload = rq->workload->name;
	br.opts.context = -1;
	if (brief_for_workload(&br, &o->profile, &o->owned, &o->brief))
		return -1;
	o->have_brief = true;
	brief_format_md(&o->brief, rq->budget, &o->brief_md);
	o->brief_json = brief_to_json(&o->brief, rq->budget);
	text = json_dumps(o->brief_json, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	ret = !text || save(o, "brief.md", o->brief_md.buf, o->brief_md.len) ||
	      save(o, "brief.json", text, strlen(text)) ? -1 : 0;
	free(text);
	return ret;
}

/* What `hotloop run` keeps in meta.json besides the files. */
static json_t *meta_of(const struct run_request *rq, const char *dir, const struct run_outcome *o)
{
	const struct project *p = rq->project;
	json_t *meta = json_pack("{s:o, s:o, s:o, s:o, s:o, s:I}", "id", json_text(o->id),
				 "workload", json_text(rq->workload->name), "command", json_text(o->command),
				 "dir", json_text(dir), "config", json_text(p->conf_path),
				 "started", (json_int_t)time(NULL));
	struct strbuf out = STRBUF_INIT;
	char *head;

	if (p->in_git && (head = git_rev_parse(dir, "HEAD"))) {
		json_object_set_new(meta, "commit", json_text(head));
		if (!git_run(dir, &out, NULL, "status", "--porcelain", "--untracked-files=no", NULL))
			json_object_set_new(meta, "dirty", json_boolean(out.len > 0));
		free(head);
	}
	strbuf_release(&out);
	return meta;
}

/* .hotloop/runs/latest -> <id>, replaced atomically. */
static int link_latest(const struct project *p, const char *id)
{
	char *runs = xstrfmt("%s/.hotloop/runs", p->top);
	char *tmp = xstrfmt("%s/.latest.%ld", runs, (long)getpid()), *latest = xstrfmt("%s/latest", runs);
	int ret = 0;

	unlink(tmp);
	if (symlink(id, tmp) || rename(tmp, latest)) {
		ret = error("cannot point '%s' at '%s': %s", latest, id, strerror(errno));
		unlink(tmp);
	}
	free(runs);
	free(tmp);
	free(latest);
	return ret;
}

int run_workload(const struct run_request *rq, struct run_outcome *o)
{
	const struct project *p = rq->project;
	const char *dir = rq->dir ? rq->dir : p->dir;
	const struct config_scenario *sc;
	uint64_t start = now_ns();
	json_t *meta = NULL;
	int ret = -1;

	run_outcome_release(o);
	run_outcome_init(o);
	sc = config_workload_scenario(&p->cf, rq->workload);
	if (sc)
		o->command = xstrfmt("scenario %s: %s", sc->name, sc->start);
	else if (!(o->command = project_command_line(rq->workload, rq->size)))
		return -1;
	if (rq->out_dir) {
		o->dir = xstrdup(rq->out_dir);
	} else {
		if (project_new_dir(p, "runs", rq->workload->name, &o->dir, &o->id))
			return -1;
		meta = meta_of(rq, dir, o);
	}
	if ((rq->build && *p->cf.build && build(rq, dir, o)) ||
	    (sc ? record_scenario(rq, sc, dir, o) : record(rq, dir, o)) ||
	    report_and_flame(rq, o) || (rq->scale && scale_check(rq, dir)) || write_brief(rq, dir, o))
		goto out;
	ret = 0;
out:
	o->seconds = (double)(now_ns() - start) / 1e9;
	if (meta) {
		char *text;

		json_object_set_new(meta, "brief_truncated", json_boolean(o->have_brief && o->brief.truncated));
		if (o->have_brief) {
			char *scale = project_scale_path(p, rq->workload->name);

			json_object_set_new(meta, "scale", access(scale, R_OK) ? json_null() : json_text(scale));
			free(scale);
		}
		json_object_set_new(meta, "ok", json_boolean(!ret));
		json_object_set_new(meta, "seconds", json_real(o->seconds));
		text = json_dumps(meta, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		if (!text || save(o, "meta.json", text, strlen(text)) || (!ret && link_latest(p, o->id)))
			ret = -1;
		free(text);
		json_decref(meta);
	}
	return ret;
}
