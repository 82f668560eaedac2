/*
 * heap-profile.c: the heap profile's sample type names (heap-profile.h), the
 * one place that knows what makes a profile a heap profile.
 */
#include "profile.h"
#include "heap-profile.h"

const char *const heap_type_names[HEAP_NR_TYPES] = {
	"alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
	"leak_objects", "leak_space", "temp_objects",
};

const char *const heap_type_units[HEAP_NR_TYPES] = {
	"count", "bytes", "count", "bytes", "count", "bytes", "count",
};

bool profile_is_heap(const struct profile *p)
{
	return profile_find_sample_type(p, heap_type_names[HEAP_ALLOC_SPACE]) >= 0;
}
