/* inlined: mix_step() is always_inline'd into outer_loop(); the profile
 * must still name mix_step, as an inlined frame inside outer_loop. */
#include "workload.h"

static inline __attribute__((always_inline)) unsigned long mix_step(unsigned long x)
{
	for (int i = 0; i < 1000; i++) {
		x ^= x >> 13;
		x *= 0xff51afd7ed558ccdul;
		x ^= x >> 29;
	}
	return x;
}

NOINLINE unsigned long outer_loop(unsigned long x)
{
	for (int i = 0; i < 100; i++)
		x = mix_step(x + (unsigned long)i);
	return x;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);

	while (wl_now() < end)
		wl_sink = outer_loop(wl_sink);
	return 0;
}
