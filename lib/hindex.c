/*
 * hindex.c: growing the hash index (see hindex.h). Lookups are inline in
 * the header, where each table's comparison is inlined into them.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "hindex.h"

void hindex_release(struct hindex *ix)
{
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}

void hindex_grow(struct hindex *ix)
{
	size_t n = ix->nslots ? ix->nslots * 2 : 64, mask = n - 1;
	uint64_t *slots = xcalloc(n, sizeof(*slots));

	for (size_t i = 0; i < ix->nslots; i++) {
		uint64_t v = ix->slots[i];
		size_t s;

		if (!v)
			continue;
		/* the hash's low half is in the slot: enough to place it */
		for (s = (size_t)(v >> 32) & mask; slots[s]; s = (s + 1) & mask)
			;
		slots[s] = v;
	}
	free(ix->slots);
	ix->slots = slots;
	ix->nslots = n;
}
