/*
 * cmd-brief.c: `hotloop brief`, where the time goes in code the user owns
 * and why, as Markdown or JSON within a token budget. Decides which
 * directories are owned (--owned, hotloop.conf, the git top level, the
 * current directory) and hands the rest to lib/brief.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "brief.h"
#include "builtin.h"
#include "config.h"
#include "profile.h"
#include "profile-io.h"
#include "revs.h"
#include "strbuf.h"

const char usage_brief[] =
"usage: hotloop brief [FILE] [--budget TOKENS] [--format md|json] [--json]\n"
"                     [--owned DIR]... [--focus FN] [--top N] [--context N]\n"
"                     [--scale FILE] [--sample-type NAME] [-f CONFIG]\n"
"\n"
"Say where the time goes in code you own, and why: hotspots ranked by the\n"
"time attributed to them (time in libc, libstdc++, libm or the kernel is\n"
"charged to the nearest owned caller), each with its hottest lines, callers,\n"
"callees and tags with their evidence; the hot path; rollups by DSO and by\n"
"directory; questions that follow from the tags. FILE is a profile (default\n"
"hotloop.pb.gz; pprof or folded stacks; - reads standard input).\n"
"\n"
"  --budget TOKENS      fit in TOKENS (chars / 4; default 4000, 0: no limit);\n"
"                       source snippets go first, then the lowest hotspots\n"
"  --format md|json     Markdown (default) or JSON (docs/brief.md); --json is\n"
"                       --format json\n"
"  --owned DIR          code under DIR is ours (repeat for more); default:\n"
"                       [project] owned of hotloop.conf, else the git top\n"
"                       level, else the current directory\n"
"  --focus FN           only the owned function FN (exact name, else substring)\n"
"  --top N              at most N hotspots (default 10)\n"
"  --context N          source lines either side of the hottest (default 6)\n"
"  --scale FILE         growth exponents from `hotloop scale` (its JSON)\n"
"  --sample-type NAME   the value to weigh by (default: the profile's default)\n"
"  -f, --config FILE    the hotloop.conf to take [project] owned from\n";

static int owned_from_config(struct brief_owned *o, const char *path)
{
	struct config cf;
	int ret = config_parse_file(&cf, path);

	if (!ret)
		ret = brief_owned_from_config(o, &cf, path);
	config_release(&cf);
	return ret;
}

static int find_owned(struct brief_owned *o, const char *conf_file)
{
	char *found = NULL, *top;
	int ret;

	if (o->nr_roots) {
		o->how = xstrdup("--owned");
		return 0;
	}
	if (conf_file)
		return owned_from_config(o, conf_file);
	if ((ret = config_locate(".", &found)) < 0)
		return -1;
	if (!ret) {
		ret = owned_from_config(o, found);
		free(found);
		return ret;
	}
	if ((top = revs_find_top("."))) {
		o->how = xstrdup("the git top level");
		ret = brief_owned_add(o, top, false, true);
		free(top);
		return ret;
	}
	o->how = xstrdup("the current directory");
	return brief_owned_add(o, ".", false, true);
}

enum { OPT_BUDGET = 256, OPT_FORMAT, OPT_JSON, OPT_OWNED, OPT_FOCUS, OPT_TOP, OPT_CONTEXT,
       OPT_SCALE, OPT_TYPE };

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
		{ "config", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct brief_owned owned = { 0 };
	struct brief_opts bo = { 0 };
	struct profile prof;
	struct brief b;
	const char *file = "hotloop.pb.gz", *scale = NULL, *type = NULL, *conf_file = NULL;
	long budget = 4000, v;
	bool json = false;
	int c, idx, ret = HL_EXIT_FAILURE;

	bo.context = -1;
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
			if (brief_owned_add(&owned, optarg, false, true))
				goto out;
			break;
		case OPT_FOCUS:
			bo.focus = optarg;
			break;
		case OPT_TOP:
			if ((v = parse_count("--top", optarg, 1, 1000)) < 0)
				goto out_usage;
			bo.top = (size_t)v;
			break;
		case OPT_CONTEXT:
			if ((v = parse_count("--context", optarg, 0, 100)) < 0)
				goto out_usage;
			bo.context = (int)v;
			break;
		case OPT_SCALE:
			scale = optarg;
			break;
		case OPT_TYPE:
			type = optarg;
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
	if (find_owned(&owned, conf_file))
		goto out;
	bo.owned = &owned;
	profile_init(&prof);
	if (profile_read_any(&prof, file) || (idx = profile_pick_sample_type(&prof, type)) < 0)
		goto out_profile;
	if (brief_build(&b, &prof, idx, &bo))
		goto out_profile;
	if (!scale || !brief_add_scale(&b, scale)) {
		if (json) {
			print_json(brief_to_json(&b, (size_t)budget));
		} else {
			struct strbuf sb = STRBUF_INIT;

			brief_format_md(&b, (size_t)budget, &sb);
			fwrite(sb.buf, 1, sb.len, stdout);
			strbuf_release(&sb);
		}
		ret = HL_EXIT_OK;
	}
	brief_release(&b);
out_profile:
	profile_release(&prof);
	goto out;
out_usage:
	ret = HL_EXIT_USAGE;
out:
	brief_owned_release(&owned);
	return ret;
}
