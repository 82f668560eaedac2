/*
 * cli.c: the run options bench and compare share (see cli.h).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"

int run_options_parse(struct run_options *o, const char *cmd, int c, const char *arg)
{
	int idx;

	switch (c) {
	case 'm':
		if ((idx = gate_metric_parse(arg)) < 0)
			return usage_error(cmd, "unknown metric '%s': expected cpu, wall or instructions", arg);
		o->metric = (enum gate_metric)idx;
		o->metric_set = true;
		return 0;
	case 't':
		if (parse_seconds("--timeout", arg, &o->timeout))
			return HL_EXIT_USAGE;
		o->timeout_set = true;
		return 0;
	case 'e':
		if (!strchr(arg, '=') || *arg == '=')
			return usage_error(cmd, "invalid value '%s' for --env: expected NAME=VALUE", arg);
		ALLOC_GROW(o->env, o->nr_env + 2, o->alloc_env);
		o->env[o->nr_env++] = arg;
		o->env[o->nr_env] = NULL;
		return 0;
	case OPT_RUN_PIN:
		free(o->cpus);
		o->cpus = NULL;
		return parse_cpu_list("--pin", arg, &o->cpus, &o->nr_cpus) ? HL_EXIT_USAGE : 0;
	case OPT_RUN_MAX_WAIT:
		if (parse_seconds("--max-wait", arg, &o->max_wait))
			return HL_EXIT_USAGE;
		o->max_wait_set = true;
		return 0;
	}
	return 1;
}

void run_options_release(struct run_options *o)
{
	free(o->env);
	free(o->cpus);
	memset(o, 0, sizeof(*o));
}
