/*
 * hindex.h: the one open-addressing hash index of the library, under the
 * string table, the profile's dedup tables, report rows, flame nodes and
 * the parsers' tables. It maps a hash to the index of an entry in an array
 * its user owns and compares. A struct hindex owns its slots only.
 */
#ifndef HOTLOOP_HINDEX_H
#define HOTLOOP_HINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/*
 * A slot holds the hash's low half (<< 32) and the entry's index + 1 (0:
 * empty). The low half picks the slot (the low bits, as FNV wants it) and
 * is a tag: a probe seldom reads an entry that differs, and growing moves
 * slots without asking for hashes again. Linear probing, at most half
 * full, the number of slots a power of two.
 */
struct hindex {
	uint64_t *slots;
	size_t nslots;		/* 0 before the first hindex_reserve() */
	size_t nr;		/* entries added */
};

#define HINDEX_INIT { 0 }
#define HINDEX_NONE SIZE_MAX

void hindex_release(struct hindex *ix);
/* Double the slots (the first call makes 64). */
void hindex_grow(struct hindex *ix);

/* Room for one more entry: hindex_probe() calls it before hindex_find(). */
static inline void hindex_reserve(struct hindex *ix)
{
	if ((ix->nr + 1) * 2 > ix->nslots)
		hindex_grow(ix);
}

/* eq(table, i, key): is entry i of the user's table the one 'key' names? */
typedef bool hindex_eq_fn(const void *table, size_t i, const void *key);

/*
 * The slot of the entry with this hash for which eq() holds, or else the
 * empty slot where it goes (give it to hindex_set()). The index must have
 * slots (hindex_reserve()). Inline, so eq() is inlined into the probe.
 */
static inline size_t hindex_find(const struct hindex *ix, uint64_t hash,
				 hindex_eq_fn *eq, const void *table, const void *key)
{
	const uint32_t tag = (uint32_t)hash;
	const size_t mask = ix->nslots - 1;
	size_t s;

	for (s = tag & mask; ix->slots[s]; s = (s + 1) & mask)
		if ((uint32_t)(ix->slots[s] >> 32) == tag &&
		    eq(table, (uint32_t)ix->slots[s] - 1, key))
			break;
	return s;
}

/* The index of the entry in slot s, HINDEX_NONE when the slot is empty. */
static inline size_t hindex_at(const struct hindex *ix, size_t s)
{
	return ix->slots[s] ? (size_t)(uint32_t)ix->slots[s] - 1 : HINDEX_NONE;
}

/* Put entry i (below UINT32_MAX) in the empty slot s hindex_find() gave. */
static inline void hindex_set(struct hindex *ix, size_t s, uint64_t hash, size_t i)
{
	if (i >= UINT32_MAX)
		BUG("hash index entry %zu out of range", i);
	ix->slots[s] = (hash << 32) | (uint64_t)(i + 1);
	ix->nr++;
}

/*
 * The index of the entry eq() accepts, else HINDEX_NONE with *slot the
 * empty slot where it goes, room made for it: hindex_set() there adds it.
 */
static inline size_t hindex_probe(struct hindex *ix, uint64_t hash, hindex_eq_fn *eq,
				  const void *table, const void *key, size_t *slot)
{
	hindex_reserve(ix);
	*slot = hindex_find(ix, hash, eq, table, key);
	return hindex_at(ix, *slot);
}

/* The index of the entry eq() accepts, or HINDEX_NONE; the index may be empty. */
static inline size_t hindex_lookup(const struct hindex *ix, uint64_t hash,
				   hindex_eq_fn *eq, const void *table, const void *key)
{
	if (!ix->nslots)
		return HINDEX_NONE;
	return hindex_at(ix, hindex_find(ix, hash, eq, table, key));
}

/* Add entry i, known to be new, under this hash. */
static inline void hindex_add(struct hindex *ix, uint64_t hash, size_t i)
{
	size_t mask, s;

	hindex_reserve(ix);
	mask = ix->nslots - 1;
	for (s = (uint32_t)hash & mask; ix->slots[s]; s = (s + 1) & mask)
		;
	hindex_set(ix, s, hash, i);
}

#endif
