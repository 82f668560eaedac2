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
"                      [--by function|line|file|dso] [--sample-type NAME] [--json]\n"
"\n"
"Rank where the time went in a profile (default hotloop.pb.gz; pprof,\n"
"perf.data, perf script text, callgrind.out or folded stacks, recognized by\n"
"content; - reads standard input).\n"
"\n"
"  --top N              show the first N rows (default 20, 0 for all)\n"
"  --sort self|total    rank by self cost (default) or by total cost\n"
"  --by KIND            one row per function (default), source line, file or DSO\n"
"  --sample-type NAME   the value to rank by (default: the profile's default,\n"
"                       else samples)\n"
"  --json               one JSON document on stdout (docs/report.md)\n";

static const char *by_names[] = { "function", "line", "file", "dso" };

static double pct(int64_t v, int64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}


static void print_text(const struct profile *p, const struct report *r, long top,
		       enum report_sort sort)
{
	const struct pf_value_type *st = &p->sample_type[r->sample_index];
	struct strbuf loc = STRBUF_INIT;
	size_t n = top && (size_t)top < r->nr ? (size_t)top : r->nr;

	printf("# %lld %s (%s) in %zu distinct stacks; by %s, sorted by %s\n",
	       (long long)r->total, profile_string(p, st->type),
	       profile_string(p, st->unit), r->samples, by_names[r->by],
	       sort == REPORT_SORT_SELF ? "self" : "total");
	switch (r->by) {
	case REPORT_BY_FUNCTION:
	case REPORT_BY_LINE:
		printf("%7s %12s %7s %12s  %-40s %-28s %s\n", "self%", "self", "total%", "total",
		       "function", "file:line", "dso");
		break;
	case REPORT_BY_FILE:
		printf("%7s %12s %7s %12s  %-40s %s\n", "self%", "self", "total%", "total",
		       "file", "dso");
		break;
	case REPORT_BY_DSO:
		printf("%7s %12s %7s %12s  %s\n", "self%", "self", "total%", "total", "dso");
		break;
	}
	for (size_t i = 0; i < n; i++) {
		const struct report_row *row = &r->rows[i];

		printf("%6.2f%% %12lld %6.2f%% %12lld  ", pct(row->self, r->total),
		       (long long)row->self, pct(row->total, r->total), (long long)row->total);
		switch (r->by) {
		case REPORT_BY_FUNCTION:
		case REPORT_BY_LINE:
			strbuf_reset(&loc);
			if (*row->file)
				strbuf_addf(&loc, "%s:%lld", short_path(row->file), (long long)row->line);
			else
				strbuf_addch(&loc, '-');
			printf("%-40s %-28s %s", row->name, loc.buf, row->dso);
			break;
		case REPORT_BY_FILE:
			printf("%-40s %s", *row->file ? short_path(row->name) : row->name, row->dso);
			break;
		case REPORT_BY_DSO:
			printf("%s", row->name);
			break;
		}
		printf("%s%s\n", row->inlined ? " [inlined]" : "", row->kernel ? " [kernel]" : "");
	}
	if (n < r->nr)
		printf("# %zu more rows (--top 0 shows all)\n", r->nr - n);
	strbuf_release(&loc);
}

static json_t *report_json(const struct profile *p, const struct report *r, long top,
			   enum report_sort sort)
{
	const struct pf_value_type *st = &p->sample_type[r->sample_index];
	size_t n = top && (size_t)top < r->nr ? (size_t)top : r->nr;
	json_t *doc = json_object(), *rows = json_array();
	char type[256];

	snprintf(type, sizeof(type), "%s/%s", profile_string(p, st->type),
		 profile_string(p, st->unit));
	json_object_set_new(doc, "total", json_integer(r->total));
	json_object_set_new(doc, "stacks", json_integer((json_int_t)r->samples));
	json_object_set_new(doc, "sample_type", json_string(type));
	json_object_set_new(doc, "by", json_string(by_names[r->by]));
	json_object_set_new(doc, "sort", json_string(sort == REPORT_SORT_SELF ? "self" : "total"));
	for (size_t i = 0; i < n; i++) {
		const struct report_row *row = &r->rows[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(row->name));
		json_object_set_new(o, "self", json_integer(row->self));
		json_object_set_new(o, "self_pct", json_real(pct(row->self, r->total)));
		json_object_set_new(o, "total", json_integer(row->total));
		json_object_set_new(o, "total_pct", json_real(pct(row->total, r->total)));
		json_object_set_new(o, "file", json_string(row->file));
		json_object_set_new(o, "line", json_integer(row->line));
		json_object_set_new(o, "dso", json_string(row->dso));
		json_object_set_new(o, "inlined", json_boolean(row->inlined));
		json_object_set_new(o, "kernel", json_boolean(row->kernel));
		json_array_append_new(rows, o);
	}
	json_object_set_new(doc, "rows", rows);
	json_object_set_new(doc, "rows_total", json_integer((json_int_t)r->nr));
	return doc;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "sort", required_argument, NULL, 's' },
		{ "by", required_argument, NULL, 'b' },
		{ "sample-type", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	enum report_sort sort = REPORT_SORT_SELF;
	enum report_by by = REPORT_BY_FUNCTION;
	const char *file = "hotloop.pb.gz", *type = NULL;
	struct profile prof;
	struct report r = REPORT_INIT;
	bool json = false;
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
			if ((idx = report_parse_by(optarg)) < 0)
				return usage_error("report", "invalid --by '%s': use function, line, file or dso", optarg);
			by = (enum report_by)idx;
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
	if (report_build(&r, &prof, idx, by))
		goto out;
	report_sort(&r, sort);
	if (json)
		print_json(report_json(&prof, &r, top, sort));
	else
		print_text(&prof, &r, top, sort);
	ret = HL_EXIT_OK;
out:
	report_release(&r);
	profile_release(&prof);
	return ret;
}
