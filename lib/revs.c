/*
 * revs.c: git worktrees for the gate and the loop (see revs.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "git.h"
#include "project.h"
#include "revs.h"
#include "strbuf.h"
#include "util.h"

int revs_clean_stale(const char *top)
{
	char *dir = xstrfmt("%s/%s", top, REVS_DIR);
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		if (errno != ENOENT)
			ret = error("cannot open '%s': %s", dir, strerror(errno));
		goto out;
	}
	while ((e = readdir(d))) {
		char *path;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path = xstrfmt("%s/%s", dir, e->d_name);
		if (git_run(top, NULL, "remove a stale worktree", "worktree", "remove", "--force", path, NULL)) {
			/* not a worktree git knows: the files go, git's record is pruned below */
			if (remove_tree(path))
				ret = -1;
		}
		free(path);
	}
	closedir(d);
	if (git_run(top, NULL, "prune stale worktrees", "worktree", "prune", NULL))
		ret = -1;
out:
	free(dir);
	return ret;
}

int revs_add(const char *top, const char *role, const char *rev, const char *subdir,
	     struct revs_tree *t)
{
	struct strbuf out = STRBUF_INIT;
	char *spec = xstrfmt("%s^{commit}", rev), *wt = NULL;
	int ret = -1;

	memset(t, 0, sizeof(*t));
	t->given = xstrdup(rev);
	if (git_run(top, &out, "resolve the revision", "rev-parse", "--verify", "--quiet", spec, NULL)) {
		error("unknown revision '%s'", rev);
		goto out;
	}
	strbuf_rtrim(&out);
	if (out.len < 12 || strspn(out.buf, "0123456789abcdef") != out.len) {
		error("unknown revision '%s'", rev);
		goto out;
	}
	t->sha = strbuf_detach(&out, NULL);
	if (!(wt = state_dir(top, "worktrees")))
		goto out;
	t->top = xstrfmt("%s/%s/%s-%.12s", top, REVS_DIR, role, t->sha);
	if (git_run(top, NULL, "check out the revision", "worktree", "add", "--detach", "--quiet",
		t->top, t->sha, NULL))
		goto out;
	t->added = true;
	t->dir = *subdir ? xstrfmt("%s/%s", t->top, subdir) : xstrdup(t->top);
	ret = 0;
out:
	strbuf_release(&out);
	free(spec);
	free(wt);
	return ret;
}

int revs_use_dir(const char *dir, struct revs_tree *t)
{
	char *real = realpath(dir, NULL);
	struct stat st;

	memset(t, 0, sizeof(*t));
	t->given = xstrdup(dir);
	if (!real || stat(real, &st) || !S_ISDIR(st.st_mode)) {
		free(real);
		return error("cannot use '%s' as a candidate: not a directory", dir);
	}
	t->top = real;
	t->dir = xstrdup(real);
	return 0;
}

int revs_remove(const char *top, struct revs_tree *t)
{
	int ret = 0;

	if (!t->added)
		return 0;
	if (git_run(top, NULL, "remove the worktree", "worktree", "remove", "--force", t->top, NULL)) {
		ret = remove_tree(t->top);
		git_run(top, NULL, "prune worktrees", "worktree", "prune", NULL);
	}
	t->added = false;
	return ret;
}

void revs_tree_release(struct revs_tree *t)
{
	free(t->given);
	free(t->sha);
	free(t->top);
	free(t->dir);
	memset(t, 0, sizeof(*t));
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int revs_pair_open(struct revs_pair *rp, const struct project *p, const char *base, const char *cand)
{
	bool base_dir = is_dir(base), cand_dir = is_dir(cand);

	/* worktrees only for revisions: two directories need no lock */
	if (!(base_dir && cand_dir)) {
		if (!p->in_git)
			return error("'%s' is not in a git repository: give directories, not revisions", p->dir);
		if ((rp->lock = project_lock(p, PROJECT_LOCK_WORKTREES)) < 0 || revs_clean_stale(p->top))
			return -1;
	}
	if (base_dir ? revs_use_dir(base, &rp->base) : revs_add(p->top, "base", base, p->sub, &rp->base))
		return -1;
	return cand_dir ? revs_use_dir(cand, &rp->cand) : revs_add(p->top, "cand", cand, p->sub, &rp->cand);
}

int revs_pair_close(struct revs_pair *rp, const struct project *p)
{
	int ret = 0;

	if (revs_remove(p->top, &rp->base))
		ret = -1;
	if (revs_remove(p->top, &rp->cand))
		ret = -1;
	revs_tree_release(&rp->base);
	revs_tree_release(&rp->cand);
	if (rp->lock >= 0)
		close(rp->lock);
	rp->lock = -1;
	return ret;
}

json_t *revs_tree_to_json(const struct revs_tree *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "given", json_string(t->given));
	json_object_set_new(o, "commit", t->sha ? json_string(t->sha) : json_null());
	json_object_set_new(o, "dir", json_string(t->dir));
	return o;
}

void revs_pair_describe(const struct revs_pair *rp, struct strbuf *sb)
{
	strbuf_addf(sb, "base:      %s (%.12s)\n", rp->base.given, rp->base.sha ? rp->base.sha : "directory");
	if (rp->cand.sha)
		strbuf_addf(sb, "candidate: %s (%.12s)\n", rp->cand.given, rp->cand.sha);
	else
		strbuf_addf(sb, "candidate: %s (directory)\n", rp->cand.dir);
}
