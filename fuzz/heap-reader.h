/*
 * heap-reader.h: the body of the fuzz targets of the heap profile readers
 * (fuzz-heaptrack.c, fuzz-jeprof.c). Every input must either parse into a
 * heap profile that validates, that writes as folded text for each sample
 * type, draws as a flame graph and briefs, or fail with an error; anything
 * else (a crash, a sanitizer report, a leak, unbounded memory) is a bug.
 */
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "heap-profile.h"
#include "folded.h"
#include "flame.h"
#include "brief.h"

typedef int (*heap_parse_fn)(struct profile *p, const char *data, size_t len, const char *what);

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

static int fuzz_heap_reader(const char *reader, heap_parse_fn parse, const uint8_t *data, size_t size)
{
	struct profile p;
	struct strbuf out = STRBUF_INIT;

	set_error_routine(quiet);
	set_warn_routine(quiet);
	profile_init(&p);
	if (!parse(&p, (const char *)data, size, "fuzz.f.heap")) {
		struct flame_options o = FLAME_OPTIONS_INIT;
		struct brief_owned owned = { 0 };
		struct brief_opts bo = { .owned = &owned, .no_asm = true };
		struct brief b;

		if (profile_validate(&p))
			BUG("%s returned a profile that does not validate", reader);
		if (!profile_is_heap(&p))
			BUG("%s returned a profile that is not a heap profile", reader);
		for (size_t i = 0; i < p.nr_sample_type; i++) {
			strbuf_reset(&out);
			if (folded_write(&p, (int)i, &out))
				BUG("folded_write failed on a parsed profile");
		}
		o.min_width = 0;
		strbuf_reset(&out);
		flame_render(&p, NULL, &o, &out);
		if (!brief_build(&b, &p, profile_find_sample_type(&p, "alloc_space"), &bo)) {
			strbuf_reset(&out);
			brief_format_md(&b, 0, &out);
			brief_release(&b);
		}
	}
	strbuf_release(&out);
	profile_release(&p);
	return 0;
}
