/*
 * heap-profile.h: what makes a struct profile a heap profile, and the names
 * of its sample types, shared by the recorder, the importers (heaptrack)
 * and what reads heap profiles (brief). docs/formats.md describes the model.
 */
#ifndef HOTLOOP_HEAP_PROFILE_H
#define HOTLOOP_HEAP_PROFILE_H

#include <stdbool.h>

struct profile;

/* The sample types of a heap profile, in this order. */
enum heap_sample_type {
	HEAP_ALLOC_OBJECTS,	/* allocations made (unbiased estimate when sampled) */
	HEAP_ALLOC_SPACE,	/* bytes allocated */
	HEAP_INUSE_OBJECTS,	/* objects live at the heap's peak */
	HEAP_INUSE_SPACE,	/* bytes live at the heap's peak */
	HEAP_LEAK_OBJECTS,	/* objects still live at exit */
	HEAP_LEAK_SPACE,	/* bytes still live at exit */
	HEAP_TEMP_OBJECTS,	/* freed before the thread's next allocation */
	HEAP_NR_TYPES
};

/* "alloc_objects" ... and their units ("count", "bytes"). */
extern const char *const heap_type_names[HEAP_NR_TYPES];
extern const char *const heap_type_units[HEAP_NR_TYPES];

/* The sample label naming the call that allocated: malloc, calloc, realloc, memalign. */
#define HEAP_OP_LABEL "op"

/* Whether p is a heap profile: it has the sample type alloc_space. */
bool profile_is_heap(const struct profile *p);

#endif
