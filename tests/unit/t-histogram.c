/*
 * t-histogram.c: unit tests for histogram.c: exact values below 2048,
 * percentiles of known sets against their exact values within the 1/1024
 * bound, merge equal to recording both, the edges (0, the max, clamping),
 * and the compact form read back equal, bad forms refused.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "test-helpers.h"
#include "histogram.h"
#include "strbuf.h"

static struct strbuf errors = STRBUF_INIT;

static void keep_error(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

/* The exact percentile as histogram.h defines it, over sorted v[0..n). */
static uint64_t exact_percentile(const uint64_t *v, size_t n, double p)
{
	size_t want = (size_t)ceil(p / 100.0 * (double)n - 1e-9);

	if (want < 1)
		want = 1;
	return v[want - 1];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_histogram__exact_small(void **state)
{
	struct histogram h;

	histogram_init(&h);
	for (uint64_t v = 0; v < 2048; v++) {
		assert_int_equal(histogram_lowest_equivalent(v), v);
		assert_int_equal(histogram_highest_equivalent(v), v);
	}
	for (uint64_t v = 1; v <= 1000; v++)
		histogram_record(&h, v);
	assert_int_equal(histogram_percentile(&h, 50), 500);
	assert_int_equal(histogram_percentile(&h, 90), 900);
	assert_int_equal(histogram_percentile(&h, 99), 990);
	assert_int_equal(histogram_percentile(&h, 99.9), 999);
	assert_int_equal(histogram_percentile(&h, 100), 1000);
	assert_int_equal(h.min, 1);
	assert_true(fabs(h.sum / h.total - 500.5) < 1e-9);
	histogram_release(&h);
}

static void test_histogram__precision(void **state)
{
	static const double ps[] = { 1, 10, 50, 90, 99, 99.9, 99.99 };
	uint64_t rng = 42, *v = malloc(100000 * sizeof(*v));
	struct histogram h;

	histogram_init(&h);
	for (size_t i = 0; i < 100000; i++) {
		/* log-uniform over 1 us .. 1 h */
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		v[i] = (uint64_t)exp(log(1e3) + (double)(rng >> 11) / 9007199254740992.0 * (log(3.6e12) - log(1e3)));
		histogram_record(&h, v[i]);
	}
	qsort(v, 100000, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < ARRAY_SIZE(ps); i++) {
		uint64_t want = exact_percentile(v, 100000, ps[i]), got = histogram_percentile(&h, ps[i]);

		if (got < want || (double)(got - want) > (double)want / 1024.0)
			fail_msg("p%g: got %" PRIu64 ", exact %" PRIu64, ps[i], got, want);
	}
	assert_int_equal(histogram_percentile(&h, 100), v[99999]);
	/* every value's slot is within 1/1024 of it */
	for (uint64_t x = 2048; x < HIST_MAX_VALUE / 2; x = x * 3 + 7) {
		uint64_t lo = histogram_lowest_equivalent(x), hi = histogram_highest_equivalent(x);

		assert_true(lo <= x && x <= hi);
		assert_true((double)(hi - lo + 1) <= (double)lo / 1024.0);
		assert_true(histogram_index(x) < HIST_COUNTS);
	}
	assert_int_equal(histogram_index(HIST_MAX_VALUE), HIST_COUNTS - 1);
	histogram_release(&h);
	free(v);
}

static void test_histogram__merge_and_edges(void **state)
{
	struct histogram a, b, both;
	struct hist_summary s;

	histogram_init(&a);
	histogram_init(&b);
	histogram_init(&both);
	histogram_summary(&a, &s);
	assert_int_equal(s.count, 0);
	assert_int_equal(histogram_percentile(&a, 50), 0);
	for (uint64_t v = 1; v < 50000; v += 7) {
		histogram_record(v % 2 ? &a : &b, v * 1000);
		histogram_record(&both, v * 1000);
	}
	histogram_record(&a, 0);
	histogram_record(&both, 0);
	histogram_record(&b, HIST_MAX_VALUE * 4);
	histogram_record(&both, HIST_MAX_VALUE * 4);
	histogram_merge(&a, &b);
	assert_int_equal(a.total, both.total);
	assert_memory_equal(a.counts, both.counts, HIST_COUNTS * sizeof(*a.counts));
	assert_int_equal(a.min, 0);
	assert_int_equal(a.max, HIST_MAX_VALUE);
	assert_int_equal(a.clamped, 1);
	histogram_summary(&a, &s);
	assert_int_equal(s.max, HIST_MAX_VALUE);
	assert_true(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.max);
	histogram_reset(&a);
	assert_int_equal(a.total, 0);
	assert_int_equal(histogram_percentile(&a, 99), 0);
	histogram_release(&a);
	histogram_release(&b);
	histogram_release(&both);
}

static void test_histogram__serialize(void **state)
{
	static const struct { const char *in; const char *err; } bad[] = {
		{ "", "expected 'h1'" }, { "h2", "expected 'h1'" }, { "h1;", "malformed" },
		{ "h1;1", "malformed" }, { "h1;1:", "malformed" }, { "h1;1:0", "malformed" },
		{ "h1;-1:2", "malformed" }, { "h1;99999999:1", "past the end" },
		{ "h1;0:1;33791:1", "past the end" }, { "h1;1:99999999999999999999", "malformed" },
		{ "h1;1:2x", "malformed" },
	};
	struct histogram h, back;
	struct strbuf sb = STRBUF_INIT, again = STRBUF_INIT;

	histogram_init(&h);
	histogram_init(&back);
	histogram_serialize(&h, &sb);
	assert_string_equal(sb.buf, "h1");
	for (uint64_t v = 1; v < 100000000; v = v * 2 + 1)
		histogram_record_n(&h, v, v % 5 + 1);
	strbuf_reset(&sb);
	histogram_serialize(&h, &sb);
	assert_int_equal(histogram_parse(&back, sb.buf), 0);
	assert_memory_equal(h.counts, back.counts, HIST_COUNTS * sizeof(*h.counts));
	histogram_serialize(&back, &again);
	assert_string_equal(sb.buf, again.buf);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		histogram_reset(&back);
		strbuf_reset(&errors);
		assert_int_equal(histogram_parse(&back, bad[i].in), -1);
		if (!strstr(errors.buf, bad[i].err))
			fail_msg("'%s': got '%s'", bad[i].in, errors.buf);
	}
	histogram_reset(&back);
	assert_int_equal(histogram_parse(&back, "h1;33791:3"), 0);
	assert_int_equal(back.total, 3);
	strbuf_release(&sb);
	strbuf_release(&again);
	histogram_release(&h);
	histogram_release(&back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_histogram__exact_small),
		cmocka_unit_test(test_histogram__precision),
		cmocka_unit_test(test_histogram__merge_and_edges),
		cmocka_unit_test(test_histogram__serialize),
	};
	int ret;

	set_error_routine(keep_error);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	strbuf_release(&errors);
	return ret;
}
