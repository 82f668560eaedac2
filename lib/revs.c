/*
 * revs.c: git worktrees for the builds compare measures, and running a
 * build or test command with its output kept for the error message.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "revs.h"
#include "util.h"

#define OUT_KEEP (64 * 1024)

static void keep_tail(struct strbuf *out, const char *buf, size_t len)
{
	strbuf_add(out, buf, len);
	if (out->len > 2 * OUT_KEEP) {
		memmove(out->buf, out->buf + out->len - OUT_KEEP, OUT_KEEP);
		strbuf_setlen(out, OUT_KEEP);
	}
}

static volatile sig_atomic_t *cancel_flag;

void revs_set_cancel(volatile sig_atomic_t *flag)
{
	cancel_flag = flag;
}

/* Run argv (PATH looked up) in 'dir'; see revs_shell() and revs_run(). */
static int capture(char *const argv[], const char *dir, double timeout, const char *input,
		   const char *const *env, struct strbuf *out, int *status, bool *timed_out)
{
	int fds[2];
	pid_t pid;
	uint64_t deadline = timeout > 0 ? now_ns() + (uint64_t)(timeout * 1e9) : 0;
	bool killed = false;

	if (pipe2(fds, O_CLOEXEC))
		return error("cannot create a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return error("cannot fork: %s", strerror(errno));
	}
	if (!pid) {
		int in = open(input ? input : "/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (in < 0) {
			dprintf(fds[1], "cannot open '%s': %s\n", input, strerror(errno));
			_exit(126);
		}
		dup2(in, 0);
		for (size_t i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		if (dir && *dir && chdir(dir)) {
			dprintf(2, "cannot enter '%s': %s\n", dir, strerror(errno));
			_exit(126);
		}
		execvp(argv[0], argv);
		dprintf(2, "cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	setpgid(pid, pid);
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		int ms = -1, r;
		char buf[4096];
		ssize_t n;

		if (deadline) {
			uint64_t now = now_ns();

			ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000 + 1);
		}
		if (cancel_flag && (ms < 0 || ms > 100))
			ms = 100;
		r = poll(&pfd, 1, ms);
		if (cancel_flag && *cancel_flag && !killed) {
			kill(-pid, SIGKILL);
			killed = true;
			deadline = now_ns() + 2000000000ull;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 && (!deadline || now_ns() < deadline))
			continue;	/* a look at the cancel flag */
		if (r == 0) {
			if (killed)
				break;	/* something that left the group holds the pipe */
			kill(-pid, SIGKILL);
			killed = true;
			deadline = now_ns() + 2000000000ull;
			continue;
		}
		n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		keep_tail(out, buf, (size_t)n);
	}
	close(fds[0]);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return error("cannot wait for '%s': %s", argv[0], strerror(errno));
	if (timed_out)
		*timed_out = killed;
	return 0;
}

int revs_shell(const char *cmd, const char *dir, double timeout, struct strbuf *out,
	       int *status, bool *timed_out)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };

	return capture(argv, dir, timeout, NULL, NULL, out, status, timed_out);
}

int revs_run(const char *cmd, const char *dir, double timeout, const char *input,
	     const char *const *env, struct strbuf *out, int *status, bool *timed_out)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };

	return capture(argv, dir, timeout, input, env, out, status, timed_out);
}

void revs_tail(const struct strbuf *out, int n, struct strbuf *sb)
{
	size_t end = out->len, start;

	while (end && out->buf[end - 1] == '\n')
		end--;
	start = end;
	while (start && n) {
		start--;
		if (out->buf[start] == '\n' && !--n) {
			start++;
			break;
		}
	}
	while (start < end) {
		const char *nl = memchr(out->buf + start, '\n', end - start);
		size_t len = nl ? (size_t)(nl - out->buf) - start : end - start;

		strbuf_addf(sb, "\n    %.*s", (int)len, out->buf + start);
		start += len + 1;
	}
}

/* git -C top ARGS...; its output in 'out'. 0 when it exited 0, else -1 with an error. */
int revs_git(const char *top, struct strbuf *out, const char *what, ...)
{
	char *argv[16];
	struct strbuf tail = STRBUF_INIT, local = STRBUF_INIT;
	struct strbuf *o = out ? out : &local;
	va_list ap;
	size_t n = 0;
	int status, ret = 0;

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = (char *)top;
	va_start(ap, what);
	while (n < ARRAY_SIZE(argv) - 1 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	if (capture(argv, NULL, 0, NULL, NULL, o, &status, NULL)) {
		ret = -1;
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		revs_tail(o, 4, &tail);
		ret = what ? error("cannot %s: git %s failed%s", what, argv[3], tail.buf) : -1;
	}
	strbuf_release(&tail);
	strbuf_release(&local);
	return ret;
}

char *revs_find_top(const char *dir)
{
	char *cur = realpath(dir, NULL);

	while (cur) {
		char *git = xstrfmt("%s/.git", cur), *slash;
		bool found = !access(git, F_OK);

		free(git);
		if (found)
			return cur;
		slash = strrchr(cur, '/');
		if (!slash || slash == cur) {
			free(cur);
			return NULL;
		}
		*slash = '\0';
	}
	return NULL;
}

int revs_git_top(const char *dir, char **top)
{
	struct strbuf out = STRBUF_INIT;
	int ret;

	ret = revs_git(dir, &out, "find the git repository", "rev-parse", "--show-toplevel", NULL);
	strbuf_rtrim(&out);
	if (!ret && !out.len)
		ret = error("cannot find the git repository of '%s'", dir);
	if (!ret)
		*top = strbuf_detach(&out, NULL);
	strbuf_release(&out);
	return ret;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP ? rmdir(path) : unlink(path))
		return error("cannot remove '%s': %s", path, strerror(errno));
	return 0;
}

static int rm_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : error("cannot stat '%s': %s", path, strerror(errno));
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

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
		if (revs_git(top, NULL, "remove a stale worktree", "worktree", "remove", "--force", path, NULL)) {
			/* not a worktree git knows: the files go, git's record is pruned below */
			if (rm_tree(path))
				ret = -1;
		}
		free(path);
	}
	closedir(d);
	if (revs_git(top, NULL, "prune stale worktrees", "worktree", "prune", NULL))
		ret = -1;
out:
	free(dir);
	return ret;
}

char *revs_state_dir(const char *top, const char *sub)
{
	char *h = xstrfmt("%s/.hotloop", top);
	char *w = sub ? xstrfmt("%s/%s", h, sub) : xstrdup(h);
	char *ign = xstrfmt("%s/.gitignore", h);

	if ((mkdir(h, 0777) && errno != EEXIST) || (mkdir(w, 0777) && errno != EEXIST)) {
		error("cannot create '%s': %s", w, strerror(errno));
		free(w);
		w = NULL;
	} else if (access(ign, F_OK) && write_file_atomic(ign, "*\n", 2)) {
		free(w);
		w = NULL;
	}
	free(h);
	free(ign);
	return w;
}

static int make_dirs(const char *top)
{
	char *w = revs_state_dir(top, "worktrees");
	int ret = w ? 0 : -1;

	free(w);
	return ret;
}

int revs_lock(const char *top)
{
	char *path, pid[32], held[32];
	ssize_t n;
	int fd;

	if (make_dirs(top))
		return -1;
	path = xstrfmt("%s/.hotloop/worktrees.lock", top);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		error("cannot open '%s': %s", path, strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK) {
			n = pread(fd, held, sizeof(held) - 1, 0);
			held[n > 0 ? n : 0] = '\0';
			held[strcspn(held, "\n")] = '\0';
			error("another hotloop (pid %s) is using the worktrees under '%s/%s'; "
			      "wait for it to finish", *held ? held : "unknown", top, REVS_DIR);
		} else {
			error("cannot lock '%s': %s", path, strerror(errno));
		}
		close(fd);
		fd = -1;
		goto out;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n)
		warning("cannot write the pid to '%s': %s", path, strerror(errno));
out:
	free(path);
	return fd;
}

int revs_add(const char *top, const char *role, const char *rev, const char *subdir,
	     struct revs_tree *t)
{
	struct strbuf out = STRBUF_INIT;
	char *spec = xstrfmt("%s^{commit}", rev);
	int ret = -1;

	memset(t, 0, sizeof(*t));
	t->given = xstrdup(rev);
	if (revs_git(top, &out, "resolve the revision", "rev-parse", "--verify", "--quiet", spec, NULL)) {
		error("unknown revision '%s'", rev);
		goto out;
	}
	strbuf_rtrim(&out);
	if (out.len < 12 || strspn(out.buf, "0123456789abcdef") != out.len) {
		error("unknown revision '%s'", rev);
		goto out;
	}
	t->sha = strbuf_detach(&out, NULL);
	if (make_dirs(top))
		goto out;
	t->top = xstrfmt("%s/%s/%s-%.12s", top, REVS_DIR, role, t->sha);
	if (revs_git(top, NULL, "check out the revision", "worktree", "add", "--detach", "--quiet",
		t->top, t->sha, NULL))
		goto out;
	t->added = true;
	t->dir = *subdir ? xstrfmt("%s/%s", t->top, subdir) : xstrdup(t->top);
	ret = 0;
out:
	strbuf_release(&out);
	free(spec);
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
	if (revs_git(top, NULL, "remove the worktree", "worktree", "remove", "--force", t->top, NULL)) {
		ret = rm_tree(t->top);
		revs_git(top, NULL, "prune worktrees", "worktree", "prune", NULL);
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
