/*
 * quiesce.h: is the machine quiet enough to measure? Before each block of
 * runs the caller waits, bounded and with back off, until the load average,
 * CPU pressure (PSI) and steal time are under the thresholds, and records
 * what it saw with the results. The caller owns both structs.
 */
#ifndef HOTLOOP_QUIESCE_H
#define HOTLOOP_QUIESCE_H

#include <stdbool.h>

/* Thresholds (documented in docs/bench.md). */
struct quiesce_opts {
	double max_load_per_cpu;	/* 1-minute load average / online CPUs; default 0.75 */
	double max_psi;			/* /proc/pressure/cpu "some avg10", percent; default 10 */
	double max_steal;		/* steal share of CPU time over the probe, percent; default 5 */
	double max_wait;		/* seconds to wait for quiet before measuring anyway; default 5 */
};
#define QUIESCE_OPTS_INIT { 0.75, 10.0, 5.0, 5.0 }

struct quiesce_state {
	int cpus;		/* online CPUs */
	double load1;		/* 1-minute load average */
	bool have_psi;		/* /proc/pressure/cpu was readable */
	double psi_some_avg10;	/* percent */
	bool have_steal;
	double steal;		/* percent of CPU time stolen during the last probe */
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

/* Parsers, for tests: 0 on success, -1 when the text is not what was expected. */
int quiesce_parse_loadavg(const char *text, double *load1);
int quiesce_parse_psi(const char *text, double *some_avg10);
/* The cpu line of /proc/stat: total and steal jiffies. */
int quiesce_parse_stat(const char *text, unsigned long long *total, unsigned long long *steal);

#endif
