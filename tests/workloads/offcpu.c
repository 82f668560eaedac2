/* offcpu: three threads that spend most of their time off CPU. One
 * throttles itself with a sleep after every small batch of work (seed
 * 000's "sleep(1)" that cut CPU and throughput alike); two take turns
 * holding one mutex while they work, so each waits for the other.
 * Off-CPU hotspots: pace_batches (sleep), update_shared (lock).
 * On CPU: crunch, the work itself. */
#include <pthread.h>
#include <stdio.h>
#include "workload.h"

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static double end;

NOINLINE static void crunch(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink = sink * 31 + i;
}

/* A batch of work, then a pause "to save CPU". */
NOINLINE static void pace_batches(void)
{
	crunch(20000);
	usleep(3000);
	sink++;
}

/* The shared total, updated under the lock with the work done inside it. */
NOINLINE static void update_shared(void)
{
	pthread_mutex_lock(&shared_lock);
	crunch(400000);
	pthread_mutex_unlock(&shared_lock);
	sink++;
}

static void *pacer(void *arg)
{
	while (wl_now() < end)
		pace_batches();
	return arg;
}

static void *updater(void *arg)
{
	while (wl_now() < end)
		update_shared();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	end = wl_now() + wl_seconds(argc, argv);
	pthread_create(&t[0], NULL, pacer, NULL);
	pthread_create(&t[1], NULL, updater, NULL);
	pthread_create(&t[2], NULL, updater, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%lu\n", sink);
	return 0;
}
