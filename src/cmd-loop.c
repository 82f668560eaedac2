/*
 * cmd-loop.c: `hotloop loop`, the improve loop. Each round an agent edits
 * a fresh worktree of the current best; hotloop checks the diff, builds,
 * tests, and compares the candidate with the best on every workload (the
 * `compare` command on two directories), then commits a keep on the branch
 * hotloop/<date> or drops the candidate with its reasons. The user's
 * working tree, index and branch are never touched; everything lives in
 * .hotloop/ and on that branch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "brief.h"
#include "builtin.h"
#include "config.h"
#include "kb.h"
#include "loop.h"
#include "profile.h"
#include "profile-io.h"
#include "git.h"
#include "project.h"
#include "revs.h"
#include "run-command.h"
#include "runner.h"
#include "store.h"
#include "strbuf.h"

const char usage_loop[] =
"usage: hotloop loop [--rounds N] [--agent CMD] [--lenses L,...] [--parallel K]\n"
"                    [-f CONFIG] [--json]\n"
"\n"
"The improve loop: each round an agent edits ONE hot function in a fresh git\n"
"worktree of the current best; hotloop checks that the diff touches no\n"
"protected path, builds, tests, checks every workload's output, compares the\n"
"candidate with the best in interleaved pairs, and keeps it (a commit on the\n"
"branch hotloop/<date>) or drops it with its reasons. Your working tree,\n"
"index and branch are never touched.\n"
"\n"
"  --rounds N         at most N rounds (default: [improve] rounds)\n"
"  --agent CMD        the agent command (default: [agent] command); it runs in\n"
"                     the worktree with the prompt on stdin and in $HOTLOOP_PROMPT\n"
"  --lenses L,...     the lenses to cycle through (default: [improve] lenses)\n"
"  --parallel K       agents generating candidates at once per round (default 1);\n"
"                     they are evaluated one at a time, the best keep wins\n"
"  -f, --config FILE  the hotloop.conf (default: found from here up)\n"
"  --json             the summary as JSON (docs/loop.md)\n";

#define MAX_PARALLEL 8

static const struct { const char *lens, *hint; } lens_hints[] = {
	{ "algorithmic", "Look for a better algorithm or data structure: fewer steps, not faster steps." },
	{ "locality", "Look at memory: access order, layout, contiguous data, fewer cache misses." },
	{ "dedup", "Look for work done twice: hoist it out of loops, cache or memoize it." },
	{ "datashape", "Look at the shape of the data: smaller types, fewer indirections, better packing." },
	{ "branchflat", "Look at branches: make hot ones predictable, or remove them." },
};

/* One candidate of a round. */
struct cand {
	const char *lens;
	struct revs_tree tree;
	char *dir;			/* where its files go: .hotloop/loop/<id>/round-NN-K */
	int agent_status;
	bool agent_timed_out, no_candidate;
	double agent_seconds;
	struct loop_proposal prop;
	bool have_prop;
	enum gate_stage stage;		/* what decided */
	enum verdict_kind verdict;
	struct strbuf reasons;		/* one per line */
	bool have_change;
	double change_pct, ci_low, ci_high;
	char *commit;
};

struct loop {
	struct project p;
	char *dir;			/* .hotloop/loop/<id> */
	char *branch;
	char *orig, *best;		/* commits: where the branch started, its tip */
	const char *agent;
	long rounds;
	const char *lenses[32];
	size_t nr_lenses, parallel;
	struct revs_tree base;		/* the current best, built */
	char *brief_md;			/* of the current best */
	char *targets;			/* owned functions at or above min-share */
	json_t *attempts;
	size_t kept, rejects_in_a_row;
	json_t *rejected_by;		/* stage -> count */
	const char *stop_reason;
	bool json;			/* the summary as JSON: no text on stdout */
	int lock_fd, wlock_fd;		/* .hotloop/lock and the worktrees' lock */
	char *kb_dir;			/* where every attempt is written up */
	struct store *store;		/* .hotloop/hotloop.db, NULL when it cannot be opened */
	int64_t store_id;		/* this loop's row */
	bool git_identity;		/* the repository has user.name and user.email */
};

static void on_interrupt(int sig)
{
	hl_cancel();
}

/* ---- small helpers ------------------------------------------------------- */

static char *path_in(const char *dir, const char *name)
{
	return xstrfmt("%s/%s", dir, name);
}

static void save(const char *dir, const char *name, const char *text, size_t len)
{
	char *p = path_in(dir, name);

	write_file_atomic(p, text, len);
	free(p);
}

static void add_reason(struct cand *c, const char *fmt, ...) ATTR_PRINTF(2, 3);
static void add_reason(struct cand *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&c->reasons, fmt, ap);
	va_end(ap);
	strbuf_addch(&c->reasons, '\n');
}

static void reject(struct loop *l, struct cand *c, enum gate_stage stage, enum verdict_kind verdict)
{
	const char *name = gate_stage_name(stage);
	json_t *n;

	c->stage = stage;
	c->verdict = verdict;
	n = json_object_get(l->rejected_by, name);
	json_object_set_new(l->rejected_by, name, json_integer(n ? json_integer_value(n) + 1 : 1));
}

/* An attempt that stopped before anything decided was an error at the agent. */
static enum verdict_kind cand_verdict(const struct cand *c)
{
	return c->verdict ? c->verdict : VERDICT_ERROR;
}

static enum gate_stage cand_stage(const struct cand *c)
{
	return c->stage ? c->stage : GATE_STAGE_AGENT;
}

/* A shell command in 'dir' with its output saved; 0 when it exited 0. */
static int shell_step(const char *cmd, const char *dir, double timeout, const char *log_dir,
		      const char *log, struct strbuf *tail)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	int ret;

	cp.shell = cmd;
	cp.dir = dir;
	cp.timeout = timeout;
	cp.cancellable = true;
	ret = run_command(&cp);
	save(log_dir, log, cp.out.buf, cp.out.len);
	output_tail(&cp.out, 10, tail);
	if (!ret && cp.timed_out) {
		strbuf_addf(tail, "\n    (killed after %g s)", timeout);
		ret = -1;
	} else if (!ret && !child_succeeded(&cp)) {
		ret = -1;
	}
	child_process_release(&cp);
	return ret;
}

/* ---- setup ---------------------------------------------------------------- */

static int load(struct loop *l, const char *conf_file)
{
	if (project_open(&l->p, conf_file, 0))
		return -1;
	if (!l->p.in_git)
		return error("'%s' is not in a git repository: the loop keeps its changes on a branch",
			     l->p.dir);
	return 0;
}

/* The branch hotloop/<date>: continued when it exists, else made at HEAD. */
static int start_branch(struct loop *l)
{
	char date[16], *ref;
	time_t now = time(NULL);
	struct tm tm;
	struct strbuf out = STRBUF_INIT;

	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	l->branch = xstrfmt("hotloop/%s", date);
	ref = xstrfmt("refs/heads/%s", l->branch);
	l->best = git_rev_parse(l->p.top, ref);
	if (l->best) {
		fprintf(stderr, "loop: continuing branch %s at %.12s\n", l->branch, l->best);
	} else {
		if (!(l->best = git_rev_parse(l->p.top, "HEAD^{commit}")) ||
		    git_run(l->p.top, NULL, "create the branch", "update-ref", ref, l->best, "", NULL)) {
			free(ref);
			return error("cannot start branch %s at HEAD (does the repository have a commit?)",
				     l->branch);
		}
		fprintf(stderr, "loop: branch %s starts at HEAD (%.12s)\n", l->branch, l->best);
	}
	l->orig = xstrdup(l->best);
	l->git_identity = !git_run(l->p.top, &out, NULL, "config", "user.email", NULL) &&
			  !git_run(l->p.top, &out, NULL, "config", "user.name", NULL);
	strbuf_release(&out);
	free(ref);
	return 0;
}

/* ---- the current best: built, gated, profiled ------------------------------ */

/* Record the primary workload in the best's tree and brief it. */
static int profile_best(struct loop *l, const char *round_dir)
{
	const struct config_workload *w = &l->p.cf.workloads[l->p.cf.primary];
	char *prof = path_in(round_dir, "profile.pb.gz"), *log = path_in(round_dir, "record.log");
	char *out = path_in(round_dir, "record.stdout"), *line, *conf = path_in(l->base.top, l->p.conf_rel);
	const char *args[] = { "hotloop", "record", "-o", prof, "--", "/bin/sh", "-c", NULL, NULL };
	struct brief_owned owned = { 0 };
	struct brief_opts bo = { 0 };
	struct strbuf md = STRBUF_INIT;
	struct config wcf;
	struct profile p;
	struct brief b;
	bool simple;
	int status, idx, ret = -1;

	free(runner_shell_program(w->run, &simple));
	line = simple ? xstrfmt("exec %s", w->run) : xstrdup(w->run);
	args[7] = line;
	profile_init(&p);
	config_init(&wcf);
	if (run_self(l->base.dir, args, out, log, &status))
		goto out;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		error("profiling the best's primary workload failed (see '%s')", log);
		goto out;
	}
	config_release(&wcf);
	if (config_parse_file(&wcf, conf) || brief_owned_from_config(&owned, &wcf, conf))
		goto out;
	bo.owned = &owned;
	bo.context = -1;
	bo.workload = w->name;
	if (profile_read_any(&p, prof) || (idx = profile_pick_sample_type(&p, NULL)) < 0 ||
	    brief_build(&b, &p, idx, &bo))
		goto out;
	{
		struct kb kb;

		/* what was tried on each hotspot, in the brief itself */
		if (!kb_load(l->kb_dir, &kb))
			brief_add_kb(&b, &kb);
		kb_release(&kb);
	}
	brief_format_md(&b, 3000, &md);
	save(round_dir, "brief.md", md.buf, md.len);
	free(l->brief_md);
	l->brief_md = strbuf_detach(&md, NULL);
	{
		struct strbuf t = STRBUF_INIT;

		for (size_t i = 0; i < b.nr_hotspots; i++) {
			double share = b.total > 0 ? (double)b.hotspots[i].attributed / (double)b.total : 0;

			if (share >= l->p.cf.min_share)
				strbuf_addf(&t, "%s%s (%.1f%%)", t.len ? ", " : "", b.hotspots[i].function,
					    100 * share);
		}
		free(l->targets);
		l->targets = t.len ? strbuf_detach(&t, NULL) : xstrdup("(none reaches it: say NO CANDIDATE)");
		strbuf_release(&t);
	}
	brief_release(&b);
	ret = 0;
out:
	profile_release(&p);
	config_release(&wcf);
	brief_owned_release(&owned);
	strbuf_release(&md);
	free(prof);
	free(log);
	free(out);
	free(line);
	free(conf);
	return ret;
}

/* A fresh worktree of the best, built and gated: the baseline of the rounds. */
static int setup_base(struct loop *l)
{
	struct strbuf tail = STRBUF_INIT;
	int ret = -1;

	if (revs_add(l->p.top, "base", l->best, l->p.sub, &l->base))
		goto out;
	fprintf(stderr, "loop: building the baseline (%.12s)\n", l->best);
	if (*l->p.cf.build && shell_step(l->p.cf.build, l->base.dir, l->p.cf.build_timeout_s, l->dir,
				       "base-build.log", &tail)) {
		error("the baseline does not build ('%s' in %s)%s", l->p.cf.build, l->base.dir, tail.buf);
		goto out;
	}
	if (*l->p.cf.test && shell_step(l->p.cf.test, l->base.dir, l->p.cf.gate_timeout_s, l->dir,
				      "base-test.log", &tail)) {
		error("the baseline fails its own tests ('%s' in %s)%s", l->p.cf.test, l->base.dir, tail.buf);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&tail);
	return ret;
}

/* ---- one candidate ------------------------------------------------------- */

static const char *lens_hint(const char *lens)
{
	for (size_t i = 0; i < ARRAY_SIZE(lens_hints); i++)
		if (!strcmp(lens_hints[i].lens, lens))
			return lens_hints[i].hint;
	return "";
}

static int write_prompt(struct loop *l, struct cand *c, long round, const char *kb_index,
			struct strbuf *prompt)
{
	struct strbuf tmpl = STRBUF_INIT, prot = STRBUF_INIT, wl = STRBUF_INIT;
	char rounds[24], roundstr[24], share[24], minimp[24], guard[24];
	int ret;

	if (*l->p.cf.agent_prompt) {
		char *p = *l->p.cf.agent_prompt == '/' ? xstrdup(l->p.cf.agent_prompt)
						      : path_in(l->base.dir, l->p.cf.agent_prompt);

		ret = read_file(&tmpl, p, 1 << 20);
		free(p);
		if (ret < 0)
			return -1;
	} else {
		strbuf_addstr(&tmpl, loop_default_prompt);
	}
	for (size_t i = 0; i < l->p.cf.protected_paths.nr; i++)
		strbuf_addf(&prot, "%s%s", i ? ", " : "", l->p.cf.protected_paths.v[i]);
	for (size_t i = 0; i < l->p.cf.nr_workloads; i++)
		strbuf_addf(&wl, "%s%s%s", i ? ", " : "", l->p.cf.workloads[i].name,
			    i == l->p.cf.primary ? " (primary)" : "");
	snprintf(rounds, sizeof(rounds), "%ld", l->rounds);
	snprintf(roundstr, sizeof(roundstr), "%ld", round);
	snprintf(share, sizeof(share), "%g%%", 100 * l->p.cf.min_share);
	snprintf(minimp, sizeof(minimp), "%g%%", 100 * l->p.cf.rules.min_improvement);
	snprintf(guard, sizeof(guard), "%g%%", 100 * l->p.cf.rules.guard_regression);
	{
		const struct loop_var vars[] = {
			{ "round", roundstr }, { "rounds", rounds }, { "min_share", share },
			{ "targets", l->targets }, { "protected", prot.buf },
			{ "test", *l->p.cf.test ? l->p.cf.test : "none configured" },
			{ "build", *l->p.cf.build ? l->p.cf.build : "none" }, { "workloads", wl.buf },
			{ "min_improvement", minimp }, { "guard_regression", guard },
			{ "lens", c->lens }, { "lens_hint", lens_hint(c->lens) },
			{ "brief", l->brief_md }, { "kb", kb_index },
		};

		ret = loop_render(tmpl.buf, vars, ARRAY_SIZE(vars), prompt);
	}
	strbuf_release(&tmpl);
	strbuf_release(&prot);
	strbuf_release(&wl);
	return ret;
}

/* Run the agent in c's worktree (in a child process, so several can run at once). */
static void run_agent(struct loop *l, struct cand *c, long round)
{
	char *prompt = path_in(c->dir, "prompt.md"), *brief = path_in(c->dir, "brief.md");
	char *proposal = path_in(c->dir, "proposal.json"), *st = path_in(c->dir, "agent.status");
	char *e[7];
	struct child_process cp = CHILD_PROCESS_INIT;
	uint64_t start = now_ns();
	FILE *f;

	e[0] = xstrfmt("HOTLOOP_PROMPT=%s", prompt);
	e[1] = xstrfmt("HOTLOOP_BRIEF=%s", brief);
	e[2] = xstrfmt("HOTLOOP_ROUND=%ld", round);
	e[3] = xstrfmt("HOTLOOP_LENS=%s", c->lens);
	e[4] = xstrfmt("HOTLOOP_WORKTREE=%s", c->tree.dir);
	e[5] = xstrfmt("HOTLOOP_PROPOSAL=%s", proposal);
	e[6] = NULL;
	cp.shell = l->agent;
	cp.dir = c->tree.dir;
	cp.timeout = l->p.cf.agent_timeout_s;
	cp.in = prompt;
	cp.env = (const char *const *)e;
	cp.cancellable = true;
	if (run_command(&cp)) {
		cp.status = 126 << 8;
		strbuf_addf(&cp.out, "hotloop: %s\n", last_error());
	}
	save(c->dir, "agent.log", cp.out.buf, cp.out.len);
	f = fopen(st, "w");
	if (f) {
		fprintf(f, "%d %d %.3f\n", cp.status, cp.timed_out, (double)(now_ns() - start) / 1e9);
		fclose(f);
	}
	for (int i = 0; i < 6; i++)
		free(e[i]);
	child_process_release(&cp);
	free(prompt);
	free(brief);
	free(proposal);
	free(st);
}

/* What run_agent() left behind: its status, NO CANDIDATE, the proposal. */
static void read_agent(struct cand *c)
{
	char *st = path_in(c->dir, "agent.status"), *logp = path_in(c->dir, "agent.log");
	char *prop = path_in(c->dir, "proposal.json");
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	int timed_out = 0;

	c->agent_status = 126 << 8;
	if (read_file(&sb, st, 4096) >= 0 &&
	    sscanf(sb.buf, "%d %d %lf", &c->agent_status, &timed_out, &c->agent_seconds) != 3)
		c->agent_status = 126 << 8;
	c->agent_timed_out = timed_out;
	strbuf_reset(&sb);
	if (!access(logp, R_OK) && read_file(&sb, logp, 1 << 20) >= 0)
		c->no_candidate = loop_no_candidate(sb.buf);
	strbuf_reset(&sb);
	if (!access(prop, R_OK) && read_file(&sb, prop, 1 << 20) >= 0) {
		if (loop_parse_proposal(sb.buf, sb.len, &c->prop, &why))
			add_reason(c, "the proposal in $HOTLOOP_PROPOSAL is unusable: %s", why.buf);
		else
			c->have_prop = true;
	}
	strbuf_release(&sb);
	strbuf_release(&why);
	free(st);
	free(logp);
	free(prop);
}

/* Stage the candidate's changes; its changed paths and the diff. */
static int collect_diff(struct loop *l, struct cand *c, struct strbuf *names, struct strbuf *diff)
{
	if (git_run(c->tree.top, NULL, "stage the candidate", "add", "-A", NULL) ||
	    git_run(c->tree.top, names, "list the changes", "diff", "--cached", "--name-only", NULL) ||
	    git_run(c->tree.top, diff, "diff the candidate", "diff", "--cached", NULL))
		return -1;
	save(c->dir, "diff.patch", diff->buf, diff->len);
	return 0;
}

static int check_diff(struct loop *l, struct cand *c)
{
	struct strbuf names = STRBUF_INIT, diff = STRBUF_INIT;
	const char **paths = NULL;
	size_t nr = 0, alloc = 0;
	const char *hit;
	char *p, *save_ptr = NULL;
	int ret = -1;

	if (collect_diff(l, c, &names, &diff)) {
		add_reason(c, "the candidate's changes could not be read: %s", last_error());
		reject(l, c, GATE_STAGE_DIFF, VERDICT_ERROR);
		goto out;
	}
	for (p = strtok_r(names.buf, "\n", &save_ptr); p; p = strtok_r(NULL, "\n", &save_ptr)) {
		ALLOC_GROW(paths, nr + 1, alloc);
		paths[nr++] = p;
	}
	if (!nr) {
		add_reason(c, "the agent changed nothing");
		reject(l, c, GATE_STAGE_DIFF, VERDICT_REJECT);
	} else if ((hit = loop_protected_hit(paths, nr, l->p.sub, &l->p.cf.protected_paths))) {
		add_reason(c, "it touches the protected path '%s' (protected: tests, benchmarks, "
			   "inputs and hotloop.conf may not change)", hit);
		reject(l, c, GATE_STAGE_PROTECTED, VERDICT_REJECT);
	} else {
		ret = 0;
	}
out:
	free(paths);
	strbuf_release(&names);
	strbuf_release(&diff);
	return ret;
}

/* Whether compare found a workload's output (its fingerprint) changed. */
static bool output_changed(json_t *doc)
{
	json_t *fps = json_object_get(json_object_get(doc, "correctness"), "fingerprints"), *f;
	size_t i;

	json_array_foreach(fps, i, f)
		if (json_is_false(json_object_get(f, "match")))
			return true;
	return false;
}

/* The candidate against the best: `hotloop compare` on the two built trees. */
static int compare_cand(struct loop *l, struct cand *c)
{
	char *conf = path_in(l->base.top, l->p.conf_rel), *out = path_in(c->dir, "compare.json");
	char *log = path_in(c->dir, "compare.log");
	const char *args[] = { "hotloop", "compare", "-f", conf, "--base", l->base.dir, "--cand",
			       c->tree.dir, "--no-build", "--no-test", "--json", NULL };
	json_error_t jerr;
	json_t *doc = NULL, *reasons, *r, *primary;
	const char *v;
	size_t i;
	int status, ret = -1;

	fprintf(stderr, "loop: measuring the candidate against the best\n");
	if (run_self(NULL, args, out, log, &status))
		goto out;
	if (!(doc = json_load_file(out, 0, &jerr)) || !(v = json_string_value(json_object_get(doc, "verdict")))) {
		const char *e = doc ? json_string_value(json_object_get(doc, "error")) : NULL;

		add_reason(c, "compare failed: %s", e ? e : "no verdict (see compare.log)");
		reject(l, c, GATE_STAGE_COMPARE, VERDICT_ERROR);
		goto out;
	}
	reasons = json_object_get(doc, "reasons");
	json_array_foreach(reasons, i, r)
		if (json_is_string(r))
			add_reason(c, "%s", json_string_value(r));
	primary = json_object_get(doc, "primary");
	if (json_is_number(json_object_get(primary, "change_pct"))) {
		c->have_change = true;
		c->change_pct = json_number_value(json_object_get(primary, "change_pct"));
		c->ci_low = json_number_value(json_object_get(primary, "ci_low_pct"));
		c->ci_high = json_number_value(json_object_get(primary, "ci_high_pct"));
	}
	if (!strcmp(v, "keep")) {
		c->stage = GATE_STAGE_COMPARE;
		c->verdict = VERDICT_KEEP;
	} else {
		reject(l, c, output_changed(doc) ? GATE_STAGE_FINGERPRINT : GATE_STAGE_COMPARE,
		       !strcmp(v, "reject") ? VERDICT_REJECT : VERDICT_INCONCLUSIVE);
	}
	ret = 0;
out:
	json_decref(doc);
	free(conf);
	free(out);
	free(log);
	return ret;
}

/* Diff, build, test, compare: stop at the first that fails. */
static void evaluate(struct loop *l, struct cand *c)
{
	struct strbuf tail = STRBUF_INIT;

	if (c->agent_timed_out) {
		add_reason(c, "the agent was killed after [agent] timeout (%g s)", l->p.cf.agent_timeout_s);
		reject(l, c, GATE_STAGE_AGENT, VERDICT_ERROR);
	} else if (!WIFEXITED(c->agent_status) || WEXITSTATUS(c->agent_status)) {
		add_reason(c, "the agent failed (%s %d; see agent.log)",
			   WIFEXITED(c->agent_status) ? "exit status" : "signal",
			   WIFEXITED(c->agent_status) ? WEXITSTATUS(c->agent_status) : WTERMSIG(c->agent_status));
		reject(l, c, GATE_STAGE_AGENT, VERDICT_ERROR);
	} else if (c->no_candidate) {
		add_reason(c, "the agent said NO CANDIDATE");
		c->stage = GATE_STAGE_AGENT;
		c->verdict = VERDICT_NO_CANDIDATE;
	}
	if (c->verdict || check_diff(l, c))
		goto out;
	fprintf(stderr, "loop: building the candidate\n");
	if (*l->p.cf.build && shell_step(l->p.cf.build, c->tree.dir, l->p.cf.build_timeout_s, c->dir, "build.log", &tail)) {
		add_reason(c, "the build failed%s", tail.buf);
		reject(l, c, GATE_STAGE_BUILD, VERDICT_REJECT);
		goto out;
	}
	strbuf_reset(&tail);
	if (*l->p.cf.test && shell_step(l->p.cf.test, c->tree.dir, l->p.cf.gate_timeout_s, c->dir, "test.log", &tail)) {
		add_reason(c, "tests failed ('%s')%s", l->p.cf.test, tail.buf);
		reject(l, c, GATE_STAGE_TEST, VERDICT_REJECT);
		goto out;
	}
	if (compare_cand(l, c)) {
		add_reason(c, "compare could not run: %s", last_error());
		reject(l, c, GATE_STAGE_COMPARE, VERDICT_ERROR);
	}
out:
	strbuf_release(&tail);
}

/* Commit a keep on the branch; it becomes the best (its tree the new base). */
static int keep(struct loop *l, struct cand *c)
{
	const struct config_workload *w = &l->p.cf.workloads[l->p.cf.primary];
	struct strbuf msg = STRBUF_INIT;
	char *ref = xstrfmt("refs/heads/%s", l->branch), *sha;
	int ret = -1;

	loop_commit_message(c->have_prop ? c->prop.function : NULL,
			    c->have_prop && c->prop.title ? c->prop.title : (c->have_prop ? c->prop.hypothesis : NULL),
			    w->name, c->change_pct, &msg);
	if (l->git_identity ? git_run(c->tree.top, NULL, "commit the candidate", "commit", "-q", "-m",
				       msg.buf, NULL)
			    : git_run(c->tree.top, NULL, "commit the candidate", "-c", "user.name=hotloop",
				       "-c", "user.email=hotloop@localhost", "commit", "-q", "-m", msg.buf, NULL))
		goto out;
	if (!(sha = git_rev_parse(c->tree.top, "HEAD"))) {
		error("cannot read the commit just made in '%s'", c->tree.top);
		goto out;
	}
	if (git_run(l->p.top, NULL, "move the branch", "update-ref", ref, sha, l->best, NULL)) {
		free(sha);
		goto out;
	}
	c->commit = sha;
	free(l->best);
	l->best = xstrdup(sha);
	/* the candidate's tree, built and tested, is the new baseline */
	revs_remove(l->p.top, &l->base);
	revs_tree_release(&l->base);
	l->base = c->tree;
	memset(&c->tree, 0, sizeof(c->tree));
	fprintf(stderr, "loop: kept as %.12s on %s: %s\n", sha, l->branch, msg.buf);
	ret = 0;
out:
	strbuf_release(&msg);
	free(ref);
	return ret;
}

static json_t *cand_json(const struct cand *c, long round)
{
	json_t *o = json_object(), *reasons = json_array();
	char *copy = xstrdup(c->reasons.buf), *p, *save_ptr = NULL;

	for (p = strtok_r(copy, "\n", &save_ptr); p; p = strtok_r(NULL, "\n", &save_ptr))
		if (*p != ' ')
			json_array_append_new(reasons, json_string(p));
	free(copy);
	json_object_set_new(o, "round", json_integer(round));
	json_object_set_new(o, "lens", json_string(c->lens));
	json_object_set_new(o, "function", c->have_prop && c->prop.function ? json_string(c->prop.function) : json_null());
	json_object_set_new(o, "title", c->have_prop && c->prop.title ? json_string(c->prop.title) : json_null());
	json_object_set_new(o, "hypothesis", c->have_prop && c->prop.hypothesis ? json_string(c->prop.hypothesis) : json_null());
	json_object_set_new(o, "expected_gain_pct", c->have_prop && !isnan(c->prop.expected_gain_pct)
				? json_real(c->prop.expected_gain_pct) : json_null());
	json_object_set_new(o, "verdict", json_string(verdict_kind_name(cand_verdict(c))));
	json_object_set_new(o, "stage", json_string(gate_stage_name(cand_stage(c))));
	json_object_set_new(o, "reasons", reasons);
	json_object_set_new(o, "change_pct", c->have_change ? json_real(c->change_pct) : json_null());
	json_object_set_new(o, "ci_low_pct", c->have_change ? json_real(c->ci_low) : json_null());
	json_object_set_new(o, "ci_high_pct", c->have_change ? json_real(c->ci_high) : json_null());
	json_object_set_new(o, "commit", c->commit ? json_string(c->commit) : json_null());
	json_object_set_new(o, "agent_seconds", json_real(c->agent_seconds));
	json_object_set_new(o, "dir", json_string(c->dir));
	return o;
}

/* The agent's first line of output (a replay says it is one), or "". */
static void agent_says(const struct cand *c, struct strbuf *sb)
{
	char *log = path_in(c->dir, "agent.log");

	if (!access(log, R_OK) && read_file(sb, log, 1 << 16) >= 0) {
		size_t n = strcspn(sb->buf, "\n");

		strbuf_setlen(sb, n > 120 ? 120 : n);
	}
	free(log);
}

static void print_cand(const struct cand *c, long round)
{
	struct strbuf says = STRBUF_INIT;

	agent_says(c, &says);
	if (says.len)
		printf("agent: %s\n", says.buf);
	strbuf_release(&says);
	printf("round %ld (%s): ", round, c->lens);
	if (c->have_prop)
		printf("%s: %s", c->prop.function ? c->prop.function : "?",
		       c->prop.title ? c->prop.title : c->prop.hypothesis ? c->prop.hypothesis : "");
	else
		printf("(no proposal)");
	if (c->have_prop && !isnan(c->prop.expected_gain_pct))
		printf(" (expects %+.1f%%)", -fabs(c->prop.expected_gain_pct));
	printf("\n  %s", verdict_kind_name(cand_verdict(c)));
	if (c->have_change)
		printf(": %+.2f%% [%+.2f, %+.2f]", c->change_pct, c->ci_low, c->ci_high);
	printf(" (decided at: %s)\n", gate_stage_name(cand_stage(c)));
	{
		const char *p = c->reasons.buf;

		while (*p) {
			size_t n = strcspn(p, "\n");

			printf("    %.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
	}
	fflush(stdout);
}

static void cand_release(struct loop *l, struct cand *c)
{
	if (c->tree.top)
		revs_remove(l->p.top, &c->tree);
	revs_tree_release(&c->tree);
	free(c->dir);
	loop_proposal_release(&c->prop);
	strbuf_release(&c->reasons);
	free(c->commit);
}

/* ---- memory: the knowledge base and the store ------------------------------ */

static void store_note(struct loop *l, enum store_level level, const char *kind, const char *fmt, ...)
	ATTR_PRINTF(4, 5);
static void store_note(struct loop *l, enum store_level level, const char *kind, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!l->store)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (store_activity(l->store, l->store_id, level, kind, NULL, "%s", msg))
		warning("cannot add to the store's activity; going on");
}

/* The kb index for the prompt. */
static char *kb_index_of(struct loop *l)
{
	struct kb kb;
	struct strbuf sb = STRBUF_INIT;

	if (!kb_load(l->kb_dir, &kb))
		kb_index_text(&kb, 40, &sb);
	kb_release(&kb);
	if (!sb.len)
		strbuf_addstr(&sb, "(no attempts recorded yet)");
	return strbuf_detach(&sb, NULL);
}

/* The numbers against what the agent expected, for the kb's Results. */
static void results_text(const struct loop *l, const struct cand *c, struct strbuf *sb)
{
	const char *w = l->p.cf.workloads[l->p.cf.primary].name;
	double want = c->have_prop ? -fabs(c->prop.expected_gain_pct) : NAN;

	if (!c->have_change) {
		strbuf_addf(sb, "Not measured: it stopped at the %s stage.", gate_stage_name(cand_stage(c)));
		if (!isnan(want))
			strbuf_addf(sb, " The agent expected %+.1f%% on %s.", want, w);
		return;
	}
	strbuf_addf(sb, "Measured %+.2f%% on the primary workload '%s' (interval %+.2f%% to %+.2f%%).",
		    c->change_pct, w, c->ci_low, c->ci_high);
	if (isnan(want))
		strbuf_addstr(sb, " The agent gave no expected gain.");
	else if (c->ci_low <= want && want <= c->ci_high)
		strbuf_addf(sb, " The agent expected %+.1f%%: within the interval.", want);
	else
		strbuf_addf(sb, " The agent expected %+.1f%%: the measurement is %.1f points %s, so the "
			    "hypothesis %s.", want, fabs(c->change_pct - want),
			    c->change_pct > want ? "worse" : "better",
			    c->change_pct > want ? "overestimated the gain (or the change does not do what it says)"
						 : "underestimated the gain");
}

/* compare.json's runs as the store's measurements of a compare run. */
static int store_compare(struct loop *l, const struct cand *c, int64_t attempt_id)
{
	struct store_run r = STORE_RUN_INIT;
	struct store_measurement *m = NULL;
	char *path = path_in(c->dir, "compare.json"), *summary = NULL;
	json_t *doc, *runs, *run;
	json_error_t jerr;
	int64_t run_id;
	size_t i, n = 0;
	int ret = 0;

	if (access(path, R_OK) || !(doc = json_load_file(path, 0, &jerr))) {
		free(path);
		return 0;	/* nothing was measured */
	}
	runs = json_object_get(doc, "runs");
	{
		json_t *copy = json_deep_copy(doc);

		json_object_del(copy, "runs");
		summary = json_dumps(copy, JSON_COMPACT | JSON_REAL_PRECISION(15));
		json_decref(copy);
	}
	r.loop_id = l->store_id;
	r.attempt_id = attempt_id;
	r.kind = STORE_RUN_COMPARE;
	r.commit_sha = c->commit;
	r.workload = l->p.cf.workloads[l->p.cf.primary].name;
	r.metric = gate_metric_name(l->p.cf.rules.metric);
	r.finished_at = store_now();
	r.summary_json = summary;
	if (store_run_add(l->store, &r, &run_id)) {
		ret = -1;
		goto out;
	}
	m = xcalloc(json_array_size(runs) + 1, sizeof(*m));
	json_array_foreach(runs, i, run) {
		struct store_measurement *x = &m[n++];
		const char *side = json_string_value(json_object_get(run, "side"));
		json_t *v;

		*x = (struct store_measurement)STORE_MEASUREMENT_INIT;
		x->run_id = run_id;
		x->workload = json_string_value(json_object_get(run, "workload"));
		x->side = side && !strcmp(side, "cand") ? STORE_SIDE_CAND : STORE_SIDE_BASE;
		x->warmup = json_is_true(json_object_get(run, "warmup"));
		if (json_is_integer(v = json_object_get(run, "pair")))
			x->pair_index = json_integer_value(v);
		if (json_is_integer(v = json_object_get(run, "position")))
			x->position = json_integer_value(v);
		x->wall_s = json_number_value(json_object_get(run, "wall_s"));
		x->user_s = json_number_value(json_object_get(run, "user_s"));
		x->sys_s = json_number_value(json_object_get(run, "sys_s"));
		x->cpu_s = x->user_s + x->sys_s;
		x->max_rss_kib = json_integer_value(json_object_get(run, "max_rss_kib"));
		if (json_is_integer(v = json_object_get(run, "instructions")))
			x->instructions = json_integer_value(v);
		x->exit_status = json_integer_value(json_object_get(run, "exit_status"));
		if (json_is_integer(v = json_object_get(run, "signal")))
			x->signal = json_integer_value(v);
		if (json_is_number(v = json_object_get(run, "value")))
			x->value = json_number_value(v);
		if (!x->workload)
			n--;
	}
	ret = store_measurements_add(l->store, m, n);
out:
	free(m);
	free(summary);
	json_decref(doc);
	free(path);
	return ret;
}

/* Write the attempt up: a kb entry and a row in the store. Failures only warn. */
static void remember(struct loop *l, const struct cand *c, long round)
{
	struct kb_attempt a = { 0 };
	struct store_attempt sa = STORE_ATTEMPT_INIT;
	struct strbuf results = STRBUF_INIT, change = STRBUF_INIT, diff = STRBUF_INIT, title = STRBUF_INIT;
	char *copy = xstrdup(c->reasons.buf), *p, *save_ptr = NULL, *slug = NULL;
	char *dp = path_in(c->dir, "diff.patch");
	char **reasons = NULL;
	size_t nr = 0, alloc = 0;
	int64_t attempt_id = 0;

	for (p = strtok_r(copy, "\n", &save_ptr); p; p = strtok_r(NULL, "\n", &save_ptr))
		if (*p != ' ') {
			ALLOC_GROW(reasons, nr + 1, alloc);
			reasons[nr++] = p;
		}
	if (!access(dp, R_OK))
		read_file(&diff, dp, 4 << 20);
	results_text(l, c, &results);
	if (c->have_change)
		strbuf_addf(&change, "%+.1f%% %s on %s [%+.1f, %+.1f]", c->change_pct,
			    gate_metric_name(l->p.cf.rules.metric), l->p.cf.workloads[l->p.cf.primary].name,
			    c->ci_low, c->ci_high);
	if (c->have_prop && c->prop.title)
		strbuf_addstr(&title, c->prop.title);
	else if (c->have_prop && c->prop.function)
		strbuf_addf(&title, "%s, %s lens", c->prop.function, c->lens);
	else
		strbuf_addf(&title, "round %ld %s lens", round, c->lens);
	a.title = title.buf;
	a.function = c->have_prop ? c->prop.function : NULL;
	a.hypothesis = c->have_prop ? c->prop.hypothesis : NULL;
	a.lens = c->lens;
	a.agent = l->agent;
	a.expected_gain_pct = c->have_prop ? c->prop.expected_gain_pct : NAN;
	a.round = (int)round;
	a.verdict = cand_verdict(c);
	a.reasons = (const char *const *)reasons;
	a.nr_reasons = nr;
	a.results = results.buf;
	a.change = change.len ? change.buf : NULL;
	a.diff = diff.len ? diff.buf : NULL;
	a.commit = c->commit;
	a.when = time(NULL);
	if (kb_add(l->kb_dir, &a, &slug))
		warning("the attempt of round %ld was not written to the knowledge base", round);
	if (l->store) {
		sa.loop_id = l->store_id;
		sa.round = round;
		sa.lens = c->lens;
		sa.function = a.function;
		sa.hypothesis = a.hypothesis;
		if (c->have_prop && !isnan(c->prop.expected_gain_pct))
			sa.expected_gain_pct = c->prop.expected_gain_pct;
		sa.verdict = a.verdict;
		sa.reasons = reasons;
		sa.nr_reasons = nr;
		sa.stage = cand_stage(c);
		if (c->have_change) {
			sa.change_pct = c->change_pct;
			sa.ci_low_pct = c->ci_low;
			sa.ci_high_pct = c->ci_high;
		}
		sa.diff = a.diff;
		sa.commit_sha = c->commit;
		sa.kb_slug = slug;
		sa.agent_exit_status = WIFEXITED(c->agent_status) ? WEXITSTATUS(c->agent_status)
								   : 128 + WTERMSIG(c->agent_status);
		sa.agent_seconds = c->agent_seconds;
		sa.finished_at = store_now();
		if (store_attempt_add(l->store, &sa, &attempt_id) || store_compare(l, c, attempt_id))
			warning("the attempt of round %ld was not written whole to the store", round);
		store_note(l, c->commit ? STORE_INFO : STORE_WARN, "verdict", "round %ld (%s): %s at %s%s%s",
			   round, c->lens, verdict_kind_name(a.verdict), gate_stage_name(cand_stage(c)), nr ? ": " : "",
			   nr ? reasons[0] : "");
	}
	free(slug);
	free(reasons);
	free(copy);
	free(dp);
	strbuf_release(&results);
	strbuf_release(&change);
	strbuf_release(&diff);
	strbuf_release(&title);
}

/* ---- rounds -------------------------------------------------------------- */

/* One round: K agents at once, then each candidate judged alone. */
static int round_run(struct loop *l, long round, bool *stop)
{
	size_t k = l->parallel, best = SIZE_MAX;
	struct cand cands[MAX_PARALLEL] = { 0 };
	char *round_dir = xstrfmt("%s/round-%02ld", l->dir, round);
	pid_t pids[MAX_PARALLEL];
	char *kb_index = NULL;
	size_t nr_no = 0;
	int ret = -1;

	if (mkdir(round_dir, 0777) && errno != EEXIST) {
		error("cannot create '%s': %s", round_dir, strerror(errno));
		goto out_dir;
	}
	if (profile_best(l, round_dir))
		goto out_dir;
	kb_index = kb_index_of(l);
	store_note(l, STORE_INFO, "round-start", "round %ld: %zu agent%s", round, k, k == 1 ? "" : "s");
	for (size_t i = 0; i < k; i++) {
		struct cand *c = &cands[i];
		struct strbuf prompt = STRBUF_INIT;
		char role[8];

		strbuf_init(&c->reasons, 0);
		c->lens = l->lenses[((size_t)(round - 1) * k + i) % l->nr_lenses];
		c->dir = xstrfmt("%s/%zu-%s", round_dir, i + 1, c->lens);
		snprintf(role, sizeof(role), i ? "can%zu" : "cand", i);
		if (mkdir(c->dir, 0777) || revs_add(l->p.top, role, l->best, l->p.sub, &c->tree) ||
		    write_prompt(l, c, round, kb_index, &prompt)) {
			strbuf_release(&prompt);
			goto out;
		}
		save(c->dir, "prompt.md", prompt.buf, prompt.len);
		save(c->dir, "brief.md", l->brief_md, strlen(l->brief_md));
		strbuf_release(&prompt);
	}
	fprintf(stderr, "loop: round %ld: %zu agent%s at work\n", round, k, k == 1 ? "" : "s");
	for (size_t i = 0; i < k; i++) {
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] < 0) {
			error("cannot fork: %s", strerror(errno));
			goto out;
		}
		if (!pids[i]) {
			/* a killed loop's locks must die with it, not with its agents */
			close(l->lock_fd);
			close(l->wlock_fd);
			run_agent(l, &cands[i], round);
			_exit(0);
		}
	}
	for (size_t i = 0; i < k; i++) {
		bool forwarded = false;

		/* an interrupt reaches the agents: their runners stop them */
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			if (hl_cancelled() && !forwarded) {
				for (size_t j = 0; j < k; j++)
					kill(pids[j], SIGTERM);
				forwarded = true;
			}
	}
	for (size_t i = 0; i < k && !hl_cancelled(); i++) {
		struct cand *c = &cands[i];

		read_agent(c);
		evaluate(l, c);
		if (c->verdict == VERDICT_NO_CANDIDATE)
			nr_no++;
		if (c->verdict == VERDICT_KEEP && (best == SIZE_MAX || c->change_pct < cands[best].change_pct))
			best = i;
	}
	if (best != SIZE_MAX) {
		for (size_t i = 0; i < k; i++)
			if (i != best && cands[i].verdict == VERDICT_KEEP) {
				add_reason(&cands[i], "a better candidate won the round (%s, %+.2f%%)",
					   cands[best].lens, cands[best].change_pct);
				reject(l, &cands[i], GATE_STAGE_TOURNAMENT, VERDICT_REJECT);
			}
		if (keep(l, &cands[best])) {
			add_reason(&cands[best], "it could not be committed: %s", last_error());
			reject(l, &cands[best], GATE_STAGE_COMMIT, VERDICT_ERROR);
			best = SIZE_MAX;
		}
	}
	for (size_t i = 0; i < k; i++) {
		json_t *a = cand_json(&cands[i], round);
		char *s = json_dumps(a, JSON_INDENT(2) | JSON_REAL_PRECISION(15));

		if (s)
			save(cands[i].dir, "attempt.json", s, strlen(s));
		free(s);
		remember(l, &cands[i], round);
		json_array_append_new(l->attempts, a);
		if (!l->json)
			print_cand(&cands[i], round);
	}
	if (best != SIZE_MAX) {
		l->kept++;
		l->rejects_in_a_row = 0;
	} else {
		l->rejects_in_a_row++;
	}
	if (nr_no == k) {
		*stop = true;
		l->stop_reason = "the agent said NO CANDIDATE";
	}
	ret = 0;
out:
	for (size_t i = 0; i < k; i++)
		cand_release(l, &cands[i]);
	free(kb_index);
out_dir:
	free(round_dir);
	return ret;
}

/* The whole gain: a fresh worktree of where the branch started against the best. */
static json_t *final_measure(struct loop *l)
{
	struct revs_tree orig = { 0 };
	struct strbuf tail = STRBUF_INIT;
	char *conf = NULL, *out = path_in(l->dir, "final-compare.json"), *log = path_in(l->dir, "final-compare.log");
	json_t *doc = NULL, *res = NULL;
	json_error_t jerr;
	int status;

	if (!strcmp(l->orig, l->best))
		goto out;
	fprintf(stderr, "loop: measuring the start of the branch against the best, afresh\n");
	if (revs_add(l->p.top, "orig", l->orig, l->p.sub, &orig) ||
	    (*l->p.cf.build && shell_step(l->p.cf.build, orig.dir, l->p.cf.build_timeout_s, l->dir,
					"final-build.log", &tail)))
		goto out;
	conf = path_in(l->base.top, l->p.conf_rel);
	{
		const char *args[] = { "hotloop", "compare", "-f", conf, "--base", orig.dir, "--cand",
				       l->base.dir, "--no-build", "--no-test", "--json", NULL };

		if (run_self(NULL, args, out, log, &status) || !(doc = json_load_file(out, 0, &jerr)))
			goto out;
	}
	res = json_object_get(doc, "primary");
	if (res)
		json_incref(res);
out:
	json_decref(doc);
	if (orig.top)
		revs_remove(l->p.top, &orig);
	revs_tree_release(&orig);
	strbuf_release(&tail);
	free(conf);
	free(out);
	free(log);
	return res;
}

static void loop_release(struct loop *l)
{
	if (l->base.top)
		revs_remove(l->p.top, &l->base);
	revs_tree_release(&l->base);
	project_release(&l->p);
	free(l->dir);
	free(l->branch);
	free(l->orig);
	free(l->best);
	free(l->brief_md);
	free(l->targets);
	free(l->kb_dir);
	if (l->store)
		store_close(l->store);
	json_decref(l->attempts);
	json_decref(l->rejected_by);
}

/* The store is a record for the dashboard: the loop goes on without it. */
static void open_store(struct loop *l)
{
	struct store_loop sl = STORE_LOOP_INIT;
	char *path = xstrfmt("%s/.hotloop/hotloop.db", l->p.top);

	if (store_open(path, &l->store)) {
		warning("going on without the store '%s'", path);
		l->store = NULL;
	} else {
		sl.repo = l->p.top;
		sl.branch = l->branch;
		sl.base_commit = l->orig;
		sl.status = STORE_LOOP_RUNNING;
		sl.rounds_planned = l->rounds;
		if (store_loop_begin(l->store, &sl, &l->store_id)) {
			warning("going on without the store '%s'", path);
			store_close(l->store);
			l->store = NULL;
		}
	}
	store_note(l, STORE_INFO, "loop-start", "loop on %s from %.12s, %ld rounds at most, agent: %s",
		   l->branch, l->orig, l->rounds, l->agent);
	free(path);
}

static void close_store(struct loop *l, bool finished)
{
	if (!l->store)
		return;
	if (strcmp(l->orig, l->best))
		store_loop_set_best(l->store, l->store_id, l->best);
	store_loop_end(l->store, l->store_id, finished ? STORE_LOOP_FINISHED : STORE_LOOP_STOPPED,
		       l->stop_reason);
	store_note(l, STORE_INFO, "loop-end", "%zu kept; %s", l->kept, l->stop_reason);
	store_close(l->store);
	l->store = NULL;
}

static int parse_lenses(struct loop *l, const char *arg, char **copy)
{
	char *p, *save_ptr = NULL;

	*copy = xstrdup(arg);
	l->nr_lenses = 0;
	for (p = strtok_r(*copy, ", ", &save_ptr); p; p = strtok_r(NULL, ", ", &save_ptr)) {
		if (l->nr_lenses == ARRAY_SIZE(l->lenses))
			return error("too many lenses: at most %zu", ARRAY_SIZE(l->lenses));
		l->lenses[l->nr_lenses++] = p;
	}
	if (!l->nr_lenses)
		return error("invalid value '%s' for --lenses: expected names like algorithmic,locality", arg);
	return 0;
}

enum { OPT_ROUNDS = 256, OPT_AGENT, OPT_LENSES, OPT_PARALLEL, OPT_JSON };

int cmd_loop(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, OPT_ROUNDS },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "lenses", required_argument, NULL, OPT_LENSES },
		{ "parallel", required_argument, NULL, OPT_PARALLEL },
		{ "config", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct loop l = { 0 };
	const char *conf_file = NULL, *agent = NULL, *lenses = NULL;
	char *lens_copy = NULL;
	long rounds = 0, parallel = 1, round;
	bool json = false, stop = false;
	struct sigaction sa = { 0 }, old_int, old_term;
	int c, lock = -1, wlock = -1, ret = HL_EXIT_FAILURE;
	json_t *total = NULL;

	l.attempts = json_array();
	l.rejected_by = json_object();
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_ROUNDS:
			if ((rounds = parse_count("--rounds", optarg, 1, 10000)) < 0)
				goto out_usage;
			break;
		case OPT_AGENT:
			agent = optarg;
			break;
		case OPT_LENSES:
			lenses = optarg;
			break;
		case OPT_PARALLEL:
			if ((parallel = parse_count("--parallel", optarg, 1, MAX_PARALLEL)) < 0)
				goto out_usage;
			break;
		case 'f':
			conf_file = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		default:
			ret = usage_error("loop", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind < argc) {
		ret = usage_error("loop", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (load(&l, conf_file))
		goto out;
	l.agent = agent ? agent : l.p.cf.agent_command;
	if (!*l.agent) {
		error("no agent: set [agent] command in %s or pass --agent CMD (README: \"An agent\")",
		      l.p.conf_path);
		goto out;
	}
	l.rounds = rounds ? rounds : l.p.cf.rounds;
	if (lenses) {
		if (parse_lenses(&l, lenses, &lens_copy))
			goto out_usage;
	} else {
		for (size_t i = 0; i < l.p.cf.lenses.nr && i < ARRAY_SIZE(l.lenses); i++)
			l.lenses[l.nr_lenses++] = l.p.cf.lenses.v[i];
		if (!l.nr_lenses)
			l.lenses[l.nr_lenses++] = "algorithmic";
	}
	l.parallel = (size_t)parallel;
	l.json = json;
	/* Ctrl-C or SIGTERM: stop the running step, then clean up */
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if ((l.lock_fd = lock = project_lock(&l.p, PROJECT_LOCK_LOOP)) < 0 ||
	    (l.wlock_fd = wlock = project_lock(&l.p, PROJECT_LOCK_WORKTREES)) < 0 ||
	    revs_clean_stale(l.p.top) ||
	    start_branch(&l) || project_new_dir(&l.p, "loop", NULL, &l.dir, NULL) || !(l.kb_dir = project_kb_dir(&l.p))) {
		ret = hl_cancelled() ? 130 : HL_EXIT_FAILURE;
		goto out_signals;
	}
	open_store(&l);
	if (setup_base(&l)) {
		ret = hl_cancelled() ? 130 : HL_EXIT_FAILURE;
		goto out_signals;
	}
	for (round = 1; round <= l.rounds && !stop && !hl_cancelled(); round++) {
		if (round_run(&l, round, &stop))
			goto out_signals;
		if (!stop && l.rejects_in_a_row >= (size_t)l.p.cf.max_rejects_in_a_row) {
			stop = true;
			l.stop_reason = "max-rejects-in-a-row reached";
		}
	}
	/* from here on, cleanup must run to its end */
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (!l.stop_reason)
		l.stop_reason = hl_cancelled() ? "hl_cancelled()" : "all rounds done";
	total = hl_cancelled() ? NULL : final_measure(&l);
	close_store(&l, !strcmp(l.stop_reason, "all rounds done"));
	if (json) {
		json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:O, s:O, s:o}",
					"branch", l.branch, "start_commit", l.orig, "best_commit", l.best,
					"stop_reason", l.stop_reason, "rounds", (json_int_t)(round - 1),
					"kept", (json_int_t)l.kept, "rejected_by", l.rejected_by,
					"attempts", l.attempts, "total", total ? total : json_null());

		total = NULL;
		print_json(doc);
	} else {
		const char *key;
		json_t *v;

		printf("\n%s: %zu kept in %ld round%s (%s)\n", l.branch, l.kept, round - 1,
		       round == 2 ? "" : "s", l.stop_reason);
		json_object_foreach(l.rejected_by, key, v)
			printf("  dropped at %s: %lld\n", key, (long long)json_integer_value(v));
		if (total)
			printf("total on the primary, re-measured: %+.2f%% [%+.2f, %+.2f] (%.12s -> %.12s)\n",
			       json_number_value(json_object_get(total, "change_pct")),
			       json_number_value(json_object_get(total, "ci_low_pct")),
			       json_number_value(json_object_get(total, "ci_high_pct")), l.orig, l.best);
		else
			printf("no change kept: the branch is where it started (%.12s)\n", l.orig);
		printf("files: %s\n", l.dir);
	}
	ret = hl_cancelled() ? 130 : HL_EXIT_OK;
out_signals:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	goto out;
out_usage:
	ret = HL_EXIT_USAGE;
out:
	json_decref(total);
	loop_release(&l);
	if (wlock >= 0)
		close(wlock);
	if (lock >= 0)
		close(lock);
	free(lens_copy);
	return ret;
}
