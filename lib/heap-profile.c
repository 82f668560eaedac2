/*
 * heap-profile.c: the names of a heap profile's sample types, and the
 * one test that says a profile is a heap profile (heap-profile.h).
 */
#include <stdint.h>

#include "heap-profile.h"
#include "profile.h"

const char *const heap_sample_types[HEAP_NR_SAMPLE_TYPES][2] = {
	[HEAP_ALLOC_OBJECTS] = { "alloc_objects", "count" },
	[HEAP_ALLOC_SPACE] = { "alloc_space", "bytes" },
	[HEAP_INUSE_OBJECTS] = { "inuse_objects", "count" },
	[HEAP_INUSE_SPACE] = { "inuse_space", "bytes" },
	[HEAP_LEAK_OBJECTS] = { "leak_objects", "count" },
	[HEAP_LEAK_SPACE] = { "leak_space", "bytes" },
	[HEAP_TEMP_OBJECTS] = { "temp_objects", "count" },
};

bool profile_is_heap(const struct profile *p)
{
	return profile_find_sample_type(p, HEAP_DEFAULT_TYPE) >= 0;
}

void heap_profile_set_types(struct profile *p, int64_t period)
{
	for (int i = 0; i < HEAP_NR_SAMPLE_TYPES; i++)
		profile_add_sample_type(p, heap_sample_types[i][0], heap_sample_types[i][1]);
	p->default_sample_type = profile_str(p, HEAP_DEFAULT_TYPE);
	p->period_type.type = profile_str(p, HEAP_PERIOD_TYPE);
	p->period_type.unit = profile_str(p, HEAP_PERIOD_UNIT);
	p->period = period;
}
