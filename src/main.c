/*
 * main.c: the hub from which hotloop's subcommands are started. It owns the
 * command table, global options (--help, --version), the --json error
 * convention, and the exit policy: stdout is flushed and checked after every
 * command, so `hotloop report > /full/disk` cannot exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "json.h"

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
	{ "schedule", cmd_schedule, CMD_JSON, "run the loop on a systemd timer or cron, across reboots", usage_schedule },
	{ "pr",      cmd_pr,      CMD_JSON, "a loop's kept commits as pull requests or patches", usage_pr },
	{ "asm",     cmd_asm,     CMD_JSON, "one function's instructions, hot spots and verdict", usage_asm },
	{ "doctor",  cmd_doctor,  CMD_JSON, "check what this machine and a target allow", usage_doctor },
	{ "bench",   cmd_bench,   CMD_JSON, "measure the time and memory of a command",   usage_bench },
	{ "compare", cmd_compare, CMD_JSON, "measure a candidate against a baseline: keep or reject", usage_compare },
	{ "init",    cmd_init,    0,        "write a commented starter hotloop.conf",     usage_init },
	{ "config",  cmd_config,  CMD_JSON, "validate hotloop.conf and print it normalized", usage_config },
	{ "scale",   cmd_scale,   CMD_JSON, "growth exponent of each function with input size", usage_scale },
	{ "scenario", cmd_scenario, CMD_JSON, "a service under load: phases, resource timeline, metrics", usage_scenario },
	{ "load",    cmd_load,    CMD_JSON, "an open-loop load generator: latency from the intended send time", usage_load },
	{ "canary",  cmd_canary,  CMD_JSON, "two versions' profiles: which functions got cheaper or dearer", usage_canary },
	{ "catalog", cmd_catalog, 0,        "find known CPU anti-patterns in C and C++ source", usage_catalog },
	{ "kb",      cmd_kb,      CMD_JSON, "the knowledge base of attempts: list, show, search", usage_kb },
	{ "store",   cmd_store,   CMD_JSON, "what the loop's database holds: counts, the last loop", usage_store },
	{ "serve",   cmd_serve,   0,        "the live dashboard of the loop's store, or a static copy", usage_serve },
	{ "mcp",     cmd_mcp,     0,        "the Model Context Protocol server for coding agents, on stdio", usage_mcp },
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

const char *command_usage(const char *name)
{
	const struct cmd *c = find_cmd(name);

	return c ? c->usage : NULL;
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

	/* jansson's allocations too: out of memory is one clear error, not a value quietly lost */
	json_set_alloc_funcs(xmalloc, free);
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
		json_object_set_new(doc, "error", json_text(last_error()));
		print_json(doc);
	}
	return finish_output(status);
}
