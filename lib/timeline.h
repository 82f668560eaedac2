/*
 * timeline.h: the resource timeline of a process tree (a service and all
 * it starts), sampled every interval from /proc: CPU from each process's
 * own CPU clock (nanoseconds, not 10 ms ticks), RSS (anon and file), VIRT,
 * processes, threads, open fds, context switches, I/O bytes and page
 * faults; the machine's busy CPU and pressure stall; phase marks and the
 * metrics the service or a load printed, with their times. What sampling
 * costs is kept too. The scenario engine fills one; the dashboard and the
 * canary read them. A struct timeline owns all its arrays and strings.
 */
#ifndef HOTLOOP_TIMELINE_H
#define HOTLOOP_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strbuf;

/* One sample: the state at time t, and what happened since the one before. */
struct tl_point {
	double t;			/* seconds from the timeline's start */
	double cpu_pct;			/* the tree's CPU over the interval, % of one core */
	double cpu_machine_pct;		/* the same as % of all the machine's CPUs */
	uint64_t rss_kb, rss_anon_kb, rss_file_kb;	/* summed over the processes */
	uint64_t vsz_kb;
	uint32_t processes, threads, fds;
	uint64_t ctx_voluntary, ctx_involuntary;	/* since the last reading (once a second) */
	uint64_t read_bytes, write_bytes;		/* storage I/O over the interval */
	uint64_t minor_faults, major_faults;		/* over the interval */
	double machine_busy_pct;	/* all the machine's CPUs, % busy over the interval */
	double psi_cpu_pct, psi_memory_pct, psi_io_pct;	/* % of the interval some task stalled; -1: no PSI */
};

/* A phase of a scenario: [start_s, end_s) on the timeline's clock; end_s < 0 while it runs. */
struct tl_phase {
	char *name;
	char *kind;			/* "idle", "pressure", ... as the config says */
	double start_s, end_s;
};

/* One value of a metric, at the time its line was read. */
struct tl_metric_point {
	double t;
	size_t metric;			/* index into metric_names */
	double value;
};

/* A process being watched (private to timeline.c). */
struct tl_proc;

struct timeline {
	double interval_s;
	int ncpus;
	uint64_t start_ns;		/* CLOCK_MONOTONIC of t = 0 */
	double start_unix_s;		/* the same on the wall clock (to line up with other tools) */
	struct tl_point *points;
	size_t nr_points, alloc_points;
	struct tl_phase *phases;
	size_t nr_phases, alloc_phases;
	char **metric_names;
	size_t nr_metric_names, alloc_metric_names;
	struct tl_metric_point *metrics;
	size_t nr_metrics, alloc_metrics;
	size_t malformed_metrics;	/* HOTLOOP_METRIC lines that were not NAME=NUMBER ... */
	/* what sampling cost: hotloop's own CPU inside timeline_sample() */
	uint64_t sampler_cpu_ns;
	size_t samples;

	/* private */
	pid_t root;
	bool root_counts;
	struct tl_proc *procs;		/* the tree, by pid */
	size_t nr_procs, alloc_procs;
	pid_t *outside;			/* pids seen last time that are not in the tree, ascending */
	size_t nr_outside, alloc_outside;
	uint64_t last_ns, scan_due;
	uint64_t stat_busy, stat_total;
	uint64_t psi_total_us[3];
	bool psi_ok[3];
	int proc_fd, stat_fd, psi_fd[3];
};

/* Sample every interval_s seconds; nothing watched yet, t = 0 now. */
void timeline_init(struct timeline *tl, double interval_s);
void timeline_release(struct timeline *tl);

/*
 * Watch the tree under 'root' (its descendants, what they start later
 * too); 'root_counts': whether root itself is counted (false for a guard
 * process standing in for hotloop). Takes the first readings, so the first
 * sample's interval starts here.
 */
void timeline_watch(struct timeline *tl, pid_t root, bool root_counts);
/* Take one sample now: a point appended. The tree may be gone (all zeros). */
void timeline_sample(struct timeline *tl);
/* Seconds since t = 0. */
double timeline_now(const struct timeline *tl);

/* Mark a phase's start (now); ends the one running. */
void timeline_phase_begin(struct timeline *tl, const char *name, const char *kind);
/* End the running phase now, if any. */
void timeline_phase_end(struct timeline *tl);

/*
 * One line of output (no newline): "HOTLOOP_METRIC NAME=VALUE ..." adds a
 * point per pair at time t; another line is ignored. 1 when it was a metric
 * line, 0 when not; a metric line with a pair that is not NAME=NUMBER is
 * counted in malformed_metrics (its good pairs are kept).
 */
int timeline_metric_line(struct timeline *tl, double t, const char *line, size_t len);
/* Did metric m only ever grow (or stay)? A counter, then; else a gauge. */
bool timeline_metric_is_counter(const struct timeline *tl, size_t m);
/* The index of a metric name, or -1. */
int timeline_metric_index(const struct timeline *tl, const char *name);

/* Percentiles and extremes of one quantity over a phase's points. */
struct tl_dist {
	double mean, p50, p95, max;
	size_t n;
};

/* A metric over a phase: read as a counter (total, rate) and as a gauge (mean). */
struct tl_metric_stats {
	const char *name;
	bool seen;			/* printed in or before the phase */
	double total;			/* its last value in the phase minus its last value before */
	double rate_per_s;		/* total / the phase's seconds */
	double mean;			/* of the values printed in the phase */
	size_t n;
};

struct tl_phase_stats {
	const char *name;
	double start_s, end_s;
	struct tl_dist cpu_pct, cpu_machine_pct;
	uint64_t rss_start_kb, rss_end_kb, rss_max_kb;
	uint64_t vsz_start_kb, vsz_end_kb, vsz_max_kb;
	uint32_t threads_max, processes_max;
	double machine_busy_mean_pct;
	struct tl_metric_stats *metrics;	/* one per metric name, owned */
	size_t nr_metrics;
};

/* The numbers of phase 'i' (its points: t in (start_s, end_s]). */
void timeline_phase_stats(const struct timeline *tl, size_t i, struct tl_phase_stats *out);
void tl_phase_stats_release(struct tl_phase_stats *s);

/* Every point, phase and metric as the JSON document of docs/scenario.md. */
struct json_t;
struct json_t *timeline_to_json(const struct timeline *tl);
/* One CSV row per point, with a header; the phase a point belongs to named. */
void timeline_format_csv(const struct timeline *tl, struct strbuf *out);
/* Rows from point 'from' on, the header first when asked. */
void timeline_format_csv_rows(const struct timeline *tl, size_t from, bool header, struct strbuf *out);

#endif
