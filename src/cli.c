/*
 * cli.c: the options several commands share (see cli.h).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "config.h"

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

int rule_options_parse(struct gate_rules *r, unsigned *set, int c, const char *arg)
{
	switch (c) {
	case OPT_RULE_MIN:
		*set |= RULE_SET_MIN;
		return gate_parse_percent("--min-improvement", arg, &r->min_improvement) ? HL_EXIT_USAGE : 0;
	case OPT_RULE_GUARD:
		*set |= RULE_SET_GUARD;
		return gate_parse_percent("--guard-regression", arg, &r->guard_regression) ? HL_EXIT_USAGE : 0;
	case OPT_RULE_RAM:
		*set |= RULE_SET_RAM;
		if (config_parse_size(arg, &r->ram_budget)) {
			error("invalid value '%s' for --ram-budget: expected a size like 512M or 2G", arg);
			return HL_EXIT_USAGE;
		}
		return 0;
	case OPT_RULE_METRIC:
		return metric_rule_parse(arg, r) ? HL_EXIT_USAGE : 0;
	}
	return 1;
}
