/*
 * callgrind.c: the callgrind.out reader (callgrind.h has the mapping). The
 * parser fills tables of functions, sites (function, file, line, address)
 * with self cost and call edges with inclusive cost, checking every number,
 * id and line; the expansion walks the graph from its roots, heaviest paths
 * first, and turns paths into samples.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "hindex.h"
#include "lines.h"
#include "profile.h"
#include "callgrind.h"

#define NONE UINT32_MAX
#define MAX_ENTRIES (UINT32_MAX - 1)
/* pending paths at once, and edges looked at while expanding */
#define MAX_PENDING (CALLGRIND_MAX_PATHS * 4)
#define MAX_STEPS ((size_t)1 << 25)

enum name_kind { NAME_OB, NAME_FL, NAME_FN };
enum pos_kind { POS_INSTR, POS_LINE };

/* ---- a map from four integers to an index ------------------------------ */

struct km_entry {
	int64_t k[4];
	uint32_t v;
};

struct keymap {
	struct km_entry *v;
	size_t nr, alloc;
	struct hindex index;
};

static uint64_t km_hash(const int64_t k[4])
{
	uint64_t h = HASH_SEED;

	for (int i = 0; i < 4; i++)
		h = hash_u64(h, (uint64_t)k[i]);
	/* FNV keeps high bits of small keys apart poorly: mix before masking */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static bool km_eq(const void *table, size_t i, const void *key)
{
	return !memcmp(((const struct keymap *)table)->v[i].k, key, 4 * sizeof(int64_t));
}

/* The index stored under k, or NONE. */
static uint32_t km_get(const struct keymap *m, const int64_t k[4])
{
	size_t i = hindex_lookup(&m->index, km_hash(k), km_eq, m, k);

	return i == HINDEX_NONE ? NONE : m->v[i].v;
}

static void km_put(struct keymap *m, const int64_t k[4], uint32_t v)
{
	uint64_t hash = km_hash(k);
	size_t s, i;

	if ((i = hindex_probe(&m->index, hash, km_eq, m, k, &s)) == HINDEX_NONE) {
		ALLOC_GROW(m->v, m->nr + 1, m->alloc);
		memcpy(m->v[m->nr].k, k, sizeof(m->v[m->nr].k));
		hindex_set(&m->index, s, hash, m->nr);
		i = m->nr++;
	}
	m->v[i].v = v;
}

static void km_release(struct keymap *m)
{
	free(m->v);
	hindex_release(&m->index);
	memset(m, 0, sizeof(*m));
}

/* ---- the graph -------------------------------------------------------- */

struct cg_node {
	int64_t ob, file, fn;	/* string indexes */
	int64_t start_line;	/* smallest line seen in the function's own file */
	uint64_t function_id, mapping_id;
	size_t self_off;	/* costs of the node (sum of its sites) */
	double *denom;		/* incoming call cost, per event (expansion) */
};

struct cg_site {
	uint32_t node;
	int64_t file, line;
	uint64_t addr;
	size_t cost_off;	/* SIZE_MAX: no self cost */
	uint64_t location_id;
};

struct cg_edge {
	uint32_t caller, callee, site;
	size_t cost_off;
	uint64_t count;
};

struct cg_parser {
	struct profile *p;
	struct input_pos in;	/* the input's name, the line */

	int nev;			/* events of the profile */
	int64_t ev_name[CALLGRIND_MAX_EVENTS];
	int npos;
	enum pos_kind pos[2];
	uint64_t last[2];		/* by enum pos_kind */

	int64_t ob, file;		/* current object and source file */
	uint32_t node, callee;
	int64_t cob, cfi;
	bool cob_set, cfi_set;
	bool in_body, in_call, any_fn;
	size_t call_line;
	uint64_t call_count;
	int64_t unknown;		/* the string "???" */

	struct keymap names, node_map, site_map, edge_map;
	struct cg_node *nodes;
	size_t nr_nodes, alloc_nodes;
	struct cg_site *sites;
	size_t nr_sites, alloc_sites;
	struct cg_edge *edges;
	size_t nr_edges, alloc_edges;
	int64_t *costs;
	size_t nr_costs, alloc_costs;
	bool any_inlined;
};

/* The next white-space separated token of [*s, end), or NULL. */
static const char *next_token(const char **s, const char *end, size_t *len)
{
	const char *t = *s;

	while (t < end && is_space(*t))
		t++;
	if (t == end) {
		*s = end;
		return NULL;
	}
	*s = t;
	while (*s < end && !is_space(**s))
		(*s)++;
	*len = (size_t)(*s - t);
	return t;
}

/* A number, decimal or 0x hexadecimal; false when not one or too large. */
static bool parse_number(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	unsigned base = 10;
	size_t i = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return false;
	for (; i < n; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned)(s[i] - 'A' + 10);
		else
			return false;
		if (x > (UINT64_MAX - d) / base)
			return false;
		x = x * base + d;
	}
	*v = x;
	return true;
}

static int shown(size_t n)
{
	return n > 40 ? 40 : (int)n;
}

static size_t new_costs(struct cg_parser *ps)
{
	size_t off = ps->nr_costs;

	ALLOC_GROW(ps->costs, ps->nr_costs + (size_t)ps->nev, ps->alloc_costs);
	memset(ps->costs + off, 0, (size_t)ps->nev * sizeof(*ps->costs));
	ps->nr_costs += (size_t)ps->nev;
	return off;
}

static void add_costs(struct cg_parser *ps, size_t off, const int64_t *v)
{
	for (int k = 0; k < ps->nev; k++)
		ps->costs[off + (size_t)k] = sat_add(ps->costs[off + (size_t)k], v[k]);
}

static int too_many(struct cg_parser *ps, const char *what)
{
	return line_error(&ps->in, "too many %s", what);
}

static int get_node(struct cg_parser *ps, int64_t ob, int64_t file, int64_t fn, uint32_t *out)
{
	int64_t key[4] = { ob, file, fn, 0 };
	uint32_t i = km_get(&ps->node_map, key);
	struct cg_node *n;

	if (i == NONE) {
		if (ps->nr_nodes >= MAX_ENTRIES)
			return too_many(ps, "functions");
		ALLOC_GROW(ps->nodes, ps->nr_nodes + 1, ps->alloc_nodes);
		i = (uint32_t)ps->nr_nodes++;
		n = &ps->nodes[i];
		memset(n, 0, sizeof(*n));
		n->ob = ob;
		n->file = file;
		n->fn = fn;
		n->self_off = SIZE_MAX;
		km_put(&ps->node_map, key, i);
	}
	*out = i;
	return 0;
}

static int get_site(struct cg_parser *ps, uint32_t *out)
{
	int64_t line = 0;
	uint64_t addr = 0;
	int64_t key[4];
	uint32_t i;

	for (int j = 0; j < ps->npos; j++) {
		if (ps->pos[j] == POS_LINE)
			line = (int64_t)ps->last[POS_LINE];
		else
			addr = ps->last[POS_INSTR];
	}
	key[0] = ps->node;
	key[1] = ps->file;
	key[2] = line;
	key[3] = (int64_t)addr;
	i = km_get(&ps->site_map, key);
	if (i == NONE) {
		struct cg_site *s;
		struct cg_node *n = &ps->nodes[ps->node];

		if (ps->nr_sites >= MAX_ENTRIES)
			return too_many(ps, "cost positions");
		ALLOC_GROW(ps->sites, ps->nr_sites + 1, ps->alloc_sites);
		i = (uint32_t)ps->nr_sites++;
		s = &ps->sites[i];
		s->node = ps->node;
		s->file = ps->file;
		s->line = line;
		s->addr = addr;
		s->cost_off = SIZE_MAX;
		s->location_id = 0;
		km_put(&ps->site_map, key, i);
		if (s->file == n->file && line > 0 && (!n->start_line || line < n->start_line))
			n->start_line = line;
		if (s->file != n->file)
			ps->any_inlined = true;
	}
	*out = i;
	return 0;
}

/* ---- lines ------------------------------------------------------------ */

/*
 * "(id) name", "(id)" or "name" of a name kind: the string index in *out.
 * Ids are compressed names, defined on first use and shared by the keys of
 * one kind (ob/cob, fl/fi/fe/cfi/cfl/jfi, fn/cfn/jfn).
 */
static int parse_name(struct cg_parser *ps, enum name_kind kind, const char *key,
		      const char *s, size_t n, int64_t *out)
{
	int64_t mk[4] = { kind, 0, 0, 0 };
	uint64_t id;
	uint32_t v;
	const char *close;

	trim(&s, &n);
	if (!n || s[0] != '(') {
		if (!n)
			return line_error(&ps->in, "'%s=' without a name", key);
		*out = strtab_intern(&ps->p->strings, s, n);
		return 0;
	}
	close = memchr(s, ')', n);
	if (!close)
		return line_error(&ps->in, "'%s=' name id without ')'", key);
	if (!parse_number(s + 1, (size_t)(close - s - 1), &id) || id > CALLGRIND_MAX_ID)
		return line_error(&ps->in, "'%s=' has a bad name id '%.*s'", key,
				  shown((size_t)(close - s + 1)), s);
	mk[1] = (int64_t)id;
	n -= (size_t)(close - s + 1);
	s = close + 1;
	trim(&s, &n);
	if (n) {
		*out = strtab_intern(&ps->p->strings, s, n);
		if (ps->names.nr >= MAX_ENTRIES)
			return too_many(ps, "names");
		/* the table holds string indexes, which stay far below 2^32 here */
		if (*out >= (int64_t)MAX_ENTRIES)
			return too_many(ps, "names");
		km_put(&ps->names, mk, (uint32_t)*out);
		return 0;
	}
	v = km_get(&ps->names, mk);
	if (v == NONE)
		return line_error(&ps->in, "'%s=' uses name id (%llu) before defining it", key,
				  (unsigned long long)id);
	*out = v;
	return 0;
}

/* One subposition of kind k: absolute, +N, -N or '*'. */
static int parse_subpos(struct cg_parser *ps, const char *t, size_t n, enum pos_kind k,
			uint64_t *v)
{
	uint64_t base = ps->last[k], d, max = k == POS_LINE ? (uint64_t)INT64_MAX : UINT64_MAX;

	if (n == 1 && t[0] == '*') {
		*v = base;
		return 0;
	}
	if (t[0] == '+' || t[0] == '-') {
		if (!parse_number(t + 1, n - 1, &d))
			goto bad;
		if (t[0] == '+') {
			if (d > max - base)
				goto range;
			*v = base + d;
		} else {
			if (d > base)
				goto range;
			*v = base - d;
		}
		return 0;
	}
	if (!parse_number(t, n, &d))
		goto bad;
	if (d > max)
		goto range;
	*v = d;
	return 0;
bad:
	return line_error(&ps->in, "bad %s position '%.*s'", k == POS_LINE ? "line" : "instr",
			  shown(n), t);
range:
	return line_error(&ps->in, "%s position '%.*s' is out of range", k == POS_LINE ? "line" : "instr",
			  shown(n), t);
}

/* Positions from [*s, end) into pos[] (indexed by kind), relative to last. */
static int parse_positions(struct cg_parser *ps, const char **s, const char *end,
			   uint64_t pos[2])
{
	pos[0] = ps->last[0];
	pos[1] = ps->last[1];
	for (int i = 0; i < ps->npos; i++) {
		size_t n;
		const char *t = next_token(s, end, &n);

		if (!t)
			return line_error(&ps->in, "%d position%s expected, found %d", ps->npos,
					  ps->npos > 1 ? "s" : "", i);
		if (parse_subpos(ps, t, n, ps->pos[i], &pos[ps->pos[i]]))
			return -1;
	}
	return 0;
}

static int parse_cost_line(struct cg_parser *ps, const char *s, size_t n)
{
	const char *end = s + n;
	int64_t v[CALLGRIND_MAX_EVENTS] = { 0 };
	uint64_t pos[2];
	uint32_t site = 0;
	int k = 0;

	if (!ps->nev)
		return line_error(&ps->in, "a cost line before the 'events:' header");
	if (!ps->any_fn)
		return line_error(&ps->in, "a cost line before any 'fn=' line");
	if (parse_positions(ps, &s, end, pos))
		return -1;
	for (;;) {
		size_t tn;
		const char *t = next_token(&s, end, &tn);
		uint64_t x;

		if (!t)
			break;
		if (k == ps->nev)
			return line_error(&ps->in, "more costs than the %d event%s of 'events:'",
					  ps->nev, ps->nev > 1 ? "s" : "");
		if (!parse_number(t, tn, &x) || x > (uint64_t)INT64_MAX)
			return line_error(&ps->in, "cost '%.*s' is not a number from 0 to %lld",
					  shown(tn), t, (long long)INT64_MAX);
		v[k++] = (int64_t)x;
	}
	ps->last[0] = pos[0];
	ps->last[1] = pos[1];
	if (get_site(ps, &site))
		return -1;
	if (ps->in_call) {
		int64_t key[4] = { ps->node, ps->callee, site, 0 };
		uint32_t e = km_get(&ps->edge_map, key);

		ps->in_call = false;
		if (e == NONE) {
			if (ps->nr_edges >= MAX_ENTRIES)
				return too_many(ps, "calls");
			ALLOC_GROW(ps->edges, ps->nr_edges + 1, ps->alloc_edges);
			e = (uint32_t)ps->nr_edges++;
			ps->edges[e] = (struct cg_edge){
				.caller = ps->node, .callee = ps->callee, .site = site,
				.cost_off = new_costs(ps),
			};
			km_put(&ps->edge_map, key, e);
		}
		ps->edges[e].count = ps->edges[e].count > UINT64_MAX - ps->call_count
				     ? UINT64_MAX : ps->edges[e].count + ps->call_count;
		add_costs(ps, ps->edges[e].cost_off, v);
		return 0;
	}
	if (ps->sites[site].cost_off == SIZE_MAX) {
		size_t off = new_costs(ps);
		ps->sites[site].cost_off = off;
	}
	add_costs(ps, ps->sites[site].cost_off, v);
	return 0;
}

static int parse_calls(struct cg_parser *ps, const char *s, size_t n)
{
	const char *end = s + n;
	const char *t;
	uint64_t pos[2];
	size_t tn;

	if (!ps->any_fn)
		return line_error(&ps->in, "'calls=' before any 'fn=' line");
	if (ps->callee == NONE)
		return line_error(&ps->in, "'calls=' without a 'cfn=' line naming the function called");
	t = next_token(&s, end, &tn);
	if (!t || !parse_number(t, tn, &ps->call_count))
		return line_error(&ps->in, "'calls=' needs a call count, found '%.*s'",
				  t ? shown(tn) : 0, t ? t : "");
	/* the target position (in the function called) is checked, not kept */
	t = s;
	if (next_token(&t, end, &tn) && parse_positions(ps, &s, end, pos))
		return -1;
	ps->in_call = true;
	ps->call_line = ps->in.lineno;
	return 0;
}

static const struct body_key {
	const char *key;
	int kind;		/* enum name_kind, or -1 */
} body_keys[] = {
	{ "ob", NAME_OB }, { "fl", NAME_FL }, { "fi", NAME_FL }, { "fe", NAME_FL },
	{ "fn", NAME_FN }, { "cob", NAME_OB }, { "cfi", NAME_FL }, { "cfl", NAME_FL },
	{ "cfn", NAME_FN }, { "jfi", NAME_FL }, { "jfn", NAME_FN },
	{ "calls", -1 }, { "jump", -1 }, { "jcnd", -1 },
};

static int parse_body_spec(struct cg_parser *ps, const struct body_key *bk,
			   const char *s, size_t n)
{
	const char *key = bk->key;
	int64_t name = 0;

	if (!strcmp(key, "calls"))
		return parse_calls(ps, s, n);
	if (!strcmp(key, "jump") || !strcmp(key, "jcnd"))
		return 0;	/* jumps are not part of the stack model */
	if (parse_name(ps, (enum name_kind)bk->kind, key, s, n, &name))
		return -1;
	if (!strcmp(key, "ob")) {
		ps->ob = name;
	} else if (!strcmp(key, "fl") || !strcmp(key, "fi") || !strcmp(key, "fe")) {
		ps->file = name;
	} else if (!strcmp(key, "fn")) {
		if (get_node(ps, ps->ob, ps->file, name, &ps->node))
			return -1;
		ps->any_fn = true;
		ps->callee = NONE;
		ps->cob_set = ps->cfi_set = false;
	} else if (!strcmp(key, "cob")) {
		ps->cob = name;
		ps->cob_set = true;
	} else if (!strcmp(key, "cfi") || !strcmp(key, "cfl")) {
		ps->cfi = name;
		ps->cfi_set = true;
	} else if (!strcmp(key, "cfn")) {
		if (get_node(ps, ps->cob_set ? ps->cob : ps->ob, ps->cfi_set ? ps->cfi : ps->file,
			     name, &ps->callee))
			return -1;
		ps->cob_set = ps->cfi_set = false;
	}
	/* jfi=, jfn= only define names */
	return 0;
}

static bool key_is(const char *s, size_t n, const char *key)
{
	return strlen(key) == n && !memcmp(s, key, n);
}

static int parse_events(struct cg_parser *ps, const char *s, size_t n)
{
	const char *end = s + n;
	int64_t names[CALLGRIND_MAX_EVENTS];
	int k = 0;
	const char *t;
	size_t tn;

	while ((t = next_token(&s, end, &tn))) {
		if (k == CALLGRIND_MAX_EVENTS)
			return line_error(&ps->in, "more than %d events", CALLGRIND_MAX_EVENTS);
		names[k] = strtab_intern(&ps->p->strings, t, tn);
		for (int j = 0; j < k; j++)
			if (names[j] == names[k])
				return line_error(&ps->in, "event '%.*s' named twice", shown(tn), t);
		k++;
	}
	if (!k)
		return line_error(&ps->in, "'events:' names no event");
	if (ps->nev) {
		if (k != ps->nev || memcmp(names, ps->ev_name, (size_t)k * sizeof(*names)))
			return line_error(&ps->in, "'events:' differs from the first part's");
		return 0;
	}
	ps->nev = k;
	memcpy(ps->ev_name, names, (size_t)k * sizeof(*names));
	return 0;
}

static int parse_positions_header(struct cg_parser *ps, const char *s, size_t n)
{
	const char *end = s + n;
	const char *t;
	size_t tn;
	int np = 0;
	enum pos_kind kinds[2];

	while ((t = next_token(&s, end, &tn))) {
		enum pos_kind k;

		if (key_is(t, tn, "instr"))
			k = POS_INSTR;
		else if (key_is(t, tn, "line"))
			k = POS_LINE;
		else
			return line_error(&ps->in, "unknown position '%.*s' (known: instr, line)",
					  shown(tn), t);
		if (np == 2 || (np == 1 && kinds[0] == k))
			return line_error(&ps->in, "position '%.*s' named twice", shown(tn), t);
		kinds[np++] = k;
	}
	if (!np)
		return line_error(&ps->in, "'positions:' names no position");
	ps->npos = np;
	memcpy(ps->pos, kinds, sizeof(kinds));
	return 0;
}

static void add_comment(struct cg_parser *ps, const char *key, const char *s, size_t n)
{
	char *c = xstrfmt("callgrind %s: %.*s", key, n > 200 ? 200 : (int)n, s);

	for (char *q = c; *q; q++)
		if ((unsigned char)*q < 0x20)
			*q = ' ';
	profile_add_comment(ps->p, c);
	free(c);
}

static int parse_header(struct cg_parser *ps, const char *key, size_t kn,
			const char *s, size_t n)
{
	trim(&s, &n);
	if (ps->in_body)
		ps->in_body = false;	/* a header after body lines starts a new part */
	if (key_is(key, kn, "events"))
		return parse_events(ps, s, n);
	if (key_is(key, kn, "positions"))
		return parse_positions_header(ps, s, n);
	if ((key_is(key, kn, "cmd") || key_is(key, kn, "creator")) && ps->p->nr_comments < 8)
		add_comment(ps, key_is(key, kn, "cmd") ? "cmd" : "creator", s, n);
	/* version, pid, part, thread, desc, summary, totals and others: not needed */
	return 0;
}

/* The length of a "key:" header key at the start of s, or 0. */
static size_t header_key(const char *s, size_t n)
{
	size_t i = 0;

	if (!n || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	while (i < n && s[i] != ':') {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == ' ' || c == '.' || c == '-'))
			return 0;
		i++;
	}
	return i < n ? i : 0;
}

static const struct body_key *body_key_of(const char *s, size_t n, size_t *vlen)
{
	const char *eq = memchr(s, '=', n > 8 ? 8 : n);

	if (!eq)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(body_keys); i++)
		if (key_is(s, (size_t)(eq - s), body_keys[i].key)) {
			*vlen = n - (size_t)(eq - s) - 1;
			return &body_keys[i];
		}
	return NULL;
}

static int parse_line(struct cg_parser *ps, const char *s, size_t n)
{
	const struct body_key *bk;
	size_t kn, vlen;

	if (ps->in_call && !(s[0] == '+' || s[0] == '-' || s[0] == '*' ||
			     (s[0] >= '0' && s[0] <= '9')))
		return line_error(&ps->in, "'calls=' on line %zu is not followed by its cost line",
				  ps->call_line);
	bk = body_key_of(s, n, &vlen);
	if (bk) {
		ps->in_body = true;
		return parse_body_spec(ps, bk, s + n - vlen, vlen);
	}
	kn = header_key(s, n);
	if (kn)
		return parse_header(ps, s, kn, s + kn + 1, n - kn - 1);
	if (s[0] == '+' || s[0] == '-' || s[0] == '*' || (s[0] >= '0' && s[0] <= '9')) {
		ps->in_body = true;
		return parse_cost_line(ps, s, n);
	}
	return line_error(&ps->in, "not a callgrind line: '%.*s'", shown(n), s);
}

static int parse_all(struct cg_parser *ps, const char *buf, size_t len)
{
	size_t pos = 0, n;
	const char *s;

	while (next_line(buf, len, &pos, &s, &n)) {
		ps->in.lineno++;
		if (n > CALLGRIND_MAX_LINE)
			return line_error(&ps->in, "longer than %zu bytes", CALLGRIND_MAX_LINE);
		if (memchr(s, '\0', n))
			return line_error(&ps->in, "contains a NUL byte (is this a binary file?)");
		trim(&s, &n);
		if (!n || s[0] == '#')
			continue;
		if (parse_line(ps, s, n))
			return -1;
	}
	if (ps->in_call) {
		ps->in.lineno = ps->call_line;
		return line_error(&ps->in, "'calls=' is not followed by its cost line");
	}
	if (!ps->nev)
		return error("cannot read '%s': no 'events:' header (is this a callgrind file?)",
			     ps->in.what);
	return 0;
}

/* ---- from the graph to stacks ---------------------------------------- */

struct cg_path {
	uint32_t parent;	/* NONE for a root */
	uint32_t node;
	uint32_t callsite;	/* the call's site in the parent's function */
	uint32_t depth;
};

struct pending {
	double prio;
	uint32_t parent;	/* NONE: a root, 'target' is its node */
	uint32_t target;	/* the edge followed */
};

struct expansion {
	struct cg_parser *ps;
	int nev;
	struct cg_path *paths;
	size_t nr_paths, alloc_paths;
	double *f;		/* nev per path: share of the node's cost on this path */
	size_t alloc_f;
	double *w;		/* nev per node: sum of f over the node's paths */
	double *total;		/* nev: all self cost, for priorities */
	size_t *out_start;	/* CSR of out edges, nr_nodes + 1 */
	uint32_t *out;
	size_t *site_start;	/* CSR of sites with self cost, nr_nodes + 1 */
	uint32_t *site_list;
	struct pending *heap;
	size_t nr_heap, alloc_heap;
	size_t cut_recursion, cut_depth, cut_paths, fallback;
};

static void heap_push(struct expansion *x, struct pending e)
{
	size_t i;

	ALLOC_GROW(x->heap, x->nr_heap + 1, x->alloc_heap);
	i = x->nr_heap++;
	while (i) {
		size_t up = (i - 1) / 2;
		if (x->heap[up].prio >= e.prio)
			break;
		x->heap[i] = x->heap[up];
		i = up;
	}
	x->heap[i] = e;
}

static struct pending heap_pop(struct expansion *x)
{
	struct pending top = x->heap[0], e = x->heap[--x->nr_heap];
	size_t i = 0, n = x->nr_heap;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && x->heap[c + 1].prio > x->heap[c].prio)
			c++;
		if (x->heap[c].prio <= e.prio)
			break;
		x->heap[i] = x->heap[c];
		i = c;
	}
	if (n)
		x->heap[i] = e;
	return top;
}

static const int64_t *edge_cost(const struct expansion *x, uint32_t e)
{
	return x->ps->costs + x->ps->edges[e].cost_off;
}

static uint32_t add_path(struct expansion *x, uint32_t parent, uint32_t node,
			 uint32_t callsite, uint32_t depth)
{
	ALLOC_GROW(x->paths, x->nr_paths + 1, x->alloc_paths);
	x->paths[x->nr_paths] = (struct cg_path){ parent, node, callsite, depth };
	ALLOC_GROW(x->f, (x->nr_paths + 1) * (size_t)x->nev, x->alloc_f);
	return (uint32_t)x->nr_paths++;
}

static bool on_path(const struct expansion *x, uint32_t path, uint32_t node)
{
	for (; path != NONE; path = x->paths[path].parent)
		if (x->paths[path].node == node)
			return true;
	return false;
}

static void build_csr(struct expansion *x)
{
	struct cg_parser *ps = x->ps;
	size_t nn = ps->nr_nodes, *fill;

	x->out_start = xcalloc(nn + 1, sizeof(*x->out_start));
	x->site_start = xcalloc(nn + 1, sizeof(*x->site_start));
	for (size_t e = 0; e < ps->nr_edges; e++)
		x->out_start[ps->edges[e].caller + 1]++;
	for (size_t s = 0; s < ps->nr_sites; s++)
		if (ps->sites[s].cost_off != SIZE_MAX)
			x->site_start[ps->sites[s].node + 1]++;
	for (size_t i = 0; i < nn; i++) {
		x->out_start[i + 1] += x->out_start[i];
		x->site_start[i + 1] += x->site_start[i];
	}
	x->out = xcalloc(ps->nr_edges + 1, sizeof(*x->out));
	x->site_list = xcalloc(ps->nr_sites + 1, sizeof(*x->site_list));
	fill = xcalloc(nn + 1, sizeof(*fill));
	for (size_t e = 0; e < ps->nr_edges; e++) {
		uint32_t c = ps->edges[e].caller;
		x->out[x->out_start[c] + fill[c]++] = (uint32_t)e;
	}
	memset(fill, 0, (nn + 1) * sizeof(*fill));
	for (size_t s = 0; s < ps->nr_sites; s++) {
		uint32_t c = ps->sites[s].node;
		if (ps->sites[s].cost_off != SIZE_MAX)
			x->site_list[x->site_start[c] + fill[c]++] = (uint32_t)s;
	}
	free(fill);
}

/*
 * Per node: its self cost (sum of its sites) and the call cost coming in
 * from other functions; per event, the total self cost.
 */
static void sum_costs(struct expansion *x, double *incl)
{
	struct cg_parser *ps = x->ps;
	int nev = x->nev;

	for (size_t i = 0; i < ps->nr_nodes; i++) {
		struct cg_node *n = &ps->nodes[i];

		n->self_off = new_costs(ps);
		n->denom = xcalloc((size_t)nev, sizeof(*n->denom));
	}
	for (size_t s = 0; s < ps->nr_sites; s++) {
		const struct cg_site *st = &ps->sites[s];
		if (st->cost_off == SIZE_MAX)
			continue;
		add_costs(ps, ps->nodes[st->node].self_off, ps->costs + st->cost_off);
	}
	for (size_t i = 0; i < ps->nr_nodes; i++)
		for (int k = 0; k < nev; k++) {
			double v = (double)ps->costs[ps->nodes[i].self_off + (size_t)k];
			x->total[k] += v;
			incl[i * (size_t)nev + (size_t)k] += v;
		}
	for (size_t e = 0; e < ps->nr_edges; e++) {
		const struct cg_edge *ed = &ps->edges[e];
		const int64_t *c = edge_cost(x, (uint32_t)e);

		if (ed->caller == ed->callee)
			continue;
		for (int k = 0; k < nev; k++) {
			ps->nodes[ed->callee].denom[k] += (double)c[k];
			incl[(size_t)ed->caller * (size_t)nev + (size_t)k] += (double)c[k];
		}
	}
	for (int k = 0; k < nev; k++)
		if (x->total[k] <= 0)
			x->total[k] = 1;
}

static bool has_callers(const struct expansion *x, uint32_t node)
{
	const struct cg_node *n = &x->ps->nodes[node];

	for (int k = 0; k < x->nev; k++)
		if (n->denom[k] > 0)
			return true;
	return false;
}

/* Expand paths from the roots, heaviest first, within the bounds. */
static void expand(struct expansion *x, const double *incl)
{
	struct cg_parser *ps = x->ps;
	int nev = x->nev;
	size_t cells = 0, steps = 0;

	for (size_t i = 0; i < ps->nr_nodes; i++) {
		double prio = 0;

		if (has_callers(x, (uint32_t)i))
			continue;
		for (int k = 0; k < nev; k++)
			prio += incl[i * (size_t)nev + (size_t)k] / x->total[k];
		if (prio > 0)
			heap_push(x, (struct pending){ prio, NONE, (uint32_t)i });
	}

	while (x->nr_heap) {
		struct pending e;
		uint32_t node, path, depth;
		size_t nsites, need;
		double *f;

		e = heap_pop(x);
		node = e.parent == NONE ? e.target : ps->edges[e.target].callee;
		nsites = x->site_start[node + 1] - x->site_start[node];
		depth = e.parent == NONE ? 0 : x->paths[e.parent].depth + 1;
		/* the path's shares, and its samples' values and locations */
		need = (size_t)nev + nsites * ((size_t)nev + depth + 1);
		if (x->nr_paths >= CALLGRIND_MAX_PATHS || cells + need > CALLGRIND_MAX_CELLS) {
			x->cut_paths += 1 + x->nr_heap;
			break;
		}
		path = add_path(x, e.parent, node,
				e.parent == NONE ? NONE : ps->edges[e.target].site, depth);
		f = x->f + (size_t)path * (size_t)nev;
		for (int k = 0; k < nev; k++) {
			if (e.parent == NONE) {
				f[k] = 1;
			} else {
				double d = ps->nodes[node].denom[k];
				double c = (double)edge_cost(x, e.target)[k];

				f[k] = d > 0 ? x->f[(size_t)e.parent * (size_t)nev + (size_t)k] * c / d : 0;
			}
			x->w[(size_t)node * (size_t)nev + (size_t)k] += f[k];
		}
		cells += need;

		for (size_t j = x->out_start[node]; j < x->out_start[node + 1]; j++) {
			uint32_t ed = x->out[j], callee = ps->edges[ed].callee;
			const int64_t *c = edge_cost(x, ed);
			double prio = 0;

			steps += 1 + depth;
			if (steps > MAX_STEPS) {
				x->cut_paths++;
				continue;
			}
			for (int k = 0; k < nev; k++)
				prio += f[k] * (double)c[k] / x->total[k];
			if (prio <= 0)
				continue;
			if (on_path(x, path, callee)) {
				x->cut_recursion++;
				continue;
			}
			if (depth + 1 >= CALLGRIND_MAX_DEPTH) {
				x->cut_depth++;
				continue;
			}
			if (x->nr_heap >= MAX_PENDING) {
				x->cut_paths++;
				continue;
			}
			heap_push(x, (struct pending){ prio, path, ed });
		}
	}

	/* functions with self cost no path reached: roots of their own */
	for (size_t i = 0; i < ps->nr_nodes; i++) {
		const int64_t *self = ps->costs + ps->nodes[i].self_off;
		double *w = x->w + i * (size_t)nev, *f;
		bool missing = false;
		uint32_t path;

		for (int k = 0; k < nev; k++)
			missing |= self[k] > 0 && w[k] <= 0;
		if (!missing)
			continue;
		x->fallback++;
		path = add_path(x, NONE, (uint32_t)i, NONE, 0);
		f = x->f + (size_t)path * (size_t)nev;
		for (int k = 0; k < nev; k++) {
			f[k] = self[k] > 0 && w[k] <= 0 ? 1 : 0;
			w[k] += f[k];
		}
	}
}

/* ---- from stacks to samples ------------------------------------------ */

static uint64_t node_function(struct cg_parser *ps, struct cg_node *n)
{
	int64_t file = n->file == ps->unknown ? 0 : n->file;

	if (!n->function_id)
		n->function_id = profile_add_function_idx(ps->p, n->fn, n->fn, file, n->start_line);
	return n->function_id;
}

static uint64_t site_location(struct cg_parser *ps, uint32_t si)
{
	struct cg_site *s = &ps->sites[si];
	struct cg_node *n = &ps->nodes[s->node];
	struct pf_line lines[2];
	size_t nline = 0;

	if (s->location_id)
		return s->location_id;
	if (!n->mapping_id) {
		struct pf_mapping m = {
			.filename = n->ob == ps->unknown ? 0 : n->ob,
			.has_functions = true,
			.has_filenames = true,
			.has_line_numbers = ps->npos > 1 || ps->pos[0] == POS_LINE,
			.has_inline_frames = ps->any_inlined,
		};
		n->mapping_id = profile_add_mapping_idx(ps->p, &m);
	}
	if (s->file != n->file) {
		int64_t file = s->file == ps->unknown ? 0 : s->file;

		lines[nline++] = (struct pf_line){
			.function_id = profile_add_function_idx(ps->p, n->fn, n->fn, file, 0),
			.line = s->line,
		};
		lines[nline++] = (struct pf_line){ .function_id = node_function(ps, n) };
	} else {
		lines[nline++] = (struct pf_line){ .function_id = node_function(ps, n),
						   .line = s->line };
	}
	s->location_id = profile_add_location(ps->p, n->mapping_id, s->addr, lines, nline);
	return s->location_id;
}

struct share {
	double frac;
	uint32_t i;
};

static int cmp_share(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->frac != y->frac)
		return x->frac > y->frac ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * Split 'self' over n paths in proportion to f[i] / w (which sum to one):
 * floors first, then the remainder one by one to the largest fractions,
 * so the parts add up to 'self' exactly.
 */
static void split_exact(int64_t self, const double *f, size_t stride, double w, size_t n,
			int64_t *out, size_t out_stride, struct share *sh)
{
	__int128 sum = 0, rest;
	size_t j;

	for (size_t i = 0; i < n; i++) {
		double x = (double)self * (f[i * stride] / w);
		int64_t v;

		if (!(x > 0))
			x = 0;
		v = x >= (double)self ? self : (int64_t)x;
		out[i * out_stride] = v;
		sh[i] = (struct share){ x - (double)v, (uint32_t)i };
		sum += v;
	}
	qsort(sh, n, sizeof(*sh), cmp_share);
	rest = (__int128)self - sum;
	for (j = 0; rest > 0; j++, rest--)
		out[sh[j % n].i * out_stride]++;
	for (j = n; rest < 0; ) {
		j = j ? j - 1 : n - 1;
		if (out[sh[j].i * out_stride] > 0) {
			out[sh[j].i * out_stride]--;
			rest++;
		}
	}
}

static void emit_samples(struct expansion *x)
{
	struct cg_parser *ps = x->ps;
	int nev = x->nev;
	size_t nn = ps->nr_nodes, *pstart, *fill, maxp = 0;
	uint32_t *plist;
	double *fbuf;
	int64_t *vals;
	struct share *sh;
	uint64_t *locs;

	/* paths grouped by node */
	pstart = xcalloc(nn + 1, sizeof(*pstart));
	for (size_t i = 0; i < x->nr_paths; i++)
		pstart[x->paths[i].node + 1]++;
	for (size_t i = 0; i < nn; i++) {
		if (pstart[i + 1] > maxp)
			maxp = pstart[i + 1];
		pstart[i + 1] += pstart[i];
	}
	plist = xcalloc(x->nr_paths + 1, sizeof(*plist));
	fill = xcalloc(nn + 1, sizeof(*fill));
	for (size_t i = 0; i < x->nr_paths; i++) {
		uint32_t n = x->paths[i].node;
		plist[pstart[n] + fill[n]++] = (uint32_t)i;
	}
	fbuf = xcalloc(maxp + 1, sizeof(*fbuf));
	vals = xcalloc((maxp + 1) * (size_t)nev, sizeof(*vals));
	sh = xcalloc(maxp + 1, sizeof(*sh));
	locs = xcalloc(CALLGRIND_MAX_DEPTH + 2, sizeof(*locs));

	for (size_t n = 0; n < nn; n++) {
		size_t np = pstart[n + 1] - pstart[n];
		const double *w = x->w + n * (size_t)nev;

		if (!np)
			continue;
		for (size_t j = x->site_start[n]; j < x->site_start[n + 1]; j++) {
			uint32_t site = x->site_list[j];
			const int64_t *self = ps->costs + ps->sites[site].cost_off;

			for (int k = 0; k < nev; k++) {
				for (size_t i = 0; i < np; i++) {
					uint32_t path = plist[pstart[n] + i];
					fbuf[i] = x->f[(size_t)path * (size_t)nev + (size_t)k];
				}
				if (self[k] > 0 && w[k] > 0)
					split_exact(self[k], fbuf, 1, w[k], np, vals + k,
						    (size_t)nev, sh);
				else
					for (size_t i = 0; i < np; i++)
						vals[i * (size_t)nev + (size_t)k] = 0;
			}
			for (size_t i = 0; i < np; i++) {
				const int64_t *v = vals + i * (size_t)nev;
				uint32_t path = plist[pstart[n] + i];
				size_t nloc = 0;
				bool any = false;

				for (int k = 0; k < nev; k++)
					any |= v[k] != 0;
				if (!any)
					continue;
				locs[nloc++] = site_location(ps, site);
				for (uint32_t q = path; q != NONE && x->paths[q].parent != NONE;
				     q = x->paths[q].parent)
					locs[nloc++] = site_location(ps, x->paths[q].callsite);
				profile_add_sample(ps->p, locs, nloc, v, NULL, 0);
			}
		}
	}
	free(locs);
	free(sh);
	free(vals);
	free(fbuf);
	free(fill);
	free(plist);
	free(pstart);
}

static const char rebuilt_comment[] =
	"callgrind: stacks rebuilt from call edges; self cost is exact, a function's "
	"cost over its callers is split in proportion to each call's inclusive cost";

bool callgrind_rebuilt(const struct profile *p)
{
	for (size_t i = 0; i < p->nr_comments; i++)
		if (!strcmp(profile_string(p, p->comments[i]), rebuilt_comment))
			return true;
	return false;
}

static void add_cut_comments(struct expansion *x)
{
	struct profile *p = x->ps->p;
	char *c;

	profile_add_comment(p, rebuilt_comment);
	if (x->cut_recursion) {
		c = xstrfmt("callgrind: recursion cut at %zu call%s (a function already on the stack)",
			    x->cut_recursion, x->cut_recursion > 1 ? "s" : "");
		profile_add_comment(p, c);
		free(c);
	}
	if (x->cut_depth) {
		c = xstrfmt("callgrind: %zu call path%s cut at depth %d", x->cut_depth,
			    x->cut_depth > 1 ? "s" : "", CALLGRIND_MAX_DEPTH);
		profile_add_comment(p, c);
		free(c);
	}
	if (x->cut_paths) {
		c = xstrfmt("callgrind: %zu lightest call path%s left out past the limit of "
			    "%zu paths; their cost went to the functions' other stacks",
			    x->cut_paths, x->cut_paths > 1 ? "s" : "", CALLGRIND_MAX_PATHS);
		profile_add_comment(p, c);
		free(c);
	}
	if (x->fallback) {
		c = xstrfmt("callgrind: %zu function%s not reached from a root shown as root%s",
			    x->fallback, x->fallback > 1 ? "s" : "", x->fallback > 1 ? "s" : "");
		profile_add_comment(p, c);
		free(c);
	}
}

static void build_profile(struct cg_parser *ps)
{
	struct expansion x = { .ps = ps, .nev = ps->nev };
	int nev = ps->nev, dflt = 0;
	double *incl;

	/* the parser's indexes are done with: free them before the stacks grow */
	km_release(&ps->names);
	km_release(&ps->node_map);
	km_release(&ps->site_map);
	km_release(&ps->edge_map);
	for (int k = 0; k < nev; k++) {
		const char *name = profile_string(ps->p, ps->ev_name[k]);

		profile_add_sample_type(ps->p, name, "count");
		if (!strcmp(name, "Ir"))
			dflt = k;
	}
	ps->p->default_sample_type = ps->ev_name[dflt];

	x.total = xcalloc((size_t)nev, sizeof(*x.total));
	x.w = xcalloc((ps->nr_nodes + 1) * (size_t)nev, sizeof(*x.w));
	incl = xcalloc((ps->nr_nodes + 1) * (size_t)nev, sizeof(*incl));
	build_csr(&x);
	sum_costs(&x, incl);
	expand(&x, incl);
	emit_samples(&x);
	add_cut_comments(&x);

	for (size_t i = 0; i < ps->nr_nodes; i++)
		free(ps->nodes[i].denom);
	free(incl);
	free(x.total);
	free(x.w);
	free(x.f);
	free(x.paths);
	free(x.heap);
	free(x.out_start);
	free(x.out);
	free(x.site_start);
	free(x.site_list);
}

int callgrind_parse(struct profile *p, const char *buf, size_t len, const char *what)
{
	struct cg_parser ps = {
		.p = p, .in = { .what = what }, .npos = 1, .pos = { POS_LINE, POS_INSTR },
		.node = NONE, .callee = NONE,
	};
	int ret = -1;

	ps.unknown = profile_str(p, "???");
	ps.ob = ps.file = ps.unknown;
	if (parse_all(&ps, buf, len))
		goto out;
	build_profile(&ps);
	ret = profile_validate(p);
out:
	km_release(&ps.names);
	km_release(&ps.node_map);
	km_release(&ps.site_map);
	km_release(&ps.edge_map);
	free(ps.nodes);
	free(ps.sites);
	free(ps.edges);
	free(ps.costs);
	if (ret)
		profile_clear(p);
	return ret;
}

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t pn = strlen(prefix);

	return n >= pn && !memcmp(s, prefix, pn);
}

/* A body line: a known "key=" or a cost line. */
static bool looks_like_body(const char *s, size_t n)
{
	size_t vlen;

	return body_key_of(s, n, &vlen) || s[0] == '+' || s[0] == '-' || s[0] == '*' ||
	       (s[0] >= '0' && s[0] <= '9');
}

bool callgrind_sniff(const void *data, size_t len)
{
	static const char *const headers[] = {
		"version:", "creator:", "events:", "positions:", "cmd:", "pid:", "part:",
		"desc:", "thread:",
	};
	const char *buf = data, *s;
	size_t pos = 0, n;
	bool header = false, in_header = true;

	if (len > 65536)
		len = 65536;
	if (starts_with(buf, len, "# callgrind format"))
		return true;
	while (next_line(buf, len, &pos, &s, &n)) {
		trim(&s, &n);
		if (!n || s[0] == '#')
			continue;
		if (in_header) {
			bool known = false;

			for (size_t i = 0; i < ARRAY_SIZE(headers); i++)
				known |= starts_with(s, n, headers[i]);
			if (known) {
				header = true;
				continue;
			}
			if (!header || !looks_like_body(s, n))
				return false;
			in_header = false;
		}
		if (starts_with(s, n, "fn="))
			return true;
	}
	return false;
}
