/*
 * bench.h: measuring one command, as `hotloop bench` does: a quiesce check,
 * warm-up runs (discarded), then N runs, each from the runner's launcher
 * (runner.h), stopping at the first that fails; then a summary of each
 * metric and warnings about noise, a slow first run and output that
 * changes between runs. JSON keys are in docs/bench.md.
 * A struct bench_result owns its runs and warnings until
 * bench_result_release(); the spec stays the caller's.
 */
#ifndef HOTLOOP_BENCH_H
#define HOTLOOP_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "quiesce.h"
#include "rules.h"
#include "runner.h"
#include "stats.h"

struct observer;
struct json_t;

struct bench_spec {
	const char *command;		/* a /bin/sh line */
	const char *dir;		/* where it runs; NULL: here */
	long runs, warmup;
	enum gate_metric metric;
	double timeout;			/* seconds per run; 0: none */
	const char *const *env;		/* extra NAME=VALUE, NULL-terminated; may be NULL */
	const int *cpus;		/* pin every run to these CPUs ... */
	size_t nr_cpus;			/* ... 0: don't pin */
	bool heap;			/* add each run's heap-peak, allocs, alloc-bytes */
	struct quiesce_opts quiesce;
	const struct observer *obs;	/* EV_PROGRESS per run; may be NULL */
};

struct bench_result {
	enum gate_metric metric;
	double timeout;
	struct run_result *warm, *runs;
	size_t nr_warm, nr_runs;
	struct quiesce_state machine;
	char **warnings;
	size_t nr_warnings, alloc_warnings;
	bool complete;			/* every run planned ran and none failed */
	bool interrupted;		/* hl_cancel() stopped it */
};

/*
 * Measure. 0 with the runs taken (a failed run stops there; the result
 * says so), or -1 with an error when a run could not be started or
 * instructions cannot be counted here.
 */
int bench_run(const struct bench_spec *s, struct bench_result *r);
void bench_result_release(struct bench_result *r);

/* Did the run fail: a non-zero exit, a signal, a timeout, an interruption? */
bool bench_run_failed(const struct run_result *r);
/* Why it failed, or NULL when it did not (caller frees). */
char *bench_failure(const struct run_result *r, double timeout);

/* The summary of the measured runs' metric m (cpu, wall, instructions), or of their peak RSS. */
void bench_summary(const struct bench_result *r, enum gate_metric m, struct stats_summary *s);
void bench_rss_summary(const struct bench_result *r, struct stats_summary *s);
/*
 * The names of the metrics the measured runs printed or measured
 * (HOTLOOP_METRIC, heap), in the order first seen, into *names (the
 * caller frees the array, not the names, which point into r); and the
 * summary of one over the runs that have it.
 */
size_t bench_metric_names(const struct bench_result *r, const char ***names);
void bench_metric_summary(const struct bench_result *r, const char *name, struct stats_summary *s);

/* The document of docs/bench.md; 'command' as the user gave it. */
struct json_t *bench_to_json(const struct bench_result *r, const char *command);

#endif
