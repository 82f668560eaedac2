/*
 * run-command.h: the one way hotloop starts a helper process (a build, a
 * test, git, an agent): argv or a /bin/sh line, a working directory, added
 * environment, standard input from a file, a process group of its own, a
 * timeout, cancellation (hl_cancel()), and its output (stdout and stderr
 * together) kept as a tail in memory or written to a file. git's
 * run-command.c is the model. Three spawns stay elsewhere on purpose:
 * measured runs go through runner.c's launcher (so peak RSS is the run's
 * own), record.c forks the profiled command stopped until its events
 * are open, and heap-record.c runs its command on hotloop's terminal
 * with the heap recorder preloaded. A struct child_process owns its output buffer until
 * child_process_release(); the strings it points to stay the caller's.
 */
#ifndef HOTLOOP_RUN_COMMAND_H
#define HOTLOOP_RUN_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"

struct sandbox;

/* How much of a child's output stays in memory: its last 64 KiB. */
#define RUN_COMMAND_KEEP (64 * 1024)

struct child_process {
	/* what to run: argv (argv[0] looked up in PATH), or else a shell line */
	const char *const *argv;
	const char *shell;		/* run as /bin/sh -c SHELL */
	const char *dir;		/* working directory; NULL: hotloop's */
	const char *const *env;		/* NAME=VALUE added to hotloop's, NULL-terminated; may be NULL */
	const char *in;			/* standard input from this file; NULL: /dev/null */
	const char *out_file;		/* stdout and stderr go to this file (truncated) instead of 'out' */
	double timeout;			/* seconds; 0: none */
	bool kill_leftovers;		/* once it exits, kill what is left in its process group */
	bool cancellable;		/* hl_cancel() kills it (builds, tests, agents; not git) */
	/*
	 * A guard process between hotloop and it: when hotloop dies, even by
	 * SIGKILL, the guard kills it and everything it started (its group,
	 * and what left the group, since the guard is a subreaper). The guard
	 * leads the group; it ignores the signals sent to the group, and once
	 * the command ends it kills what is left and ends the same way, so
	 * 'status' is the command's own. For services and their loads.
	 */
	bool guard;
	const struct sandbox *sandbox;	/* run it in this sandbox (sandbox.h); NULL: as it is */

	/* its output, the last RUN_COMMAND_KEEP bytes (empty with out_file) */
	struct strbuf out;
	/* how it ended, once finished */
	int status;			/* as from waitpid() */
	bool timed_out;			/* killed (with its group) after 'timeout' */
	bool cancelled;			/* killed (with its group) by hl_cancel() */
	double seconds;			/* wall time from start to exit */

	/* private */
	const char **wrapped;		/* the sandbox's argv */
	pid_t pid;
	int out_fd, pidfd;
	uint64_t start_ns;
	bool running;
};

#define CHILD_PROCESS_INIT { .out = STRBUF_INIT, .pid = -1, .out_fd = -1, .pidfd = -1 }

void child_process_init(struct child_process *cp);
/* Its output buffer; the child must have finished (or never started). */
void child_process_release(struct child_process *cp);

/*
 * Start cp: 0, or -1 with an error (and nothing running) when it cannot
 * be started: no pipe or fork, an 'in' or 'out_file' that cannot be
 * opened, a 'dir' that cannot be entered, or a program that cannot be run.
 */
int start_command(struct child_process *cp);
/*
 * Wait for cp to end, keeping its output, killing its process group at
 * its timeout or, when it is cancellable, on hl_cancel(). 0, or -1 with an error when it cannot be
 * waited for.
 */
int finish_command(struct child_process *cp);
/* Wait for several started children at once (each with its own deadline). */
int finish_commands(struct child_process *const *cps, size_t nr);
/*
 * Has the started cp ended? 1 (and reaped: 'status' is set), 0 still
 * running. Never waits.
 */
int check_command(struct child_process *cp);
/* Send 'sig' to cp's process group (a guard passes it by: see 'guard'). */
void signal_command(const struct child_process *cp, int sig);
/*
 * Kill cp and everything it started, now: a guard is told to (SIGUSR1), so
 * what left the group dies too and the guard ends as killed by SIGKILL;
 * else its group gets SIGKILL.
 */
void kill_command(const struct child_process *cp);
/* start_command() then finish_command(). */
int run_command(struct child_process *cp);

/* Did it exit 0 (not killed, not timed out, not cancelled)? */
bool child_succeeded(const struct child_process *cp);
/*
 * How it ended, for a message: "exit status 2", "killed by signal 9",
 * "timed out after 3 s", "interrupted".
 */
void child_describe(const struct child_process *cp, struct strbuf *sb);

/* Append the last 'n' lines of 'out' to 'sb', each on a new line indented by four spaces. */
void output_tail(const struct strbuf *out, int n, struct strbuf *sb);

/*
 * Become a subreaper (PR_SET_CHILD_SUBREAPER): what a child of ours leaves
 * running when it exits, even in a session of its own, becomes our child
 * instead of init's, so kill_adopted() can reach it. 0, or -1 with an error.
 */
int adopt_orphans(void);

/*
 * Kill every child process of ours, and what they leave in turn; how many
 * went. Only for a moment when hotloop waits for no child of its own:
 * after adopt_orphans(), the children left are orphans of what it ran.
 */
size_t kill_adopted(void);

#endif
