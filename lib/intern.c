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
	free(t->slots);
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

static void rehash(struct strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;

	free(t->slots);
	t->slots = xcalloc(n, sizeof(*t->slots));
	t->nslots = n;
	for (size_t i = 0; i < t->nr; i++) {
		size_t h = hash_bytes(HASH_SEED, t->str[i], t->len[i]) & (n - 1);
		while (t->slots[h])
			h = (h + 1) & (n - 1);
		t->slots[h] = (uint32_t)(i + 1);
	}
}

int64_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	size_t h;
	char *copy;

	if (len > UINT32_MAX)
		len = UINT32_MAX;
	if ((t->nr + 1) * 2 > t->nslots)
		rehash(t);
	h = hash_bytes(HASH_SEED, s, len) & (t->nslots - 1);
	while (t->slots[h]) {
		size_t i = t->slots[h] - 1;
		if (t->len[i] == len && !memcmp(t->str[i], s, len))
			return (int64_t)i;
		h = (h + 1) & (t->nslots - 1);
	}
	copy = arena_alloc(t, len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	if (t->nr + 1 > t->alloc) {
		ALLOC_GROW(t->str, t->nr + 1, t->alloc);
		t->len = xrealloc(t->len, t->alloc * sizeof(*t->len));
	}
	t->str[t->nr] = copy;
	t->len[t->nr] = (uint32_t)len;
	t->slots[h] = (uint32_t)(t->nr + 1);
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
