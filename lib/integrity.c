/*
 * integrity.c: recording the user's repository and checking it is as
 * recorded (see integrity.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "git.h"
#include "integrity.h"
#include "project.h"
#include "util.h"

/* What a walk records of the files it finds. */
enum walk_kind {
	WALK_TREE,	/* the work tree: all but .git at its top and the skipped directories */
	WALK_GIT,	/* the git directory: all but what is compared otherwise */
	WALK_OBJECTS,	/* the object store: stat data only */
};

static int64_t ts_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int sha256_bytes(const void *buf, size_t len, unsigned char sha[32])
{
	return EVP_Digest(buf, len, sha, NULL, EVP_sha256(), NULL) ? 0 : error("cannot hash: no memory");
}

/*
 * The SHA-256 of what 'path' holds now: a regular file's content, a
 * symlink's target. 0; 1 when it is neither (any more) or cannot be read;
 * -1 with an error when hashing itself fails.
 */
static int hash_path(const char *path, const struct stat *st, unsigned char sha[32])
{
	if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlink(path, target, sizeof(target));

		return n < 0 ? 1 : sha256_bytes(target, (size_t)n, sha);
	}
	if (!S_ISREG(st->st_mode))
		return 1;

	/* not following a link, not blocking on a FIFO put in its place */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat now;
	EVP_MD_CTX *ctx;
	char buf[65536];
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return 1;
	if (fstat(fd, &now) || !S_ISREG(now.st_mode)) {
		close(fd);
		return 1;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		ret = error("cannot hash: no memory");
		goto out;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
			ret = error("cannot hash '%s'", path);
			goto out;
		}
	if (n < 0)
		ret = 1;
	else if (!EVP_DigestFinal_ex(ctx, sha, NULL))
		ret = error("cannot hash '%s'", path);
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return ret;
}

static bool skipped(const struct integrity *in, const char *abs)
{
	for (size_t i = 0; in->skip && in->skip[i]; i++)
		if (!strcmp(in->skip[i], abs))
			return true;
	return false;
}

/* Is 'rel' (from the walk's root) compared otherwise, or hotloop's? */
static bool left_out(const struct integrity *in, enum walk_kind kind, const char *rel, const char *abs)
{
	static const char *const git_own[] = { "objects", "refs", "packed-refs", "logs", "index", NULL };
	const char *base;

	if (skipped(in, abs))
		return true;
	if (kind == WALK_TREE)
		return !strcmp(rel, ".git");
	if (kind != WALK_GIT)
		return false;
	for (size_t i = 0; git_own[i]; i++)
		if (!strcmp(rel, git_own[i]))
			return true;
	/* the index and logs of the user's other worktrees */
	base = strrchr(rel, '/');
	return !strncmp(rel, "worktrees/", 10) && base && strchr(rel + 10, '/') == base &&
	       (!strcmp(base + 1, "index") || !strcmp(base + 1, "logs"));
}

/* One file's stat data, and with 'hash' its content's SHA-256. */
static int add_file(struct integrity_files *out, enum walk_kind kind, bool hash, const char *rel,
		    const char *abs, const struct stat *st)
{
	struct integrity_file *f;

	ALLOC_GROW(out->v, out->nr + 1, out->alloc);
	f = &out->v[out->nr++];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(rel);
	f->mode = st->st_mode;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = (uint64_t)st->st_size;
	f->mtime_ns = ts_ns(st->st_mtim);
	f->ctime_ns = ts_ns(st->st_ctim);
	if (!hash || kind == WALK_OBJECTS || S_ISDIR(st->st_mode))
		return 0;
	/* unreadable: compared by its stat data alone */
	return hash_path(abs, st, f->sha) < 0 ? -1 : 0;
}

/*
 * The files of directory 'dfd' (taken: closed here), at 'abs', 'rel' from
 * the root. Names are looked up from their directory's fd, not by their
 * whole path. A directory that cannot be read is recorded, not entered.
 */
static int walk(const struct integrity *in, enum walk_kind kind, bool hash, int dfd, struct strbuf *abs,
		struct strbuf *rel, struct integrity_files *out)
{
	size_t abs_len = abs->len, rel_len = rel->len;
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	struct stat st;
	int ret = 0;

	if (!d) {
		close(dfd);
		return error("cannot read '%s': %s", abs->buf, strerror(errno));
	}
	while (!ret && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		strbuf_setlen(abs, abs_len);
		strbuf_setlen(rel, rel_len);
		strbuf_addch(abs, '/');
		strbuf_addstr(abs, de->d_name);
		if (rel_len)
			strbuf_addch(rel, '/');
		strbuf_addstr(rel, de->d_name);
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    left_out(in, kind, rel->buf, abs->buf))
			continue;
		ret = add_file(out, kind, hash, rel->buf, abs->buf, &st);
		if (!ret && S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				ret = walk(in, kind, hash, sub, abs, rel, out);
			else if (errno != EACCES && errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
				ret = error("cannot read '%s': %s", abs->buf, strerror(errno));
		}
	}
	closedir(d);
	strbuf_setlen(abs, abs_len);
	strbuf_setlen(rel, rel_len);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct integrity_file *)a)->path, ((const struct integrity_file *)b)->path);
}

/* The files under 'root', sorted by path; hashed with 'hash' (the record), else stat data only (a check). */
static int walk_root(const struct integrity *in, enum walk_kind kind, bool hash, const char *root,
		     struct integrity_files *out)
{
	struct strbuf abs = STRBUF_INIT, rel = STRBUF_INIT;
	int ret, fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : error("cannot read '%s': %s", root, strerror(errno));
	strbuf_addstr(&abs, root);
	ret = walk(in, kind, hash, fd, &abs, &rel, out);
	if (out->nr)
		qsort(out->v, out->nr, sizeof(*out->v), cmp_file);
	strbuf_release(&abs);
	strbuf_release(&rel);
	return ret;
}

static void files_release(struct integrity_files *f)
{
	for (size_t i = 0; i < f->nr; i++)
		free(f->v[i].path);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/*
 * 'path' into sb when it exists: 1 read, 0 there is none, -1 with an
 * error when it cannot be read.
 */
static int read_optional(struct strbuf *sb, const char *path, const char *what)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return errno == ENOENT ? 0 : error("cannot read %s '%s': %s", what, path, strerror(errno));
	ret = strbuf_read_fd(sb, fd, 1 << 30) ? error("cannot read %s '%s': %s", what, path,
						     strerror(errno)) : 1;
	close(fd);
	return ret;
}

/*
 * HEAD, the refs, the stash's reflog and the index of 'in' into 'to'; the
 * index's entries only when its bytes are not those of 'was' (NULL: the
 * record, always).
 */
static int read_git_state(const struct integrity *in, struct integrity *to, const struct integrity *was)
{
	struct git_repo g = { .git_dir = in->git_dir };
	char *head = xstrfmt("%s/HEAD", in->git_dir);
	char *stash = xstrfmt("%s/logs/refs/stash", in->common_dir);
	char *index = xstrfmt("%s/index", in->git_dir);
	struct stat st;
	int ret = 0;

	if (read_optional(&to->head, head, "the repository's HEAD") <= 0)
		ret = to->head.len ? -1 : error("the repository has no HEAD '%s'", head);
	else if (git_exec(&g, &to->refs, "list the repository's refs", "for-each-ref",
		     "--format=%(refname) %(objectname) %(symref)", NULL) ||
	    read_optional(&to->stash_log, stash, "the stash") < 0)
		ret = -1;
	to->has_index = !ret && !lstat(index, &st);
	if (!ret && !to->has_index && errno != ENOENT)
		ret = error("cannot read the index '%s': %s", index, strerror(errno));
	if (!ret && to->has_index) {
		g.index = index;
		int h = hash_path(index, &st, to->index_sha);

		if (h)
			ret = h < 0 ? -1 : error("cannot read the index '%s'", index);
		else if (was && was->has_index && !memcmp(was->index_sha, to->index_sha, sizeof(to->index_sha)))
			;	/* the same bytes: the same entries */
		else if (git_exec(&g, &to->entries, "list the index", "ls-files", "--stage", "-v", NULL))
			ret = -1;
	}
	free(head);
	free(stash);
	free(index);
	return ret;
}

/* Leave the line of ref 'skip' out of for-each-ref's 'refs'. */
static void drop_ref(struct strbuf *refs, const char *skip)
{
	size_t n = skip ? strlen(skip) : 0;

	for (char *p = refs->buf; skip && *p;) {
		char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p + 1) : strlen(p);

		if (!strncmp(p, skip, n) && p[n] == ' ') {
			memmove(p, p + len, refs->len - (size_t)(p - refs->buf) - len + 1);
			refs->len -= len;
		} else {
			p += len;
		}
	}
}

static int absolute_git_dir(const char *top, char **out)
{
	struct strbuf sb = STRBUF_INIT;

	if (git_run(top, &sb, "find the repository's git directory", "rev-parse", "--absolute-git-dir",
		    NULL)) {
		strbuf_release(&sb);
		return -1;
	}
	strbuf_rtrim(&sb);
	*out = strbuf_detach(&sb, NULL);
	return 0;
}

/* The real path of 'path', or of its directory and its name when it does not exist yet (the kb). */
static char *real_path_to_be(const char *path)
{
	char *real = realpath(path, NULL), *dir, *slash;

	if (real)
		return real;
	slash = strrchr(path, '/');
	if (!slash || slash == path)
		return xstrdup(path);
	dir = xstrndup(path, (size_t)(slash - path));
	real = realpath(dir, NULL);
	free(dir);
	if (!real)
		return xstrdup(path);
	dir = xstrfmt("%s%s", real, slash);
	free(real);
	return dir;
}

int integrity_record(struct integrity *in, const struct project *p, const char *const *skip,
		     const char *skip_ref)
{
	size_t n = 0;

	if (!p->git_dir)
		BUG("integrity_record() of a project opened without PROJECT_NEED_GIT");
	in->top = xstrdup(p->top);
	in->common_dir = xstrdup(p->git_dir);
	if (absolute_git_dir(p->top, &in->git_dir))
		return -1;
	while (skip && skip[n])
		n++;
	in->skip = xcalloc(n + 1, sizeof(*in->skip));
	for (size_t i = 0; i < n; i++)
		in->skip[i] = real_path_to_be(skip[i]);
	in->skip_ref = skip_ref ? xstrdup(skip_ref) : NULL;
	if (read_git_state(in, in, NULL))
		return -1;
	drop_ref(&in->refs, in->skip_ref);
	if (walk_root(in, WALK_TREE, true, in->top, &in->tree) ||
	    walk_root(in, WALK_GIT, true, in->common_dir, &in->git))
		return -1;

	char *objects = xstrfmt("%s/objects", in->common_dir);
	int ret = walk_root(in, WALK_OBJECTS, false, objects, &in->objects);

	free(objects);
	return ret;
}

/* The lines of 'text' (changed in place), sorted. */
static char **sorted_lines(char *text, size_t *nr)
{
	char **v = NULL;
	size_t alloc = 0;

	*nr = 0;
	for (char *p = text, *q; *p; p = q) {
		q = strchrnul(p, '\n');
		if (*q)
			*q++ = '\0';
		ALLOC_GROW(v, *nr + 1, alloc);
		v[(*nr)++] = p;
	}
	if (*nr)
		qsort(v, *nr, sizeof(*v), cmp_str);
	return v;
}

/* The lines only 'was' has ("KIND was: ...") and only 'is' has ("KIND now: ..."), into 'what'. */
static void diff_lines(const char *kind, const char *was, const char *is, struct strbuf *what)
{
	char *a = xstrdup(was), *b = xstrdup(is), **va, **vb;
	size_t na, nb, i = 0, j = 0;

	va = sorted_lines(a, &na);
	vb = sorted_lines(b, &nb);
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(va[i], vb[j]);

		if (c < 0)
			strbuf_addf(what, "%s was: %s\n", kind, va[i++]);
		else if (c > 0)
			strbuf_addf(what, "%s now: %s\n", kind, vb[j++]);
		else
			i++, j++;
	}
	free(va);
	free(vb);
	free(a);
	free(b);
}

static bool same_stat(const struct integrity_file *a, const struct integrity_file *b, enum walk_kind kind)
{
	if (kind == WALK_OBJECTS)	/* git freshens an object it writes again: its times move */
		return a->ino == b->ino && a->size == b->size && a->mode == b->mode;
	return a->mode == b->mode && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* What is true of 'was' now, at 'abs': NULL when it holds what it held. */
static const char *file_change(const struct integrity_file *was, const struct integrity_file *is,
			       enum walk_kind kind, const char *abs)
{
	unsigned char zero[32] = { 0 }, sha[32];
	struct stat st;

	if (same_stat(was, is, kind))
		return NULL;
	if (kind == WALK_OBJECTS)
		return "changed";
	if ((was->mode & S_IFMT) != (is->mode & S_IFMT))
		return "changed type";
	if (S_ISDIR(was->mode))
		return was->mode == is->mode ? NULL : "changed mode";
	if (!memcmp(was->sha, zero, sizeof(zero)) || lstat(abs, &st) || hash_path(abs, &st, sha))
		return "changed";		/* unreadable then or now: stat data decide */
	if (memcmp(was->sha, sha, sizeof(sha)))
		return "modified";
	return was->mode == is->mode ? NULL : "changed mode";
}

static void note_file(struct strbuf *what, size_t *nr, size_t max, const char *where, const char *path,
		      const char *how)
{
	if ((*nr)++ < max)
		strbuf_addf(what, "%s%s: %s\n", where, path, how);
}

/* The changes from 'was' to the files now under 'root' (as walked), into 'what'. */
static int diff_files(const struct integrity *in, enum walk_kind kind, const char *root, const char *where,
		      const struct integrity_files *was, struct strbuf *what, size_t *nr, size_t max)
{
	struct integrity_files is = { 0 };
	size_t i = 0, j = 0;
	int ret = walk_root(in, kind, false, root, &is);

	while (!ret && (i < was->nr || j < is.nr)) {
		int c = i == was->nr ? 1 : j == is.nr ? -1 : strcmp(was->v[i].path, is.v[j].path);

		if (c < 0) {
			note_file(what, nr, max, where, was->v[i++].path, "deleted");
		} else if (c > 0) {
			if (kind != WALK_OBJECTS)
				note_file(what, nr, max, where, is.v[j].path, "added");
			j++;
		} else {
			char *abs = xstrfmt("%s/%s", root, is.v[j].path);
			const char *how = file_change(&was->v[i], &is.v[j], kind, abs);

			if (how)
				note_file(what, nr, max, where, is.v[j].path, how);
			free(abs);
			i++, j++;
		}
	}
	files_release(&is);
	return ret;
}

int integrity_check(const struct integrity *in, struct strbuf *what, size_t max)
{
	struct integrity now = INTEGRITY_INIT;
	size_t start = what->len, nr = 0;
	char *objects;
	int ret;

	now.git_dir = in->git_dir;
	now.common_dir = in->common_dir;
	ret = read_git_state(in, &now, in);
	if (ret)
		goto out;
	drop_ref(&now.refs, in->skip_ref);
	if (strcmp(in->head.buf, now.head.buf)) {
		strbuf_rtrim(&now.head);
		strbuf_addf(what, "HEAD was '%.*s', is '%s'\n", (int)strcspn(in->head.buf, "\n"), in->head.buf,
			    now.head.buf);
	}
	if (strcmp(in->refs.buf, now.refs.buf))
		diff_lines("ref", in->refs.buf, now.refs.buf, what);
	if (in->stash_log.len != now.stash_log.len || memcmp(in->stash_log.buf, now.stash_log.buf,
							       in->stash_log.len))
		strbuf_addstr(what, "the stash changed (its reflog)\n");
	if (in->has_index != now.has_index)
		strbuf_addf(what, "the index was %s\n", in->has_index ? "deleted" : "made");
	else if (in->has_index && memcmp(in->index_sha, now.index_sha, sizeof(now.index_sha)) &&
		 strcmp(in->entries.buf, now.entries.buf))
		diff_lines("index entry", in->entries.buf, now.entries.buf, what);
	objects = xstrfmt("%s/objects", in->common_dir);
	ret = diff_files(in, WALK_TREE, in->top, "", &in->tree, what, &nr, max) ||
	      diff_files(in, WALK_GIT, in->common_dir, "git directory: ", &in->git, what, &nr, max) ||
	      diff_files(in, WALK_OBJECTS, objects, "object store: ", &in->objects, what, &nr, max) ? -1 : 0;
	free(objects);
	if (nr > max)
		strbuf_addf(what, "... and %zu more files\n", nr - max);
	if (!ret)
		ret = what->len > start;
out:
	now.git_dir = now.common_dir = NULL;
	integrity_release(&now);
	return ret;
}

void integrity_release(struct integrity *in)
{
	free(in->top);
	free(in->git_dir);
	free(in->common_dir);
	for (size_t i = 0; in->skip && in->skip[i]; i++)
		free(in->skip[i]);
	free(in->skip);
	free(in->skip_ref);
	strbuf_release(&in->head);
	strbuf_release(&in->refs);
	strbuf_release(&in->entries);
	strbuf_release(&in->stash_log);
	files_release(&in->tree);
	files_release(&in->git);
	files_release(&in->objects);
	memset(in, 0, sizeof(*in));
	strbuf_init(&in->head, 0);
	strbuf_init(&in->refs, 0);
	strbuf_init(&in->entries, 0);
	strbuf_init(&in->stash_log, 0);
}
