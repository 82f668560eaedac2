/*
 * pr.c: a loop branch's kept commits as pull requests or patches (see
 * pr.h). git goes through git.c on the user's repository; the [pr]
 * command through run-command.c's /bin/sh, its placeholders shell-quoted.
 * The bodies are built from the knowledge base (kb.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "git.h"
#include "json.h"
#include "kb.h"
#include "pr.h"
#include "project.h"
#include "run-command.h"
#include "runner.h"
#include "util.h"

#define PR_COMMAND_TIMEOUT (10 * 60)

void pr_result_init(struct pr_result *r)
{
	memset(r, 0, sizeof(*r));
}

static void pr_item_release(struct pr_item *it)
{
	free(it->commit);
	free(it->title);
	free(it->kb_slug);
	free(it->body);
	free(it->patch);
	free(it->head);
	free(it->base);
	free(it->command);
	free(it->output);
}

void pr_result_release(struct pr_result *r)
{
	for (size_t i = 0; i < r->nr; i++)
		pr_item_release(&r->items[i]);
	free(r->items);
	free(r->branch);
	free(r->base);
	free(r->dir);
	pr_result_init(r);
}

/* ---- texts ---- */

void pr_body(const char *report, const char *message, const char *diffstat, const char *branch,
	     const char *commit, size_t nr, size_t of, const char *base, struct strbuf *out)
{
	if (report && *report) {
		strbuf_addstr(out, report);
	} else {
		strbuf_addstr(out, message ? message : "");
		strbuf_rtrim(out);
		strbuf_addstr(out, "\n\n(no knowledge base entry holds this commit)\n");
	}
	strbuf_rtrim(out);
	strbuf_addstr(out, "\n\n## Diff stat\n\n```\n");
	strbuf_addstr(out, diffstat ? diffstat : "");
	strbuf_rtrim(out);
	strbuf_addstr(out, "\n```\n\n");
	strbuf_addf(out, "Kept by `hotloop loop` on `%s` as %.12s, measured against its parent.", branch, commit);
	if (of > 1)
		strbuf_addf(out, " Change %zu of %zu, stacked: it goes into `%s`%s.", nr, of, base,
			    nr > 1 ? " (the change before it)" : "");
	strbuf_addch(out, '\n');
}

int pr_fill_command(const char *tmpl, const struct pr_var *vars, size_t nr, struct strbuf *out)
{
	char quote = 0;

	for (const char *p = tmpl; *p;) {
		size_t i;

		if (*p == '{') {
			for (i = 0; i < nr; i++) {
				size_t n = strlen(vars[i].name);

				if (!strncmp(p + 1, vars[i].name, n) && p[n + 1] == '}')
					break;
			}
			if (i < nr) {
				const char *v[2] = { vars[i].value, NULL };

				if (quote)
					return error("[pr] command: {%s} is inside quotes: write it bare, hotloop "
						     "quotes its value", vars[i].name);
				/* always quoted, even when plain: an empty value stays one word */
				strbuf_addch(out, '\'');
				for (const char *c = v[0]; *c; c++) {
					if (*c == '\'')
						strbuf_addstr(out, "'\\''");
					else
						strbuf_addch(out, *c);
				}
				strbuf_addch(out, '\'');
				p += strlen(vars[i].name) + 2;
				continue;
			}
		}
		if (quote == '\'') {
			if (*p == '\'')
				quote = 0;
		} else if (*p == '\\' && p[1]) {
			strbuf_addch(out, *p++);
		} else if (quote == '"') {
			if (*p == '"')
				quote = 0;
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
		}
		strbuf_addch(out, *p++);
	}
	if (quote)
		return error("[pr] command: an unterminated %c quote", quote);
	return 0;
}

/* ---- the branch and its commits ---- */

static int newest_loop_branch(const struct git_repo *g, char **branch)
{
	struct strbuf out = STRBUF_INIT;
	char *nl;

	if (git_exec(g, &out, "list the loop's branches", "for-each-ref", "--sort=-committerdate",
		     "--format=%(refname:short)", "refs/heads/hotloop/", NULL)) {
		strbuf_release(&out);
		return -1;
	}
	if (!out.len) {
		strbuf_release(&out);
		return error("no loop branch (hotloop/...) in this repository: run `hotloop loop` first, "
			     "or name one with --branch");
	}
	if ((nl = strchr(out.buf, '\n')))
		*nl = '\0';
	*branch = xstrdup(out.buf);
	strbuf_release(&out);
	return 0;
}

/* The first line of git's answer, trimmed; NULL when git said no. */
static char *git_line(const struct git_repo *g, const char *a, const char *b, const char *c,
		      const char *d)
{
	struct strbuf out = STRBUF_INIT;
	char *nl;

	if (git_exec(g, &out, NULL, a, b, c, d, NULL) || !out.len) {
		strbuf_release(&out);
		return NULL;
	}
	if ((nl = strchr(out.buf, '\n')))
		*nl = '\0';
	return strbuf_detach(&out, NULL);
}

static const struct kb_entry *kb_of_commit(const struct kb *kb, const char *commit)
{
	for (size_t i = 0; i < kb->nr; i++) {
		const char *c = kb->entries[i].commit;

		if (c && strlen(c) >= 7 && !strncmp(commit, c, strlen(c)))
			return &kb->entries[i];
	}
	return NULL;
}

/* "hotloop/2026-12-03" -> "hotloop-2026-12-03": one directory name */
static char *flat(const char *branch)
{
	char *s = xstrdup(branch);

	for (char *c = s; *c; c++)
		if (*c == '/')
			*c = '-';
	return s;
}

/* The name after the branch's "hotloop/": the head branches are hotloop-pr/<that>/<n>. */
static char *head_name(const char *branch, size_t n)
{
	const char *tail = !strncmp(branch, "hotloop/", 8) ? branch + 8 : branch;

	return xstrfmt("hotloop-pr/%s/%zu", tail, n);
}

/* What a body is made of, per item. */
struct parts {
	struct strbuf report, stat, msg;
};

static void parts_release(struct parts *pt, size_t n)
{
	for (size_t i = 0; pt && i < n; i++) {
		strbuf_release(&pt[i].report);
		strbuf_release(&pt[i].stat);
		strbuf_release(&pt[i].msg);
	}
	free(pt);
}

/* Every kept commit, oldest first: its title, kb entry and what its body is made of. */
static int collect(const struct pr_spec *s, const struct git_repo *g, const char *tip, const char *base_sha,
		   struct pr_result *r, struct parts **parts)
{
	struct strbuf list = STRBUF_INIT;
	char *range = xstrfmt("%s..%s", base_sha, tip), *kb_dir = project_kb_dir(s->project);
	struct kb kb = KB_INIT;
	int ret = -1;
	size_t n = 0;

	*parts = NULL;
	if (git_exec(g, &list, "list the kept commits", "rev-list", "--reverse", range, NULL))
		goto out;
	for (char *l = list.buf; *l; l++)
		n += *l == '\n';
	if (!n) {
		error("no kept commit on %s that %s does not have: nothing to send", r->branch, r->base);
		goto out;
	}
	if (kb_load(kb_dir, &kb))
		goto out;
	*parts = xcalloc(n, sizeof(**parts));
	for (char *l = list.buf, *nl; (nl = strchr(l, '\n')) && r->nr < n; l = nl + 1) {
		struct parts *pt = &(*parts)[r->nr];
		const struct kb_entry *e;
		struct pr_item *it;
		char *parent;

		*nl = '\0';
		ALLOC_GROW(r->items, r->nr + 1, r->alloc);
		it = &r->items[r->nr++];
		memset(it, 0, sizeof(*it));
		strbuf_init(&pt->report, 0);
		strbuf_init(&pt->stat, 0);
		strbuf_init(&pt->msg, 0);
		it->commit = xstrdup(l);
		if (!(it->title = git_line(g, "log", "-1", "--format=%s", l)))
			it->title = xstrfmt("hotloop: %.12s", l);
		if ((e = kb_of_commit(&kb, l))) {
			char *path = xstrfmt("%s/report.md", e->dir);

			it->kb_slug = xstrdup(e->slug);
			if (read_file(&pt->report, path, KB_REPORT_MAX) < 0)
				strbuf_setlen(&pt->report, 0);
			free(path);
		}
		git_exec(g, &pt->msg, NULL, "log", "-1", "--format=%B", l, NULL);
		parent = xstrfmt("%s^", l);
		git_exec(g, &pt->stat, NULL, "diff", "--stat", parent, l, NULL);
		free(parent);
	}
	clear_last_error();
	ret = 0;
out:
	kb_release(&kb);
	strbuf_release(&list);
	free(range);
	free(kb_dir);
	return ret;
}

/* A name for one item's files: NNNN-<what its title says>. */
static char *item_name(size_t n, const char *title)
{
	const char *t = !strncmp(title, "perf: ", 6) ? title + 6 : title;
	char *slug = kb_slug(t), *name = xstrfmt("%04zu-%s", n, slug);

	free(slug);
	return name;
}

/* The body's name: its patch's, without .patch; else NNNN-<title>. */
static char *body_name(const struct pr_item *it, size_t n)
{
	const char *base = it->patch ? strrchr(it->patch, '/') + 1 : NULL;
	size_t len = base ? strlen(base) : 0;

	if (base && len > 6 && !strcmp(base + len - 6, ".patch"))
		return xstrndup(base, len - 6);
	return item_name(n, it->title);
}

/* The output directory: the default one is replaced whole; one given must be new or empty. */
static int check_out_dir(const char *dir, bool given)
{
	struct stat st;

	if (stat(dir, &st))
		return 0;
	if (!S_ISDIR(st.st_mode))
		return error("'%s' is not a directory", dir);
	/* an empty one goes, to be made again with the files in it */
	if (!given || !rmdir(dir))
		return 0;
	return error("'%s' is not empty: choose a new directory for -o, or remove it", dir);
}

/* Write the bodies (and patches) into tmp, then put tmp in place of dir. */
static int write_files(const struct pr_spec *s, const struct git_repo *g, struct pr_result *r,
		       struct parts *pt, const char *base_sha, const char *tip)
{
	char *tmp = xstrfmt("%s.tmp-%ld", r->dir, (long)getpid());
	struct strbuf names = STRBUF_INIT;
	int ret = -1;

	remove_tree(tmp);
	if (mkdir_p(tmp))
		goto out;
	if (!r->command) {
		char *range = xstrfmt("%s..%s", base_sha, tip);
		size_t i = 0;

		if (git_exec(g, &names, "write the patches", "format-patch", "--suffix=.patch", "-o", tmp, range,
			     NULL)) {
			free(range);
			goto out_tmp;
		}
		free(range);
		/* format-patch names its files, one a line, in the stack's order */

		for (char *l = names.buf, *nl; (nl = strchr(l, '\n')) && i < r->nr; l = nl + 1, i++) {
			const char *base;

			*nl = '\0';
			base = strrchr(l, '/');
			r->items[i].patch = xstrfmt("%s/%s", r->dir, base ? base + 1 : l);
		}
	}
	for (size_t i = 0; i < r->nr; i++) {
		struct pr_item *it = &r->items[i];
		struct strbuf body = STRBUF_INIT;
		char *name = body_name(it, i + 1), *path = xstrfmt("%s/%s.md", tmp, name);
		int bad;

		pr_body(pt[i].report.buf, pt[i].msg.buf, pt[i].stat.buf, r->branch, it->commit, i + 1, r->nr,
			it->base ? it->base : r->base, &body);
		bad = write_file_atomic(path, body.buf, body.len);
		it->body = xstrfmt("%s/%s.md", r->dir, name);
		strbuf_release(&body);
		free(path);
		free(name);
		if (bad)
			goto out_tmp;
	}
	if (remove_tree(r->dir))
		goto out_tmp;
	if (rename(tmp, r->dir)) {
		error("cannot move '%s' to '%s': %s", tmp, r->dir, strerror(errno));
		goto out_tmp;
	}
	ret = 0;
	goto out;
out_tmp:
	remove_tree(tmp);
out:
	strbuf_release(&names);
	free(tmp);
	return ret;
}

/* .hotloop/pr/<branch>.sent: the commits a command sent, one a line */
static char *sent_file(const struct pr_spec *s, const char *branch)
{
	char *dir = project_state_dir(s->project, "pr"), *f = flat(branch), *path = NULL;

	if (dir)
		path = xstrfmt("%s/%s.sent", dir, f);
	free(dir);
	free(f);
	return path;
}

static bool was_sent(const struct strbuf *sent, const char *commit)
{
	for (const char *l = sent->buf; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		if (n == strlen(commit) && !strncmp(l, commit, n))
			return true;
		l += n + (nl != NULL);
	}
	return false;
}

/* Run the command for item i on its head branch; -1 with an error, and no branch left, when it fails. */
static int send_one(const struct pr_spec *s, const struct git_repo *g, struct pr_result *r, size_t i,
		    const char *sent_path, struct strbuf *sent)
{
	struct pr_item *it = &r->items[i];
	struct child_process cp = CHILD_PROCESS_INIT;
	char *ref = xstrfmt("refs/heads/%s", it->head), *had = git_resolve(g, ref);
	char *env[6];
	const char *envp[6];
	int ret = -1;

	env[0] = xstrfmt("HOTLOOP_PR_TITLE=%s", it->title);
	env[1] = xstrfmt("HOTLOOP_PR_BODY=%s", it->body);
	env[2] = xstrfmt("HOTLOOP_PR_BRANCH=%s", it->head);
	env[3] = xstrfmt("HOTLOOP_PR_BASE=%s", it->base);
	env[4] = xstrfmt("HOTLOOP_PR_COMMIT=%s", it->commit);
	env[5] = NULL;
	for (size_t k = 0; k < 6; k++)
		envp[k] = env[k];
	if (git_exec(g, NULL, "make the head branch", "update-ref", ref, it->commit, NULL))
		goto out;
	cp.shell = it->command;
	cp.dir = s->project->dir;
	cp.env = envp;
	cp.timeout = PR_COMMAND_TIMEOUT;
	cp.cancellable = true;
	if (run_command(&cp) || !child_succeeded(&cp)) {
		struct strbuf how = STRBUF_INIT, tail = STRBUF_INIT;

		child_describe(&cp, &how);
		output_tail(&cp.out, 10, &tail);
		/* the head branch goes back to what it was */
		if (had)
			git_exec(g, NULL, NULL, "update-ref", ref, had, NULL);
		else
			git_exec(g, NULL, NULL, "update-ref", "-d", ref, NULL);
		error("the [pr] command failed for %.12s '%s' (%s)%s%s", it->commit, it->title,
		      how.len ? how.buf : "it could not run", tail.buf,
		      r->sent ? "; the changes before it were sent: `hotloop pr` again goes on from this one" : "");
		strbuf_release(&how);
		strbuf_release(&tail);
		goto out;
	}
	it->output = xstrndup(cp.out.buf, cp.out.len);
	r->sent++;
	strbuf_addf(sent, "%s\n", it->commit);
	if (write_file_atomic(sent_path, sent->buf, sent->len))
		warning("'%s' was not updated: a later `hotloop pr` sends %.12s again", sent_path, it->commit);
	ret = 0;
out:
	child_process_release(&cp);
	for (size_t k = 0; k < 5; k++)
		free(env[k]);
	free(ref);
	free(had);
	return ret;
}

int pr_run(const struct pr_spec *s, struct pr_result *r)
{
	const struct project *p = s->project;
	struct git_repo g = { p->git_dir, NULL, NULL };
	const char *command = s->command ? s->command : p->cf.pr_command;
	struct strbuf sent = STRBUF_INIT, ref = STRBUF_INIT;
	char *tip = NULL, *base_sha = NULL, *sent_path = NULL;
	struct parts *pt = NULL;
	int ret = -1;

	pr_result_release(r);
	r->dry_run = s->dry_run;
	r->command = command && *command;
	if (!p->git_dir)
		return error("'%s' is not in a git repository", p->dir);
	if (s->branch)
		r->branch = xstrdup(!strncmp(s->branch, "refs/heads/", 11) ? s->branch + 11 : s->branch);
	else if (newest_loop_branch(&g, &r->branch))
		goto out;
	strbuf_addf(&ref, "refs/heads/%s", r->branch);
	if (!(tip = git_resolve(&g, ref.buf))) {
		error("no branch '%s' in '%s'", r->branch, p->top);
		goto out;
	}
	if (s->base) {
		r->base = xstrdup(s->base);
	} else {
		struct strbuf out = STRBUF_INIT;

		if (git_run(p->top, &out, NULL, "symbolic-ref", "--short", "-q", "HEAD", NULL) || !out.len) {
			strbuf_release(&out);
			error("HEAD is not on a branch: say which the pull requests go into with --base");
			goto out;
		}
		strbuf_rtrim(&out);
		r->base = strbuf_detach(&out, NULL);
	}
	if (!(base_sha = git_resolve(&g, r->base)) && !(base_sha = git_rev_parse(p->top, r->base))) {
		error("no commit '%s' to send the pull requests into", r->base);
		goto out;
	}
	if (!strcmp(r->base, r->branch)) {
		error("the base and the branch are both '%s'", r->base);
		goto out;
	}
	if (s->out_dir) {
		r->dir = xstrdup(s->out_dir);
	} else {
		char *f = flat(r->branch), *dir = project_state_dir(p, "pr");

		if (dir)
			r->dir = xstrfmt("%s/%s", dir, f);
		free(f);
		free(dir);
		if (!r->dir)
			goto out;
	}
	if (r->command) {
		/* a command that cannot be filled in fails before anything is written */
		const struct pr_var probe[] = {
			{ "title", "" }, { "body", "" }, { "branch", "" }, { "base", "" }, { "commit", "" },
		};
		struct strbuf line = STRBUF_INIT;
		int bad = pr_fill_command(command, probe, ARRAY_SIZE(probe), &line);

		strbuf_release(&line);
		if (bad)
			goto out;
	}
	if (check_out_dir(r->dir, s->out_dir != NULL) || collect(s, &g, tip, base_sha, r, &pt))
		goto out;
	if (r->command) {
		if (!(sent_path = sent_file(s, r->branch)))
			goto out;
		if (!access(sent_path, F_OK) && read_file(&sent, sent_path, 1 << 20) < 0)
			goto out;
	}
	/* the stack: each head on the one before */
	for (size_t i = 0; r->command && i < r->nr; i++) {
		struct pr_item *it = &r->items[i];

		it->head = head_name(r->branch, i + 1);
		it->base = xstrdup(i ? r->items[i - 1].head : r->base);
		it->skipped = was_sent(&sent, it->commit);
	}
	if (write_files(s, &g, r, pt, base_sha, tip))
		goto out;
	for (size_t i = 0; r->command && i < r->nr; i++) {
		struct pr_item *it = &r->items[i];
		struct strbuf line = STRBUF_INIT;
		const struct pr_var vars[] = {
			{ "title", it->title }, { "body", it->body }, { "branch", it->head },
			{ "base", it->base }, { "commit", it->commit },
		};

		if (pr_fill_command(command, vars, ARRAY_SIZE(vars), &line)) {
			strbuf_release(&line);
			goto out;
		}
		it->command = strbuf_detach(&line, NULL);
	}
	for (size_t i = 0; r->command && !s->dry_run && i < r->nr; i++) {
		if (r->items[i].skipped)
			continue;
		if (hl_cancelled()) {
			error("interrupted: %zu of %zu sent", r->sent, r->nr);
			goto out;
		}
		if (send_one(s, &g, r, i, sent_path, &sent))
			goto out;
	}
	ret = 0;
out:
	parts_release(pt, r->nr);
	strbuf_release(&sent);
	strbuf_release(&ref);
	free(tip);
	free(base_sha);
	free(sent_path);
	return ret;
}

json_t *pr_result_to_json(const struct pr_result *r)
{
	json_t *items = json_array();

	for (size_t i = 0; i < r->nr; i++) {
		const struct pr_item *it = &r->items[i];

		json_array_append_new(items, json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:b}",
			"commit", it->commit, "title", it->title, "kb", json_text(it->kb_slug),
			"body", it->body, "patch", json_text(it->patch), "head", json_text(it->head),
			"base", json_text(it->base), "command", json_text(it->command),
			"output", json_text(it->output), "skipped", it->skipped));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:I, s:o}", "branch", r->branch, "base", r->base,
			 "dir", r->dir, "mode", r->command ? "command" : "format-patch", "dry_run", r->dry_run,
			 "sent", (json_int_t)r->sent, "prs", items);
}
