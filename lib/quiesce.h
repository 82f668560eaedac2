/*
 * quiesce.h: is the machine quiet enough to measure? Before each block of
 * runs the caller waits, bounded and with back off, until the load average,
 * CPU pressure (PSI) and steal time are under the thresholds, and records
 * what it saw with the results. When the runs are pinned to CPUs, those
 * CPUs' own busy and steal shares are judged instead of the machine-wide
 * load and pressure, so work elsewhere does not hold the measurement back.
 * The caller owns both structs.
 */
#ifndef HOTLOOP_QUIESCE_H
#define HOTLOOP_QUIESCE_H

#include <stdbool.h>
#include <stddef.h>

/* Thresholds (documented in docs/bench.md). */
struct quiesce_opts {
	double max_load_per_cpu;	/* 1-minute load average / online CPUs; default 0.75 */
	double max_psi;			/* /proc/pressure/cpu "some avg10", percent; default 10 */
	double max_steal;		/* steal share of CPU time over the probe, percent; default 5 */
	double max_wait;		/* seconds to wait for quiet before measuring anyway; default 5 */
	double max_busy;		/* pinned CPUs: busy share over the probe, percent; default 20 */
	const int *cpus;		/* the CPUs the runs are pinned to ... */
	size_t nr_cpus;			/* ... 0: not pinned, judge the whole machine */
};
#define QUIESCE_OPTS_INIT { 0.75, 10.0, 5.0, 5.0, 20.0, NULL, 0 }

struct quiesce_state {
	int cpus;		/* online CPUs */
	double load1;		/* 1-minute load average */
	bool have_psi;		/* /proc/pressure/cpu was readable */
	double psi_some_avg10;	/* percent */
	bool have_steal;
	double steal;		/* percent of CPU time stolen during the last probe */
	bool pinned;		/* judged on the pinned CPUs (busy, steal) only */
	double busy;		/* pinned: the busiest pinned CPU's busy share, percent */
	int busiest;		/* pinned: that CPU's number */
	double waited;		/* seconds spent waiting */
	int probes;		/* how many times the machine was looked at */
	bool quiet;		/* every threshold held at the last probe */
	char reason[128];	/* why not quiet ("" when quiet) */
};

/*
 * Look at the machine once; the steal share is measured over 'interval'
 * seconds (slept). Fills s and returns 0, or -1 when /proc/loadavg cannot
 * be read.
 */
int quiesce_probe(const struct quiesce_opts *o, double interval, struct quiesce_state *s);

/*
 * Probe until quiet or until o->max_wait seconds passed, sleeping 0.1 s,
 * then 0.2, 0.4, ... (at most 1 s) between probes. s says what the last
 * probe saw and how long it waited; 0, or -1 when the machine cannot be
 * read at all.
 */
int quiesce_wait(const struct quiesce_opts *o, struct quiesce_state *s);

/* One line for people: "load 0.12 on 2 CPUs, CPU pressure 0.0%, steal 0.0%". */
struct strbuf;
void quiesce_describe(const struct quiesce_state *s, struct strbuf *sb);

/* The state as a JSON object (docs/bench.md, "machine"); NULL when never probed. */
struct json_t;
struct json_t *quiesce_to_json(const struct quiesce_state *s);

/* Parsers, for tests: 0 on success, -1 when the text is not what was expected. */
int quiesce_parse_loadavg(const char *text, double *load1);
int quiesce_parse_psi(const char *text, double *some_avg10);
/* Jiffies of one line of /proc/stat. */
struct quiesce_times {
	unsigned long long total, idle, steal;	/* idle includes iowait */
};
/* The line of CPU 'cpu' in /proc/stat ("cpuN"), or the sum line ("cpu") when cpu < 0. */
int quiesce_parse_stat(const char *text, int cpu, struct quiesce_times *t);

#endif
