/*
 * report.c: aggregate a profile's samples into ranked rows. Self cost goes
 * to the leaf frame's row; total cost to every distinct row in the stack,
 * once per sample, so recursion is not counted twice. Then the table and
 * the JSON document of `hotloop report`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util.h"
#include "intern.h"
#include "json.h"
#include "profile.h"
#include "report.h"
#include "strbuf.h"

static const char *const by_names[] = { "function", "line", "file", "dso" };

int report_parse_by(const char *s)
{
	return name_index(by_names, ARRAY_SIZE(by_names), s);
}

/* Row keys are string indexes of the profile, so equal keys mean equal text. */
static void frame_key(const struct profile *p, const struct pf_frame *f,
		      enum report_by by, int64_t key[4])
{
	int64_t name = f->fn ? (f->fn->name ? f->fn->name : f->fn->system_name) : -1;
	int64_t file = f->fn ? f->fn->filename : 0;
	int64_t dso = f->mapping ? f->mapping->filename : -1;

	switch (by) {
	case REPORT_BY_FUNCTION:
		key[0] = name; key[1] = file; key[2] = name < 0 || !file ? dso : 0; key[3] = 0;
		break;
	case REPORT_BY_LINE:
		key[0] = name; key[1] = file; key[2] = name < 0 || !file ? dso : 0;
		key[3] = f->line;
		break;
	case REPORT_BY_FILE:
		key[0] = 0; key[1] = file; key[2] = file ? 0 : dso; key[3] = 0;
		break;
	case REPORT_BY_DSO:
		key[0] = 0; key[1] = 0; key[2] = dso; key[3] = 0;
		break;
	}
}

static uint64_t key_hash(const int64_t key[4])
{
	return hash_bytes(HASH_SEED, key, 4 * sizeof(int64_t));
}

static bool row_eq(const void *table, size_t i, const void *key)
{
	const struct report *r = table;

	return !memcmp(r->rows[i].key, key, sizeof(r->rows[i].key));
}

static struct report_row *row_for(struct report *r, const struct profile *p,
				  const struct pf_frame *f)
{
	struct report_row *row;
	int64_t key[4];
	uint64_t hash;
	size_t slot, i;

	frame_key(p, f, r->by, key);
	hash = key_hash(key);
	if ((i = hindex_probe(&r->index, hash, row_eq, r, key, &slot)) != HINDEX_NONE)
		return &r->rows[i];
	ALLOC_GROW(r->rows, r->nr + 1, r->alloc);
	row = &r->rows[r->nr];
	memset(row, 0, sizeof(*row));
	memcpy(row->key, key, sizeof(key));
	row->stamp = SIZE_MAX;
	row->dso = frame_dso(p, f);
	row->kernel = frame_is_kernel(p, f);
	row->file = frame_file(p, f);
	switch (r->by) {
	case REPORT_BY_FUNCTION:
		row->name = frame_name(p, f);
		row->line = f->fn ? f->fn->start_line : 0;
		break;
	case REPORT_BY_LINE:
		row->name = frame_name(p, f);
		row->line = f->line;
		break;
	case REPORT_BY_FILE:
		row->name = *row->file ? row->file : row->dso;
		break;
	case REPORT_BY_DSO:
		row->name = row->dso;
		row->file = "";
		break;
	}
	hindex_set(&r->index, slot, hash, r->nr++);
	return row;
}

/*
 * For --by function, a row's line is its hottest line: the line in the
 * function with the most self cost. Counted in a second small table, one
 * entry per row and line.
 */
struct line_cost {
	size_t row;		/* index: rows move while the table grows */
	int64_t line, cost;
};

struct line_costs {
	struct line_cost *v;
	size_t nr, alloc;
	struct hindex index;
};

static bool line_cost_eq(const void *table, size_t i, const void *key)
{
	const struct line_cost *a = &((const struct line_costs *)table)->v[i], *b = key;

	return a->row == b->row && a->line == b->line;
}

static void line_cost_add(struct line_costs *lc, size_t row, int64_t line, int64_t cost)
{
	struct line_cost key = { row, line, cost };
	uint64_t h = hash_u64(hash_u64(HASH_SEED, row), (uint64_t)line);
	size_t slot, i;

	if ((i = hindex_probe(&lc->index, h, line_cost_eq, lc, &key, &slot)) != HINDEX_NONE) {
		lc->v[i].cost = sat_add(lc->v[i].cost, cost);
		return;
	}
	ALLOC_GROW(lc->v, lc->nr + 1, lc->alloc);
	lc->v[lc->nr] = key;
	hindex_set(&lc->index, slot, h, lc->nr++);
}

static int cmp_line_cost(const void *a, const void *b)
{
	const struct line_cost *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static void set_hottest_lines(struct report *r, struct line_cost *lc, size_t n)
{
	if (!n)
		return;	/* lc is NULL: qsort must not see it */
	qsort(lc, n, sizeof(*lc), cmp_line_cost);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int64_t sum = 0;
		while (j < n && lc[j].row == lc[i].row && lc[j].line == lc[i].line)
			sum = sat_add(sum, lc[j++].cost);
		struct report_row *row = &r->rows[lc[i].row];
		if (sum > row->best_line_self) {
			row->best_line_self = sum;
			row->line = lc[i].line;
		}
		i = j;
	}
}

/*
 * The row of a frame: a frame's key depends on its slot alone, so each slot
 * is looked up once and remembered (slot_row[slot]: row index + 1, 0 before).
 */
static struct report_row *slot_row(struct report *r, const struct profile *p,
				   const struct pf_frame *f, uint32_t *slot_rows)
{
	struct report_row *row;

	if (slot_rows[f->slot])
		return &r->rows[slot_rows[f->slot] - 1];
	row = row_for(r, p, f);
	slot_rows[f->slot] = (uint32_t)(row - r->rows) + 1;
	return row;
}

int report_build(struct report *r, const struct profile *p, int sample_index,
		 enum report_by by)
{
	return report_build_flags(r, p, sample_index, by, 0);
}

/* Drop the inlined frames: each is folded into the next one toward the root. */
static size_t drop_inlined(struct pf_frame *frames, size_t n)
{
	size_t out = 0;

	for (size_t j = 0; j < n; j++)
		if (!frames[j].inlined)
			frames[out++] = frames[j];
	return out;
}

int report_build_flags(struct report *r, const struct profile *p, int sample_index,
		       enum report_by by, unsigned flags)
{
	struct pf_frame *frames = NULL;
	size_t alloc = 0;
	struct line_costs lc = { 0 };
	uint32_t *slot_rows;

	if (sample_index < 0 || (size_t)sample_index >= p->nr_sample_type)
		return error("sample type %d out of range", sample_index);
	memset(r, 0, sizeof(*r));
	r->by = by;
	r->no_inline = flags & REPORT_NO_INLINE;
	r->sample_index = sample_index;
	r->samples = p->nr_samples;
	slot_rows = xcalloc(profile_frame_slots(p) + 1, sizeof(*slot_rows));

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct pf_sample *s = &p->samples[i];
		int64_t w = profile_sample_values(p, s)[sample_index];
		size_t n = profile_sample_frames(p, s, &frames, &alloc);
		struct report_row *row;

		if (r->no_inline)
			n = drop_inlined(frames, n);
		r->total = sat_add(r->total, w);
		if (!n)
			continue;
		row = slot_row(r, p, &frames[0], slot_rows);
		row->self = sat_add(row->self, w);
		if (by == REPORT_BY_FUNCTION && frames[0].line)
			line_cost_add(&lc, (size_t)(row - r->rows), frames[0].line, w);
		for (size_t j = 0; j < n; j++) {
			row = slot_row(r, p, &frames[j], slot_rows);
			if (frames[j].inlined && (by == REPORT_BY_FUNCTION || by == REPORT_BY_LINE))
				row->inlined = true;
			if (row->stamp != i) {
				row->stamp = i;
				row->total = sat_add(row->total, w);
			}
		}
	}
	if (by == REPORT_BY_FUNCTION)
		set_hottest_lines(r, lc.v, lc.nr);
	free(lc.v);
	hindex_release(&lc.index);
	free(frames);
	free(slot_rows);
	return 0;
}

static int cmp_self(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_total(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->name, y->name);
}

void report_sort(struct report *r, enum report_sort sort)
{
	if (r->nr)	/* rows is NULL when there are none */
		qsort(r->rows, r->nr, sizeof(*r->rows), sort == REPORT_SORT_SELF ? cmp_self : cmp_total);
	/* the index points at positions that moved */
	hindex_release(&r->index);
}

void report_release(struct report *r)
{
	free(r->rows);
	hindex_release(&r->index);
	memset(r, 0, sizeof(*r));
}

/* ---- output ---- */

static double pct(int64_t v, int64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

void report_format_text(const struct profile *p, const struct report *r, size_t top,
			enum report_sort sort, struct strbuf *out)
{
	const struct pf_value_type *st = &p->sample_type[r->sample_index];
	struct strbuf loc = STRBUF_INIT;
	size_t n = top && top < r->nr ? top : r->nr;

	strbuf_addf(out, "# %lld %s (%s) in %zu distinct stacks; by %s%s, sorted by %s\n",
	       (long long)r->total, profile_string(p, st->type),
	       profile_string(p, st->unit), r->samples, by_names[r->by],
	       r->no_inline ? " (inlined frames folded into their function)" : "",
	       sort == REPORT_SORT_SELF ? "self" : "total");
	switch (r->by) {
	case REPORT_BY_FUNCTION:
	case REPORT_BY_LINE:
		strbuf_addf(out, "%7s %12s %7s %12s  %-40s %-28s %s\n", "self%", "self", "total%", "total",
		       "function", "file:line", "dso");
		break;
	case REPORT_BY_FILE:
		strbuf_addf(out, "%7s %12s %7s %12s  %-40s %s\n", "self%", "self", "total%", "total",
		       "file", "dso");
		break;
	case REPORT_BY_DSO:
		strbuf_addf(out, "%7s %12s %7s %12s  %s\n", "self%", "self", "total%", "total", "dso");
		break;
	}
	for (size_t i = 0; i < n; i++) {
		const struct report_row *row = &r->rows[i];

		strbuf_addf(out, "%6.2f%% %12lld %6.2f%% %12lld  ", pct(row->self, r->total),
		       (long long)row->self, pct(row->total, r->total), (long long)row->total);
		switch (r->by) {
		case REPORT_BY_FUNCTION:
		case REPORT_BY_LINE:
			strbuf_reset(&loc);
			if (*row->file)
				strbuf_addf(&loc, "%s:%lld", short_path(row->file), (long long)row->line);
			else
				strbuf_addch(&loc, '-');
			strbuf_addf(out, "%-40s %-28s %s", row->name, loc.buf, row->dso);
			break;
		case REPORT_BY_FILE:
			strbuf_addf(out, "%-40s %s", *row->file ? short_path(row->name) : row->name, row->dso);
			break;
		case REPORT_BY_DSO:
			strbuf_addf(out, "%s", row->name);
			break;
		}
		strbuf_addf(out, "%s%s\n", row->inlined ? " [inlined]" : "", row->kernel ? " [kernel]" : "");
	}
	if (n < r->nr)
		strbuf_addf(out, "# %zu more rows (--top 0 shows all)\n", r->nr - n);
	strbuf_release(&loc);
}

json_t *report_to_json(const struct profile *p, const struct report *r, size_t top,
		       enum report_sort sort)
{
	const struct pf_value_type *st = &p->sample_type[r->sample_index];
	size_t n = top && top < r->nr ? top : r->nr;
	json_t *doc = json_object(), *rows = json_array();
	char type[256];

	snprintf(type, sizeof(type), "%s/%s", profile_string(p, st->type),
		 profile_string(p, st->unit));
	json_object_set_new(doc, "total", json_integer(r->total));
	json_object_set_new(doc, "stacks", json_integer((json_int_t)r->samples));
	json_object_set_new(doc, "sample_type", json_text(type));
	json_object_set_new(doc, "by", json_string(by_names[r->by]));
	json_object_set_new(doc, "no_inline", json_boolean(r->no_inline));
	json_object_set_new(doc, "sort", json_string(sort == REPORT_SORT_SELF ? "self" : "total"));
	for (size_t i = 0; i < n; i++) {
		const struct report_row *row = &r->rows[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_text(row->name));
		json_object_set_new(o, "self", json_integer(row->self));
		json_object_set_new(o, "self_pct", json_real(pct(row->self, r->total)));
		json_object_set_new(o, "total", json_integer(row->total));
		json_object_set_new(o, "total_pct", json_real(pct(row->total, r->total)));
		json_object_set_new(o, "file", json_text(row->file));
		json_object_set_new(o, "line", json_integer(row->line));
		json_object_set_new(o, "dso", json_text(row->dso));
		json_object_set_new(o, "inlined", json_boolean(row->inlined));
		json_object_set_new(o, "kernel", json_boolean(row->kernel));
		json_array_append_new(rows, o);
	}
	json_object_set_new(doc, "rows", rows);
	json_object_set_new(doc, "rows_total", json_integer((json_int_t)r->nr));
	return doc;
}
