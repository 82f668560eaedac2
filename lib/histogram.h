/*
 * histogram.h: a log-linear latency histogram with 3 significant digits
 * (HdrHistogram's layout): values in nanoseconds from 1 ns to about 73 min
 * in fixed memory, record and merge in O(1) per value, percentiles within
 * 1/1024 of the value, and a compact text form for --json documents. The
 * caller owns the struct; histogram_init() allocates its counts.
 */
#ifndef HOTLOOP_HISTOGRAM_H
#define HOTLOOP_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* 2^11 sub-buckets: two values 1/1024 apart or more are told apart. */
#define HIST_SUB_BITS 11
#define HIST_BUCKETS 32
#define HIST_COUNTS ((HIST_BUCKETS + 1) << (HIST_SUB_BITS - 1))
/* The largest value kept as itself; larger ones are recorded as this. */
#define HIST_MAX_VALUE ((UINT64_C(1) << (HIST_BUCKETS + HIST_SUB_BITS - 1)) - 1)

struct histogram {
	uint64_t *counts;	/* HIST_COUNTS of them */
	uint64_t total;
	uint64_t min, max;	/* exact, of what was recorded (after clamping) */
	uint64_t clamped;	/* values above HIST_MAX_VALUE */
	double sum;
};

#define HISTOGRAM_INIT { NULL, 0, UINT64_MAX, 0, 0, 0 }

/* The usual cut: p50, p90, p99, p99.9, max, count and mean, in ns. */
struct hist_summary {
	uint64_t count;
	uint64_t p50, p90, p99, p999, min, max;
	double mean;
};

void histogram_init(struct histogram *h);
void histogram_release(struct histogram *h);
/* Forget every value, keep the memory. */
void histogram_reset(struct histogram *h);
void histogram_record(struct histogram *h, uint64_t value);
void histogram_record_n(struct histogram *h, uint64_t value, uint64_t n);
/* Add every value of src to dst. */
void histogram_merge(struct histogram *dst, const struct histogram *src);

/*
 * The value at percentile p (0 < p <= 100): the largest value that counts
 * as equal to the smallest recorded value v with at least p% of the values
 * <= v, capped at the exact max. 0 when the histogram is empty.
 */
uint64_t histogram_percentile(const struct histogram *h, double p);
void histogram_summary(const struct histogram *h, struct hist_summary *s);

/* The slot of a value and the range of values that share it (for tests). */
size_t histogram_index(uint64_t value);
uint64_t histogram_lowest_equivalent(uint64_t value);
uint64_t histogram_highest_equivalent(uint64_t value);

/*
 * The compact form: "h1" then, for every slot that holds values, ";G:C"
 * with G the number of empty slots skipped since the last one and C its
 * count (decimal). histogram_parse() reads it back into an initialized,
 * empty h: 0, or -1 with an error (the text is outside input).
 */
void histogram_serialize(const struct histogram *h, struct strbuf *out);
int histogram_parse(struct histogram *h, const char *s);

#endif
