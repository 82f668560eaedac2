/*
 * cmd-compare.c: `hotloop compare [options] 'BASE CMD' 'CAND CMD'`, or
 * `--base REV --cand REV|DIR` for two builds of the project in hotloop.conf
 * (revs_pair_open()): the options, one gate_run() (lib/gate.c), and the
 * verdict as text or as the JSON of docs/compare.md. Exit 0 keep, 4
 * reject, 1 inconclusive or error, 130 interrupted.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "cli.h"
#include "gate.h"
#include "project.h"
#include "revs.h"
#include "runner.h"
#include "strbuf.h"

const char usage_compare[] =
"usage: hotloop compare [--metric cpu|wall|instructions] [--min-improvement PCT]\n"
"                       [--guard-regression PCT] [--ram-budget SIZE]\n"
"                       [--ram-budget-on rss|heap] [--heap] [--pairs N]\n"
"                       [--looks N,N...] [--warmup N] [--timeout SECS]\n"
"                       [--order abba|random] [--metric-rule NAME:higher|lower:PCT]...\n"
"                       [--env NAME=VALUE]... [--max-wait SECS] [--pin CPUS]\n"
"                       [--no-fingerprint]\n"
"                       [--json] 'BASE CMD' 'CAND CMD'\n"
"   or: hotloop compare [options] --base REV|DIR --cand REV|DIR [-f CONFIG]\n"
"                       [--no-build] [--no-test]\n"
"\n"
"Run both shell commands once (each must exit 0), warm up, then measure\n"
"them in alternating pairs until the sequential schedule decides, and say\n"
"whether the candidate is worth keeping: keep, reject or inconclusive, with\n"
"every reason. The candidate's output must match the baseline's (its\n"
"FINGERPRINT= lines when the baseline prints any, else all of stdout).\n"
"\n"
"With --base and --cand, check out each revision as a git worktree under\n"
".hotloop/worktrees (or use DIR as is for the candidate), run [project] build\n"
"in each, [gate] test in the candidate, and measure every [workload] of\n"
"hotloop.conf under its [improve] and [metric] rules; options override them.\n"
"\n"
"    -m, --metric M            cpu (user+sys, default), wall, or instructions\n"
"                              (callgrind: one run per side and a repeat)\n"
"        --min-improvement PCT the primary must improve this much (default 3%)\n"
"        --guard-regression PCT how much a guard workload may regress (default 2%)\n"
"        --ram-budget SIZE     the candidate's peak RSS limit (e.g. 512M, 2G)\n"
"        --ram-budget-on WHAT  rss (default) or heap: the budget limits the\n"
"                              candidate's heap-peak instead (implies --heap)\n"
"        --heap                measure each run's heap (libhotloop-heap.so\n"
"                              preloaded, counting only): metrics heap-peak,\n"
"                              allocs, alloc-bytes, for --metric-rule\n"
"    -n, --pairs N             pair budget (default 36); looks at 12, 24, 36\n"
"                              below it, then at N\n"
"        --looks N,N...        the looks (pair counts, increasing)\n"
"    -w, --warmup N            warm-up runs per side, discarded (default 1)\n"
"    -t, --timeout SECS        kill a run after SECS\n"
"        --order ORDER         abba (default: pair k runs the base first when k\n"
"                              is even) or random (a coin flip per pair)\n"
"        --metric-rule RULE    NAME:higher:PCT or NAME:lower:PCT: a HOTLOOP_METRIC\n"
"                              line that may move the wrong way by at most PCT\n"
"    -e, --env NAME=VALUE      add a variable to the runs' environment\n"
"        --max-wait SECS       wait at most SECS for a quiet machine (default 5)\n"
"        --pin CPUS            run every run on these CPUs (e.g. 1 or 2,3); the\n"
"                              quiet check then looks at those CPUs only\n"
"        --no-fingerprint      do not compare the outputs\n"
"        --json                the verdict as JSON (keys in docs/compare.md)\n"
"        --base REV|DIR        the baseline: a git revision of the project, or a\n"
"                              directory as is\n"
"        --cand REV|DIR        the candidate: a revision, or a directory as is\n"
"        --no-build            measure the trees as they are built now\n"
"        --no-test             do not run [gate] test in the candidate\n"
"    -f, --config FILE         hotloop.conf to use (default: found from here up)\n"
"\n"
"Exit status: 0 keep, 4 reject, 1 inconclusive or an error, 2 usage,\n"
"127 when a command is not found (nothing is measured), 130 interrupted.\n";

/* The shell line that runs cmd; 0, or an exit status when its program cannot run. */
static int resolve(const char *cmd, char **line)
{
	bool simple;
	char *prog = runner_shell_program(cmd, &simple);
	int ret = prog ? runner_check_program(prog) : 0;

	*line = runner_exec_line(cmd);
	free(prog);
	return ret;
}

/* What else the command line set, to override hotloop.conf (beside enum gate_rule_set). */
enum { SET_TIMEOUT = 1 << 8, SET_NO_FP = 1 << 9, SET_NO_BUILD = 1 << 10, SET_NO_TEST = 1 << 11,
       SET_SCHEDULE = 1 << 12 };

static int compare_revs(const char *base_rev, const char *cand_arg, const char *conf_file,
			const struct compare_opts *o, const struct gate_rules *cli, unsigned set,
			bool json)
{
	struct gate_spec spec = GATE_SPEC_INIT;
	struct gate_rules rules = GATE_RULES_DEFAULT;
	struct revs_pair trees = REVS_PAIR_INIT;
	struct project p;
	int ret = HL_EXIT_FAILURE;

	if (project_open(&p, conf_file, 0) || !project_workload(&p, NULL) ||
	    (p.in_git && project_find_git(&p)) || revs_pair_open(&trees, &p, base_rev, cand_arg) ||
	    gate_spec_from_project(&spec, &p, trees.base.dir, trees.cand.dir))
		goto out;
	spec.source = "compare";
	spec.obs = terminal_observer();
	gate_rules_override(&p.cf.rules, cli, set, &rules);
	spec.rules = rules;
	{
		/* a workload judged by a scenario brings its schedule (its runs), unless --pairs or --looks */
		struct stats_schedule from_project = spec.opts.schedule;
		bool scenario = false;

		for (size_t i = 0; i < spec.nr_workloads; i++)
			scenario |= spec.workloads[i].scenario != NULL;
		spec.opts = *o;
		if (scenario && !(set & SET_SCHEDULE))
			spec.opts.schedule = from_project;
	}
	spec.opts.fingerprint = (set & SET_NO_FP) ? false : p.cf.fingerprint;
	spec.opts.heap = o->heap || p.cf.heap;
	if (set & SET_NO_BUILD)
		spec.build_base = spec.build_cand = false;
	if (set & SET_NO_TEST)
		spec.test = NULL;
	if (set & SET_TIMEOUT)
		for (size_t i = 0; i < spec.nr_workloads; i++)
			spec.own_workloads[i].timeout = o->timeout;
	ret = gate_judge(&spec, json, &trees, NULL);
out:
	if (revs_pair_close(&trees))
		ret = ret ? ret : HL_EXIT_FAILURE;
	gate_rules_release(&rules);
	gate_spec_release(&spec);
	project_release(&p);
	return ret;
}

enum {
	OPT_LOOKS = 256, OPT_ORDER, OPT_NO_FP, OPT_JSON, OPT_BASE, OPT_CAND, OPT_NO_BUILD, OPT_NO_TEST,
};

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		RUN_OPTIONS,
		RULE_OPTIONS,
		{ "pairs", required_argument, NULL, 'n' },
		{ "looks", required_argument, NULL, OPT_LOOKS },
		{ "warmup", required_argument, NULL, 'w' },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "no-fingerprint", no_argument, NULL, OPT_NO_FP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "cand", required_argument, NULL, OPT_CAND },
		{ "no-build", no_argument, NULL, OPT_NO_BUILD },
		{ "no-test", no_argument, NULL, OPT_NO_TEST },
		{ "config", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct gate_rules rules = GATE_RULES_DEFAULT;
	struct compare_opts o = { 0 };
	struct compare_workload_spec w = { .name = "primary", .primary = true };
	struct quiesce_opts qdefault = QUIESCE_OPTS_INIT;
	char *base = NULL, *cand = NULL;
	struct run_options ro = { 0 };
	const char *base_rev = NULL, *cand_arg = NULL, *conf_file = NULL;
	long pairs = 0;
	bool json = false, have_looks = false;
	unsigned set = 0;
	int ch, ret = HL_EXIT_FAILURE;

	o.warmup = 1;
	o.fingerprint = true;
	o.quiesce = qdefault;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+m:n:w:t:e:f:", opts, NULL)) != -1) {
		if ((ret = run_options_parse(&ro, "compare", ch, optarg)) <= 0 ||
		    (ret = rule_options_parse(&rules, &set, ch, optarg)) <= 0) {
			if (ret)
				goto out_free;
			continue;
		}
		ret = HL_EXIT_FAILURE;
		switch (ch) {
		case 'n':
			if ((pairs = parse_count("--pairs", optarg, 1, STATS_MAX_PAIRS)) < 0)
				goto out_usage;
			set |= SET_SCHEDULE;
			break;
		case OPT_LOOKS:
			o.schedule.confidence = STATS_DEFAULT_CONFIDENCE;
			if (stats_parse_looks(optarg, &o.schedule))
				goto out_usage;
			have_looks = true;
			set |= SET_SCHEDULE;
			break;
		case 'w':
			if ((o.warmup = parse_count("--warmup", optarg, 0, 1000)) < 0)
				goto out_usage;
			break;
		case OPT_ORDER:
			if (!strcmp(optarg, "abba")) {
				o.order = COMPARE_ORDER_ABBA;
			} else if (!strcmp(optarg, "random")) {
				o.order = COMPARE_ORDER_RANDOM;
			} else {
				ret = usage_error("compare", "unknown order '%s': expected abba or random", optarg);
				goto out_free;
			}
			break;
		case OPT_NO_FP:
			o.fingerprint = false;
			set |= SET_NO_FP;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_BASE:
			base_rev = optarg;
			break;
		case OPT_CAND:
			cand_arg = optarg;
			break;
		case OPT_NO_BUILD:
			set |= SET_NO_BUILD;
			break;
		case OPT_NO_TEST:
			set |= SET_NO_TEST;
			break;
		case 'f':
			conf_file = optarg;
			break;
		default:
			ret = usage_error("compare", "unknown option '%s'", argv[optind - 1]);
			goto out_free;
		}
	}
	if (base_rev || cand_arg || conf_file) {
		if (!base_rev || !cand_arg || argc != optind) {
			ret = usage_error("compare", "expected --base REV|DIR --cand REV|DIR and no commands");
			goto out_free;
		}
	} else if (argc - optind != 2) {
		ret = usage_error("compare", "expected two commands: hotloop compare [options] 'BASE CMD' 'CAND CMD'");
		goto out_free;
	}
	if (compare_schedule((size_t)pairs, have_looks, &o.schedule)) {
		ret = usage_error("compare", "%s", last_error());
		goto out_free;
	}
	if (ro.metric_set) {
		rules.metric = ro.metric;
		set |= RULE_SET_METRIC;
	}
	if (ro.timeout_set) {
		o.timeout = ro.timeout;
		set |= SET_TIMEOUT;
	}
	if (ro.max_wait_set)
		o.quiesce.max_wait = ro.max_wait;
	o.env = ro.env;
	o.heap = ro.heap;
	o.cpus = o.quiesce.cpus = ro.cpus;
	o.nr_cpus = o.quiesce.nr_cpus = ro.nr_cpus;
	if (base_rev) {
		ret = compare_revs(base_rev, cand_arg, conf_file, &o, &rules, set, json);
		goto out_free;
	}
	if ((ret = resolve(argv[optind], &base)) || (ret = resolve(argv[optind + 1], &cand)))
		goto out_free;
	w.base_cmd = base;
	w.cand_cmd = cand;
	{
		struct gate_spec spec = GATE_SPEC_INIT;

		spec.source = "compare";
		spec.obs = terminal_observer();
		spec.workloads = &w;
		spec.nr_workloads = 1;
		spec.rules = rules;
		spec.opts = o;
		ret = gate_judge(&spec, json, NULL, NULL);
	}
	goto out_free;
out_usage:
	ret = HL_EXIT_USAGE;
out_free:
	gate_rules_release(&rules);
	free(base);
	free(cand);
	run_options_release(&ro);
	return ret;
}
