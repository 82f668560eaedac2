/*
 * fuzz-perfscript.c: libFuzzer target for the perf script text reader.
 * Every input must either parse into a profile that validates and writes
 * back as folded stacks and as pprof, or fail with an error; anything else
 * (a crash, a sanitizer report, a leak) is a bug. Build: make -C fuzz.
 */
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"
#include "folded.h"
#include "perfscript.h"

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
	(void)perfscript_sniff(data, size);
	profile_init(&p);
	if (!perfscript_parse(&p, (const char *)data, size, "fuzz")) {
		if (profile_validate(&p))
			BUG("perfscript_parse returned a profile that does not validate");
		for (size_t i = 0; i < p.nr_sample_type; i++) {
			strbuf_reset(&out);
			if (folded_write(&p, (int)i, &out))
				BUG("folded_write failed on a parsed profile");
		}
		strbuf_reset(&out);
		if (pprof_encode(&p, &out))
			BUG("pprof_encode failed on a parsed profile");
	}
	strbuf_release(&out);
	profile_release(&p);
	return 0;
}
