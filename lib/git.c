/*
 * git.c: running git (see git.h). git itself is never cancelled halfway:
 * an interrupted `git worktree remove` or `update-ref` would leave its
 * locks behind, so hl_cancel() waits for it to finish.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git.h"
#include "run-command.h"
#include "strbuf.h"
#include "util.h"

int git_run(const char *dir, struct strbuf *out, const char *what, ...)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	struct strbuf tail = STRBUF_INIT;
	const char **argv = NULL;
	size_t nr = 0, alloc = 0;
	const char *arg;
	va_list ap;
	int ret = 0;

	ALLOC_GROW(argv, 4, alloc);
	argv[nr++] = "git";
	argv[nr++] = "-C";
	argv[nr++] = dir;
	va_start(ap, what);
	while ((arg = va_arg(ap, const char *))) {
		ALLOC_GROW(argv, nr + 2, alloc);
		argv[nr++] = arg;
	}
	va_end(ap);
	argv[nr] = NULL;
	cp.argv = argv;
	if (run_command(&cp)) {
		ret = -1;
	} else if (!child_succeeded(&cp)) {
		output_tail(&cp.out, 4, &tail);
		ret = what ? error("cannot %s: git %s failed%s", what, nr > 3 ? argv[3] : "", tail.buf) : -1;
	}
	if (out)
		strbuf_add(out, cp.out.buf, cp.out.len);
	child_process_release(&cp);
	strbuf_release(&tail);
	free(argv);
	return ret;
}

char *git_rev_parse(const char *dir, const char *rev)
{
	struct strbuf out = STRBUF_INIT;

	if (git_run(dir, &out, NULL, "rev-parse", "--verify", "--quiet", rev, NULL)) {
		strbuf_release(&out);
		return NULL;
	}
	strbuf_rtrim(&out);
	if (out.len < 40 || strspn(out.buf, "0123456789abcdef") != out.len) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out, NULL);
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
