/*
 * heap-stats.c: the heap metrics of a run, from the stats-mode streams of
 * libhotloop-heap.so (preload/heap.c with HOTLOOP_HEAP_STATS=1): each image
 * writes a header, its peak (HEAP_EV_PEAK) and its totals (HEAP_EV_END).
 * The streams are parsed by lib/heap-record.c's hostile-input reader.
 */
#include <dirent.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "heap-record.h"
#include "heap-stats.h"
#include "strbuf.h"
#include "util.h"

/*
 * A stats stream holds its points (41 bytes, at most 100 a second: 14 MiB
 * in an hour) and a few dozen bytes more; anything far larger is not one.
 */
#define STATS_STREAM_CAP (64u << 20)
/* Images read per run at most: a fork bomb must not make this quadratic forever. */
#define STATS_MAX_IMAGES 100000

static uint64_t add_u64(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void heap_stats_env(const char *lib, const char *dir, const char *preload, char *env[3])
{
	if (preload && *preload)
		env[0] = xstrfmt("LD_PRELOAD=%s:%s", lib, preload);
	else
		env[0] = xstrfmt("LD_PRELOAD=%s", lib);
	env[1] = xstrfmt("%s=%s", HEAP_ENV_DIR, dir);
	env[2] = xstrfmt("%s=1", HEAP_ENV_STATS);
}

uint64_t heap_stats_peak(const struct heap_stats_image *v, size_t nr)
{
	uint64_t best = 0;

	for (size_t i = 0; i < nr; i++) {
		uint64_t t = v[i].start_ns, sum = 0;

		for (size_t j = 0; j < nr; j++)
			if (v[j].start_ns <= t && t < v[j].end_ns)
				sum = add_u64(sum, v[j].peak);
		if (sum > best)
			best = sum;
	}
	return best;
}

static int point_cmp(const void *a, const void *b)
{
	const struct heap_point *x = a, *y = b;

	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* The last of the points v[0..nr) (by time) at or before t, or NULL. */
static const struct heap_point *point_at(const struct heap_point *v, size_t nr, uint64_t t)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].time_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &v[lo - 1] : NULL;
}

/* One image's share of each span: its points, sorted here. */
static void add_spans(struct heap_point *pts, size_t n, uint64_t start, uint64_t end,
		      const struct heap_span *spans, size_t nr, struct heap_span_stats *out)
{
	if (n > 1)
		qsort(pts, n, sizeof(*pts), point_cmp);
	for (size_t k = 0; k < nr; k++) {
		const struct heap_span *sp = &spans[k];
		const struct heap_point *a, *b;
		uint64_t peak = 0;

		if (sp->end_ns <= start || sp->start_ns >= end)
			continue;	/* not alive in it */
		out[k].images++;
		a = point_at(pts, n, sp->start_ns);
		b = point_at(pts, n, sp->end_ns);
		if (a)
			peak = a->live;
		for (const struct heap_point *q = a ? a + 1 : pts; b && q <= b; q++)
			if (q->peak > peak)
				peak = q->peak;
		out[k].peak_bytes = add_u64(out[k].peak_bytes, peak);
		if (b) {
			out[k].allocs = add_u64(out[k].allocs, b->allocs - (a && a->allocs <= b->allocs ?
									    a->allocs : 0));
			out[k].alloc_bytes = add_u64(out[k].alloc_bytes,
						     b->alloc_bytes - (a && a->alloc_bytes <= b->alloc_bytes ?
								       a->alloc_bytes : 0));
		}
	}
}

int heap_stats_collect(const char *dir, struct heap_stats *st)
{
	return heap_stats_collect_spans(dir, st, NULL, 0, NULL);
}

int heap_stats_collect_spans(const char *dir, struct heap_stats *st, const struct heap_span *spans,
			     size_t nr_spans, struct heap_span_stats *out)
{
	struct strbuf sb = STRBUF_INIT;
	struct heap_stats_image *img = NULL;
	size_t nr = 0, alloc = 0;
	struct heap_stream s;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (nr_spans)
		memset(out, 0, nr_spans * sizeof(*out));
	if (!d)
		return error("cannot read '%s': %s", dir, strerror(errno));
	heap_stream_init(&s);
	while ((de = readdir(d))) {
		char *path;

		if (strncmp(de->d_name, "heap.", 5))
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		strbuf_reset(&sb);
		if (nr >= STATS_MAX_IMAGES || read_file(&sb, path, STATS_STREAM_CAP) ||
		    heap_stream_parse(&s, sb.buf, sb.len) || !(s.header.flags & HEAP_FILE_STATS)) {
			warning("skipped the heap stream '%s'", de->d_name);
		} else {
			ALLOC_GROW(img, nr + 1, alloc);
			img[nr++] = (struct heap_stats_image){
				.start_ns = s.header.start_ns,
				.end_ns = s.has_end ? s.end.end_ns : UINT64_MAX,
				.peak = s.stats_peak,
				.pid = s.header.pid,
				.exec = s.has_end && (s.stats_flags & HEAP_PEAK_EXEC),
			};
			st->streams++;
			add_spans(s.points, s.nr_points, img[nr - 1].start_ns, img[nr - 1].end_ns,
				  spans, nr_spans, out);
			if (!s.has_end) {
				st->cut_streams++;
			} else {
				st->allocs = add_u64(st->allocs, s.end.allocs);
				st->alloc_bytes = add_u64(st->alloc_bytes, s.end.alloc_bytes);
			}
		}
		unlink(path);
		free(path);
	}
	closedir(d);
	st->peak_bytes = heap_stats_peak(img, nr);
	for (size_t i = 0; i < nr; i++) {
		bool followed = false;

		for (size_t j = 0; img[i].exec && j < nr && !followed; j++)
			followed = j != i && img[j].pid == img[i].pid && img[j].start_ns >= img[i].end_ns;
		if (img[i].exec && !followed)
			st->lost_execs++;
	}
	heap_stream_release(&s);
	strbuf_release(&sb);
	free(img);
	return 0;
}
