/*
 * git.c: running git (see git.h). git itself is never cancelled halfway:
 * an interrupted `update-ref` would leave its lock behind, so hl_cancel()
 * waits for it to finish.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git.h"
#include "run-command.h"
#include "strbuf.h"
#include "util.h"

/* Run git with argv (git and its arguments) in env, from dir; see git_exec(). */
static int run_git(const char *const *argv, const char *const *env, const char *dir,
		   struct strbuf *out, const char *what)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	struct strbuf tail = STRBUF_INIT;
	const char *sub = argv[1];
	int ret = 0;

	/* past -C DIR and -c NAME=VALUE: the subcommand */
	for (size_t i = 1; argv[i] && argv[i + 1] && !strncmp(argv[i], "-", 1); i += 2)
		sub = argv[i + 2];
	cp.argv = argv;
	cp.env = env;
	cp.dir = dir;
	if (run_command(&cp)) {
		ret = -1;
	} else if (!child_succeeded(&cp)) {
		output_tail(&cp.out, 4, &tail);
		ret = what ? error("cannot %s: git %s failed%s", what, sub ? sub : "", tail.buf) : -1;
	}
	if (out)
		strbuf_add(out, cp.out.buf, cp.out.len);
	child_process_release(&cp);
	strbuf_release(&tail);
	return ret;
}

/* argv: "git", then 'first' (may be NULL), then the rest of ap. */
static const char **collect_args(const char *first, va_list ap, size_t *nr)
{
	const char **argv = NULL, *arg;
	size_t alloc = 0;

	*nr = 0;
	ALLOC_GROW(argv, 4, alloc);
	argv[(*nr)++] = "git";
	if (first)
		argv[(*nr)++] = first;
	while ((arg = va_arg(ap, const char *))) {
		ALLOC_GROW(argv, *nr + 2, alloc);
		argv[(*nr)++] = arg;
	}
	argv[*nr] = NULL;
	return argv;
}

int git_exec(const struct git_repo *g, struct strbuf *out, const char *what, ...)
{
	char *env[6];
	size_t n = 0, nr;
	const char **argv;
	va_list ap;
	int ret;

	env[n++] = xstrfmt("GIT_DIR=%s", g->git_dir);
	/* no work tree: plumbing, run from the git directory itself */
	if (g->work_tree)
		env[n++] = xstrfmt("GIT_WORK_TREE=%s", g->work_tree);
	env[n++] = xstrdup("GIT_CEILING_DIRECTORIES=/");
	if (g->index)
		env[n++] = xstrfmt("GIT_INDEX_FILE=%s", g->index);
	env[n++] = xstrdup("GIT_OPTIONAL_LOCKS=0");
	env[n] = NULL;
	va_start(ap, what);
	argv = collect_args(NULL, ap, &nr);
	va_end(ap);
	ret = run_git(argv, (const char *const *)env, g->work_tree ? g->work_tree : g->git_dir, out, what);
	for (size_t i = 0; i < n; i++)
		free(env[i]);
	free(argv);
	return ret;
}

/* What `rev-parse --verify` printed, when it succeeded ('failed' 0) and is a commit id; else NULL. */
static char *commit_id(struct strbuf *out, int failed)
{
	strbuf_rtrim(out);
	if (failed || out->len < 40 || strspn(out->buf, "0123456789abcdef") != out->len) {
		strbuf_release(out);
		return NULL;
	}
	return strbuf_detach(out, NULL);
}

char *git_resolve(const struct git_repo *g, const char *rev)
{
	struct strbuf out = STRBUF_INIT;

	return commit_id(&out, git_exec(g, &out, NULL, "rev-parse", "--verify", "--quiet", rev, NULL));
}

int git_run(const char *dir, struct strbuf *out, const char *what, ...)
{
	const char **argv, **full;
	size_t nr;
	va_list ap;
	int ret;

	va_start(ap, what);
	argv = collect_args(NULL, ap, &nr);
	va_end(ap);
	full = xcalloc(nr + 3, sizeof(*full));
	full[0] = "git";
	full[1] = "-C";
	full[2] = dir;
	for (size_t i = 1; i < nr; i++)
		full[i + 2] = argv[i];
	ret = run_git(full, NULL, NULL, out, what);
	free(full);
	free(argv);
	return ret;
}

char *git_rev_parse(const char *dir, const char *rev)
{
	struct strbuf out = STRBUF_INIT;

	return commit_id(&out, git_run(dir, &out, NULL, "rev-parse", "--verify", "--quiet", rev, NULL));
}

int git_top(const char *dir, char **top)
{
	struct strbuf out = STRBUF_INIT;
	int ret;

	ret = git_run(dir, &out, "find the git repository", "rev-parse", "--show-toplevel", NULL);
	strbuf_rtrim(&out);
	if (!ret && !out.len)
		ret = error("cannot find the git repository of '%s'", dir);
	if (!ret)
		*top = strbuf_detach(&out, NULL);
	strbuf_release(&out);
	return ret;
}

char *git_common_dir(const char *dir)
{
	struct strbuf out = STRBUF_INIT;
	char *path = NULL, *real;

	if (!git_run(dir, &out, "find the repository", "rev-parse", "--path-format=absolute",
		     "--git-common-dir", NULL)) {
		strbuf_rtrim(&out);
		path = strbuf_detach(&out, NULL);
	}
	strbuf_release(&out);
	if (!path)
		return NULL;
	real = realpath(path, NULL);
	if (!real)
		error("cannot resolve the git directory '%s': %s", path, strerror(errno));
	free(path);
	return real;
}

char *git_find_top(const char *dir)
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
