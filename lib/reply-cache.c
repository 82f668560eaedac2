/*
 * reply-cache.c: answers kept until what they were read from changes
 * (see reply-cache.h): a list in the order of use, short enough (256
 * entries) that a walk costs nothing beside building one answer.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reply-cache.h"
#include "util.h"

struct reply_entry {
	struct reply_entry *prev, *next;
	char *key;
	uint64_t gen;
	struct reply_blob *b;	/* NULL: dropped as stale, the key kept */
	double used;		/* CLOCK_MONOTONIC seconds */
};

struct reply_blob *reply_blob_new(int status, const char *type, char *data, size_t len)
{
	struct reply_blob *b = xmalloc(sizeof(*b));

	b->refs = 1;
	b->status = status;
	b->type = type;
	b->data = data;
	b->len = len;
	return b;
}

struct reply_blob *reply_blob_ref(struct reply_blob *b)
{
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	return b;
}

void reply_blob_unref(struct reply_blob *b)
{
	if (b && !__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL)) {
		free(b->data);
		free(b);
	}
}

static size_t blob_len(const struct reply_blob *b)
{
	return b ? b->len : 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void reply_cache_init(struct reply_cache *c, size_t max_entries, size_t max_bytes)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->max_entries = max_entries ? max_entries : REPLY_CACHE_ENTRIES;
	c->max_bytes = max_bytes ? max_bytes : REPLY_CACHE_BYTES;
}

static void unlink_entry(struct reply_cache *c, struct reply_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(struct reply_cache *c, struct reply_entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
}

static void drop(struct reply_cache *c, struct reply_entry *e)
{
	unlink_entry(c, e);
	c->nr--;
	c->bytes -= blob_len(e->b);
	reply_blob_unref(e->b);
	free(e->key);
	free(e);
}

void reply_cache_release(struct reply_cache *c)
{
	while (c->head)
		drop(c, c->head);
	pthread_mutex_destroy(&c->lock);
}

uint64_t reply_cache_gen(struct reply_cache *c)
{
	uint64_t g;

	pthread_mutex_lock(&c->lock);
	g = c->gen;
	pthread_mutex_unlock(&c->lock);
	return g;
}

void reply_cache_bump(struct reply_cache *c)
{
	pthread_mutex_lock(&c->lock);
	c->gen++;
	pthread_mutex_unlock(&c->lock);
}

static struct reply_entry *find(struct reply_cache *c, const char *key)
{
	for (struct reply_entry *e = c->head; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

struct reply_blob *reply_cache_get(struct reply_cache *c, const char *key)
{
	struct reply_entry *e;
	struct reply_blob *b = NULL;

	pthread_mutex_lock(&c->lock);
	e = find(c, key);
	if (e) {
		e->used = now_s();
		unlink_entry(c, e);
		push_front(c, e);
		if (e->gen == c->gen && e->b) {
			b = reply_blob_ref(e->b);
		} else if (e->b) {
			/* stale: its key stays, for reply_cache_recent() */
			c->bytes -= e->b->len;
			reply_blob_unref(e->b);
			e->b = NULL;
		}
	}
	if (b)
		c->hits++;
	else
		c->misses++;
	pthread_mutex_unlock(&c->lock);
	return b;
}

void reply_cache_put(struct reply_cache *c, uint64_t gen, const char *key, struct reply_blob *b)
{
	struct reply_entry *e;

	pthread_mutex_lock(&c->lock);
	if (gen != c->gen || b->len > c->max_bytes / 4)
		goto out;
	e = find(c, key);
	if (e) {
		/* the same answer again, or one of a newer generation */
		unlink_entry(c, e);
		c->bytes -= blob_len(e->b);
		reply_blob_unref(e->b);
	} else {
		e = xcalloc(1, sizeof(*e));
		e->key = xstrdup(key);
		c->nr++;
	}
	e->gen = gen;
	e->b = reply_blob_ref(b);
	e->used = now_s();
	c->bytes += b->len;
	push_front(c, e);
	/* the least recently used go first; the one just put stays */
	while (c->nr > c->max_entries || c->bytes > c->max_bytes) {
		struct reply_entry *last = c->head;

		while (last->next)
			last = last->next;
		if (last == e)
			break;
		drop(c, last);
	}
out:
	pthread_mutex_unlock(&c->lock);
}

size_t reply_cache_recent(struct reply_cache *c, double since_s, size_t max, char ***keys)
{
	double cut = now_s() - since_s;
	size_t nr = 0;

	*keys = NULL;
	pthread_mutex_lock(&c->lock);
	for (struct reply_entry *e = c->head; e && nr < max && e->used >= cut; e = e->next) {
		*keys = xrealloc(*keys, (nr + 1) * sizeof(**keys));
		(*keys)[nr++] = xstrdup(e->key);
	}
	pthread_mutex_unlock(&c->lock);
	return nr;
}
