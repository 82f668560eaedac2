/*
 * cmd-canary.c: `hotloop canary NAME`: two builds of a service under the
 * same load, judged per metric by lib/canary.c; and `hotloop canary
 * --profiles BASE CAND`: two profiles of the same program, from two
 * versions in a fleet, compared function by function.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "canary.h"
#include "project.h"
#include "profile.h"
#include "profile-io.h"
#include "share-diff.h"
#include "revs.h"
#include "strbuf.h"
#include "util.h"

const char usage_canary[] =
"usage: hotloop canary NAME [--base REV|DIR --cand REV|DIR] [--no-build]\n"
"                      [--base-cmd CMD] [--cand-cmd CMD] [-f CONFIG] [-o DIR] [--json]\n"
"       hotloop canary --profiles BASE CAND [--by self|total] [--sample-type NAME]\n"
"                      [--confidence PCT] [--min-share PCT] [--tolerance PCT]\n"
"                      [--work BASE,CAND] [--top N] [--json]\n"
"\n"
"Run the [canary \"NAME\"] of hotloop.conf: start two builds of a service,\n"
"send both the same open-loop load in alternating windows, and judge each\n"
"metric (throughput, latency p50/p90/p99/p99.9, errors, CPU per request,\n"
"RSS) over the windows: pass, marginal or fail (exit 4). Writes report.md,\n"
"canary.json and canary.html (docs/canary.md).\n"
"\n"
"  --base REV|DIR      the base build: a revision checked out outside your\n"
"                      tree, or a directory (default: the project as it is)\n"
"  --cand REV|DIR      the candidate build (default: the project as it is)\n"
"  --no-build          use the trees as they are ([project] build not run)\n"
"  --base-cmd CMD      the base's service command instead of 'start'\n"
"  --cand-cmd CMD      the candidate's service command instead of 'start'\n"
"  -f, --config FILE   the hotloop.conf (default: found from here up)\n"
"  -o, --output DIR    write the files there (default:\n"
"                      .hotloop/canaries/NAME/<stamp>/)\n"
"  --json              print the result as JSON\n"
"\n"
"Without --base, --cand or a command the two builds are the same: an A/A\n"
"canary, which should pass.\n"
"\n"
"With --profiles:\n"
"Compare two profiles of one program, the base version's and the\n"
"candidate's (two versions in a fleet, pulled from Pyroscope or Parca, or\n"
"two of hotloop's), function by function: each function's share of the\n"
"samples in both, the change with its interval from the sample counts,\n"
"and which functions got cheaper or dearer (docs/canary.md).\n"
"\n"
"  --by self|total     a function's own samples (default), or with its callees'\n"
"  --sample-type NAME  the value to count (default: samples, or the default\n"
"                      type turned into samples through the profile's period)\n"
"  --confidence PCT    over all the functions tested together (default 95)\n"
"  --min-share PCT     test functions with at least this share in either\n"
"                      profile (default 0.5)\n"
"  --tolerance PCT     a relative change within this is the same (default 5)\n"
"  --work BASE,CAND    the work each profile covers (requests, instance-seconds):\n"
"                      compare samples per unit of work instead of shares\n"
"  --top N             list at most N functions of each kind (default 20, 0: all)\n"
"  --json              one JSON document on stdout (docs/canary.md)\n";

/* "95", "95%" or "0.5" as a fraction; -1 with a usage error. */
static int parse_pct(const char *opt, const char *arg, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || (*end && strcmp(end, "%")) || !(v >= lo && v <= hi))
		return usage_error("canary", "invalid %s '%s': a percentage from %g to %g", opt, arg, lo, hi);
	*out = v / 100;
	return 0;
}

/* "1200,80": the work of the base's profile and the candidate's, each > 0. */
static int parse_work(const char *arg, double *base, double *cand)
{
	char *end, *mid;

	*base = strtod(arg, &mid);
	if (mid == arg || *mid != ',')
		goto bad;
	*cand = strtod(mid + 1, &end);
	if (end == mid + 1 || *end || !(*base > 0 && *cand > 0 && isfinite(*base) && isfinite(*cand)))
		goto bad;
	return 0;
bad:
	return usage_error("canary", "invalid --work '%s': two numbers above 0, BASE,CAND", arg);
}

/* ---- the service form ---------------------------------------------------- */

struct service_opts {
	const char *conf_file, *out_dir, *base, *cand, *base_cmd, *cand_cmd;
	bool build, json;
};

static const struct config_canary *find_canary(const struct project *p, const char *name)
{
	const struct config *c = &p->cf;
	const struct config_canary *k = config_find_canary(c, name);
	struct strbuf have = STRBUF_INIT;

	if (k)
		return k;
	for (size_t i = 0; i < c->nr_canaries; i++)
		strbuf_addf(&have, "%s'%s'", i ? ", " : "", c->canaries[i].name);
	if (c->nr_canaries)
		error("unknown canary '%s' in '%s': the configured ones are %s", name, p->conf_path, have.buf);
	else
		error("unknown canary '%s': '%s' has no [canary \"NAME\"] section", name, p->conf_path);
	strbuf_release(&have);
	return NULL;
}

static int run_service(const char *name, const struct service_opts *o)
{
	struct project p = PROJECT_INIT;
	struct revs_pair trees = REVS_PAIR_INIT;
	struct canary_spec spec = { 0 };
	struct canary_result r;
	char *dir = NULL, *why = NULL;
	int ret = HL_EXIT_FAILURE, run;

	canary_result_init(&r);
	if (project_open(&p, o->conf_file, 0) || !(spec.conf = find_canary(&p, name)))
		goto out;
	if (o->out_dir) {
		dir = xstrdup(o->out_dir);
	} else {
		char *parent = project_state_dir(&p, "canaries"), *kind = xstrfmt("canaries/%s", name);

		run = parent ? project_new_dir(&p, kind, NULL, &dir, NULL) : -1;
		free(parent);
		free(kind);
		if (run)
			goto out;
	}
	if (mkdir_p(dir))
		goto out;
	spec.builds[CANARY_BASE].dir = spec.builds[CANARY_CAND].dir = p.dir;
	if (o->base) {
		if ((p.in_git && project_find_git(&p)))
			goto out;
		run = canary_prepare(&p, o->base, o->cand, o->build, dir, &trees, &why);
		if (run < 0)
			goto out;
		if (run > 0) {
			error("cannot build: %s", why);
			goto out;
		}
		spec.builds[CANARY_BASE].dir = trees.base.dir;
		spec.builds[CANARY_CAND].dir = trees.cand.dir;
	}
	spec.builds[CANARY_BASE].start = o->base_cmd;
	spec.builds[CANARY_CAND].start = o->cand_cmd;
	spec.out_dir = dir;
	spec.observer = terminal_observer();
	cancel_on_interrupt(true);
	run = canary_run(&spec, &r);
	terminal_done();
	cancel_on_interrupt(false);
	if (canary_write_files(&r, name, dir))
		run = -1;
	if (run) {
		ret = r.interrupted ? 130 : HL_EXIT_FAILURE;
		goto out;
	}
	if (o->json) {
		print_json(canary_result_to_json(&r, name));
	} else {
		struct strbuf sb = STRBUF_INIT;

		canary_format_text(&r, name, &sb);
		strbuf_addf(&sb, "files: %s/{report.md,canary.json,canary.html,base/,cand/}\n", short_path(dir));
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	ret = canary_exit_status(&r);
out:
	if (revs_pair_close(&trees) && !ret)
		ret = HL_EXIT_FAILURE;
	canary_result_release(&r);
	project_release(&p);
	free(dir);
	free(why);
	return ret;
}

int cmd_canary(int argc, char **argv)
{
	enum { OPT_PROFILES = 256, OPT_BY, OPT_TYPE, OPT_CONFIDENCE, OPT_MIN_SHARE, OPT_TOLERANCE,
	       OPT_WORK, OPT_TOP, OPT_JSON, OPT_BASE, OPT_CAND, OPT_BASE_CMD, OPT_CAND_CMD, OPT_NO_BUILD };
	static const struct option opts[] = {
		{ "profiles", no_argument, NULL, OPT_PROFILES },
		{ "by", required_argument, NULL, OPT_BY },
		{ "sample-type", required_argument, NULL, OPT_TYPE },
		{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
		{ "min-share", required_argument, NULL, OPT_MIN_SHARE },
		{ "tolerance", required_argument, NULL, OPT_TOLERANCE },
		{ "work", required_argument, NULL, OPT_WORK },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "cand", required_argument, NULL, OPT_CAND },
		{ "base-cmd", required_argument, NULL, OPT_BASE_CMD },
		{ "cand-cmd", required_argument, NULL, OPT_CAND_CMD },
		{ "no-build", no_argument, NULL, OPT_NO_BUILD },
		{ "config", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	struct service_opts so = { .build = true };
	bool service_opt = false;
	struct share_diff_spec spec = { 0 };
	struct share_diff d;
	struct profile base, cand;
	bool profiles = false, json = false;
	long top = 20;
	int c, ret = HL_EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "f:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			so.conf_file = optarg;
			service_opt = true;
			break;
		case 'o':
			so.out_dir = optarg;
			service_opt = true;
			break;
		case OPT_BASE:
			so.base = optarg;
			service_opt = true;
			break;
		case OPT_CAND:
			so.cand = optarg;
			service_opt = true;
			break;
		case OPT_BASE_CMD:
			so.base_cmd = optarg;
			service_opt = true;
			break;
		case OPT_CAND_CMD:
			so.cand_cmd = optarg;
			service_opt = true;
			break;
		case OPT_NO_BUILD:
			so.build = false;
			service_opt = true;
			break;
		case OPT_PROFILES:
			profiles = true;
			break;
		case OPT_BY:
			if (strcmp(optarg, "self") && strcmp(optarg, "total"))
				return usage_error("canary", "invalid --by '%s': use self or total", optarg);
			spec.by_total = !strcmp(optarg, "total");
			break;
		case OPT_TYPE:
			spec.sample_type = optarg;
			break;
		case OPT_CONFIDENCE:
			if (parse_pct("--confidence", optarg, 50, 99.9999, &spec.confidence))
				return HL_EXIT_USAGE;
			break;
		case OPT_MIN_SHARE:
			if (parse_pct("--min-share", optarg, 0, 99, &spec.min_share))
				return HL_EXIT_USAGE;
			if (!spec.min_share)
				spec.min_share = 1e-300;	/* 0 asks for every function */
			break;
		case OPT_TOLERANCE:
			if (parse_pct("--tolerance", optarg, 0, 1000, &spec.tolerance))
				return HL_EXIT_USAGE;
			if (!spec.tolerance)
				spec.tolerance = -1;	/* 0: any change the counts can tell */
			break;
		case OPT_WORK:
			if (parse_work(optarg, &spec.base_work, &spec.cand_work))
				return HL_EXIT_USAGE;
			break;
		case OPT_TOP:
			if ((top = parse_count("--top", optarg, 0, 1L << 30)) < 0)
				return HL_EXIT_USAGE;
			break;
		case OPT_JSON:
			json = true;
			break;
		default:
			return usage_error("canary", "invalid option");
		}
	}
	if (!profiles) {
		if (argc - optind != 1)
			return usage_error("canary", "expected the name of one [canary] (or --profiles BASE CAND)");
		if (!so.base != !so.cand)
			return usage_error("canary", "--base and --cand go together");
		if (!*argv[optind] || (so.base_cmd && !*so.base_cmd) || (so.cand_cmd && !*so.cand_cmd))
			return usage_error("canary", "a command or a name is empty");
		so.json = json;
		return run_service(argv[optind], &so);
	}
	if (service_opt)
		return usage_error("canary", "--base, --cand, --base-cmd, --cand-cmd, --no-build, -f and -o are "
					     "for a [canary] NAME, not with --profiles");
	if (argc - optind != 2)
		return usage_error("canary", "--profiles takes two files, the base's and the candidate's");

	profile_init(&base);
	profile_init(&cand);
	if (profile_read_any(&base, argv[optind]) || profile_read_any(&cand, argv[optind + 1]))
		goto out;
	spec.base = &base;
	spec.cand = &cand;
	if (share_diff_build(&spec, &d))
		goto out;
	if (json) {
		print_json(share_diff_to_json(&d));
	} else {
		struct strbuf sb = STRBUF_INIT;

		share_diff_format_text(&d, (size_t)top, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	share_diff_release(&d);
	ret = HL_EXIT_OK;
out:
	profile_release(&base);
	profile_release(&cand);
	return ret;
}
