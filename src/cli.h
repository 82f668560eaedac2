/*
 * cli.h: options more than one command parses the same way (src/cli.c,
 * which also holds the helpers every command uses, declared in builtin.h). RUN_OPTIONS
 * (bench, compare): how each run is made: --metric, --timeout, --env,
 * --pin, --max-wait and --heap. RULE_OPTIONS (compare): the rules a change must
 * pass, over hotloop.conf's: --min-improvement, --guard-regression,
 * --ram-budget, --ram-budget-on, --metric-rule. A command lists them in its getopt table
 * and hands each option to the parser before its own switch.
 */
#ifndef HOTLOOP_CLI_H
#define HOTLOOP_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "rules.h"

enum {
	OPT_RUN_PIN = 0x1000, OPT_RUN_MAX_WAIT, OPT_RUN_HEAP,
	OPT_RULE_MIN = 0x1100, OPT_RULE_GUARD, OPT_RULE_RAM, OPT_RULE_METRIC, OPT_RULE_RAM_ON,
};

#define RUN_OPTIONS \
	{ "metric", required_argument, NULL, 'm' }, \
	{ "timeout", required_argument, NULL, 't' }, \
	{ "env", required_argument, NULL, 'e' }, \
	{ "pin", required_argument, NULL, OPT_RUN_PIN }, \
	{ "max-wait", required_argument, NULL, OPT_RUN_MAX_WAIT }, \
	{ "heap", no_argument, NULL, OPT_RUN_HEAP }

struct run_options {
	enum gate_metric metric;
	bool metric_set, timeout_set, max_wait_set;
	bool heap;			/* --heap: measure each run's heap */
	double timeout, max_wait;
	const char **env;		/* NULL-terminated, pointing into argv */
	size_t nr_env, alloc_env;
	int *cpus;
	size_t nr_cpus;
};

/*
 * Take option c (with its argument) when it is one of RUN_OPTIONS: 1 when
 * it is not one, 0 when taken, HL_EXIT_USAGE after a usage error of 'cmd'.
 */
int run_options_parse(struct run_options *o, const char *cmd, int c, const char *arg);
void run_options_release(struct run_options *o);

#define RULE_OPTIONS \
	{ "min-improvement", required_argument, NULL, OPT_RULE_MIN }, \
	{ "guard-regression", required_argument, NULL, OPT_RULE_GUARD }, \
	{ "ram-budget", required_argument, NULL, OPT_RULE_RAM }, \
	{ "ram-budget-on", required_argument, NULL, OPT_RULE_RAM_ON }, \
	{ "metric-rule", required_argument, NULL, OPT_RULE_METRIC }

/*
 * The same for RULE_OPTIONS, into r with what was set in *set (enum
 * gate_rule_set; metric rules are added to r->metrics).
 */
int rule_options_parse(struct gate_rules *r, unsigned *set, int c, const char *arg);

/*
 * Run the gate and print its verdict (compare's text or JSON); trees are
 * the two builds when they are revisions or directories, runs_dir where a
 * scenario's runs are kept (NULL: none). A candidate that does not build
 * is an error (exit 1); a failed test is a reject on the test alone. The
 * exit status: gate_exit_status().
 */
struct gate_spec;
struct revs_pair;
int gate_judge(const struct gate_spec *spec, bool json, const struct revs_pair *trees, const char *runs_dir);

#endif
