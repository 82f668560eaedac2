/* allocmib: allocate and touch argv[1] MiB (default 10), print
 * FINGERPRINT= and HOTLOOP_METRIC lines, exit. Peak RSS tests use it. */
#include <stdio.h>
#include <string.h>
#include "workload.h"

NOINLINE unsigned long touch(char *p, size_t n)
{
	unsigned long sum = 0;

	memset(p, 1, n);
	for (size_t i = 0; i < n; i += 4096)
		sum += (unsigned char)p[i];
	return sum;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 10;
	char *p = malloc(mib << 20);
	unsigned long sum;

	alarm(10);
	if (!p)
		return 1;
	sum = touch(p, mib << 20);
	printf("FINGERPRINT=%lu\n", sum);
	printf("HOTLOOP_METRIC mib=%zu\n", mib);
	free(p);
	return 0;
}
