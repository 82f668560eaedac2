/*
 * scenario-svc: the service bench/scenario samples. 50 threads: the main
 * one, 46 that sleep (waking once a second, as a pool's idle workers do)
 * and 3 that burn CPU on a fixed schedule, so the service's CPU varies over
 * time the same way on every run: 10%, 60%, 30%, 90% of one core, each for
 * STEP seconds, over and over, from the moment it starts.
 *
 *   scenario-svc PIDFILE [STEP_SECONDS [MAX_SECONDS]]
 *
 * Each burner works in 10 ms periods: it spins until its own CPU clock has
 * advanced by its share of the period, then sleeps until the next period
 * starts, so the load is smooth within a second and changes only at the
 * steps. When all threads run it writes its pid to PIDFILE (the ready
 * probe), says when its schedule started on the wall clock and prints
 * "HOTLOOP_METRIC duty_pct=N" at each step, and exits on
 * SIGTERM or SIGINT, or by itself after MAX_SECONDS (default 600).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 50
#define BURNERS 3
#define PERIOD_NS 10000000ll

static const int duty_pct[] = { 10, 60, 30, 90 };
#define NR_DUTY (sizeof(duty_pct) / sizeof(duty_pct[0]))

static int64_t t0_ns, step_ns;

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void sleep_until(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ll), (long)(ns % 1000000000ll) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

/* The schedule's share of one core at a time, in percent. */
static int duty_at(int64_t now)
{
	return duty_pct[(size_t)((now - t0_ns) / step_ns) % NR_DUTY];
}

static void *burner(void *arg)
{
	volatile uint64_t sink = 0;
	int64_t period = t0_ns;

	(void)arg;
	for (;;) {
		/* each burner's share of the period: the step's duty split in three */
		int64_t want = PERIOD_NS * duty_at(period) / 100 / BURNERS;
		int64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), now;

		while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < want)
			for (int i = 0; i < 1000; i++)
				sink = sink * 6364136223846793005ull + 1442695040888963407ull;
		period += PERIOD_NS;
		now = clock_ns(CLOCK_MONOTONIC);
		if (period < now)	/* behind (the machine is busy): start again from now */
			period = now - (now - t0_ns) % PERIOD_NS + PERIOD_NS;
		sleep_until(period);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		sleep(1);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *pidfile;
	double step = 5, max = 600;
	pthread_t th;
	sigset_t set;
	char tmp[4096];
	FILE *f;
	int last = -1;
	double t0_unix;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: scenario-svc PIDFILE [STEP_SECONDS [MAX_SECONDS]]\n");
		return 2;
	}
	pidfile = argv[1];
	if (argc > 2)
		step = atof(argv[2]);
	if (argc > 3)
		max = atof(argv[3]);
	if (step < 0.1 || max < 1) {
		fprintf(stderr, "scenario-svc: STEP_SECONDS must be at least 0.1, MAX_SECONDS at least 1\n");
		return 2;
	}
	step_ns = (int64_t)(step * 1e9);
	alarm((unsigned)max);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* SIGTERM and SIGINT wait for sigtimedwait in the main thread; the others inherit the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	t0_ns = clock_ns(CLOCK_MONOTONIC);
	t0_unix = (double)clock_ns(CLOCK_REALTIME) / 1e9;
	for (int i = 0; i < THREADS - 1; i++) {
		if (pthread_create(&th, NULL, i < BURNERS ? burner : sleeper, NULL)) {
			fprintf(stderr, "scenario-svc: cannot start thread %d\n", i + 1);
			return 1;
		}
		pthread_detach(th);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", pidfile);
	if (!(f = fopen(tmp, "w")) || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) ||
	    rename(tmp, pidfile)) {
		perror(pidfile);
		return 1;
	}
	/* the schedule's start on the wall clock, for bench/scenario to find its steps */
	printf("scenario-svc: pid %d, %d threads, %d burning %d/%d/%d/%d%% of a core for %g s each from %.6f\n",
	       (int)getpid(), THREADS, BURNERS, duty_pct[0], duty_pct[1], duty_pct[2], duty_pct[3], step,
	       t0_unix);
	for (;;) {
		/* wake at each step to say the duty; the signals end it */
		int64_t now = clock_ns(CLOCK_MONOTONIC), next = now + step_ns - (now - t0_ns) % step_ns;
		int64_t wait = next - now;
		struct timespec ts = { (time_t)(wait / 1000000000ll), (long)(wait % 1000000000ll) };
		int d = duty_at(now);

		if (d != last)
			printf("HOTLOOP_METRIC duty_pct=%d\n", d);
		last = d;
		if (sigtimedwait(&set, NULL, &ts) > 0)
			break;
	}
	unlink(pidfile);
	return 0;
}
