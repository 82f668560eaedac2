/*
 * profile.h: the one in-memory profile model, pprof's. Every command that
 * reads or writes profiles goes through it. A struct profile owns all of its
 * arrays and its string table; the pointers the accessors return stay valid
 * until the next add to the same array or profile_release().
 *
 * Ids are dense: functions[i].id == i + 1, and so for locations and mappings.
 * Readers of foreign profiles remap ids to keep this true.
 */
#ifndef HOTLOOP_PROFILE_H
#define HOTLOOP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "intern.h"

struct strbuf;

struct pf_value_type {
	int64_t type, unit;	/* string indexes */
};

struct pf_label {
	int64_t key, str, num, num_unit;	/* key, str, num_unit: string indexes */
};

struct pf_sample {
	size_t loc_off;		/* location ids at p->sample_locs[loc_off..], leaf first */
	uint32_t nloc;
	uint32_t nlabel;
	size_t label_off;	/* p->labels[label_off..] */
	size_t value_off;	/* p->nr_sample_type values at p->values[value_off..] */
};

struct pf_mapping {
	uint64_t id, start, limit, offset;
	int64_t filename, build_id;
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct pf_line {
	uint64_t function_id;
	int64_t line, column;
};

struct pf_location {
	uint64_t id, mapping_id, address;
	size_t line_off;	/* p->lines[line_off..], innermost (inlined) first */
	uint32_t nline;
	bool is_folded;
};

struct pf_function {
	uint64_t id;
	int64_t name, system_name, filename, start_line;
};

struct profile {
	struct strtab strings;

	struct pf_value_type *sample_type;
	size_t nr_sample_type, alloc_sample_type;
	struct pf_sample *samples;
	size_t nr_samples, alloc_samples;
	uint64_t *sample_locs;
	size_t nr_sample_locs, alloc_sample_locs;
	int64_t *values;
	size_t nr_values, alloc_values;
	struct pf_label *labels;
	size_t nr_labels, alloc_labels;

	struct pf_mapping *mappings;
	size_t nr_mappings, alloc_mappings;
	struct pf_location *locations;
	size_t nr_locations, alloc_locations;
	struct pf_line *lines;
	size_t nr_lines, alloc_lines;
	struct pf_function *functions;
	size_t nr_functions, alloc_functions;

	int64_t *comments;
	size_t nr_comments, alloc_comments;
	int64_t drop_frames, keep_frames;
	int64_t time_nanos, duration_nanos;
	struct pf_value_type period_type;
	int64_t period;
	int64_t default_sample_type;

	struct hindex fn_index, loc_index, map_index;	/* dedup: hash -> id - 1 */
};

void profile_init(struct profile *p);
void profile_release(struct profile *p);
/* Release and init: empty again, as a reader leaves p when it fails. */
void profile_clear(struct profile *p);

static inline int64_t profile_str(struct profile *p, const char *s)
{
	return strtab_intern_str(&p->strings, s);
}

static inline const char *profile_string(const struct profile *p, int64_t i)
{
	return strtab_get(&p->strings, i);
}

void profile_add_sample_type(struct profile *p, const char *type, const char *unit);
/* Index of the sample type named 'type', or -1. */
int profile_find_sample_type(const struct profile *p, const char *type);
/*
 * The index of the sample type to show: the one named 'name' when given
 * (an error listing the choices when there is none), else the profile's
 * default_sample_type, else the first type named "samples", else the last.
 * -1 after an error.
 */
int profile_pick_sample_type(const struct profile *p, const char *name);

/* The add functions deduplicate: adding an equal element returns its id. */
uint64_t profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit,
			     uint64_t offset, const char *filename, const char *build_id);
uint64_t profile_add_function(struct profile *p, const char *name,
			      const char *system_name, const char *filename,
			      int64_t start_line);
uint64_t profile_add_location(struct profile *p, uint64_t mapping_id, uint64_t address,
			      const struct pf_line *lines, size_t nline);
/*
 * Room for 'nsamples' more samples holding 'nlocs' location ids in all, and
 * no more: a reader that knows how many are coming saves the slack that
 * growing leaves. (Their values grow as they come: a hostile count of
 * sample types must not multiply what is reserved.)
 */
void profile_reserve_samples(struct profile *p, size_t nsamples, size_t nlocs);
/* values: p->nr_sample_type of them. */
void profile_add_sample(struct profile *p, const uint64_t *locs, size_t nloc,
			const int64_t *values, const struct pf_label *labels,
			size_t nlabel);
void profile_add_comment(struct profile *p, const char *comment);

/* The same, with strings given as indexes into p's string table. */
uint64_t profile_add_mapping_idx(struct profile *p, const struct pf_mapping *m);
uint64_t profile_add_function_idx(struct profile *p, int64_t name, int64_t system_name,
				  int64_t filename, int64_t start_line);

/* Accessors by id: NULL for 0 or an id out of range. */
const struct pf_mapping *profile_mapping(const struct profile *p, uint64_t id);
const struct pf_location *profile_location(const struct profile *p, uint64_t id);
const struct pf_function *profile_function(const struct profile *p, uint64_t id);

static inline const uint64_t *profile_sample_locs(const struct profile *p,
						  const struct pf_sample *s)
{
	/* no arithmetic on NULL: a profile without locations has no array */
	return s->nloc ? p->sample_locs + s->loc_off : NULL;
}

static inline const int64_t *profile_sample_values(const struct profile *p,
						   const struct pf_sample *s)
{
	return p->nr_sample_type ? p->values + s->value_off : NULL;
}

/* The string value of label 'key' on sample s, or NULL. */
const char *profile_sample_label(const struct profile *p, const struct pf_sample *s,
				 const char *key);

/*
 * One frame of a stack: a location's line, or the bare location when it has
 * no lines. Frames come leaf first; inlined frames precede the frame of the
 * function they were inlined into.
 */
struct pf_frame {
	const struct pf_location *loc;
	const struct pf_mapping *mapping;	/* NULL when unknown */
	const struct pf_function *fn;		/* NULL when not symbolized */
	int64_t line;
	bool inlined;
	size_t slot;		/* see profile_frame_slots(); set by profile_sample_frames() */
};

/*
 * Frame j of location l (0: the innermost; a location without lines has
 * one frame), as profile_sample_frames() gives it.
 */
struct pf_frame profile_location_frame(const struct profile *p, const struct pf_location *l,
				       uint32_t j);

/* Expand sample s into frames; *frames grows as needed. Returns the count. */
size_t profile_sample_frames(const struct profile *p, const struct pf_sample *s,
			     struct pf_frame **frames, size_t *alloc);

/*
 * Every distinct frame of p has a slot below this number: its line's index
 * in p->lines, or for a location without lines p->nr_lines + its index.
 * Frames in the same slot are alike in all but their place in a stack, so
 * what depends on the frame alone (a table row, whether it is owned) can be
 * worked out once per slot instead of once per frame of every sample.
 */
static inline size_t profile_frame_slots(const struct profile *p)
{
	return p->nr_lines + p->nr_locations;
}

/* A frame's function name, "[unknown]" when there is none. */
const char *frame_name(const struct profile *p, const struct pf_frame *f);
/* A frame's source file, "" when unknown. */
const char *frame_file(const struct profile *p, const struct pf_frame *f);
/* Basename of the frame's mapping file ("[unknown]" when none). */
const char *frame_dso(const struct profile *p, const struct pf_frame *f);
/*
 * Where the kernel's half of a 64-bit address space starts (x86-64, arm64):
 * user code never lives above it.
 */
#define KERNEL_HALF 0xffff800000000000ull

/*
 * True for kernel frames: mapping "[kernel.kallsyms]" and friends, or a
 * mapping in the kernel's half of the address space (a module, "[nf_conntrack]").
 */
bool frame_is_kernel(const struct profile *p, const struct pf_frame *f);

/*
 * Check every reference (ids, string indexes, value counts); on failure
 * report what is wrong and return -1. Readers call it before handing out a
 * profile.
 */
int profile_validate(const struct profile *p);

/*
 * Add src's samples, and the mappings, functions and locations they use,
 * to dst (deduplicated as every add is). An empty dst takes src's sample
 * types and period; otherwise they must match, or -1 with an error.
 * Durations add up; the earlier start time is kept.
 */
int profile_merge(struct profile *dst, const struct profile *src);

/*
 * Set each mapping's has_functions, has_filenames, has_line_numbers and
 * has_inline_frames from its locations, for a reader that symbolized them:
 * pprof's tools take a mapping without them as one still to symbolize.
 */
void profile_mark_symbolized(struct profile *p);

/* Sum of sample type 'idx' over all samples. */
int64_t profile_total(const struct profile *p, int idx);

#endif
