/*
 * summary.c: median, MAD, extremes, mean and CV of an array of doubles,
 * computed on a sorted copy so the caller's order is kept.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "summary.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median_inplace(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void summary_of(const double *v, size_t n, struct summary *s)
{
	double *tmp, sum = 0, var = 0;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	tmp = xmalloc(n * sizeof(*tmp));
	memcpy(tmp, v, n * sizeof(*tmp));
	s->n = n;
	s->median = median_inplace(tmp, n);
	s->min = tmp[0];
	s->max = tmp[n - 1];
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		var += (v[i] - s->mean) * (v[i] - s->mean);
		tmp[i] = fabs(v[i] - s->median);
	}
	s->mad = median_inplace(tmp, n);
	if (n > 1 && s->mean != 0)
		s->cv = sqrt(var / (double)(n - 1)) / fabs(s->mean);
	free(tmp);
}
