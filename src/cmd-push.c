/*
 * cmd-push.c: `hotloop push`, sending a profile (any format hotloop reads,
 * by default the latest run's) to a Grafana Pyroscope server as pprof, so
 * it can be looked at next to the fleet's continuous profiles. The work is
 * in lib/push.c; this file parses options and prints what was sent.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "builtin.h"
#include "json.h"
#include "pprof.h"
#include "profile.h"
#include "profile-io.h"
#include "push.h"
#include "project.h"
#include "strbuf.h"

const char usage_push[] =
"usage: hotloop push URL [FILE] --name APP[{k=v,...}] [--from T] [--until T]\n"
"                    [--header 'Name: value']... [--timeout S] [--cacert FILE]\n"
"                    [--json]\n"
"\n"
"Send a profile to a Grafana Pyroscope server (POST URL/ingest, format=pprof),\n"
"to see it next to the fleet's profiles. FILE is any profile hotloop reads\n"
"(pprof, gzipped or not, or folded stacks; - for standard input); without it,\n"
"the latest 'hotloop run' profile (.hotloop/runs/latest/profile.pb.gz).\n"
"\n"
"  URL                 the server, like http://localhost:4040 (https works too)\n"
"  --name NAME         the application and its labels: APP or APP{k=v,...};\n"
"                      label names match [a-zA-Z_][a-zA-Z0-9_]*, values are\n"
"                      non-empty without ',', '{', '}' or '='\n"
"  --from T, --until T the time range in UNIX seconds; by default the\n"
"                      profile's own (its start and duration), else the\n"
"                      last DURATION seconds up to now\n"
"  --header H          an HTTP header 'Name: value' (authentication, a tenant\n"
"                      as 'X-Scope-OrgID: ID'); repeatable\n"
"  --timeout S         give up after S seconds (default 60; connecting: 10)\n"
"  --cacert FILE       trust the CA certificates in FILE for https\n"
"  --json              print what was sent as JSON\n";

#define LATEST_PROFILE ".hotloop/runs/latest/profile.pb.gz"

static int parse_time(const char *opt, const char *arg, int64_t *out)
{
	long v = parse_count(opt, arg, 0, 32503680000L);	/* up to year 3000 */

	if (v < 0)
		return -1;
	*out = v;
	return 0;
}

/* The latest run's profile of the project here (where `hotloop run` keeps it). */
static char *latest_profile(void)
{
	struct project p;
	char *path = NULL;

	if (!project_open(&p, NULL, PROJECT_CONFIG_OPTIONAL))
		path = xstrfmt("%s/%s", p.top, LATEST_PROFILE);
	project_release(&p);
	if (!path)
		return NULL;
	if (access(path, R_OK)) {
		error("no profile given, and no '%s' to send: give FILE, or make one with 'hotloop run'",
		      path);
		free(path);
		return NULL;
	}
	return path;
}

static void print_result(const struct push_request *r, const struct push_result *res,
			 const char *file, const struct profile *p, bool json)
{
	int idx = profile_pick_sample_type(p, NULL);
	int64_t total = idx >= 0 ? profile_total(p, idx) : 0;

	if (json) {
		json_t *doc = json_object();

		json_object_set_new(doc, "url", json_text(res->url));
		json_object_set_new(doc, "status", json_integer(res->status));
		json_object_set_new(doc, "file", json_text(file));
		json_object_set_new(doc, "name", json_text(r->name));
		json_object_set_new(doc, "from", json_integer(r->from));
		json_object_set_new(doc, "until", json_integer(r->until));
		json_object_set_new(doc, "bytes", json_integer((json_int_t)res->sent));
		json_object_set_new(doc, "stacks", json_integer((json_int_t)p->nr_samples));
		json_object_set_new(doc, "sample_type",
				    json_text(idx >= 0 ? profile_string(p, p->sample_type[idx].type) : ""));
		json_object_set_new(doc, "total", json_integer(total));
		print_json(doc);
		return;
	}
	printf("pushed %s as %s to %s (HTTP %ld)\n", file, r->name, r->base, res->status);
	printf("  %zu bytes; total %lld %s; from %lld until %lld\n", res->sent, (long long)total,
	       idx >= 0 ? profile_string(p, p->sample_type[idx].type) : "samples",
	       (long long)r->from, (long long)r->until);
}

int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "from", required_argument, NULL, 'F' },
		{ "until", required_argument, NULL, 'U' },
		{ "header", required_argument, NULL, 'H' },
		{ "timeout", required_argument, NULL, 't' },
		{ "cacert", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct push_request r = { .timeout_s = 60 };
	struct push_result res = PUSH_RESULT_INIT;
	const char **headers = NULL;
	size_t nr_headers = 0, alloc_headers = 0;
	int64_t from = -1, until = -1;
	struct strbuf body = STRBUF_INIT;
	struct profile p;
	char *file = NULL;
	bool json = false;
	int c, ret = HL_EXIT_USAGE;

	profile_init(&p);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			r.name = optarg;
			break;
		case 'F':
			if (parse_time("--from", optarg, &from))
				goto out;
			break;
		case 'U':
			if (parse_time("--until", optarg, &until))
				goto out;
			break;
		case 'H':
			if (push_check_header(optarg))
				goto out;
			ALLOC_GROW(headers, nr_headers + 1, alloc_headers);
			headers[nr_headers++] = optarg;
			break;
		case 't':
			if (parse_seconds("--timeout", optarg, &r.timeout_s))
				goto out;
			if (r.timeout_s < 0.001) {
				usage_error("push", "--timeout must be more than 0 seconds");
				goto out;
			}
			break;
		case 'c':
			r.cacert = optarg;
			break;
		case 'j':
			json = true;
			break;
		case ':':
			usage_error("push", "option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			usage_error("push", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind >= argc) {
		usage_error("push", "no server given: hotloop push http://host:4040 [FILE] --name APP");
		goto out;
	}
	if (argc - optind > 2) {
		usage_error("push", "more than one profile given ('%s', '%s')", argv[optind + 1],
			    argv[optind + 2]);
		goto out;
	}
	r.base = argv[optind];
	if (!r.name) {
		usage_error("push", "no --name given: use --name APP or APP{k=v,...}");
		goto out;
	}
	if (push_check_base(r.base) || push_check_name(r.name))
		goto out;
	if (from >= 0 && until >= 0 && from >= until) {
		usage_error("push", "--from %lld is not before --until %lld", (long long)from,
			    (long long)until);
		goto out;
	}

	ret = HL_EXIT_FAILURE;
	file = optind + 1 < argc ? xstrdup(argv[optind + 1]) : latest_profile();
	if (!file || profile_read_any(&p, file))
		goto out;
	push_default_range(&p, (int64_t)time(NULL), &r.from, &r.until);
	if (from >= 0 && until < 0)
		until = from + (r.until - r.from);
	else if (until >= 0 && from < 0)
		from = until - (r.until - r.from) > 0 ? until - (r.until - r.from) : 0;
	if (from >= 0) {
		r.from = from;
		r.until = until;
	}
	if (r.from >= r.until) {
		error("the time range %lld..%lld is empty: give --from before --until",
		      (long long)r.from, (long long)r.until);
		goto out;
	}
	r.units = push_units(&p);
	r.sample_rate = push_sample_rate(&p);
	r.headers = headers;
	r.nr_headers = nr_headers;
	if (pprof_encode(&p, &body) || push_send(&r, body.buf, body.len, &res))
		goto out;
	print_result(&r, &res, file, &p, json);
	ret = HL_EXIT_OK;
out:
	push_result_release(&res);
	strbuf_release(&body);
	profile_release(&p);
	free(headers);
	free(file);
	return ret;
}
