/*
 * heapwork: many small allocations, for bench/heap. N rounds (argv[1]) of a
 * batch of 64 malloc'd blocks of 16-256 bytes, all freed at the end of the
 * round; prints work_ns= (the loop alone), allocs= and bytes= (what it
 * asked for), so the recorders' totals can be checked against the truth.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 64

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) static unsigned long churn(long rounds, unsigned long long *bytes)
{
	char *blocks[BATCH];
	unsigned long sum = 0, x = 88172645463325252ul;

	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < BATCH; i++) {
			size_t n;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			n = 16 + (x & 0xf0);
			*bytes += n;
			blocks[i] = malloc(n);
			blocks[i][0] = (char)i;
		}
		for (int i = 0; i < BATCH; i++) {
			sum += (unsigned char)blocks[i][0];
			free(blocks[i]);
		}
	}
	return sum;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 30000;
	unsigned long long bytes = 0, t0 = now_ns(), t1;
	unsigned long sum = churn(rounds, &bytes);

	t1 = now_ns();
	printf("work_ns=%llu allocs=%ld bytes=%llu sum=%lu\n", t1 - t0, rounds * BATCH, bytes, sum);
	return 0;
}
