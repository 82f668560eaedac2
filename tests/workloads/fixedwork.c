/*
 * fixedwork: a FIXED amount of CPU work, argv[1] rounds of fixed_spin
 * (default 40; a round is under a millisecond), then optionally
 * allocate and touch argv[2] MiB. Prints FINGERPRINT=fixedwork whatever
 * the amount, so compare tests can pit half the work against the whole.
 */
#include <stdio.h>
#include <string.h>
#include "workload.h"

NOINLINE unsigned long fixed_spin(unsigned long x)
{
	for (unsigned long i = 0; i < 500000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 40;
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 0;

	alarm(30);
	for (long r = 0; r < rounds; r++)
		wl_sink += fixed_spin(wl_sink);
	if (mib) {
		char *p = malloc(mib << 20);

		if (!p)
			return 1;
		memset(p, 1, mib << 20);
		wl_sink += (unsigned char)p[(mib << 20) - 1];
		free(p);
	}
	printf("FINGERPRINT=fixedwork\n");
	return 0;
}
