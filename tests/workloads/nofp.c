/* nofp: built without frame pointers. leaf_work() is called from
 * middle_work() from main(); only --call-graph dwarf can see middle_work. */
#include "workload.h"

NOINLINE unsigned long leaf_work(unsigned long x)
{
	for (unsigned long i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + i;
	return x;
}

NOINLINE unsigned long middle_work(unsigned long x)
{
	x = leaf_work(x) ^ 0x5555;
	__asm__ volatile("" ::: "memory");	/* no tail call */
	return x + 1;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);

	while (wl_now() < end)
		wl_sink = middle_work(wl_sink);
	return 0;
}
