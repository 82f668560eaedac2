/*
 * stacks.c: merging samples with identical stacks (see stacks.h). One pass
 * over the samples with an open-addressing table keyed by a hash of the
 * location ids, so the cost is linear in the total stack length.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
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

size_t stacks_merge(const struct profile *p, int idx, struct stack_sum **out)
{
	struct stack_sum *sums = NULL;
	uint64_t *hashes = NULL;
	size_t nr = 0, alloc = 0, alloc_hashes = 0;
	size_t *slots, nslots = 1024;

	if (idx < 0 || (size_t)idx >= p->nr_sample_type)
		BUG("stacks_merge: sample type %d out of range", idx);
	slots = xcalloc(nslots, sizeof(*slots));
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct pf_sample *s = &p->samples[i];
		int64_t v = profile_sample_values(p, s)[idx];
		uint64_t h = locs_hash(profile_sample_locs(p, s), s->nloc);
		size_t slot;

		for (slot = h & (nslots - 1); slots[slot]; slot = (slot + 1) & (nslots - 1)) {
			struct stack_sum *e = &sums[slots[slot] - 1];
			if (hashes[slots[slot] - 1] == h &&
			    same_stack(p, &p->samples[e->sample], s))
				break;
		}
		if (slots[slot]) {
			struct stack_sum *e = &sums[slots[slot] - 1];
			e->value = sat_add(e->value, v);
			continue;
		}
		ALLOC_GROW(sums, nr + 1, alloc);
		ALLOC_GROW(hashes, nr + 1, alloc_hashes);
		sums[nr] = (struct stack_sum){ i, v };
		hashes[nr] = h;
		slots[slot] = ++nr;
		if (nr * 2 > nslots) {
			free(slots);
			nslots *= 2;
			slots = xcalloc(nslots, sizeof(*slots));
			for (size_t j = 0; j < nr; j++) {
				size_t k = hashes[j] & (nslots - 1);
				while (slots[k])
					k = (k + 1) & (nslots - 1);
				slots[k] = j + 1;
			}
		}
	}
	free(slots);
	free(hashes);
	*out = sums;
	return nr;
}
