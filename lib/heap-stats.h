/*
 * heap-stats.h: heap metrics of a measured run (bench, compare, the loop):
 * the run's processes have libhotloop-heap.so preloaded in stats mode
 * (counts and the live peak only, no stacks), and afterwards their streams
 * give heap-peak, allocs and alloc-bytes. Plain data; the caller owns it.
 */
#ifndef HOTLOOP_HEAP_STATS_H
#define HOTLOOP_HEAP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The metric names a run's heap measurement adds (docs/heap.md). */
#define HEAP_METRIC_PEAK "heap-peak"
#define HEAP_METRIC_ALLOCS "allocs"
#define HEAP_METRIC_BYTES "alloc-bytes"

/* One process image's totals, from its stream. */
struct heap_stats_image {
	uint64_t start_ns, end_ns;	/* end UINT64_MAX: the stream has no end */
	uint64_t peak;
	uint32_t pid;
	bool exec;			/* it ended at an exec */
};

struct heap_stats {
	uint64_t allocs, alloc_bytes;	/* summed over every process image */
	uint64_t peak_bytes;		/* the highest sum of peaks of images alive at once */
	size_t streams, cut_streams;	/* images read; of them, without their end */
	size_t lost_execs;		/* execs whose new image wrote no stream (static, setuid, LD_PRELOAD cleared) */
};

/*
 * The environment a run gets (NAME=VALUE strings, caller frees each): the
 * preload 'lib' in LD_PRELOAD (before 'preload', the run's own, when not
 * NULL), streams to 'dir', stats mode. Three strings into env[0..2].
 */
void heap_stats_env(const char *lib, const char *dir, const char *preload, char *env[3]);

/*
 * Read the stats streams in 'dir' (heap.PID.N, as the preload names them),
 * add them into *st and remove them. 0, or -1 with an error when dir
 * cannot be read. A file that is not a stats stream is skipped with a
 * warning.
 */
int heap_stats_collect(const char *dir, struct heap_stats *st);

/* A span of the run (CLOCK_MONOTONIC nanoseconds, [start, end)): a scenario's phase. */
struct heap_span {
	uint64_t start_ns, end_ns;
};

/*
 * The heap in a span, from the points each image took (HEAP_EV_POINT: at
 * most every 10 ms while it calls the allocator, and at its end): what
 * came after an image's last point before a boundary counts in the next
 * span. Summed over the images alive in it.
 */
struct heap_span_stats {
	uint64_t peak_bytes;	/* the highest live total in it, the live at its start included */
	uint64_t allocs, alloc_bytes;	/* made in it */
	size_t images;		/* images alive in it */
};

/*
 * heap_stats_collect(), and the heap in each of spans[0..nr) into
 * out[0..nr) (zeroed first).
 */
int heap_stats_collect_spans(const char *dir, struct heap_stats *st, const struct heap_span *spans,
			     size_t nr, struct heap_span_stats *out);

/*
 * The peak over processes: at each image's start, the sum of the peaks of
 * the images alive then (started, not yet ended); the highest of these.
 * Sequential images (an exec chain, a script's steps) count one at a time;
 * concurrent ones (a pipeline, a server's workers) add up.
 */
uint64_t heap_stats_peak(const struct heap_stats_image *v, size_t nr);

#endif
