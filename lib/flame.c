/*
 * flame.c: SVG flame graphs (see flame.h). Samples are merged by stack
 * first, then walked into a tree whose children are found through one hash
 * table keyed by (parent, name, kind), so building is linear in the total
 * length of the distinct stacks. Children are drawn in name order; frames
 * narrower than the minimum width are left out with their subtrees.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "hindex.h"
#include "intern.h"
#include "profile.h"
#include "stacks.h"
#include "flame.h"

#define PAD 10			/* left and right margin */
#define HEADER 72		/* title, subtitle, legend */
#define FOOTER 32		/* details and search result */
#define FONT_SIZE 12
#define CHAR_WIDTH (FONT_SIZE * 0.59)
#define NONE UINT32_MAX

enum { KIND_USER, KIND_KERNEL, KIND_INLINED };

struct fnode {
	uint32_t parent, name;
	uint32_t first_child, nchildren;	/* a range of ftree.order */
	uint8_t kind;
	int64_t value;
};

struct ftree {
	struct fnode *nodes;
	size_t nr, alloc;
	struct hindex index;	/* (parent, name, kind) -> node */
	uint32_t *order;	/* nodes 1.. grouped by parent, in name order */
	int64_t total;
	size_t truncated;	/* stacks cut at FLAME_MAX_DEPTH */
	int sample_type;
};

static void tree_release(struct ftree *t)
{
	free(t->nodes);
	hindex_release(&t->index);
	free(t->order);
	memset(t, 0, sizeof(*t));
}

/* 32 bits of hash are all the index keeps of it. */
static uint32_t node_hash(uint32_t parent, uint32_t name, uint8_t kind)
{
	uint64_t h = (((uint64_t)parent << 32) | name) * 0x9e3779b97f4a7c15ull;

	h ^= (h >> 31) ^ kind;
	h *= 0xff51afd7ed558ccdull;
	return (uint32_t)((h ^ (h >> 29)) >> 32);
}

struct node_key {
	uint32_t parent, name;
	uint8_t kind;
};

static bool node_eq(const void *table, size_t i, const void *key_)
{
	const struct fnode *n = &((const struct ftree *)table)->nodes[i];
	const struct node_key *key = key_;

	return n->parent == key->parent && n->name == key->name && n->kind == key->kind;
}

/* The child of 'parent' with this name and kind; NONE when absent and !create. */
static uint32_t tree_child(struct ftree *t, uint32_t parent, uint32_t name,
			   uint8_t kind, bool create)
{
	struct node_key key = { parent, name, kind };
	uint32_t hash = node_hash(parent, name, kind);
	size_t s, i;

	if (!create) {
		i = hindex_lookup(&t->index, hash, node_eq, t, &key);
		return i == HINDEX_NONE ? NONE : (uint32_t)i;
	}
	if ((i = hindex_probe(&t->index, hash, node_eq, t, &key, &s)) != HINDEX_NONE)
		return (uint32_t)i;
	if (t->nr >= NONE - 1)
		BUG("flame graph node count overflow");
	ALLOC_GROW(t->nodes, t->nr + 1, t->alloc);
	t->nodes[t->nr] = (struct fnode){ .parent = parent, .name = name, .kind = kind };
	hindex_set(&t->index, s, hash, t->nr);
	return (uint32_t)t->nr++;
}

/* Each location's frames (leaf first), as interned names and kinds. */
struct loc_frames {
	size_t *off;
	uint32_t *n;
	uint32_t *name;
	uint8_t *kind;
	size_t nr, alloc_name, alloc_kind;
};

static void loc_frames_add(struct loc_frames *lf, struct strtab *names,
			   const struct profile *p, const struct pf_frame *f)
{
	ALLOC_GROW(lf->name, lf->nr + 1, lf->alloc_name);
	ALLOC_GROW(lf->kind, lf->nr + 1, lf->alloc_kind);
	lf->name[lf->nr] = (uint32_t)strtab_intern_str(names, frame_name(p, f));
	lf->kind[lf->nr] = f->inlined ? KIND_INLINED :
			   frame_is_kernel(p, f) ? KIND_KERNEL : KIND_USER;
	lf->nr++;
}

static void loc_frames_build(struct loc_frames *lf, struct strtab *names,
			     const struct profile *p, bool no_inline)
{
	lf->off = xcalloc(p->nr_locations + 1, sizeof(*lf->off));
	lf->n = xcalloc(p->nr_locations + 1, sizeof(*lf->n));
	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct pf_location *l = &p->locations[i];

		lf->off[i] = lf->nr;
		for (uint32_t j = 0; j < (l->nline ? l->nline : 1); j++) {
			struct pf_frame f = profile_location_frame(p, l, j);

			/* folded into the frame it was inlined into (never the last) */
			if (no_inline && f.inlined)
				continue;
			loc_frames_add(lf, names, p, &f);
		}
		lf->n[i] = (uint32_t)(lf->nr - lf->off[i]);
	}
}

static void loc_frames_release(struct loc_frames *lf)
{
	free(lf->off);
	free(lf->n);
	free(lf->name);
	free(lf->kind);
}

struct walk_stack {
	size_t off;		/* frames at fname/fkind[off..], in drawing order */
	uint32_t len;
	uint32_t node;		/* where the stack has got to */
	int64_t value;
};

/*
 * Merge every distinct stack into t, one depth at a time. After each depth
 * the stacks whose frame there is narrower than min_px stop: the frames
 * under it would be narrower still and are never drawn, so a profile of a
 * million unrelated stacks does not turn into tens of millions of nodes.
 * min_px 0 keeps everything (the base of a differential graph).
 */
static void tree_build(struct ftree *t, const struct profile *p, int idx,
		       struct strtab *names, bool reverse, bool no_inline, double width_px,
		       double min_px)
{
	struct loc_frames lf = { 0 };
	struct stack_sum *sums = NULL;
	struct walk_stack *ws;
	uint32_t *fname = NULL, *active;
	uint8_t *fkind = NULL;
	size_t nsums, nws = 0, nactive = 0, nf = 0, alloc_fname = 0, alloc_fkind = 0;
	double scale;

	loc_frames_build(&lf, names, p, no_inline);
	t->sample_type = idx;
	ALLOC_GROW(t->nodes, 1, t->alloc);
	t->nodes[0] = (struct fnode){ .parent = NONE,
				      .name = (uint32_t)strtab_intern_str(names, "all") };
	t->nr = 1;

	/* each stack's frames in the order they are drawn: root first, or leaf first */
	nsums = stacks_merge(p, idx, &sums);
	ws = xcalloc(nsums + 1, sizeof(*ws));
	for (size_t k = 0; k < nsums; k++) {
		const struct pf_sample *s = &p->samples[sums[k].sample];
		const uint64_t *locs = profile_sample_locs(p, s);
		size_t start = nf;

		if (sums[k].value <= 0)
			continue;
		for (uint32_t j = 0; j < s->nloc; j++) {
			uint64_t id = locs[reverse ? j : s->nloc - 1 - j];
			uint32_t n;

			if (!id || id > p->nr_locations)
				continue;
			n = lf.n[id - 1];
			ALLOC_GROW(fname, nf + n, alloc_fname);
			ALLOC_GROW(fkind, nf + n, alloc_fkind);
			for (uint32_t m = 0; m < n; m++) {
				size_t from = lf.off[id - 1] + (reverse ? m : n - 1 - m);
				fname[nf] = lf.name[from];
				fkind[nf++] = lf.kind[from];
			}
		}
		if (nf - start > FLAME_MAX_DEPTH) {
			nf = start + FLAME_MAX_DEPTH;
			t->truncated++;
		}
		ws[nws++] = (struct walk_stack){ start, (uint32_t)(nf - start), 0, sums[k].value };
		t->total = sat_add(t->total, sums[k].value);
	}
	t->nodes[0].value = t->total;
	scale = t->total > 0 ? width_px / (double)t->total : 0;

	active = xcalloc(nws + 1, sizeof(*active));
	for (size_t i = 0; i < nws; i++)
		if (ws[i].len)
			active[nactive++] = (uint32_t)i;
	for (uint32_t d = 0; nactive; d++) {
		size_t keep = 0;

		for (size_t a = 0; a < nactive; a++) {
			struct walk_stack *s = &ws[active[a]];
			s->node = tree_child(t, s->node, fname[s->off + d], fkind[s->off + d], true);
			t->nodes[s->node].value = sat_add(t->nodes[s->node].value, s->value);
		}
		for (size_t a = 0; a < nactive; a++) {
			const struct walk_stack *s = &ws[active[a]];
			if (s->len > d + 1 && (double)t->nodes[s->node].value * scale >= min_px)
				active[keep++] = active[a];
		}
		nactive = keep;
	}
	free(active);
	free(ws);
	free(fname);
	free(fkind);
	free(sums);
	loc_frames_release(&lf);
}

struct name_rank {
	const char *s;
	uint32_t id;
};

static int cmp_name_rank(const void *a, const void *b)
{
	return strcmp(((const struct name_rank *)a)->s, ((const struct name_rank *)b)->s);
}

struct sort_key {
	uint32_t key;		/* name rank, then kind */
	uint32_t node;
};

static int cmp_sort_key(const void *a, const void *b)
{
	uint32_t x = ((const struct sort_key *)a)->key, y = ((const struct sort_key *)b)->key;

	return x < y ? -1 : x > y;
}

/*
 * Group t's nodes by parent (a counting sort), then put each group in name
 * order, into t->order. Groups are small, so this is close to linear.
 */
static void tree_sort(struct ftree *t, const uint32_t *rank)
{
	struct sort_key *keys = xcalloc(t->nr, sizeof(*keys));
	size_t pos = 0;

	for (size_t i = 1; i < t->nr; i++)
		t->nodes[t->nodes[i].parent].nchildren++;
	for (size_t i = 0; i < t->nr; i++) {
		t->nodes[i].first_child = (uint32_t)pos;
		pos += t->nodes[i].nchildren;
		t->nodes[i].nchildren = 0;
	}
	for (size_t i = 1; i < t->nr; i++) {
		struct fnode *parent = &t->nodes[t->nodes[i].parent];
		keys[parent->first_child + parent->nchildren++] = (struct sort_key){
			(rank[t->nodes[i].name] << 2) | t->nodes[i].kind, (uint32_t)i,
		};
	}
	t->order = xcalloc(t->nr, sizeof(*t->order));
	for (size_t i = 0; i < t->nr; i++) {
		const struct fnode *n = &t->nodes[i];
		if (n->nchildren > 1)
			qsort(keys + n->first_child, n->nchildren, sizeof(*keys), cmp_sort_key);
	}
	for (size_t i = 0; i + 1 < t->nr; i++)
		t->order[i] = keys[i].node;
	free(keys);
}

/* ---- SVG text --------------------------------------------------------- */

/* The label that fits a box w pixels wide (the script applies the same rule). */
static void add_label(struct strbuf *sb, const char *name, double w)
{
	double fit = floor((w - 6) / CHAR_WIDTH);
	size_t n;

	if (fit < 3)
		return;
	n = utf8_strlen(name);
	if ((double)n <= fit) {
		strbuf_add_xml(sb, name, SIZE_MAX);
	} else {
		strbuf_add_xml(sb, name, (size_t)fit - 2);
		strbuf_addstr(sb, "..");
	}
}

static void add_count(struct strbuf *sb, int64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%lld", (long long)v);

	for (int i = 0; i < n; i++) {
		if (i && digits[i - 1] != '-' && (n - i) % 3 == 0)
			strbuf_addch(sb, ',');
		strbuf_addch(sb, digits[i]);
	}
}

/* ---- colours ---------------------------------------------------------- */

struct rgb {
	int r, g, b;
};

/* Plain graphs: the palette says the kind, the name's hash picks the shade. */
static struct rgb kind_colour(const char *name, uint8_t kind)
{
	uint64_t h = hash_bytes(HASH_SEED, name, strlen(name));
	double v1 = (double)(h & 0xffff) / 0xffff;
	double v2 = (double)((h >> 16) & 0xffff) / 0xffff;
	double v3 = (double)((h >> 32) & 0xffff) / 0xffff;

	switch (kind) {
	case KIND_KERNEL:	/* cool blue */
		return (struct rgb){ (int)(90 + 40 * v1), (int)(130 + 50 * v2), (int)(210 + 40 * v3) };
	case KIND_INLINED:	/* green */
		return (struct rgb){ (int)(80 + 50 * v1), (int)(185 + 50 * v2), (int)(80 + 50 * v3) };
	default:		/* warm: red to yellow */
		return (struct rgb){ (int)(205 + 50 * v1), (int)(80 + 150 * v2), (int)(20 + 40 * v3) };
	}
}

/*
 * Differential graphs: grey when the share did not change, toward red as
 * it grew and toward blue as it shrank, in proportion to the change over
 * the largest change in the graph.
 */
static struct rgb diff_colour(double delta, bool is_new, double scale)
{
	double v = is_new ? 1 : fabs(delta) / scale;
	int lo, hi;

	if (v > 1)
		v = 1;
	lo = (int)lround(235 - 195 * v);
	hi = (int)lround(235 + 20 * v);
	if (is_new || delta > 0)
		return (struct rgb){ hi, lo, lo };
	return (struct rgb){ lo, lo, hi };
}

/* ---- rendering -------------------------------------------------------- */

struct render {
	const struct flame_options *o;
	const struct profile *p, *base;
	struct ftree *cur, *old;	/* old: the base tree, or NULL */
	struct strtab *names;
	const char *unit_word;
	double scale;		/* pixels per unit of value */
	double min_px;
	uint32_t max_depth;
	double max_delta;
	unsigned kinds;		/* 1 << kind of every drawn frame */
	struct strbuf *sb;
};

static double share(int64_t v, int64_t total)
{
	return total > 0 ? (double)v / (double)total : 0;
}

static void emit_frame(struct render *r, uint32_t node, uint32_t bnode, int64_t x,
		       uint32_t depth)
{
	const struct fnode *n = &r->cur->nodes[node];
	const char *name = strtab_get(r->names, n->name);
	double px = PAD + (double)x * r->scale, pw = (double)n->value * r->scale;
	double y = HEADER + (double)(r->max_depth - depth) * FLAME_FRAME_HEIGHT;
	static const char *const kind_class[] = { "", " class=\"k\"", " class=\"i\"" };
	static const char *const kind_word[] = { "", "kernel; ", "inlined; " };
	struct strbuf *sb = r->sb;
	struct rgb c;

	strbuf_addf(sb, "<g%s><title>", node ? kind_class[n->kind] : "");
	strbuf_add_xml(sb, name, SIZE_MAX);
	strbuf_addf(sb, " (%s", node ? kind_word[n->kind] : "");
	if (r->old) {
		int64_t bv = bnode != NONE ? r->old->nodes[bnode].value : 0;
		double now = share(n->value, r->cur->total), was = share(bv, r->old->total);
		strbuf_addf(sb, "base %.2f%%, now %.2f%%, %+.2f pp; ", 100 * was, 100 * now,
			    100 * (now - was));
		c = diff_colour(now - was, bv <= 0, r->max_delta);
		add_count(sb, n->value);
		strbuf_addf(sb, " %s)", r->unit_word);
	} else {
		add_count(sb, n->value);
		strbuf_addf(sb, " %s, %.2f%%)", r->unit_word, 100 * share(n->value, r->cur->total));
		c = node ? kind_colour(name, n->kind) : (struct rgb){ 200, 200, 200 };
	}
	strbuf_addf(sb, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
		    "fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
		    px, y, pw, FLAME_FRAME_HEIGHT - 1, c.r, c.g, c.b, px + 3, y + 10.5);
	add_label(sb, name, pw);
	strbuf_addstr(sb, "</text></g>\n");
}

struct walk_entry {
	uint32_t node, bnode, next;
	int64_t x;		/* where the next child starts */
};

/*
 * Depth-first over the frames wide enough to draw, parents before
 * children. Measuring finds the depth and the largest change; emitting
 * writes the frames.
 */
static void walk(struct render *r, bool emit)
{
	struct walk_entry *stack = NULL;
	size_t sp = 0, alloc = 0;

	ALLOC_GROW(stack, 1, alloc);
	stack[sp++] = (struct walk_entry){ 0, r->old ? 0 : NONE, 0, 0 };
	if (emit)
		emit_frame(r, 0, stack[0].bnode, 0, 0);
	while (sp) {
		struct walk_entry *top = &stack[sp - 1];
		const struct fnode *parent = &r->cur->nodes[top->node];
		const struct fnode *n;
		uint32_t c, bc = NONE;
		int64_t x;

		if (top->next == parent->nchildren) {
			sp--;
			continue;
		}
		c = r->cur->order[parent->first_child + top->next++];
		n = &r->cur->nodes[c];
		x = top->x;
		top->x = sat_add(top->x, n->value);
		if ((double)n->value * r->scale < r->min_px)
			continue;
		if (top->bnode != NONE)
			bc = tree_child(r->old, top->bnode, n->name, n->kind, false);
		if (emit) {
			emit_frame(r, c, bc, x, (uint32_t)sp);
		} else {
			if (sp > r->max_depth)
				r->max_depth = (uint32_t)sp;
			r->kinds |= 1u << n->kind;
			if (r->old) {
				int64_t bv = bc != NONE ? r->old->nodes[bc].value : 0;
				double d = fabs(share(n->value, r->cur->total) - share(bv, r->old->total));
				if (bv > 0 && d > r->max_delta)
					r->max_delta = d;
			}
		}
		ALLOC_GROW(stack, sp + 1, alloc);
		stack[sp++] = (struct walk_entry){ c, bc, 0, x };
	}
	free(stack);
}

/*
 * The script: zoom, search, details. Frames are read back from the SVG
 * (each <g> holds a <title> "name (details)", a <rect> and a <text>), so
 * the document works without it and stays the single source of truth.
 */
static const char script[] =
"'use strict';\n"
"var PAD = 10, CHAR_W = 12 * 0.59, SEARCH_FILL = 'rgb(230,0,230)';\n"
"var W = 0, nodes = [], details, matched, unzoomBtn, searchBtn, searching = null;\n"
"function init(evt) {\n"
"  W = parseFloat(document.documentElement.getAttribute('width'));\n"
"  details = document.getElementById('details');\n"
"  matched = document.getElementById('matched');\n"
"  unzoomBtn = document.getElementById('unzoom');\n"
"  searchBtn = document.getElementById('search');\n"
"  var frames = document.getElementById('frames'), gs = frames.getElementsByTagName('g');\n"
"  for (var i = 0; i < gs.length; i++) {\n"
"    var g = gs[i], r = g.getElementsByTagName('rect')[0];\n"
"    var info = g.getElementsByTagName('title')[0].textContent, cut = info.lastIndexOf(' (');\n"
"    g.frameIndex = i;\n"
"    nodes.push({ g: g, r: r, t: g.getElementsByTagName('text')[0], info: info,\n"
"      name: cut > 0 ? info.substring(0, cut) : info, fill: r.getAttribute('fill'),\n"
"      x: parseFloat(r.getAttribute('x')), w: parseFloat(r.getAttribute('width')),\n"
"      y: parseFloat(r.getAttribute('y')) });\n"
"  }\n"
"  frames.addEventListener('mouseover', function (e) {\n"
"    var n = frameOf(e.target); if (n) details.textContent = n.info; });\n"
"  frames.addEventListener('mouseout', function (e) {\n"
"    if (frameOf(e.target)) details.textContent = ' '; });\n"
"  frames.addEventListener('click', function (e) {\n"
"    var n = frameOf(e.target); if (n) zoom(n); });\n"
"  unzoomBtn.addEventListener('click', unzoom);\n"
"  searchBtn.addEventListener('click', function () {\n"
"    if (searching === null) search(); else resetSearch(); });\n"
"  document.addEventListener('keydown', function (e) {\n"
"    if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) {\n"
"      e.preventDefault(); search();\n"
"    } else if (e.key === 'Escape') {\n"
"      if (searching !== null) resetSearch(); else unzoom();\n"
"    }\n"
"  });\n"
"}\n"
"function frameOf(el) {\n"
"  while (el && el.frameIndex === undefined) el = el.parentNode;\n"
"  return el ? nodes[el.frameIndex] : null;\n"
"}\n"
"function label(name, w) {\n"
"  var fit = Math.floor((w - 6) / CHAR_W);\n"
"  if (fit < 3) return '';\n"
"  return name.length <= fit ? name : name.substring(0, fit - 2) + '..';\n"
"}\n"
"function place(n, x, w) {\n"
"  n.r.setAttribute('x', x.toFixed(2));\n"
"  n.r.setAttribute('width', w.toFixed(2));\n"
"  n.t.setAttribute('x', (x + 3).toFixed(2));\n"
"  n.t.textContent = label(n.name, w);\n"
"}\n"
"function zoom(z) {\n"
"  if (z === nodes[0]) { unzoom(); return; }\n"
"  var x0 = z.x, x1 = z.x + z.w, k = (W - 2 * PAD) / z.w, eps = 0.02;\n"
"  for (var i = 0; i < nodes.length; i++) {\n"
"    var n = nodes[i];\n"
"    n.g.classList.remove('hide'); n.g.classList.remove('faded');\n"
"    if (n.y <= z.y && n.x >= x0 - eps && n.x + n.w <= x1 + eps) {\n"
"      place(n, PAD + (n.x - x0) * k, n.w * k);\n"
"    } else if (n.y > z.y && n.x <= x0 + eps && n.x + n.w >= x1 - eps) {\n"
"      place(n, PAD, W - 2 * PAD); n.g.classList.add('faded');\n"
"    } else {\n"
"      n.g.classList.add('hide');\n"
"    }\n"
"  }\n"
"  unzoomBtn.classList.remove('hide');\n"
"}\n"
"function unzoom() {\n"
"  for (var i = 0; i < nodes.length; i++) {\n"
"    var n = nodes[i];\n"
"    n.g.classList.remove('hide'); n.g.classList.remove('faded');\n"
"    place(n, n.x, n.w);\n"
"  }\n"
"  unzoomBtn.classList.add('hide');\n"
"}\n"
"function search(term) {\n"
"  if (term === undefined) {\n"
"    term = prompt('Search for a regular expression:', searching === null ? '' : searching);\n"
"    if (term === null || term === '') return;\n"
"  }\n"
"  var re, spans = [], count = 0, sum = 0, end = -1;\n"
"  try { re = new RegExp(term); } catch (e) {\n"
"    alert('Invalid regular expression: ' + e.message); return;\n"
"  }\n"
"  resetSearch();\n"
"  for (var i = 1; i < nodes.length; i++) {\n"
"    var n = nodes[i];\n"
"    if (!re.test(n.name)) continue;\n"
"    n.r.setAttribute('fill', SEARCH_FILL);\n"
"    spans.push([n.x, n.x + n.w]); count++;\n"
"  }\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  for (var j = 0; j < spans.length; j++) {\n"
"    var s = Math.max(spans[j][0], end);\n"
"    if (spans[j][1] > s) { sum += spans[j][1] - s; end = spans[j][1]; }\n"
"  }\n"
"  searching = term;\n"
"  matched.textContent = 'Matched: ' + (100 * sum / nodes[0].w).toFixed(2) + '% (' +\n"
"    count + (count === 1 ? ' frame)' : ' frames)');\n"
"  searchBtn.textContent = 'Reset Search';\n"
"}\n"
"function resetSearch() {\n"
"  for (var i = 0; i < nodes.length; i++) nodes[i].r.setAttribute('fill', nodes[i].fill);\n"
"  searching = null;\n"
"  matched.textContent = ' ';\n"
"  searchBtn.textContent = 'Search';\n"
"}\n";

static const char style[] =
"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
"#title { font-size: 17px; text-anchor: middle; }\n"
"#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
".ctl { cursor: pointer; fill: rgb(0,0,170); }\n"
".ctl:hover { text-decoration: underline; }\n"
"#frames g { cursor: pointer; }\n"
"#frames g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
"#frames text { pointer-events: none; }\n"
"#frames .i rect { stroke: rgb(40,110,40); stroke-width: 0.5; stroke-dasharray: 3,2; }\n"
".faded rect { fill-opacity: 0.55; }\n"
".hide { display: none; }\n";

static void legend_item(struct strbuf *sb, double *x, struct rgb c, const char *what)
{
	strbuf_addf(sb, "<rect x=\"%.1f\" y=\"52\" width=\"10\" height=\"10\" fill=\"rgb(%d,%d,%d)\"/>"
		    "<text x=\"%.1f\" y=\"61\">%s</text>\n", *x, c.r, c.g, c.b, *x + 14, what);
	*x += 14 + strlen(what) * CHAR_WIDTH + 18;
}

static void emit_svg(struct render *r, const struct strbuf *frames)
{
	const struct flame_options *o = r->o;
	struct strbuf *sb = r->sb;
	const struct profile *p = r->p;
	const struct pf_value_type *vt = &p->sample_type[r->cur->sample_type];
	int w = o->width;
	double h = HEADER + (double)(r->max_depth + 1) * FLAME_FRAME_HEIGHT + FOOTER;
	double lx = PAD;

	strbuf_addf(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		    "<svg version=\"1.1\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
		    "xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n"
		    "<!-- flame graph drawn by hotloop -->\n<style type=\"text/css\"><![CDATA[\n%s]]></style>\n"
		    "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
		    "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"rgb(250,250,250)\"/>\n",
		    w, h, w, h, style, script, w, h);

	strbuf_addf(sb, "<text id=\"title\" x=\"%.1f\" y=\"24\">", w / 2.0);
	strbuf_add_xml(sb, o->title ? o->title : r->old ? "Differential Flame Graph" : "Flame Graph",
		SIZE_MAX);
	strbuf_addf(sb, "</text>\n<text id=\"subtitle\" x=\"%.1f\" y=\"42\">", w / 2.0);
	strbuf_add_xml(sb, o->name ? o->name : "profile", SIZE_MAX);
	if (r->old) {
		strbuf_addstr(sb, " vs ");
		strbuf_add_xml(sb, o->base_name ? o->base_name : "base", SIZE_MAX);
		strbuf_addstr(sb, ": ");
		add_count(sb, r->cur->total);
		strbuf_addstr(sb, " vs ");
		add_count(sb, r->old->total);
	} else {
		strbuf_addstr(sb, ": ");
		add_count(sb, r->cur->total);
	}
	strbuf_addf(sb, " %s (sample type ", r->unit_word);
	strbuf_add_xml(sb, profile_string(p, vt->type), SIZE_MAX);
	strbuf_addch(sb, '/');
	strbuf_add_xml(sb, profile_string(p, vt->unit), SIZE_MAX);
	strbuf_addstr(sb, o->reverse ? "), reversed: leaf functions at the base</text>\n"
				     : ")</text>\n");

	if (r->old) {
		legend_item(sb, &lx, diff_colour(1, false, 1), "grew");
		legend_item(sb, &lx, diff_colour(-1, false, 1), "shrank");
		legend_item(sb, &lx, diff_colour(0, false, 1), "unchanged");
	} else if (r->kinds & ~(1u << KIND_USER)) {
		legend_item(sb, &lx, kind_colour("", KIND_USER), "user");
		if (r->kinds & (1u << KIND_KERNEL))
			legend_item(sb, &lx, kind_colour("", KIND_KERNEL), "kernel");
		if (r->kinds & (1u << KIND_INLINED))
			legend_item(sb, &lx, kind_colour("", KIND_INLINED), "inlined");
	}

	strbuf_addf(sb, "<text id=\"unzoom\" class=\"ctl hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		    "<text id=\"search\" class=\"ctl\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		    "<text id=\"details\" x=\"%d\" y=\"%.0f\"> </text>\n"
		    "<text id=\"matched\" x=\"%d\" y=\"%.0f\" text-anchor=\"end\"> </text>\n"
		    "<g id=\"frames\">\n",
		    PAD, w - PAD, PAD, h - 12, w - PAD, h - 12);
	strbuf_add(sb, frames->buf, frames->len);
	strbuf_addstr(sb, "</g>\n</svg>\n");
}

/* The word for one unit of the values: "samples", "nanoseconds", "bytes". */
static const char *unit_word(const struct profile *p, int idx)
{
	const char *unit = profile_string(p, p->sample_type[idx].unit);

	if (!*unit || !strcmp(unit, "count"))
		return profile_string(p, p->sample_type[idx].type);
	return unit;
}

static int pick_base_type(const struct profile *p, int idx, const struct profile *base,
			  const struct flame_options *o)
{
	const char *name = profile_string(p, p->sample_type[idx].type);
	int bidx;

	if (o->sample_type)
		return profile_pick_sample_type(base, o->sample_type);
	bidx = profile_find_sample_type(base, name);
	if (bidx >= 0)
		return bidx;
	bidx = profile_pick_sample_type(base, NULL);
	if (bidx >= 0)
		warning("the base profile has no sample type '%s': comparing with '%s'", name,
			profile_string(base, base->sample_type[bidx].type));
	return bidx;
}

int flame_render(const struct profile *p, const struct profile *base,
		 const struct flame_options *o, struct strbuf *out)
{
	struct strtab names;
	struct ftree cur = { 0 }, old = { 0 };
	struct strbuf frames = STRBUF_INIT;
	struct render r = { .o = o, .p = p, .base = base, .cur = &cur, .names = &names };
	struct name_rank *ranks;
	uint32_t *rank;
	int idx, bidx = -1, ret = -1;

	if (o->width < FLAME_MIN_IMAGE_WIDTH || o->width > FLAME_MAX_IMAGE_WIDTH)
		return error("invalid flame graph width %d: expected %d to %d pixels",
			     o->width, FLAME_MIN_IMAGE_WIDTH, FLAME_MAX_IMAGE_WIDTH);
	if (!(o->min_width >= 0) || (o->min_width_percent && o->min_width > 100))
		return error("invalid minimum frame width %g", o->min_width);
	idx = profile_pick_sample_type(p, o->sample_type);
	if (idx < 0)
		return -1;
	if (base) {
		bidx = pick_base_type(p, idx, base, o);
		if (bidx < 0)
			return -1;
	}

	r.min_px = o->min_width_percent ? o->min_width / 100 * (o->width - 2 * PAD) : o->min_width;
	strtab_init(&names);
	tree_build(&cur, p, idx, &names, o->reverse, o->no_inline, o->width - 2 * PAD, r.min_px);
	if (base) {
		/* the base is looked up, never drawn: keep all of it */
		tree_build(&old, base, bidx, &names, o->reverse, o->no_inline, o->width - 2 * PAD, 0);
		r.old = &old;
	}
	if (cur.total <= 0) {
		error("nothing to draw: '%s' has no %s", o->name ? o->name : "the profile",
		      unit_word(p, idx));
		goto out;
	}
	if (base && old.total <= 0) {
		error("nothing to compare with: '%s' has no %s",
		      o->base_name ? o->base_name : "the base profile", unit_word(base, bidx));
		goto out;
	}
	if (cur.truncated || old.truncated)
		warning("%zu stacks deeper than %d frames were cut to that depth",
			cur.truncated + old.truncated, FLAME_MAX_DEPTH);

	/* children in name order: rank the names once, for both trees */
	if (names.nr >= (size_t)1 << 30) {
		error("cannot draw '%s': too many distinct function names",
		      o->name ? o->name : "the profile");
		goto out;
	}
	ranks = xcalloc(names.nr, sizeof(*ranks));
	rank = xcalloc(names.nr, sizeof(*rank));
	for (size_t i = 0; i < names.nr; i++)
		ranks[i] = (struct name_rank){ names.str[i], (uint32_t)i };
	qsort(ranks, names.nr, sizeof(*ranks), cmp_name_rank);
	for (size_t i = 0; i < names.nr; i++)
		rank[ranks[i].id] = (uint32_t)i;
	tree_sort(&cur, rank);
	free(ranks);
	free(rank);

	r.unit_word = unit_word(p, idx);
	r.scale = (double)(o->width - 2 * PAD) / (double)cur.total;
	walk(&r, false);
	if (r.max_delta < 0.001)
		r.max_delta = 0.001;	/* below 0.1 point of change, no frame is saturated */
	r.sb = &frames;
	walk(&r, true);
	r.sb = out;
	emit_svg(&r, &frames);
	ret = 0;
out:
	strbuf_release(&frames);
	tree_release(&cur);
	tree_release(&old);
	strtab_release(&names);
	return ret;
}
