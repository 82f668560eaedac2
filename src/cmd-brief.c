/*
 * cmd-brief.c: `hotloop brief`, where the time goes in code the user owns
 * and why, as Markdown or JSON within a token budget: brief_for_workload()
 * (lib/run.c) decides what is owned and joins the kb and scale results.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "run.h"
#include "builtin.h"
#include "project.h"
#include "profile.h"
#include "profile-io.h"
#include "revs.h"
#include "strbuf.h"

const char usage_brief[] =
"usage: hotloop brief [FILE] [--budget TOKENS] [--format md|json] [--json]\n"
"                     [--owned DIR]... [--focus FN] [--top N] [--context N]\n"
"                     [--scale FILE] [--workload NAME] [--sample-type NAME]\n"
"                     [--kb DIR] [--rev REV] [-f CONFIG]\n"
"\n"
"Say where the time goes in code you own, and why: hotspots ranked by the\n"
"time attributed to them (time in libc, libstdc++, libm or the kernel is\n"
"charged to the nearest owned caller), each with its hottest lines, callers,\n"
"callees, tags with their evidence and the attempts the knowledge base holds\n"
"on it; the hot path; rollups by DSO and by directory; questions that follow\n"
"from the attempts and the tags. FILE is a profile (default hotloop.pb.gz;\n"
"pprof, perf.data, perf script text, callgrind.out, folded stacks, heaptrack\n"
"or jemalloc heap profiles, recognized by content; - reads standard input).\n"
"On a heap profile the brief adds the owned allocation sites, by bytes and by\n"
"count, tagged alloc-in-loop, realloc-growth, short-lived and leak.\n"
"\n"
"  --budget TOKENS      fit in TOKENS (chars / 4 of the Markdown; default\n"
"                       [project] brief-budget, 4000; 0: no limit); source\n"
"                       snippets go first, then the lowest hotspots; JSON\n"
"                       keeps what the Markdown keeps\n"
"  --format md|json     Markdown (default) or JSON (docs/brief.md); --json is\n"
"                       --format json\n"
"  --owned DIR          code under DIR is ours (repeat for more); default:\n"
"                       [project] owned of hotloop.conf, else the git top\n"
"                       level, else the current directory\n"
"  --focus FN           only the owned function FN (exact name, else substring)\n"
"  --top N              at most N hotspots (default 10)\n"
"  --context N          source lines either side of the hottest (default 6)\n"
"  --scale FILE         growth exponents from `hotloop scale` (its JSON)\n"
"  --workload NAME      the configured workload the profile is of: the header\n"
"                       names it, and its saved scale results join the brief\n"
"  --sample-type NAME   the value to weigh by (default: the profile's default)\n"
"  --kb DIR             the knowledge base of attempts (default: [project] kb\n"
"                       of hotloop.conf, when it exists; docs/kb.md)\n"
"  --rev REV            read the source snippets from commit REV of the\n"
"                       project's repository (the commit the profile came\n"
"                       from), not from the working tree\n"
"  -f, --config FILE    the hotloop.conf to take [project] owned and kb from\n";

enum { OPT_BUDGET = 256, OPT_FORMAT, OPT_JSON, OPT_OWNED, OPT_FOCUS, OPT_TOP, OPT_CONTEXT,
       OPT_SCALE, OPT_TYPE, OPT_KB, OPT_WORKLOAD, OPT_REV };

int cmd_brief(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "owned", required_argument, NULL, OPT_OWNED },
		{ "focus", required_argument, NULL, OPT_FOCUS },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "sample-type", required_argument, NULL, OPT_TYPE },
		{ "kb", required_argument, NULL, OPT_KB },
		{ "workload", required_argument, NULL, OPT_WORKLOAD },
		{ "rev", required_argument, NULL, OPT_REV },
		{ "config", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct brief_owned given = { 0 }, owned = { 0 };
	struct brief_request rq = { 0 };
	struct project p = PROJECT_INIT;
	struct profile prof;
	struct brief b;
	const char *file = "hotloop.pb.gz", *conf_file = NULL, *rev = NULL;
	struct revs_source src = { 0 };
	long budget = -1, v;
	bool json = false;
	int c, ret = HL_EXIT_FAILURE;

	rq.opts.context = -1;
	profile_init(&prof);
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_BUDGET:
			if ((budget = parse_count("--budget", optarg, 0, 10000000)) < 0)
				goto out_usage;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "md") || !strcmp(optarg, "markdown")) {
				json = false;
			} else if (!strcmp(optarg, "json")) {
				json = true;
			} else {
				ret = usage_error("brief", "unknown format '%s': expected md or json", optarg);
				goto out;
			}
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_OWNED:
			if (brief_owned_add(&given, optarg, false, true))
				goto out;
			rq.owned = &given;
			break;
		case OPT_FOCUS:
			rq.opts.focus = optarg;
			break;
		case OPT_TOP:
			if ((v = parse_count("--top", optarg, 1, 1000)) < 0)
				goto out_usage;
			rq.opts.top = (size_t)v;
			break;
		case OPT_CONTEXT:
			if ((v = parse_count("--context", optarg, 0, 100)) < 0)
				goto out_usage;
			rq.opts.context = (int)v;
			break;
		case OPT_SCALE:
			rq.scale_path = optarg;
			break;
		case OPT_TYPE:
			rq.sample_type = optarg;
			break;
		case OPT_KB:
			rq.kb_dir = optarg;
			break;
		case OPT_WORKLOAD:
			rq.workload = optarg;
			break;
		case OPT_REV:
			rev = optarg;
			break;
		case 'f':
			conf_file = optarg;
			break;
		default:
			ret = usage_error("brief", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (argc - optind > 1) {
		ret = usage_error("brief", "expected at most one profile, got '%s' and '%s'",
				  argv[optind], argv[optind + 1]);
		goto out;
	}
	if (optind < argc)
		file = argv[optind];
	if (given.nr_roots)
		given.how = xstrdup("--owned");
	if (project_open(&p, conf_file, PROJECT_CONFIG_OPTIONAL))
		goto out;
	if (rq.workload && !project_workload(&p, rq.workload))
		goto out;
	rq.project = &p;
	if (rev) {
		if (project_find_git(&p) || revs_source_open(&src, &p, rev))
			goto out;
		rq.opts.read_source = revs_source_read;
		rq.opts.source_data = &src;
	}
	if (budget < 0)
		budget = (long)brief_budget(&p);
	if (profile_read_any(&prof, file) || brief_for_workload(&rq, &prof, &owned, &b))
		goto out;
	if (json) {
		print_json(brief_to_json(&b, (size_t)budget));
	} else {
		struct strbuf sb = STRBUF_INIT;

		brief_format_md(&b, (size_t)budget, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	brief_release(&b);
	ret = HL_EXIT_OK;
	goto out;
out_usage:
	ret = HL_EXIT_USAGE;
out:
	brief_owned_release(&given);
	brief_owned_release(&owned);
	profile_release(&prof);
	revs_source_release(&src);
	project_release(&p);
	return ret;
}
