/*
 * cmd-mcp.c: `hotloop mcp`: the Model Context Protocol server on standard
 * input and output (lib/mcp.c), for coding agents' MCP clients. The
 * protocol gets private copies of fds 0 and 1 first, so nothing a build
 * or a workload prints can reach the stream.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "mcp.h"
#include "util.h"

const char usage_mcp[] =
"usage: hotloop mcp [--allow-commands] [--root DIR]... [-f CONFIG] [--db FILE]\n"
"\n"
"Serve the Model Context Protocol on standard input and output (JSON-RPC 2.0,\n"
"one message a line; protocol 2025-11-25, 2025-06-18 or 2025-03-26) until\n"
"standard input ends. Tools: record, report, brief, flame, asm, bench,\n"
"compare, scale, scenario, kb_search, kb_show, loop_status; resources: runs,\n"
"their briefs and reports, kb entries, the last loop (docs/mcp.md). Messages\n"
"for people go to standard error.\n"
"\n"
"    --allow-commands  tools may run any command line given to them; without\n"
"                      it they run only the workloads, builds and scenarios of\n"
"                      hotloop.conf\n"
"    --root DIR        paths may also lie under DIR (repeat for more); without\n"
"                      it only inside the project (its git top level)\n"
"    -f, --config FILE the hotloop.conf to use (default: found from here up)\n"
"    --db FILE         the store loop_status reads (default .hotloop/hotloop.db)\n"
"\n"
"Exit status: 0 when standard input ended, 1 when the stream could not be\n"
"read or written, 2 on a usage error.\n";

enum { OPT_ALLOW = 256, OPT_ROOT, OPT_DB };

int cmd_mcp(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "allow-commands", no_argument, NULL, OPT_ALLOW },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "config", required_argument, NULL, 'f' },
		{ "db", required_argument, NULL, OPT_DB },
		{ NULL, 0, NULL, 0 },
	};
	struct mcp_options o = { 0 };
	const char **roots = NULL;
	size_t alloc = 0;
	int c, in, out, ret = HL_EXIT_USAGE;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_ALLOW:
			o.allow_commands = true;
			break;
		case OPT_ROOT:
			if (access(optarg, X_OK)) {
				ret = usage_error("mcp", "--root '%s': not a directory that can be entered", optarg);
				goto out;
			}
			ALLOC_GROW(roots, o.nr_roots + 1, alloc);
			roots[o.nr_roots++] = optarg;
			break;
		case 'f':
			o.conf_file = optarg;
			break;
		case OPT_DB:
			o.db = optarg;
			break;
		case ':':
			ret = usage_error("mcp", "option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			ret = usage_error("mcp", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind < argc) {
		ret = usage_error("mcp", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	o.roots = roots;
	ret = HL_EXIT_FAILURE;
	if (mcp_take_stdio(&in, &out))
		goto out;
	ret = mcp_serve(&o, in, out) ? HL_EXIT_FAILURE : HL_EXIT_OK;
	close(in);
	close(out);
out:
	free(roots);
	return ret;
}
