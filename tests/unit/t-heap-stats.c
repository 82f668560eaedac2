/*
 * t-heap-stats.c: unit tests of the heap metrics of a run (lib/heap-stats.c):
 * the peak over processes alive at once, and stats-mode streams built by
 * hand in a directory: totals summed, an exec with no image after it
 * counted as lost, a file that is not a stats stream skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util.h"
#include "heap-stats.h"
#include "heap-stream.h"

static void quiet(const char *prefix, const char *msg)
{
}

static int setup(void **state)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

static void test_heap_stats__peak_over_processes(void **state)
{
	static const struct {
		struct heap_stats_image v[4];
		size_t nr;
		uint64_t want;
	} cases[] = {
		{ { { 0, 0, 0, 0, false } }, 0, 0 },
		{ { { 10, 20, 500, 1, false } }, 1, 500 },
		/* an exec chain: one after the other, the larger counts */
		{ { { 10, 20, 500, 1, true }, { 20, 30, 700, 1, false } }, 2, 700 },
		/* a shell and its child at once: they add up */
		{ { { 10, 50, 100, 1, false }, { 20, 30, 700, 2, false }, { 30, 40, 900, 3, false } }, 3, 1000 },
		/* a stream without its end is alive to the end */
		{ { { 10, UINT64_MAX, 100, 1, false }, { 90, 95, 50, 2, false } }, 2, 150 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(heap_stats_peak(cases[i].v, cases[i].nr), cases[i].want);
}

/* A stats stream as the preload writes it. */
static void write_stream(const char *dir, const char *name, uint32_t pid, uint64_t start,
			 uint64_t end, uint64_t peak, uint8_t flags, uint64_t allocs, uint64_t bytes)
{
	struct heap_file_header h = { .magic = HEAP_STREAM_MAGIC, .version = HEAP_STREAM_VERSION,
				      .pid = pid, .flags = HEAP_FILE_STATS, .rate = 1, .start_ns = start };
	struct heap_end_event e = { .allocs = allocs, .alloc_bytes = bytes, .end_ns = end };
	struct heap_chunk_header c = { .len = 1 + 8 + 1 + 1 + sizeof(e), .tid = pid };
	char *path = xstrfmt("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	uint8_t t;

	assert_non_null(f);
	fwrite(&h, sizeof(h), 1, f);
	fwrite(&c, sizeof(c), 1, f);
	t = HEAP_EV_PEAK;
	fwrite(&t, 1, 1, f);
	fwrite(&peak, 8, 1, f);
	fwrite(&flags, 1, 1, f);
	t = HEAP_EV_END;
	fwrite(&t, 1, 1, f);
	fwrite(&e, sizeof(e), 1, f);
	fclose(f);
	free(path);
}

static void test_heap_stats__collect(void **state)
{
	char dir[] = "/tmp/t-heap-stats.XXXXXX";
	struct heap_stats st = { 0 };
	char *junk;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	/* pid 1: a shell that execs (followed by its new image); pid 2 execs a static program */
	write_stream(dir, "heap.1.0", 1, 10, 20, 300, HEAP_PEAK_EXEC, 5, 50);
	write_stream(dir, "heap.1.1", 1, 21, 90, 4000, 0, 1000, 64000);
	write_stream(dir, "heap.2.0", 2, 30, 40, 100, HEAP_PEAK_EXEC, 2, 20);
	junk = xstrfmt("%s/heap.3.0", dir);
	assert_non_null(f = fopen(junk, "w"));
	fputs("not a stream", f);
	fclose(f);
	assert_int_equal(heap_stats_collect(dir, &st), 0);
	assert_int_equal(st.streams, 3);
	assert_int_equal(st.cut_streams, 0);
	assert_int_equal(st.allocs, 1007);
	assert_int_equal(st.alloc_bytes, 64070);
	assert_int_equal(st.peak_bytes, 4100);
	assert_int_equal(st.lost_execs, 1);
	/* the streams are removed */
	assert_int_equal(access(junk, F_OK), -1);
	assert_int_equal(rmdir(dir), 0);
	free(junk);
	assert_int_equal(heap_stats_collect(dir, &st), -1);
}

/* A stats stream with points: pts[0..split) in one chunk, the rest in a second, then its end. */
static void write_points(const char *dir, const char *name, uint32_t pid, uint64_t start,
			 uint64_t end, const struct heap_point *pts, size_t n, size_t split)
{
	struct heap_file_header h = { .magic = HEAP_STREAM_MAGIC, .version = HEAP_STREAM_VERSION,
				      .pid = pid, .flags = HEAP_FILE_STATS, .rate = 1, .start_ns = start };
	struct heap_end_event e = { .allocs = pts[n - 1].allocs, .alloc_bytes = pts[n - 1].alloc_bytes,
				    .end_ns = end };
	char *path = xstrfmt("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	uint8_t t = HEAP_EV_POINT;

	assert_non_null(f);
	fwrite(&h, sizeof(h), 1, f);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || i == split) {
			size_t k = i == 0 ? split : n - split;
			struct heap_chunk_header c = { .len = (uint32_t)(k * (1 + sizeof(*pts))), .tid = pid };

			fwrite(&c, sizeof(c), 1, f);
		}
		fwrite(&t, 1, 1, f);
		fwrite(&pts[i], sizeof(pts[i]), 1, f);
	}
	{
		struct heap_chunk_header c = { .len = 1 + sizeof(e), .tid = pid };

		fwrite(&c, sizeof(c), 1, f);
		t = HEAP_EV_END;
		fwrite(&t, 1, 1, f);
		fwrite(&e, sizeof(e), 1, f);
	}
	fclose(f);
	free(path);
}

static void test_heap_stats__spans(void **state)
{
	char dir[] = "/tmp/t-heap-stats.XXXXXX";
	/* time, live, peak since the point before, allocs and bytes so far; out of time order */
	const struct heap_point a[] = {
		{ 300, 20, 500, 30, 400 }, { 600, 0, 20, 30, 400 },
		{ 200, 50, 80, 10, 100 }, { 1000, 0, 0, 35, 450 },
	};
	const struct heap_point b[] = { { 500, 1000, 1000, 7, 70 }, { 800, 0, 1000, 7, 70 } };
	const struct heap_span spans[] = { { 0, 150 }, { 150, 350 }, { 350, 700 }, { 700, 2000 },
					   { 2000, 3000 } };
	const struct heap_span_stats want[] = {
		{ 0, 0, 0, 1 },		/* a started, took no point yet */
		{ 500, 30, 400, 1 },	/* a's two points */
		{ 1020, 7, 70, 2 },	/* a idle at 20 live bytes, b's 1000 */
		{ 1000, 5, 50, 2 },	/* b's live at the start; a's last allocations */
		{ 0, 0, 0, 0 },		/* both gone */
	};
	struct heap_span_stats got[5];
	struct heap_stats st = { 0 };

	assert_non_null(mkdtemp(dir));
	write_points(dir, "heap.1.0", 1, 100, 1000, a, 4, 2);
	write_points(dir, "heap.2.0", 2, 400, 800, b, 2, 1);
	assert_int_equal(heap_stats_collect_spans(dir, &st, spans, 5, got), 0);
	assert_int_equal(st.allocs, 42);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(got[i].peak_bytes, want[i].peak_bytes);
		assert_int_equal(got[i].allocs, want[i].allocs);
		assert_int_equal(got[i].alloc_bytes, want[i].alloc_bytes);
		assert_int_equal(got[i].images, want[i].images);
	}
	assert_int_equal(rmdir(dir), 0);
}

static void test_heap_stats__env(void **state)
{
	char *env[3];

	heap_stats_env("/lib/x.so", "/tmp/d", "/other.so", env);
	assert_string_equal(env[0], "LD_PRELOAD=/lib/x.so:/other.so");
	assert_string_equal(env[1], "HOTLOOP_HEAP_DIR=/tmp/d");
	assert_string_equal(env[2], "HOTLOOP_HEAP_STATS=1");
	for (int i = 0; i < 3; i++)
		free(env[i]);
	heap_stats_env("/lib/x.so", "/tmp/d", NULL, env);
	assert_string_equal(env[0], "LD_PRELOAD=/lib/x.so");
	for (int i = 0; i < 3; i++)
		free(env[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_stats__peak_over_processes),
		cmocka_unit_test(test_heap_stats__collect),
		cmocka_unit_test(test_heap_stats__spans),
		cmocka_unit_test(test_heap_stats__env),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
