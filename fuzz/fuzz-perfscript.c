/*
 * fuzz-perfscript.c: libFuzzer target for the perf script text reader.
 * Every input must either parse into a profile that validates and writes
 * back as folded stacks and as pprof, or fail with an error; read again in
 * small chunks (a size taken from the input's first byte, so lines are cut
 * anywhere and run longer than a chunk) it must give the same stacks or
 * the same error. Anything else (a crash, a sanitizer report, a leak) is a
 * bug. Build: make -C fuzz.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"
#include "folded.h"
#include "perfscript.h"

static struct strbuf last = STRBUF_INIT;

static void keep(const char *prefix, const char *msg)
{
	(void)prefix;
	strbuf_reset(&last);
	strbuf_addstr(&last, msg);
}

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

/* Every sample type's folded stacks, or the error. */
static void outcome(int ret, struct profile *p, struct strbuf *out)
{
	if (ret) {
		strbuf_addf(out, "error: %s", last.buf);
		return;
	}
	for (size_t i = 0; i < p->nr_sample_type; i++)
		if (folded_write(p, (int)i, out))
			BUG("folded_write failed on a parsed profile");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	struct strbuf out = STRBUF_INIT, whole = STRBUF_INIT, cut = STRBUF_INIT;
	size_t chunk = size ? 1 + data[0] % 61 : 1;
	int ret;

	set_error_routine(keep);
	set_warn_routine(quiet);
	(void)perfscript_sniff(data, size);
	profile_init(&p);
	ret = perfscript_parse_chunked(&p, (const char *)data, size, "fuzz", chunk);
	outcome(ret, &p, &cut);
	profile_release(&p);
	profile_init(&p);
	if (!(ret = perfscript_parse(&p, (const char *)data, size, "fuzz"))) {
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
	outcome(ret, &p, &whole);
	if (strcmp(whole.buf, cut.buf))
		BUG("read in chunks of %zu, the text gives another profile", chunk);
	strbuf_release(&whole);
	strbuf_release(&cut);
	strbuf_release(&out);
	profile_release(&p);
	return 0;
}
