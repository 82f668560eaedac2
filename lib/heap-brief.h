/*
 * heap-brief.h: the memory half of the brief, for heap profiles
 * (profile_is_heap()): owned allocation sites (the first owned frame of
 * each stack, as the CPU brief attributes time) ranked by bytes and by
 * count, with tags and their evidence. brief.c builds it alongside the
 * hotspots; docs/brief.md has the rules and thresholds.
 * A struct heap_brief owns its sites; their strings point into the profile.
 */
#ifndef HOTLOOP_HEAP_BRIEF_H
#define HOTLOOP_HEAP_BRIEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap-profile.h"

struct profile;
struct pf_frame;
struct strbuf;
struct json_t;

enum heap_tag { HT_ALLOC_IN_LOOP, HT_REALLOC_GROWTH, HT_SHORT_LIVED, HT_LEAK, HT_NR };
const char *heap_tag_name(enum heap_tag t);

/* Thresholds of the tag rules (docs/brief.md). */
#define HEAP_LOOP_MIN		1000	/* allocations, with the call inside a loop */
#define HEAP_REALLOC_MIN	16	/* realloc calls (op=realloc) */
#define HEAP_REALLOC_GROWTH	2.0	/* largest over smallest size, when sizes are known */
#define HEAP_SHORT_MIN		100	/* allocations */
#define HEAP_SHORT_SHARE	0.50	/* of them temporary */
#define HEAP_SITES_SHOWN	10	/* by bytes; by count: half of it */

struct heap_site {
	const char *function, *file, *binary;	/* binary: its mapped file, or NULL */
	int64_t line;			/* the line allocating the most bytes */
	const char *caller;		/* the next frame out, or NULL */
	const char *caller_file, *caller_binary;
	int64_t caller_line;
	int64_t v[HEAP_NR_SAMPLE_TYPES];
	int64_t realloc_objects, min_size, max_size;	/* sizes: 0 when unknown */
	int64_t loop_line;		/* the head of the loop around the call, 0: none found */
	const char *loop_in;		/* the function holding that loop */
	char *evidence[HT_NR];		/* NULL: the site does not have the tag */
	int64_t best_line_bytes, best_caller_bytes;
};

struct heap_brief {
	struct heap_site *sites;	/* by 'rank' bytes, largest first */
	size_t nr_sites, alloc_sites;
	size_t *by_count;		/* indexes into sites, by alloc_objects */
	uint32_t *site_of;		/* function id -> index + 1 (while building) */
	size_t nr_site_of;
	int64_t total[HEAP_NR_SAMPLE_TYPES];	/* the whole profile's */
	int64_t owned[HEAP_NR_SAMPLE_TYPES];	/* of the sites' */
	int64_t peak;			/* heap-peak=BYTES, -1 when the profile does not say */
	int idx[HEAP_NR_SAMPLE_TYPES];		/* the profile's sample type indexes, -1 when absent */
	size_t show;			/* sites shown by bytes: the budget may cut them */
	enum heap_sample_type rank;	/* sites' order: alloc_space, else (none) inuse_space, leak_space */
};

/* Start on profile p (a heap profile). */
void heap_brief_init(struct heap_brief *hb, const struct profile *p);
/*
 * Add sample i, attributed to its first owned frame 'site' (NULL when it
 * has none); 'caller' is the frame after it, or NULL.
 */
void heap_brief_add(struct heap_brief *hb, const struct profile *p, size_t i,
		    const struct pf_frame *site, const struct pf_frame *caller);
/* Rank, keep the top 'top' (0: HEAP_SITES_SHOWN) and tag (reads the binaries unless no_asm). */
void heap_brief_finish(struct heap_brief *hb, size_t top, bool no_asm);

void heap_brief_format_md(const struct heap_brief *hb, struct strbuf *out);
struct json_t *heap_brief_to_json(const struct heap_brief *hb);
void heap_brief_release(struct heap_brief *hb);

#endif
