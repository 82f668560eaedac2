/*
 * cmd-run.c: `hotloop run [WORKLOAD]`, one configured workload profiled
 * end to end by lib/run.c: build, record, report, flame graph and brief,
 * all kept in .hotloop/runs/<id>/ with a `latest` link, and the brief
 * printed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "project.h"
#include "run.h"
#include "sampler.h"

const char usage_run[] =
"usage: hotloop run [WORKLOAD] [-f CONFIG] [-F HZ] [--call-graph auto|fp|dwarf]\n"
"                   [--size N] [--scale] [--no-build] [--budget TOKENS]\n"
"                   [--format md|json]\n"
"\n"
"Profile one workload of hotloop.conf (default: the primary) end to end:\n"
"run [project] build, record the workload's command, then write the\n"
"report, the flame graph and the brief into .hotloop/runs/<id>/ (with a\n"
"`latest` link) and print the brief.\n"
"\n"
"  -f, --config FILE       the hotloop.conf (default: found from here up)\n"
"  -F, --freq HZ           sampling frequency for record (default 999)\n"
"  --call-graph MODE       how record walks stacks: auto (default), fp, dwarf\n"
"  --size N                the value of {n} in the workload's command (default:\n"
"                          the largest of its sizes)\n"
"  --scale                 also run it at each of its sizes, as hotloop scale\n"
"                          does, so the brief has growth exponents (superlinear)\n"
"  --no-build              profile what is built now\n"
"  --budget TOKENS         the brief's budget (default: [project] brief-budget,\n"
"                          4000; 0: no limit)\n"
"  --format md|json        print the brief as Markdown (default) or JSON\n";

enum { OPT_CG = 256, OPT_SIZE, OPT_SCALE, OPT_NO_BUILD, OPT_BUDGET, OPT_FORMAT };

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "freq", required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, OPT_CG },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "scale", no_argument, NULL, OPT_SCALE },
		{ "no-build", no_argument, NULL, OPT_NO_BUILD },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ NULL, 0, NULL, 0 },
	};
	struct run_request rq = { .build = true, .source = "run" };
	struct run_outcome out;
	struct project p = PROJECT_INIT;
	const char *conf_file = NULL;
	bool json = false;
	long budget = -1, v;
	int c, ret = HL_EXIT_FAILURE;

	rq.sampler.freq = SAMPLER_DEFAULT_FREQ;
	run_outcome_init(&out);
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:F:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf_file = optarg;
			break;
		case 'F':
			if ((v = parse_count("--freq", optarg, 1, 100000)) < 0)
				goto out_usage;
			rq.sampler.freq = (unsigned)v;
			break;
		case OPT_CG:
			if (parse_call_graph("run", optarg, &rq.sampler))
				goto out_usage;
			break;
		case OPT_SIZE:
			if (parse_count("--size", optarg, 0, 1000000000000L) < 0)
				goto out_usage;
			rq.size = optarg;
			break;
		case OPT_SCALE:
			rq.scale = true;
			break;
		case OPT_NO_BUILD:
			rq.build = false;
			break;
		case OPT_BUDGET:
			if ((budget = parse_count("--budget", optarg, 0, 10000000)) < 0)
				goto out_usage;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "md") && strcmp(optarg, "json")) {
				ret = usage_error("run", "unknown format '%s': expected md or json", optarg);
				goto out;
			}
			json = !strcmp(optarg, "json");
			break;
		default:
			ret = usage_error("run", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (argc - optind > 1) {
		ret = usage_error("run", "expected at most one workload");
		goto out;
	}
	if (project_open(&p, conf_file, 0) ||
	    !(rq.workload = project_workload(&p, optind < argc ? argv[optind] : NULL)))
		goto out;
	rq.project = &p;
	rq.budget = budget >= 0 ? (size_t)budget : brief_budget(&p);
	rq.obs = terminal_observer();
	cancel_on_interrupt(true);
	ret = run_workload(&rq, &out);
	terminal_done();
	cancel_on_interrupt(false);
	if (ret) {
		ret = HL_EXIT_FAILURE;
		goto out;
	}
	if (json) {
		print_json(json_incref(out.brief_json));
	} else {
		fwrite(out.brief_md.buf, 1, out.brief_md.len, stdout);
	}
	fprintf(stderr, "run: wrote %s (and .hotloop/runs/latest)\n", out.dir);
	ret = HL_EXIT_OK;
	goto out;
out_usage:
	ret = HL_EXIT_USAGE;
out:
	run_outcome_release(&out);
	project_release(&p);
	return ret;
}
