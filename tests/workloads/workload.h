/*
 * workload.h: shared by the test workloads. Each workload is a tiny program
 * with one known hot function; it runs for the seconds given as argv[1]
 * (default 0.5) and arms alarm() so that no test can hang on it.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double wl_seconds(int argc, char **argv)
{
	double s = argc > 1 ? atof(argv[1]) : 0.5;

	alarm((unsigned)s + 10);
	return s;
}

/* Keep the optimizer from deleting work. */
static volatile unsigned long wl_sink;

#endif
