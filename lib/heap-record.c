/*
 * heap-record.c: `hotloop record --heap`. Runs the command with
 * libhotloop-heap.so preloaded, then reads the stream of every process image
 * (heap-stream.h), pairs allocations with their frees, and builds one heap
 * profile through record.c's timeline (mappings, symbols) plus a CSV of the
 * live bytes over time.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "strbuf.h"
#include "hindex.h"
#include "profile.h"
#include "pprof.h"
#include "record.h"
#include "runner.h"
#include "heap-profile.h"
#include "heap-record.h"
#include "symbolize.h"

/* What one stream may hold: stack ids, and text of maps. */
#define MAX_STACK_ID (1u << 22)
#define HEAP_STACK_LEN_CUT 0x80000000u	/* in stack_len: a stack cut to its first frame */
#define MAX_MAPS_TEXT (64u << 20)
/* A stream file larger than this is not read. */
#define MAX_STREAM_FILE ((size_t)16 << 30)

double heap_weight(uint64_t size, uint64_t rate)
{
	double x;

	if (rate <= 1)
		return 1.0;
	x = (double)(size ? size : 1) / (double)rate;
	return 1.0 / -expm1(-x);
}

/* ---- the stream ------------------------------------------------------------ */

void heap_stream_init(struct heap_stream *s)
{
	memset(s, 0, sizeof(*s));
	s->scale_objects = s->scale_bytes = 1;
}

void heap_stream_release(struct heap_stream *s)
{
	free(s->chunks);
	free(s->pcs);
	free(s->stack_off);
	free(s->stack_len);
	free(s->maps);
	free(s->ticks);
	free(s->points);
	free(s->sites);
	free(s->live);
	heap_stream_init(s);
}

struct cursor {
	const unsigned char *p, *end;
	uint64_t prev_seq, prev_addr;	/* the chunk's last allocation or free */
};

static bool take(struct cursor *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	memcpy(out, c->p, n);
	c->p += n;
	return true;
}

static bool take_varint(struct cursor *c, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		unsigned char b;

		if (c->p == c->end)
			return false;
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 0);
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;	/* longer than 10 bytes */
}

/*
 * An allocation's or a free's seq and address, deltas from the chunk's
 * previous; a seq that wraps around is malformed (the chunk's seqs only grow).
 */
static bool take_seq_addr(struct cursor *c, uint64_t *seq, uint64_t *addr)
{
	uint64_t ds, za;

	if (!take_varint(c, &ds) || !take_varint(c, &za) || c->prev_seq + ds < c->prev_seq)
		return false;
	*seq = c->prev_seq += ds;
	*addr = c->prev_addr += heap_unzigzag(za);
	return true;
}

/* An allocation or a free as the replay sees it. */
struct event {
	uint8_t type;		/* HEAP_EV_ALLOC or HEAP_EV_FREE */
	uint8_t op, flags;
	uint32_t stack;
	uint64_t seq, addr, size;
};

static bool take_alloc(struct cursor *c, struct event *e)
{
	uint64_t stack;

	if (!take(c, &e->op, 1) || !take(c, &e->flags, 1) || !take_varint(c, &stack) ||
	    !take_seq_addr(c, &e->seq, &e->addr) || !take_varint(c, &e->size) ||
	    e->op >= HEAP_NR_OPS || stack > UINT32_MAX)
		return false;
	e->stack = (uint32_t)stack;
	return true;
}

static bool take_free(struct cursor *c, struct event *e)
{
	return take(c, &e->flags, 1) && take_seq_addr(c, &e->seq, &e->addr);
}

/* Past one event that is not an allocation or a free (checked when parsed). */
static bool skip_other(struct cursor *c, uint8_t type)
{
	uint32_t n32;
	uint16_t n16;
	size_t n;

	switch (type) {
	case HEAP_EV_STACK:
		if (!take(c, &n32, 4) || !take(c, &n16, 2))
			return false;
		n = 8u * (n16 & (uint16_t)~HEAP_STACK_CUT);
		break;
	case HEAP_EV_MAPS:
		if (!take(c, &n32, 4))
			return false;
		n = n32;
		break;
	case HEAP_EV_TICK:
		n = 16;
		break;
	case HEAP_EV_END:
		n = sizeof(struct heap_end_event);
		break;
	case HEAP_EV_PEAK:
		n = 9;
		break;
	case HEAP_EV_POINT:
		n = sizeof(struct heap_point);
		break;
	default:
		return false;
	}
	if ((size_t)(c->end - c->p) < n)
		return false;
	c->p += n;
	return true;
}

/* The chunk's next allocation or free into *e; false at its end. */
static bool next_event(struct cursor *c, struct event *e)
{
	while (c->p < c->end) {
		uint8_t type = *c->p++;

		e->type = type;
		if (type == HEAP_EV_ALLOC)
			return take_alloc(c, e);
		if (type == HEAP_EV_FREE)
			return take_free(c, e);
		if (!skip_other(c, type))
			return false;
	}
	return false;
}

static int parse_event(struct heap_stream *s, struct cursor *c, uint64_t *first_seq)
{
	uint8_t type;

	if (!take(c, &type, 1))
		return -1;
	switch (type) {
	case HEAP_EV_STACK: {
		uint32_t id;
		uint16_t n;

		uint32_t cut;

		if (!take(c, &id, 4) || !take(c, &n, 2))
			return -1;
		cut = n & HEAP_STACK_CUT ? HEAP_STACK_LEN_CUT : 0;
		n &= (uint16_t)~HEAP_STACK_CUT;
		if (n > HEAP_MAX_FRAMES || (size_t)(c->end - c->p) < 8u * n)
			return -1;
		if (!id || id > MAX_STACK_ID)
			return -1;
		if (id > heap_stack_ids(s->max_stacks ? s->max_stacks : HEAP_DEFAULT_MAX_STACKS)) {
			c->p += 8u * n;	/* past the limit: not kept */
			return 0;
		}
		if (id >= s->nr_stacks) {
			size_t old = s->alloc_stacks;

			ALLOC_GROW(s->stack_off, (size_t)id + 1, s->alloc_stacks);
			s->stack_len = xrealloc(s->stack_len, s->alloc_stacks * sizeof(*s->stack_len));
			memset(s->stack_len + old, 0, (s->alloc_stacks - old) * sizeof(*s->stack_len));
			memset(s->stack_off + old, 0, (s->alloc_stacks - old) * sizeof(*s->stack_off));
			s->nr_stacks = (size_t)id + 1;
		}
		ALLOC_GROW(s->pcs, s->nr_pcs + n + 1, s->alloc_pcs);
		memcpy(s->pcs + s->nr_pcs, c->p, 8u * n);
		c->p += 8u * n;
		s->stack_off[id] = s->nr_pcs;
		s->stack_len[id] = n | cut;
		s->nr_pcs += n;
		return 0;
	}
	case HEAP_EV_ALLOC: {
		struct event e;
		double w;

		if (!take_alloc(c, &e))
			return -1;
		if (*first_seq == UINT64_MAX)
			*first_seq = e.seq;
		w = heap_weight(e.size, s->header.rate);
		s->weight_objects += w;
		s->weight_bytes += w * (double)e.size;
		s->nr_allocs++;
		return 0;
	}
	case HEAP_EV_FREE: {
		struct event e;

		if (!take_free(c, &e))
			return -1;
		if (*first_seq == UINT64_MAX)
			*first_seq = e.seq;
		s->nr_frees++;
		return 0;
	}
	case HEAP_EV_MAPS: {
		uint32_t n;

		if (!take(c, &n, 4) || (size_t)(c->end - c->p) < n ||
		    s->nr_maps + n + 2 > MAX_MAPS_TEXT)
			return -1;
		ALLOC_GROW(s->maps, s->nr_maps + n + 2, s->alloc_maps);
		memcpy(s->maps + s->nr_maps, c->p, n);
		s->nr_maps += n;
		/* a NUL inside the text would end it early: make it a line end */
		for (size_t i = s->nr_maps - n; i < s->nr_maps; i++)
			if (!s->maps[i])
				s->maps[i] = '\n';
		if (n && s->maps[s->nr_maps - 1] != '\n')
			s->maps[s->nr_maps++] = '\n';
		s->maps[s->nr_maps] = '\0';
		c->p += n;
		return 0;
	}
	case HEAP_EV_TICK: {
		struct heap_tick t;

		if (!take(c, &t.time_ns, 8) || !take(c, &t.seq, 8))
			return -1;
		ALLOC_GROW(s->ticks, s->nr_ticks + 1, s->alloc_ticks);
		s->ticks[s->nr_ticks++] = t;
		return 0;
	}
	case HEAP_EV_POINT: {
		struct heap_point pt;

		if (!take(c, &pt, sizeof(pt)))
			return -1;
		ALLOC_GROW(s->points, s->nr_points + 1, s->alloc_points);
		s->points[s->nr_points++] = pt;
		return 0;
	}
	case HEAP_EV_PEAK:
		if (!take(c, &s->stats_peak, 8) || !take(c, &s->stats_flags, 1))
			return -1;
		s->has_stats_peak = true;
		return 0;
	case HEAP_EV_END:
		if (!take(c, &s->end, sizeof(s->end)))
			return -1;
		s->has_end = true;
		return 0;
	}
	return -1;
}

int heap_stream_parse(struct heap_stream *s, const void *data, size_t len)
{
	struct cursor c = { data, (const unsigned char *)data + len, 0, 0 };

	uint32_t max_stacks = s->max_stacks;

	heap_stream_release(s);
	s->max_stacks = max_stacks;
	s->data = data;
	if (!take(&c, &s->header, sizeof(s->header)) ||
	    memcmp(s->header.magic, HEAP_STREAM_MAGIC, sizeof(s->header.magic)))
		return error("not a heap stream");
	if (s->header.version != HEAP_STREAM_VERSION)
		return error("heap stream version %u: expected %d", s->header.version,
			     HEAP_STREAM_VERSION);
	while (c.p < c.end) {
		struct heap_chunk_header h;
		struct cursor chunk;
		uint64_t first = UINT64_MAX;

		if (!take(&c, &h, sizeof(h)) || (size_t)(c.end - c.p) < h.len) {
			s->cut = true;	/* the process died while writing */
			break;
		}
		chunk = (struct cursor){ c.p, c.p + h.len, 0, 0 };
		c.p += h.len;
		while (chunk.p < chunk.end)
			if (parse_event(s, &chunk, &first)) {
				error("malformed heap stream: bad event at byte %zu",
				      (size_t)(chunk.p - (const unsigned char *)data));
				heap_stream_release(s);
				return -1;
			}
		if (first != UINT64_MAX) {
			ALLOC_GROW(s->chunks, s->nr_chunks + 1, s->alloc_chunks);
			s->chunks[s->nr_chunks++] = (struct heap_chunk){
				(size_t)(chunk.end - h.len - (const unsigned char *)data), h.len, first,
			};
		}
	}
	return 0;
}

/*
 * The blocks live so far, by address: linear probing, backward-shift
 * deletion. 16 bytes a block, as many live blocks as the program had (a
 * table that fits the cache replays several times faster): a size from
 * 4 GiB up keeps its high half in a second table (LIVE_BIG).
 */
struct live_map {
	struct live_slot {
		uint64_t addr;
		uint32_t site1;	/* index into sites + 1, | LIVE_BIG; 0: empty */
		uint32_t size;	/* the low half */
	} *v;
	size_t mask, nr;
};
#define LIVE_BIG 0x80000000u	/* sites stay below: heap_stack_ids() * HEAP_NR_OPS */

static size_t live_home(const struct live_map *m, uint64_t addr)
{
	uint64_t h = (addr >> 4) * 0x9e3779b97f4a7c15ull;	/* Fibonacci hashing */

	return (size_t)(h >> 32) & m->mask;
}

static struct live_slot *live_find(struct live_map *m, uint64_t addr)
{
	for (size_t i = live_home(m, addr);; i = (i + 1) & m->mask)
		if (!m->v[i].site1 || m->v[i].addr == addr)
			return &m->v[i];
}

static void live_grow(struct live_map *m)
{
	struct live_map old = *m;

	m->mask = old.v ? 2 * old.mask + 1 : 1023;
	m->v = xcalloc(m->mask + 1, sizeof(*m->v));
	for (size_t i = 0; old.v && i <= old.mask; i++)
		if (old.v[i].site1)
			*live_find(m, old.v[i].addr) = old.v[i];
	free(old.v);
}

static void live_delete(struct live_map *m, struct live_slot *slot)
{
	size_t i = (size_t)(slot - m->v), j = i;

	m->nr--;
	for (;;) {
		size_t h;

		m->v[i].site1 = 0;
		do {
			j = (j + 1) & m->mask;
			if (!m->v[j].site1)
				return;
			h = live_home(m, m->v[j].addr);
		} while (i <= j ? (i < h && h <= j) : (i < h || h <= j));
		m->v[i] = m->v[j];
		i = j;
	}
}

static int tick_cmp(const void *a, const void *b)
{
	const struct heap_tick *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int chunk_cmp(const void *a, const void *b)
{
	const struct heap_chunk *x = a, *y = b;

	if (x->first_seq != y->first_seq)
		return x->first_seq < y->first_seq ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static uint64_t whole(double v)
{
	return v <= 0 ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v);
}

/*
 * The chunks being merged: each with its next event, a binary heap by
 * that event's seq. Chunks of one thread follow one another, so it
 * holds as many as threads wrote at once.
 */
struct merge {
	struct reader {
		struct cursor c;
		struct event e;
	} *v;
	size_t nr, alloc;
};

static void merge_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, k = i;
		struct reader t;

		if (l < m->nr && m->v[l].e.seq < m->v[k].e.seq)
			k = l;
		if (r < m->nr && m->v[r].e.seq < m->v[k].e.seq)
			k = r;
		if (k == i)
			return;
		t = m->v[i];
		m->v[i] = m->v[k];
		m->v[k] = t;
		i = k;
	}
}

static void merge_push(struct merge *m, const struct reader *rd)
{
	size_t i = m->nr;

	ALLOC_GROW(m->v, m->nr + 1, m->alloc);
	m->v[m->nr++] = *rd;
	while (i > 0 && m->v[(i - 1) / 2].e.seq > m->v[i].e.seq) {
		struct reader t = m->v[i];

		m->v[i] = m->v[(i - 1) / 2];
		m->v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* The top reader moves to its next event, or leaves the heap. */
static void merge_advance(struct merge *m)
{
	if (!next_event(&m->v[0].c, &m->v[0].e))
		m->v[0] = m->v[--m->nr];
	merge_down(m, 0);
}

struct replay {
	struct heap_stream *s;
	struct live_map m, big;	/* big: the high halves of sizes (site1 1) */
	struct hindex index;	/* of s->sites, by key */
	uint64_t last_key;
	uint32_t last_site;
	uint32_t stack_limit;	/* heap_stack_ids() of the stream's limit */
	uint64_t epoch;		/* peaks so far: a site whose stamp is older changed not since */
	double live, peak;
	size_t tick;		/* the next of s->ticks (by seq) to be given the live bytes */
};

static bool site_eq(const void *table, size_t i, const void *key)
{
	return ((const struct heap_stream *)table)->sites[i].key == *(const uint64_t *)key;
}

static uint32_t site_of(struct replay *rp, uint32_t stack, uint8_t op)
{
	struct heap_stream *s = rp->s;
	uint64_t key = (uint64_t)stack << 2 | op, hash;
	size_t slot, i;

	if (key == rp->last_key)	/* a loop's allocations share their site */
		return rp->last_site;
	hash = hash_u64(HASH_SEED, key);
	hindex_reserve(&rp->index);
	slot = hindex_find(&rp->index, hash, site_eq, s, &key);
	if ((i = hindex_at(&rp->index, slot)) == HINDEX_NONE) {
		ALLOC_GROW(s->sites, s->nr_sites + 1, s->alloc_sites);
		i = s->nr_sites++;
		memset(&s->sites[i], 0, sizeof(s->sites[i]));
		s->sites[i].key = key;
		hindex_set(&rp->index, slot, hash, i);
	}
	rp->last_key = key;
	rp->last_site = (uint32_t)i;
	return (uint32_t)i;
}

/* What site i has live is about to change: keep what it had at the latest peak. */
static void site_touch(struct replay *rp, struct heap_site *st)
{
	if (st->stamp != rp->epoch) {
		st->at_peak[0] = st->live[0];
		st->at_peak[1] = st->live[1];
		st->stamp = rp->epoch;
	}
}

/* The block in slot is gone (freed, or its address allocated again). */
static void block_gone(struct replay *rp, struct live_slot *slot, bool temp)
{
	struct heap_site *st = &rp->s->sites[(slot->site1 & ~LIVE_BIG) - 1];
	uint64_t size = slot->size;
	double w, bytes;

	if (slot->site1 & LIVE_BIG) {
		struct live_slot *hi = live_find(&rp->big, slot->addr);

		if (hi->site1) {
			size |= (uint64_t)hi->size << 32;
			live_delete(&rp->big, hi);
		}
	}
	w = heap_weight(size, rp->s->header.rate);
	bytes = w * (double)size;

	site_touch(rp, st);
	st->live[0] -= w;
	st->live[1] -= bytes;
	if (temp)
		st->v[HEAP_TEMP_OBJECTS] += w;
	rp->live -= bytes;
	live_delete(&rp->m, slot);
}

static void replay_event(struct replay *rp, const struct event *e)
{
	struct live_slot *slot = live_find(&rp->m, e->addr);
	struct heap_site *st;
	double w, bytes;
	uint32_t i;

	if (slot->site1) {
		block_gone(rp, slot, e->type == HEAP_EV_FREE && (e->flags & HEAP_FREE_TEMP));
		slot = live_find(&rp->m, e->addr);
	}
	if (e->type == HEAP_EV_FREE)
		return;
	/* a stack id past what is read has no stack: the sites stay below LIVE_BIG */
	i = site_of(rp, e->stack > rp->stack_limit ? 0 : e->stack, e->op);
	st = &rp->s->sites[i];
	w = heap_weight(e->size, rp->s->header.rate);
	bytes = w * (double)e->size;
	st->v[HEAP_ALLOC_OBJECTS] += w;
	st->v[HEAP_ALLOC_SPACE] += bytes;
	if (e->flags & HEAP_ALLOC_UNTRACKED)
		return;	/* its free is never seen */
	if ((rp->m.nr + 1) * 2 > rp->m.mask) {
		live_grow(&rp->m);
		slot = live_find(&rp->m, e->addr);
	}
	*slot = (struct live_slot){ e->addr, i + 1, (uint32_t)e->size };
	rp->m.nr++;
	if (e->size >> 32) {
		struct live_slot *hi;

		slot->site1 |= LIVE_BIG;
		if ((rp->big.nr + 1) * 2 > rp->big.mask)
			live_grow(&rp->big);
		hi = live_find(&rp->big, e->addr);
		*hi = (struct live_slot){ e->addr, 1, (uint32_t)(e->size >> 32) };
		rp->big.nr++;
	}
	site_touch(rp, st);
	st->live[0] += w;
	st->live[1] += bytes;
	rp->live += bytes;
	if (rp->live > rp->peak) {
		/* every site's live values now are its values at the peak */
		rp->peak = rp->live;
		rp->s->peak_seq = e->seq + 1;
		rp->epoch++;
	}
}

/* The live bytes at a time, not yet scaled (replay_end() scales them). */
static void add_live_point(struct heap_stream *s, uint64_t time_ns, double live)
{
	ALLOC_GROW(s->live, s->nr_live + 1, s->alloc_live);
	s->live[s->nr_live++] = (struct heap_live){ time_ns, whole(live) };
}

/*
 * A sampled stream's estimates, brought to the totals the process counted
 * exactly: a ratio estimator. The totals are then exact, and a site's
 * share keeps the sampling's error, smaller for the sites that weigh most.
 */
static void calibrate(struct heap_stream *s)
{
	s->scale_objects = s->scale_bytes = 1;
	if (s->header.rate <= 1 || !s->has_end)
		return;
	if (s->weight_objects > 0 && s->end.allocs)
		s->scale_objects = (double)s->end.allocs / s->weight_objects;
	if (s->weight_bytes > 0 && s->end.alloc_bytes)
		s->scale_bytes = (double)s->end.alloc_bytes / s->weight_bytes;
}

/* Start replaying s: no site, nothing live. */
static void replay_begin(struct replay *rp, struct heap_stream *s)
{
	*rp = (struct replay){
		.s = s, .last_key = UINT64_MAX,
		.stack_limit = heap_stack_ids(s->max_stacks ? s->max_stacks : HEAP_DEFAULT_MAX_STACKS),
	};
	free(s->sites);
	s->sites = NULL;
	s->nr_sites = s->alloc_sites = 0;
	s->nr_live = 0;
	s->peak_bytes = s->peak_seq = 0;
	live_grow(&rp->m);
	live_grow(&rp->big);
}

/* The next event, in seq order; the ticks before it see the total so far. */
static void replay_next(struct replay *rp, const struct event *e)
{
	struct heap_stream *s = rp->s;

	for (; rp->tick < s->nr_ticks && s->ticks[rp->tick].seq <= e->seq; rp->tick++)
		add_live_point(s, s->ticks[rp->tick].time_ns, rp->live);
	replay_event(rp, e);
}

/* Every event was replayed: the last points, the values at the peak and at the end, scaled. */
static void replay_end(struct replay *rp)
{
	struct heap_stream *s = rp->s;

	for (; rp->tick < s->nr_ticks; rp->tick++)
		add_live_point(s, s->ticks[rp->tick].time_ns, rp->live);
	if (s->has_end)
		add_live_point(s, s->end.end_ns, rp->live);
	calibrate(s);
	for (size_t i = 0; i < s->nr_live && s->scale_bytes != 1; i++)
		s->live[i].bytes = whole((double)s->live[i].bytes * s->scale_bytes);
	s->peak_bytes = whole(rp->peak * s->scale_bytes);
	for (size_t i = 0; i < s->nr_sites; i++) {
		struct heap_site *st = &s->sites[i];
		const double *at = st->stamp == rp->epoch ? st->at_peak : st->live;

		st->v[HEAP_INUSE_OBJECTS] = at[0];
		st->v[HEAP_INUSE_SPACE] = at[1];
		st->v[HEAP_LEAK_OBJECTS] = st->live[0];
		st->v[HEAP_LEAK_SPACE] = st->live[1];
	}
	free(rp->m.v);
	free(rp->big.v);
	hindex_release(&rp->index);
	memset(rp, 0, sizeof(*rp));
}

void heap_stream_match(struct heap_stream *s)
{
	struct replay rp;
	struct merge mg = { 0 };
	size_t next = 0;

	if (s->nr_ticks > 1)
		qsort(s->ticks, s->nr_ticks, sizeof(*s->ticks), tick_cmp);
	if (s->nr_chunks > 1)
		qsort(s->chunks, s->nr_chunks, sizeof(*s->chunks), chunk_cmp);
	replay_begin(&rp, s);
	for (;;) {
		/* the chunks that start before the next event join the merge */
		while (next < s->nr_chunks &&
		       (!mg.nr || s->chunks[next].first_seq <= mg.v[0].e.seq)) {
			const struct heap_chunk *ch = &s->chunks[next++];
			struct reader rd = { .c = { s->data + ch->off, s->data + ch->off + ch->len, 0, 0 } };

			if (next_event(&rd.c, &rd.e))
				merge_push(&mg, &rd);
		}
		if (!mg.nr)
			break;
		replay_next(&rp, &mg.v[0].e);
		merge_advance(&mg);
	}
	replay_end(&rp);
	free(mg.v);
}

static const char *const op_names[HEAP_NR_OPS] = {
	[HEAP_OP_MALLOC] = HEAP_OP_NAME_MALLOC,
	[HEAP_OP_CALLOC] = HEAP_OP_NAME_CALLOC,
	[HEAP_OP_REALLOC] = HEAP_OP_NAME_REALLOC,
	[HEAP_OP_MEMALIGN] = HEAP_OP_NAME_MEMALIGN,
};

/* A value of a site, scaled and whole. */
static int64_t site_value(const struct heap_stream *s, const struct heap_site *st, int k)
{
	bool objects = k == HEAP_ALLOC_OBJECTS || k == HEAP_INUSE_OBJECTS ||
		       k == HEAP_LEAK_OBJECTS || k == HEAP_TEMP_OBJECTS;
	double v = st->v[k] * (objects ? s->scale_objects : s->scale_bytes);

	return v <= 0 ? 0 : v >= 9e18 ? INT64_MAX : llround(v);
}

void heap_stream_add(struct heap_stream *s, struct recording *r)
{
	pid_t pid = (pid_t)s->header.pid;

	for (size_t i = 0; i < s->nr_sites; i++) {
		const struct heap_site *st = &s->sites[i];
		uint32_t stack = (uint32_t)(st->key >> 2);
		const uint64_t *pcs = NULL;
		uint32_t n = 0;
		bool cut;
		int64_t v[HEAP_NR_SAMPLE_TYPES];

		for (int k = 0; k < HEAP_NR_SAMPLE_TYPES; k++)
			v[k] = site_value(s, st, k);
		if (stack && stack < s->nr_stacks && s->stack_len[stack]) {
			pcs = s->pcs + s->stack_off[stack];
			n = s->stack_len[stack] & ~HEAP_STACK_LEN_CUT;
			cut = s->stack_len[stack] & HEAP_STACK_LEN_CUT;
			if (cut) {
				s->cut_allocs += (double)v[HEAP_ALLOC_OBJECTS];
				s->cut_bytes += (double)v[HEAP_ALLOC_SPACE];
			}
		} else {
			/* none kept past the limit (0), or its id past what is read */
			cut = !stack || stack > heap_stack_ids(s->max_stacks ? s->max_stacks :
								 HEAP_DEFAULT_MAX_STACKS);
			s->stackless_allocs += (double)v[HEAP_ALLOC_OBJECTS];
			s->stackless_bytes += (double)v[HEAP_ALLOC_SPACE];
		}
		recording_add_heap(r, pid, pcs, n, cut, op_names[st->key & 3], v);
	}
}

/* ---- the program ------------------------------------------------------------- */

char *heap_find_lib(void)
{
	char exe[PATH_MAX], *slash, *path;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return error("cannot find the running binary: %s", strerror(errno)), NULL;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')))
		*slash = '\0';
	path = xstrfmt("%s/%s", exe, HEAP_LIB_NAME);
	if (!access(path, R_OK))
		return path;
	free(path);
	path = xstrfmt("%s/../lib/hotloop/%s", exe, HEAP_LIB_NAME);
	if (!access(path, R_OK))
		return path;
	free(path);
	error("cannot find %s beside '%s' nor in '%s/../lib/hotloop': reinstall hotloop",
	      HEAP_LIB_NAME, exe, exe);
	return NULL;
}

/* The file execvp() would run for 'name' (a copy), or NULL. */
static char *which(const char *name)
{
	const char *path = getenv("PATH");
	struct strbuf sb = STRBUF_INIT;

	if (strchr(name, '/'))
		return xstrdup(name);
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		strbuf_reset(&sb);
		if (len)
			strbuf_add(&sb, path, len);
		else
			strbuf_addch(&sb, '.');
		strbuf_addf(&sb, "/%s", name);
		if (!access(sb.buf, X_OK))
			return strbuf_detach(&sb, NULL);
		path += len + (path[len] == ':');
	}
	strbuf_release(&sb);
	return NULL;
}

int heap_check_program(const char *name)
{
	char *path = which(name);
	struct stat st;
	bool is_elf = false, has_interp = false;
	int fd, ret = 0;

	if (!path || stat(path, &st))
		goto out;
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		ret = error("'%s' is set%s: the dynamic linker ignores the heap recorder's preload "
			    "for it; record a copy without that bit",
			    path, st.st_mode & S_ISUID ? "uid" : "gid");
		goto out;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		Elf *elf;

		elf_version(EV_CURRENT);
		if ((elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) && elf_kind(elf) == ELF_K_ELF) {
			size_t nph = 0;
			GElf_Ehdr eh;

			/* a static PIE is ET_DYN like a PIE, but without PT_INTERP */
			if (gelf_getehdr(elf, &eh) && !elf_getphdrnum(elf, &nph)) {
				is_elf = true;
				for (size_t i = 0; i < nph; i++) {
					GElf_Phdr ph;

					if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
						has_interp = true;
				}
			}
		}
		elf_end(elf);
		close(fd);
	}
	if (is_elf && !has_interp)
		ret = error("'%s' is statically linked: the heap recorder works by preloading a "
			    "library, which a static program never loads", path);
out:
	free(path);
	return ret;
}

/* Start the command with the preload; its pid, or a negative exit code. */
static pid_t spawn(const struct heap_record_options *o, const char *lib, const char *dir,
		   uint64_t rate)
{
	int pfd[2], err = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC))
		return error("cannot make a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return error("cannot fork: %s", strerror(errno));
	}
	if (!pid) {
		const char *old = getenv("LD_PRELOAD");
		char buf[32];

		if (old && *old) {
			char *v = xstrfmt("%s %s", lib, old);
			setenv("LD_PRELOAD", v, 1);
		} else {
			setenv("LD_PRELOAD", lib, 1);
		}
		setenv(HEAP_ENV_DIR, dir, 1);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rate);
		setenv(HEAP_ENV_RATE, buf, 1);
		snprintf(buf, sizeof(buf), "%u", o->max_stacks ? o->max_stacks : HEAP_DEFAULT_MAX_STACKS);
		setenv(HEAP_ENV_MAX_STACKS, buf, 1);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(o->argv[0], o->argv);
		err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(err)) {
		waitpid(pid, NULL, 0);
		if (err == ENOENT) {
			error("cannot run '%s': command not found", o->argv[0]);
			return -HL_EXIT_NOT_FOUND;
		}
		error("cannot run '%s': %s", o->argv[0], strerror(err));
		return -HL_EXIT_NOT_EXECUTABLE;
	}
	return pid;
}

struct tl_row {
	uint64_t time_ns, bytes;
	uint32_t pid;
};

static int tl_row_cmp(const void *a, const void *b)
{
	const struct tl_row *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int name_cmp(const void *a, const void *b)
{
	unsigned long pa, pb, na = 0, nb = 0;
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	if (sscanf(x, "heap.%lu.%lu", &pa, &na) == 2 && sscanf(y, "heap.%lu.%lu", &pb, &nb) == 2 &&
	    (pa != pb || na != nb))
		return pa != pb ? (pa < pb ? -1 : 1) : (na < nb ? -1 : 1);
	return strcmp(x, y);
}

/* The timeline's file: the profile's name without .pb.gz/.pb, then .heap.csv. */
static char *timeline_path(const char *output)
{
	size_t n = strlen(output);

	if (n > 6 && !strcmp(output + n - 6, ".pb.gz"))
		n -= 6;
	else if (n > 3 && !strcmp(output + n - 3, ".pb"))
		n -= 3;
	return xstrfmt("%.*s.heap.csv", (int)n, output);
}

/* Map the stream file at path (*map NULL when it is empty), or -1 with an error. */
static int map_stream(const char *path, void **map, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*map = NULL;
	*len = 0;
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return error("cannot read '%s': %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_STREAM_FILE) {
		close(fd);
		return error("'%s' is not a stream file of at most 16 GiB", path);
	}
	if (st.st_size) {
		*map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (*map == MAP_FAILED) {
			*map = NULL;
			close(fd);
			return error("cannot map '%s': %s", path, strerror(errno));
		}
		*len = (size_t)st.st_size;
	}
	close(fd);
	return 0;
}

/* ---- following the streams while the program runs ------------------------------ */

/*
 * A thread reads each stream as its process writes it and replays its
 * chunks as they come, so that at the end little is left to do. That
 * holds while a stream's chunks come in seq order (one thread, or
 * threads that take turns); a chunk from before what was replayed (a
 * thread's buffer written late), a tick out of order or a malformed
 * byte stops the following of that stream, and it is replayed from its
 * file after the run like any other (heap_stream_match(), which merges).
 */
#define FOLLOW_MAX 64			/* streams followed at once; the rest wait for the end */
#define FOLLOW_EVERY_NS 5000000	/* between two looks */

struct follower {
	char *name;			/* heap.PID.N */
	int fd;
	struct strbuf pending;		/* read, not yet taken: the header, or a chunk's start */
	size_t taken;			/* bytes of pending already taken */
	bool has_header, stopped;
	uint64_t last_seq;		/* the latest replayed (any: one was) */
	bool any;
	struct heap_stream s;
	struct replay rp;
};

struct follow {
	const char *dir;
	uint32_t max_stacks;
	/* the DSOs of the command's first image, opened meanwhile for recording_build() */
	struct symbolizer *sym;
	char first[64];		/* its stream's name */
	bool opened;
	struct follower *v;
	size_t nr;
	atomic_bool done;
	pthread_t thread;
	bool started;
};

/* Parse and replay one whole chunk; false when the stream is to be replayed from its file. */
static bool follow_chunk(struct follower *f, const unsigned char *p, size_t len)
{
	struct heap_stream *s = &f->s;
	struct cursor c = { p, p + len, 0, 0 };
	uint64_t first = UINT64_MAX;
	size_t ticks = s->nr_ticks;
	struct event e;

	while (c.p < c.end)
		if (parse_event(s, &c, &first))
			return false;
	for (size_t i = ticks; i < s->nr_ticks; i++)
		if (i && s->ticks[i].seq < s->ticks[i - 1].seq)
			return false;
	if (first == UINT64_MAX)
		return true;
	if (f->any && first <= f->last_seq)
		return false;
	c = (struct cursor){ p, p + len, 0, 0 };
	while (next_event(&c, &e)) {
		replay_next(&f->rp, &e);
		f->last_seq = e.seq;
		f->any = true;
	}
	return true;
}

/* Take the whole chunks of f->pending (the header first); false: stop following. */
static bool follow_take(struct follower *f, uint32_t max_stacks)
{
	for (;;) {
		const unsigned char *p = (const unsigned char *)f->pending.buf + f->taken;
		size_t left = f->pending.len - f->taken;
		struct heap_chunk_header h;

		if (!f->has_header) {
			struct heap_stream *s = &f->s;

			if (left < sizeof(s->header))
				break;
			heap_stream_init(s);
			s->max_stacks = max_stacks;
			memcpy(&s->header, p, sizeof(s->header));
			if (memcmp(s->header.magic, HEAP_STREAM_MAGIC, sizeof(s->header.magic)) ||
			    s->header.version != HEAP_STREAM_VERSION)
				return false;
			f->has_header = true;
			f->taken += sizeof(s->header);
			replay_begin(&f->rp, s);
			continue;
		}
		if (left < sizeof(h))
			break;
		memcpy(&h, p, sizeof(h));
		if (h.len > HEAP_CHUNK_BYTES)
			return false;	/* not the preload's: the file is read as it is, after */
		if (left - sizeof(h) < h.len)
			break;
		if (!follow_chunk(f, p + sizeof(h), h.len))
			return false;
		f->taken += sizeof(h) + h.len;
	}
	/* what is left is less than a chunk (64 KiB and its header) */
	memmove(f->pending.buf, f->pending.buf + f->taken, f->pending.len - f->taken);
	strbuf_setlen(&f->pending, f->pending.len - f->taken);
	f->taken = 0;
	return true;
}

/* Read what f's process wrote since the last look, a MiB at a time, taking its whole chunks. */
static void follow_read(struct follower *f, uint32_t max_stacks)
{
	const size_t step = 1 << 20;
	ssize_t n;

	while (!f->stopped) {
		strbuf_grow(&f->pending, step);
		n = read(f->fd, f->pending.buf + f->pending.len, step);
		if (n <= 0)
			return;
		strbuf_setlen(&f->pending, f->pending.len + (size_t)n);
		if (!follow_take(f, max_stacks))
			f->stopped = true;
	}
}

static void follower_release(struct follower *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->rp.s)
		replay_end(&f->rp);
	heap_stream_release(&f->s);
	strbuf_release(&f->pending);
	free(f->name);
}

/*
 * Open the code files of a maps text in sym, as recording_build() will
 * (their DWARF read, decompressed: tens of milliseconds for libc's).
 */
static void open_code_files(struct symbolizer *sym, const char *maps)
{
	struct strbuf line = STRBUF_INIT;

	while (*maps) {
		size_t n = strcspn(maps, "\n");
		char perms[8] = "";
		int path = 0;

		strbuf_reset(&line);
		strbuf_add(&line, maps, n);
		maps += n + (maps[n] == '\n');
		if (sscanf(line.buf, "%*x-%*x %7s %*x %*x:%*x %*u %n", perms, &path) < 1 || !path ||
		    !strchr(perms, 'x') || line.buf[path] != '/')
			continue;
		n = strlen(line.buf + path);
		if (n >= strlen(HEAP_LIB_NAME) &&
		    !strcmp(line.buf + path + n - strlen(HEAP_LIB_NAME), HEAP_LIB_NAME))
			continue;	/* the recorder's own frames are dropped */
		symbolizer_dso(sym, line.buf + path, NULL);
	}
	strbuf_release(&line);
}

/* One look: new streams are opened (up to FOLLOW_MAX), every one is read. */
static void follow_look(struct follow *fw)
{
	DIR *d = opendir(fw->dir);
	struct dirent *de;

	while (d && fw->nr < FOLLOW_MAX && (de = readdir(d))) {
		char *path;
		int fd;
		bool known = false;

		if (strncmp(de->d_name, "heap.", 5))
			continue;
		for (size_t i = 0; i < fw->nr && !known; i++)
			known = !strcmp(fw->v[i].name, de->d_name);
		if (known)
			continue;
		path = xstrfmt("%s/%s", fw->dir, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd < 0)
			continue;
		fw->v[fw->nr] = (struct follower){ .name = xstrdup(de->d_name), .fd = fd,
						   .pending = STRBUF_INIT };
		fw->nr++;
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < fw->nr; i++) {
		struct follower *f = &fw->v[i];

		follow_read(f, fw->max_stacks);
		if (!fw->opened && f->s.maps && !strcmp(f->name, fw->first)) {
			open_code_files(fw->sym, f->s.maps);
			fw->opened = true;
		}
	}
}

static void *follow_thread(void *arg)
{
	struct follow *fw = arg;
	struct timespec ts = { 0, FOLLOW_EVERY_NS };

	while (!atomic_load(&fw->done)) {
		follow_look(fw);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/*
 * Start following dir's streams, pid's first: the thread's failure only
 * leaves everything to the end.
 */
static void follow_start(struct follow *fw, const char *dir, uint32_t max_stacks, pid_t pid)
{
	memset(fw, 0, sizeof(*fw));
	fw->dir = dir;
	fw->max_stacks = max_stacks;
	fw->sym = symbolizer_new();
	snprintf(fw->first, sizeof(fw->first), "heap.%d.0", (int)pid);
	fw->v = xcalloc(FOLLOW_MAX, sizeof(*fw->v));
	atomic_init(&fw->done, false);
	fw->started = !pthread_create(&fw->thread, NULL, follow_thread, fw);
}

/* The program has ended: the thread stops, what was written since is taken. */
static void follow_stop(struct follow *fw)
{
	atomic_store(&fw->done, true);
	if (!fw->started)
		return;
	pthread_join(fw->thread, NULL);
	follow_look(fw);
}

/*
 * The stream 'name' replayed whole while it was written, ready for
 * heap_stream_add() (its replay ended here), or NULL: replay it from its file.
 */
static struct heap_stream *follow_done(struct follow *fw, const char *name)
{
	for (size_t i = 0; i < fw->nr; i++) {
		struct follower *f = &fw->v[i];

		if (strcmp(f->name, name))
			continue;
		if (f->stopped || !f->has_header)
			return NULL;
		f->s.cut = f->pending.len > 0;	/* the process died while writing */
		replay_end(&f->rp);
		return &f->s;
	}
	return NULL;
}

static void follow_release(struct follow *fw)
{
	for (size_t i = 0; i < fw->nr; i++)
		follower_release(&fw->v[i]);
	free(fw->v);
	fw->v = NULL;
	fw->nr = 0;
	if (fw->sym)
		symbolizer_free(fw->sym);
	fw->sym = NULL;
}

/* A stream parsed and replayed: its process image's sites into r, its live bytes into rows. */
static void add_stream(struct heap_stream *s, struct recording *r, struct heap_record_result *res,
		       struct tl_row **rows, size_t *nr_rows, size_t *alloc_rows)
{
	struct sampler_event ev = { .type = SAMPLER_COMM };

	res->streams++;
	if (!s->has_end) {
		res->cut_streams++;
	} else {
		res->allocs += s->end.allocs;
		res->alloc_bytes += s->end.alloc_bytes;
	}
	res->sampled += s->nr_allocs;
	/* a new process image: its mappings start afresh */
	ev.pid = ev.tid = s->header.pid;
	ev.comm.comm = "";
	ev.comm.exec = true;
	recording_event(&ev, r);
	if (s->maps)
		recording_add_maps(r, (pid_t)s->header.pid, s->maps);
	if (s->peak_bytes > res->peak_bytes)
		res->peak_bytes = s->peak_bytes;
	heap_stream_add(s, r);
	res->cut_allocs += whole(s->cut_allocs);
	res->cut_bytes += whole(s->cut_bytes);
	res->dropped_stacks += whole(s->stackless_allocs);
	res->dropped_bytes += whole(s->stackless_bytes);
	for (size_t k = 0; k < s->nr_live; k++) {
		ALLOC_GROW(*rows, *nr_rows + 1, *alloc_rows);
		(*rows)[(*nr_rows)++] = (struct tl_row){
			s->live[k].time_ns, s->live[k].bytes, s->header.pid,
		};
	}
}

/*
 * Every stream in dir into r, the live bytes into rows: those fw replayed
 * while they were written as they are, the others parsed and replayed now.
 */
static int read_streams(const char *dir, struct follow *fw, struct recording *r,
			struct heap_record_result *res, struct tl_row **rows, size_t *nr_rows,
			size_t *alloc_rows)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	struct heap_stream s;
	int ret = 0;

	if (!d)
		return error("cannot read '%s': %s", dir, strerror(errno));
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "heap.", 5)) {
			ALLOC_GROW(names, nr + 1, alloc);
			names[nr++] = xstrdup(de->d_name);
		}
	closedir(d);
	if (nr > 1)
		qsort(names, nr, sizeof(*names), name_cmp);
	heap_stream_init(&s);
	s.max_stacks = res->max_stacks;
	for (size_t i = 0; i < nr; i++) {
		struct heap_stream *done = follow_done(fw, names[i]);
		char *path;
		void *map = NULL;
		size_t len = 0;

		if (done) {
			add_stream(done, r, res, rows, nr_rows, alloc_rows);
			continue;
		}
		path = xstrfmt("%s/%s", dir, names[i]);
		if (map_stream(path, &map, &len) || heap_stream_parse(&s, map, len)) {
			warning("skipped the heap stream '%s'", names[i]);
			if (map)
				munmap(map, len);
			free(path);
			continue;
		}
		free(path);
		heap_stream_match(&s);
		add_stream(&s, r, res, rows, nr_rows, alloc_rows);
		if (map)	/* the events were replayed from it */
			munmap(map, len);
	}
	heap_stream_release(&s);
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	return ret;
}

static int write_timeline(const char *path, struct tl_row *rows, size_t nr, uint64_t start_ns)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	if (nr > 1)
		qsort(rows, nr, sizeof(*rows), tl_row_cmp);
	strbuf_addstr(&sb, "seconds,pid,live_bytes\n");
	for (size_t i = 0; i < nr; i++)
		strbuf_addf(&sb, "%.6f,%u,%llu\n",
			    rows[i].time_ns > start_ns ? (double)(rows[i].time_ns - start_ns) / 1e9 : 0.0,
			    rows[i].pid, (unsigned long long)rows[i].bytes);
	ret = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return ret;
}

int heap_record_run(const struct heap_record_options *o, struct heap_record_result *res)
{
	uint64_t rate = o->rate ? o->rate : HEAP_DEFAULT_RATE;
	char *lib = NULL, *peak = NULL, *event = NULL;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	struct recording *r = NULL;
	struct strbuf cmd = STRBUF_INIT;
	struct tl_row *rows = NULL;
	size_t nr_rows = 0, alloc_rows = 0, argc = 0;
	struct timespec wall;
	struct profile p;
	struct follow fw = { 0 };
	uint64_t start;
	pid_t pid;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	profile_init(&p);
	if (heap_check_program(o->argv[0]) || record_check_output(o->output))
		return -1;
	if (!(lib = o->lib ? xstrdup(o->lib) : heap_find_lib()))
		return -1;
	{
		/* the streams' directory (cmd holds its name until the end) */
		const char *tmp = getenv("TMPDIR");
		char *t = xstrfmt("%s/hotloop-heap.XXXXXX", tmp && *tmp ? tmp : "/tmp");

		if (!mkdtemp(t)) {
			ret = error("cannot make a directory in '%s': %s",
				    tmp && *tmp ? tmp : "/tmp", strerror(errno));
			free(t);
			goto out_lib;
		}
		strbuf_addstr(&cmd, t);
		free(t);
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	start = now_ns();
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	res->max_stacks = o->max_stacks ? o->max_stacks : HEAP_DEFAULT_MAX_STACKS;
	pid = spawn(o, lib, cmd.buf, rate);
	if (pid > 0) {
		follow_start(&fw, cmd.buf, res->max_stacks, pid);
		while (waitpid(pid, &res->wait_status, 0) < 0 && errno == EINTR)
			;
		follow_stop(&fw);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	res->duration_ns = now_ns() - start;
	if (pid <= 0) {
		ret = pid ? pid : -1;
		goto out_dir;
	}

	r = recording_new(SAMPLER_CALLGRAPH_FP, 0);
	recording_set_heap(r);
	recording_set_main(r, pid);
	if (fw.sym)
		recording_use_symbolizer(r, fw.sym);
	if (read_streams(cmd.buf, &fw, r, res, &rows, &nr_rows, &alloc_rows))
		goto out_dir;
	if (!res->streams) {
		ret = error("no heap stream came from '%s': its dynamic linker did not load %s "
			    "(a static or setuid program, or one that clears LD_PRELOAD)",
			    o->argv[0], HEAP_LIB_NAME);
		goto out_dir;
	}
	if (res->cut_streams)
		warning("%llu of %llu process images ended without writing their end (killed, "
			"or still running): their last allocations are missing",
			(unsigned long long)res->cut_streams, (unsigned long long)res->streams);
	if (res->cut_allocs || res->dropped_stacks)
		warning("more than %u distinct stacks (--heap-max-stacks): the stacks of %llu "
			"allocations (%llu bytes) were cut to the function that called the "
			"allocator, %llu allocations (%llu bytes) count with no stack; the "
			"totals keep them all",
			res->max_stacks, (unsigned long long)res->cut_allocs,
			(unsigned long long)res->cut_bytes, (unsigned long long)res->dropped_stacks,
			(unsigned long long)res->dropped_bytes);

	{
		struct strbuf c = STRBUF_INIT;
		struct recording_info info = { 0 };

		while (o->argv[argc])
			argc++;
		runner_quote_argv(&c, (const char *const *)o->argv, argc);
		event = xstrfmt("hotloop-heap: rate=%llu", (unsigned long long)rate);
		info.event = event;
		info.freq = (unsigned)(rate > UINT_MAX ? UINT_MAX : rate);
		info.time_nanos = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
		info.duration_nanos = (int64_t)res->duration_ns;
		info.command = c.buf;
		ret = recording_build(r, &p, &info);
		strbuf_release(&c);
	}
	if (ret)
		goto out_dir;
	p.period = (int64_t)rate;
	peak = xstrfmt("%s%llu", HEAP_COMMENT_PEAK, (unsigned long long)res->peak_bytes);
	profile_add_comment(&p, peak);
	if ((ret = pprof_write_file(&p, o->output)))
		goto out_dir;
	res->timeline = timeline_path(o->output);
	ret = write_timeline(res->timeline, rows, nr_rows, start);
out_dir:
	follow_release(&fw);
	remove_tree(cmd.buf);	/* the streams, read */
out_lib:
	recording_free(r);
	profile_release(&p);
	strbuf_release(&cmd);
	free(rows);
	free(peak);
	free(event);
	free(lib);
	return ret;
}

void heap_record_result_release(struct heap_record_result *res)
{
	free(res->timeline);
	res->timeline = NULL;
}

static void add_bytes(struct strbuf *sb, uint64_t b)
{
	if (b >= 10ull << 30)
		strbuf_addf(sb, "%.1f GiB", (double)b / (1 << 30));
	else if (b >= 10ull << 20)
		strbuf_addf(sb, "%.1f MiB", (double)b / (1 << 20));
	else if (b >= 10ull << 10)
		strbuf_addf(sb, "%.1f KiB", (double)b / (1 << 10));
	else
		strbuf_addf(sb, "%llu B", (unsigned long long)b);
}

void heap_record_summary(const struct heap_record_result *res, const char *output,
			 struct strbuf *sb)
{
	strbuf_addf(sb, "hotloop record: %llu allocations (%llu recorded), ",
		    (unsigned long long)res->allocs, (unsigned long long)res->sampled);
	add_bytes(sb, res->alloc_bytes);
	strbuf_addstr(sb, " allocated, heap peak ");
	add_bytes(sb, res->peak_bytes);
	strbuf_addf(sb, ", %llu process%s, %.2f s, wrote '%s'",
		    (unsigned long long)res->streams, res->streams == 1 ? "" : "es",
		    (double)res->duration_ns / 1e9, output);
	if (res->timeline)
		strbuf_addf(sb, " and '%s'", res->timeline);
	strbuf_addch(sb, '\n');
}
