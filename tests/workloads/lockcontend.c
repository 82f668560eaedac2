/* lockcontend: two worker threads time simulated requests and record
 * each latency in one shared statistics block, taking its mutex for
 * every single event.
 * Root cause: a pthread mutex locked and unlocked per increment, shared
 * by both threads (on two CPUs they also fight over the lock).
 * Hotspot #1: record_event (the time in pthread_mutex_lock/unlock, and
 * in futex waits in the kernel, is charged to it).
 * Expected tag: lock.
 * Fix: count in per-thread statistics and merge them once at the end
 * (or use relaxed atomics). */
#include <pthread.h>
#include "workload.h"

struct latency_stats {
	pthread_mutex_t lock;
	unsigned long count;
	unsigned long sum;
	unsigned long max;
};

static struct latency_stats stats = { .lock = PTHREAD_MUTEX_INITIALIZER };
static double seconds;

/* Add one latency to st; returns the event's sequence number. */
NOINLINE static unsigned long record_event(struct latency_stats *st, unsigned long latency)
{
	unsigned long seq;

	pthread_mutex_lock(&st->lock);
	seq = ++st->count;
	st->sum += latency;
	if (latency > st->max)
		st->max = latency;
	pthread_mutex_unlock(&st->lock);
	return seq;
}

/* A made-up request latency: cheap, so that recording dominates. */
static unsigned long next_latency(unsigned long *state)
{
	unsigned long x = *state;

	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	*state = x;
	return 100 + x % 4096;
}

static void *worker(void *arg)
{
	double end = wl_now() + seconds;
	unsigned long state = 0x9e3779b97f4a7c15ul + (unsigned long)arg;
	unsigned long last = 0;

	while (wl_now() < end)
		for (int i = 0; i < 10000; i++)
			last = record_event(&stats, next_latency(&state));
	return (void *)last;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	seconds = wl_seconds(argc, argv);
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	wl_sink = stats.count;
	return stats.count ? 0 : 1;
}
