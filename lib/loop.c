/*
 * loop.c: the improve loop's rounds (see loop.h). One round: profile the
 * best, give each agent a worktree and the prompt, wait for all of them,
 * judge each candidate alone (agent, diff, protected, then gate_run()),
 * commit the best keep, write every attempt up. The branch moves by
 * compare-and-swap; the user's tree, index and HEAD are never touched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "canary.h"
#include "catalog-brief.h"
#include "catalog-load.h"
#include "events.h"
#include "gate.h"
#include "git.h"
#include "integrity.h"
#include "json.h"
#include "kb.h"
#include "loop.h"
#include "project.h"
#include "revs.h"
#include "run-command.h"
#include "run.h"
#include "sandbox.h"
#include "strbuf.h"
#include "target.h"
#include "util.h"

/* An owned hotspot of a profile: its attributed share and samples. */
struct loop_hot {
	char *name;
	double share;			/* attributed, of the whole */
	double samples;			/* attributed samples */
};

/* The hotspots of a profile's brief, as the target stage and the target-gain check read them. */
struct loop_hots {
	struct loop_hot *v;
	size_t nr;
	double samples;			/* the profile's */
	double least;			/* the smallest attributed samples listed: an unlisted one has fewer */
	char **binaries;		/* the files holding them, NULL-terminated */
};

/* What one loop_run() holds while it runs. */
struct loop {
	const struct loop_spec *spec;
	const struct project *p;
	struct loop_result *r;
	const char *lenses[LOOP_MAX_LENSES];
	size_t nr_lenses;
	struct revs_tree base;		/* the current best, built and tested */
	char *base_dir;			/* the project's directory in it */
	char *brief_md;			/* of the current best */
	char *targets;			/* owned functions at or above min-share */
	struct loop_hots hots;		/* of the best's profile this round */
	char *kb_dir;
	int lock_fd, wlock_fd;
	bool sandbox;			/* agents, builds and tests in a sandbox (sandbox.h) */
	char **agent_writable;		/* [agent] writable, ~ expanded, NULL-terminated */
	char **gate_writable;		/* [gate] writable, the same */
	struct integrity integrity;	/* the user's repository as the loop found it */
};

/* A list of hotloop.conf's paths with ~ made $HOME, NULL-terminated. */
static char **expand_paths(const struct config_list *list)
{
	char **v = xcalloc(list->nr + 1, sizeof(*v));

	for (size_t i = 0; i < list->nr; i++)
		v[i] = sandbox_expand(list->v[i]);
	return v;
}

static void free_paths(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/*
 * The sandbox of a step in checkout t: an agent's (it may write the paths
 * of [agent] writable) or a build's or test's ([gate] writable). NULL when
 * the loop runs without one; release sb either way.
 */
static const struct sandbox *sandbox_of(const struct loop *l, const struct revs_tree *t, bool agent,
					struct sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
	if (!l->sandbox)
		return NULL;
	sandbox_init(sb, t->top, (const char *const *)(agent ? l->agent_writable : l->gate_writable), t->tmp);
	return sb;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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

static void event(const struct loop *l, enum event_kind kind, const struct attempt *a,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void event(const struct loop *l, enum event_kind kind, const struct attempt *a,
		  const char *fmt, ...)
{
	struct event ev = { .kind = kind, .source = "loop", .attempt = a, .loop = l->r };
	char msg[1024];
	va_list ap;

	if (a) {
		ev.round = a->round;
		ev.stage = a->stage;
		ev.verdict = a->verdict;
		ev.commit = a->commit;
		ev.gate = a->measured ? &a->gate : NULL;
	}
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		ev.message = msg;
	}
	emit(l->spec->obs, &ev);
}

/* ---- the pure parts ------------------------------------------------------ */

/* Is 'path' the same as or under 'dir' (both relative, '/'-separated)? */
static bool path_under(const char *path, const char *dir, size_t dlen)
{
	while (dlen && dir[dlen - 1] == '/')
		dlen--;
	if (!dlen)
		return true;
	return !strncmp(path, dir, dlen) && (path[dlen] == '/' || !path[dlen]);
}

const char *loop_protected_hit(const char *const *changed, size_t nr, const char *sub,
			       const struct config_list *protected_paths)
{
	size_t slen = strlen(sub);

	while (slen && sub[slen - 1] == '/')
		slen--;
	for (size_t i = 0; i < nr; i++) {
		const char *rel = changed[i];

		if (slen) {
			if (!path_under(rel, sub, slen) || !rel[slen])
				continue;	/* outside the project: not ours to judge */
			rel += slen + 1;
		}
		for (size_t k = 0; k < protected_paths->nr; k++) {
			const char *pp = protected_paths->v[k];

			while (pp[0] == '.' && pp[1] == '/')
				pp += 2;
			if (path_under(rel, pp, strlen(pp)))
				return changed[i];
		}
	}
	return NULL;
}

void loop_commit_message(const char *function, const char *title, const char *workload,
			 double change_pct, struct strbuf *out)
{
	int n;

	if (!title || !*title || *title == '\n')
		title = "faster";
	n = (int)strcspn(title, "\n");
	strbuf_addf(out, "perf: %s: %.*s%s (%s %+.1f%%)", function && *function ? function : "(unnamed)",
		    n > 100 ? 100 : n, title, n > 100 ? "..." : "", workload, change_pct);
}

/* ---- attempts -------------------------------------------------------------- */

static void attempt_init(struct attempt *a, long round, const char *lens)
{
	memset(a, 0, sizeof(*a));
	a->round = round;
	a->lens = lens;
	a->prop.expected_gain_pct = NAN;
	strbuf_init(&a->detail, 0);
	gate_result_init(&a->gate);
}

static void attempt_release(struct attempt *a)
{
	free(a->dir);
	free(a->agent_says);
	loop_proposal_release(&a->prop);
	for (size_t i = 0; i < a->nr_reasons; i++)
		free(a->reasons[i]);
	free(a->reasons);
	strbuf_release(&a->detail);
	free(a->diff);
	gate_result_release(&a->gate);
	free(a->commit);
	free(a->candidate);
	free(a->kb_slug);
	free(a->target);
	free(a->target_gain);
	revs_tree_release(&a->tree);
	revs_tree_release(&a->checkout);
}

static void add_reason(struct attempt *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_reason(struct attempt *a, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(a->reasons, a->nr_reasons + 1, a->alloc_reasons);
	a->reasons[a->nr_reasons++] = strbuf_detach(&sb, NULL);
}

/* Decided: count it under its stage when it is not a keep. */
static void decide(struct loop *l, struct attempt *a, enum gate_stage stage, enum verdict_kind v)
{
	struct loop_result *r = l->r;

	a->stage = stage;
	a->verdict = v;
	if (v == VERDICT_KEEP)
		return;
	if (!r->rejected_by[stage])
		r->rejected_order[r->nr_rejected_stages++] = stage;
	r->rejected_by[stage]++;
}

/*
 * Is the user's repository as the loop found it, and the loop's branch
 * where the loop put it? False when so. Else r->integrity says what
 * changed and 'when' (once: the first time tells), r->stop_reason says
 * so, and the loop stops.
 */
static bool broken(struct loop *l, const char *when)
{
	struct loop_result *r = l->r;
	struct git_repo g = { l->p->git_dir, NULL, NULL };
	struct strbuf what = STRBUF_INIT, sb = STRBUF_INIT;
	char *ref, *tip;

	if (r->integrity)
		return true;
	if (integrity_check(&l->integrity, &what, 20) < 0)
		strbuf_addf(&what, "it cannot be read: %s\n", last_error());
	ref = xstrfmt("refs/heads/%s", r->branch);
	tip = git_resolve(&g, ref);
	if (!tip || strcmp(tip, r->best))
		strbuf_addf(&what, "the loop's branch %s is at %s, not at %.12s where the loop put it\n",
			    r->branch, tip ? tip : "nothing (it was deleted)", r->best);
	free(tip);
	free(ref);
	if (!what.len) {
		strbuf_release(&what);
		return false;
	}
	strbuf_addf(&sb, "the user's repository changed %s:", when);
	for (const char *p = what.buf, *q; *p; p = q + 1) {
		q = strchrnul(p, '\n');
		strbuf_addf(&sb, "\n  %.*s", (int)(q - p), p);
		if (!*q)
			break;
	}
	r->integrity = strbuf_detach(&sb, NULL);
	r->stop_reason = "the user's repository changed";
	emit_note(l->spec->obs, "loop", "%s", r->integrity);
	strbuf_release(&what);
	return true;
}

/*
 * Kill what 'what' left running: the orphans the loop adopted. In the
 * sandbox there are none (they die with it); outside, a profiled workload
 * or an agent run with --no-sandbox may leave a daemon.
 */
static void kill_orphans(struct loop *l, const char *what)
{
	size_t n = kill_adopted();

	if (n)
		emit_note(l->spec->obs, "loop", "killed %zu process%s %s left running", n, n == 1 ? "" : "es",
			  what);
}

/* Every attempt of a round the repository changed in: rejected at integrity, none kept. */
static void reject_round(struct loop *l, struct attempt *a, size_t k)
{
	struct loop_result *r = l->r;

	for (size_t i = 0; i < k; i++) {
		if (a[i].verdict && a[i].verdict != VERDICT_KEEP)
			continue;
		add_reason(&a[i], "%s", r->integrity);
		decide(l, &a[i], GATE_STAGE_INTEGRITY, VERDICT_REJECT);
		event(l, EV_VERDICT, &a[i], NULL);
	}
}

/* ---- setup ---------------------------------------------------------------- */

/* .hotloop/rounds/<branch, '/' as '-'>: the last round run on the branch. Caller frees. */
static char *rounds_file(struct loop *l)
{
	char *dir = project_state_dir(l->p, "rounds"), *name = xstrdup(l->r->branch), *path = NULL;

	for (char *c = name; *c; c++)
		if (*c == '/')
			*c = '-';
	if (dir)
		path = xstrfmt("%s/%s", dir, name);
	free(dir);
	free(name);
	return path;
}

/* Where a continued branch's rounds left off: its last round (0: none known). */
static long last_round(struct loop *l)
{
	char *path = rounds_file(l), buf[32];
	ssize_t n = path ? read_small_file(path, buf, sizeof(buf)) : -1;
	long v = 0;

	if (n > 0) {
		char *end;

		buf[n < (ssize_t)sizeof(buf) ? n : (ssize_t)sizeof(buf) - 1] = '\0';
		errno = 0;
		v = strtol(buf, &end, 10);
		if (errno || end == buf || v < 0 || v > 100000000)
			v = 0;
	}
	free(path);
	return v;
}

static void save_round(struct loop *l, long round)
{
	char *path = rounds_file(l), buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", round);

	if (path && write_file_atomic(path, buf, (size_t)n))
		warning("the round number of %s was not saved: the next loop on it starts at round 1",
			l->r->branch);
	free(path);
}

/*
 * The branch hotloop/<date>: continued when it exists (its rounds numbered
 * on from where they left off; with --from, it must come from that commit),
 * else made at --from's commit or HEAD.
 */
static int start_branch(struct loop *l)
{
	struct loop_result *r = l->r;
	struct git_repo g = { l->p->git_dir, NULL, NULL };
	char date[16], *ref, *from = NULL;
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	r->branch = xstrfmt("hotloop/%s", date);
	if (l->spec->from) {
		char *spec = xstrfmt("%s^{commit}", l->spec->from);

		from = *l->spec->from == '-' ? NULL : git_resolve(&g, spec);
		free(spec);
		if (!from)
			return error("--from '%s' names no commit", l->spec->from);
	}
	ref = xstrfmt("refs/heads/%s", r->branch);
	r->best = git_resolve(&g, ref);
	r->first_round = 1;
	if (r->best) {
		r->first_round = last_round(l) + 1;
		emit_note(l->spec->obs, "loop", "continuing branch %s at %.12s, from round %ld", r->branch,
			  r->best, r->first_round);
		if (from && git_exec(&g, NULL, NULL, "merge-base", "--is-ancestor", from, r->best, NULL)) {
			free(ref);
			free(from);
			return error("branch %s (at %.12s) does not come from --from %s: delete it "
				     "(git branch -D %s) to start it there", r->branch, r->best,
				     l->spec->from, r->branch);
		}
	} else if (from) {
		/* the commit that ran (a production profile's), not HEAD */
		if (git_exec(&g, NULL, "create the branch", "update-ref", ref, from, "", NULL)) {
			free(ref);
			free(from);
			return error("cannot start branch %s at %s", r->branch, l->spec->from);
		}
		r->best = xstrdup(from);
		emit_note(l->spec->obs, "loop", "branch %s starts at %s (%.12s)", r->branch, l->spec->from,
			  r->best);
	} else {
		/* HEAD as the user's tree has it: the git directory of their work tree */
		if (!(r->best = git_rev_parse(l->p->top, "HEAD^{commit}")) ||
		    git_exec(&g, NULL, "create the branch", "update-ref", ref, r->best, "", NULL)) {
			free(ref);
			return error("cannot start branch %s at HEAD (does the repository have a commit?)",
				     r->branch);
		}
		emit_note(l->spec->obs, "loop", "branch %s starts at HEAD (%.12s)", r->branch, r->best);
	}
	free(from);
	r->start = xstrdup(r->best);
	free(ref);
	return 0;
}

/* A shell step of the loop's own (the baseline's build and tests): 0, or -1 with an error. */
static int base_step(struct loop *l, const char *what, const char *cmd, double timeout,
		     const char *log)
{
	struct strbuf how = STRBUF_INIT, tail = STRBUF_INIT;
	char *path = path_in(l->r->dir, log);
	struct sandbox sb;
	int ret = gate_shell_step(cmd, l->base_dir, timeout, sandbox_of(l, &l->base, false, &sb), path,
				  &how, &tail);

	sandbox_release(&sb);
	if (ret > 0)
		error("%s ('%s' in %s, %s)%s", what, cmd, l->base_dir, how.buf, tail.buf);
	strbuf_release(&how);
	strbuf_release(&tail);
	free(path);
	return ret ? -1 : 0;
}

/* A fresh checkout of the best, built and tested: the baseline of the rounds. */
static int setup_base(struct loop *l)
{
	const struct config *cf = &l->p->cf;

	if (revs_checkout(l->p, l->r->best, &l->base))
		return -1;
	l->base_dir = xstrdup(l->base.dir);
	emit_note(l->spec->obs, "loop", "building the baseline (%.12s)", l->r->best);
	if (*cf->build && base_step(l, "the baseline does not build", cf->build, cf->build_timeout_s,
				    "base-build.log"))
		return -1;
	if (*cf->test && base_step(l, "the baseline fails its own tests", cf->test, cf->gate_timeout_s,
				   "base-test.log"))
		return -1;
	return 0;
}

/* ---- the current best, profiled ------------------------------------------ */

static void hots_release(struct loop_hots *h)
{
	for (size_t i = 0; i < h->nr; i++)
		free(h->v[i].name);
	free(h->v);
	free_paths(h->binaries);
	memset(h, 0, sizeof(*h));
}

/* A brief's owned hotspots, copied (the brief and its profile go). */
static void hots_of(const struct brief *b, struct loop_hots *h)
{
	double per = b->total > 0 && b->samples ? (double)b->samples / (double)b->total : 1;
	size_t nb = 0;

	memset(h, 0, sizeof(*h));
	h->samples = b->samples ? (double)b->samples : (double)b->total;
	h->v = xcalloc(b->nr_hotspots + 1, sizeof(*h->v));
	h->binaries = xcalloc(b->nr_hotspots + 1, sizeof(*h->binaries));
	for (size_t i = 0; i < b->nr_hotspots; i++) {
		const struct brief_hotspot *bh = &b->hotspots[i];
		bool seen = false;

		h->v[h->nr].name = xstrdup(bh->function);
		h->v[h->nr].share = b->total > 0 ? (double)bh->attributed / (double)b->total : 0;
		h->v[h->nr].samples = (double)bh->attributed * per;
		if (!h->nr || h->v[h->nr].samples < h->least)
			h->least = h->v[h->nr].samples;
		h->nr++;
		if (!bh->binary || *bh->binary != '/')
			continue;
		for (size_t k = 0; k < nb && !seen; k++)
			seen = !strcmp(h->binaries[k], bh->binary);
		if (!seen)
			h->binaries[nb++] = xstrdup(bh->binary);
	}
}

static struct target_share *hots_shares(const struct loop_hots *h)
{
	struct target_share *v = xcalloc(h->nr + 1, sizeof(*v));

	for (size_t i = 0; i < h->nr; i++)
		v[i] = (struct target_share){ h->v[i].name, h->v[i].share };
	return v;
}

/*
 * The catalog's findings in the hotspots' code the brief shows, after it
 * (the shipped catalog and the project's catalog/). A catalog that does
 * not read is a warning: the prompt goes without.
 */
static void add_catalog_matches(struct loop *l, const struct brief *b, struct strbuf *md)
{
	struct catalog cat = CATALOG_INIT;
	char *shipped = catalog_shipped_dir(), *own = xstrfmt("%s/catalog", l->p->dir);
	const char *dirs[2];
	size_t nr = 0;
	struct stat st;

	if (shipped)
		dirs[nr++] = shipped;
	if (!stat(own, &st) && S_ISDIR(st.st_mode))
		dirs[nr++] = own;
	if (nr && (catalog_load_all(&cat, false, dirs, nr) || catalog_brief_matches(&cat, b, md) < 0))
		warning("the prompt goes without the catalog's matches: %s", last_error());
	catalog_release(&cat);
	free(shipped);
	free(own);
}

static int profile_best(struct loop *l, long round, const char *round_dir)
{
	const struct config *cf = &l->p->cf;
	struct run_request rq = { 0 };
	struct run_outcome out;
	struct strbuf t = STRBUF_INIT;
	int ret = -1;

	run_outcome_init(&out);
	rq.project = l->p;
	rq.workload = &cf->workloads[cf->primary];
	rq.dir = l->base_dir;
	rq.sampler = l->spec->sampler;
	rq.budget = brief_budget(l->p);
	rq.out_dir = round_dir;
	rq.source = "loop";
	rq.obs = l->spec->obs;
	if (run_workload(&rq, &out))
		goto out;	/* its error names the step */
	{
		struct event ev = { .kind = EV_PROFILED, .source = "loop", .round = round,
				    .commit = l->r->best, .workload = rq.workload->name,
				    .loop = l->r, .run = &out };

		emit(l->spec->obs, &ev);
	}
	add_catalog_matches(l, &out.brief, &out.brief_md);
	free(l->brief_md);
	l->brief_md = strbuf_detach(&out.brief_md, NULL);
	for (size_t i = 0; i < out.brief.nr_hotspots; i++) {
		const struct brief_hotspot *h = &out.brief.hotspots[i];
		double share = out.brief.total > 0 ? (double)h->attributed / (double)out.brief.total : 0;

		if (share >= cf->min_share)
			strbuf_addf(&t, "%s%s (%.1f%%)", t.len ? ", " : "", h->function, 100 * share);
	}
	free(l->targets);
	l->targets = t.len ? strbuf_detach(&t, NULL) : xstrdup("(none reaches it: say NO CANDIDATE)");
	hots_release(&l->hots);
	hots_of(&out.brief, &l->hots);
	ret = 0;
out:
	strbuf_release(&t);
	run_outcome_release(&out);
	return ret;
}

/* The kb index for the prompt. */
static char *kb_index_of(const struct loop *l)
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

static int write_prompt(const struct loop *l, const struct attempt *a, const char *kb_index,
			struct strbuf *prompt)
{
	const struct config *cf = &l->p->cf;
	struct strbuf tmpl = STRBUF_INIT, prot = STRBUF_INIT, wl = STRBUF_INIT;
	char rounds[24], roundstr[24], share[24], minimp[24], guard[24];
	int ret;

	if (*cf->agent_prompt) {
		char *p = *cf->agent_prompt == '/' ? xstrdup(cf->agent_prompt)
						   : path_in(l->base_dir, cf->agent_prompt);

		ret = read_file(&tmpl, p, 1 << 20);
		free(p);
		if (ret < 0)
			return -1;
	} else {
		strbuf_addstr(&tmpl, loop_default_prompt);
	}
	for (size_t i = 0; i < cf->protected_paths.nr; i++)
		strbuf_addf(&prot, "%s%s", i ? ", " : "", cf->protected_paths.v[i]);
	for (size_t i = 0; i < cf->nr_workloads; i++)
		strbuf_addf(&wl, "%s%s%s", i ? ", " : "", cf->workloads[i].name,
			    i == cf->primary ? " (primary)" : "");
	snprintf(rounds, sizeof(rounds), "%ld", l->r->first_round + l->r->rounds_planned - 1);
	snprintf(roundstr, sizeof(roundstr), "%ld", a->round);
	snprintf(share, sizeof(share), "%g%%", 100 * cf->min_share);
	snprintf(minimp, sizeof(minimp), "%g%%", 100 * cf->rules.min_improvement);
	snprintf(guard, sizeof(guard), "%g%%", 100 * cf->rules.guard_regression);
	{
		const struct loop_var vars[] = {
			{ "round", roundstr }, { "rounds", rounds }, { "min_share", share },
			{ "targets", l->targets }, { "protected", prot.buf },
			{ "test", *cf->test ? cf->test : "none configured" },
			{ "build", *cf->build ? cf->build : "none" }, { "workloads", wl.buf },
			{ "min_improvement", minimp }, { "guard_regression", guard },
			{ "lens", a->lens }, { "lens_hint", loop_lens_hint(a->lens) },
			{ "brief", l->brief_md }, { "kb", kb_index },
		};

		ret = loop_render(tmpl.buf, vars, ARRAY_SIZE(vars), prompt);
	}
	strbuf_release(&tmpl);
	strbuf_release(&prot);
	strbuf_release(&wl);
	return ret;
}

/* ---- the agents ------------------------------------------------------------ */

/* The agent's environment: the prompt, the brief, the round, the lens, its worktree, the proposal. */
static char **agent_env(const struct attempt *a)
{
	char **e = xcalloc(7, sizeof(*e));

	e[0] = xstrfmt("HOTLOOP_PROMPT=%s/prompt.md", a->dir);
	e[1] = xstrfmt("HOTLOOP_BRIEF=%s/brief.md", a->dir);
	e[2] = xstrfmt("HOTLOOP_ROUND=%ld", a->round);
	e[3] = xstrfmt("HOTLOOP_LENS=%s", a->lens);
	e[4] = xstrfmt("HOTLOOP_WORKTREE=%s", a->tree.dir);
	/* in the agent's own directory for temporary files: the one it may write beside its tree */
	e[5] = xstrfmt("HOTLOOP_PROPOSAL=%s/proposal.json", a->tree.tmp);
	return e;
}

/* What the agent left behind: its output, NO CANDIDATE, the proposal. */
static void read_agent(struct attempt *a, const struct child_process *cp, bool started)
{
	char *prop = path_in(a->tree.tmp, "proposal.json");
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	size_t n;

	a->agent_status = started ? cp->status : 126 << 8;
	a->agent_timed_out = cp->timed_out;
	a->agent_seconds = cp->seconds;
	save(a->dir, "agent.log", cp->out.buf, cp->out.len);
	a->no_candidate = loop_no_candidate(cp->out.buf);
	n = strcspn(cp->out.buf, "\n");
	{
		/* printed on the terminal: the agent's bytes, made harmless */
		struct strbuf says = STRBUF_INIT;

		strbuf_add_printable(&says, cp->out.buf, n, 120, false);
		a->agent_says = strbuf_detach(&says, NULL);
	}
	if (!access(prop, R_OK) && read_file(&sb, prop, 1 << 20) >= 0) {
		save(a->dir, "proposal.json", sb.buf, sb.len);
		if (loop_parse_proposal(sb.buf, sb.len, &a->prop, &why))
			add_reason(a, "the proposal in $HOTLOOP_PROPOSAL is unusable: %s", why.buf);
		else
			a->have_prop = true;
	}
	strbuf_release(&sb);
	strbuf_release(&why);
	free(prop);
}

/* Every agent of the round at once, each in its worktree; wait for them all. */
static int run_agents(struct loop *l, struct attempt *a, size_t k)
{
	struct child_process cps[LOOP_MAX_PARALLEL], *running[LOOP_MAX_PARALLEL];
	char **envs[LOOP_MAX_PARALLEL] = { 0 }, *prompts[LOOP_MAX_PARALLEL] = { 0 };
	struct sandbox sbs[LOOP_MAX_PARALLEL];
	bool started[LOOP_MAX_PARALLEL] = { 0 };
	size_t nr = 0;
	int ret = 0;

	for (size_t i = 0; i < k; i++) {
		struct child_process *cp = &cps[i];

		child_process_init(cp);
		envs[i] = agent_env(&a[i]);
		prompts[i] = path_in(a[i].dir, "prompt.md");
		cp->sandbox = sandbox_of(l, &a[i].tree, true, &sbs[i]);
		cp->shell = l->spec->agent;
		cp->dir = a[i].tree.dir;
		cp->in = prompts[i];
		cp->env = (const char *const *)envs[i];
		cp->timeout = l->p->cf.agent_timeout_s;
		cp->cancellable = true;
		cp->kill_leftovers = true;
		a[i].started_at = wall_now();
		if (start_command(cp)) {
			strbuf_addf(&cp->out, "hotloop: %s\n", last_error());
			continue;
		}
		started[i] = true;
		running[nr++] = cp;
	}
	if (nr && finish_commands(running, nr))
		ret = -1;
	for (size_t i = 0; i < k; i++) {
		read_agent(&a[i], &cps[i], started[i]);
		event(l, EV_AGENT_FINISHED, &a[i], NULL);
		child_process_release(&cps[i]);
		for (size_t j = 0; envs[i] && envs[i][j]; j++)
			free(envs[i][j]);
		free(envs[i]);
		free(prompts[i]);
		sandbox_release(&sbs[i]);
	}
	return ret;
}

/* ---- judging one candidate ---------------------------------------------------- */

/* Is 'path' (from the top) under one of the project's owned paths? Everything is, when none are named. */
static bool owned_path(const struct project *p, const char *path)
{
	const struct config_list *owned = &p->cf.owned;
	size_t slen = strlen(p->sub);

	if (!owned->nr)
		return true;
	if (slen) {
		if (!path_under(path, p->sub, slen) || !path[slen])
			return false;
		path += slen + 1;
	}
	for (size_t k = 0; k < owned->nr; k++) {
		const char *o = owned->v[k];

		while (o[0] == '.' && o[1] == '/')
			o += 2;
		if (!strcmp(o, ".") || path_under(path, o, strlen(o)))
			return true;
	}
	return false;
}

/*
 * The limits a change must keep before it is committed: no repository
 * inside it, no file over [improve] max-file-size, no binary file unless
 * allowed, nothing added outside [project] owned. 0, or -1 with every
 * offending path in the reasons.
 */
static int check_limits(struct loop *l, struct attempt *a, const struct revs_changes *c)
{
	const struct config *cf = &l->p->cf;
	size_t bad = 0;

	for (size_t i = 0; i < c->nr; i++) {
		const struct revs_change *x = &c->v[i];

		if (x->nested_repo) {
			add_reason(a, "'%s' is a repository of its own: a change holds files only", x->path);
		} else if (x->status == 'D') {
			continue;
		} else if (x->size > cf->max_file_size) {
			add_reason(a, "'%s' is %llu bytes, over [improve] max-file-size (%llu)", x->path,
				   (unsigned long long)x->size, (unsigned long long)cf->max_file_size);
		} else if (x->binary && !cf->allow_binary) {
			add_reason(a, "'%s' is a binary file ([improve] allow-binary = no)", x->path);
		} else if (x->status == 'A' && !owned_path(l->p, x->path)) {
			add_reason(a, "'%s' is a new file outside [project] owned", x->path);
		} else {
			continue;
		}
		bad++;
	}
	if (!bad)
		return 0;
	decide(l, a, GATE_STAGE_DIFF, VERDICT_REJECT);
	return -1;
}

static int check_target(struct loop *l, struct attempt *a);

/*
 * The agent's files as a commit (hotloop's own index of its tree: nothing
 * the agent does to git can hide a change), then the protected paths on
 * that commit's diff. 0 when the commit may go on to the gate.
 */
static int check_diff(struct loop *l, struct attempt *a)
{
	struct revs_changes changes;
	struct strbuf names = STRBUF_INIT, diff = STRBUF_INIT;
	const char **paths = NULL;
	size_t nr = 0, alloc = 0;
	const char *hit;
	char *p, *save_ptr = NULL, *msg;
	bool committed = revs_agent_committed(&a->tree);
	int ret = -1;

	if (revs_changes(l->p, &a->tree, &changes)) {
		add_reason(a, "the candidate's changes could not be read: %s", last_error());
		decide(l, a, GATE_STAGE_DIFF, VERDICT_ERROR);
		return -1;
	}
	if (!changes.nr) {
		add_reason(a, committed ? "the agent made commits but changed no file; hotloop takes "
					  "the tree, not the agent's commits" : "the agent changed nothing");
		decide(l, a, GATE_STAGE_DIFF, VERDICT_REJECT);
		goto out;
	}
	if (committed)
		add_reason(a, "the agent made commits; hotloop takes the tree");
	if (check_limits(l, a, &changes))
		goto out;
	msg = xstrfmt("candidate of round %ld (%s)", a->round, a->lens);
	ret = revs_commit(l->p, &a->tree, l->r->best, msg, &a->candidate);
	free(msg);
	if (ret || revs_diff(l->p, l->r->best, a->candidate, &diff, &names)) {
		add_reason(a, "the candidate could not be committed: %s", last_error());
		decide(l, a, GATE_STAGE_DIFF, VERDICT_ERROR);
		ret = -1;
		goto out;
	}
	ret = -1;
	save(a->dir, "diff.patch", diff.buf, diff.len);
	if (diff.len)
		a->diff = xstrdup(diff.buf);
	for (p = strtok_r(names.buf, "\n", &save_ptr); p; p = strtok_r(NULL, "\n", &save_ptr)) {
		ALLOC_GROW(paths, nr + 1, alloc);
		paths[nr++] = p;
	}
	if (!nr) {
		/* files that differ in their stat data only: nothing to commit */
		add_reason(a, "the agent changed nothing");
		decide(l, a, GATE_STAGE_DIFF, VERDICT_REJECT);
	} else if ((hit = loop_protected_hit(paths, nr, l->p->sub, &l->p->cf.protected_paths))) {
		add_reason(a, "it touches the protected path '%s' (protected: tests, benchmarks, "
			   "inputs and hotloop.conf may not change)", hit);
		decide(l, a, GATE_STAGE_PROTECTED, VERDICT_REJECT);
	} else {
		ret = check_target(l, a);
	}
out:
	free(paths);
	revs_changes_release(&changes);
	strbuf_release(&names);
	strbuf_release(&diff);
	return ret;
}

/* ---- the target stage ------------------------------------------------------------ */

#define TARGET_SOURCE_MAX (16 << 20)

/*
 * Each file's functions, in the best's checkout: the DWARF of the binaries
 * the best's profile ran (the functions and line table of each file), else,
 * for a file no binary covers, the C brace scanner on its source.
 */
static void target_functions(struct loop *l, const struct target_diff *d, struct target_fns *fns)
{
	char **abs = xcalloc(d->nr + 1, sizeof(*abs));
	bool *found = xcalloc(d->nr + 1, sizeof(*found));
	char *top = realpath(l->base.top, NULL);
	size_t tlen = top ? strlen(top) : 0;

	for (size_t i = 0; i < d->nr; i++) {
		const struct target_file *f = &d->files[i];
		char *p = xstrfmt("%s/%s", l->base.top, f->path);
		struct stat st;

		/* only the best's own regular files: a symbolic link is not read, nor what one leads to */
		if (top && f->status != 'A' && f->status != 'B' && *f->path && !lstat(p, &st) &&
		    S_ISREG(st.st_mode))
			abs[i] = realpath(p, NULL);
		if (abs[i] && (strncmp(abs[i], top, tlen) || abs[i][tlen] != '/')) {
			free(abs[i]);
			abs[i] = NULL;
		}
		if (!abs[i])
			abs[i] = xstrdup("");
		free(p);
	}
	free(top);
	for (size_t b = 0; l->hots.binaries && l->hots.binaries[b]; b++)
		if (target_dwarf_functions(l->hots.binaries[b], (const char *const *)abs, d->nr, fns, found) < 0)
			clear_last_error();
	for (size_t i = 0; i < d->nr; i++) {
		struct strbuf src = STRBUF_INIT;
		struct stat st;

		if (!found[i] && *abs[i] && !stat(abs[i], &st) && st.st_size <= TARGET_SOURCE_MAX &&
		    read_file(&src, abs[i], TARGET_SOURCE_MAX) >= 0)
			target_scan_source(src.buf, src.len, &fns[i]);
		strbuf_release(&src);
		target_fns_sort(&fns[i]);
		free(abs[i]);
	}
	free(abs);
	free(found);
}

/*
 * The target stage, before anything is built: the functions the candidate
 * changes against the best, with their shares of the best's profile. 0
 * when the largest share reaches [improve] min-share (or min-share is 0);
 * else rejected, the reason naming what it changed and the bar.
 */
static int check_target(struct loop *l, struct attempt *a)
{
	const struct config *cf = &l->p->cf;
	struct git_repo g = { l->p->git_dir, NULL, NULL };
	struct strbuf diff = STRBUF_INIT, why = STRBUF_INIT, what = STRBUF_INIT;
	struct target_diff d;
	struct target_fns *fns;
	struct target_result tr;
	struct target_share *shares;
	double bar = cf->min_share;
	int ret = -1;

	if (git_exec(&g, &diff, "diff the candidate", "diff-tree", "-r", "-p", "-U0", "--no-renames",
		     "--no-commit-id", l->r->best, a->candidate, NULL) ||
	    target_parse_diff(diff.buf, diff.len, &d, &why)) {
		add_reason(a, "target: the candidate's diff could not be read: %s", why.len ? why.buf : last_error());
		decide(l, a, GATE_STAGE_TARGET, VERDICT_ERROR);
		strbuf_release(&diff);
		strbuf_release(&why);
		return -1;
	}
	fns = xcalloc(d.nr + 1, sizeof(*fns));
	target_functions(l, &d, fns);
	shares = hots_shares(&l->hots);
	target_classify(&d, fns, shares, l->hots.nr, &tr);
	if (tr.nr && tr.changed[0].known) {
		a->target = xstrdup(tr.changed[0].function);
		a->target_share = tr.changed[0].share;
	}
	target_changed_text(&tr, 5, &what);
	if (bar <= 0 || (tr.nr && tr.changed[0].share >= bar)) {
		ret = 0;
	} else if (tr.nr == 1) {
		add_reason(a, "target: changed only %s, under [improve] min-share %g%%", what.buf, 100 * bar);
	} else if (tr.nr) {
		add_reason(a, "target: changed %s: none reaches [improve] min-share %g%%", what.buf, 100 * bar);
	} else {
		strbuf_reset(&what);
		for (size_t i = 0; i < tr.nr_outside && i < 5; i++)
			strbuf_addf(&what, "%s%s", i ? ", " : "", tr.outside[i]);
		if (tr.nr_outside > 5)
			strbuf_addf(&what, " and %zu more", tr.nr_outside - 5);
		add_reason(a, "target: changed no function (%s): a change must edit an owned function at or "
			   "above [improve] min-share %g%%", what.buf, 100 * bar);
	}
	if (ret)
		decide(l, a, GATE_STAGE_TARGET, VERDICT_REJECT);
	else if (tr.nr)
		emit_note(l->spec->obs, "loop", "target: %s", what.buf);
	for (size_t i = 0; i < d.nr; i++)
		target_fns_release(&fns[i]);
	free(fns);
	free(shares);
	target_result_release(&tr);
	target_diff_release(&d);
	strbuf_release(&diff);
	strbuf_release(&why);
	strbuf_release(&what);
	return ret;
}

/*
 * A keep: did its target get cheaper? The candidate's primary profiled as
 * the best's was (into its directory's profile/), the target's attributed
 * samples against the best's, scaled by the primary's measured change.
 * The line goes to the reasons (the verdict, the kb, the store); with
 * [improve] require-target-gain = yes a target that did not get cheaper
 * rejects the keep at the target stage.
 */
static void check_target_gain(struct loop *l, struct attempt *a)
{
	const struct config *cf = &l->p->cf;
	struct run_request rq = { 0 };
	struct run_outcome out;
	struct loop_hots ch = { 0 };
	struct target_share *bs = NULL, *cs = NULL;
	const struct target_share *b1, *c1;
	struct target_gain g;
	struct sandbox sb = SANDBOX_INIT;
	char *dir;

	if (!a->target || a->verdict != VERDICT_KEEP || !a->have_change)
		return;
	if (l->sandbox && cf->workloads[cf->primary].scenario) {
		/* a scenario's service is not profiled in a sandbox: a candidate's code runs in one */
		a->target_gain = xstrfmt("target %s: not checked (the primary is judged by a scenario, "
					 "which is not profiled in the sandbox)", a->target);
		add_reason(a, "%s", a->target_gain);
		return;
	}
	dir = path_in(a->dir, "profile");
	run_outcome_init(&out);
	rq.project = l->p;
	rq.workload = &cf->workloads[cf->primary];
	rq.dir = a->checkout.dir;
	rq.sampler = l->spec->sampler;
	rq.budget = brief_budget(l->p);
	rq.out_dir = dir;
	rq.source = "loop";
	rq.obs = l->spec->obs;
	/* not kept yet: its code runs in its own sandbox, as its measured runs did */
	rq.sandbox = sandbox_of(l, &a->checkout, false, &sb);
	emit_note(l->spec->obs, "loop", "profiling the candidate: did %s get cheaper?", a->target);
	if ((mkdir(dir, 0777) && errno != EEXIST) || run_workload(&rq, &out)) {
		a->target_gain = xstrfmt("target %s: the candidate could not be profiled (%s), so whether it "
					 "got cheaper is not known", a->target, last_error());
		goto out;
	}
	hots_of(&out.brief, &ch);
	bs = hots_shares(&l->hots);
	cs = hots_shares(&ch);
	b1 = target_share_find(a->target, bs, l->hots.nr);
	c1 = target_share_find(a->target, cs, ch.nr);
	target_gain_estimate(b1 ? l->hots.v[b1 - bs].samples : 0, l->hots.samples,
			     c1 ? ch.v[c1 - cs].samples : ch.least, ch.samples,
			     a->change_pct, a->ci_low, a->ci_high, &g);
	if (isnan(g.ratio)) {
		a->target_gain = xstrfmt("target %s: not in the best's profile, so whether it got cheaper is "
					 "not known", a->target);
		goto out;
	}
	a->target_cheaper = g.cheaper;
	a->target_gain = xstrfmt("target %s: %.1f%% -> %s%.1f%% of the samples (%+.1f pts); its CPU %.2gx "
				 "the best's (interval %.2g to %.2g: its share times the primary's %+.1f%%): %s",
				 a->target, 100 * g.share_best, c1 ? "" : "at most ", 100 * g.share_cand,
				 100 * (g.share_cand - g.share_best), g.ratio, g.ratio_low, g.ratio_high,
				 a->change_pct, g.cheaper ? "cheaper" :
				 "did not get cheaper (the gain came from elsewhere)");
out:
	if (a->target_gain && !a->target_cheaper && cf->require_target_gain) {
		add_reason(a, "%s; [improve] require-target-gain = yes", a->target_gain);
		decide(l, a, GATE_STAGE_TARGET, VERDICT_REJECT);
	} else if (a->target_gain) {
		add_reason(a, "%s", a->target_gain);
	}
	free(bs);
	free(cs);
	hots_release(&ch);
	run_outcome_release(&out);
	sandbox_release(&sb);
	free(dir);
}

/*
 * [gate] canary: a keep's service against the best's, both built, each in
 * its own sandbox, under the same load (canary_run(); its files in the
 * attempt's canary/). A fail rejects the keep at the canary stage, with
 * the canary's reason; no verdict (the best's service would not run) is
 * an error: nothing unjudged is kept.
 */
static void canary_candidate(struct loop *l, struct attempt *a)
{
	const struct config *cf = &l->p->cf;
	const struct config_canary *k = config_find_canary(cf, cf->gate_canary);
	struct canary_spec spec = { .conf = k, .observer = l->spec->obs };
	struct sandbox base_sb, cand_sb;
	struct canary_result r;
	int ret;

	if (!k || a->verdict != VERDICT_KEEP)
		return;
	spec.builds[CANARY_BASE] = (struct canary_build){
		.dir = l->base_dir, .sandbox = sandbox_of(l, &l->base, false, &base_sb),
	};
	spec.builds[CANARY_CAND] = (struct canary_build){
		.dir = a->checkout.dir, .sandbox = sandbox_of(l, &a->checkout, false, &cand_sb),
	};
	spec.out_dir = path_in(a->dir, "canary");
	canary_result_init(&r);
	ret = canary_run(&spec, &r);
	sandbox_release(&base_sb);
	sandbox_release(&cand_sb);
	if (canary_write_files(&r, k->name, spec.out_dir))
		warning("%s", last_error());
	if (ret) {
		add_reason(a, "the canary '%s' gave no verdict: %s", k->name,
			   r.sides[CANARY_BASE].problem ? r.sides[CANARY_BASE].problem : last_error());
		decide(l, a, GATE_STAGE_CANARY, VERDICT_ERROR);
	} else if (r.verdict == JUDGE_VERDICT_FAIL) {
		add_reason(a, "the canary '%s' failed: %s", k->name, r.reason ? r.reason : "");
		decide(l, a, GATE_STAGE_CANARY, VERDICT_REJECT);
	} else {
		add_reason(a, "the canary '%s': %s, %s", k->name, judge_verdict_name(r.verdict),
			   r.reason ? r.reason : "");
	}
	canary_result_release(&r);
	free((char *)spec.out_dir);
}

/*
 * The candidate against the best: gate_run() on a fresh checkout of exactly
 * the candidate's commit (what is measured is what would be kept) and the
 * best's checkout, built already.
 */
static void gate_candidate(struct loop *l, struct attempt *a)
{
	struct gate_spec spec = GATE_SPEC_INIT;
	struct sandbox base_sb, cand_sb;
	const struct verdict_estimate *e;
	int ret;

	if (revs_checkout(l->p, a->candidate, &a->checkout)) {
		add_reason(a, "the candidate's commit could not be checked out: %s", last_error());
		decide(l, a, GATE_STAGE_DIFF, VERDICT_ERROR);
		return;
	}
	if (gate_spec_from_project(&spec, l->p, l->base_dir, a->checkout.dir)) {
		add_reason(a, "the gate could not be set up: %s", last_error());
		decide(l, a, GATE_STAGE_COMPARE, VERDICT_ERROR);
		goto out;
	}
	spec.source = "loop";
	spec.build_base = false;
	spec.log_dir = a->dir;
	spec.obs = l->spec->obs;
	spec.base_sandbox = sandbox_of(l, &l->base, false, &base_sb);
	spec.cand_sandbox = sandbox_of(l, &a->checkout, false, &cand_sb);
	ret = gate_run(&spec, &a->gate);
	sandbox_release(&base_sb);
	sandbox_release(&cand_sb);
	if (ret) {
		add_reason(a, "compare could not run: %s", last_error());
		decide(l, a, GATE_STAGE_COMPARE, VERDICT_ERROR);
		goto out;
	}
	for (size_t i = 0; i < a->gate.nr_reasons; i++)
		add_reason(a, "%s", a->gate.reasons[i]);
	strbuf_add(&a->detail, a->gate.detail.buf, a->gate.detail.len);
	a->measured = a->gate.measured;
	if (!gate_primary(&a->gate, &e)) {
		a->have_change = true;
		a->change_pct = e->change_pct;
		a->ci_low = e->ci_low_pct;
		a->ci_high = e->ci_high_pct;
	}
	if (a->gate.measured || a->gate.test == VD_TEST_FAILED) {
		json_t *doc = gate_result_to_json(&a->gate);
		char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));

		if (text)
			save(a->dir, "compare.json", text, strlen(text));
		free(text);
		json_decref(doc);
	}
	decide(l, a, a->gate.stage, a->gate.verdict);
	check_target_gain(l, a);
	canary_candidate(l, a);
out:
	gate_spec_release(&spec);
}

/* The agent's exit, then the diff, then the gate: the first that fails decides. */
static void evaluate(struct loop *l, struct attempt *a)
{
	if (a->agent_timed_out) {
		add_reason(a, "the agent was killed after [agent] timeout (%g s)", l->p->cf.agent_timeout_s);
		decide(l, a, GATE_STAGE_AGENT, VERDICT_ERROR);
	} else if (!WIFEXITED(a->agent_status) || WEXITSTATUS(a->agent_status)) {
		add_reason(a, "the agent failed (%s %d; see agent.log)",
			   WIFEXITED(a->agent_status) ? "exit status" : "signal",
			   WIFEXITED(a->agent_status) ? WEXITSTATUS(a->agent_status) : WTERMSIG(a->agent_status));
		decide(l, a, GATE_STAGE_AGENT, VERDICT_ERROR);
	} else if (a->no_candidate) {
		add_reason(a, "the agent said NO CANDIDATE");
		decide(l, a, GATE_STAGE_AGENT, VERDICT_NO_CANDIDATE);
	}
	if (a->verdict || check_diff(l, a))
		return;
	gate_candidate(l, a);
}

/*
 * Keep: the candidate's tree, as measured, with its final message, on the
 * branch (compare-and-swap); its checkout, built and tested, is the new best.
 */
static int keep(struct loop *l, struct attempt *a)
{
	const struct config_workload *w = &l->p->cf.workloads[l->p->cf.primary];
	struct git_repo g = { l->p->git_dir, NULL, NULL };
	struct loop_result *r = l->r;
	struct strbuf msg = STRBUF_INIT;
	char *ref = xstrfmt("refs/heads/%s", r->branch), *sha = NULL;
	int ret = -1;

	loop_commit_message(a->have_prop ? a->prop.function : NULL,
			    a->have_prop && a->prop.title ? a->prop.title : (a->have_prop ? a->prop.hypothesis : NULL),
			    w->name, a->change_pct, &msg);
	if (revs_recommit(l->p, a->candidate, r->best, msg.buf, &sha) ||
	    git_exec(&g, NULL, "move the branch", "update-ref", ref, sha, r->best, NULL)) {
		free(sha);
		goto out;
	}
	a->commit = sha;
	free(r->best);
	r->best = xstrdup(sha);
	revs_remove(&l->base);
	revs_tree_release(&l->base);
	l->base = a->checkout;
	memset(&a->checkout, 0, sizeof(a->checkout));
	free(l->base_dir);
	l->base_dir = xstrdup(l->base.dir);
	event(l, EV_KEPT, a, "kept as %.12s on %s: %s", sha, r->branch, msg.buf);
	ret = 0;
out:
	strbuf_release(&msg);
	free(ref);
	return ret;
}

/* ---- writing an attempt up --------------------------------------------------- */

/* The metric rules' medians and the heap peak of a measured attempt, one line each. */
static void attempt_metrics_text(const struct attempt *a, struct strbuf *sb)
{
	const struct verdict *v = &a->gate.v;

	if (!a->measured)
		return;
	if (v->nr_metrics || v->memory.heap_measured)
		strbuf_addch(sb, '\n');
	for (size_t i = 0; i < v->nr_metrics; i++) {
		const struct verdict_metric *m = &v->metrics[i];

		strbuf_addf(sb, "\nMetric '%s' on '%s': %.15g to %.15g", m->name, m->workload,
			    m->base, m->cand);
		if (!isnan(m->change_pct))
			strbuf_addf(sb, " (%+.1f%%)", m->change_pct);
		strbuf_addf(sb, ", %s its %g%% tolerance (%s is better).",
			    m->ok ? "within" : "beyond", m->tolerance_pct,
			    m->higher_is_better ? "higher" : "lower");
	}
	if (v->memory.heap_measured)
		strbuf_addf(sb, "\nHeap peak: %" PRIu64 " KiB baseline, %" PRIu64 " KiB candidate%s.",
			    v->memory.base_heap_peak / 1024, v->memory.cand_heap_peak / 1024,
			    v->memory.budget_kb && v->memory.on == GATE_RAM_HEAP ?
			    (v->memory.ok ? ", within the ram budget" : ", over the ram budget") : "");
}

void attempt_results_text(const struct attempt *a, const char *w, struct strbuf *sb)
{
	double want = a->have_prop ? -fabs(a->prop.expected_gain_pct) : NAN;

	if (!a->have_change) {
		strbuf_addf(sb, "Not measured: it stopped at the %s stage.",
			    gate_stage_name(a->stage ? a->stage : GATE_STAGE_AGENT));
		if (!isnan(want))
			strbuf_addf(sb, " The agent expected %+.1f%% on %s.", want, w);
		return;
	}
	strbuf_addf(sb, "Measured %+.2f%% on the primary workload '%s' (interval %+.2f%% to %+.2f%%).",
		    a->change_pct, w, a->ci_low, a->ci_high);
	if (isnan(want))
		strbuf_addstr(sb, " The agent gave no expected gain.");
	else if (a->ci_low <= want && want <= a->ci_high)
		strbuf_addf(sb, " The agent expected %+.1f%%: within the interval.", want);
	else
		strbuf_addf(sb, " The agent expected %+.1f%%: the measurement is %.1f points %s, so the "
			    "hypothesis %s.", want, fabs(a->change_pct - want),
			    a->change_pct > want ? "worse" : "better",
			    a->change_pct > want ? "overestimated the gain (or the change does not do what it says)"
						 : "underestimated the gain");
	if (a->target_gain)
		strbuf_addf(sb, "\n\nThe %s.", a->target_gain);
	attempt_metrics_text(a, sb);
}

/* The kb entry; then EV_ATTEMPT, for the store and whoever else keeps attempts. */
static void remember(struct loop *l, struct attempt *a)
{
	const struct config *cf = &l->p->cf;
	const char *w = cf->workloads[cf->primary].name;
	struct kb_attempt ka = { 0 };
	struct strbuf results = STRBUF_INIT, change = STRBUF_INIT, title = STRBUF_INIT;

	attempt_results_text(a, w, &results);
	if (a->have_change)
		strbuf_addf(&change, "%+.1f%% %s on %s [%+.1f, %+.1f]", a->change_pct,
			    gate_metric_name(cf->rules.metric), w, a->ci_low, a->ci_high);
	if (a->have_prop && a->prop.title)
		strbuf_addstr(&title, a->prop.title);
	else if (a->have_prop && a->prop.function)
		strbuf_addf(&title, "%s, %s lens", a->prop.function, a->lens);
	else
		strbuf_addf(&title, "round %ld %s lens", a->round, a->lens);
	ka.title = title.buf;
	ka.function = a->have_prop ? a->prop.function : NULL;
	ka.hypothesis = a->have_prop ? a->prop.hypothesis : NULL;
	ka.lens = a->lens;
	ka.agent = l->spec->agent;
	ka.expected_gain_pct = a->have_prop ? a->prop.expected_gain_pct : NAN;
	ka.round = (int)a->round;
	ka.verdict = a->verdict;
	ka.reasons = (const char *const *)a->reasons;
	ka.nr_reasons = a->nr_reasons;
	ka.results = results.buf;
	ka.change = change.len ? change.buf : NULL;
	ka.diff = a->diff;
	ka.commit = a->commit;
	ka.when = time(NULL);
	if (kb_add(l->kb_dir, &ka, &a->kb_slug))
		warning("the attempt of round %ld was not written to the knowledge base", a->round);
	a->finished_at = wall_now();
	event(l, EV_ATTEMPT, a, NULL);
	strbuf_release(&results);
	strbuf_release(&change);
	strbuf_release(&title);
}

/* ---- rounds -------------------------------------------------------------- */

/* One round: K agents at once, then each candidate judged alone; *stop on NO CANDIDATE from all. */
static int round_run(struct loop *l, long round, bool *stop)
{
	struct loop_result *r = l->r;
	size_t k = l->spec->parallel ? l->spec->parallel : 1, best = SIZE_MAX, nr_no = 0;
	struct attempt a[LOOP_MAX_PARALLEL];
	char *round_dir = xstrfmt("%s/round-%02ld", r->dir, round), *kb_index = NULL;
	bool written = false;
	int ret = -1;

	for (size_t i = 0; i < k; i++)
		attempt_init(&a[i], round, l->lenses[((size_t)(round - 1) * k + i) % l->nr_lenses]);
	if (mkdir(round_dir, 0777) && errno != EEXIST) {
		error("cannot create '%s': %s", round_dir, strerror(errno));
		goto out;
	}
	if (profile_best(l, round, round_dir))
		goto out;
	/* the best ran outside the sandbox */
	kill_orphans(l, "the best's workload");
	if (broken(l, "while the best so far was built, tested and profiled")) {
		*stop = true;
		ret = 0;
		goto out;
	}
	kb_index = kb_index_of(l);
	{
		struct event ev = { .kind = EV_ROUND_STARTED, .source = "loop", .round = round,
				    .total = k, .loop = r };
		char msg[128];

		snprintf(msg, sizeof(msg), "round %ld: %zu agent%s at work", round, k, k == 1 ? "" : "s");
		ev.message = msg;
		emit(l->spec->obs, &ev);
	}
	for (size_t i = 0; i < k; i++) {
		struct strbuf prompt = STRBUF_INIT;

		a[i].dir = xstrfmt("%s/%zu-%s", round_dir, i + 1, a[i].lens);
		if (mkdir(a[i].dir, 0777)) {
			error("cannot create '%s': %s", a[i].dir, strerror(errno));
			goto out;
		}
		if (revs_checkout(l->p, r->best, &a[i].tree) || revs_agent_repo(l->p, &a[i].tree) ||
		    write_prompt(l, &a[i], kb_index, &prompt)) {
			strbuf_release(&prompt);
			goto out;
		}
		save(a[i].dir, "prompt.md", prompt.buf, prompt.len);
		save(a[i].dir, "brief.md", l->brief_md, strlen(l->brief_md));
		strbuf_release(&prompt);
	}
	if (run_agents(l, a, k))
		goto out;
	kill_orphans(l, k == 1 ? "the agent" : "the agents");
	broken(l, k == 1 ? "while the agent ran" : "while the agents ran");
	for (size_t i = 0; i < k && !hl_cancelled() && !r->integrity; i++) {
		char when[96];

		evaluate(l, &a[i]);
		kill_orphans(l, "the candidate's build, tests or runs");
		snprintf(when, sizeof(when), "while candidate %zu of round %ld was built, tested and measured",
			 i + 1, round);
		if (broken(l, when))
			break;
		event(l, EV_VERDICT, &a[i], NULL);
		if (a[i].verdict == VERDICT_NO_CANDIDATE)
			nr_no++;
		if (a[i].verdict == VERDICT_KEEP && (best == SIZE_MAX || a[i].change_pct < a[best].change_pct))
			best = i;
	}
	if (hl_cancelled())
		goto done;
	if (r->integrity) {
		reject_round(l, a, k);
		best = SIZE_MAX;
		*stop = true;
	}
	if (best != SIZE_MAX) {
		for (size_t i = 0; i < k; i++)
			if (i != best && a[i].verdict == VERDICT_KEEP) {
				add_reason(&a[i], "a better candidate won the round (%s, %+.2f%%)",
					   a[best].lens, a[best].change_pct);
				decide(l, &a[i], GATE_STAGE_TOURNAMENT, VERDICT_REJECT);
			}
		if (keep(l, &a[best])) {
			add_reason(&a[best], "it could not be committed: %s", last_error());
			decide(l, &a[best], GATE_STAGE_COMMIT, VERDICT_ERROR);
			best = SIZE_MAX;
		}
	}
	for (size_t i = 0; i < k; i++) {
		json_t *doc = attempt_to_json(&a[i]);
		char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15));

		if (s)
			save(a[i].dir, "attempt.json", s, strlen(s));
		free(s);
		json_decref(doc);
		remember(l, &a[i]);
	}
	written = true;
	if (best != SIZE_MAX)
		r->kept++;
	if (nr_no == k && !r->integrity) {
		*stop = true;
		r->stop_reason = "the agent said NO CANDIDATE";
	}
done:
	ret = 0;
out:
	/* the attempts written up go to the result; their trees go */
	for (size_t i = 0; i < k; i++) {
		revs_remove(&a[i].tree);
		revs_tree_release(&a[i].tree);
		revs_remove(&a[i].checkout);
		revs_tree_release(&a[i].checkout);
		if (written) {
			ALLOC_GROW(r->attempts, r->nr_attempts + 1, r->alloc_attempts);
			r->attempts[r->nr_attempts++] = a[i];
		} else {
			attempt_release(&a[i]);
		}
	}
	free(kb_index);
	free(round_dir);
	return ret;
}

/* The whole gain: a fresh worktree of where the branch started against the best. */
static void final_measure(struct loop *l)
{
	struct loop_result *r = l->r;
	struct gate_spec spec = GATE_SPEC_INIT;
	struct sandbox base_sb = SANDBOX_INIT, cand_sb = SANDBOX_INIT;
	struct revs_tree orig = { 0 };

	if (!strcmp(r->start, r->best))
		return;
	emit_note(l->spec->obs, "loop", "measuring the start of the branch against the best, afresh");
	if (revs_checkout(l->p, r->start, &orig) ||
	    gate_spec_from_project(&spec, l->p, orig.dir, l->base_dir))
		goto out;
	spec.source = "loop";
	spec.build_cand = false;
	spec.test = NULL;
	spec.log_dir = r->dir;
	spec.obs = l->spec->obs;
	spec.base_sandbox = sandbox_of(l, &orig, false, &base_sb);
	spec.cand_sandbox = sandbox_of(l, &l->base, false, &cand_sb);
	if (!gate_run(&spec, &r->total) && r->total.measured)
		r->have_total = true;
out:
	sandbox_release(&base_sb);
	sandbox_release(&cand_sb);
	gate_spec_release(&spec);
	revs_remove(&orig);
	revs_tree_release(&orig);
}

/* ---- the loop ---------------------------------------------------------------- */

void loop_result_init(struct loop_result *r)
{
	memset(r, 0, sizeof(*r));
	gate_result_init(&r->total);
}

void loop_result_release(struct loop_result *r)
{
	for (size_t i = 0; i < r->nr_attempts; i++)
		attempt_release(&r->attempts[i]);
	free(r->attempts);
	free(r->repo);
	free(r->branch);
	free(r->start);
	free(r->best);
	free(r->dir);
	free(r->integrity);
	gate_result_release(&r->total);
	loop_result_init(r);
}

static int pick_lenses(struct loop *l)
{
	const struct loop_spec *s = l->spec;
	const struct config_list *cl = &l->p->cf.lenses;

	if (s->nr_lenses) {
		if (s->nr_lenses > LOOP_MAX_LENSES)
			return error("too many lenses: at most %d", LOOP_MAX_LENSES);
		for (size_t i = 0; i < s->nr_lenses; i++)
			l->lenses[l->nr_lenses++] = s->lenses[i];
		return 0;
	}
	for (size_t i = 0; i < cl->nr && i < LOOP_MAX_LENSES; i++)
		l->lenses[l->nr_lenses++] = cl->v[i];
	if (!l->nr_lenses)
		l->lenses[l->nr_lenses++] = "algorithmic";
	return 0;
}

static void loop_started(struct loop *l)
{
	struct loop_result *r = l->r;

	event(l, EV_LOOP_STARTED, NULL, "loop on %s from %.12s, %ld rounds at most, agent: %s",
	      r->branch, r->start, r->rounds_planned, r->agent);
}

int loop_run(const struct loop_spec *s, struct loop_result *r)
{
	struct loop l = { .spec = s, .p = s->project, .r = r, .lock_fd = -1, .wlock_fd = -1,
			  .integrity = INTEGRITY_INIT };
	const struct config *cf = &s->project->cf;
	bool stop = false, started = false;
	size_t rejects_in_a_row = 0;
	int ret = -1;

	loop_result_release(r);
	r->agent = s->agent;
	r->rounds_planned = s->rounds ? s->rounds : cf->rounds;
	if (!l.p->git_dir)
		return error("'%s' is not in a git repository: the loop keeps its changes on a branch",
			     l.p->dir);
	if (!s->agent || !*s->agent)
		return error("no agent: set [agent] command in %s or pass --agent CMD (README: \"An agent\")",
			     l.p->conf_path);
	if (!cf->nr_workloads)
		return error("no [workload] in %s to measure", l.p->conf_path);
	if (s->parallel > LOOP_MAX_PARALLEL)
		return error("at most %d agents at once", LOOP_MAX_PARALLEL);
	if (pick_lenses(&l))
		return -1;
	/* what a step leaves running comes to us, to be killed (kill_adopted()) */
	if (adopt_orphans())
		return -1;
	l.sandbox = !s->no_sandbox;
	if (l.sandbox && sandbox_unavailable())
		return error("cannot run the agent in a sandbox: %s; or pass --no-sandbox to run it with "
			     "your rights (docs/loop.md)", sandbox_unavailable());
	l.agent_writable = expand_paths(&cf->agent_writable);
	l.gate_writable = expand_paths(&cf->gate_writable);
	r->repo = xstrdup(l.p->top);
	if ((!s->lock_held && (l.lock_fd = project_lock(l.p, PROJECT_LOCK_LOOP)) < 0) ||
	    (l.wlock_fd = project_lock(l.p, PROJECT_LOCK_WORKTREES)) < 0 ||
	    revs_clean_stale(l.p) || start_branch(&l) ||
	    project_new_dir(l.p, "loop", NULL, &r->dir, NULL))
		goto out;
	l.kb_dir = project_kb_dir(l.p);
	{
		/* what hotloop itself writes in the user's tree: its state, the kb */
		char *state = xstrfmt("%s/.hotloop", l.p->top), *ref = xstrfmt("refs/heads/%s", r->branch);
		const char *skip[] = { state, l.kb_dir, NULL };
		int bad = integrity_record(&l.integrity, l.p, skip, ref);

		free(state);
		free(ref);
		if (bad)
			goto out;
	}
	loop_started(&l);
	started = true;
	if (setup_base(&l))
		goto out_end;
	for (long round = r->first_round; round < r->first_round + r->rounds_planned && !stop &&
	     !hl_cancelled(); round++) {
		size_t kept = r->kept;

		if (round_run(&l, round, &stop))
			goto out_end;
		if (!hl_cancelled())
			save_round(&l, round);
		r->rounds = round - r->first_round + 1;
		rejects_in_a_row = r->kept > kept ? 0 : rejects_in_a_row + 1;
		if (!stop && rejects_in_a_row >= (size_t)cf->max_rejects_in_a_row) {
			stop = true;
			r->stop_reason = "max-rejects-in-a-row reached";
		}
	}
	r->interrupted = hl_cancelled();
	if (!r->stop_reason)
		r->stop_reason = r->interrupted ? "interrupted" : "all rounds done";
	r->finished = !strcmp(r->stop_reason, "all rounds done");
	if (!r->interrupted && !r->integrity)
		final_measure(&l);
	ret = 0;
out_end:
	/* whatever stopped it: is the user's repository as it was? */
	if (started && broken(&l, "while the loop ran")) {
		r->finished = false;
		ret = error("%s", r->integrity);
	}
	if (started) {
		if (ret && !r->stop_reason)
			r->stop_reason = last_error();
		r->interrupted = hl_cancelled();
		event(&l, EV_LOOP_ENDED, NULL, NULL);
	}
out:
	/* cleanup runs to its end: git is never cancelled */
	revs_remove(&l.base);
	revs_tree_release(&l.base);
	free(l.base_dir);
	free(l.brief_md);
	free(l.targets);
	hots_release(&l.hots);
	free(l.kb_dir);
	free_paths(l.agent_writable);
	free_paths(l.gate_writable);
	integrity_release(&l.integrity);
	if (l.wlock_fd >= 0)
		close(l.wlock_fd);
	if (l.lock_fd >= 0)
		close(l.lock_fd);
	return ret;
}

/* ---- JSON -------------------------------------------------------------------- */

json_t *attempt_to_json(const struct attempt *a)
{
	json_t *o = json_object(), *reasons = json_array();

	for (size_t i = 0; i < a->nr_reasons; i++)
		json_array_append_new(reasons, json_text(a->reasons[i]));
	json_object_set_new(o, "round", json_integer(a->round));
	json_object_set_new(o, "lens", json_text(a->lens));
	json_object_set_new(o, "function", json_text(a->have_prop ? a->prop.function : NULL));
	json_object_set_new(o, "title", json_text(a->have_prop ? a->prop.title : NULL));
	json_object_set_new(o, "hypothesis", json_text(a->have_prop ? a->prop.hypothesis : NULL));
	json_object_set_new(o, "expected_gain_pct", a->have_prop && !isnan(a->prop.expected_gain_pct)
				? json_real(a->prop.expected_gain_pct) : json_null());
	json_object_set_new(o, "verdict", json_string(verdict_kind_name(a->verdict ? a->verdict : VERDICT_ERROR)));
	json_object_set_new(o, "stage", json_string(gate_stage_name(a->stage ? a->stage : GATE_STAGE_AGENT)));
	json_object_set_new(o, "reasons", reasons);
	json_object_set_new(o, "change_pct", a->have_change ? json_real(a->change_pct) : json_null());
	json_object_set_new(o, "ci_low_pct", a->have_change ? json_real(a->ci_low) : json_null());
	json_object_set_new(o, "ci_high_pct", a->have_change ? json_real(a->ci_high) : json_null());
	json_object_set_new(o, "commit", a->commit ? json_string(a->commit) : json_null());
	json_object_set_new(o, "target", json_text(a->target));
	json_object_set_new(o, "target_share", a->target ? json_real(a->target_share) : json_null());
	json_object_set_new(o, "target_gain", json_text(a->target_gain));
	json_object_set_new(o, "target_cheaper", a->target_gain ? json_boolean(a->target_cheaper) : json_null());
	json_object_set_new(o, "agent_seconds", json_real(a->agent_seconds));
	json_object_set_new(o, "dir", json_text(a->dir));
	return o;
}

json_t *loop_result_to_json(const struct loop_result *r)
{
	json_t *attempts = json_array(), *by = json_object(), *total = json_null(), *doc;

	for (size_t i = 0; i < r->nr_attempts; i++)
		json_array_append_new(attempts, attempt_to_json(&r->attempts[i]));
	for (size_t i = 0; i < r->nr_rejected_stages; i++)
		json_object_set_new(by, gate_stage_name(r->rejected_order[i]),
				    json_integer((json_int_t)r->rejected_by[r->rejected_order[i]]));
	if (r->have_total)
		total = verdict_estimate_to_json(&r->total.v, &r->total.v.primary, false);
	doc = json_pack("{s:s, s:s, s:s, s:o, s:o, s:b, s:I, s:I, s:o, s:o, s:o}",
			 "branch", r->branch, "start_commit", r->start, "best_commit", r->best,
			 "stop_reason", json_text(r->stop_reason),
			 "integrity", r->integrity ? json_text(r->integrity) : json_null(),
			 "interrupted", r->interrupted, "rounds", (json_int_t)r->rounds,
			 "kept", (json_int_t)r->kept, "rejected_by", by, "attempts", attempts,
			 "total", total);
	json_object_set_new(doc, "first_round", json_integer(r->first_round));
	return doc;
}
