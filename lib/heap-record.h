/*
 * heap-record.h: `hotloop record --heap` as a library. heap_record_run()
 * runs a command with libhotloop-heap.so preloaded, reads the stream every
 * process image of its tree wrote (heap-stream.h), and writes one heap
 * profile (heap-profile.h) and the heap's size over time beside it. The
 * stream reader and the sampling math are exposed for tests.
 *
 * A struct heap_stream owns its arrays; the caller owns the rest.
 */
#ifndef HOTLOOP_HEAP_RECORD_H
#define HOTLOOP_HEAP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heap-profile.h"
#include "heap-stream.h"

struct strbuf;
struct recording;

#define HEAP_DEFAULT_RATE (512 * 1024)

struct heap_record_options {
	char **argv;		/* the command */
	const char *output;	/* the profile to write */
	uint64_t rate;		/* mean bytes between samples; 1: every allocation; 0: default */
	const char *lib;	/* the preload; NULL: heap_find_lib() */
	uint32_t max_stacks;	/* distinct stacks kept whole per process; 0: HEAP_DEFAULT_MAX_STACKS */
};

struct heap_record_result {
	int wait_status;	/* the command's, as from waitpid() */
	uint64_t duration_ns;
	uint64_t streams;	/* process images recorded */
	uint64_t cut_streams;	/* streams without their end (killed, still running) */
	uint64_t allocs, alloc_bytes;	/* what the processes counted, sampled or not */
	uint64_t sampled;	/* allocations recorded with their stack */
	uint64_t peak_bytes;	/* the highest live total of any one process (estimated when sampled) */
	uint64_t cut_allocs, cut_bytes;	/* on stacks cut to their first frame (too many stacks) */
	uint64_t dropped_stacks, dropped_bytes;	/* allocations with no stack at all */
	uint32_t max_stacks;	/* the limit that applied */
	char *timeline;		/* the file of live bytes over time (caller frees) */
};

/*
 * Record and write o->output. 0 when a profile was written; -1 on failure
 * (a static or setuid program, no stream, a bad output); -HL_EXIT_NOT_FOUND
 * / -HL_EXIT_NOT_EXECUTABLE when the command cannot be run.
 */
int heap_record_run(const struct heap_record_options *o, struct heap_record_result *res);
void heap_record_result_release(struct heap_record_result *res);

/* "hotloop record: N allocations (N sampled), peak B, wrote 'FILE'" and what went wrong. */
void heap_record_summary(const struct heap_record_result *res, const char *output,
			 struct strbuf *sb);

/*
 * The preload: libhotloop-heap.so in the directory of the running binary,
 * else in its ../lib/hotloop/. A string to free, or NULL with an error.
 */
char *heap_find_lib(void);

/*
 * Why the preload cannot reach the program 'path' (found in PATH like
 * execvp): a static executable or a setuid/setgid one. 0 when it can (or
 * when it cannot be told: exec reports that), -1 with the error.
 */
int heap_check_program(const char *path);

/* ---- the stream, for the run and for tests ---- */

/* How many allocations one sampled allocation of 'size' bytes stands for. */
double heap_weight(uint64_t size, uint64_t rate);

/* A HEAP_EV_TICK: the clock when the sequence was at seq. */
struct heap_tick {
	uint64_t time_ns, seq;
};

/* A point of the heap over time: the live bytes (estimated when sampled). */
struct heap_live {
	uint64_t time_ns, bytes;
};

/* A chunk of a stream: its allocations and frees come in increasing seq. */
struct heap_chunk {
	size_t off, len;	/* its events: the stream's bytes [off, off + len) */
	uint64_t first_seq;	/* its first allocation's or free's */
};

/*
 * An allocation site of a stream: a stack and an op, its values summed
 * (weighted, not yet scaled), and, while the sequence is replayed, what
 * of it is live.
 */
struct heap_site {
	uint64_t key;		/* stack << 2 | op */
	double v[HEAP_NR_SAMPLE_TYPES];
	double live[2], at_peak[2];	/* objects and bytes live now, and at the latest peak */
	uint64_t stamp;		/* the peak at_peak is of (heap_stream_match()) */
};

struct heap_stream {
	struct heap_file_header header;
	const unsigned char *data;	/* the stream parsed: the caller's, kept until heap_stream_add() */
	struct heap_chunk *chunks;	/* those with an allocation or a free */
	size_t nr_chunks, alloc_chunks;
	size_t nr_allocs, nr_frees;
	double weight_objects, weight_bytes;	/* the allocations' weights, summed */
	/* stack i (1..nr_stacks): pcs[stack_off[i]..stack_off[i] + stack_len[i]) */
	uint64_t *pcs;
	size_t nr_pcs, alloc_pcs;
	uint64_t *stack_off;
	uint32_t *stack_len;
	size_t nr_stacks, alloc_stacks;
	char *maps;		/* the MAPS snapshots' text, in order, NUL-terminated */
	size_t nr_maps, alloc_maps;
	struct heap_tick *ticks;
	size_t nr_ticks, alloc_ticks;
	struct heap_point *points;	/* stats mode's, as they came */
	size_t nr_points, alloc_points;
	struct heap_end_event end;
	bool has_end;
	uint64_t stats_peak;	/* HEAP_EV_PEAK: stats mode's highest live total */
	uint8_t stats_flags;	/* HEAP_PEAK_* */
	bool has_stats_peak;
	bool cut;		/* the file ends inside a chunk */
	/*
	 * Set before heap_stream_parse() (0: HEAP_DEFAULT_MAX_STACKS): stack ids
	 * past heap_stack_ids() of it are not kept, their allocations count
	 * with no stack. heap_stream_add() sums what was cut or had no stack.
	 */
	uint32_t max_stacks;
	double cut_allocs, cut_bytes, stackless_allocs, stackless_bytes;

	/* from heap_stream_match() */
	/*
	 * Sampled, with the process's exact totals (HEAP_EV_END): what each
	 * sampled allocation's weight is multiplied by in the object and the
	 * byte values so that they add up to those totals; else 1.
	 */
	double scale_objects, scale_bytes;
	struct heap_site *sites;
	size_t nr_sites, alloc_sites;
	uint64_t peak_bytes;	/* the highest live total (estimated when sampled) */
	uint64_t peak_seq;	/* the events before the peak */
	struct heap_live *live;	/* at each tick, and at the end */
	size_t nr_live, alloc_live;
};

void heap_stream_init(struct heap_stream *s);
void heap_stream_release(struct heap_stream *s);
/*
 * Parse one stream file: every event is checked, the stacks, maps, ticks,
 * points and totals kept, the chunks holding allocations and frees
 * listed; those events are replayed from 'data' by heap_stream_match(),
 * so data must stay until then. 0 on success (a stream cut at the end is
 * kept: s->cut), -1 with an error when it is not a stream or is
 * malformed.
 */
int heap_stream_parse(struct heap_stream *s, const void *data, size_t len);
/*
 * Replay the sequence in seq order (the chunks merged where threads
 * interleaved them), without keeping it: each allocation counts for its
 * site (s->sites) and is followed by address until its free (an address
 * allocated again counts as freed then), so that each site gets its
 * values in use at the peak of the live bytes and at the end; and the
 * live bytes (weighted by heap_weight()) at each tick and at the end
 * (s->live), and the peak (s->peak_bytes, s->peak_seq). Memory: the
 * blocks live at once and the sites, not the events.
 */
void heap_stream_match(struct heap_stream *s);
/*
 * Add the stream's allocation sites to r (recording_set_heap()): alloc,
 * inuse at the peak, leak and temp values, scaled (scale_objects,
 * scale_bytes).
 */
void heap_stream_add(struct heap_stream *s, struct recording *r);

#endif
