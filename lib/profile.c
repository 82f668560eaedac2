/*
 * profile.c: the in-memory profile (see profile.h): building with
 * deduplication, frame expansion and validation.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	strtab_init(&p->strings);
}

void profile_release(struct profile *p)
{
	strtab_release(&p->strings);
	free(p->sample_type);
	free(p->samples);
	free(p->sample_locs);
	free(p->values);
	free(p->labels);
	free(p->mappings);
	free(p->locations);
	free(p->lines);
	free(p->functions);
	free(p->comments);
	hindex_release(&p->fn_index);
	hindex_release(&p->loc_index);
	hindex_release(&p->map_index);
	memset(p, 0, sizeof(*p));
}

void profile_clear(struct profile *p)
{
	profile_release(p);
	profile_init(p);
}

/* ---- dedup index ---------------------------------------------------- */

/*
 * The id of an element equal to key (eq() compares element i, id i + 1),
 * or 0 after making room to add one: hindex_set() at *slot then adds it.
 */
static inline uint64_t index_find(struct hindex *ix, uint64_t hash, hindex_eq_fn *eq,
				  const struct profile *p, const void *key, size_t *slot)
{
	size_t i = hindex_probe(ix, hash, eq, p, key, slot);

	return i == HINDEX_NONE ? 0 : i + 1;
}

/* ---- sample types, comments ------------------------------------------ */

void profile_add_sample_type(struct profile *p, const char *type, const char *unit)
{
	if (p->nr_samples)
		BUG("sample types must be set before samples are added");
	ALLOC_GROW(p->sample_type, p->nr_sample_type + 1, p->alloc_sample_type);
	p->sample_type[p->nr_sample_type].type = profile_str(p, type);
	p->sample_type[p->nr_sample_type].unit = profile_str(p, unit);
	p->nr_sample_type++;
}

int profile_find_sample_type(const struct profile *p, const char *type)
{
	for (size_t i = 0; i < p->nr_sample_type; i++)
		if (!strcmp(profile_string(p, p->sample_type[i].type), type))
			return (int)i;
	return -1;
}

int profile_pick_sample_type(const struct profile *p, const char *name)
{
	struct strbuf names = STRBUF_INIT;
	int idx;

	if (!p->nr_sample_type)
		return error("the profile has no sample types");
	if (name) {
		idx = profile_find_sample_type(p, name);
		if (idx >= 0)
			return idx;
		for (size_t i = 0; i < p->nr_sample_type; i++)
			strbuf_addf(&names, "%s%s", i ? ", " : "",
				    profile_string(p, p->sample_type[i].type));
		error("the profile has no sample type '%s' (it has: %s)", name, names.buf);
		strbuf_release(&names);
		return -1;
	}
	if (p->default_sample_type) {
		idx = profile_find_sample_type(p, profile_string(p, p->default_sample_type));
		if (idx >= 0)
			return idx;
	}
	idx = profile_find_sample_type(p, "samples");
	return idx >= 0 ? idx : (int)p->nr_sample_type - 1;
}

void profile_add_comment(struct profile *p, const char *comment)
{
	ALLOC_GROW(p->comments, p->nr_comments + 1, p->alloc_comments);
	p->comments[p->nr_comments++] = profile_str(p, comment);
}

/* ---- mappings --------------------------------------------------------- */

static uint64_t mapping_hash(const struct pf_mapping *m)
{
	uint64_t h = HASH_SEED;

	h = hash_u64(h, m->start);
	h = hash_u64(h, m->limit);
	h = hash_u64(h, m->offset);
	h = hash_u64(h, (uint64_t)m->filename);
	return hash_u64(h, (uint64_t)m->build_id);
}

static bool mapping_eq(const void *table, size_t i, const void *key)
{
	const struct profile *p = table;
	const struct pf_mapping *a = &p->mappings[i], *b = key;

	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->filename == b->filename && a->build_id == b->build_id;
}

uint64_t profile_add_mapping_idx(struct profile *p, const struct pf_mapping *key)
{
	uint64_t h = mapping_hash(key), id;
	struct pf_mapping *m;
	size_t slot;

	id = index_find(&p->map_index, h, mapping_eq, p, key, &slot);
	if (id)
		return id;
	ALLOC_GROW(p->mappings, p->nr_mappings + 1, p->alloc_mappings);
	m = &p->mappings[p->nr_mappings];
	*m = *key;
	m->id = ++p->nr_mappings;
	hindex_set(&p->map_index, slot, h, m->id - 1);
	return m->id;
}

uint64_t profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit,
			     uint64_t offset, const char *filename, const char *build_id)
{
	struct pf_mapping m = {
		.start = start, .limit = limit, .offset = offset,
		.filename = profile_str(p, filename),
		.build_id = profile_str(p, build_id),
	};

	return profile_add_mapping_idx(p, &m);
}

/* ---- functions -------------------------------------------------------- */

static uint64_t function_hash(const struct pf_function *f)
{
	uint64_t h = HASH_SEED;

	h = hash_u64(h, (uint64_t)f->name);
	h = hash_u64(h, (uint64_t)f->system_name);
	h = hash_u64(h, (uint64_t)f->filename);
	return hash_u64(h, (uint64_t)f->start_line);
}

static bool function_eq(const void *table, size_t i, const void *key)
{
	const struct profile *p = table;
	const struct pf_function *a = &p->functions[i], *b = key;

	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

uint64_t profile_add_function(struct profile *p, const char *name,
			      const char *system_name, const char *filename,
			      int64_t start_line)
{
	return profile_add_function_idx(p, profile_str(p, name),
					profile_str(p, system_name ? system_name : name),
					profile_str(p, filename), start_line);
}

uint64_t profile_add_function_idx(struct profile *p, int64_t name, int64_t system_name,
				  int64_t filename, int64_t start_line)
{
	struct pf_function f = {
		.name = name, .system_name = system_name,
		.filename = filename, .start_line = start_line,
	};
	uint64_t h = function_hash(&f), id;
	size_t slot;

	id = index_find(&p->fn_index, h, function_eq, p, &f, &slot);
	if (id)
		return id;
	ALLOC_GROW(p->functions, p->nr_functions + 1, p->alloc_functions);
	f.id = ++p->nr_functions;
	p->functions[f.id - 1] = f;
	hindex_set(&p->fn_index, slot, h, f.id - 1);
	return f.id;
}

/* ---- locations -------------------------------------------------------- */

struct loc_key {
	uint64_t mapping_id, address;
	const struct pf_line *lines;
	size_t nline;
};

static uint64_t location_hash(uint64_t mapping_id, uint64_t address,
			      const struct pf_line *lines, size_t nline)
{
	uint64_t h = hash_u64(hash_u64(HASH_SEED, mapping_id), address);

	for (size_t i = 0; i < nline; i++) {
		h = hash_u64(h, lines[i].function_id);
		h = hash_u64(h, (uint64_t)lines[i].line);
	}
	return h;
}

static bool location_eq(const void *table, size_t i, const void *key)
{
	const struct profile *p = table;
	const struct pf_location *a = &p->locations[i];
	const struct loc_key *b = key;
	const struct pf_line *la = a->nline ? p->lines + a->line_off : NULL;

	if (a->mapping_id != b->mapping_id || a->address != b->address || a->nline != b->nline)
		return false;
	for (size_t k = 0; k < b->nline; k++)
		if (la[k].function_id != b->lines[k].function_id ||
		    la[k].line != b->lines[k].line || la[k].column != b->lines[k].column)
			return false;
	return true;
}

uint64_t profile_add_location(struct profile *p, uint64_t mapping_id, uint64_t address,
			      const struct pf_line *lines, size_t nline)
{
	struct loc_key key = { mapping_id, address, lines, nline };
	uint64_t h = location_hash(mapping_id, address, lines, nline), id;
	struct pf_location *l;
	size_t slot;

	id = index_find(&p->loc_index, h, location_eq, p, &key, &slot);
	if (id)
		return id;
	ALLOC_GROW(p->lines, p->nr_lines + nline, p->alloc_lines);
	if (nline)
		memcpy(p->lines + p->nr_lines, lines, nline * sizeof(*lines));
	ALLOC_GROW(p->locations, p->nr_locations + 1, p->alloc_locations);
	l = &p->locations[p->nr_locations];
	memset(l, 0, sizeof(*l));
	l->id = ++p->nr_locations;
	l->mapping_id = mapping_id;
	l->address = address;
	l->line_off = p->nr_lines;
	l->nline = (uint32_t)nline;
	p->nr_lines += nline;
	hindex_set(&p->loc_index, slot, h, l->id - 1);
	return l->id;
}

/* ---- samples ---------------------------------------------------------- */

void profile_reserve_samples(struct profile *p, size_t nsamples, size_t nlocs)
{
	if (p->nr_samples + nsamples > p->alloc_samples) {
		p->alloc_samples = p->nr_samples + nsamples;
		p->samples = xrealloc(p->samples, p->alloc_samples * sizeof(*p->samples));
	}
	if (p->nr_sample_locs + nlocs > p->alloc_sample_locs) {
		p->alloc_sample_locs = p->nr_sample_locs + nlocs;
		p->sample_locs = xrealloc(p->sample_locs, p->alloc_sample_locs * sizeof(*p->sample_locs));
	}
}

void profile_add_sample(struct profile *p, const uint64_t *locs, size_t nloc,
			const int64_t *values, const struct pf_label *labels,
			size_t nlabel)
{
	struct pf_sample *s;

	ALLOC_GROW(p->samples, p->nr_samples + 1, p->alloc_samples);
	s = &p->samples[p->nr_samples++];
	s->loc_off = p->nr_sample_locs;
	s->nloc = (uint32_t)nloc;
	ALLOC_GROW(p->sample_locs, p->nr_sample_locs + nloc, p->alloc_sample_locs);
	if (nloc)
		memcpy(p->sample_locs + p->nr_sample_locs, locs, nloc * sizeof(*locs));
	p->nr_sample_locs += nloc;

	s->value_off = p->nr_values;
	ALLOC_GROW(p->values, p->nr_values + p->nr_sample_type, p->alloc_values);
	if (p->nr_sample_type)
		memcpy(p->values + p->nr_values, values, p->nr_sample_type * sizeof(*values));
	p->nr_values += p->nr_sample_type;

	s->label_off = p->nr_labels;
	s->nlabel = (uint32_t)nlabel;
	ALLOC_GROW(p->labels, p->nr_labels + nlabel, p->alloc_labels);
	if (nlabel)
		memcpy(p->labels + p->nr_labels, labels, nlabel * sizeof(*labels));
	p->nr_labels += nlabel;
}

const char *profile_sample_label(const struct profile *p, const struct pf_sample *s,
				 const char *key)
{
	for (uint32_t i = 0; i < s->nlabel; i++) {
		const struct pf_label *l = &p->labels[s->label_off + i];
		if (!strcmp(profile_string(p, l->key), key))
			return l->str ? profile_string(p, l->str) : NULL;
	}
	return NULL;
}

/* ---- access ----------------------------------------------------------- */

const struct pf_mapping *profile_mapping(const struct profile *p, uint64_t id)
{
	return id && id <= p->nr_mappings ? &p->mappings[id - 1] : NULL;
}

const struct pf_location *profile_location(const struct profile *p, uint64_t id)
{
	return id && id <= p->nr_locations ? &p->locations[id - 1] : NULL;
}

const struct pf_function *profile_function(const struct profile *p, uint64_t id)
{
	return id && id <= p->nr_functions ? &p->functions[id - 1] : NULL;
}

/* Inline in the loop of profile_sample_frames(), which runs for every frame of every sample. */
static inline void location_frame(const struct profile *p, const struct pf_location *l, uint32_t j,
				  const struct pf_mapping *m, struct pf_frame *f)
{
	const struct pf_line *ln;

	if (!l->nline) {
		*f = (struct pf_frame){ l, m, NULL, 0, false, p->nr_lines + (size_t)(l - p->locations) };
		return;
	}
	ln = &p->lines[l->line_off + j];
	*f = (struct pf_frame){ l, m, profile_function(p, ln->function_id), ln->line,
				j + 1 < l->nline, l->line_off + j };
}

struct pf_frame profile_location_frame(const struct profile *p, const struct pf_location *l,
				       uint32_t j)
{
	struct pf_frame f;

	location_frame(p, l, j, profile_mapping(p, l->mapping_id), &f);
	return f;
}

size_t profile_sample_frames(const struct profile *p, const struct pf_sample *s,
			     struct pf_frame **frames, size_t *alloc)
{
	const uint64_t *locs = profile_sample_locs(p, s);
	size_t n = 0;

	for (uint32_t i = 0; i < s->nloc; i++) {
		const struct pf_location *l = profile_location(p, locs[i]);
		const struct pf_mapping *m;
		uint32_t nf;

		if (!l)
			continue;
		m = profile_mapping(p, l->mapping_id);
		nf = l->nline ? l->nline : 1;
		ALLOC_GROW(*frames, n + nf, *alloc);
		for (uint32_t j = 0; j < nf; j++)
			location_frame(p, l, j, m, &(*frames)[n++]);
	}
	return n;
}

const char *frame_name(const struct profile *p, const struct pf_frame *f)
{
	const char *name = f->fn ? profile_string(p, f->fn->name) : "";

	if (!*name && f->fn)
		name = profile_string(p, f->fn->system_name);
	return *name ? name : "[unknown]";
}

const char *frame_file(const struct profile *p, const struct pf_frame *f)
{
	return f->fn ? profile_string(p, f->fn->filename) : "";
}

const char *frame_dso(const struct profile *p, const struct pf_frame *f)
{
	const char *file, *slash;

	if (!f->mapping)
		return "[unknown]";
	file = profile_string(p, f->mapping->filename);
	if (!*file)
		return "[unknown]";
	slash = strrchr(file, '/');
	return slash && slash[1] ? slash + 1 : file;
}

bool frame_is_kernel(const struct profile *p, const struct pf_frame *f)
{
	const char *file;

	if (!f->mapping)
		return false;
	file = profile_string(p, f->mapping->filename);
	return !strncmp(file, "[kernel", 7) || !strcmp(file, "[vmlinux]") ||
	       f->mapping->start >= KERNEL_HALF;
}

/* ---- validation ------------------------------------------------------- */

static bool str_ok(const struct profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->strings.nr;
}

int profile_validate(const struct profile *p)
{
	for (size_t i = 0; i < p->nr_sample_type; i++)
		if (!str_ok(p, p->sample_type[i].type) || !str_ok(p, p->sample_type[i].unit))
			return error("invalid profile: sample type %zu names a missing string", i);
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct pf_mapping *m = &p->mappings[i];
		if (m->id != i + 1)
			BUG("mapping ids not dense");
		if (!str_ok(p, m->filename) || !str_ok(p, m->build_id))
			return error("invalid profile: mapping %zu names a missing string", i + 1);
	}
	for (size_t i = 0; i < p->nr_functions; i++) {
		const struct pf_function *f = &p->functions[i];
		if (!str_ok(p, f->name) || !str_ok(p, f->system_name) || !str_ok(p, f->filename))
			return error("invalid profile: function %zu names a missing string", i + 1);
	}
	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct pf_location *l = &p->locations[i];
		if (l->mapping_id && !profile_mapping(p, l->mapping_id))
			return error("invalid profile: location %zu has unknown mapping %llu",
				     i + 1, (unsigned long long)l->mapping_id);
		if (l->line_off + l->nline > p->nr_lines)
			BUG("location lines out of range");
		for (uint32_t j = 0; j < l->nline; j++)
			if (!profile_function(p, p->lines[l->line_off + j].function_id))
				return error("invalid profile: location %zu has unknown function %llu",
					     i + 1, (unsigned long long)p->lines[l->line_off + j].function_id);
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct pf_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		for (uint32_t j = 0; j < s->nloc; j++)
			if (!profile_location(p, locs[j]))
				return error("invalid profile: sample %zu has unknown location %llu",
					     i, (unsigned long long)locs[j]);
		for (uint32_t j = 0; j < s->nlabel; j++) {
			const struct pf_label *l = &p->labels[s->label_off + j];
			if (!str_ok(p, l->key) || !str_ok(p, l->str) || !str_ok(p, l->num_unit))
				return error("invalid profile: sample %zu has a label naming a missing string", i);
		}
	}
	if (!str_ok(p, p->period_type.type) || !str_ok(p, p->period_type.unit) ||
	    !str_ok(p, p->drop_frames) || !str_ok(p, p->keep_frames))
		return error("invalid profile: header names a missing string");
	for (size_t i = 0; i < p->nr_comments; i++)
		if (!str_ok(p, p->comments[i]))
			return error("invalid profile: comment names a missing string");
	return 0;
}

int64_t profile_total(const struct profile *p, int idx)
{
	int64_t sum = 0;

	if (idx < 0 || (size_t)idx >= p->nr_sample_type)
		return 0;
	for (size_t i = 0; i < p->nr_samples; i++)
		sum = sat_add(sum, p->values[p->samples[i].value_off + (size_t)idx]);
	return sum;
}

/* ---- merging ---------------------------------------------------------- */

/* src's string i as a string of dst, interned on first use. */
static int64_t merge_str(struct profile *dst, const struct profile *src, int64_t *map, int64_t i)
{
	if (i <= 0 || (size_t)i >= src->strings.nr)
		return 0;
	if (map[i] < 0)
		map[i] = strtab_intern(&dst->strings, src->strings.str[i], src->strings.len[i]);
	return map[i];
}

int profile_merge(struct profile *dst, const struct profile *src)
{
	int64_t *smap = xmalloc((src->strings.nr + 1) * sizeof(*smap));
	uint64_t *mmap_ids = xcalloc(src->nr_mappings + 1, sizeof(*mmap_ids));
	uint64_t *fmap = xcalloc(src->nr_functions + 1, sizeof(*fmap));
	uint64_t *lmap = xcalloc(src->nr_locations + 1, sizeof(*lmap));
	struct pf_line *lines = NULL;
	uint64_t *locs = NULL;
	struct pf_label *labels = NULL;
	size_t alloc_lines = 0, alloc_locs = 0, alloc_labels = 0;
	int ret = 0;

	for (size_t i = 0; i <= src->strings.nr; i++)
		smap[i] = -1;
	if (!dst->nr_sample_type && !dst->nr_samples) {
		for (size_t i = 0; i < src->nr_sample_type; i++)
			profile_add_sample_type(dst, profile_string(src, src->sample_type[i].type),
						profile_string(src, src->sample_type[i].unit));
		dst->period_type.type = merge_str(dst, src, smap, src->period_type.type);
		dst->period_type.unit = merge_str(dst, src, smap, src->period_type.unit);
		dst->period = src->period;
		dst->default_sample_type = merge_str(dst, src, smap, src->default_sample_type);
		dst->time_nanos = src->time_nanos;
	} else {
		bool same = dst->nr_sample_type == src->nr_sample_type;

		for (size_t i = 0; same && i < src->nr_sample_type; i++)
			same = !strcmp(profile_string(dst, dst->sample_type[i].type),
				       profile_string(src, src->sample_type[i].type)) &&
			       !strcmp(profile_string(dst, dst->sample_type[i].unit),
				       profile_string(src, src->sample_type[i].unit));
		if (!same) {
			ret = error("cannot merge profiles with different sample types");
			goto out;
		}
		if (src->time_nanos && (!dst->time_nanos || src->time_nanos < dst->time_nanos))
			dst->time_nanos = src->time_nanos;
	}
	dst->duration_nanos = sat_add(dst->duration_nanos, src->duration_nanos);

	for (size_t i = 0; i < src->nr_mappings; i++) {
		struct pf_mapping m = src->mappings[i];

		m.filename = merge_str(dst, src, smap, m.filename);
		m.build_id = merge_str(dst, src, smap, m.build_id);
		mmap_ids[i + 1] = profile_add_mapping_idx(dst, &m);
	}
	for (size_t i = 0; i < src->nr_functions; i++) {
		const struct pf_function *f = &src->functions[i];

		fmap[i + 1] = profile_add_function_idx(dst, merge_str(dst, src, smap, f->name),
						       merge_str(dst, src, smap, f->system_name),
						       merge_str(dst, src, smap, f->filename),
						       f->start_line);
	}
	for (size_t i = 0; i < src->nr_locations; i++) {
		const struct pf_location *l = &src->locations[i];

		ALLOC_GROW(lines, l->nline, alloc_lines);
		for (uint32_t j = 0; j < l->nline; j++) {
			lines[j] = src->lines[l->line_off + j];
			if (lines[j].function_id > src->nr_functions) {
				ret = error("cannot merge an invalid profile: unknown function %llu",
					    (unsigned long long)lines[j].function_id);
				goto out;
			}
			lines[j].function_id = fmap[lines[j].function_id];
		}
		if (l->mapping_id > src->nr_mappings) {
			ret = error("cannot merge an invalid profile: unknown mapping %llu",
				    (unsigned long long)l->mapping_id);
			goto out;
		}
		lmap[i + 1] = profile_add_location(dst, mmap_ids[l->mapping_id], l->address,
						   lines, l->nline);
		if (l->is_folded)
			dst->locations[lmap[i + 1] - 1].is_folded = true;
	}
	for (size_t i = 0; i < src->nr_samples; i++) {
		const struct pf_sample *s = &src->samples[i];
		const uint64_t *sl = profile_sample_locs(src, s);

		ALLOC_GROW(locs, s->nloc, alloc_locs);
		for (uint32_t j = 0; j < s->nloc; j++) {
			if (!sl[j] || sl[j] > src->nr_locations) {
				ret = error("cannot merge an invalid profile: unknown location %llu",
					    (unsigned long long)sl[j]);
				goto out;
			}
			locs[j] = lmap[sl[j]];
		}
		ALLOC_GROW(labels, s->nlabel, alloc_labels);
		for (uint32_t j = 0; j < s->nlabel; j++) {
			labels[j] = src->labels[s->label_off + j];
			labels[j].key = merge_str(dst, src, smap, labels[j].key);
			labels[j].str = merge_str(dst, src, smap, labels[j].str);
			labels[j].num_unit = merge_str(dst, src, smap, labels[j].num_unit);
		}
		profile_add_sample(dst, locs, s->nloc, profile_sample_values(src, s), labels, s->nlabel);
	}
out:
	free(smap);
	free(mmap_ids);
	free(fmap);
	free(lmap);
	free(lines);
	free(locs);
	free(labels);
	return ret;
}

void profile_mark_symbolized(struct profile *p)
{
	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct pf_location *l = &p->locations[i];
		struct pf_mapping *m = l->mapping_id && l->mapping_id <= p->nr_mappings ?
				       &p->mappings[l->mapping_id - 1] : NULL;

		if (!m || !l->nline)
			continue;
		m->has_functions = true;
		m->has_inline_frames |= l->nline > 1;
		for (uint32_t j = 0; j < l->nline; j++) {
			const struct pf_line *ln = &p->lines[l->line_off + j];
			const struct pf_function *fn = profile_function(p, ln->function_id);

			m->has_line_numbers |= ln->line > 0;
			m->has_filenames |= fn && fn->filename && *profile_string(p, fn->filename);
		}
	}
}
