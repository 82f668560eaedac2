/* asmloops: one hot loop per hotloop asm verdict, picked by argv[2]:
 *   mod    mod_sum(): x % d with d known only at run time (integer division)
 *   rows   sum_rows(): a 64 MiB matrix summed row by row (sequential loads)
 *   cols   sum_cols(): the same matrix summed column by column (a cache
 *          miss per load: memory-bound)
 *   tally  tally(): a test and a conditional store per bit (branch-heavy) */
#include <stdlib.h>
#include <string.h>
#include "workload.h"

#define N 4096

NOINLINE long mod_sum(const int *x, int n, int d)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += x[i] % d;
	return s;
}

NOINLINE long sum_rows(const int *m, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += m[(size_t)i * n + j];
	return s;
}

NOINLINE long sum_cols(const int *m, int n)
{
	long s = 0;

	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			s += m[(size_t)i * n + j];
	return s;
}

NOINLINE void tally(const unsigned char *x, int n, long *counts)
{
	for (int i = 0; i < n; i++) {
		unsigned c = x[i];

		if (c & 1)
			counts[0]++;
		if (c & 2)
			counts[1]++;
		if (c & 4)
			counts[2]++;
		if (c & 8)
			counts[3]++;
		if (c & 16)
			counts[4]++;
	}
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	const char *mode = argc > 2 ? argv[2] : "mod";
	int *m = malloc((size_t)N * N * sizeof(*m));
	long counts[5] = { 0 };

	if (!m)
		return 1;
	for (size_t i = 0; i < (size_t)N * N; i++)
		m[i] = (int)(i * 2654435761u >> 7);
	do {
		if (!strcmp(mode, "mod"))
			wl_sink += mod_sum(m, N * 64, argc > 3 ? atoi(argv[3]) : 7);
		else if (!strcmp(mode, "rows"))
			wl_sink += sum_rows(m, N);
		else if (!strcmp(mode, "cols"))
			wl_sink += sum_cols(m, N);
		else if (!strcmp(mode, "tally"))
			tally((const unsigned char *)m, N * 256, counts), wl_sink += counts[0];
		else
			return 2;
	} while (wl_now() < end);
	free(m);
	return 0;
}
