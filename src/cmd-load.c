/*
 * cmd-load.c: `hotloop load URL --rate R`, the open-loop load generator
 * (lib/loadgen.c) on its own: HTTP/1.1 from a template or a file, or a
 * line protocol, at a constant or Poisson rate; a table per window and a
 * summary whose latencies run from each request's intended send time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "config.h"
#include "histogram.h"
#include "json.h"
#include "loadgen.h"

const char usage_load[] =
"usage: hotloop load URL --rate N [--duration T] [--poisson [--seed N]]\n"
"                   [--connections C] [--window T] [--warmup T] [--timeout T]\n"
"                   [--request FILE | -X METHOD -H HEADER... -d BODY]\n"
"                   [--line TEXT] [--json]\n"
"\n"
"Send requests to a service at a fixed rate, whatever it answers (an open\n"
"loop): each request's latency is measured from the time it was meant to be\n"
"sent, so a stall shows in the percentiles as the queueing it causes. URL is\n"
"http://HOST[:PORT]/PATH for HTTP/1.1 (keep-alive), or HOST:PORT (tcp://) for\n"
"a line protocol with --line. Prints a table per window, then the summary\n"
"(docs/load.md).\n"
"\n"
"  --rate N           requests a second, over all connections (required)\n"
"  --duration T       how long to measure, after the warmup (default 10s)\n"
"  --poisson          Poisson arrivals at that mean rate (default: constant)\n"
"  --seed N           the Poisson schedule's seed (default 1): same seed, same times\n"
"  -c, --connections C  connections, one request in flight on each (default 16)\n"
"  --window T         one row per window (default 1s)\n"
"  --warmup T         sent but not counted in the summary (default 0)\n"
"  --timeout T        a reply must be whole this long after the intended\n"
"                     send time (default 2s)\n"
"  --request FILE     the HTTP requests to send in turn (docs/load.md)\n"
"  -X, --method M     the method of the template (default GET, POST with -d)\n"
"  -H, --header H     a header 'Name: value' of the template (repeatable)\n"
"  -d, --data BODY    the template's body (@FILE reads it from FILE)\n"
"  --line TEXT        the line protocol: send TEXT and a newline, a line back\n"
"  --json             the windows and the summary as JSON\n"
"\n"
"T is seconds (2.5) or has a unit: 200ms, 10s, 5m, 1h. Exit status: 0 when\n"
"the load ran (errors are counted, not fatal); 1 when it could not start;\n"
"2 usage; 130 when interrupted (the windows so far are printed).\n";

static int parse_time(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!errno && end != arg && !*end && isfinite(v) && v >= 0 && v <= 366.0 * 86400) {
		*out = v;
		return 0;
	}
	if (!config_parse_duration(arg, out))
		return 0;
	return error("invalid value '%s' for %s: expected a time such as 500ms, 10s or 2m", arg, opt);
}

/* spec.on_window: each window's row as it ends, unless the output is JSON. */
static void print_window(const struct loadgen_window *w, void *data)
{
	struct strbuf row = STRBUF_INIT;

	if (*(bool *)data)
		return;
	loadgen_format_window(w, &row);
	fputs(row.buf, stdout);
	fflush(stdout);
	strbuf_release(&row);
}

static int read_file_arg(const char *path, struct strbuf *sb)
{
	FILE *f = fopen(path, "rb");
	int ret;

	if (!f)
		return error("cannot open '%s': %s", path, strerror(errno));
	ret = strbuf_read_fd(sb, fileno(f), 16u << 20);
	fclose(f);
	if (ret)
		return error("cannot read '%s': %s", path, errno == EFBIG ? "larger than 16 MiB" : strerror(errno));
	return 0;
}

enum { OPT_RATE = 256, OPT_DURATION, OPT_POISSON, OPT_SEED, OPT_WINDOW, OPT_WARMUP, OPT_TIMEOUT,
       OPT_REQUEST, OPT_LINE, OPT_JSON };

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "poisson", no_argument, NULL, OPT_POISSON },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "connections", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "request", required_argument, NULL, OPT_REQUEST },
		{ "method", required_argument, NULL, 'X' },
		{ "header", required_argument, NULL, 'H' },
		{ "data", required_argument, NULL, 'd' },
		{ "line", required_argument, NULL, OPT_LINE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct loadgen_spec spec = { .connections = 16, .duration = 10, .window = 1, .timeout = 2, .seed = 1 };
	struct loadgen_result r = LOADGEN_RESULT_INIT;
	struct strbuf *reqs = NULL, body = STRBUF_INIT, out = STRBUF_INIT;
	size_t nr_reqs = 0, alloc_reqs = 0, nr_headers = 0;
	const char *request_file = NULL, *method = NULL, *data = NULL, *line = NULL, *url;
	const char **headers = xcalloc(argc, sizeof(*headers));
	char *host = NULL, *path = NULL, *end;
	bool json = false, quiet, seed_set = false;
	int c, ret = HL_EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "c:X:H:d:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_RATE:
			errno = 0;
			spec.rate = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(spec.rate >= 1 && spec.rate <= 1e7)) {
				ret = usage_error("load", "invalid value '%s' for --rate: expected requests a second from 1 to 10000000", optarg);
				goto out;
			}
			break;
		case OPT_DURATION:
		case OPT_WINDOW:
		case OPT_WARMUP:
		case OPT_TIMEOUT: {
			double *d = c == OPT_DURATION ? &spec.duration : c == OPT_WINDOW ? &spec.window :
				    c == OPT_WARMUP ? &spec.warmup : &spec.timeout;
			const char *name = c == OPT_DURATION ? "--duration" : c == OPT_WINDOW ? "--window" :
					   c == OPT_WARMUP ? "--warmup" : "--timeout";

			if (parse_time(name, optarg, d)) {
				ret = show_usage("load");
				goto out;
			}
			if (c != OPT_WARMUP && !(*d > 0)) {
				ret = usage_error("load", "%s must be more than 0", name);
				goto out;
			}
			if (c == OPT_WINDOW && *d < 0.01) {
				ret = usage_error("load", "--window is 10ms or more");
				goto out;
			}
			break;
		}
		case OPT_POISSON:
			spec.sched = LOADGEN_POISSON;
			break;
		case OPT_SEED:
			errno = 0;
			spec.seed = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-') {
				ret = usage_error("load", "invalid value '%s' for --seed: expected a whole number", optarg);
				goto out;
			}
			seed_set = true;
			break;
		case 'c':
			if ((spec.connections = (int)parse_count("--connections", optarg, 1, 10000)) < 0) {
				ret = show_usage("load");
				goto out;
			}
			break;
		case OPT_REQUEST:
			request_file = optarg;
			break;
		case 'X':
			method = optarg;
			break;
		case 'H':
			if (!strchr(optarg, ':') || *optarg == ':' || strpbrk(optarg, "\r\n")) {
				ret = usage_error("load", "invalid header '%s': expected 'Name: value' on one line", optarg);
				goto out;
			}
			headers[nr_headers++] = optarg;
			break;
		case 'd':
			data = optarg;
			break;
		case OPT_LINE:
			line = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		default:
			ret = usage_error("load", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind >= argc) {
		ret = usage_error("load", "expected the URL to load");
		goto out;
	}
	if (optind + 1 < argc) {
		ret = usage_error("load", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	url = argv[optind];
	if (!spec.rate) {
		ret = usage_error("load", "--rate is required: an open loop sends at a rate, whatever the server does");
		goto out;
	}
	if (seed_set && spec.sched != LOADGEN_POISSON) {
		ret = usage_error("load", "--seed is the seed of --poisson");
		goto out;
	}
	if (request_file && (method || nr_headers || data)) {
		ret = usage_error("load", "--request and -X/-H/-d exclude each other");
		goto out;
	}
	if (loadgen_parse_url(url, &spec, &host, &path)) {
		ret = show_usage("load");
		goto out;
	}
	if (spec.proto == LOADGEN_LINE) {
		if (!line) {
			ret = usage_error("load", "'%s' is a tcp target: give the line to send with --line, or an http:// URL", url);
			goto out;
		}
		if (request_file || method || nr_headers || data) {
			ret = usage_error("load", "--request, -X, -H and -d are for http:// targets");
			goto out;
		}
		if (strpbrk(line, "\r\n")) {
			ret = usage_error("load", "--line is one line: without CR or LF");
			goto out;
		}
		ALLOC_GROW(reqs, 1, alloc_reqs);
		strbuf_init(&reqs[0], 0);
		strbuf_addf(&reqs[0], "%s\n", line);
		nr_reqs = 1;
	} else if (line) {
		ret = usage_error("load", "--line is for a tcp target (HOST:PORT), not '%s'", url);
		goto out;
	} else if (request_file) {
		struct strbuf file = STRBUF_INIT;
		int bad = read_file_arg(request_file, &file) ||
			  loadgen_split_requests(file.buf, file.len, &reqs, &nr_reqs, &alloc_reqs);

		strbuf_release(&file);
		if (bad) {
			error("in '%s': see docs/load.md for the format", request_file);
			goto out;
		}
	} else {
		if (data && *data == '@') {
			if (read_file_arg(data + 1, &body))
				goto out;
		} else if (data) {
			strbuf_addstr(&body, data);
		}
		if (method && (!*method || strpbrk(method, " \r\n"))) {
			ret = usage_error("load", "invalid method '%s'", method);
			goto out;
		}
		ALLOC_GROW(reqs, 1, alloc_reqs);
		strbuf_init(&reqs[0], 0);
		nr_reqs = 1;
		loadgen_http_request(&reqs[0], method ? method : data ? "POST" : "GET", host, path,
				     headers, nr_headers, data ? body.buf : NULL, body.len);
	}
	spec.requests = reqs;
	spec.nr_requests = nr_reqs;
	quiet = json;
	spec.on_window = print_window;
	spec.data = &quiet;
	if (!json) {
		loadgen_format_header(&out);
		fputs(out.buf, stdout);
		strbuf_reset(&out);
	}
	cancel_on_interrupt(true);
	ret = loadgen_run(&spec, &r);
	cancel_on_interrupt(false);
	if (ret) {
		ret = HL_EXIT_FAILURE;
		goto out;
	}
	if (json) {
		print_json(loadgen_result_to_json(&spec, url, &r));
	} else {
		loadgen_format_summary(&spec, url, &r, &out);
		fputs(out.buf, stdout);
	}
	ret = r.cancelled ? 130 : HL_EXIT_OK;
out:
	for (size_t i = 0; i < nr_reqs; i++)
		strbuf_release(&reqs[i]);
	free(reqs);
	free(headers);
	free(host);
	free(path);
	strbuf_release(&body);
	strbuf_release(&out);
	loadgen_result_release(&r);
	return ret;
}
