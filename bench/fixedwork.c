/*
 * fixedwork: a CPU-bound program that does a FIXED amount of work (argv[1]
 * rounds of hot_spin + cold_spin, like tests/workloads/cpuhog), so that a
 * profiler's overhead shows up as a longer run. bench/overhead runs it bare,
 * under hotloop record and under perf record. It prints the time its own
 * work took ("work_ns=N") and a checksum that proves the work was done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long hot_spin(unsigned long x)
{
	for (unsigned long i = 0; i < 200000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static unsigned long cold_spin(unsigned long x)
{
	for (unsigned long i = 0; i < 20000; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}

__attribute__((noinline)) static void run_rounds(long rounds)
{
	for (long r = 0; r < rounds; r++) {
		sink += hot_spin(sink);
		sink += cold_spin(sink);
	}
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 4000;
	unsigned long long t0 = now_ns();

	run_rounds(rounds);
	printf("work_ns=%llu checksum=%lx\n", now_ns() - t0, (unsigned long)sink);
	return 0;
}
