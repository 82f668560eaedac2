/* dedupe: the distinct values of an array, kept in first-seen order.
 * Root cause: for each element, dedupe() scans every value kept so far:
 * a loop inside a loop, quadratic in the input.
 * Hotspot #1: dedupe.
 * Expected tag: nested-loop.
 * Fix: a hash set of the values seen, or sort and drop neighbours.
 * `dedupe SECONDS linear` runs dedupe_sorted() instead: one pass over
 * sorted input, a single loop, which must not be tagged nested-loop. */
#include <string.h>
#include "workload.h"

#define N 3000

NOINLINE static size_t dedupe(const unsigned *in, size_t n, unsigned *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < m; j++)
			if (out[j] == in[i])
				break;
		if (j == m)
			out[m++] = in[i];
	}
	return m;
}

NOINLINE static size_t dedupe_sorted(const unsigned *in, size_t n, unsigned *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (!m || out[m - 1] != in[i])
			out[m++] = in[i];
	return m;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	int linear = argc > 2 && !strcmp(argv[2], "linear");
	static unsigned in[N], out[N];

	for (size_t i = 0; i < N; i++)
		in[i] = linear ? (unsigned)(i / 2) : (unsigned)(i * 7919 % 2003);
	while (wl_now() < end)
		wl_sink += linear ? dedupe_sorted(in, N, out) : dedupe(in, N, out);
	return 0;
}
