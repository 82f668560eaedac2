/* forker: forks two children that run child_spin() while the parent waits;
 * the children are followed by the sampler (inherit). */
#include <sys/wait.h>
#include "workload.h"

NOINLINE unsigned long child_spin(unsigned long x)
{
	for (unsigned long i = 0; i < 100000; i++)
		x = x * 2862933555777941757ul + i;
	return x;
}

int main(int argc, char **argv)
{
	double seconds = wl_seconds(argc, argv);

	for (int i = 0; i < 2; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			double end = wl_now() + seconds;
			unsigned long x = (unsigned long)i;
			while (wl_now() < end)
				x = child_spin(x);
			wl_sink = x;
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
