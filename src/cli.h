/*
 * cli.h: the options `bench` and `compare` share, because both measure
 * runs the same way: --metric, --timeout, --env, --pin and --max-wait.
 * A command lists RUN_OPTIONS in its getopt table and hands each option
 * to run_options_parse() before its own switch.
 */
#ifndef HOTLOOP_CLI_H
#define HOTLOOP_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "rules.h"

enum { OPT_RUN_PIN = 0x1000, OPT_RUN_MAX_WAIT };

#define RUN_OPTIONS \
	{ "metric", required_argument, NULL, 'm' }, \
	{ "timeout", required_argument, NULL, 't' }, \
	{ "env", required_argument, NULL, 'e' }, \
	{ "pin", required_argument, NULL, OPT_RUN_PIN }, \
	{ "max-wait", required_argument, NULL, OPT_RUN_MAX_WAIT }

struct run_options {
	enum gate_metric metric;
	bool metric_set, timeout_set, max_wait_set;
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

#endif
