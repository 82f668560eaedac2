/*
 * cmd-run.c: `hotloop run [WORKLOAD]`, one configured workload profiled
 * end to end: build, record, report, flame graph and brief, all kept in
 * .hotloop/runs/<id>/ with a `latest` link, and the brief printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "brief.h"
#include "builtin.h"
#include "config.h"
#include "kb.h"
#include "profile.h"
#include "profile-io.h"
#include "git.h"
#include "project.h"
#include "run-command.h"
#include "runner.h"
#include "strbuf.h"

const char usage_run[] =
"usage: hotloop run [WORKLOAD] [-f CONFIG] [-F HZ] [--call-graph fp|dwarf]\n"
"                   [--size N] [--no-build] [--budget TOKENS] [--format md|json]\n"
"\n"
"Profile one workload of hotloop.conf (default: the primary) end to end:\n"
"run [project] build, record the workload's command, then write the\n"
"report, the flame graph and the brief into .hotloop/runs/<id>/ (with a\n"
"`latest` link) and print the brief.\n"
"\n"
"  -f, --config FILE       the hotloop.conf (default: found from here up)\n"
"  -F, --freq HZ           sampling frequency for record (default 999)\n"
"  --call-graph fp|dwarf   how record walks stacks (default fp)\n"
"  --size N                the value of {n} in the workload's command (default:\n"
"                          the largest of its sizes)\n"
"  --no-build              profile what is built now\n"
"  --budget TOKENS         the brief's budget (default 4000, 0: no limit)\n"
"  --format md|json        print the brief as Markdown (default) or JSON\n";

struct run {
	struct project p;
	char *out;			/* .hotloop/runs/<id> */
	char *id;
	const struct config_workload *w;
	char *line;			/* the workload's command line, {n} replaced */
	json_t *meta;
};

static void print_log_tail(const char *path)
{
	struct strbuf sb = STRBUF_INIT, tail = STRBUF_INIT;

	if (!access(path, R_OK) && read_file(&sb, path, 1 << 20) >= 0) {
		output_tail(&sb, 10, &tail);
		fprintf(stderr, "%s\n", tail.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&tail);
}

/* A step that ran hotloop: fine, or an error naming it and its log. */
static int step(struct run *r, const char *what, const char *dir, const char *const *args,
		const char *out, const char *log)
{
	int status;

	if (run_self(dir, args, out, log, &status))
		return -1;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	print_log_tail(log);
	if (WIFEXITED(status))
		return error("%s failed (exit status %d; see '%s')", what, WEXITSTATUS(status), log);
	return error("%s was killed by signal %d (see '%s')", what, WTERMSIG(status), log);
}

static char *in_run(const struct run *r, const char *name)
{
	return xstrfmt("%s/%s", r->out, name);
}

static int load_config(struct run *r, const char *conf_file, const char *name)
{
	if (project_open(&r->p, conf_file, 0) || !(r->w = project_workload(&r->p, name)))
		return -1;
	return 0;
}

static int command_line(struct run *r, const char *size)
{
	r->line = project_command_line(r->w, size);
	return r->line ? 0 : -1;
}

static int build(struct run *r)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	struct strbuf tail = STRBUF_INIT;
	char *log = in_run(r, "build.log");
	int ret = 0;

	fprintf(stderr, "run: building in %s: %s\n", r->p.dir, r->p.cf.build);
	cp.shell = r->p.cf.build;
	cp.dir = r->p.dir;
	cp.timeout = r->p.cf.build_timeout_s;
	cp.cancellable = true;
	if (run_command(&cp)) {
		ret = -1;
		goto out;
	}
	write_file_atomic(log, cp.out.buf, cp.out.len);
	output_tail(&cp.out, 10, &tail);
	if (cp.timed_out)
		ret = error("the build timed out after %g s ('%s' in %s)%s", r->p.cf.build_timeout_s,
			    r->p.cf.build, r->p.dir, tail.buf);
	else if (!child_succeeded(&cp))
		ret = error("the build failed ('%s' in %s, %s %d)%s", r->p.cf.build, r->p.dir,
			    WIFEXITED(cp.status) ? "exit status" : "signal",
			    WIFEXITED(cp.status) ? WEXITSTATUS(cp.status) : WTERMSIG(cp.status), tail.buf);
out:
	free(log);
	child_process_release(&cp);
	strbuf_release(&tail);
	return ret;
}

static int record(struct run *r, const char *freq, const char *cg)
{
	char *prof = in_run(r, "profile.pb.gz"), *out = in_run(r, "stdout.txt");
	char *log = in_run(r, "record.log"), *what = xstrfmt("recording workload '%s'", r->w->name);
	const char *args[] = { "hotloop", "record", "-F", freq, "--call-graph", cg, "-o", prof,
			       "--", "/bin/sh", "-c", r->line, NULL };
	int ret;

	fprintf(stderr, "run: recording '%s' in %s: %s\n", r->w->name, r->p.dir, r->w->run);
	ret = step(r, what, r->p.dir, args, out, log);
	free(prof);
	free(out);
	free(log);
	free(what);
	return ret;
}

static int report_and_flame(struct run *r)
{
	char *prof = in_run(r, "profile.pb.gz"), *log = in_run(r, "report.log");
	char *txt = in_run(r, "report.txt"), *js = in_run(r, "report.json");
	char *svg = in_run(r, "flame.svg"), *title = xstrfmt("%s: %s", r->w->name, r->w->run);
	const char *a1[] = { "hotloop", "report", "--top", "40", prof, NULL };
	const char *a2[] = { "hotloop", "report", "--top", "200", "--json", prof, NULL };
	const char *a3[] = { "hotloop", "flame", "-o", svg, "--title", title, prof, NULL };
	int ret = step(r, "report", NULL, a1, txt, log) || step(r, "report --json", NULL, a2, js, log) ||
		  step(r, "flame", NULL, a3, NULL, log) ? -1 : 0;

	free(prof);
	free(log);
	free(txt);
	free(js);
	free(svg);
	free(title);
	return ret;
}

static int write_brief(struct run *r, size_t budget, bool json)
{
	struct brief_owned owned = { 0 };
	struct brief_opts bo = { 0 };
	struct strbuf md = STRBUF_INIT;
	struct profile prof;
	struct brief b;
	char *path = in_run(r, "profile.pb.gz"), *scale = project_scale_path(&r->p, r->w->name);
	char *mdp = in_run(r, "brief.md"), *jsp = in_run(r, "brief.json"), *js = NULL;
	char *kb_dir = project_kb_dir(&r->p);
	struct kb kb = KB_INIT;
	struct stat st;
	json_t *doc = NULL;
	int idx, ret = -1;

	profile_init(&prof);
	if (brief_owned_from_config(&owned, &r->p.cf, r->p.conf_path))
		goto out;
	bo.owned = &owned;
	bo.context = -1;
	bo.workload = r->w->name;
	if (profile_read_any(&prof, path) || (idx = profile_pick_sample_type(&prof, NULL)) < 0 ||
	    brief_build(&b, &prof, idx, &bo))
		goto out;
	if (!access(scale, R_OK) && brief_add_scale(&b, scale))
		goto out_brief;
	if (!stat(kb_dir, &st) && S_ISDIR(st.st_mode)) {
		if (kb_load(kb_dir, &kb))
			goto out_brief;
		brief_add_kb(&b, &kb);
	}
	brief_format_md(&b, budget, &md);
	doc = brief_to_json(&b, budget);
	js = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	if (!js || write_file_atomic(mdp, md.buf, md.len) || write_file_atomic(jsp, js, strlen(js)))
		goto out_brief;
	if (json) {
		fputs(js, stdout);
		fputc('\n', stdout);
	} else {
		fwrite(md.buf, 1, md.len, stdout);
	}
	json_object_set_new(r->meta, "brief_truncated", json_boolean(b.truncated));
	json_object_set_new(r->meta, "scale", access(scale, R_OK) ? json_null() : json_string(scale));
	ret = 0;
out_brief:
	brief_release(&b);
out:
	free(js);
	json_decref(doc);
	strbuf_release(&md);
	profile_release(&prof);
	brief_owned_release(&owned);
	kb_release(&kb);
	free(kb_dir);
	free(path);
	free(scale);
	free(mdp);
	free(jsp);
	return ret;
}

/* The commit the tree is at, and whether it has changes, for meta.json. */
static void git_state(struct run *r)
{
	struct strbuf out = STRBUF_INIT;
	char *head;

	if (!r->p.in_git || !(head = git_rev_parse(r->p.dir, "HEAD")))
		return;
	json_object_set_new(r->meta, "commit", json_string(head));
	if (!git_run(r->p.dir, &out, NULL, "status", "--porcelain", "--untracked-files=no", NULL))
		json_object_set_new(r->meta, "dirty", json_boolean(out.len > 0));
	strbuf_release(&out);
	free(head);
}

/* .hotloop/runs/latest -> <id>, replaced atomically. */
static int link_latest(struct run *r)
{
	char *runs = xstrfmt("%s/.hotloop/runs", r->p.top);
	char *tmp = xstrfmt("%s/.latest.%ld", runs, (long)getpid()), *latest = xstrfmt("%s/latest", runs);
	int ret = 0;

	unlink(tmp);
	if (symlink(r->id, tmp) || rename(tmp, latest)) {
		ret = error("cannot point '%s' at '%s': %s", latest, r->id, strerror(errno));
		unlink(tmp);
	}
	free(runs);
	free(tmp);
	free(latest);
	return ret;
}

static int write_meta(struct run *r)
{
	char *path = in_run(r, "meta.json"), *s = json_dumps(r->meta, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	int ret = s ? write_file_atomic(path, s, strlen(s)) : error("cannot encode the run's metadata");

	free(path);
	free(s);
	return ret;
}

static void run_release(struct run *r)
{
	project_release(&r->p);
	free(r->out);
	free(r->id);
	free(r->line);
	json_decref(r->meta);
}

enum { OPT_CG = 256, OPT_SIZE, OPT_NO_BUILD, OPT_BUDGET, OPT_FORMAT };

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "freq", required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, OPT_CG },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "no-build", no_argument, NULL, OPT_NO_BUILD },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ NULL, 0, NULL, 0 },
	};
	struct run r = { 0 };
	const char *conf_file = NULL, *freq = "999", *cg = "fp", *size = NULL;
	bool no_build = false, json = false;
	long budget = 4000;
	uint64_t start = now_ns();
	int c, ret = HL_EXIT_FAILURE;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:F:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf_file = optarg;
			break;
		case 'F':
			if (parse_count("--freq", optarg, 1, 100000) < 0)
				goto out_usage;
			freq = optarg;
			break;
		case OPT_CG:
			if (strcmp(optarg, "fp") && strcmp(optarg, "dwarf")) {
				ret = usage_error("run", "unknown call graph '%s': expected fp or dwarf", optarg);
				goto out;
			}
			cg = optarg;
			break;
		case OPT_SIZE:
			if (parse_count("--size", optarg, 0, 1000000000000L) < 0)
				goto out_usage;
			size = optarg;
			break;
		case OPT_NO_BUILD:
			no_build = true;
			break;
		case OPT_BUDGET:
			if ((budget = parse_count("--budget", optarg, 0, 10000000)) < 0)
				goto out_usage;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "md") && strcmp(optarg, "json")) {
				ret = usage_error("run", "unknown format '%s': expected md or json", optarg);
				goto out;
			}
			json = !strcmp(optarg, "json");
			break;
		default:
			ret = usage_error("run", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (argc - optind > 1) {
		ret = usage_error("run", "expected at most one workload");
		goto out;
	}
	if (load_config(&r, conf_file, optind < argc ? argv[optind] : NULL) || command_line(&r, size) ||
	    project_new_dir(&r.p, "runs", r.w->name, &r.out, &r.id))
		goto out;
	r.meta = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "id", r.id, "workload", r.w->name,
			   "command", r.line, "dir", r.p.dir, "config", r.p.conf_path, "started",
			   (json_int_t)time(NULL));
	git_state(&r);
	if ((!no_build && *r.p.cf.build && build(&r)) || record(&r, freq, cg) || report_and_flame(&r) ||
	    write_brief(&r, (size_t)budget, json))
		goto out_meta;
	ret = HL_EXIT_OK;
out_meta:
	json_object_set_new(r.meta, "ok", json_boolean(ret == HL_EXIT_OK));
	json_object_set_new(r.meta, "seconds", json_real((double)(now_ns() - start) / 1e9));
	if (write_meta(&r) || (ret == HL_EXIT_OK && link_latest(&r)))
		ret = HL_EXIT_FAILURE;
	if (!ret)
		fprintf(stderr, "run: wrote %s (and .hotloop/runs/latest)\n", r.out);
	goto out;
out_usage:
	ret = HL_EXIT_USAGE;
out:
	run_release(&r);
	return ret;
}
