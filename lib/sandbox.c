/*
 * sandbox.c: bubblewrap's command line for a sandbox, and whether one can
 * be made here (see sandbox.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "run-command.h"
#include "sandbox.h"
#include "strbuf.h"
#include "util.h"

/* What every sandbox is: its own PID namespace and session, dying with hotloop, / read-only. */
static const char *const base_options[] = {
	"--die-with-parent", "--unshare-pid", "--new-session", "--ro-bind", "/", "/",
	"--dev", "/dev", "--proc", "/proc",
};

static char *bwrap_path(void)
{
	return doctor_which("bwrap");
}

const char *sandbox_unavailable(void)
{
	static int probed;
	static char why[256];
	char *bwrap;

	if (probed)
		return *why ? why : NULL;
	probed = 1;
	bwrap = bwrap_path();
	if (!bwrap) {
		snprintf(why, sizeof(why), "bubblewrap is not installed (apt-get install bubblewrap)");
	} else {
		const char *argv[ARRAY_SIZE(base_options) + 4] = { bwrap };
		struct child_process cp = CHILD_PROCESS_INIT;
		size_t n = 1;

		for (size_t i = 0; i < ARRAY_SIZE(base_options); i++)
			argv[n++] = base_options[i];
		argv[n++] = "--";
		argv[n++] = "true";
		cp.argv = argv;
		cp.timeout = 30;
		if (run_command(&cp) || !child_succeeded(&cp)) {
			struct strbuf tail = STRBUF_INIT;

			output_tail(&cp.out, 1, &tail);
			snprintf(why, sizeof(why), "bubblewrap cannot make a sandbox here%s%s (user and PID "
				 "namespaces must be allowed)", tail.len ? ":" : "", tail.buf + (tail.len ? 5 : 0));
			strbuf_release(&tail);
		}
		child_process_release(&cp);
	}
	free(bwrap);
	return *why ? why : NULL;
}

char *sandbox_expand(const char *path)
{
	const char *home = getenv("HOME");

	if (path[0] == '~' && (path[1] == '/' || !path[1]) && home)
		return xstrfmt("%s%s", home, path + 1);
	return xstrdup(path);
}

void sandbox_init(struct sandbox *s, const char *tree, const char *const *more, const char *tmp)
{
	size_t n = 0;

	while (more && more[n])
		n++;
	s->own = xcalloc(n + 2, sizeof(*s->own));
	s->own[0] = tree;
	for (size_t i = 0; i < n; i++)
		s->own[i + 1] = more[i];
	s->writable = s->own;
	s->tmp = tmp;
	s->as_pid_1 = false;
	s->info_fd = 0;
}

void sandbox_release(struct sandbox *s)
{
	free(s->own);
	memset(s, 0, sizeof(*s));
}

const char **sandbox_argv(const struct sandbox *s, const char *cwd, const char *const *argv)
{
	const char **v = NULL;
	size_t nr = 0, alloc = 0;
	struct stat st;

	if (sandbox_unavailable())
		BUG("sandbox_argv() where no sandbox can be made");
#define ADD(x) do { ALLOC_GROW(v, nr + 2, alloc); v[nr++] = (x); } while (0)
	ADD(bwrap_path());
	for (size_t i = 0; i < ARRAY_SIZE(base_options); i++)
		ADD(xstrdup(base_options[i]));
	for (size_t i = 0; s->writable && s->writable[i]; i++) {
		if (stat(s->writable[i], &st))
			continue;
		ADD(xstrdup("--bind"));
		ADD(xstrdup(s->writable[i]));
		ADD(xstrdup(s->writable[i]));
	}
	if (s->tmp && !stat(s->tmp, &st)) {
		ADD(xstrdup("--bind"));
		ADD(xstrdup(s->tmp));
		ADD(xstrdup(s->tmp));
		ADD(xstrdup("--setenv"));
		ADD(xstrdup("TMPDIR"));
		ADD(xstrdup(s->tmp));
	}
	if (s->as_pid_1)
		ADD(xstrdup("--as-pid-1"));
	if (s->info_fd > 0) {
		ADD(xstrdup("--info-fd"));
		ADD(xstrfmt("%d", s->info_fd));
	}
	if (cwd) {
		ADD(xstrdup("--chdir"));
		ADD(xstrdup(cwd));
	}
	ADD(xstrdup("--"));
	for (size_t i = 0; argv[i]; i++)
		ADD(xstrdup(argv[i]));
#undef ADD
	v[nr] = NULL;
	return v;
}

void sandbox_argv_free(const char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free((char *)argv[i]);
	free(argv);
}
