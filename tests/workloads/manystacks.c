/*
 * manystacks: one allocation under each of 2^DEPTH distinct stacks (argv[1],
 * default 14): a path of DEPTH calls, each to left() or right() by one bit
 * of the path's number, ends in a malloc of a size known from that number.
 * Done twice, so every stack comes again. Prints its allocations and bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include "workload.h"

static unsigned long allocs, bytes;

NOINLINE static void down(int depth, unsigned path, unsigned n);

NOINLINE static void left(int depth, unsigned path, unsigned n)
{
	down(depth, path, n);
	__asm__ volatile("" ::: "memory");	/* a call, not a jump */
}

NOINLINE static void right(int depth, unsigned path, unsigned n)
{
	down(depth, path, n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void down(int depth, unsigned path, unsigned n)
{
	if (depth == 0) {
		size_t size = 16 + n % 64;
		void *p = malloc(size);

		if (!p)
			abort();
		*(volatile char *)p = 1;
		free(p);
		allocs++;
		bytes += size;
		return;
	}
	if (path & 1)
		right(depth - 1, path >> 1, n);
	else
		left(depth - 1, path >> 1, n);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 14;

	alarm(60);
	if (depth < 1 || depth > 24)
		return 2;
	for (int round = 0; round < 2; round++)
		for (unsigned path = 0; path < 1u << depth; path++)
			down(depth, path, path);
	printf("allocs=%lu bytes=%lu\n", allocs, bytes);
	return 0;
}
