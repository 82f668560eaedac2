/*
 * fuzz-heap-stream.c: libFuzzer target for the heap recorder's stream reader
 * (lib/heap-record.c). Every input must either parse, pair its allocations
 * with their frees and build a heap profile that validates, or fail with an
 * error; anything else is a bug. The maps text is parsed but not given to
 * the profile: its paths would send the symbolizer to any file here.
 */
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#include "profile.h"
#include "record.h"
#include "heap-record.h"

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct heap_stream s;
	struct recording *r;
	struct recording_info info = { .event = "hotloop-heap: rate=1", .freq = 1 };
	struct profile p;

	set_error_routine(quiet);
	set_warn_routine(quiet);
	heap_stream_init(&s);
	if (heap_stream_parse(&s, data, size))
		return 0;
	heap_stream_match(&s);
	r = recording_new(SAMPLER_CALLGRAPH_FP, 0);
	recording_set_heap(r);
	heap_stream_add(&s, r);
	profile_init(&p);
	if (recording_build(r, &p, &info))
		BUG("a parsed heap stream built a profile that does not validate");
	profile_release(&p);
	recording_free(r);
	heap_stream_release(&s);
	return 0;
}
