/*
 * heap-profile.h: what makes a struct profile a heap profile, shared by
 * everything that writes one (record --heap, the importers) and reads one
 * (report, brief, flame): the sample types in their order, the label
 * naming the allocating call, and profile_is_heap().
 */
#ifndef HOTLOOP_HEAP_PROFILE_H
#define HOTLOOP_HEAP_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

struct profile;

/* The sample types of a heap profile, in this order. */
enum heap_sample_type {
	HEAP_ALLOC_OBJECTS,	/* allocations made (an unbiased estimate when sampled) */
	HEAP_ALLOC_SPACE,	/* bytes allocated */
	HEAP_INUSE_OBJECTS,	/* objects live at the heap's peak */
	HEAP_INUSE_SPACE,	/* bytes live at the heap's peak */
	HEAP_LEAK_OBJECTS,	/* objects still live at exit */
	HEAP_LEAK_SPACE,	/* bytes still live at exit */
	HEAP_TEMP_OBJECTS,	/* freed by their thread before its next allocation */
	HEAP_NR_SAMPLE_TYPES
};

/* { type, unit } of each, e.g. { "alloc_space", "bytes" }. */
extern const char *const heap_sample_types[HEAP_NR_SAMPLE_TYPES][2];

/* The default sample type, and the one that marks a heap profile. */
#define HEAP_DEFAULT_TYPE "alloc_space"
/* period_type: the sampling mean in bytes (period 1: every allocation). */
#define HEAP_PERIOD_TYPE "space"
#define HEAP_PERIOD_UNIT "bytes"

/* The string label naming the call that allocated, and its values. */
#define HEAP_LABEL_OP "op"
#define HEAP_OP_NAME_MALLOC "malloc"
#define HEAP_OP_NAME_CALLOC "calloc"
#define HEAP_OP_NAME_REALLOC "realloc"
#define HEAP_OP_NAME_MEMALIGN "memalign"	/* posix_memalign, aligned_alloc, memalign, valloc, pvalloc */

/* Comments: "hotloop-heap: rate=N" (or the importer's name) and "heap-peak=BYTES". */
#define HEAP_COMMENT_PEAK "heap-peak="

/* A heap profile has a sample type alloc_space. */
bool profile_is_heap(const struct profile *p);

/* Give an empty profile the heap sample types, default type and period type. */
void heap_profile_set_types(struct profile *p, int64_t period);

#endif
