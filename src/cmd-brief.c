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
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "brief.h"
#include "builtin.h"
#include "project.h"
#include "kb.h"
#include "profile.h"
#include "profile-io.h"
#include "git.h"
#include "strbuf.h"

const char usage_brief[] =
"usage: hotloop brief [FILE] [--budget TOKENS] [--format md|json] [--json]\n"
"                     [--owned DIR]... [--focus FN] [--top N] [--context N]\n"
"                     [--scale FILE] [--sample-type NAME] [--kb DIR] [-f CONFIG]\n"
"\n"
"Say where the time goes in code you own, and why: hotspots ranked by the\n"
"time attributed to them (time in libc, libstdc++, libm or the kernel is\n"
"charged to the nearest owned caller), each with its hottest lines, callers,\n"
"callees, tags with their evidence and the attempts the knowledge base holds\n"
"on it; the hot path; rollups by DSO and by directory; questions that follow\n"
"from the attempts and the tags. FILE is a profile (default hotloop.pb.gz;\n"
"pprof, perf.data, perf script text, callgrind.out or folded stacks,\n"
"recognized by content; - reads standard input).\n"
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
"  --kb DIR             the knowledge base of attempts (default: [project] kb\n"
"                       of hotloop.conf, when it exists; docs/kb.md)\n"
"  -f, --config FILE    the hotloop.conf to take [project] owned and kb from\n";

/*
 * The roots: --owned, else [project] owned of the config (conf_path, when
 * there is one), else the git top level, else the current directory.
 */
static int find_owned(struct brief_owned *o, const struct config *cf, const char *conf_path)
{
	char *top;
	int ret;

	if (o->nr_roots) {
		o->how = xstrdup("--owned");
		return 0;
	}
	if (conf_path)
		return brief_owned_from_config(o, cf, conf_path);
	if ((top = git_find_top("."))) {
		o->how = xstrdup("the git top level");
		ret = brief_owned_add(o, top, false, true);
		free(top);
		return ret;
	}
	o->how = xstrdup("the current directory");
	return brief_owned_add(o, ".", false, true);
}

/* The knowledge base: --kb DIR (which must exist), else the config's when it exists. */
static int find_kb(struct kb *kb, const char *dir, const struct config *cf, const char *conf_path,
		   bool *have)
{
	struct stat st;
	char *d;
	int ret = 0;

	if (dir) {
		if (stat(dir, &st))
			return error("no knowledge base at '%s': %s", dir, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return error("no knowledge base at '%s': not a directory", dir);
		*have = true;
		return kb_load(dir, kb);
	}
	if (!conf_path)
		return 0;
	d = kb_dir_of_config(cf, conf_path);
	if (!stat(d, &st) && S_ISDIR(st.st_mode)) {
		*have = true;
		ret = kb_load(d, kb);
	}
	free(d);
	return ret;
}

enum { OPT_BUDGET = 256, OPT_FORMAT, OPT_JSON, OPT_OWNED, OPT_FOCUS, OPT_TOP, OPT_CONTEXT,
       OPT_SCALE, OPT_TYPE, OPT_KB };

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
		{ "config", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct brief_owned owned = { 0 };
	struct brief_opts bo = { 0 };
	struct kb kb = KB_INIT;
	struct project p = PROJECT_INIT;
	struct profile prof;
	struct brief b;
	const char *file = "hotloop.pb.gz", *scale = NULL, *type = NULL, *conf_file = NULL, *kb_dir = NULL;
	long budget = 4000, v;
	bool json = false, have_kb = false;
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
		case OPT_KB:
			kb_dir = optarg;
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
	if (project_open(&p, conf_file, PROJECT_CONFIG_OPTIONAL))
		goto out;
	if (find_owned(&owned, &p.cf, p.conf_path) || find_kb(&kb, kb_dir, &p.cf, p.conf_path, &have_kb))
		goto out;
	bo.owned = &owned;
	profile_init(&prof);
	if (profile_read_any(&prof, file) || (idx = profile_pick_sample_type(&prof, type)) < 0)
		goto out_profile;
	if (brief_build(&b, &prof, idx, &bo))
		goto out_profile;
	if (have_kb)
		brief_add_kb(&b, &kb);
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
	kb_release(&kb);
	project_release(&p);
	return ret;
}
