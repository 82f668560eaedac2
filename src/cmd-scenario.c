/*
 * cmd-scenario.c: `hotloop scenario NAME`, a service under load once, by
 * lib/scenario.c: its resource timeline, metrics and phases written under
 * .hotloop/scenarios/NAME/<stamp>/ (or -o DIR), and a table per phase
 * printed (or the summary as JSON).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "cli.h"
#include "gate.h"
#include "json.h"
#include "project.h"
#include "revs.h"
#include "scenario.h"
#include "strbuf.h"
#include "util.h"

const char usage_scenario[] =
"usage: hotloop scenario NAME [-f CONFIG] [-o DIR] [--overlay DIR] [--profile cpu]\n"
"                        [--heap] [--json]\n"
"       hotloop scenario NAME --base REV|DIR --cand REV|DIR [--runs N]\n"
"                        [--no-build] [--no-test] [--heap] [-f CONFIG] [-o DIR] [--json]\n"
"\n"
"Run the [scenario \"NAME\"] of hotloop.conf once: start the service on a\n"
"free port, wait until it is ready, run its phases (idle, pressure with a\n"
"load command, idle, ...) while sampling the CPU, memory, threads, fds,\n"
"context switches, I/O and page faults of its whole process tree and the\n"
"metrics it prints, then stop it. Writes timeline.json, timeline.csv,\n"
"graph.html and summary.json and prints a table per phase, and whether\n"
"memory returned to its level before the pressure.\n"
"\n"
"  -f, --config FILE   the hotloop.conf (default: found from here up)\n"
"  -o, --output DIR    write the files there (default:\n"
"                      .hotloop/scenarios/NAME/<stamp>/)\n"
"  --profile cpu       also record the service's CPU profile in the judged\n"
"                      phase into profile.pb.gz (as 'profile = cpu')\n"
"  --overlay DIR       lay an earlier run's timeline (DIR/timeline.json)\n"
"                      over this one in graph.html, aligned by phase\n"
"  --heap              preload libhotloop-heap.so into the service in stats\n"
"                      mode: its heap-peak, allocs and alloc-bytes over the\n"
"                      whole run (also [gate] heap = yes; docs/heap.md)\n"
"  --json              print the summary as JSON (with --base: the verdict,\n"
"                      as compare --json prints it)\n"
"\n"
"With --base and --cand, run it for two builds (revisions checked out\n"
"outside your tree, or directories), alternating, N times each, and judge\n"
"the judged phase: its mean CPU is the primary (lower is better), every\n"
"[metric] rule must hold (a counter's rate, a gauge's mean), and peak RSS\n"
"stays within the RAM budget. Keep, reject (exit 4) or inconclusive.\n"
"\n"
"  --base REV|DIR      the baseline build\n"
"  --cand REV|DIR      the candidate build\n"
"  --runs N            runs of each (default: the scenario's runs, 6; fewer\n"
"                      than 6 cannot give a 95% interval)\n"
"  --no-build          use the trees as they are\n"
"  --no-test           skip [gate] test on the candidate\n";

enum { OPT_PROFILE = 255, OPT_OVERLAY = 256, OPT_BASE, OPT_CAND, OPT_RUNS, OPT_NO_BUILD, OPT_NO_TEST, OPT_HEAP };

struct builds {
	const char *base, *cand;
	long runs;
	bool build, test, heap;
};

/* Both builds under the scenario, through the gate: the verdict, as compare gives it. */
static int compare_builds(struct project *p, const struct config_scenario *sc, const struct builds *b,
			  const char *out_dir, bool json)
{
	struct gate_spec spec = GATE_SPEC_INIT;
	struct revs_pair trees = REVS_PAIR_INIT;
	struct compare_workload_spec w = { .name = sc->name, .primary = true, .scenario = sc,
					   .scenario_out = out_dir };
	int ret = HL_EXIT_FAILURE;

	if ((p->in_git && project_find_git(p)) || revs_pair_open(&trees, p, b->base, b->cand) ||
	    gate_spec_from_project(&spec, p, trees.base.dir, trees.cand.dir))
		goto out;
	w.base_dir = trees.base.dir;
	w.cand_dir = trees.cand.dir;
	spec.workloads = &w;
	spec.nr_workloads = 1;
	spec.source = "scenario";
	spec.obs = terminal_observer();
	spec.rules.metric = GATE_METRIC_CPU;
	spec.opts.metric = GATE_METRIC_CPU;
	spec.opts.warmup = 0;
	spec.opts.fingerprint = false;
	spec.opts.heap = spec.opts.heap || b->heap;
	if (compare_schedule((size_t)(b->runs > 0 ? b->runs : sc->runs), false, &spec.opts.schedule))
		goto out;
	spec.build_base = spec.build_cand = b->build;
	if (!b->test)
		spec.test = NULL;
	ret = gate_judge(&spec, json, &trees, out_dir);
out:
	if (revs_pair_close(&trees))
		ret = ret ? ret : HL_EXIT_FAILURE;
	gate_spec_release(&spec);
	return ret;
}

static const struct config_scenario *find_scenario(const struct project *p, const char *name)
{
	const struct config *c = &p->cf;
	struct strbuf have = STRBUF_INIT;

	for (size_t i = 0; i < c->nr_scenarios; i++)
		if (!strcmp(c->scenarios[i].name, name))
			return &c->scenarios[i];
	for (size_t i = 0; i < c->nr_scenarios; i++)
		strbuf_addf(&have, "%s'%s'", i ? ", " : "", c->scenarios[i].name);
	if (c->nr_scenarios)
		error("unknown scenario '%s' in '%s': the configured ones are %s", name, p->conf_path, have.buf);
	else
		error("unknown scenario '%s': '%s' has no [scenario \"NAME\"] section", name, p->conf_path);
	strbuf_release(&have);
	return NULL;
}

/* The other run's timeline for --overlay, read before the run so a bad one costs nothing. */
static json_t *read_overlay(const char *other)
{
	char *path = xstrfmt("%s/timeline.json", other);
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr);

	if (!doc || !json_is_object(doc) || !json_is_array(json_object_get(doc, "points"))) {
		error("cannot read the overlay '%s': %s", path, doc ? "not a timeline.json" : jerr.text);
		json_decref(doc);
		doc = NULL;
	}
	free(path);
	return doc;
}

/* graph.html again, with the other run laid over it. */
static int overlay_graph(const struct scenario_result *r, const char *name, json_t *theirs, const char *other)
{
	char *mine = xstrfmt("%s/timeline.json", r->dir), *out;
	struct strbuf sb = STRBUF_INIT;
	json_error_t jerr;
	json_t *ours = json_load_file(mine, 0, &jerr);
	int ret = -1;

	if (!ours) {
		error("cannot read '%s': %s", mine, jerr.text);
		goto out;
	}
	scenario_graph_html(name, ours, theirs, short_path(other), &sb);
	out = xstrfmt("%s/graph.html", r->dir);
	ret = write_file_atomic(out, sb.buf, sb.len);
	free(out);
out:
	json_decref(ours);
	strbuf_release(&sb);
	free(mine);
	return ret;
}

int cmd_scenario(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "overlay", required_argument, NULL, OPT_OVERLAY },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "json", no_argument, NULL, 'j' },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "cand", required_argument, NULL, OPT_CAND },
		{ "runs", required_argument, NULL, OPT_RUNS },
		{ "no-build", no_argument, NULL, OPT_NO_BUILD },
		{ "no-test", no_argument, NULL, OPT_NO_TEST },
		{ "heap", no_argument, NULL, OPT_HEAP },
		{ NULL, 0, NULL, 0 },
	};
	struct builds b = { .runs = -1, .build = true, .test = true };
	struct project p = PROJECT_INIT;
	struct scenario_result r;
	struct scenario_spec spec = { 0 };
	const char *conf_file = NULL, *out_dir = NULL, *overlay = NULL;
	char *dir = NULL;
	json_t *theirs = NULL;
	bool json = false;
	int c, ret = HL_EXIT_FAILURE, run;

	scenario_result_init(&r);
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf_file = optarg;
			break;
		case 'o':
			out_dir = optarg;
			break;
		case OPT_OVERLAY:
			overlay = optarg;
			break;
		case OPT_PROFILE:
			if (strcmp(optarg, "cpu")) {
				ret = usage_error("scenario", "unknown profile '%s': expected cpu", optarg);
				goto out;
			}
			spec.profile_cpu = true;
			break;
		case 'j':
			json = true;
			break;
		case OPT_BASE:
			b.base = optarg;
			break;
		case OPT_CAND:
			b.cand = optarg;
			break;
		case OPT_RUNS:
			if ((b.runs = parse_count("--runs", optarg, 1, STATS_MAX_PAIRS)) < 0)
				goto out_usage;
			break;
		case OPT_NO_BUILD:
			b.build = false;
			break;
		case OPT_HEAP:
			b.heap = true;
			break;
		case OPT_NO_TEST:
			b.test = false;
			break;
		default:
			ret = usage_error("scenario", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (argc - optind != 1) {
		ret = usage_error("scenario", "expected the name of one scenario");
		goto out;
	}
	if (!b.base != !b.cand) {
		ret = usage_error("scenario", "--base and --cand go together");
		goto out;
	}
	if (b.base && overlay) {
		ret = usage_error("scenario", "--overlay is for one run, not with --base and --cand");
		goto out;
	}
	if (project_open(&p, conf_file, 0) || !(spec.conf = find_scenario(&p, argv[optind])))
		goto out;
	if (overlay && !(theirs = read_overlay(overlay)))
		goto out;
	if (out_dir)
		dir = xstrdup(out_dir);
	else if (project_scenario_dir(&p, spec.conf->name, b.base ? "compare" : NULL, &dir))
		goto out;
	if (b.base) {
		ret = compare_builds(&p, spec.conf, &b, dir, json);
		goto out;
	}
	spec.dir = p.dir;
	spec.out_dir = dir;
	spec.heap = b.heap || p.cf.heap;
	spec.observer = terminal_observer();
	cancel_on_interrupt(true);
	run = scenario_run(&spec, &r);
	terminal_done();
	cancel_on_interrupt(false);
	if (theirs && r.dir && overlay_graph(&r, spec.conf->name, theirs, overlay))
		run = -1;
	if (json) {
		json_t *doc = scenario_result_to_json(&r, spec.conf->name);

		print_json(doc);
	} else {
		struct strbuf sb = STRBUF_INIT;

		scenario_result_format_text(&r, spec.conf->name, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	ret = run ? (r.end == SCENARIO_INTERRUPTED ? 130 : HL_EXIT_FAILURE) : HL_EXIT_OK;
	goto out;
out_usage:
	ret = HL_EXIT_USAGE;
out:
	scenario_result_release(&r);
	project_release(&p);
	json_decref(theirs);
	free(dir);
	return ret;
}
