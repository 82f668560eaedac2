/* clockhog: read_clock() calls clock_gettime() in a loop, so most samples
 * land in the kernel's vdso; the profile must name the vdso function. */
#include "workload.h"

NOINLINE double read_clock(int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += wl_now();
	return sum;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);

	while (wl_now() < end)
		wl_sink += (unsigned long)read_clock(1000);
	return 0;
}
