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
#define HEAP_STREAM_VERSION 3

/* The environment hotloop gives the command (kept across exec). */
#define HEAP_ENV_DIR "HOTLOOP_HEAP_DIR"		/* where the streams go */
#define HEAP_ENV_RATE "HOTLOOP_HEAP_RATE"	/* mean bytes between samples */
#define HEAP_ENV_STATS "HOTLOOP_HEAP_STATS"	/* "1": totals only, no stacks */
#define HEAP_ENV_MAX_STACKS "HOTLOOP_HEAP_MAX_STACKS"	/* distinct stacks kept whole */
#define HEAP_LIB_NAME "libhotloop-heap.so"

/* Frames kept per stack. */
#define HEAP_MAX_FRAMES 64
/*
 * Distinct stacks a process keeps whole (by default, and at most). Past
 * that a new stack is cut to its first frame, the caller of the allocator
 * (a stack marked HEAP_STACK_CUT), in heap_stack_ids() ids in all; past
 * those an allocation has no stack (stack 0). Its counts are kept.
 */
#define HEAP_DEFAULT_MAX_STACKS (1u << 20)
#define HEAP_MAX_MAX_STACKS (1u << 21)
#define HEAP_STACK_CUT 0x8000		/* in a HEAP_EV_STACK's n */

static inline uint32_t heap_stack_ids(uint32_t max_stacks)
{
	return max_stacks + max_stacks / 4 + 16;
}
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
#define HEAP_FILE_STATS 0x1	/* totals only: no events but HEAP_EV_POINT, HEAP_EV_PEAK and HEAP_EV_END */

struct heap_chunk_header {
	uint32_t len;		/* bytes of events after this header */
	uint32_t tid;
};

/*
 * Events: a type byte, then the fields as below (packed, unaligned; "v" a
 * LEB128 varint of at most 10 bytes, "z" one of a zigzag-coded signed
 * value). An allocation's and a free's seq and addr are deltas from the
 * previous allocation or free of the same chunk (0 at a chunk's start), so
 * a chunk reads alone: a thread's events are numbered in increasing order.
 */
enum heap_event_type {
	HEAP_EV_STACK = 1,	/* u32 id, u16 n (| HEAP_STACK_CUT), u64 pc[n]: return addresses, the caller's first */
	HEAP_EV_ALLOC = 2,	/* u8 op, u8 flags, v stack, v seq-delta, z addr-delta, v size */
	HEAP_EV_FREE = 3,	/* u8 flags, v seq-delta, z addr-delta */
	HEAP_EV_MAPS = 4,	/* u32 len, the text of /proc/self/maps (a piece of it) */
	HEAP_EV_TICK = 5,	/* u64 time_ns, u64 seq: the clock at that point of the sequence */
	HEAP_EV_END = 6,	/* struct heap_end_event */
	HEAP_EV_PEAK = 7,	/* u64 bytes, u8 flags: stats mode, before the end: the highest live total (usable sizes) */
	HEAP_EV_POINT = 8,	/* struct heap_point: stats mode, now and then, and before the end */
};

/*
 * Stats mode's heap over time: at most one point per HEAP_POINT_EVERY_NS
 * of a process, taken by a thread at its 256th allocator call since its
 * last look, and one at the end. Live bytes are usable sizes, as the peak.
 */
struct heap_point {
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t live;		/* live bytes now (each thread's last 8 KiB of change aside) */
	uint64_t peak;		/* the highest live total since the point before */
	uint64_t allocs, alloc_bytes;	/* the process's so far */
};
#define HEAP_POINT_EVERY_NS 10000000ull
/* The longest an allocation and a free take. */
#define HEAP_EV_ALLOC_MAX (3 + 3 * 10 + 5)
#define HEAP_EV_FREE_MAX (2 + 2 * 10)

/* Write v as a varint at p; the end. */
static inline unsigned char *heap_put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* A signed delta, zigzag-coded (small either way: small varints). */
static inline uint64_t heap_zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)-(int64_t)(delta >> 63);
}

static inline uint64_t heap_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

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
	uint64_t frees;		/* frees that were recorded (sampled blocks'; stats mode: every free) */
	uint64_t end_ns;
	uint64_t dropped_stacks;	/* allocations given no stack: past heap_stack_ids() */
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
