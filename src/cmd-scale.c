/*
 * cmd-scale.c: `hotloop scale [WORKLOAD] [--sizes A,B,C] [-- CMD {n}]`: run
 * a workload (or a command) at several input sizes with lib/scale-run.c,
 * which records each, fits each function's growth and saves the result
 * under .hotloop/scale/; print the table of exponents, or the JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "project.h"
#include "runner.h"
#include "scale.h"
#include "strbuf.h"

const char usage_scale[] =
"usage: hotloop scale [WORKLOAD] [--sizes A,B,C...] [-F HZ] [--call-graph auto|fp|dwarf]\n"
"                     [--repeat R] [--min-samples N] [--top N] [-o FILE] [--json]\n"
"                     [-f CONFIG]\n"
"   or: hotloop scale --sizes A,B,C... [options] -- CMD ARGS... (with {n})\n"
"\n"
"Run a workload at several input sizes, profile each run, and fit each\n"
"function's total (inclusive) time against the size on a log-log scale:\n"
"cost ~ n^k. Prints k with its 95% interval, R^2 and a verdict per function\n"
"(superlinear: k above 1.3 with R^2 at least 0.9), then the program's k.\n"
"\n"
"With a command after --, every {n} in its arguments is replaced by the\n"
"size. With WORKLOAD (or neither: the primary workload), its 'run' line in\n"
"hotloop.conf, which holds {n}, runs with /bin/sh -c in the config's\n"
"directory, at the sizes of its 'sizes' key or --sizes. The command's\n"
"standard output is discarded; a run that fails stops everything.\n"
"\n"
"The result (JSON, docs/scale.md) is saved to .hotloop/scale/WORKLOAD.json\n"
"under the git top level (\"cmd\" for a command), each size's profile to\n"
".hotloop/scale/WORKLOAD/nSIZE.pb.gz.\n"
"\n"
"  -s, --sizes A,B,C        at least 3 different sizes; they should span 4x\n"
"  -F, --freq HZ            samples per second (default 999)\n"
"  -g, --call-graph MODE    auto[,SIZE] (default), fp or dwarf[,SIZE], as for record\n"
"  -r, --repeat R           record each size R times and add them up (default 1)\n"
"      --min-samples N      fit a function over the sizes where it has at least\n"
"                           N samples (default 20); fewer than 3: not fitted\n"
"  -n, --top N              functions in the table (default 25, 0: all)\n"
"  -o, --output FILE        write the JSON here instead of .hotloop/scale/\n"
"      --json               print the JSON document instead of the table\n"
"  -f, --config FILE        hotloop.conf to use (default: found from here up)\n"
"\n"
"Exit status: 0 done, 1 a run failed or another error, 2 usage, 3 perf\n"
"events not permitted, 126/127 when the command cannot be run.\n";

#define SPAN_WANTED 4

/* What the command line asked for, beside the engine's spec. */
struct job {
	struct scale_spec spec;
	const char *workload;	/* as given, or NULL: the primary */
	long top;
	bool json;
};

static int run(struct job *j)
{
	const struct scale_spec *s = &j->spec;
	struct scale sc;
	json_t *doc = NULL;
	int ret;

	if (s->sizes[s->nr_sizes - 1] < SPAN_WANTED * s->sizes[0])
		warning("the sizes span only %.2fx (%llu to %llu): below %dx the exponent is poorly determined",
			(double)s->sizes[s->nr_sizes - 1] / (double)s->sizes[0],
			(unsigned long long)s->sizes[0], (unsigned long long)s->sizes[s->nr_sizes - 1],
			SPAN_WANTED);
	cancel_on_interrupt(true);
	ret = scale_run(s, &sc, &doc);
	terminal_done();
	cancel_on_interrupt(false);
	if (ret) {
		ret = ret < 0 ? HL_EXIT_FAILURE : ret;
	} else if (j->json || (s->output && !strcmp(s->output, "-"))) {
		print_json(doc);	/* -o -: the document once, on stdout */
		doc = NULL;
	} else {
		struct strbuf sb = STRBUF_INIT;

		scale_format_table(&sc, s->workload, j->top > 0 ? (size_t)j->top : 0, s->min_samples, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	json_decref(doc);
	scale_release(&sc);
	return ret;
}

/* Fill j from the workload of project p (j->workload, NULL: the primary): 0, or -1 with an error. */
static int from_project(struct job *j, const struct project *p, bool have_sizes)
{
	const struct config_workload *w = project_workload(p, j->workload);

	if (!w)
		return -1;
	if (w->scenario)
		return error("[workload \"%s\"] is judged by scenario '%s': scale runs a command at sizes",
			     w->name, w->scenario);
	if (!strstr(w->run, "{n}"))
		return error("[workload \"%s\"] runs '%s', which has no {n}: add {n} to its 'run' "
			     "line where the size goes, e.g. run = ./prog {n}", w->name, w->run);
	if (!strcmp(w->name, ".") || !strcmp(w->name, ".."))
		return error("cannot save results under the workload name '%s': rename it", w->name);
	if (!have_sizes) {
		if (!w->nr_sizes)
			return error("[workload \"%s\"] has no sizes: add 'sizes = 1000 2000 4000' to it "
				     "in '%s' or pass --sizes", w->name, p->conf_path);
		j->spec.sizes = w->sizes;
		j->spec.nr_sizes = w->nr_sizes;
	}
	j->spec.workload = w->name;
	j->spec.run = w->run;
	j->spec.command = w->run;
	j->spec.dir = p->dir;
	j->spec.timeout = w->timeout_s;
	return 0;
}

enum { OPT_MIN_SAMPLES = 256, OPT_JSON };

int cmd_scale(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "freq", required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "min-samples", required_argument, NULL, OPT_MIN_SAMPLES },
		{ "top", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "config", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct job j = { .spec = { .repeat = 1, .min_samples = SCALE_MIN_SAMPLES }, .top = 25 };
	struct project p = PROJECT_INIT;
	struct strbuf command = STRBUF_INIT;
	const char *sizes_arg = NULL, *conf_file = NULL;
	uint64_t *sizes = NULL;
	bool have_cmd = false;
	long v;
	int c, ret = HL_EXIT_USAGE;

	j.spec.sampler.freq = SAMPLER_DEFAULT_FREQ;
	optind = 1;
	opterr = 0;
	for (;;) {
		while ((c = getopt_long(argc, argv, "+s:F:g:r:n:o:f:", opts, NULL)) != -1) {
			switch (c) {
			case 's':
				sizes_arg = optarg;
				break;
			case 'F':
				if ((v = parse_count("-F", optarg, 1, 1000000)) < 0)
					goto out;
				j.spec.sampler.freq = (unsigned)v;
				break;
			case 'g':
				if (parse_call_graph("scale", optarg, &j.spec.sampler))
					goto out;
				break;
			case 'r':
				if ((j.spec.repeat = parse_count("--repeat", optarg, 1, 1000)) < 0)
					goto out;
				break;
			case OPT_MIN_SAMPLES:
				if ((v = parse_count("--min-samples", optarg, 1, 1000000000)) < 0)
					goto out;
				j.spec.min_samples = (uint64_t)v;
				break;
			case 'n':
				if ((j.top = parse_count("--top", optarg, 0, 1000000)) < 0)
					goto out;
				break;
			case 'o':
				if (!*optarg) {
					ret = usage_error("scale", "-o needs a file name");
					goto out;
				}
				j.spec.output = optarg;
				break;
			case OPT_JSON:
				j.json = true;
				break;
			case 'f':
				conf_file = optarg;
				break;
			default:
				ret = usage_error("scale", "unknown option '%s'", argv[optind - 1]);
				goto out;
			}
		}
		if (optind >= argc)
			break;
		if (!strcmp(argv[optind - 1], "--")) {
			have_cmd = true;
			break;
		}
		if (j.workload) {
			ret = usage_error("scale", "unexpected argument '%s': a command goes after --",
					  argv[optind]);
			goto out;
		}
		j.workload = argv[optind++];
	}
	if (have_cmd && (j.workload || conf_file)) {
		ret = usage_error("scale", "give a workload or a command after --, not both");
		goto out;
	}
	if (sizes_arg) {
		struct strbuf why = STRBUF_INIT;

		if (config_parse_sizes(sizes_arg, &sizes, &j.spec.nr_sizes, &why)) {
			ret = usage_error("scale", "invalid value '%s' for --sizes: %s; expected at least %d "
					  "different whole numbers above 0, like 1000,2000,4000",
					  sizes_arg, why.buf, CONFIG_MIN_SIZES);
			strbuf_release(&why);
			goto out;
		}
		strbuf_release(&why);
		j.spec.sizes = sizes;
	}
	if (have_cmd) {
		bool has_n = false;

		for (int i = optind; i < argc; i++)
			has_n |= strstr(argv[i], "{n}") != NULL;
		if (!has_n) {
			ret = usage_error("scale", "the command has no {n}: write {n} where the size goes, "
					  "e.g. hotloop scale --sizes 1000,2000,4000 -- ./prog {n}");
			goto out;
		}
		if (!sizes_arg) {
			ret = usage_error("scale", "a command needs --sizes, e.g. --sizes 1000,2000,4000");
			goto out;
		}
		j.spec.workload = "cmd";
		j.spec.argv = argv + optind;
		runner_quote_argv(&command, (const char *const *)argv + optind, (size_t)(argc - optind));
		j.spec.command = command.buf;
	}
	if (project_open(&p, conf_file, have_cmd ? PROJECT_CONFIG_OPTIONAL : 0) ||
	    (!have_cmd && from_project(&j, &p, sizes_arg != NULL))) {
		ret = HL_EXIT_FAILURE;
		goto out;
	}
	j.spec.top = p.top;
	j.spec.obs = terminal_observer();
	ret = run(&j);
out:
	free(sizes);
	strbuf_release(&command);
	project_release(&p);
	return ret;
}
