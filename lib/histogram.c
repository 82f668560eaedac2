/*
 * histogram.c: the log-linear histogram of histogram.h. Slot layout: the
 * first 2048 slots hold 0..2047 exactly; each later bucket b holds 1024
 * slots of width 2^b covering [1024 << b, 2048 << b).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "util.h"

#define SUB_HALF_BITS (HIST_SUB_BITS - 1)
#define SUB_HALF (1u << SUB_HALF_BITS)
#define SUB_MASK ((UINT64_C(1) << HIST_SUB_BITS) - 1)

void histogram_init(struct histogram *h)
{
	*h = (struct histogram)HISTOGRAM_INIT;
	h->counts = xcalloc(HIST_COUNTS, sizeof(*h->counts));
}

void histogram_release(struct histogram *h)
{
	free(h->counts);
	*h = (struct histogram)HISTOGRAM_INIT;
}

void histogram_reset(struct histogram *h)
{
	uint64_t *counts = h->counts;

	if (counts)
		memset(counts, 0, HIST_COUNTS * sizeof(*counts));
	*h = (struct histogram)HISTOGRAM_INIT;
	h->counts = counts;
}

static unsigned bucket_of(uint64_t v)
{
	return 64 - __builtin_clzll(v | SUB_MASK) - HIST_SUB_BITS;
}

size_t histogram_index(uint64_t v)
{
	unsigned b;

	if (v > HIST_MAX_VALUE)
		v = HIST_MAX_VALUE;
	b = bucket_of(v);
	return ((size_t)(b + 1) << SUB_HALF_BITS) + (size_t)((v >> b) - SUB_HALF);
}

static uint64_t value_at(size_t i)
{
	long b = (long)(i >> SUB_HALF_BITS) - 1;
	uint64_t sub = (i & (SUB_HALF - 1)) + SUB_HALF;

	if (b < 0) {
		sub -= SUB_HALF;
		b = 0;
	}
	return sub << b;
}

static uint64_t width_at(size_t i)
{
	long b = (long)(i >> SUB_HALF_BITS) - 1;

	return UINT64_C(1) << (b < 0 ? 0 : b);
}

uint64_t histogram_lowest_equivalent(uint64_t v)
{
	return value_at(histogram_index(v));
}

uint64_t histogram_highest_equivalent(uint64_t v)
{
	size_t i = histogram_index(v);

	return value_at(i) + width_at(i) - 1;
}

void histogram_record_n(struct histogram *h, uint64_t v, uint64_t n)
{
	if (!n)
		return;
	if (v > HIST_MAX_VALUE) {
		v = HIST_MAX_VALUE;
		h->clamped += n;
	}
	h->counts[histogram_index(v)] += n;
	h->total += n;
	h->sum += (double)v * (double)n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void histogram_record(struct histogram *h, uint64_t v)
{
	histogram_record_n(h, v, 1);
}

void histogram_merge(struct histogram *dst, const struct histogram *src)
{
	if (!src->total)
		return;
	for (size_t i = 0; i < HIST_COUNTS; i++)
		dst->counts[i] += src->counts[i];
	dst->total += src->total;
	dst->sum += src->sum;
	dst->clamped += src->clamped;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t histogram_percentile(const struct histogram *h, double p)
{
	uint64_t want, seen = 0;

	if (!h->total)
		return 0;
	if (!(p > 0))
		return h->min;
	if (p >= 100)
		return h->max;
	want = (uint64_t)ceil(p / 100.0 * (double)h->total - 1e-9);
	if (want < 1)
		want = 1;
	for (size_t i = 0; i < HIST_COUNTS; i++) {
		seen += h->counts[i];
		if (seen >= want) {
			uint64_t v = value_at(i) + width_at(i) - 1;
			return v > h->max ? h->max : v;
		}
	}
	return h->max;
}

void histogram_summary(const struct histogram *h, struct hist_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->count = h->total;
	if (!h->total)
		return;
	s->p50 = histogram_percentile(h, 50);
	s->p90 = histogram_percentile(h, 90);
	s->p99 = histogram_percentile(h, 99);
	s->p999 = histogram_percentile(h, 99.9);
	s->min = h->min;
	s->max = h->max;
	s->mean = h->sum / (double)h->total;
}

void histogram_serialize(const struct histogram *h, struct strbuf *out)
{
	size_t gap = 0;

	strbuf_addstr(out, "h1");
	for (size_t i = 0; i < HIST_COUNTS; i++) {
		if (!h->counts[i]) {
			gap++;
			continue;
		}
		strbuf_addf(out, ";%zu:%" PRIu64, gap, h->counts[i]);
		gap = 0;
	}
}

static int parse_u64(const char **s, uint64_t *out)
{
	char *end;

	if (**s < '0' || **s > '9')
		return -1;
	errno = 0;
	*out = strtoull(*s, &end, 10);
	if (errno)
		return -1;
	*s = end;
	return 0;
}

int histogram_parse(struct histogram *h, const char *s)
{
	const char *p = s;
	size_t i = 0;
	bool first = true;

	if (strncmp(p, "h1", 2))
		return error("not a histogram: expected 'h1' at the start");
	p += 2;
	while (*p) {
		uint64_t gap, n, before;

		if (*p++ != ';' || parse_u64(&p, &gap) || *p++ != ':' || parse_u64(&p, &n) || !n)
			goto bad;
		if (gap >= HIST_COUNTS || (!first && i + 1 + gap > HIST_COUNTS - 1) || (first && gap > HIST_COUNTS - 1))
			return error("histogram: a slot past the end (%zu slots)", (size_t)HIST_COUNTS);
		i = first ? gap : i + 1 + gap;
		first = false;
		before = h->total;
		if (__builtin_add_overflow(before, n, &before))
			return error("histogram: the counts overflow");
		histogram_record_n(h, value_at(i), n);
	}
	return 0;
bad:
	return error("histogram: malformed at offset %zu: expected ';GAP:COUNT'", (size_t)(p - s));
}
