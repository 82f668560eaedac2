/*
 * sandbox.h: running what hotloop does not trust (an agent, the build and
 * tests of a candidate it wrote) so it can write only where it is given
 * leave and everything it starts dies with it, whatever it does with
 * sessions and process groups. The means is bubblewrap (Debian's
 * `bubblewrap`): a PID namespace of its own (--unshare-pid, --die-with-parent),
 * the whole filesystem read-only (--ro-bind / /, /tmp too) but the
 * writable paths and a private directory for temporary files ($TMPDIR),
 * /dev and /proc of its own, a new session (no terminal to inject into);
 * the network as it is (an LLM CLI needs its API).
 * run-command.c applies it (struct child_process.sandbox). A struct sandbox
 * and its paths stay the caller's.
 */
#ifndef HOTLOOP_SANDBOX_H
#define HOTLOOP_SANDBOX_H

#include <stddef.h>

struct sandbox {
	const char *const *writable;	/* paths bound writable, NULL-terminated; may be NULL */
	const char *tmp;		/* a directory of its own for temporary files ($TMPDIR); may be NULL */
	const char **own;		/* private: what sandbox_init() allocated */
	/*
	 * For a long-lived helper (the runner's launcher): the command is the
	 * namespace's pid 1 (it reaps, and its kill(-1) reaches every process
	 * in the sandbox but itself), and bubblewrap writes {"child-pid": N},
	 * its pid outside, to info_fd (0: not asked).
	 */
	bool as_pid_1;
	int info_fd;
};
#define SANDBOX_INIT { 0 }

/*
 * The sandbox of a step in a checkout: it may write 'tree', the paths in
 * 'more' (NULL-terminated; may be NULL) and 'tmp'. The strings stay the
 * caller's; sandbox_release() frees what this allocated.
 */
void sandbox_init(struct sandbox *s, const char *tree, const char *const *more, const char *tmp);
void sandbox_release(struct sandbox *s);

/*
 * NULL when a sandbox can be made here; else why not, with what to do
 * (probed once: bubblewrap runs `true` in one).
 */
const char *sandbox_unavailable(void);

/*
 * The argv that runs 'argv' in sandbox s, starting in 'cwd': bwrap and its
 * options, then argv. Writable paths that do not exist are left out. Free
 * with sandbox_argv_free().
 */
const char **sandbox_argv(const struct sandbox *s, const char *cwd, const char *const *argv);
void sandbox_argv_free(const char **argv);

/*
 * "~/.claude" and friends: a writable path of hotloop.conf with ~ made
 * $HOME (caller frees).
 */
char *sandbox_expand(const char *path);

#endif
