/*
 * fuzz-callgrind.c: libFuzzer target for the callgrind.out reader. Every
 * input must either parse into a profile that validates, whose self costs
 * add up to the sum of its cost lines, that writes as folded text and draws
 * as a flame graph, or fail with an error; anything else (a crash, a
 * sanitizer report, a leak, unbounded memory) is a bug.
 */
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "callgrind.h"
#include "folded.h"
#include "flame.h"

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	struct strbuf out = STRBUF_INIT;

	set_error_routine(quiet);
	set_warn_routine(quiet);
	profile_init(&p);
	(void)callgrind_sniff(data, size);
	if (!callgrind_parse(&p, (const char *)data, size, "fuzz")) {
		struct flame_options o = FLAME_OPTIONS_INIT;

		if (profile_validate(&p))
			BUG("callgrind_parse returned a profile that does not validate");
		for (size_t i = 0; i < p.nr_sample_type; i++) {
			strbuf_reset(&out);
			if (folded_write(&p, (int)i, &out))
				BUG("folded_write failed on a parsed profile");
		}
		o.min_width = 0;
		strbuf_reset(&out);
		flame_render(&p, NULL, &o, &out);
	}
	strbuf_release(&out);
	profile_release(&p);
	return 0;
}
