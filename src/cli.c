/*
 * cli.c: what every command uses to read its options and print its
 * result, and the options several commands share (see cli.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "cli.h"
#include "config.h"
#include "gate.h"
#include "json.h"
#include "revs.h"
#include "sampler.h"
#include "strbuf.h"

long parse_count(const char *opt, const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		error("invalid value '%s' for %s: expected a whole number from %ld to %ld",
		      arg, opt, min, max);
		return -1;
	}
	return v;
}

int show_usage(const char *cmd)
{
	const char *usage = command_usage(cmd);

	if (usage)
		fprintf(stderr, "\n%s", usage);
	return HL_EXIT_USAGE;
}

int parse_call_graph(const char *cmd, const char *arg, struct sampler_config *cfg)
{
	return sampler_parse_call_graph(arg, cfg) ? show_usage(cmd) : 0;
}

int parse_seconds(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0 || v > 1e6)
		return error("invalid value '%s' for %s: expected seconds from 0 to 1000000", arg, opt);
	*out = v;
	return 0;
}

int parse_cpu_list(const char *opt, const char *arg, int **cpus, size_t *nr)
{
	return cpu_list_parse(opt, arg, CPU_LIST_MAX, cpus, nr);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error("%s", msg);
	return show_usage(cmd);
}

int write_output(const char *path, const struct strbuf *sb)
{
	if (strcmp(path, "-"))
		return write_file_atomic(path, sb->buf, sb->len);
	if (fwrite(sb->buf, 1, sb->len, stdout) != sb->len)
		return error("cannot write to standard output");
	return 0;
}

void print_json(struct json_t *doc)
{
	/* 15 digits: 0.03 prints as 0.03, not 0.029999999999999999 */
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	fputc('\n', stdout);
	json_decref(doc);
}

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
	case OPT_RUN_HEAP:
		o->heap = true;
		return 0;
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
	case OPT_RULE_RAM_ON: {
		int on = gate_ram_parse(arg);

		*set |= RULE_SET_RAM_ON;
		if (on < 0) {
			error("invalid value '%s' for --ram-budget-on: expected rss or heap", arg);
			return HL_EXIT_USAGE;
		}
		r->ram_on = (enum gate_ram)on;
		return 0;
	}
	}
	return 1;
}

int gate_judge(const struct gate_spec *spec, bool json, const struct revs_pair *trees, const char *runs_dir)
{
	struct gate_result r;
	int ret;

	gate_result_init(&r);
	cancel_on_interrupt(true);
	ret = gate_run(spec, &r);
	terminal_done();
	cancel_on_interrupt(false);
	if (ret) {
		ret = ret < 0 ? HL_EXIT_FAILURE : ret;
		goto out;
	}
	if (r.stage == GATE_STAGE_BUILD) {
		error("%s%s", r.reasons[0], r.detail.buf);
		ret = r.interrupted ? 130 : HL_EXIT_FAILURE;
		goto out;
	}
	if (json) {
		json_t *doc = gate_result_to_json(&r);

		if (trees) {
			json_object_set_new(doc, "base", revs_tree_to_json(&trees->base));
			json_object_set_new(doc, "candidate", revs_tree_to_json(&trees->cand));
		}
		if (runs_dir)
			json_object_set_new(doc, "runs_dir", json_text(runs_dir));
		print_json(doc);
	} else {
		struct strbuf sb = STRBUF_INIT;

		if (trees)
			revs_pair_describe(trees, &sb);
		gate_result_format_text(&r, &sb);
		if (runs_dir)
			strbuf_addf(&sb, "each run's timeline and graph: %s/{base,cand}-N/\n", runs_dir);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	ret = gate_exit_status(&r);
out:
	gate_result_release(&r);
	return ret;
}
