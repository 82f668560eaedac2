/* inlinemix: hash_step() is always_inline'd into scan(), which also does
 * work of its own on other lines. The profile names hash_step as an inlined
 * frame in scan; report --no-inline must give scan both shares, and asm
 * --fn hash_step must find it inside scan. */
#include "workload.h"

static inline __attribute__((always_inline)) unsigned long hash_step(unsigned long x)
{
	for (int i = 0; i < 400; i++) {
		x ^= x >> 13;
		x *= 0xff51afd7ed558ccdul;
		x ^= x >> 29;
	}
	return x;
}

NOINLINE unsigned long scan(unsigned long x)
{
	unsigned long acc = x;

	for (int i = 0; i < 100; i++) {
		x = hash_step(x + (unsigned long)i);
		for (int k = 0; k < 300; k++)
			acc = acc * 31 + (x >> (k & 15));
	}
	return acc ^ x;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);

	while (wl_now() < end)
		wl_sink = scan(wl_sink);
	return 0;
}
