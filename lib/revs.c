/*
 * revs.c: checkouts outside the user's tree, what an agent changed in one,
 * and the commit of exactly its files (see revs.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "git.h"
#include "json.h"
#include "intern.h"
#include "project.h"
#include "revs.h"
#include "strbuf.h"
#include "util.h"

/* Worktrees as hotloop up to 0.1 kept them, inside the user's tree. */
#define OLD_WORKTREES ".hotloop/worktrees"

char *revs_cache_dir(const struct project *p)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	const char *name = strrchr(p->top, '/');
	char *base, *dir;

	if (!p->git_dir)
		BUG("revs_cache_dir() of a project opened without PROJECT_NEED_GIT");
	if (xdg && *xdg == '/')
		base = xstrfmt("%s/hotloop", xdg);
	else if (home && *home == '/')
		base = xstrfmt("%s/.cache/hotloop", home);
	else {
		error("no cache directory for the checkouts: set XDG_CACHE_HOME or HOME");
		return NULL;
	}
	dir = xstrfmt("%s/%s-%016llx", base, name && name[1] ? name + 1 : "repo",
		      (unsigned long long)hash_bytes(HASH_SEED, p->git_dir, strlen(p->git_dir)));
	free(base);
	if (mkdir_p(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* Worktrees of earlier versions, registered in the user's repository: removed and pruned. */
static int clean_old_worktrees(const struct project *p)
{
	char *dir = xstrfmt("%s/%s", p->top, OLD_WORKTREES);
	struct git_repo g = { p->git_dir, NULL, NULL };
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		free(dir);
		return 0;
	}
	while ((e = readdir(d))) {
		char *path;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path = xstrfmt("%s/%s", dir, e->d_name);
		if (git_exec(&g, NULL, NULL, "worktree", "remove", "--force", path, NULL) && remove_tree(path))
			ret = -1;
		free(path);
	}
	closedir(d);
	if (git_exec(&g, NULL, "prune stale worktrees", "worktree", "prune", NULL))
		ret = -1;
	free(dir);
	return ret;
}

int revs_clean_stale(const struct project *p)
{
	char *dir = revs_cache_dir(p);
	struct dirent *e;
	int ret = 0;
	DIR *d;

	if (!dir)
		return -1;
	d = opendir(dir);
	if (!d) {
		ret = error("cannot open '%s': %s", dir, strerror(errno));
		goto out;
	}
	while ((e = readdir(d))) {
		char *path;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path = xstrfmt("%s/%s", dir, e->d_name);
		if (remove_tree(path))
			ret = -1;
		free(path);
	}
	closedir(d);
out:
	free(dir);
	return clean_old_worktrees(p) || ret ? -1 : 0;
}

/* A directory no run has used: <cache>/<16 random hex digits>. */
static char *fresh_home(const struct project *p)
{
	char *cache = revs_cache_dir(p), *home = NULL;
	uint64_t r;

	if (!cache)
		return NULL;
	for (int tries = 0; tries < 16 && !home; tries++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = hash_u64(now_ns(), (uint64_t)getpid() + (uint64_t)tries);
		home = xstrfmt("%s/%016llx", cache, (unsigned long long)r);
		if (mkdir(home, 0700)) {
			if (errno != EEXIST)
				error("cannot create '%s': %s", home, strerror(errno));
			free(home);
			home = NULL;
			if (errno != EEXIST)
				break;
		}
	}
	free(cache);
	return home;
}

static void repo_of(const struct project *p, const struct revs_tree *t, struct git_repo *g)
{
	g->git_dir = p->git_dir;
	g->work_tree = t ? t->top : NULL;
	g->index = t ? t->index : NULL;
}

int revs_checkout(const struct project *p, const char *rev, struct revs_tree *t)
{
	struct git_repo g;
	char *spec = xstrfmt("%s^{commit}", rev);
	int ret = -1;

	memset(t, 0, sizeof(*t));
	t->given = xstrdup(rev);
	repo_of(p, NULL, &g);
	if (!(t->sha = git_resolve(&g, spec))) {
		error("unknown revision '%s'", rev);
		goto out;
	}
	if (!(t->home = fresh_home(p)))
		goto out;
	t->top = xstrfmt("%s/tree", t->home);
	t->index = xstrfmt("%s/index", t->home);
	t->tmp = xstrfmt("%s/tmp", t->home);
	if (mkdir(t->top, 0777) || mkdir(t->tmp, 0700)) {
		error("cannot create the checkout in '%s': %s", t->home, strerror(errno));
		goto out;
	}
	repo_of(p, t, &g);
	/* the files and hotloop's index of them, stat data and all */
	if (git_exec(&g, NULL, "check out the revision", "read-tree", "--reset", "-u", t->sha, NULL))
		goto out;
	t->dir = *p->sub ? xstrfmt("%s/%s", t->top, p->sub) : xstrdup(t->top);
	ret = 0;
out:
	free(spec);
	return ret;
}

static int write_text(const char *path, const char *text)
{
	return write_file_atomic(path, text, strlen(text));
}

int revs_agent_repo(const struct project *p, const struct revs_tree *t)
{
	char *gd = xstrfmt("%s/.git", t->top), *path = NULL, *text = NULL;
	struct strbuf sb = STRBUF_INIT;
	int ret = -1;

	/* a repository only hotloop could have made: init, then its files written directly */
	if (git_run(t->top, NULL, "give the agent a repository", "init", "-q", NULL))
		goto out;
	path = xstrfmt("%s/objects/info/alternates", gd);
	text = xstrfmt("%s/objects\n", p->git_dir);
	if (write_text(path, text))
		goto out;
	free(path);
	free(text);
	path = xstrfmt("%s/HEAD", gd);
	text = xstrfmt("%s\n", t->sha);
	if (write_text(path, text))
		goto out;
	free(path);
	path = xstrfmt("%s/index", gd);
	if (read_file(&sb, t->index, 1ul << 30) < 0 || write_file_atomic(path, sb.buf, sb.len))
		goto out;
	ret = 0;
out:
	strbuf_release(&sb);
	free(gd);
	free(path);
	free(text);
	return ret;
}

bool revs_agent_committed(const struct revs_tree *t)
{
	char *path = xstrfmt("%s/.git/HEAD", t->top), buf[256];
	ssize_t n = read_small_file(path, buf, sizeof(buf));

	free(path);
	if (n < 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	/* a branch it made, or another commit: its own business, and not what hotloop takes */
	return strcmp(buf, t->sha) != 0;
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

int revs_remove(struct revs_tree *t)
{
	int ret = 0;

	if (t->home) {
		ret = remove_tree(t->home);
		free(t->home);
		t->home = NULL;
	}
	return ret;
}

void revs_tree_release(struct revs_tree *t)
{
	free(t->given);
	free(t->sha);
	free(t->top);
	free(t->dir);
	free(t->home);
	free(t->index);
	free(t->tmp);
	memset(t, 0, sizeof(*t));
}

json_t *revs_tree_to_json(const struct revs_tree *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "given", json_text(t->given));
	json_object_set_new(o, "commit", json_text(t->sha));
	json_object_set_new(o, "dir", json_text(t->dir));
	return o;
}

/* ---- what an agent changed, and its commit ---------------------------------- */

void revs_changes_release(struct revs_changes *c)
{
	for (size_t i = 0; i < c->nr; i++)
		free(c->v[i].path);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static void add_change(struct revs_changes *c, const struct revs_tree *t, const char *path,
		       size_t len, char status)
{
	struct revs_change *x;
	char *full;
	struct stat st;

	ALLOC_GROW(c->v, c->nr + 1, c->alloc);
	x = &c->v[c->nr++];
	memset(x, 0, sizeof(*x));
	x->path = xstrndup(path, len);
	x->status = status;
	/* an untracked directory git lists as "dir/" holds a repository of its own */
	if (len && path[len - 1] == '/') {
		x->nested_repo = true;
		x->path[len - 1] = '\0';
		return;
	}
	full = xstrfmt("%s/%s", t->top, x->path);
	if (!lstat(full, &st)) {
		x->symlink = S_ISLNK(st.st_mode);
		x->size = (uint64_t)st.st_size;
		if (S_ISREG(st.st_mode)) {
			char buf[8192];
			int fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

			x->binary = n > 0 && memchr(buf, '\0', (size_t)n) != NULL;
			if (fd >= 0)
				close(fd);
		}
	}
	free(full);
}

int revs_changes(const struct project *p, const struct revs_tree *t, struct revs_changes *out)
{
	struct strbuf files = STRBUF_INIT, others = STRBUF_INIT;
	struct git_repo g;
	const char *s, *end;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	repo_of(p, t, &g);
	/* stat data first, then content only where the stat changed: nothing is written */
	git_exec(&g, NULL, NULL, "update-index", "-q", "--refresh", NULL);
	if (git_exec(&g, &files, "list the changed files", "diff-files", "--name-status", "-z", NULL) ||
	    git_exec(&g, &others, "list the new files", "ls-files", "--others", "--exclude-standard",
		     "-z", NULL))
		goto out;
	for (s = files.buf, end = s + files.len; s < end;) {
		const char *status = s, *path = memchr(s, '\0', (size_t)(end - s));
		const char *next;

		if (!path++ || path >= end)
			break;
		next = memchr(path, '\0', (size_t)(end - path));
		if (!next)
			break;
		add_change(out, t, path, (size_t)(next - path), *status);
		s = next + 1;
	}
	for (s = others.buf, end = s + others.len; s < end;) {
		const char *next = memchr(s, '\0', (size_t)(end - s));

		if (!next)
			break;
		add_change(out, t, s, (size_t)(next - s), 'A');
		s = next + 1;
	}
	ret = 0;
out:
	strbuf_release(&files);
	strbuf_release(&others);
	return ret;
}

/* The user's name and e-mail as their repository says them, else hotloop's. */
static void identity(const struct project *p, char **name, char **email)
{
	struct git_repo g = { p->git_dir, NULL, NULL };
	struct strbuf n = STRBUF_INIT, e = STRBUF_INIT;

	if (!git_exec(&g, &n, NULL, "config", "user.name", NULL) &&
	    !git_exec(&g, &e, NULL, "config", "user.email", NULL)) {
		strbuf_rtrim(&n);
		strbuf_rtrim(&e);
	} else {
		strbuf_reset(&n);
		strbuf_reset(&e);
		strbuf_addstr(&n, "hotloop");
		strbuf_addstr(&e, "hotloop@localhost");
	}
	*name = xstrfmt("user.name=%s", n.buf);
	*email = xstrfmt("user.email=%s", e.buf);
	strbuf_release(&n);
	strbuf_release(&e);
}

static int commit_tree(const struct project *p, const char *tree, const char *parent,
		       const char *message, char **commit)
{
	struct git_repo g = { p->git_dir, NULL, NULL };
	struct strbuf out = STRBUF_INIT;
	char *name, *email;
	int ret;

	identity(p, &name, &email);
	ret = git_exec(&g, &out, "make the commit", "-c", name, "-c", email, "commit-tree", tree,
		       "-p", parent, "-m", message, NULL);
	strbuf_rtrim(&out);
	if (!ret && (out.len < 40 || strspn(out.buf, "0123456789abcdef") != out.len))
		ret = error("cannot make the commit: git commit-tree said '%.80s'", out.buf);
	if (!ret)
		*commit = strbuf_detach(&out, NULL);
	strbuf_release(&out);
	free(name);
	free(email);
	return ret;
}

int revs_commit(const struct project *p, const struct revs_tree *t, const char *parent,
		const char *message, char **commit)
{
	struct strbuf tree = STRBUF_INIT;
	struct git_repo g;
	int ret = -1;

	repo_of(p, t, &g);
	if (git_exec(&g, NULL, "take the candidate's files", "add", "-A", NULL) ||
	    git_exec(&g, &tree, "write the candidate's tree", "write-tree", NULL))
		goto out;
	strbuf_rtrim(&tree);
	ret = commit_tree(p, tree.buf, parent, message, commit);
out:
	strbuf_release(&tree);
	return ret;
}

int revs_recommit(const struct project *p, const char *commit, const char *parent,
		  const char *message, char **out)
{
	char *spec = xstrfmt("%s^{tree}", commit), *tree;
	struct git_repo g = { p->git_dir, NULL, NULL };
	int ret;

	tree = git_resolve(&g, spec);
	free(spec);
	if (!tree)
		return error("cannot read the tree of %s", commit);
	ret = commit_tree(p, tree, parent, message, out);
	free(tree);
	return ret;
}

int revs_diff(const struct project *p, const char *from, const char *to, struct strbuf *diff,
	      struct strbuf *names)
{
	struct git_repo g = { p->git_dir, NULL, NULL };

	if (git_exec(&g, names, "list the changes", "diff-tree", "-r", "--name-only", "--no-commit-id",
		     from, to, NULL) ||
	    git_exec(&g, diff, "diff the candidate", "diff-tree", "-r", "-p", "--no-commit-id", "--binary",
		     from, to, NULL))
		return -1;
	return 0;
}

/* ---- compare's two trees -------------------------------------------------------- */

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int revs_pair_open(struct revs_pair *rp, const struct project *p, const char *base, const char *cand)
{
	bool base_dir = is_dir(base), cand_dir = is_dir(cand);

	/* checkouts only for revisions: two directories need no lock */
	if (!(base_dir && cand_dir)) {
		if (!p->git_dir)
			return error("'%s' is not in a git repository: give directories, not revisions", p->dir);
		if ((rp->lock = project_lock(p, PROJECT_LOCK_WORKTREES)) < 0 || revs_clean_stale(p))
			return -1;
	}
	if (base_dir ? revs_use_dir(base, &rp->base) : revs_checkout(p, base, &rp->base))
		return -1;
	return cand_dir ? revs_use_dir(cand, &rp->cand) : revs_checkout(p, cand, &rp->cand);
}

void revs_pair_describe(const struct revs_pair *rp, struct strbuf *sb)
{
	strbuf_addf(sb, "base:      %s (%.12s)\n", rp->base.given, rp->base.sha ? rp->base.sha : "directory");
	if (rp->cand.sha)
		strbuf_addf(sb, "candidate: %s (%.12s)\n", rp->cand.given, rp->cand.sha);
	else
		strbuf_addf(sb, "candidate: %s (directory)\n", rp->cand.dir);
}

int revs_pair_close(struct revs_pair *rp)
{
	int ret = 0;

	if (revs_remove(&rp->base))
		ret = -1;
	if (revs_remove(&rp->cand))
		ret = -1;
	revs_tree_release(&rp->base);
	revs_tree_release(&rp->cand);
	if (rp->lock >= 0)
		close(rp->lock);
	rp->lock = -1;
	return ret;
}

/* ---- a revision's sources ------------------------------------------------------ */

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int revs_source_open(struct revs_source *s, const struct project *p, const char *rev)
{
	struct git_repo g = { p->git_dir, NULL, NULL };
	struct strbuf out = STRBUF_INIT;
	char *spec = xstrfmt("%s^{commit}", rev);
	size_t alloc = 0;

	memset(s, 0, sizeof(*s));
	if (!p->git_dir)
		BUG("revs_source_open() of a project opened without PROJECT_NEED_GIT");
	s->sha = *rev == '-' ? NULL : git_resolve(&g, spec);
	free(spec);
	if (!s->sha)
		return error("'%s' names no commit", rev);
	if (git_exec(&g, &out, "list the files of the revision", "ls-tree", "-r", "-z", "--name-only",
		     s->sha, NULL)) {
		revs_source_release(s);
		strbuf_release(&out);
		return -1;
	}
	for (size_t i = 0; i < out.len; i += strlen(out.buf + i) + 1) {
		ALLOC_GROW(s->paths, s->nr + 1, alloc);
		s->paths[s->nr++] = xstrdup(out.buf + i);
	}
	if (s->nr > 1)
		qsort(s->paths, s->nr, sizeof(*s->paths), path_cmp);
	s->git_dir = xstrdup(p->git_dir);
	s->top = realpath(p->top, NULL);
	if (!s->top)
		s->top = xstrdup(p->top);
	s->rev = xstrdup(rev);
	strbuf_release(&out);
	return 0;
}

static const char *source_has(const struct revs_source *s, const char *path)
{
	char *const *hit = *path ? bsearch(&path, s->paths, s->nr, sizeof(*s->paths), path_cmp) : NULL;

	return hit ? *hit : NULL;
}

int revs_source_read(void *data, const char *path, struct strbuf *out, struct strbuf *why)
{
	const struct revs_source *s = data;
	struct git_repo g = { s->git_dir, NULL, NULL };
	size_t tlen = strlen(s->top);
	const char *rel = NULL;
	char *obj;
	int ret;

	if (!strncmp(path, s->top, tlen) && path[tlen] == '/')
		rel = source_has(s, path + tlen + 1);
	for (const char *p = path; !rel && p; p = strchr(p, '/')) {
		while (*p == '/')
			p++;
		rel = source_has(s, p);
	}
	if (!rel) {
		strbuf_addf(why, "'%s' is not a file of %s", path, s->rev);
		return -1;
	}
	obj = xstrfmt("%s:%s", s->sha, rel);
	ret = git_exec(&g, out, NULL, "cat-file", "blob", obj, NULL);
	free(obj);
	if (ret) {
		strbuf_addf(why, "cannot read '%s' of %s", rel, s->rev);
		return -1;
	}
	if (out->len > 16 << 20) {
		strbuf_addf(why, "'%s' of %s is over 16 MiB", rel, s->rev);
		return -1;
	}
	return 0;
}

void revs_source_release(struct revs_source *s)
{
	for (size_t i = 0; i < s->nr; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->git_dir);
	free(s->top);
	free(s->sha);
	free(s->rev);
	memset(s, 0, sizeof(*s));
}
