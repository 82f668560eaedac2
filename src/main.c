/*
 * main.c: the hub from which hotloop's subcommands are started. It owns the
 * command table, global options (--help, --version), the --json error
 * convention, and the exit policy: stdout is flushed and checked after every
 * command, so `hotloop report > /full/disk` cannot exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "sampler.h"
#include "strbuf.h"

#define CMD_JSON 0x1	/* takes --json: errors become {"error": ...} on stdout */

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const char *summary;
	const char *usage;
};

static const struct cmd commands[] = {
	{ "record",  cmd_record,  0,        "sample CPU stacks of a command or process", usage_record },
	{ "report",  cmd_report,  CMD_JSON, "rank where the time went",                  usage_report },
	{ "flame",   cmd_flame,   0,        "draw an interactive SVG flame graph",        usage_flame },
	{ "convert", cmd_convert, 0,        "convert a profile to another format",        usage_convert },
	{ "push",    cmd_push,    CMD_JSON, "send a profile to a Grafana Pyroscope server", usage_push },
	{ "brief",   cmd_brief,   CMD_JSON, "where the time goes in code you own, and why", usage_brief },
	{ "run",     cmd_run,     0,        "build, profile and brief a configured workload", usage_run },
	{ "loop",    cmd_loop,    CMD_JSON, "the improve loop: an agent edits, hotloop keeps or rejects", usage_loop },
	{ "asm",     cmd_asm,     CMD_JSON, "one function's instructions, hot spots and verdict", usage_asm },
	{ "doctor",  cmd_doctor,  CMD_JSON, "check what this machine and a target allow", usage_doctor },
	{ "bench",   cmd_bench,   CMD_JSON, "measure the time and memory of a command",   usage_bench },
	{ "compare", cmd_compare, CMD_JSON, "measure a candidate against a baseline: keep or reject", usage_compare },
	{ "init",    cmd_init,    0,        "write a commented starter hotloop.conf",     usage_init },
	{ "config",  cmd_config,  CMD_JSON, "validate hotloop.conf and print it normalized", usage_config },
	{ "scale",   cmd_scale,   CMD_JSON, "growth exponent of each function with input size", usage_scale },
	{ "kb",      cmd_kb,      CMD_JSON, "the knowledge base of attempts: list, show, search", usage_kb },
	{ "store",   cmd_store,   CMD_JSON, "what the loop's database holds: counts, the last loop", usage_store },
};

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void print_usage(FILE *f)
{
	fprintf(f, "usage: hotloop [--version] [--help] <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'hotloop help <command>' or 'hotloop <command> --help' for its options\n");
}

static int unknown_command(const char *name)
{
	const struct cmd *best = NULL;
	size_t best_d = SIZE_MAX;

	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		size_t d = edit_distance(name, commands[i].name);
		if (d < best_d) {
			best_d = d;
			best = &commands[i];
		}
	}
	error("'%s' is not a hotloop command", name);
	if (best && best_d <= 2)
		fprintf(stderr, "\nthe most similar command is\n\t%s\n", best->name);
	return HL_EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		print_usage(stdout);
		return HL_EXIT_OK;
	}
	c = find_cmd(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	fputs(c->usage, stdout);
	return HL_EXIT_OK;
}

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

int parse_call_graph(const char *cmd, const char *arg, struct sampler_config *cfg)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	long size;

	if (len == 2 && !strncmp(arg, "fp", 2) && !comma) {
		cfg->callgraph = SAMPLER_CALLGRAPH_FP;
		return 0;
	}
	if (len != 5 || strncmp(arg, "dwarf", 5))
		return usage_error(cmd, "invalid --call-graph '%s': expected fp or dwarf[,SIZE]", arg);
	cfg->callgraph = SAMPLER_CALLGRAPH_DWARF;
	if (comma) {
		size = parse_count("--call-graph dwarf,SIZE", comma + 1, 8, SAMPLER_MAX_STACK);
		if (size < 0)
			return HL_EXIT_USAGE;
		cfg->stack_size = (unsigned)size;
	}
	return 0;
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
	const struct cmd *c = find_cmd(cmd);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error("%s", msg);
	if (c)
		fprintf(stderr, "\n%s", c->usage);
	return HL_EXIT_USAGE;
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

static bool wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--json"))
			return true;
	}
	return false;
}

static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	}
	return false;
}

/* Flush stdout and fail loudly if anything written was lost. */
static int finish_output(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		error("cannot write output: %s", strerror(errno ? errno : EIO));
		return status ? status : HL_EXIT_FAILURE;
	}
	return status;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	int status;

	if (argc < 2) {
		print_usage(stderr);
		return HL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("hotloop %s\n", HOTLOOP_VERSION);
		return finish_output(HL_EXIT_OK);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return finish_output(cmd_help(1, argv));
	if (!strcmp(argv[1], "help"))
		return finish_output(cmd_help(argc - 1, argv + 1));
	if (argv[1][0] == '-') {
		error("unknown option '%s'", argv[1]);
		print_usage(stderr);
		return HL_EXIT_USAGE;
	}

	c = find_cmd(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	if (wants_help(argc - 1, argv + 1)) {
		fputs(c->usage, stdout);
		return finish_output(HL_EXIT_OK);
	}
	status = c->fn(argc - 1, argv + 1);
	if (status && (c->flags & CMD_JSON) && wants_json(argc - 1, argv + 1) && *last_error()) {
		json_t *doc = json_object();
		json_object_set_new(doc, "error", json_string(last_error()));
		print_json(doc);
	}
	return finish_output(status);
}
