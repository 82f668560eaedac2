/*
 * jeprof.h: reading jemalloc's heap profiles (jeprof.PID.SEQ.KIND.heap,
 * the "heap_v2/RATE" text jemalloc writes with MALLOC_CONF=prof:true) into
 * the heap profile model (heap-profile.h). The caller owns the profile.
 *
 * How the file becomes samples:
 * - One sample per "@ ADDR..." stack, from its "t*:" line: "t*: CUROBJS:
 *   CURBYTES [ACCUMOBJS: ACCUMBYTES]". What is live at the dump goes to
 *   inuse_*, and to leak_* too when the file is a final dump (its name ends
 *   in ".f.heap": written at exit by prof_final); the accumulated counts
 *   (prof_accum:true) go to alloc_*. The default sample type is
 *   alloc_space when there are accumulated counts, else inuse_space.
 * - Sampled counts are unsampled with jemalloc's own formula (jeprof's):
 *   with mean size s = bytes / objects and sample period RATE, both are
 *   multiplied by 1 / (1 - exp(-s / RATE)); RATE 1 records every object.
 * - Addresses are symbolized with hotloop's symbolizer from the files
 *   MAPPED_LIBRARIES names (executable mappings); every frame but the first
 *   is a return address, looked up one byte back. The allocator's own
 *   frames (the leading ones in libjemalloc) are left out; the outermost
 *   of them names the call that allocated, the sample's op label.
 * Comments: "jemalloc: rate=RATE".
 */
#ifndef HOTLOOP_JEPROF_H
#define HOTLOOP_JEPROF_H

#include <stdbool.h>
#include <stddef.h>

struct profile;

/* Bounds on hostile input. */
#define JEPROF_MAX_DEPTH 1024		/* addresses of one stack */
#define JEPROF_MAX_ADDRS ((size_t)1 << 24)	/* addresses of all stacks */
#define JEPROF_MAX_MAPS 65536		/* MAPPED_LIBRARIES lines */

/*
 * Parse jemalloc's heap profile text into p, freshly initialized. A
 * malformed line (a bad number or address, a t*: line before any stack, a
 * stack longer than JEPROF_MAX_DEPTH, an unknown header) is an error
 * naming the line; on error p is left empty. 'what' names the input (and
 * tells a final dump by its name).
 */
int jeprof_parse(struct profile *p, const char *buf, size_t len, const char *what);

/* Whether the bytes start like one: "heap_v2/". */
bool jeprof_sniff(const void *buf, size_t len);

#endif
