/*
 * cmd-flame.c: `hotloop flame`, an interactive SVG flame graph of a profile
 * (pprof or folded stacks), plain, reversed or differential. The drawing is
 * lib/flame.c; this file reads the profiles and writes the SVG.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "strbuf.h"
#include "profile.h"
#include "profile-io.h"
#include "flame.h"

const char usage_flame[] =
"usage: hotloop flame [FILE] [-o SVG] [--diff BASE] [--reverse] [--title T]\n"
"                     [--width PX] [--min-width PX|PCT%] [--sample-type NAME]\n"
"                     [--no-inline]\n"
"\n"
"Draw a self-contained, interactive SVG flame graph of a profile (pprof,\n"
"perf.data, perf script text, callgrind.out, folded stacks, heaptrack or\n"
"jemalloc heap profiles, recognized by content). Hover for details, click to\n"
"zoom, Ctrl-F or Search to highlight a regular expression.\n"
"\n"
"  FILE                the profile (default hotloop.pb.gz; - reads stdin)\n"
"  -o, --output SVG    where to write (default flame.svg; - for stdout)\n"
"  --diff BASE         differential: colour each frame by the change of its\n"
"                      share since BASE (red grew, blue shrank, grey same)\n"
"  --reverse           merge stacks from the leaf: leaf functions at the\n"
"                      base, their callers above\n"
"  --title T           the title (default \"Flame Graph\", or \"Differential\n"
"                      Flame Graph\" with --diff)\n"
"  --width PX          image width in pixels (default 1200)\n"
"  --min-width W       leave out frames narrower than W pixels, or W% of the\n"
"                      width (default 0.1 pixels)\n"
"  --sample-type NAME  the values to draw (default: the profile's default\n"
"                      sample type, else \"samples\", else the last type)\n"
"  --no-inline         fold inlined functions into the function they were\n"
"                      inlined into (one frame per symbol, as perf)\n";

/* "--min-width 0.5" (pixels) or "--min-width 0.1%" */
static int parse_min_width(const char *arg, struct flame_options *o)
{
	char *end;
	double v;

	v = strtod(arg, &end);
	o->min_width_percent = *end == '%';
	if (end == arg || (*end && strcmp(end, "%")) || !isfinite(v) || v < 0 ||
	    (o->min_width_percent && v > 100))
		return error("invalid value '%s' for --min-width: expected pixels (0.5) or a percentage (0.1%%)",
			     arg);
	o->min_width = v;
	return 0;
}

int cmd_flame(int argc, char **argv)
{
	enum { OPT_DIFF = 256, OPT_REVERSE, OPT_TITLE, OPT_WIDTH, OPT_MIN_WIDTH, OPT_SAMPLE_TYPE,
	       OPT_NO_INLINE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "diff", required_argument, NULL, OPT_DIFF },
		{ "reverse", no_argument, NULL, OPT_REVERSE },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "min-width", required_argument, NULL, OPT_MIN_WIDTH },
		{ "sample-type", required_argument, NULL, OPT_SAMPLE_TYPE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ NULL, 0, NULL, 0 },
	};
	struct flame_options o = FLAME_OPTIONS_INIT;
	const char *in = "hotloop.pb.gz", *out = "flame.svg", *base_path = NULL;
	struct profile p, base;
	struct strbuf svg = STRBUF_INIT;
	int c, ret = HL_EXIT_FAILURE;
	long v;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_DIFF:
			base_path = optarg;
			break;
		case OPT_REVERSE:
			o.reverse = true;
			break;
		case OPT_TITLE:
			o.title = optarg;
			break;
		case OPT_WIDTH:
			v = parse_count("--width", optarg, FLAME_MIN_IMAGE_WIDTH, FLAME_MAX_IMAGE_WIDTH);
			if (v < 0)
				return HL_EXIT_USAGE;
			o.width = (int)v;
			break;
		case OPT_MIN_WIDTH:
			if (parse_min_width(optarg, &o))
				return HL_EXIT_USAGE;
			break;
		case OPT_SAMPLE_TYPE:
			o.sample_type = optarg;
			break;
		case OPT_NO_INLINE:
			o.no_inline = true;
			break;
		case ':':
			return usage_error("flame", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("flame", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind + 1 < argc)
		return usage_error("flame", "more than one profile given ('%s', '%s')",
				   argv[optind], argv[optind + 1]);
	if (optind < argc)
		in = argv[optind];
	if (base_path && !strcmp(base_path, "-") && !strcmp(in, "-"))
		return usage_error("flame", "the profile and the base cannot both be standard input");
	o.name = strcmp(in, "-") ? in : "stdin";
	o.base_name = base_path && !strcmp(base_path, "-") ? "stdin" : base_path;

	profile_init(&p);
	profile_init(&base);
	if (profile_read_any(&p, in))
		goto out;
	if (base_path && profile_read_any(&base, base_path))
		goto out;
	if (flame_render(&p, base_path ? &base : NULL, &o, &svg))
		goto out;
	if (write_output(out, &svg))
		goto out;
	ret = HL_EXIT_OK;
out:
	strbuf_release(&svg);
	profile_release(&base);
	profile_release(&p);
	return ret;
}
