/*
 * cmd-convert.c: `hotloop convert`, moving a profile between pprof and
 * folded stacks. The input format is recognized by content; the output
 * format comes from --to or the output file's extension.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"
#include "folded.h"
#include "profile-io.h"
#include "speedscope.h"

const char usage_convert[] =
"usage: hotloop convert IN -o OUT [--to pprof|folded|speedscope]\n"
"                       [--weight samples|period|TYPE]\n"
"\n"
"Convert a profile between pprof (.pb.gz) and folded stacks, or write it for\n"
"speedscope. The input (pprof, perf script text, valgrind's callgrind.out,\n"
"folded stacks, gzipped or not, or perf record's perf.data) is recognized by\n"
"its content; - reads standard input.\n"
"\n"
"  -o, --output OUT    where to write (- for standard output, which needs --to)\n"
"  --to FORMAT         pprof, folded or speedscope; by default from OUT's\n"
"                      extension: .folded, .txt: folded; .pb.gz, .pb, .pprof:\n"
"                      pprof; .speedscope.json: speedscope\n"
"  --weight W          the value written to folded stacks or speedscope: samples (the\n"
"                      default: the \"samples\" sample type, else the first\n"
"                      counted one), period (the \"cpu\" type, else the last),\n"
"                      or the name of any sample type in the profile\n";

enum out_format { OUT_UNKNOWN, OUT_PPROF, OUT_FOLDED, OUT_SPEEDSCOPE };

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static enum out_format format_from_name(const char *name)
{
	if (!strcmp(name, "pprof"))
		return OUT_PPROF;
	if (!strcmp(name, "folded"))
		return OUT_FOLDED;
	if (!strcmp(name, "speedscope"))
		return OUT_SPEEDSCOPE;
	return OUT_UNKNOWN;
}

static enum out_format format_from_path(const char *path)
{
	if (ends_with(path, ".folded") || ends_with(path, ".txt"))
		return OUT_FOLDED;
	if (ends_with(path, ".speedscope.json"))
		return OUT_SPEEDSCOPE;
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pb") || ends_with(path, ".pprof"))
		return OUT_PPROF;
	return OUT_UNKNOWN;
}

/* The sample type --weight names; -1 after an error. */
static int pick_weight(const struct profile *p, const char *weight)
{
	int idx;

	if (!p->nr_sample_type)
		return error("the profile has no sample types");
	if (!strcmp(weight, "samples")) {
		idx = profile_find_sample_type(p, "samples");
		for (size_t i = 0; idx < 0 && i < p->nr_sample_type; i++)
			if (!strcmp(profile_string(p, p->sample_type[i].unit), "count"))
				idx = (int)i;
		return idx >= 0 ? idx : 0;
	}
	if (!strcmp(weight, "period")) {
		idx = profile_find_sample_type(p, "cpu");
		return idx >= 0 ? idx : (int)p->nr_sample_type - 1;
	}
	return profile_pick_sample_type(p, weight);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "to", required_argument, NULL, 't' },
		{ "weight", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in, *out = NULL, *weight = NULL;
	enum out_format to = OUT_UNKNOWN;
	struct profile p;
	struct strbuf sb = STRBUF_INIT;
	int c, ret = HL_EXIT_FAILURE;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 't':
			to = format_from_name(optarg);
			if (to == OUT_UNKNOWN)
				return usage_error("convert", "unknown output format '%s': use pprof, folded or speedscope",
						   optarg);
			break;
		case 'w':
			weight = optarg;
			break;
		case ':':
			return usage_error("convert", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("convert", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("convert", "no input profile given");
	if (optind + 1 < argc)
		return usage_error("convert", "more than one input given ('%s', '%s')",
				   argv[optind], argv[optind + 1]);
	in = argv[optind];
	if (!out)
		return usage_error("convert", "no output given: use -o OUT");
	if (to == OUT_UNKNOWN)
		to = format_from_path(out);
	if (to == OUT_UNKNOWN)
		return usage_error("convert", "cannot tell the output format from '%s': use --to pprof, folded or speedscope",
				   out);
	if (weight && to == OUT_PPROF)
		return usage_error("convert", "--weight applies to folded and speedscope output only");

	profile_init(&p);
	if (profile_read_any(&p, in))
		goto out;
	if (to == OUT_FOLDED) {
		int idx = pick_weight(&p, weight ? weight : "samples");
		if (idx < 0 || folded_write(&p, idx, &sb))
			goto out;
	} else if (to == OUT_SPEEDSCOPE) {
		const char *slash = strrchr(in, '/');
		int idx = pick_weight(&p, weight ? weight : "samples");

		if (idx < 0 || speedscope_write(&p, idx, slash ? slash + 1 : in, &sb))
			goto out;
	} else if (pprof_encode(&p, &sb)) {
		goto out;
	}
	if (write_output(out, &sb))
		goto out;
	ret = HL_EXIT_OK;
out:
	strbuf_release(&sb);
	profile_release(&p);
	return ret;
}
