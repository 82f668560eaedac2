/*
 * summary.h: the few order statistics a set of measurements is described
 * by (median, MAD, min, max, mean, coefficient of variation). bench prints
 * them; the paired statistics of compare live elsewhere. The caller owns
 * the array; a struct summary holds plain numbers only.
 */
#ifndef HOTLOOP_SUMMARY_H
#define HOTLOOP_SUMMARY_H

#include <stddef.h>

struct summary {
	size_t n;
	double median;
	double mad;	/* median absolute deviation from the median (unscaled) */
	double min, max;
	double mean;
	double cv;	/* sample standard deviation / mean; 0 when n < 2 or mean is 0 */
};

/* Describe v[0..n) (not modified). n == 0 gives all zeros. */
void summary_of(const double *v, size_t n, struct summary *s);

/* The median of v[0..n); sorts v in place. 0 for n == 0. */
double median_inplace(double *v, size_t n);

#endif
