/*
 * cmd-bench.c: `hotloop bench [-n N] [--metric M] [--json] -- CMD`: measure
 * one command with lib/bench.c and print each run, a summary of each
 * metric and the warnings, or the JSON of docs/bench.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench.h"
#include "builtin.h"
#include "cli.h"
#include "runner.h"
#include "strbuf.h"

const char usage_bench[] =
"usage: hotloop bench [-n N] [--warmup W] [--metric cpu|wall|instructions]\n"
"                     [--timeout SECS] [--env NAME=VALUE]... [--pin CPU[,CPU...]]\n"
"                     [--max-wait SECS] [--heap] [--json] -- CMD [ARGS...]\n"
"\n"
"Run CMD W times to warm up (discarded) and N times measured, each from a\n"
"small launcher with a fixed environment (PATH, HOME, LANG=C and --env),\n"
"after waiting for the machine to be quiet. Print each run and the median,\n"
"MAD, min, max and CV of the chosen metric, with wall, CPU and peak RSS.\n"
"\n"
"    -n, --runs N          measured runs (default 10)\n"
"    -w, --warmup W        warm-up runs, discarded (default 1)\n"
"    -m, --metric M        cpu (user+sys, default), wall, or instructions\n"
"                          (callgrind under setarch -R: slow, deterministic)\n"
"    -t, --timeout SECS    kill a run's process group after SECS\n"
"    -e, --env NAME=VALUE  add a variable to the runs' environment\n"
"        --pin CPUS        run on these CPUs only (e.g. 1 or 0,1)\n"
"        --max-wait SECS   wait at most SECS for a quiet machine (default 5)\n"
"        --heap            measure each run's heap (libhotloop-heap.so preloaded,\n"
"                          counting only): metrics heap-peak, allocs, alloc-bytes\n"
"        --json            one JSON document (keys in docs/bench.md)\n"
"\n"
"Exit status: 0 when every run exited 0, 1 when a run failed, crashed or\n"
"timed out (measuring stops there), 127 when CMD is not found, 126 when it\n"
"cannot be run.\n";


static void print_run(const char *label, size_t i, const struct run_result *r, double timeout)
{
	char *why = bench_failure(r, timeout);

	printf("%-7s %2zu: wall %.3f s  cpu %.3f s (user %.3f, sys %.3f)  rss %ld KiB",
	       label, i + 1, (double)r->wall_ns / 1e9, (double)(r->user_ns + r->sys_ns) / 1e9,
	       (double)r->user_ns / 1e9, (double)r->sys_ns / 1e9, r->max_rss_kib);
	if (r->instructions >= 0)
		printf("  instructions %lld", (long long)r->instructions);
	printf("  exit %d%s%s\n", r->exit_status, why ? ": " : "", why ? why : "");
	for (size_t k = 0; k < r->nr_metrics; k++)
		printf("        metric %s = %.15g\n", r->metrics[k].name, r->metrics[k].value);
	free(why);
}

static void print_summary_line(const char *name, const struct stats_summary *s, const char *unit,
			       int digits)
{
	printf("%-12s median %.*f%s  MAD %.*f%s  min %.*f%s  max %.*f%s  CV %.1f%%\n", name,
	       digits, s->median, unit, digits, s->mad, unit, digits, s->min, unit,
	       digits, s->max, unit, 100 * s->cv);
}

/* Each printed or heap metric: median, MAD, min, max, CV over the runs that have it. */
static void print_metric_summaries(const struct bench_result *b)
{
	const char **names;
	size_t n = bench_metric_names(b, &names);

	for (size_t i = 0; i < n; i++) {
		struct stats_summary s;

		bench_metric_summary(b, names[i], &s);
		printf("%-12s median %.15g  MAD %.15g  min %.15g  max %.15g  CV %.1f%%\n", names[i], s.median,
		       s.mad, s.min, s.max, 100 * s.cv);
	}
	free(names);
}

static void print_text(const struct bench_result *b)
{
	struct stats_summary s;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < b->nr_warm; i++)
		print_run("warm-up", i, &b->warm[i], b->timeout);
	for (size_t i = 0; i < b->nr_runs; i++)
		print_run("run", i, &b->runs[i], b->timeout);
	if (b->nr_runs) {
		printf("\n%zu run%s%s\n", b->nr_runs, b->nr_runs == 1 ? "" : "s",
		       b->complete ? "" : " (incomplete)");
		if (b->metric == GATE_METRIC_INSTRUCTIONS) {
			bench_summary(b, GATE_METRIC_INSTRUCTIONS, &s);
			print_summary_line("instructions", &s, "", 0);
		}
		bench_summary(b, GATE_METRIC_CPU, &s);
		print_summary_line("cpu", &s, " s", 3);
		bench_summary(b, GATE_METRIC_WALL, &s);
		print_summary_line("wall", &s, " s", 3);
		bench_rss_summary(b, &s);
		printf("%-12s median %.0f KiB  max %.0f KiB\n", "peak rss", s.median, s.max);
		print_metric_summaries(b);
	}
	strbuf_reset(&sb);
	quiesce_describe(&b->machine, &sb);
	printf("machine      %s%s\n", sb.buf, b->machine.quiet ? " (quiet)" : "");
	strbuf_release(&sb);
	for (size_t i = 0; i < b->nr_warnings; i++)
		printf("warning: %s\n", b->warnings[i]);
}

int cmd_bench(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		RUN_OPTIONS,
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_spec spec = { .runs = 10, .warmup = 1, .quiesce = QUIESCE_OPTS_INIT };
	struct bench_result b = { 0 };
	struct strbuf cmd = STRBUF_INIT, shell = STRBUF_INIT;
	struct run_options ro = { 0 };
	int c, ret = HL_EXIT_FAILURE;
	bool json = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:w:m:t:e:", opts, NULL)) != -1) {
		if ((ret = run_options_parse(&ro, "bench", c, optarg)) <= 0) {
			if (ret)
				goto out_free;
			continue;
		}
		ret = HL_EXIT_FAILURE;
		switch (c) {
		case 'n':
			if ((spec.runs = parse_count("--runs", optarg, 1, 100000)) < 0)
				goto out_usage;
			break;
		case 'w':
			if ((spec.warmup = parse_count("--warmup", optarg, 0, 100000)) < 0)
				goto out_usage;
			break;
		case 'j':
			json = true;
			break;
		default:
			ret = usage_error("bench", "unknown option '%s'", argv[optind - 1]);
			goto out_free;
		}
	}
	if (optind >= argc) {
		ret = usage_error("bench", "no command to measure: hotloop bench [options] -- CMD [ARGS...]");
		goto out_free;
	}
	if ((ret = runner_check_program(argv[optind])))
		goto out_free;
	runner_quote_argv(&cmd, (const char *const *)argv + optind, (size_t)(argc - optind));
	/* exec: the shell steps aside, so a run killed by a signal reports it */
	strbuf_addf(&shell, "exec %s", cmd.buf);
	spec.command = shell.buf;
	spec.metric = ro.metric;
	spec.timeout = ro.timeout;
	if (ro.max_wait_set)
		spec.quiesce.max_wait = ro.max_wait;
	spec.env = ro.env;
	spec.heap = ro.heap;
	spec.cpus = ro.cpus;
	spec.nr_cpus = ro.nr_cpus;
	spec.obs = terminal_observer();
	cancel_on_interrupt(true);
	ret = bench_run(&spec, &b);
	terminal_done();
	cancel_on_interrupt(false);
	if (ret) {
		ret = HL_EXIT_FAILURE;
		goto out_free;
	}
	if (json)
		print_json(bench_to_json(&b, cmd.buf));
	else
		print_text(&b);
	for (size_t i = 0; i < b.nr_warm + b.nr_runs; i++) {
		const struct run_result *r = i < b.nr_warm ? &b.warm[i] : &b.runs[i - b.nr_warm];
		char *why = bench_failure(r, b.timeout);

		if (why) {
			/* under --json the document already says it: no second one */
			char *msg = xstrfmt("%s %zu of '%s': %s", i < b.nr_warm ? "warm-up" : "run",
					    i < b.nr_warm ? i + 1 : i - b.nr_warm + 1, cmd.buf, why);
			if (json)
				warning("%s", msg);
			else
				error("%s", msg);
			free(msg);
			free(why);
			ret = HL_EXIT_FAILURE;
		}
	}
	if (b.interrupted && ret == HL_EXIT_OK) {
		if (json)
			warning("interrupted after %zu of %ld runs", b.nr_runs, spec.runs);
		else
			error("interrupted after %zu of %ld runs", b.nr_runs, spec.runs);
		ret = HL_EXIT_FAILURE;
	}
	goto out_free;
out_usage:
	ret = HL_EXIT_USAGE;
out_free:
	bench_result_release(&b);
	run_options_release(&ro);
	strbuf_release(&cmd);
	strbuf_release(&shell);
	return ret;
}
