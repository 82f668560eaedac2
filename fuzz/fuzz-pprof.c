/*
 * fuzz-pprof.c: libFuzzer target for the pprof reader. Every input goes
 * through pprof_decode(); whatever decodes is encoded again and decoded a
 * second time, and the two profiles must agree on samples, totals and table
 * sizes (a reader and writer that disagree lose data silently).
 */
#include <stdio.h>
#include <stdlib.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"

static void quiet(const char *prefix, const char *msg)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

static void check_same(const struct profile *a, const struct profile *b)
{
	if (a->nr_samples != b->nr_samples || a->nr_sample_type != b->nr_sample_type ||
	    a->nr_mappings != b->nr_mappings || a->nr_locations != b->nr_locations ||
	    a->nr_functions != b->nr_functions || a->strings.nr != b->strings.nr) {
		fprintf(stderr, "round trip changed the profile: samples %zu/%zu types %zu/%zu "
			"mappings %zu/%zu locations %zu/%zu functions %zu/%zu strings %zu/%zu\n",
			a->nr_samples, b->nr_samples, a->nr_sample_type, b->nr_sample_type,
			a->nr_mappings, b->nr_mappings, a->nr_locations, b->nr_locations,
			a->nr_functions, b->nr_functions, a->strings.nr, b->strings.nr);
		abort();
	}
	for (size_t i = 0; i < a->nr_sample_type; i++) {
		int64_t ta = profile_total(a, (int)i), tb = profile_total(b, (int)i);
		if (ta != tb) {
			fprintf(stderr, "round trip changed total %zu: %lld -> %lld\n", i,
				(long long)ta, (long long)tb);
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p, q;
	struct strbuf out = STRBUF_INIT;

	profile_init(&p);
	if (pprof_decode(&p, data, size, "fuzz")) {
		profile_release(&p);
		return 0;
	}
	if (pprof_encode(&p, &out)) {
		fprintf(stderr, "cannot encode a profile that decoded\n");
		abort();
	}
	profile_init(&q);
	if (pprof_decode(&q, out.buf, out.len, "fuzz (re-encoded)")) {
		fprintf(stderr, "cannot decode a profile hotloop encoded\n");
		abort();
	}
	check_same(&p, &q);
	profile_release(&q);
	profile_release(&p);
	strbuf_release(&out);
	return 0;
}
