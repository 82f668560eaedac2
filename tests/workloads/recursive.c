/* recursive: counts the ways to tile 2 x n strips with dominoes, for
 * every n up to a width, with the textbook recursion
 * ways(n) = ways(n - 1) + ways(n - 2) and no memory of earlier results.
 * Root cause: the naive recursion recomputes the same subproblems, an
 * exponential number of calls for a linear amount of work.
 * Hotspot #1: tiling_ways (it calls itself, up to 24 frames deep).
 * Expected tag: recursion.
 * Fix: iterate from the bottom up (two running values) or memoize. */
#include "workload.h"

/* Ways to tile a 2 x n strip with 1 x 2 dominoes. */
NOINLINE static unsigned long tiling_ways(unsigned n)
{
	if (n < 2)
		return 1;
	return tiling_ways(n - 1) + tiling_ways(n - 2);
}

/* The sum of the tilings of every strip from 1 to width. */
NOINLINE static unsigned long staircase_ways(unsigned width)
{
	unsigned long total = 0;

	for (unsigned n = 1; n <= width; n++)
		total += tiling_ways(n);
	return total;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);

	while (wl_now() < end)
		wl_sink += staircase_ways(24);
	return 0;
}
