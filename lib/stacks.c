/*
 * stacks.c: merging samples with identical stacks (see stacks.h). One pass
 * over the samples with an open-addressing table keyed by a hash of the
 * location ids, so the cost is linear in the total stack length.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "hindex.h"
#include "profile.h"
#include "stacks.h"

static uint64_t locs_hash(const uint64_t *v, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (size_t i = 0; i < n; i++) {
		h ^= v[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static bool same_stack(const struct profile *p, const struct pf_sample *a,
		       const struct pf_sample *b)
{
	return a->nloc == b->nloc &&
	       (!a->nloc || !memcmp(profile_sample_locs(p, a), profile_sample_locs(p, b),
		       a->nloc * sizeof(uint64_t)));
}

struct merge {
	const struct profile *p;
	const struct stack_sum *sums;
};

static bool sum_eq(const void *table, size_t i, const void *key)
{
	const struct merge *m = table;

	return same_stack(m->p, &m->p->samples[m->sums[i].sample], key);
}

size_t stacks_merge(const struct profile *p, int idx, struct stack_sum **out)
{
	struct stack_sum *sums = NULL;
	struct hindex index = HINDEX_INIT;
	size_t nr = 0, alloc = 0;

	if (idx < 0 || (size_t)idx >= p->nr_sample_type)
		BUG("stacks_merge: sample type %d out of range", idx);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct pf_sample *s = &p->samples[i];
		int64_t v = profile_sample_values(p, s)[idx];
		uint64_t h = locs_hash(profile_sample_locs(p, s), s->nloc);
		struct merge m = { p, sums };
		size_t slot, e;

		if ((e = hindex_probe(&index, h, sum_eq, &m, s, &slot)) != HINDEX_NONE) {
			sums[e].value = sat_add(sums[e].value, v);
			continue;
		}
		ALLOC_GROW(sums, nr + 1, alloc);
		sums[nr] = (struct stack_sum){ i, v };
		hindex_set(&index, slot, h, nr++);
	}
	hindex_release(&index);
	*out = sums;
	return nr;
}
