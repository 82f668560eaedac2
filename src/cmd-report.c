/*
 * cmd-report.c: `hotloop report`, the ranked table of where the time went,
 * by function, source line, file or DSO, as text or JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "builtin.h"
#include "profile.h"
#include "profile-io.h"
#include "report.h"
#include "strbuf.h"

const char usage_report[] =
"usage: hotloop report [FILE] [--top N] [--sort self|total]\n"
"                      [--by function|line|file|dso|symbol] [--no-inline]\n"
"                      [--sample-type NAME] [--json]\n"
"\n"
"Rank where the time went in a profile (default hotloop.pb.gz; pprof,\n"
"perf.data, perf script text, callgrind.out, folded stacks, heaptrack or\n"
"jemalloc heap profiles, recognized by content; - reads standard input).\n"
"\n"
"  --top N              show the first N rows (default 20, 0 for all)\n"
"  --sort self|total    rank by self cost (default) or by total cost\n"
"  --by KIND            one row per function (default), source line, file or DSO;\n"
"                       symbol: per function of the symbol table (--no-inline)\n"
"  --no-inline          fold inlined functions into the function they were\n"
"                       inlined into, as perf report --no-inline\n"
"  --sample-type NAME   the value to rank by (default: the profile's default,\n"
"                       else samples)\n"
"  --json               one JSON document on stdout (docs/report.md)\n";

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "sort", required_argument, NULL, 's' },
		{ "by", required_argument, NULL, 'b' },
		{ "sample-type", required_argument, NULL, 'T' },
		{ "no-inline", no_argument, NULL, 'I' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	enum report_sort sort = REPORT_SORT_SELF;
	enum report_by by = REPORT_BY_FUNCTION;
	const char *file = "hotloop.pb.gz", *type = NULL;
	struct profile prof;
	struct report r = REPORT_INIT;
	bool json = false;
	unsigned flags = 0;
	long top = 20;
	int c, idx, ret = HL_EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
		switch (c) {
		case 't':
		case 'n':
			if ((top = parse_count("--top", optarg, 0, 1L << 30)) < 0)
				return HL_EXIT_USAGE;
			break;
		case 's':
			if (!strcmp(optarg, "self"))
				sort = REPORT_SORT_SELF;
			else if (!strcmp(optarg, "total"))
				sort = REPORT_SORT_TOTAL;
			else
				return usage_error("report", "invalid --sort '%s': use self or total", optarg);
			break;
		case 'b':
			if (!strcmp(optarg, "symbol")) {
				by = REPORT_BY_FUNCTION;
				flags |= REPORT_NO_INLINE;
				break;
			}
			if ((idx = report_parse_by(optarg)) < 0)
				return usage_error("report", "invalid --by '%s': use function, line, file, dso or symbol", optarg);
			by = (enum report_by)idx;
			break;
		case 'I':
			flags |= REPORT_NO_INLINE;
			break;
		case 'T':
			type = optarg;
			break;
		case 'j':
			json = true;
			break;
		default:
			return usage_error("report", "invalid option");
		}
	}
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc)
		return usage_error("report", "unexpected argument '%s'", argv[optind]);

	profile_init(&prof);
	if (profile_read_any(&prof, file))
		goto out;
	if ((idx = profile_pick_sample_type(&prof, type)) < 0)
		goto out;
	if (report_build_flags(&r, &prof, idx, by, flags))
		goto out;
	report_sort(&r, sort);
	if (json)
		print_json(report_to_json(&prof, &r, (size_t)top, sort));
	else
	{
		struct strbuf sb = STRBUF_INIT;

		report_format_text(&prof, &r, (size_t)top, sort, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	ret = HL_EXIT_OK;
out:
	report_release(&r);
	profile_release(&prof);
	return ret;
}
