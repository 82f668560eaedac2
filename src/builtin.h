/*
 * builtin.h: the subcommands. Each lives in src/cmd-<name>.c, exports
 * cmd_<name>() and its usage text, and returns an exit code (enum hl_exit).
 * main.c holds the table that joins them.
 */
#ifndef HOTLOOP_BUILTIN_H
#define HOTLOOP_BUILTIN_H

#include "util.h"

#define DECLARE_CMD(name) \
	int cmd_##name(int argc, char **argv); \
	extern const char usage_##name[]

DECLARE_CMD(record);
DECLARE_CMD(report);
DECLARE_CMD(flame);
DECLARE_CMD(convert);
DECLARE_CMD(push);
DECLARE_CMD(brief);
DECLARE_CMD(run);
DECLARE_CMD(loop);
DECLARE_CMD(asm);
DECLARE_CMD(doctor);
DECLARE_CMD(bench);
DECLARE_CMD(compare);
DECLARE_CMD(init);
DECLARE_CMD(config);
DECLARE_CMD(scale);
DECLARE_CMD(scenario);
DECLARE_CMD(load);
DECLARE_CMD(kb);
DECLARE_CMD(store);
DECLARE_CMD(serve);
DECLARE_CMD(mcp);
DECLARE_CMD(schedule);
DECLARE_CMD(pr);
DECLARE_CMD(canary);
DECLARE_CMD(catalog);
/* catalog's later subcommands (src/cmd-catalog-review.c, src/cmd-catalog-add.c) */
int catalog_review(int argc, char **argv);
int catalog_hook(int argc, char **argv);
int catalog_add(int argc, char **argv);

/* ---- the helpers of every command (src/cli.c) ---- */

/* Parse a non-negative integer option value; -1 with an error when invalid. */
long parse_count(const char *opt, const char *arg, long min, long max);

/*
 * Parse --call-graph fp|dwarf[,SIZE] into cfg for command 'cmd': 0, or
 * HL_EXIT_USAGE after printing the usage error.
 */
struct sampler_config;
int parse_call_graph(const char *cmd, const char *arg, struct sampler_config *cfg);

/* Parse seconds (a non-negative number up to 1e6) for option 'opt'. */
int parse_seconds(const char *opt, const char *arg, double *out);

/* Parse a CPU list "1", "0,2" or "0-3,6" (numbers 0-1023); *cpus is the caller's to free. */
int parse_cpu_list(const char *opt, const char *arg, int **cpus, size_t *nr);

/* Print an error, then the usage of 'cmd', to stderr; return HL_EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* The usage of 'cmd' alone (after an error already printed); HL_EXIT_USAGE. */
int show_usage(const char *cmd);
/* The usage text of command 'name' (main.c's table), or NULL. */
const char *command_usage(const char *name);

/* Write a command's output to 'path' atomically, or to stdout for "-". */
struct strbuf;
int write_output(const char *path, const struct strbuf *sb);

/*
 * The terminal's subscriber to the engines' events (src/progress.c): notes
 * on stderr, progress redrawn in place when stderr is a terminal. Call
 * terminal_done() when the engine returns, to end a progress line.
 */
struct observer;
struct observer *terminal_observer(void);
void terminal_done(void);
/*
 * While on, SIGINT and SIGTERM call hl_cancel() (the engine stops at its
 * next step); off restores what was there before.
 */
void cancel_on_interrupt(bool on);

/* Print JSON 'doc' to stdout (indented) and free it. */
struct json_t;
void print_json(struct json_t *doc);

#endif
