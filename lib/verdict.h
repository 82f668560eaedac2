/*
 * verdict.h: the gate's decision. verdict_decide() is a pure function from
 * what compare measured (struct vd_measurements) and the rules (struct
 * gate_rules) to a struct verdict: keep, reject or inconclusive, with every
 * reason as text and every number behind it. The caller owns the
 * measurements (verdict_decide() keeps no pointer into them); the verdict
 * owns its strings and arrays until verdict_release().
 */
#ifndef HOTLOOP_VERDICT_H
#define HOTLOOP_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

/*
 * One run of a workload (warm-ups included): how it ended and its peak
 * RSS. A run is a correctness failure when it timed out, was killed by a
 * signal, exited non-zero, or printed nothing where its output was needed.
 */
struct vd_run {
	int wait_status;	/* as from waitpid() */
	bool timed_out;
	bool no_output;		/* stdout empty although it is fingerprinted or holds metrics */
	uint64_t peak_rss_kb;	/* ru_maxrss; 0 = not measured */
};

/* A workload-printed metric ("HOTLOOP_METRIC name=value"), one value per run that printed it. */
struct vd_metric_values {
	const char *name;
	const double *base;
	size_t nr_base;
	const double *cand;
	size_t nr_cand;
};

enum vd_fingerprint {
	VD_FINGERPRINT_NONE,	/* not taken for this workload */
	VD_FINGERPRINT_MATCH,
	VD_FINGERPRINT_MISMATCH,
};

/*
 * One workload as compare measured it. base[i] and cand[i] are the
 * rules' metric (seconds for cpu and wall, counts for instructions) of the
 * i-th measured pair, warm-ups excluded. For instructions, nr_pairs >= 2
 * with identical repeats makes the comparison exact.
 */
struct vd_workload {
	const char *name;
	bool primary;		/* at most one; none: the first workload is the primary */
	const double *base;
	const double *cand;
	size_t nr_pairs;
	const struct vd_run *base_runs;
	size_t nr_base_runs;
	const struct vd_run *cand_runs;
	size_t nr_cand_runs;
	const struct vd_metric_values *metrics;
	size_t nr_metrics;
	enum vd_fingerprint fingerprint;
};

enum vd_test {
	VD_TEST_NOT_RUN,	/* no test command configured */
	VD_TEST_PASSED,
	VD_TEST_FAILED,
};

struct vd_measurements {
	const struct vd_workload *workloads;
	size_t nr_workloads;
	enum vd_test test;	/* the project's test command on the candidate */
	/*
	 * The level of each interval: the per-look level of the schedule
	 * that stopped (stats_schedule_look_confidence()); 0 means
	 * STATS_DEFAULT_CONFIDENCE.
	 */
	double confidence;
};

/*
 * How a candidate ended, one enum from the gate to the store, the
 * knowledge base and every JSON document. verdict_decide() gives the
 * first three; the loop adds the last two.
 */
enum verdict_kind {
	VERDICT_NONE,		/* not decided yet (NULL in the store) */
	VERDICT_KEEP,
	VERDICT_REJECT,
	VERDICT_INCONCLUSIVE,
	VERDICT_ERROR,		/* it could not be judged: the agent, the build or a run could not run */
	VERDICT_NO_CANDIDATE,	/* the agent said NO CANDIDATE */
	VERDICT_NR
};
/* The names, "keep" ... "no-candidate"; NULL for VERDICT_NONE. */
extern const char *const verdict_kind_names[VERDICT_NR];

/* A workload's change; the percentages are (cand / base - 1) * 100, negative = faster. */
struct verdict_estimate {
	char *workload;
	bool valid;		/* false: no usable pairs, the numbers are 0 */
	double change_pct, ci_low_pct, ci_high_pct, noise_pct;
	size_t pairs;
	bool exact;		/* deterministic counts confirmed by a repeat */
	bool regressed;		/* guards: beyond guard_regression and guard_floor_s */
};

struct verdict_metric {
	char *name;
	char *workload;
	double base, cand;	/* medians */
	double change_pct;	/* NAN when the base median is 0 */
	double tolerance_pct;
	bool higher_is_better;
	bool ok;
};

struct verdict_fingerprint {
	char *workload;
	bool match;
};

struct verdict {
	enum verdict_kind kind;
	char **reasons;
	size_t nr_reasons, alloc_reasons;
	bool suspicious;
	enum gate_metric metric;
	struct verdict_estimate primary;
	struct verdict_estimate *guards;
	size_t nr_guards;
	struct {
		uint64_t base_peak_rss_kb, cand_peak_rss_kb, budget_kb;
		enum gate_ram on;	/* what the budget limits */
		bool heap_measured;	/* a run had the heap-peak metric */
		uint64_t base_heap_peak, cand_heap_peak;	/* bytes, the highest of any run */
		bool ok;
	} memory;
	struct verdict_metric *metrics;
	size_t nr_metrics;
	struct {
		enum vd_test test;
		struct verdict_fingerprint *fingerprints;
		size_t nr_fingerprints;
		bool ok;
	} correctness;
};

#define VERDICT_INIT { .kind = VERDICT_INCONCLUSIVE }

/*
 * Decide. Keep only when every correctness check passed (test, runs,
 * fingerprints), the primary improved by at least min_improvement with
 * the interval's high end still below 0, no guard's interval low end
 * regressed beyond both guard_regression and guard_floor_s, the
 * candidate's peak RSS is within ram_budget, and every declared metric
 * held its tolerance. Any failed check makes a reject with every reason;
 * data that cannot tell (too few pairs, an interval across the threshold,
 * unusable numbers) makes inconclusive unless something failed. Returns -1
 * (with error()) only when the measurements cannot be a comparison: no
 * workloads, or two primaries.
 */
int verdict_decide(const struct vd_measurements *m, const struct gate_rules *r, struct verdict *v);
void verdict_release(struct verdict *v);

/* "keep", "reject", ...; "" for VERDICT_NONE. */
const char *verdict_kind_name(enum verdict_kind k);
/* The kind a name says; -1 when it names none. */
int verdict_kind_parse(const char *s);

/* The verdict as the JSON document of docs/internals/verdict.md (a new reference). */
struct json_t;
struct json_t *verdict_to_json(const struct verdict *v);
/* One estimate as that document has it ("primary", "guards"). */
struct json_t *verdict_estimate_to_json(const struct verdict *v, const struct verdict_estimate *e,
					bool guard);

#endif
