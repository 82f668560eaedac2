/*
 * compare.h: the gate's measuring engine. It runs a baseline and a
 * candidate command per workload in alternating pairs (ABBA or a coin flip
 * per pair) on a sequential schedule of looks, keeps how every run ended,
 * checks that the candidate's output matches the baseline's, and turns it
 * all into struct vd_measurements for verdict_decide(). The caller owns
 * the options and workloads; a struct compare owns every result it holds
 * until compare_release().
 */
#ifndef HOTLOOP_COMPARE_H
#define HOTLOOP_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "events.h"
#include "quiesce.h"
#include "rules.h"
#include "runner.h"
#include "stats.h"
#include "verdict.h"

struct compare_workload_spec {
	const char *name;
	const char *base_cmd;		/* /bin/sh -c command lines */
	const char *cand_cmd;
	bool primary;			/* at most one; none: the first */
	const char *base_dir, *cand_dir;	/* working directories; NULL: hotloop's */
	double timeout;			/* seconds per run; 0: compare_opts' */
	/*
	 * A service under load instead of a command: each run is a run of
	 * this scenario (scenario.h) in base_dir or cand_dir, its files under
	 * scenario_out/{base,cand}-N; the value is its judged phase's mean
	 * CPU. No check run and no warm-up: each run is long, and the first
	 * pair checks.
	 */
	const struct config_scenario *scenario;
	const char *scenario_out;
};

enum compare_order {
	COMPARE_ORDER_ABBA,		/* pair k: base first when k is even, candidate first when odd */
	COMPARE_ORDER_RANDOM,		/* a coin flip per pair */
};

struct compare_opts {
	enum gate_metric metric;
	double min_improvement;		/* fraction, for the sequential decision */
	long warmup;			/* discarded runs per side and workload before the pairs */
	double timeout;			/* seconds per run; 0: none */
	struct stats_schedule schedule;	/* looks; the last one is the budget */
	enum compare_order order;
	uint64_t seed;			/* for COMPARE_ORDER_RANDOM */
	bool fingerprint;		/* compare stdout (or FINGERPRINT= values) with the base's */
	struct quiesce_opts quiesce;	/* give it the same CPUs as below */
	const int *cpus;		/* pin every run to these CPUs ... */
	size_t nr_cpus;			/* ... 0: don't pin */
	const char *const *env;		/* extra NAME=VALUE for every run, NULL-terminated; may be NULL */
	bool heap;			/* measure every command run's heap (runner.h's run_spec.heap) */
	/* EV_PROGRESS before each run, EV_PAIR after each pair (events.h); may be NULL */
	const struct observer *obs;
};

/* One run as kept: how it ended and what it printed that matters. */
struct compare_run {
	struct vd_run vd;
	double value;			/* the metric of compare_opts */
	bool warmup;			/* warm-up or the first check run: not in a pair */
	long pair;			/* the pair it belongs to, -1 for a warm-up */
	int position;			/* 0: ran first in its pair, 1: second */
	double wall_s, user_s, sys_s;
	int64_t instructions;		/* -1 when not counted */
	int exit_status, signal;
	struct run_metric *metrics;	/* HOTLOOP_METRIC values (names owned) */
	size_t nr_metrics;
};

struct compare_side {
	struct compare_run *runs;
	size_t nr_runs, alloc_runs;
	struct vd_run *vd;		/* built by compare_measurements() */
};

struct compare_result {
	const struct compare_workload_spec *spec;
	struct compare_side base, cand;
	double *base_values, *cand_values;	/* the metric of each pair */
	size_t nr_pairs, alloc_pairs;
	/* the reference output: the base's first run */
	bool have_reference;
	uint64_t ref_hash;
	char **ref_fingerprints;
	size_t nr_ref_fingerprints;
	enum vd_fingerprint fingerprint;
	/* metric values gathered for the verdict */
	struct vd_metric_values *metrics;
	size_t nr_metrics, alloc_metrics;
};

struct compare {
	const struct compare_opts *opts;
	struct compare_result *results;
	size_t nr_results;
	size_t primary;			/* index into results */
	enum stats_decision decision;	/* of the last look taken */
	size_t looks_taken;
	bool checked;			/* every check run exited 0 */
	bool interrupted;		/* hl_cancel() stopped it */
	bool failed_run;		/* a paired run failed: measuring stopped there */
	struct quiesce_state machine;	/* the last quiesce check */
	bool machine_quiet;		/* every quiesce check found the machine quiet */
	char noisy[128];		/* the last reason a check found it not quiet */
	double confidence;		/* per-look level used for the verdict */
	/* for compare_measurements() */
	struct vd_workload *vd_workloads;
};

void compare_init(struct compare *c, const struct compare_opts *opts,
		  const struct compare_workload_spec *w, size_t nr);
void compare_release(struct compare *c);

/*
 * Run everything: one check run per side and workload (a run that does
 * not exit 0 stops there: the verdict rejects with its reason), warm-ups,
 * then pairs up to each look until stats_sequential_decide() decides or
 * the budget runs out, or hl_cancel() stops it at the current run. For instructions, one run per side plus a
 * confirming repeat. 0 when the measurements are ready for the verdict
 * (also after a failed run or an interruption); -1 with an error when a
 * run could not be started; HL_EXIT_NOT_FOUND when a check run says the
 * shell did not find the command. The baseline's runs go to runner
 * 'base', the candidate's to 'cand' (NULL: 'base' too), so each side can
 * be in a sandbox of its own.
 */
int compare_run(struct compare *c, struct runner *base, struct runner *cand);

/*
 * The measurements for verdict_decide(), pointing into c (valid until the
 * next compare_run() or compare_release()).
 */
void compare_measurements(struct compare *c, struct vd_measurements *m);

/* The order of pair k: true when the base runs first. */
bool compare_base_first(enum compare_order order, size_t k, uint64_t *rng);

/*
 * The looks for a budget of 'pairs' (0: the default 12, 24, 36): the
 * default looks below the budget, then the budget. -1 when pairs is over
 * STATS_MAX_PAIRS.
 */
int compare_default_looks(size_t pairs, struct stats_schedule *s);

/*
 * The schedule of --pairs N (0: none given) and --looks (in s, when
 * have_looks): the looks given, then N when it is past the last; or the
 * defaults for N. -1 with an error when the last look is past N or there
 * is no room for N.
 */
int compare_schedule(size_t pairs, bool have_looks, struct stats_schedule *s);

/*
 * Every run kept, as JSON (docs/compare.md "runs"): workload, side, pair,
 * position, warm-up, times, peak RSS, instructions, how it ended, value.
 */
struct json_t;
struct json_t *compare_runs_json(const struct compare *c);

#endif
