/*
 * config.h: hotloop.conf, the project's git-config style settings (read with
 * libinih), validated into plain data with every default filled in, and
 * written back out normalized (git-config text or one JSON document).
 * A struct config owns every string and array in it; config_release() frees them.
 */
#ifndef HOTLOOP_CONFIG_H
#define HOTLOOP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

#define CONFIG_FILE "hotloop.conf"
/* [project] brief-budget by default: the one budget rule of every brief */
#define CONFIG_BRIEF_BUDGET 4000

/* A whitespace-separated list of words ("src lib"). */
struct config_list {
	char **v;
	size_t nr, alloc;
};

/* [workload "NAME"]: a command whose cost is measured. */
struct config_workload {
	char *name;
	char *run;
	bool primary;		/* primary = yes was written */
	double timeout_s;	/* 0 until defaulted to [gate] timeout */
	char *scenario;		/* scenario = NAME: judged by that scenario; NULL: by 'run' */
	uint64_t *sizes;	/* for `hotloop scale`: ascending, distinct */
	size_t nr_sizes;	/* 0 when not set */
	int line;		/* of its section header */
};

/* [scenario "NAME"]: a service under load (docs/scenario.md). */
enum scenario_ready {
	SCENARIO_READY_NONE,	/* ready once started */
	SCENARIO_READY_TCP,	/* a TCP port on 127.0.0.1 accepts */
	SCENARIO_READY_LOG,	/* a line of its output matches a regex */
	SCENARIO_READY_FILE,	/* a file exists */
	SCENARIO_READY_CMD,	/* a command exits 0 */
};
enum scenario_metrics {
	SCENARIO_METRICS_OUTPUT,	/* HOTLOOP_METRIC lines of the service and the loads */
	SCENARIO_METRICS_CMD,		/* a command's output, each second */
	SCENARIO_METRICS_HTTP,		/* a URL's body, each second */
};
enum scenario_profile { SCENARIO_PROFILE_NONE, SCENARIO_PROFILE_CPU };

struct config_phase {
	char *name;		/* the kind, with "-2", "-3" on repeats: idle, pressure, idle-2 */
	char *kind;		/* as written: idle, pressure, ... */
	double seconds;		/* 0 with until_exit */
	bool until_exit;	/* it ends when its load exits */
	char *load;		/* the load command; NULL: none */
	int line;
};

struct config_scenario {
	char *name;
	int line;		/* of its section header */
	char *start;		/* the service's command; {port} is the port */
	enum scenario_ready ready;
	char *ready_arg;	/* tcp: the port ("{port}" or a number); log: the regex; file: a path; cmd: a command */
	double ready_timeout_s;
	struct config_phase *phases;
	size_t nr_phases, alloc_phases;
	enum scenario_metrics metrics;
	char *metrics_arg;	/* cmd: the command; http: the URL */
	double interval_s;	/* resource sampling period */
	int stop_signal;
	double stop_grace_s;	/* then SIGKILL */
	enum scenario_profile profile;
	size_t judge;		/* index into phases: the phase compared */
	char *judge_name;	/* as written; NULL: the default */
	int port;		/* 0: a free port, picked for each run */
	double leak_tolerance;	/* fraction RSS may stay above its level before the pressure */
	long runs;		/* runs of each build when compare or the loop judges by it */
	unsigned set;		/* which keys were written (private) */
};
/*
 * [canary "NAME"]: two builds of a service under the same load, judged per
 * metric (docs/canary.md). The service's keys (start, ready, ready-timeout,
 * stop, port) are a scenario's, parsed by the same code into 'svc' (which
 * has no phases).
 */
enum canary_metric_id {
	CANARY_THROUGHPUT, CANARY_P50, CANARY_P90, CANARY_P99, CANARY_P999,
	CANARY_ERRORS, CANARY_CPU_PER_REQUEST, CANARY_RSS, CANARY__NR_METRICS
};
extern const char *const canary_metric_names[];	/* "throughput", "p50", ..., "rss" */

struct config_canary_metric {
	int direction;		/* enum judge_direction */
	double tolerance;	/* fraction of the base's median */
	double abs_tolerance;	/* in the metric's unit */
	double weight;		/* 0: not judged */
	bool critical, spread;
};

enum canary_proto { CANARY_HTTP, CANARY_LINE };

struct config_canary {
	char *name;
	int line;
	struct config_scenario svc;	/* start, ready, ready-timeout, stop, port; no phases */
	/* the built-in load (docs/load.md); or 'load', a command run once per build */
	enum canary_proto proto;
	char *path, *method, *body, *request_file, *line_text;
	struct config_list headers;	/* "Name: value", one per 'header' key */
	double rate;
	bool poisson;
	uint64_t seed;
	long connections;
	double timeout_s;
	char *load;
	double duration_s, warmup_s, window_s;
	struct config_canary_metric metrics[CANARY__NR_METRICS];
	double confidence, pass_score, marginal_score;
	unsigned set;		/* which keys were written (private) */
};

/* "TERM", "INT", ... for a signal number; NULL for one a scenario cannot use. */
const char *config_signal_name(int sig);

struct config {
	char *file;			/* the name errors quote */
	/* [project] */
	char *build;			/* "" = nothing to build */
	double build_timeout_s;		/* kill the build after this long */
	struct config_list owned;	/* empty = everything not protected */
	struct config_list protected_paths;
	char *kb;
	long brief_budget;		/* tokens of the brief run, loop and brief write */
	/* [gate] */
	char *test;			/* "" = no test command */
	bool fingerprint;
	bool heap;			/* measure every run's heap (heap-peak, allocs, alloc-bytes) */
	char *gate_canary;		/* a [canary] the loop runs on a keep; "" = none */
	double gate_timeout_s;
	struct config_list gate_writable;	/* what a candidate's build and tests may write beside its tree */
	/* [improve] */
	struct gate_rules rules;
	long rounds;
	long max_rejects_in_a_row;
	double min_share;		/* fraction */
	uint64_t max_file_size;		/* bytes a changed file may have */
	bool allow_binary;		/* a change may hold binary files */
	bool require_target_gain;	/* a keep whose target did not get cheaper is rejected */
	struct config_list lenses;
	/* [agent] */
	char *agent_command;		/* "" = not configured */
	double agent_timeout_s;
	char *agent_prompt;		/* a prompt template file, "" = the built-in one */
	struct config_list agent_writable;	/* what the agent may write beside its tree (~/.claude) */
	/* [pr] */
	char *pr_command;		/* a /bin/sh line with {title} {body} {branch} {base}; "" = format-patch */
	/* [workload "NAME"], in file order */
	struct config_workload *workloads;
	size_t nr_workloads, alloc_workloads;
	size_t primary;			/* index into workloads */
	/* [metric "NAME"] live in rules.metrics; their parse state here */
	size_t alloc_metrics;
	/* [scenario "NAME"] */
	struct config_scenario *scenarios;
	size_t nr_scenarios, alloc_scenarios;
	/* [canary "NAME"] */
	struct config_canary *canaries;
	size_t nr_canaries, alloc_canaries;
};

/* The scenario a workload is judged by; NULL for a workload with a command. */
const struct config_scenario *config_workload_scenario(const struct config *c, const struct config_workload *w);
/* The [canary "NAME"] section, or NULL. */
const struct config_canary *config_find_canary(const struct config *c, const char *name);

/* Set every field to its documented default (no workloads). */
void config_init(struct config *c);
void config_release(struct config *c);

/*
 * Parse and validate 'len' bytes of hotloop.conf text; 'name' is the file
 * name used in messages ("hotloop.conf:12: ..."). Every problem found is
 * reported with error(), then -1 is returned; 0 when the config is valid.
 * 'c' is initialized here and must be released either way.
 */
int config_parse_buf(struct config *c, const char *buf, size_t len, const char *name);
/* The same for a file, named in messages as 'path'. */
int config_parse_file(struct config *c, const char *path);

/*
 * Look for hotloop.conf in 'dir' and its parents, stopping at the first
 * directory that holds .git (the git top level) or at /. The path found
 * is stored in *out (caller frees); -1 with an error when there is none.
 */
int config_find(const char *dir, char **out);
/* The same without a message when there is none: 0 found, 1 none, -1 error. */
int config_locate(const char *dir, char **out);

/* Append the normalized config: git-config text, defaults filled in. */
struct strbuf;
void config_format(const struct config *c, struct strbuf *out);
/* Append 'v' as a value, quoted and escaped when it must be to read back. */
void config_add_value(struct strbuf *sb, const char *v);
/* The normalized config as one JSON document (docs/config.md). */
struct json_t;
struct json_t *config_to_json(const struct config *c);

/* Value parsers, shared with the command line: 0 or -1 (no message). */
int config_parse_percent(const char *s, double *out);
int config_parse_size(const char *s, uint64_t *out);
int config_parse_duration(const char *s, double *out);
int config_parse_bool(const char *s, bool *out);

/*
 * Input sizes for `hotloop scale`: CONFIG_MIN_SIZES to CONFIG_MAX_SIZES
 * distinct whole numbers from 1 to CONFIG_MAX_SIZE, separated by spaces or
 * commas, returned sorted in *sizes (caller frees). -1 with the reason in
 * 'why' (no message printed) when the list is not one.
 */
#define CONFIG_MIN_SIZES 3
#define CONFIG_MAX_SIZES 64
#define CONFIG_MAX_SIZE 1000000000000000ull
int config_parse_sizes(const char *s, uint64_t **sizes, size_t *nr, struct strbuf *why);

#endif
