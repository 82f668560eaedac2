/*
 * cmd-compare.c: `hotloop compare [options] 'BASE CMD' 'CAND CMD'`, or
 * `--base REV --cand REV|DIR` for two builds of the project in hotloop.conf
 * (lib/revs.c): measure in alternating pairs (lib/compare.c) and print the
 * gate's verdict (lib/verdict.c) as text or as the JSON of docs/compare.md.
 * Exit 0 keep, 4 reject, 1 inconclusive or error, 130 interrupted.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "builtin.h"
#include "compare.h"
#include "config.h"
#include "doctor.h"
#include "gate.h"
#include "project.h"
#include "revs.h"
#include "runner.h"
#include "stats.h"
#include "strbuf.h"
#include "verdict.h"

const char usage_compare[] =
"usage: hotloop compare [--metric cpu|wall|instructions] [--min-improvement PCT]\n"
"                       [--guard-regression PCT] [--ram-budget SIZE] [--pairs N]\n"
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

/* "3", "3%", "0.5%" -> 0.03, 0.03, 0.005 */
static int parse_pct(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (*end == '%')
		end++;
	if (errno || end == arg || *end || !isfinite(v) || v < 0 || v >= 100)
		return error("invalid value '%s' for %s: expected a percentage from 0 to 100", arg, opt);
	*out = v / 100;
	return 0;
}

static int parse_looks(const char *arg, struct stats_schedule *s)
{
	const char *p = arg;

	s->nr_looks = 0;
	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 1 || v > STATS_MAX_PAIRS || (*end && *end != ',') ||
		    s->nr_looks == STATS_MAX_LOOKS)
			goto bad;
		s->looks[s->nr_looks++] = (size_t)v;
		p = *end ? end + 1 : end;
	}
	if (stats_schedule_check(s))
		goto bad;
	return 0;
bad:
	return error("invalid value '%s' for --looks: expected at most %d increasing pair "
		     "counts up to %d, like 12,24,36", arg, STATS_MAX_LOOKS, STATS_MAX_PAIRS);
}

/* NAME:higher:PCT or NAME:lower:PCT */
static int parse_metric_rule(const char *arg, struct gate_rules *r)
{
	const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	struct metric_rule *m;
	bool higher;
	double tol;

	if (!c1 || !c2 || c1 == arg)
		goto bad;
	if ((size_t)(c2 - c1 - 1) == 6 && !strncmp(c1 + 1, "higher", 6))
		higher = true;
	else if ((size_t)(c2 - c1 - 1) == 5 && !strncmp(c1 + 1, "lower", 5))
		higher = false;
	else
		goto bad;
	if (parse_pct("--metric-rule", c2 + 1, &tol))
		return -1;
	r->metrics = xrealloc(r->metrics, (r->nr_metrics + 1) * sizeof(*r->metrics));
	m = &r->metrics[r->nr_metrics++];
	m->name = xstrfmt("%.*s", (int)(c1 - arg), arg);
	m->higher_is_better = higher;
	m->tolerance = tol;
	return 0;
bad:
	return error("invalid value '%s' for --metric-rule: expected NAME:higher:PCT or NAME:lower:PCT", arg);
}

/* 0, or an exit status when the command's program cannot be run. */
static int resolve(const char *cmd, struct strbuf *line)
{
	bool simple;
	char *prog = runner_shell_program(cmd, &simple), *path = NULL;
	int ret = 0, r;

	/* exec: the shell steps aside, so a run killed by a signal reports it */
	strbuf_addf(line, "%s%s", simple ? "exec " : "", cmd);
	if (!prog)
		return 0;
	r = doctor_resolve_command(prog, &path);
	if (r == -ENOENT) {
		error("%s: command not found", prog);
		ret = HL_EXIT_NOT_FOUND;
	} else if (r) {
		error("%s: %s", prog, strerror(-r));
		ret = HL_EXIT_NOT_EXECUTABLE;
	}
	free(path);
	free(prog);
	return ret;
}

static void print_estimate(const char *role, const struct verdict_estimate *e, enum gate_metric m)
{
	if (!e->valid) {
		printf("%-9s '%s': no usable pairs\n", role, e->workload ? e->workload : "?");
		return;
	}
	if (e->exact)
		printf("%-9s '%s': %+.2f%% %s (exact, %zu runs per side)\n", role, e->workload,
		       e->change_pct, gate_metric_name(m), e->pairs);
	else
		printf("%-9s '%s': %+.2f%% %s (interval %+.2f%% to %+.2f%%), %zu pairs, noise %.2f%%\n",
		       role, e->workload, e->change_pct, gate_metric_name(m), e->ci_low_pct,
		       e->ci_high_pct, e->pairs, e->noise_pct);
}

static void print_text(const struct compare *c, const struct verdict *v)
{
	printf("verdict: %s%s\n", verdict_kind_name(v->kind),
	       c->interrupted ? " (interrupted: partial)" : "");
	print_estimate("primary", &v->primary, v->metric);
	for (size_t i = 0; i < v->nr_guards; i++)
		print_estimate("guard", &v->guards[i], v->metric);
	printf("memory:   peak RSS base %llu KiB, candidate %llu KiB",
	       (unsigned long long)v->memory.base_peak_rss_kb,
	       (unsigned long long)v->memory.cand_peak_rss_kb);
	if (v->memory.budget_kb)
		printf(", budget %llu KiB", (unsigned long long)v->memory.budget_kb);
	printf("\n");
	printf("schedule: %s after %zu look%s\n", stats_decision_name(c->decision),
	       c->looks_taken, c->looks_taken == 1 ? "" : "s");
	if (c->machine.probes) {
		struct strbuf sb = STRBUF_INIT;

		quiesce_describe(&c->machine, &sb);
		printf("machine:  %s%s\n", sb.buf, c->machine_quiet ? " (quiet)" : " (not quiet)");
		strbuf_release(&sb);
	} else {
		printf("machine:  not checked (nothing was measured)\n");
	}
	printf("reasons:\n");
	for (size_t i = 0; i < v->nr_reasons; i++)
		printf("  - %s\n", v->reasons[i]);
	if (!c->machine_quiet)
		printf("  - the machine was not quiet: %s\n", c->noisy);
}

static json_t *tree_json(const struct revs_tree *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "given", json_string(t->given));
	json_object_set_new(o, "commit", t->sha ? json_string(t->sha) : json_null());
	json_object_set_new(o, "dir", json_string(t->dir));
	return o;
}

/*
 * Run the gate and print its verdict; trees are the two builds when
 * compare runs on revisions. A candidate that does not build is an error
 * here (exit 1); a failed test is a reject on the test alone.
 */
static int judge(const struct gate_spec *spec, bool json, const struct revs_pair *trees)
{
	struct gate_result r;
	int ret;

	gate_result_init(&r);
	cancel_on_interrupt(true);
	ret = gate_run(spec, &r);
	terminal_done();
	cancel_on_interrupt(false);
	if (ret) {
		ret = ret < 0 ? HL_EXIT_FAILURE : ret;
		goto out;
	}
	if (r.stage == GATE_STAGE_BUILD) {
		error("%s%s", r.reasons[0], r.detail.buf);
		ret = r.interrupted ? 130 : HL_EXIT_FAILURE;
		goto out;
	}
	if (json) {
		json_t *doc = gate_result_to_json(&r);

		if (trees) {
			json_object_set_new(doc, "base", tree_json(&trees->base));
			json_object_set_new(doc, "candidate", tree_json(&trees->cand));
		}
		print_json(doc);
	} else {
		if (trees) {
			printf("base:      %s (%.12s)\n", trees->base.given, trees->base.sha ? trees->base.sha : "directory");
			if (trees->cand.sha)
				printf("candidate: %s (%.12s)\n", trees->cand.given, trees->cand.sha);
			else
				printf("candidate: %s (directory)\n", trees->cand.dir);
		}
		print_text(&r.compare, &r.v);
	}
	if (r.interrupted)
		ret = 130;
	else if (r.verdict == VERDICT_KEEP)
		ret = HL_EXIT_OK;
	else if (r.verdict == VERDICT_REJECT)
		ret = HL_EXIT_REJECT;
	else
		ret = HL_EXIT_FAILURE;
out:
	gate_result_release(&r);
	return ret;
}

/* What the command line set, to override hotloop.conf. */
enum {
	SET_METRIC = 1, SET_MIN = 2, SET_GUARD = 4, SET_RAM = 8, SET_TIMEOUT = 16, SET_NO_FP = 32,
	SET_NO_BUILD = 64, SET_NO_TEST = 128,
};

/* The config's rules with the command line's on top, into 'out'. */
static void merge_rules(const struct gate_rules *conf, const struct gate_rules *cli, unsigned set,
			struct gate_rules *out)
{
	*out = *conf;
	out->metrics = NULL;
	out->nr_metrics = 0;
	if (set & SET_METRIC)
		out->metric = cli->metric;
	if (set & SET_MIN)
		out->min_improvement = cli->min_improvement;
	if (set & SET_GUARD)
		out->guard_regression = cli->guard_regression;
	if (set & SET_RAM)
		out->ram_budget = cli->ram_budget;
	out->metrics = xcalloc(conf->nr_metrics + cli->nr_metrics + 1, sizeof(*out->metrics));
	for (size_t i = 0; i < conf->nr_metrics + cli->nr_metrics; i++) {
		const struct metric_rule *r = i < conf->nr_metrics ? &conf->metrics[i] :
					      &cli->metrics[i - conf->nr_metrics];
		struct metric_rule *dst = NULL;

		for (size_t j = 0; j < out->nr_metrics; j++)
			if (!strcmp(out->metrics[j].name, r->name))
				dst = &out->metrics[j];
		if (!dst) {
			dst = &out->metrics[out->nr_metrics++];
			dst->name = xstrdup(r->name);
		}
		dst->higher_is_better = r->higher_is_better;
		dst->tolerance = r->tolerance;
	}
}

static int compare_revs(const char *base_rev, const char *cand_arg, const char *conf_file,
			const struct compare_opts *o, const struct gate_rules *cli, unsigned set,
			bool json)
{
	struct gate_spec spec = GATE_SPEC_INIT;
	struct revs_pair trees = REVS_PAIR_INIT;
	struct project p;
	int ret = HL_EXIT_FAILURE;

	if (project_open(&p, conf_file, 0) || !project_workload(&p, NULL) ||
	    revs_pair_open(&trees, &p, base_rev, cand_arg) ||
	    gate_spec_from_project(&spec, &p, trees.base.dir, trees.cand.dir))
		goto out;
	spec.source = "compare";
	spec.obs = terminal_observer();
	merge_rules(&p.cf.rules, cli, set, &spec.rules);
	spec.opts = *o;
	spec.opts.fingerprint = (set & SET_NO_FP) ? false : p.cf.fingerprint;
	if (set & SET_NO_BUILD)
		spec.build_base = spec.build_cand = false;
	if (set & SET_NO_TEST)
		spec.test = NULL;
	if (set & SET_TIMEOUT)
		for (size_t i = 0; i < spec.nr_workloads; i++)
			spec.own_workloads[i].timeout = o->timeout;
	ret = judge(&spec, json, &trees);
out:
	if (revs_pair_close(&trees, &p))
		ret = ret ? ret : HL_EXIT_FAILURE;
	gate_rules_release(&spec.rules);
	gate_spec_release(&spec);
	project_release(&p);
	return ret;
}

enum {
	OPT_MIN_IMPROVEMENT = 256, OPT_GUARD, OPT_RAM, OPT_LOOKS, OPT_ORDER, OPT_RULE,
	OPT_MAX_WAIT, OPT_PIN, OPT_NO_FP, OPT_JSON, OPT_BASE, OPT_CAND, OPT_NO_BUILD, OPT_NO_TEST,
};

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "metric", required_argument, NULL, 'm' },
		{ "min-improvement", required_argument, NULL, OPT_MIN_IMPROVEMENT },
		{ "guard-regression", required_argument, NULL, OPT_GUARD },
		{ "ram-budget", required_argument, NULL, OPT_RAM },
		{ "pairs", required_argument, NULL, 'n' },
		{ "looks", required_argument, NULL, OPT_LOOKS },
		{ "warmup", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "metric-rule", required_argument, NULL, OPT_RULE },
		{ "env", required_argument, NULL, 'e' },
		{ "max-wait", required_argument, NULL, OPT_MAX_WAIT },
		{ "pin", required_argument, NULL, OPT_PIN },
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
	struct compare_workload_spec w = { "primary", NULL, NULL, true, NULL, NULL, 0 };
	struct quiesce_opts qdefault = QUIESCE_OPTS_INIT;
	struct strbuf base = STRBUF_INIT, cand = STRBUF_INIT;
	const char **env = NULL, *base_rev = NULL, *cand_arg = NULL, *conf_file = NULL;
	size_t nr_env = 0, alloc_env = 0, nr_cpus = 0;
	int *cpus = NULL;
	long pairs = 0, idx;
	bool json = false, have_looks = false;
	unsigned set = 0;
	int ch, ret = HL_EXIT_FAILURE;

	o.warmup = 1;
	o.fingerprint = true;
	o.quiesce = qdefault;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+m:n:w:t:e:f:", opts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if ((idx = gate_metric_parse(optarg)) < 0) {
				ret = usage_error("compare", "unknown metric '%s': expected cpu, wall or instructions", optarg);
				goto out_free;
			}
			rules.metric = (enum gate_metric)idx;
			set |= SET_METRIC;
			break;
		case OPT_MIN_IMPROVEMENT:
			if (parse_pct("--min-improvement", optarg, &rules.min_improvement))
				goto out_usage;
			set |= SET_MIN;
			break;
		case OPT_GUARD:
			if (parse_pct("--guard-regression", optarg, &rules.guard_regression))
				goto out_usage;
			set |= SET_GUARD;
			break;
		case OPT_RAM:
			if (config_parse_size(optarg, &rules.ram_budget)) {
				error("invalid value '%s' for --ram-budget: expected a size like 512M or 2G", optarg);
				goto out_usage;
			}
			set |= SET_RAM;
			break;
		case 'n':
			if ((pairs = parse_count("--pairs", optarg, 1, STATS_MAX_PAIRS)) < 0)
				goto out_usage;
			break;
		case OPT_LOOKS:
			o.schedule.confidence = STATS_DEFAULT_CONFIDENCE;
			if (parse_looks(optarg, &o.schedule))
				goto out_usage;
			have_looks = true;
			break;
		case 'w':
			if ((o.warmup = parse_count("--warmup", optarg, 0, 1000)) < 0)
				goto out_usage;
			break;
		case 't':
			if (parse_seconds("--timeout", optarg, &o.timeout))
				goto out_usage;
			set |= SET_TIMEOUT;
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
		case OPT_RULE:
			if (parse_metric_rule(optarg, &rules))
				goto out_usage;
			break;
		case 'e':
			if (!strchr(optarg, '=') || *optarg == '=') {
				ret = usage_error("compare", "invalid value '%s' for --env: expected NAME=VALUE", optarg);
				goto out_free;
			}
			ALLOC_GROW(env, nr_env + 2, alloc_env);
			env[nr_env++] = optarg;
			env[nr_env] = NULL;
			break;
		case OPT_MAX_WAIT:
			if (parse_seconds("--max-wait", optarg, &o.quiesce.max_wait))
				goto out_usage;
			break;
		case OPT_PIN:
			free(cpus);
			cpus = NULL;
			if (parse_cpu_list("--pin", optarg, &cpus, &nr_cpus))
				goto out_usage;
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
	if (have_looks && pairs && o.schedule.looks[o.schedule.nr_looks - 1] > (size_t)pairs) {
		ret = usage_error("compare", "the last look (%zu) is beyond --pairs %ld",
				  o.schedule.looks[o.schedule.nr_looks - 1], pairs);
		goto out_free;
	}
	if (have_looks && pairs && o.schedule.looks[o.schedule.nr_looks - 1] < (size_t)pairs) {
		if (o.schedule.nr_looks == STATS_MAX_LOOKS) {
			ret = usage_error("compare", "too many looks: at most %d with --pairs", STATS_MAX_LOOKS);
			goto out_free;
		}
		o.schedule.looks[o.schedule.nr_looks++] = (size_t)pairs;
	}
	if (!have_looks)
		compare_default_looks((size_t)pairs, &o.schedule);
	o.env = env;
	o.cpus = o.quiesce.cpus = cpus;
	o.nr_cpus = o.quiesce.nr_cpus = nr_cpus;
	if (base_rev) {
		ret = compare_revs(base_rev, cand_arg, conf_file, &o, &rules, set, json);
		goto out_free;
	}
	if ((ret = resolve(argv[optind], &base)) || (ret = resolve(argv[optind + 1], &cand)))
		goto out_free;
	w.base_cmd = base.buf;
	w.cand_cmd = cand.buf;
	{
		struct gate_spec spec = GATE_SPEC_INIT;

		spec.source = "compare";
		spec.obs = terminal_observer();
		spec.workloads = &w;
		spec.nr_workloads = 1;
		spec.rules = rules;
		spec.opts = o;
		ret = judge(&spec, json, NULL);
	}
	goto out_free;
out_usage:
	ret = HL_EXIT_USAGE;
out_free:
	gate_rules_release(&rules);
	strbuf_release(&base);
	strbuf_release(&cand);
	free(env);
	free(cpus);
	return ret;
}
