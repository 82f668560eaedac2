/*
 * intern.h: string interning for profile data. A struct strtab owns every
 * string it has handed out; they live until strtab_release(). Index 0 is
 * always "" (pprof's rule). Bytes are kept in large chunks, so millions of
 * frames do not mean millions of mallocs.
 */
#ifndef HOTLOOP_INTERN_H
#define HOTLOOP_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "hindex.h"

struct strtab {
	const char **str;	/* str[i]: the string with index i */
	uint32_t *len;		/* its length (strings may hold NUL bytes) */
	size_t nr, alloc;
	struct hindex index;	/* hash of the bytes -> index */
	char *chunk;		/* current arena chunk */
	size_t chunk_used, chunk_size;
	char **chunks;		/* every chunk, for release */
	size_t nr_chunks, alloc_chunks;
};

#define STRTAB_INIT { 0 }

void strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);
/* Index of the string s[0..len) in t, adding it if new. */
int64_t strtab_intern(struct strtab *t, const char *s, size_t len);
int64_t strtab_intern_str(struct strtab *t, const char *s);
/* The string with index i, or "" when i is out of range. */
const char *strtab_get(const struct strtab *t, int64_t i);

/* FNV-1a, the hash used for interning and the profile's dedup tables. */
static inline uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define HASH_SEED 0xcbf29ce484222325ull

static inline uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return hash_bytes(h, &v, sizeof(v));
}

#endif
