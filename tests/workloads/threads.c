/* threads: the main thread waits while two threads run thread_spin(). The
 * profile must hold thread_spin samples from both threads (tid labels). */
#include <pthread.h>
#include "workload.h"

static double seconds;

NOINLINE unsigned long thread_spin(unsigned long x)
{
	for (unsigned long i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + i;
	return x;
}

static void *worker(void *arg)
{
	double end = wl_now() + seconds;
	unsigned long x = (unsigned long)arg;

	while (wl_now() < end)
		x = thread_spin(x);
	wl_sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	seconds = wl_seconds(argc, argv);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
