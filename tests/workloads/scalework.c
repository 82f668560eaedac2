/*
 * scalework: `scalework N` does work that grows with N in two known ways:
 * count_duplicate_pairs() compares every pair of N items (quadratic) and
 * sum_items() walks the N items a fixed 6000 times (linear). `hotloop
 * scale` must find exponents near 2 and 1. Prints the results.
 */
#include <stdio.h>
#include "workload.h"

#define LINEAR_PASSES 6000

/* A few rounds of integer mixing: what makes two items "the same". */
static inline unsigned mix(unsigned x)
{
	for (int r = 0; r < 8; r++) {
		x ^= x >> 15;
		x *= 0x2c1b3c6dU;
		x ^= x >> 12;
		x *= 0x297a2d39U;
	}
	return x;
}

/* Pairs i < j whose items mix to the same top 12 bits: N(N-1)/2 mixes. */
NOINLINE unsigned long count_duplicate_pairs(const unsigned *items, long n)
{
	unsigned long pairs = 0;

	for (long i = 0; i < n; i++)
		for (long j = i + 1; j < n; j++)
			pairs += (mix(items[i] ^ items[j]) >> 20) == 0;
	return pairs;
}

/* One pass over the items, mixed with 'salt' so no pass repeats another. */
NOINLINE unsigned long sum_items(const unsigned *items, long n, unsigned long salt)
{
	unsigned long sum = salt;

	for (long i = 0; i < n; i++)
		sum = sum * 31 + (items[i] ^ salt);
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	unsigned long x = 12345, pairs, sum = 0;
	unsigned *items;

	alarm(30);
	if (n < 1 || n > 10000000) {
		fprintf(stderr, "scalework: N must be from 1 to 10000000\n");
		return 2;
	}
	items = malloc(n * sizeof(*items));
	if (!items)
		return 1;
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		items[i] = (unsigned)(x >> 33) % (unsigned)(n / 2 + 1);
	}
	pairs = count_duplicate_pairs(items, n);
	for (unsigned long pass = 0; pass < LINEAR_PASSES; pass++)
		sum += sum_items(items, n, pass);
	wl_sink = sum;
	printf("n=%ld pairs=%lu sum=%lu\n", n, pairs, sum);
	free(items);
	return 0;
}
