/*
 * reply-cache.h: answers kept until what they were read from changes.
 * `hotloop serve` builds an API answer from the store (hundreds of
 * milliseconds for the overview of 10,000 attempts) and keeps it here
 * under its request; a change of the store or the project's files bumps
 * the generation, and an answer of an older generation is never given
 * again. Bounded in entries and bytes; the least recently used goes
 * first. Thread-safe. An answer is a reference-counted blob, so a kept
 * one is sent without a copy while the cache may drop it.
 */
#ifndef HOTLOOP_REPLY_CACHE_H
#define HOTLOOP_REPLY_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reply_entry;

/* One answer: shared by the cache and the responses that send it. */
struct reply_blob {
	int refs;
	int status;
	const char *type;	/* static */
	char *data;
	size_t len;
};

/* An answer of 'len' bytes at 'data' (malloc'd: the blob takes it), with one reference. */
struct reply_blob *reply_blob_new(int status, const char *type, char *data, size_t len);
struct reply_blob *reply_blob_ref(struct reply_blob *b);
/* Drop a reference; the last one frees it. NULL is fine. */
void reply_blob_unref(struct reply_blob *b);

struct reply_cache {
	pthread_mutex_t lock;
	uint64_t gen;			/* what the store and files are now */
	struct reply_entry *head;	/* most recently used first */
	size_t nr, bytes;
	size_t max_entries, max_bytes;
	uint64_t hits, misses;
};

#define REPLY_CACHE_ENTRIES 256
#define REPLY_CACHE_BYTES (32u << 20)

void reply_cache_init(struct reply_cache *c, size_t max_entries, size_t max_bytes);
void reply_cache_release(struct reply_cache *c);

/* The generation now: read it before building an answer to put. */
uint64_t reply_cache_gen(struct reply_cache *c);
/* What the answers were read from changed: none of them is given again. */
void reply_cache_bump(struct reply_cache *c);

/* The answer kept for 'key' in this generation, with a reference for the caller; NULL: none. */
struct reply_blob *reply_cache_get(struct reply_cache *c, const char *key);

/*
 * Keep an answer built from what generation 'gen' saw (the cache takes
 * a reference of its own). One of an older generation than now is not
 * kept (it may hold what changed since), nor one bigger than a quarter
 * of the cache.
 */
void reply_cache_put(struct reply_cache *c, uint64_t gen, const char *key, struct reply_blob *b);

/*
 * The keys of the answers asked for (got or put) within the last
 * 'since_s' seconds, of any generation, most recently used first, at
 * most 'max': what to build again after a change, for the pages open.
 * The caller frees each and the array.
 */
size_t reply_cache_recent(struct reply_cache *c, double since_s, size_t max, char ***keys);

#endif
