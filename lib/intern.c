/*
 * intern.c: the string table (see intern.h).
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "intern.h"

#define CHUNK_SIZE (256 * 1024)

void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	strtab_intern(t, "", 0);
}

void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->nr_chunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->str);
	free(t->len);
	hindex_release(&t->index);
	memset(t, 0, sizeof(*t));
}

static char *arena_alloc(struct strtab *t, size_t n)
{
	char *p;

	if (n > CHUNK_SIZE / 4) {
		/* big strings get a chunk of their own */
		p = xmalloc(n);
		ALLOC_GROW(t->chunks, t->nr_chunks + 1, t->alloc_chunks);
		t->chunks[t->nr_chunks++] = p;
		return p;
	}
	if (!t->chunk || t->chunk_used + n > t->chunk_size) {
		t->chunk = xmalloc(CHUNK_SIZE);
		t->chunk_size = CHUNK_SIZE;
		t->chunk_used = 0;
		ALLOC_GROW(t->chunks, t->nr_chunks + 1, t->alloc_chunks);
		t->chunks[t->nr_chunks++] = t->chunk;
	}
	p = t->chunk + t->chunk_used;
	t->chunk_used += n;
	return p;
}

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *table, size_t i, const void *key_)
{
	const struct strtab *t = table;
	const struct str_key *key = key_;

	return t->len[i] == key->len && !memcmp(t->str[i], key->s, key->len);
}

int64_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	struct str_key key;
	uint64_t hash;
	size_t slot, i;
	char *copy;

	if (len > UINT32_MAX)
		len = UINT32_MAX;
	key = (struct str_key){ s, len };
	hash = hash_bytes(HASH_SEED, s, len);
	if ((i = hindex_probe(&t->index, hash, str_eq, t, &key, &slot)) != HINDEX_NONE)
		return (int64_t)i;
	copy = arena_alloc(t, len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	if (t->nr + 1 > t->alloc) {
		ALLOC_GROW(t->str, t->nr + 1, t->alloc);
		t->len = xrealloc(t->len, t->alloc * sizeof(*t->len));
	}
	t->str[t->nr] = copy;
	t->len[t->nr] = (uint32_t)len;
	hindex_set(&t->index, slot, hash, t->nr);
	return (int64_t)t->nr++;
}

int64_t strtab_intern_str(struct strtab *t, const char *s)
{
	return strtab_intern(t, s ? s : "", s ? strlen(s) : 0);
}

const char *strtab_get(const struct strtab *t, int64_t i)
{
	if (i < 0 || (size_t)i >= t->nr)
		return "";
	return t->str[i];
}
