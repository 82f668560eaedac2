/* colwalk: per-column totals of a large row-major matrix of sensor
 * readings (4096 x 2048 32-bit counts, 32 MiB), computed by walking the
 * matrix one column at a time; the row totals next to them walk it row by
 * row, the way it is laid out.
 * Root cause: the column walk strides 8 KiB from one element to the next,
 * so nearly every load misses the TLB and the nearby caches, where the
 * row walk streams through whole cache lines.
 * Hotspot #1: sum_columns (sum_rows, over the same data, costs a small
 * fraction of it).
 * Expected tag: memory-bound.
 * Fix: swap the loops: walk each row and add each element into its
 * column's total (col[j] += m[i][j]). */
#include "workload.h"

#define ROWS 4096
#define COLS 2048

NOINLINE static void sum_columns(const unsigned *m, unsigned long *col)
{
	for (size_t j = 0; j < COLS; j++) {
		unsigned long s = 0;

		for (size_t i = 0; i < ROWS; i++)
			s += m[i * COLS + j];
		col[j] = s;
	}
}

NOINLINE static void sum_rows(const unsigned *m, unsigned long *row)
{
	for (size_t i = 0; i < ROWS; i++) {
		unsigned long s = 0;

		for (size_t j = 0; j < COLS; j++)
			s += m[i * COLS + j];
		row[i] = s;
	}
}

NOINLINE static void fill_matrix(unsigned *m)
{
	for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
		m[i] = (unsigned)(i % 1000);
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	unsigned *m = malloc((size_t)ROWS * COLS * sizeof(*m));
	unsigned long *row = malloc(ROWS * sizeof(*row));
	unsigned long *col = malloc(COLS * sizeof(*col));

	if (!m || !row || !col)
		return 1;
	fill_matrix(m);
	do {
		sum_rows(m, row);
		sum_columns(m, col);
		wl_sink += row[0] + col[0];
	} while (wl_now() < end);
	free(m);
	free(row);
	free(col);
	return 0;
}
