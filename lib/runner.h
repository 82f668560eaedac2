/*
 * runner.h: run a shell command once and measure it: wall, user and system
 * time, peak RSS, exit status, a hash of its whole stdout, the FINGERPRINT=
 * and HOTLOOP_METRIC lines it printed, and optionally its instruction count
 * under callgrind. Runs are spawned by a tiny launcher process (hotloop
 * re-executed before main() grows it), so a large hotloop never inflates a
 * run's peak RSS. A struct runner owns its launcher; a struct run_result
 * owns everything it points to.
 */
#ifndef HOTLOOP_RUNNER_H
#define HOTLOOP_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"
#include "rules.h"

struct sandbox;

/* How much of a run's stdout is kept in memory (all of it is hashed). */
#define RUNNER_STDOUT_CAP (64 * 1024)
/* Longer stdout lines are hashed but not parsed for fingerprints or metrics. */
#define RUNNER_LINE_MAX 4096

struct run_spec {
	const char *command;		/* run as /bin/sh -c COMMAND */
	const char *dir;		/* working directory; NULL: hotloop's */
	const char *const *env;		/* extra NAME=VALUE, NULL-terminated; may be NULL */
	double timeout;			/* seconds; 0: none */
	const int *cpus;		/* pin the run to these CPU numbers ... */
	size_t nr_cpus;			/* ... 0: don't pin */
	bool instructions;		/* count instructions under callgrind (slow) */
	/*
	 * Preload libhotloop-heap.so in stats mode and add the metrics
	 * heap-peak, allocs and alloc-bytes (heap-stats.h); a static or setuid
	 * program, or a run that gives no stream, is an error.
	 */
	bool heap;
};

struct run_metric {
	char *name;
	double value;
};

struct run_result {
	uint64_t wall_ns, user_ns, sys_ns;
	long max_rss_kib;		/* ru_maxrss of the run */
	int exit_status;		/* 0..255, 128+N when killed by signal N */
	int signal;			/* the signal that killed it, or 0 */
	bool timed_out;			/* killed after spec->timeout */
	bool interrupted;		/* killed by runner_interrupt() */
	uint64_t stdout_hash;		/* FNV-1a over every byte of stdout */
	uint64_t stdout_bytes;
	struct strbuf out;		/* the first RUNNER_STDOUT_CAP bytes of stdout */
	char **fingerprints;		/* values of FINGERPRINT=... lines, in order */
	size_t nr_fingerprints, alloc_fingerprints;
	struct run_metric *metrics;	/* HOTLOOP_METRIC name=value lines, in order */
	size_t nr_metrics, alloc_metrics;
	int64_t instructions;		/* -1 when not counted */
	size_t bad_lines;		/* malformed HOTLOOP_METRIC lines (warned) */
	/* line assembly while stdout streams in */
	struct strbuf line;
	bool line_overflow;
};

struct runner {
	pid_t launcher;
	int sock;
	pid_t signal;		/* where runner_interrupt() sends SIGINT: the launcher, in or out of a sandbox */
	char *tmp;		/* the sandbox's directory for temporary files; NULL: none */
	const struct sandbox *sandbox;	/* the one its runs are in; NULL: none (what else runs for them goes there too) */
};
#define RUNNER_INIT { .launcher = -1, .sock = -1, .signal = -1 }

void run_result_init(struct run_result *r);
void run_result_release(struct run_result *r);

/*
 * Start the launcher. Call it early (before loading large data) for the
 * best isolation, though the launcher is a fresh exec of hotloop either way.
 * In sandbox sb (sandbox.h; NULL: none) the launcher and every run it
 * starts can write only where sb lets them, and after each run whatever
 * the run left behind in the sandbox, in any session or process group, is
 * killed. The timing is the launcher's, inside: the sandbox costs a run
 * nothing.
 */
int runner_start(struct runner *r, const struct sandbox *sb);
/* Stop the launcher; safe on a runner that never started. */
void runner_stop(struct runner *r);

/*
 * Run spec once. A result that ran (even if it crashed or timed out) is 0;
 * -1 with an error when the run could not be started or measured.
 */
int runner_run(struct runner *r, const struct run_spec *spec, struct run_result *res);

/* Kill the current run (async-signal-safe: for a SIGINT handler). */
void runner_interrupt(const struct runner *r);

/*
 * Why instruction counts cannot be taken here (valgrind or setarch
 * missing), or NULL when they can.
 */
const char *runner_instructions_unavailable(void);

/*
 * The fixed environment of every run: PATH and HOME from hotloop's own
 * environment (PATH defaulting to /usr/local/bin:/usr/bin:/bin), LANG=C,
 * then 'extra' (NAME=VALUE, NULL-terminated, may be NULL; a later name
 * replaces an earlier one). NULL-terminated; free with runner_free_env().
 */
char **runner_build_env(const char *const *extra);
void runner_free_env(char **env);

/* Quote argv as one /bin/sh command line (single quotes where needed). */
void runner_quote_argv(struct strbuf *sb, const char *const *argv, size_t argc);

/*
 * The first word of a /bin/sh command line when it is a plain program name
 * that can be looked up (no quoting, expansion, assignment or shell
 * keyword), else NULL; the caller frees it. *simple says whether the line
 * is one simple command (no ; & | newline, subshell or backquote), so
 * "exec LINE" makes the program the shell's own process.
 */
char *runner_shell_program(const char *cmd, bool *simple);

/*
 * The line that runs 'cmd' with the shell out of the way: "exec CMD" when
 * it is one simple command (so a run killed by a signal reports it, and
 * the program is the process a profile's main mapping names), else CMD.
 * Caller frees.
 */
char *runner_exec_line(const char *cmd);

/*
 * Can program 'name' (a command's first word, as the shell would look it
 * up) be run? 0; else HL_EXIT_NOT_FOUND or HL_EXIT_NOT_EXECUTABLE with an
 * error, as a shell would say it ("prog: command not found").
 */
int runner_check_program(const char *name);

/* Feed stdout bytes: hashed, kept up to the cap, parsed line by line. */
void run_result_feed(struct run_result *r, const char *buf, size_t len);
/* The end of stdout: parse a last line without newline. */
void run_result_feed_end(struct run_result *r);

/* Sum the "summary:" (or "totals:") lines of a callgrind output file. */
int runner_parse_callgrind(const char *text, int64_t *instructions);

/* Launcher entry, used by the constructor in runner.c: does not return. */
_Noreturn void runner_launcher_main(int sock);

/* The value of metric m for one run: seconds (cpu = user + sys, wall) or instructions. */
double run_result_metric(const struct run_result *r, enum gate_metric m);

#endif
