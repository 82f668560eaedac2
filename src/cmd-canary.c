/*
 * cmd-canary.c: `hotloop canary --profiles BASE CAND`: two profiles of
 * the same program, from two versions in a fleet, compared function by
 * function: which got cheaper or dearer, with intervals.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "profile.h"
#include "profile-io.h"
#include "share-diff.h"
#include "strbuf.h"

const char usage_canary[] =
"usage: hotloop canary --profiles BASE CAND [--by self|total] [--sample-type NAME]\n"
"                      [--confidence PCT] [--min-share PCT] [--tolerance PCT]\n"
"                      [--work BASE,CAND] [--top N] [--json]\n"
"\n"
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

int cmd_canary(int argc, char **argv)
{
	enum { OPT_PROFILES = 256, OPT_BY, OPT_TYPE, OPT_CONFIDENCE, OPT_MIN_SHARE, OPT_TOLERANCE,
	       OPT_WORK, OPT_TOP, OPT_JSON };
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
		{ NULL, 0, NULL, 0 }
	};
	struct share_diff_spec spec = { 0 };
	struct share_diff d;
	struct profile base, cand;
	bool profiles = false, json = false;
	long top = 20;
	int c, ret = HL_EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
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
	if (!profiles)
		return usage_error("canary", "give --profiles BASE CAND");
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
