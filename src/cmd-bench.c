/*
 * cmd-bench.c: `hotloop bench [-n N] [--metric M] [--json] -- CMD`: measure
 * one command: warm-up runs (discarded), then N runs through lib/runner.c
 * after a quiesce check (lib/quiesce.c); per-run lines, a summary of the
 * chosen metric (lib/summary.c) and warnings about noise. JSON keys are in
 * docs/bench.md.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "builtin.h"
#include "doctor.h"
#include "quiesce.h"
#include "runner.h"
#include "strbuf.h"
#include "rules.h"
#include "stats.h"

const char usage_bench[] =
"usage: hotloop bench [-n N] [--warmup W] [--metric cpu|wall|instructions]\n"
"                     [--timeout SECS] [--env NAME=VALUE]... [--pin CPU[,CPU...]]\n"
"                     [--max-wait SECS] [--json] -- CMD [ARGS...]\n"
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
"        --json            one JSON document (keys in docs/bench.md)\n"
"\n"
"Exit status: 0 when every run exited 0, 1 when a run failed, crashed or\n"
"timed out (measuring stops there), 127 when CMD is not found, 126 when it\n"
"cannot be run.\n";


static volatile sig_atomic_t interrupted;
static struct runner *active_runner;

static void on_interrupt(int sig)
{
	interrupted = 1;
	if (active_runner)
		runner_interrupt(active_runner);
}

static bool run_failed(const struct run_result *r)
{
	return r->exit_status || r->timed_out || r->interrupted;
}

static char *failure_reason(const struct run_result *r, double timeout)
{
	if (r->interrupted)
		return xstrdup("interrupted");
	if (r->timed_out)
		return xstrfmt("timed out after %g s (its process group was killed)", timeout);
	if (r->signal)
		return xstrfmt("killed by signal %d (%s)", r->signal, strsignal(r->signal));
	if (r->exit_status)
		return xstrfmt("exit status %d", r->exit_status);
	return NULL;
}

struct bench {
	enum gate_metric metric;
	double timeout;
	struct run_result *warm, *runs;
	size_t nr_warm, nr_runs;
	struct quiesce_state machine;
	char **warnings;
	size_t nr_warnings, alloc_warnings;
	bool complete;
};

static void add_warning(struct bench *b, char *msg)
{
	ALLOC_GROW(b->warnings, b->nr_warnings + 1, b->alloc_warnings);
	b->warnings[b->nr_warnings++] = msg;
}

static void summarize(const struct bench *b, enum gate_metric m, struct stats_summary *s)
{
	double *v = xcalloc(b->nr_runs, sizeof(*v));

	for (size_t i = 0; i < b->nr_runs; i++)
		v[i] = run_result_metric(&b->runs[i], m);
	if (stats_summarize(v, b->nr_runs, s))
		memset(s, 0, sizeof(*s));
	free(v);
}

static void summarize_rss(const struct bench *b, struct stats_summary *s)
{
	double *v = xcalloc(b->nr_runs, sizeof(*v));

	for (size_t i = 0; i < b->nr_runs; i++)
		v[i] = (double)b->runs[i].max_rss_kib;
	if (stats_summarize(v, b->nr_runs, s))
		memset(s, 0, sizeof(*s));
	free(v);
}

static void find_warnings(struct bench *b)
{
	struct stats_summary s;

	if (!b->machine.quiet)
		add_warning(b, xstrfmt("the machine was not quiet: %s (waited %.1f s)",
				       b->machine.reason, b->machine.waited));
	if (!b->nr_runs)
		return;
	summarize(b, b->metric, &s);
	if (b->nr_warm && !run_failed(&b->warm[0]) && s.median > 0 &&
	    run_result_metric(&b->warm[0], b->metric) > 1.5 * s.median)
		add_warning(b, xstrfmt("slow first run: the warm-up took %.1fx the median "
				       "(cold caches); it was discarded",
				       run_result_metric(&b->warm[0], b->metric) / s.median));
	if (b->nr_runs >= 3 && s.cv > 0.05)
		add_warning(b, xstrfmt("noisy: the %s CV is %.1f%% (above 5%%); "
				       "more runs or a quieter machine give a firmer number",
				       gate_metric_name(b->metric), 100 * s.cv));
	for (size_t i = 1; i < b->nr_runs; i++) {
		if (b->runs[i].stdout_hash != b->runs[0].stdout_hash) {
			add_warning(b, xstrfmt("the output differs between runs 1 and %zu", i + 1));
			break;
		}
	}
}

/* ---- text ------------------------------------------------------------- */

static void print_run(const char *label, size_t i, const struct run_result *r, double timeout)
{
	char *why = failure_reason(r, timeout);

	printf("%-7s %2zu: wall %.3f s  cpu %.3f s (user %.3f, sys %.3f)  rss %ld KiB",
	       label, i + 1, (double)r->wall_ns / 1e9, (double)(r->user_ns + r->sys_ns) / 1e9,
	       (double)r->user_ns / 1e9, (double)r->sys_ns / 1e9, r->max_rss_kib);
	if (r->instructions >= 0)
		printf("  instructions %lld", (long long)r->instructions);
	printf("  exit %d%s%s\n", r->exit_status, why ? ": " : "", why ? why : "");
	for (size_t k = 0; k < r->nr_metrics; k++)
		printf("        metric %s = %g\n", r->metrics[k].name, r->metrics[k].value);
	free(why);
}

static void print_summary_line(const char *name, const struct stats_summary *s, const char *unit,
			       int digits)
{
	printf("%-12s median %.*f%s  MAD %.*f%s  min %.*f%s  max %.*f%s  CV %.1f%%\n", name,
	       digits, s->median, unit, digits, s->mad, unit, digits, s->min, unit,
	       digits, s->max, unit, 100 * s->cv);
}

static void print_text(const struct bench *b)
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
			summarize(b, GATE_METRIC_INSTRUCTIONS, &s);
			print_summary_line("instructions", &s, "", 0);
		}
		summarize(b, GATE_METRIC_CPU, &s);
		print_summary_line("cpu", &s, " s", 3);
		summarize(b, GATE_METRIC_WALL, &s);
		print_summary_line("wall", &s, " s", 3);
		summarize_rss(b, &s);
		printf("%-12s median %.0f KiB  max %.0f KiB\n", "peak rss", s.median, s.max);
	}
	strbuf_reset(&sb);
	quiesce_describe(&b->machine, &sb);
	printf("machine      %s%s\n", sb.buf, b->machine.quiet ? " (quiet)" : "");
	strbuf_release(&sb);
	for (size_t i = 0; i < b->nr_warnings; i++)
		printf("warning: %s\n", b->warnings[i]);
}

/* ---- JSON ------------------------------------------------------------- */

static json_t *run_json(size_t i, const struct run_result *r, double timeout)
{
	json_t *o = json_object(), *fps = json_array(), *metrics = json_object();
	char hash[17], *why = failure_reason(r, timeout);

	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)r->stdout_hash);
	json_object_set_new(o, "index", json_integer((json_int_t)i + 1));
	json_object_set_new(o, "wall", json_real((double)r->wall_ns / 1e9));
	json_object_set_new(o, "user", json_real((double)r->user_ns / 1e9));
	json_object_set_new(o, "sys", json_real((double)r->sys_ns / 1e9));
	json_object_set_new(o, "cpu", json_real((double)(r->user_ns + r->sys_ns) / 1e9));
	json_object_set_new(o, "max_rss_kib", json_integer(r->max_rss_kib));
	json_object_set_new(o, "exit_status", json_integer(r->exit_status));
	json_object_set_new(o, "signal", r->signal ? json_integer(r->signal) : json_null());
	json_object_set_new(o, "timed_out", json_boolean(r->timed_out));
	json_object_set_new(o, "interrupted", json_boolean(r->interrupted));
	json_object_set_new(o, "failure", why ? json_string(why) : json_null());
	json_object_set_new(o, "stdout_hash", json_string(hash));
	json_object_set_new(o, "stdout_bytes", json_integer((json_int_t)r->stdout_bytes));
	for (size_t k = 0; k < r->nr_fingerprints; k++)
		json_array_append_new(fps, json_string(r->fingerprints[k]));
	json_object_set_new(o, "fingerprints", fps);
	for (size_t k = 0; k < r->nr_metrics; k++)
		json_object_set_new(metrics, r->metrics[k].name, json_real(r->metrics[k].value));
	json_object_set_new(o, "metrics", metrics);
	json_object_set_new(o, "instructions",
			    r->instructions >= 0 ? json_integer(r->instructions) : json_null());
	free(why);
	return o;
}

static json_t *summary_json(const struct stats_summary *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "median", json_real(s->median));
	json_object_set_new(o, "mad", json_real(s->mad));
	json_object_set_new(o, "min", json_real(s->min));
	json_object_set_new(o, "max", json_real(s->max));
	json_object_set_new(o, "mean", json_real(s->mean));
	json_object_set_new(o, "cv", json_real(s->cv));
	return o;
}

static json_t *bench_json(const struct bench *b, const char *command)
{
	json_t *doc = json_object(), *runs = json_array(), *warm = json_array();
	json_t *sum = json_object(), *w = json_array(), *m;
	struct stats_summary s;

	json_object_set_new(doc, "command", json_string(command));
	json_object_set_new(doc, "metric", json_string(gate_metric_name(b->metric)));
	json_object_set_new(doc, "complete", json_boolean(b->complete));
	for (size_t i = 0; i < b->nr_warm; i++)
		json_array_append_new(warm, run_json(i, &b->warm[i], b->timeout));
	json_object_set_new(doc, "warmup_runs", warm);
	for (size_t i = 0; i < b->nr_runs; i++)
		json_array_append_new(runs, run_json(i, &b->runs[i], b->timeout));
	json_object_set_new(doc, "runs", runs);
	summarize(b, b->metric, &s);
	json_object_set_new(sum, "metric", summary_json(&s));
	summarize(b, GATE_METRIC_CPU, &s);
	json_object_set_new(sum, "cpu", summary_json(&s));
	summarize(b, GATE_METRIC_WALL, &s);
	json_object_set_new(sum, "wall", summary_json(&s));
	summarize_rss(b, &s);
	json_object_set_new(sum, "max_rss_kib", summary_json(&s));
	json_object_set_new(sum, "peak_rss_kib", json_integer((json_int_t)s.max));
	json_object_set_new(doc, "summary", sum);
	m = quiesce_to_json(&b->machine);
	json_object_set_new(doc, "machine", m ? m : json_null());
	for (size_t i = 0; i < b->nr_warnings; i++)
		json_array_append_new(w, json_string(b->warnings[i]));
	json_object_set_new(doc, "warnings", w);
	return doc;
}

static int check_command(const char *name)
{
	char *path = NULL;
	int ret = doctor_resolve_command(name, &path);

	free(path);
	if (!ret)
		return 0;
	if (ret == -ENOENT) {
		error("%s: command not found", name);
		return HL_EXIT_NOT_FOUND;
	}
	error("%s: %s", name, strerror(-ret));
	return HL_EXIT_NOT_EXECUTABLE;
}

static int measure(struct bench *b, struct runner *rn, const struct run_spec *spec,
		   long warmup, long n, bool progress)
{
	uint64_t start = now_ns();
	long total = warmup + n;

	for (long i = 0; i < total && !interrupted; i++) {
		bool is_warm = i < warmup;
		struct run_result *r = is_warm ? &b->warm[b->nr_warm] : &b->runs[b->nr_runs];

		if (progress) {
			double per = i ? (double)(now_ns() - start) / 1e9 / (double)i : 0;
			fprintf(stderr, "\rbench: %s %ld/%ld, ETA %.0f s   ",
				is_warm ? "warm-up" : "run", i + 1, total, per * (double)(total - i));
		}
		run_result_init(r);
		if (runner_run(rn, spec, r)) {
			run_result_release(r);
			return -1;
		}
		if (is_warm)
			b->nr_warm++;
		else
			b->nr_runs++;
		if (run_failed(r))
			break;
	}
	if (progress)
		fprintf(stderr, "\r%40s\r", "");
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "metric", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "env", required_argument, NULL, 'e' },
		{ "pin", required_argument, NULL, 'P' },
		{ "max-wait", required_argument, NULL, 'W' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct quiesce_opts qopts = QUIESCE_OPTS_INIT;
	struct bench b = { 0 };
	struct runner rn = { -1, -1 };
	struct run_spec spec = { 0 };
	struct strbuf cmd = STRBUF_INIT, shell = STRBUF_INIT;
	struct sigaction sa = { 0 }, old_int, old_term;
	const char **env = NULL;
	size_t nr_env = 0, alloc_env = 0, nr_cpus = 0;
	int *cpus = NULL, c, idx, ret = HL_EXIT_FAILURE;
	long n = 10, warmup = 1;
	bool json = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:w:m:t:e:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if ((n = parse_count("--runs", optarg, 1, 100000)) < 0)
				goto out_usage;
			break;
		case 'w':
			if ((warmup = parse_count("--warmup", optarg, 0, 100000)) < 0)
				goto out_usage;
			break;
		case 'm':
			if ((idx = gate_metric_parse(optarg)) < 0) {
				ret = usage_error("bench", "unknown metric '%s': expected cpu, wall or instructions", optarg);
				goto out_free;
			}
			b.metric = (enum gate_metric)idx;
			break;
		case 't':
			if (parse_seconds("--timeout", optarg, &b.timeout))
				goto out_usage;
			break;
		case 'e':
			if (!strchr(optarg, '=') || *optarg == '=') {
				ret = usage_error("bench", "invalid value '%s' for --env: expected NAME=VALUE", optarg);
				goto out_free;
			}
			ALLOC_GROW(env, nr_env + 2, alloc_env);
			env[nr_env++] = optarg;
			env[nr_env] = NULL;
			break;
		case 'P':
			free(cpus);
			cpus = NULL;
			if (parse_cpu_list("--pin", optarg, &cpus, &nr_cpus))
				goto out_usage;
			break;
		case 'W':
			if (parse_seconds("--max-wait", optarg, &qopts.max_wait))
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
	if ((ret = check_command(argv[optind])))
		goto out_free;
	ret = HL_EXIT_FAILURE;
	if (b.metric == GATE_METRIC_INSTRUCTIONS && runner_instructions_unavailable()) {
		error("cannot measure instructions: %s", runner_instructions_unavailable());
		goto out_free;
	}
	runner_quote_argv(&cmd, (const char *const *)argv + optind, (size_t)(argc - optind));
	/* exec: the shell steps aside, so a run killed by a signal reports it */
	strbuf_addf(&shell, "exec %s", cmd.buf);
	spec.command = shell.buf;
	spec.env = env;
	spec.timeout = b.timeout;
	spec.cpus = cpus;
	spec.nr_cpus = nr_cpus;
	qopts.cpus = cpus;
	qopts.nr_cpus = nr_cpus;
	spec.instructions = b.metric == GATE_METRIC_INSTRUCTIONS;

	if (runner_start(&rn))
		goto out_free;
	active_runner = &rn;
	interrupted = 0;
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	if (quiesce_wait(&qopts, &b.machine))
		goto out_stop;
	b.warm = xcalloc((size_t)warmup + 1, sizeof(*b.warm));
	b.runs = xcalloc((size_t)n, sizeof(*b.runs));
	if (measure(&b, &rn, &spec, warmup, n, isatty(2)))
		goto out_stop;
	b.complete = b.nr_runs == (size_t)n && !interrupted;
	for (size_t i = 0; i < b.nr_warm; i++)
		if (run_failed(&b.warm[i]))
			b.complete = false;
	if (b.complete || b.nr_runs) {
		for (size_t i = 0; b.complete && i < b.nr_runs; i++)
			if (run_failed(&b.runs[i]))
				b.complete = false;
	}
	find_warnings(&b);
	if (json)
		print_json(bench_json(&b, cmd.buf));
	else
		print_text(&b);
	ret = HL_EXIT_OK;
	for (size_t i = 0; i < b.nr_warm + b.nr_runs; i++) {
		const struct run_result *r = i < b.nr_warm ? &b.warm[i] : &b.runs[i - b.nr_warm];
		char *why = failure_reason(r, b.timeout);

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
	if (interrupted && ret == HL_EXIT_OK) {
		if (json)
			warning("interrupted after %zu of %ld runs", b.nr_runs, n);
		else
			error("interrupted after %zu of %ld runs", b.nr_runs, n);
		ret = HL_EXIT_FAILURE;
	}
out_stop:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	active_runner = NULL;
	runner_stop(&rn);
	goto out_free;
out_usage:
	ret = HL_EXIT_USAGE;
out_free:
	for (size_t i = 0; i < b.nr_warm; i++)
		run_result_release(&b.warm[i]);
	for (size_t i = 0; i < b.nr_runs; i++)
		run_result_release(&b.runs[i]);
	free(b.warm);
	free(b.runs);
	for (size_t i = 0; i < b.nr_warnings; i++)
		free(b.warnings[i]);
	free(b.warnings);
	free(env);
	free(cpus);
	strbuf_release(&cmd);
	strbuf_release(&shell);
	return ret;
}
