/*
 * heap-stream.h: the file format between libhotloop-heap.so (preload/heap.c,
 * inside the profiled process) and `hotloop record --heap` (lib/heap-record.c).
 * One file per process image: a header, then chunks, each written whole by
 * one thread with one write(2) on an O_APPEND file. Native byte order; the
 * reader treats every byte as hostile.
 */
#ifndef HOTLOOP_HEAP_STREAM_H
#define HOTLOOP_HEAP_STREAM_H

#include <stdint.h>

#define HEAP_STREAM_MAGIC "HLHEAP1"	/* 8 bytes with its NUL */
#define HEAP_STREAM_VERSION 1

/* The environment hotloop gives the command (kept across exec). */
#define HEAP_ENV_DIR "HOTLOOP_HEAP_DIR"		/* where the streams go */
#define HEAP_ENV_RATE "HOTLOOP_HEAP_RATE"	/* mean bytes between samples */
#define HEAP_ENV_STATS "HOTLOOP_HEAP_STATS"	/* "1": totals only, no stacks */
#define HEAP_LIB_NAME "libhotloop-heap.so"

/* Frames kept per stack. */
#define HEAP_MAX_FRAMES 64
/* A per-thread buffer: written out when full, at thread exit, exit, exec. */
#define HEAP_CHUNK_BYTES (64 * 1024)

struct heap_file_header {
	char magic[8];
	uint32_t version;
	uint32_t pid;
	uint32_t ppid;
	uint32_t flags;		/* HEAP_FILE_* */
	uint64_t rate;		/* mean bytes between samples; 1: every allocation */
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
};
#define HEAP_FILE_STATS 0x1	/* totals only: no events but HEAP_EV_PEAK and HEAP_EV_END */

struct heap_chunk_header {
	uint32_t len;		/* bytes of events after this header */
	uint32_t tid;
};

/* Events: a type byte, then the fields as below (packed, unaligned). */
enum heap_event_type {
	HEAP_EV_STACK = 1,	/* u32 id, u16 n, u64 pc[n]: return addresses, the caller's first */
	HEAP_EV_ALLOC = 2,	/* u8 op, u8 flags, u32 stack, u64 seq, u64 addr, u64 size */
	HEAP_EV_FREE = 3,	/* u8 flags, u64 seq, u64 addr */
	HEAP_EV_MAPS = 4,	/* u32 len, the text of /proc/self/maps (a piece of it) */
	HEAP_EV_TICK = 5,	/* u64 time_ns, u64 seq: the clock at that point of the sequence */
	HEAP_EV_END = 6,	/* struct heap_end_event */
	HEAP_EV_PEAK = 7,	/* u64 bytes, u8 flags: stats mode, before the end: the highest live total (usable sizes) */
};

/* Which call made an allocation (the `op` label). */
enum heap_op {
	HEAP_OP_MALLOC,
	HEAP_OP_CALLOC,
	HEAP_OP_REALLOC,
	HEAP_OP_MEMALIGN,	/* posix_memalign, aligned_alloc, memalign, valloc, pvalloc */
	HEAP_NR_OPS
};

#define HEAP_ALLOC_UNTRACKED 0x1	/* the address table was full: its free goes unseen */
#define HEAP_FREE_TEMP 0x1		/* freed before the thread's next allocation */
#define HEAP_PEAK_EXEC 0x1		/* the stream ended at an exec: a new image of the pid follows */

/* At exit (or exec): what the process counted, sampled or not. */
struct heap_end_event {
	uint64_t allocs;	/* every allocation made */
	uint64_t alloc_bytes;	/* their requested bytes */
	uint64_t frees;
	uint64_t end_ns;
	uint64_t dropped_stacks;	/* stacks not kept: the stack table was full */
	uint64_t untracked;	/* sampled blocks whose free the table could not follow */
};

/*
 * The next gap between samples, in bytes: exponential with mean 'mean'
 * (a Poisson process over the bytes allocated, as tcmalloc samples), from
 * the xorshift state *rng. Never 0. 'mean' 1: every allocation.
 */
static inline uint64_t heap_next_gap(uint64_t *rng, uint64_t mean)
{
	uint64_t x = *rng;
	double u, g;

	if (mean <= 1)
		return 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*rng = x;
	u = ((double)(x >> 11) + 0.5) / 9007199254740992.0;	/* (0, 1) */
	g = -__builtin_log(u) * (double)mean;
	/* rounded up: an allocation of s bytes is sampled when the gap is <= s, P = 1 - e^(-s/mean) */
	return g > 9e18 ? (uint64_t)9e18 : (uint64_t)g + 1;
}

#endif
