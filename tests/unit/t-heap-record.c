/*
 * t-heap-record.c: unit tests of the heap recorder's math and stream reader
 * (lib/heap-record.c, lib/heap-stream.h): the sampling gaps and weights,
 * streams built by hand (good, cut, hostile), pairing allocations with
 * frees, and the profile they become.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "record.h"
#include "heap-profile.h"
#include "heap-record.h"

static void quiet(const char *prefix, const char *msg)
{
}

static int setup(void **state)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

static void test_heap__gaps_are_exponential_with_the_mean(void **state)
{
	uint64_t rng = 0x1234567890abcdefull, mean = 512 * 1024;
	double sum = 0, sq = 0;
	const int n = 200000;

	for (int i = 0; i < n; i++) {
		double g = (double)heap_next_gap(&rng, mean);

		assert_true(g >= 1);
		sum += g;
		sq += g * g;
	}
	/* an exponential's mean and standard deviation are both the mean */
	assert_true(fabs(sum / n - (double)mean) < 0.01 * (double)mean);
	assert_true(fabs(sqrt(sq / n - (sum / n) * (sum / n)) - (double)mean) < 0.02 * (double)mean);
	assert_int_equal(heap_next_gap(&rng, 1), 1);
}

static void test_heap__weights_unbias_the_counts(void **state)
{
	uint64_t rng = 42, rate = 256, sizes[] = { 1, 16, 256, 10000 };

	assert_true(heap_weight(100, 1) == 1.0);
	assert_true(fabs(heap_weight(4096, 4096) - 1.0 / (1.0 - exp(-1.0))) < 1e-12);
	assert_true(fabs(heap_weight(1 << 30, 4096) - 1.0) < 1e-9);
	assert_true(heap_weight(0, 4096) == heap_weight(1, 4096));
	/*
	 * Simulate the sampler over many allocations of one size: the weighted
	 * count of the sampled ones estimates the true count.
	 */
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint64_t until = heap_next_gap(&rng, rate), s = sizes[k];
		/* some 40000 samples each: a standard error of 0.5% */
		const int n = s * 200000 > 40000 * rate ? 200000 : (int)(40000 * rate / s);
		double est = 0;

		for (int i = 0; i < n; i++) {
			if (until <= s) {
				until = heap_next_gap(&rng, rate);
				est += heap_weight(s, rate);
			} else {
				until -= s;
			}
		}
		if (fabs(est - n) >= 0.05 * n)
			print_error("size %llu: estimate %.0f of %d\n", (unsigned long long)s, est, n);
		assert_true(fabs(est - n) < 0.05 * n);
	}
}

/* A stream under construction. */
struct sb {
	struct strbuf b;
	size_t chunk;		/* where the open chunk's header is */
	uint64_t prev_seq, prev_addr;	/* the chunk's last allocation or free */
};

static void put(struct sb *s, const void *p, size_t n)
{
	strbuf_add(&s->b, p, n);
}

static void start(struct sb *s, uint64_t rate)
{
	struct heap_file_header h = { .magic = HEAP_STREAM_MAGIC, .version = HEAP_STREAM_VERSION,
				      .pid = 4242, .rate = rate };

	strbuf_init(&s->b, 0);
	put(s, &h, sizeof(h));
}

static void chunk_begin(struct sb *s)
{
	struct heap_chunk_header c = { 0, 1 };

	s->chunk = s->b.len;
	s->prev_seq = s->prev_addr = 0;
	put(s, &c, sizeof(c));
}

static void chunk_end(struct sb *s)
{
	uint32_t len = (uint32_t)(s->b.len - s->chunk - sizeof(struct heap_chunk_header));

	memcpy(s->b.buf + s->chunk, &len, 4);
}

static void ev_stack(struct sb *s, uint32_t id, const uint64_t *pcs, uint16_t n)
{
	uint8_t t = HEAP_EV_STACK;

	put(s, &t, 1);
	put(s, &id, 4);
	put(s, &n, 2);
	put(s, pcs, 8u * (n & (uint16_t)~HEAP_STACK_CUT));
}

static void put_varint(struct sb *s, uint64_t v)
{
	unsigned char buf[10];

	put(s, buf, (size_t)(heap_put_varint(buf, v) - buf));
}

static void put_seq_addr(struct sb *s, uint64_t seq, uint64_t addr)
{
	put_varint(s, seq - s->prev_seq);
	put_varint(s, heap_zigzag(addr - s->prev_addr));
	s->prev_seq = seq;
	s->prev_addr = addr;
}

static void ev_alloc(struct sb *s, uint8_t op, uint32_t stack, uint64_t seq, uint64_t addr,
		     uint64_t size)
{
	uint8_t t = HEAP_EV_ALLOC, flags = 0;

	put(s, &t, 1);
	put(s, &op, 1);
	put(s, &flags, 1);
	put_varint(s, stack);
	put_seq_addr(s, seq, addr);
	put_varint(s, size);
}

static void ev_free(struct sb *s, uint64_t seq, uint64_t addr, uint8_t flags)
{
	uint8_t t = HEAP_EV_FREE;

	put(s, &t, 1);
	put(s, &flags, 1);
	put_seq_addr(s, seq, addr);
}

static void ev_tick(struct sb *s, uint64_t time_ns, uint64_t seq)
{
	uint8_t t = HEAP_EV_TICK;

	put(s, &t, 1);
	put(s, &time_ns, 8);
	put(s, &seq, 8);
}

static void ev_end(struct sb *s)
{
	struct heap_end_event e = { .allocs = 5, .end_ns = 9000 };
	uint8_t t = HEAP_EV_END;

	put(s, &t, 1);
	put(s, &e, sizeof(e));
}

/*
 * The stream of a program that allocates A (stack 1, 100 bytes) and frees
 * it at once, allocates B (stack 2, 200 bytes), frees it, reallocs it in
 * place to 300, leaks C (stack 1, 50 bytes: the peak, 350) and frees B.
 * Live bytes by sequence: 100 0 200 0 300 350 50.
 */
static void sample_stream(struct sb *s)
{
	const uint64_t pcs1[] = { 0x401000, 0x402000 }, pcs2[] = { 0x403000 };

	start(s, 1);
	chunk_begin(s);
	ev_stack(s, 1, pcs1, 2);
	ev_alloc(s, HEAP_OP_MALLOC, 1, 0, 0x1000, 100);
	ev_free(s, 1, 0x1000, HEAP_FREE_TEMP);
	ev_stack(s, 2, pcs2, 1);
	ev_alloc(s, HEAP_OP_MALLOC, 2, 2, 0x2000, 200);
	ev_tick(s, 1000, 3);
	chunk_end(s);
	chunk_begin(s);
	ev_free(s, 3, 0x2000, 0);
	ev_alloc(s, HEAP_OP_REALLOC, 2, 4, 0x2000, 300);
	ev_alloc(s, HEAP_OP_MALLOC, 1, 5, 0x3000, 50);
	ev_free(s, 6, 0x2000, 0);
	ev_end(s);
	chunk_end(s);
}

static void test_heap__parse_and_match(void **state)
{
	struct sb s;
	struct heap_stream st;

	sample_stream(&s);
	heap_stream_init(&st);
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), 0);
	assert_false(st.cut);
	assert_true(st.has_end);
	assert_int_equal(st.header.pid, 4242);
	assert_int_equal(st.nr_allocs, 4);
	assert_int_equal(st.nr_frees, 3);
	assert_int_equal(st.nr_stacks, 3);
	assert_int_equal(st.stack_len[1], 2);
	assert_int_equal(st.pcs[st.stack_off[1] + 1], 0x402000);
	assert_int_equal(st.nr_chunks, 2);
	heap_stream_match(&st);
	/* sites: stack 1 malloc (A, C), stack 2 malloc (B), stack 2 realloc */
	assert_int_equal(st.nr_sites, 3);
	assert_int_equal(st.sites[0].key, 1u << 2 | HEAP_OP_MALLOC);
	assert_true(st.sites[0].v[HEAP_ALLOC_OBJECTS] == 2);
	assert_true(st.sites[0].v[HEAP_TEMP_OBJECTS] == 1);	/* A, freed at once */
	assert_true(st.sites[0].v[HEAP_INUSE_SPACE] == 50);	/* C at the peak */
	assert_true(st.sites[0].v[HEAP_LEAK_SPACE] == 50);	/* C at exit */
	assert_true(st.sites[1].v[HEAP_TEMP_OBJECTS] == 0);	/* B, freed by its realloc */
	assert_true(st.sites[1].v[HEAP_INUSE_SPACE] == 0);
	assert_true(st.sites[2].v[HEAP_INUSE_SPACE] == 300);	/* the realloc'd B at the peak */
	assert_true(st.sites[2].v[HEAP_LEAK_SPACE] == 0);	/* freed after it */
	assert_int_equal(st.peak_bytes, 350);
	assert_int_equal(st.peak_seq, 6);
	/* the tick before event 3 sees B alone; the end sees C */
	assert_int_equal(st.nr_live, 2);
	assert_int_equal(st.live[0].time_ns, 1000);
	assert_int_equal(st.live[0].bytes, 200);
	assert_int_equal(st.live[1].time_ns, 9000);
	assert_int_equal(st.live[1].bytes, 50);
	heap_stream_release(&st);
	strbuf_release(&s.b);
}

static int64_t value_of(const struct profile *p, uint64_t leaf_addr, int type)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct pf_sample *s = &p->samples[i];
		const struct pf_location *l;

		if (!s->nloc)
			continue;
		l = profile_location(p, profile_sample_locs(p, s)[0]);
		if (l && l->address == leaf_addr)
			sum += profile_sample_values(p, s)[type];
	}
	return sum;
}

static void test_heap__the_profile(void **state)
{
	struct sb s;
	struct heap_stream st;
	struct recording *r = recording_new(SAMPLER_CALLGRAPH_FP, 0);
	struct recording_info info = { .event = "hotloop-heap: rate=1", .freq = 1 };
	struct profile p;

	sample_stream(&s);
	heap_stream_init(&st);
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), 0);
	heap_stream_match(&st);
	recording_set_heap(r);
	heap_stream_add(&st, r);
	profile_init(&p);
	assert_int_equal(recording_build(r, &p, &info), 0);
	assert_true(profile_is_heap(&p));
	assert_int_equal(p.nr_sample_type, HEAP_NR_SAMPLE_TYPES);
	assert_string_equal(profile_string(&p, p.default_sample_type), "alloc_space");
	/* stack 1: A (100, temporary) and C (50, leaked); stack 2: B then its realloc */
	assert_int_equal(value_of(&p, 0x401000, HEAP_ALLOC_OBJECTS), 2);
	assert_int_equal(value_of(&p, 0x401000, HEAP_ALLOC_SPACE), 150);
	assert_int_equal(value_of(&p, 0x401000, HEAP_TEMP_OBJECTS), 1);
	assert_int_equal(value_of(&p, 0x401000, HEAP_LEAK_SPACE), 50);
	assert_int_equal(value_of(&p, 0x403000, HEAP_ALLOC_SPACE), 500);
	/* at the peak (6 events in): the realloc'd B and C are live */
	assert_int_equal(value_of(&p, 0x403000, HEAP_INUSE_SPACE), 300);
	assert_int_equal(value_of(&p, 0x401000, HEAP_INUSE_SPACE), 50);
	assert_int_equal(value_of(&p, 0x403000, HEAP_LEAK_OBJECTS), 0);
	assert_int_equal(profile_total(&p, HEAP_ALLOC_OBJECTS), 4);
	profile_release(&p);
	recording_free(r);
	heap_stream_release(&st);
	strbuf_release(&s.b);
}

/*
 * Two threads' chunks, the second written out after the first though its
 * events interleave with it: the replay merges them by seq. Live bytes
 * by seq: 100 (A) 1100 (C, the peak) 100 300 (B) 200 250 (D); read in
 * the file's order the peak would be 1300.
 */
static void test_heap__threads_interleave(void **state)
{
	struct sb s;
	struct heap_stream st;
	const uint64_t pcs1[] = { 0x401000 }, pcs2[] = { 0x403000 };

	start(&s, 1);
	chunk_begin(&s);
	ev_stack(&s, 1, pcs1, 1);
	ev_alloc(&s, HEAP_OP_MALLOC, 1, 0, 0x1000, 100);	/* A */
	ev_alloc(&s, HEAP_OP_MALLOC, 1, 3, 0x2000, 200);	/* B */
	ev_free(&s, 4, 0x1000, 0);
	chunk_end(&s);
	chunk_begin(&s);
	ev_stack(&s, 2, pcs2, 1);
	ev_alloc(&s, HEAP_OP_MALLOC, 2, 1, 0x9000, 1000);	/* C */
	ev_free(&s, 2, 0x9000, HEAP_FREE_TEMP);
	ev_alloc(&s, HEAP_OP_MALLOC, 2, 5, 0xa000, 50);		/* D */
	chunk_end(&s);
	heap_stream_init(&st);
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), 0);
	heap_stream_match(&st);
	assert_int_equal(st.peak_bytes, 1100);
	assert_int_equal(st.peak_seq, 2);
	assert_int_equal(st.nr_sites, 2);
	/* in use at the peak: A and C; at the end: B and D */
	assert_true(st.sites[0].v[HEAP_INUSE_SPACE] == 100);
	assert_true(st.sites[1].v[HEAP_INUSE_SPACE] == 1000);
	assert_true(st.sites[0].v[HEAP_LEAK_SPACE] == 200);
	assert_true(st.sites[1].v[HEAP_LEAK_SPACE] == 50);
	assert_true(st.sites[1].v[HEAP_TEMP_OBJECTS] == 1);
	heap_stream_release(&st);
	strbuf_release(&s.b);

	/* a block of 5 GiB: its size whole when it is freed */
	start(&s, 1);
	chunk_begin(&s);
	ev_stack(&s, 1, pcs1, 1);
	ev_alloc(&s, HEAP_OP_MALLOC, 1, 0, 0x1000, 5ull << 30);
	ev_alloc(&s, HEAP_OP_MALLOC, 1, 1, 0x2000, 10);
	ev_free(&s, 2, 0x1000, 0);
	chunk_end(&s);
	heap_stream_init(&st);
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), 0);
	heap_stream_match(&st);
	assert_int_equal(st.peak_bytes, (5ull << 30) + 10);
	assert_true(st.sites[0].v[HEAP_LEAK_SPACE] == 10);
	assert_true(st.sites[0].v[HEAP_INUSE_SPACE] == (double)((5ull << 30) + 10));
	heap_stream_release(&st);
	strbuf_release(&s.b);
}

/*
 * Sampled at 1000 bytes: 3 allocations of 100 bytes at stack 1 and one of
 * 5000 at stack 2 were drawn, and the process counted 40 allocations and
 * 9000 bytes in all. The profile's totals are those; each site keeps its
 * share of the weights (a 100-byte sample stands for 10.5 allocations,
 * the 5000-byte one for 1.007), and the in-use values scale with them.
 */
static void test_heap__sampled_totals_are_exact(void **state)
{
	struct sb s;
	struct heap_stream st;
	struct recording *r = recording_new(SAMPLER_CALLGRAPH_FP, 0);
	struct recording_info info = { .event = "hotloop-heap: rate=1000", .freq = 1000 };
	struct heap_end_event e = { .allocs = 40, .alloc_bytes = 9000, .end_ns = 9000 };
	const uint64_t pcs1[] = { 0x401000 }, pcs2[] = { 0x403000 };
	double w1 = heap_weight(100, 1000), w2 = heap_weight(5000, 1000);
	double objects = 40 / (3 * w1 + w2), bytes = 9000 / (300 * w1 + 5000 * w2);
	struct profile p;
	uint8_t t = HEAP_EV_END;

	start(&s, 1000);
	chunk_begin(&s);
	ev_stack(&s, 1, pcs1, 1);
	ev_stack(&s, 2, pcs2, 1);
	ev_alloc(&s, HEAP_OP_MALLOC, 1, 0, 0x1000, 100);
	ev_alloc(&s, HEAP_OP_MALLOC, 1, 1, 0x2000, 100);
	ev_alloc(&s, HEAP_OP_MALLOC, 2, 2, 0x3000, 5000);
	ev_alloc(&s, HEAP_OP_MALLOC, 1, 3, 0x4000, 100);
	put(&s, &t, 1);
	put(&s, &e, sizeof(e));
	chunk_end(&s);
	heap_stream_init(&st);
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), 0);
	heap_stream_match(&st);
	recording_set_heap(r);
	heap_stream_add(&st, r);
	profile_init(&p);
	assert_int_equal(recording_build(r, &p, &info), 0);
	assert_int_equal(profile_total(&p, HEAP_ALLOC_OBJECTS), 40);
	assert_int_equal(profile_total(&p, HEAP_ALLOC_SPACE), 9000);
	assert_int_equal(value_of(&p, 0x401000, HEAP_ALLOC_OBJECTS), llround(3 * w1 * objects));
	assert_int_equal(value_of(&p, 0x403000, HEAP_ALLOC_SPACE), llround(5000 * w2 * bytes));
	/* nothing freed: the peak is the end, everything is in use there */
	assert_int_equal(profile_total(&p, HEAP_INUSE_SPACE), 9000);
	assert_int_equal(st.peak_bytes, 9000);
	profile_release(&p);
	recording_free(r);
	heap_stream_release(&st);
	strbuf_release(&s.b);
}

/*
 * Stack ids past heap_stack_ids(max_stacks) are not kept: their allocations
 * count with no stack; a stack marked cut counts as cut. Totals stay.
 */
static void test_heap__stacks_past_the_limit(void **state)
{
	struct sb s;
	struct heap_stream st;
	struct recording *r = recording_new(SAMPLER_CALLGRAPH_FP, 0);
	struct recording_info info = { .event = "hotloop-heap: rate=1", .freq = 1 };
	struct profile p;
	const uint64_t pcs[2] = { 0x401000, 0x402000 };
	uint32_t over = heap_stack_ids(1) + 1;

	start(&s, 1);
	chunk_begin(&s);
	ev_stack(&s, 1, pcs, 2);
	ev_stack(&s, 2, pcs, 1 | HEAP_STACK_CUT);
	ev_stack(&s, over, pcs, 2);
	ev_alloc(&s, HEAP_OP_MALLOC, 1, 0, 0x1000, 10);
	ev_alloc(&s, HEAP_OP_MALLOC, 2, 1, 0x2000, 20);
	ev_alloc(&s, HEAP_OP_MALLOC, 2, 2, 0x3000, 30);
	ev_alloc(&s, HEAP_OP_MALLOC, over, 3, 0x4000, 40);
	ev_alloc(&s, HEAP_OP_MALLOC, 0, 4, 0x5000, 50);
	chunk_end(&s);
	heap_stream_init(&st);
	st.max_stacks = 1;
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), 0);
	assert_int_equal(st.max_stacks, 1);
	assert_true(st.nr_stacks <= 3);
	heap_stream_match(&st);
	recording_set_heap(r);
	heap_stream_add(&st, r);
	assert_true(st.cut_allocs == 2 && st.cut_bytes == 50);
	assert_true(st.stackless_allocs == 2 && st.stackless_bytes == 90);
	profile_init(&p);
	assert_int_equal(recording_build(r, &p, &info), 0);
	assert_int_equal(profile_total(&p, HEAP_ALLOC_OBJECTS), 5);
	assert_int_equal(profile_total(&p, HEAP_ALLOC_SPACE), 150);
	profile_release(&p);
	recording_free(r);
	heap_stream_release(&st);
	strbuf_release(&s.b);
}

static void test_heap__cut_and_hostile_streams(void **state)
{
	struct sb s;
	struct heap_stream st;
	size_t full;

	sample_stream(&s);
	full = s.b.len;
	heap_stream_init(&st);
	/* cut inside the second chunk: the first one is kept */
	assert_int_equal(heap_stream_parse(&st, s.b.buf, full - 10), 0);
	assert_true(st.cut);
	assert_false(st.has_end);
	assert_int_equal(st.nr_allocs, 2);
	/* every prefix and every single-byte corruption: no crash */
	for (size_t n = 0; n <= full; n++)
		heap_stream_parse(&st, s.b.buf, n);
	for (size_t i = 0; i < full; i++) {
		char saved = s.b.buf[i];

		for (int v = 0; v < 256; v += 51) {
			s.b.buf[i] = (char)v;
			heap_stream_parse(&st, s.b.buf, full);
		}
		s.b.buf[i] = saved;
	}
	/* not a stream */
	assert_int_equal(heap_stream_parse(&st, "hello", 5), -1);
	s.b.buf[0] = 'X';
	assert_int_equal(heap_stream_parse(&st, s.b.buf, full), -1);
	heap_stream_release(&st);
	strbuf_release(&s.b);
}

static void test_heap__bad_events_are_errors(void **state)
{
	struct sb s;
	struct heap_stream st;
	uint8_t bad = 99;
	const uint64_t pcs[1] = { 1 };

	heap_stream_init(&st);
	start(&s, 1);
	chunk_begin(&s);
	put(&s, &bad, 1);
	chunk_end(&s);
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), -1);
	strbuf_release(&s.b);

	/* a stack id far out of range */
	start(&s, 1);
	chunk_begin(&s);
	ev_stack(&s, 0xffffffffu, pcs, 1);
	chunk_end(&s);
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), -1);
	strbuf_release(&s.b);

	/* an op out of range */
	start(&s, 1);
	chunk_begin(&s);
	ev_alloc(&s, 7, 0, 0, 0x10, 1);
	chunk_end(&s);
	assert_int_equal(heap_stream_parse(&st, s.b.buf, s.b.len), -1);
	strbuf_release(&s.b);
	heap_stream_release(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap__gaps_are_exponential_with_the_mean),
		cmocka_unit_test(test_heap__weights_unbias_the_counts),
		cmocka_unit_test(test_heap__parse_and_match),
		cmocka_unit_test(test_heap__the_profile),
		cmocka_unit_test(test_heap__threads_interleave),
		cmocka_unit_test(test_heap__sampled_totals_are_exact),
		cmocka_unit_test(test_heap__stacks_past_the_limit),
		cmocka_unit_test(test_heap__cut_and_hostile_streams),
		cmocka_unit_test(test_heap__bad_events_are_errors),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
