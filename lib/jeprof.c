/*
 * jeprof.c: the jemalloc heap profile reader (jeprof.h has the mapping).
 * The parser collects the stacks (addresses and counts) and the executable
 * mappings; then each distinct (address, return or not) is symbolized once,
 * in sorted order, and the stacks become samples.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "lines.h"
#include "profile.h"
#include "symbolize.h"
#include "heap-profile.h"
#include "jeprof.h"

#define MAX_INLINE 64

struct je_stack {
	size_t addr_off, naddr;
	uint64_t cur_objs, cur_bytes, acc_objs, acc_bytes;
	bool counted;		/* its t*: line was seen */
};

struct je_map {
	uint64_t start, end, offset;
	const char *path;	/* into the input, path_len bytes */
	size_t path_len;
	uint64_t id;		/* profile mapping id */
	struct sym_dso *dso;
	bool opened, allocator;
};

/* A distinct address to symbolize: the key, then the location made for it. */
struct je_addr {
	uint64_t addr;
	bool ret;		/* a return address: looked up one byte back */
	uint64_t loc;
	bool allocator;		/* in the allocator's mapping */
	const char *fn;		/* the outermost function there, for op */
	struct je_map *map;
	const char *callee;	/* what the call before a return address called; NULL: unknown */
	bool callee_known;
};

struct je_reader {
	struct input_pos pos;
	uint64_t rate;
	struct je_stack *stacks;
	size_t nr_stacks, alloc_stacks;
	uint64_t *addrs;
	size_t nr_addrs, alloc_addrs;
	struct je_map *maps;
	size_t nr_maps, alloc_maps;
	struct je_addr *uniq;
	size_t nr_uniq;
	struct symbolizer *sym;	/* what it hands out lives until the reader is done */
};

bool jeprof_sniff(const void *buf, size_t len)
{
	return len >= 8 && !memcmp(buf, "heap_v2/", 8);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void skip_spaces(const char **s, const char *end)
{
	while (*s < end && is_space(**s))
		(*s)++;
}

static int dec(struct je_reader *r, const char **s, const char *end, uint64_t *out)
{
	uint64_t v = 0;

	skip_spaces(s, end);
	if (*s >= end || !is_digit(**s))
		return line_error(&r->pos, "expected a number");
	for (; *s < end && is_digit(**s); (*s)++) {
		if (v > (UINT64_MAX - 9) / 10)
			return line_error(&r->pos, "number out of range");
		v = v * 10 + (uint64_t)(**s - '0');
	}
	*out = v;
	return 0;
}

/* Hexadecimal, with or without 0x. */
static int hex(struct je_reader *r, const char **s, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int d;

	skip_spaces(s, end);
	if (end - *s > 2 && (*s)[0] == '0' && ((*s)[1] | 0x20) == 'x')
		*s += 2;
	if (*s >= end || hexval(**s) < 0)
		return line_error(&r->pos, "expected a hexadecimal number");
	for (; *s < end && (d = hexval(**s)) >= 0; (*s)++) {
		if (v >> 60)
			return line_error(&r->pos, "address out of range");
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

static int expect(struct je_reader *r, const char **s, const char *end, char c)
{
	skip_spaces(s, end);
	if (*s >= end || **s != c)
		return line_error(&r->pos, "expected '%c'", c);
	(*s)++;
	return 0;
}

/* "t*: C: B [AC: AB]" after the "t*:" */
static int counts(struct je_reader *r, const char *s, const char *end, struct je_stack *st)
{
	if (dec(r, &s, end, &st->cur_objs) || expect(r, &s, end, ':') ||
	    dec(r, &s, end, &st->cur_bytes) || expect(r, &s, end, '[') ||
	    dec(r, &s, end, &st->acc_objs) || expect(r, &s, end, ':') ||
	    dec(r, &s, end, &st->acc_bytes) || expect(r, &s, end, ']'))
		return -1;
	skip_spaces(&s, end);
	if (s < end)
		return line_error(&r->pos, "junk after the counts");
	if (st->cur_bytes > INT64_MAX / 4 || st->acc_bytes > INT64_MAX / 4 ||
	    st->cur_objs > INT64_MAX / 4 || st->acc_objs > INT64_MAX / 4)
		return line_error(&r->pos, "count out of range");
	st->counted = true;
	return 0;
}

static int stack_line(struct je_reader *r, const char *s, const char *end)
{
	struct je_stack *st;

	ALLOC_GROW(r->stacks, r->nr_stacks + 1, r->alloc_stacks);
	st = &r->stacks[r->nr_stacks++];
	memset(st, 0, sizeof(*st));
	st->addr_off = r->nr_addrs;
	for (;;) {
		uint64_t a;

		skip_spaces(&s, end);
		if (s >= end)
			break;
		if (st->naddr == JEPROF_MAX_DEPTH)
			return line_error(&r->pos, "a stack of more than %d addresses", JEPROF_MAX_DEPTH);
		if (r->nr_addrs == JEPROF_MAX_ADDRS)
			return line_error(&r->pos, "more than %zu addresses in all", JEPROF_MAX_ADDRS);
		if (hex(r, &s, end, &a))
			return -1;
		if (s < end && !is_space(*s))
			return line_error(&r->pos, "junk after an address");
		ALLOC_GROW(r->addrs, r->nr_addrs + 1, r->alloc_addrs);
		r->addrs[r->nr_addrs++] = a;
		st->naddr++;
	}
	return 0;
}

/* "START-END PERMS OFFSET DEV INODE PATH": executable mappings of files only. */
static int map_line(struct je_reader *r, const char *s, const char *end)
{
	struct je_map m = { 0 };
	const char *perms;
	uint64_t skip;

	if (hex(r, &s, end, &m.start) || expect(r, &s, end, '-') || hex(r, &s, end, &m.end))
		return -1;
	skip_spaces(&s, end);
	perms = s;
	while (s < end && !is_space(*s))
		s++;
	if (s - perms != 4)
		return line_error(&r->pos, "bad permissions in a mapping");
	if (hex(r, &s, end, &m.offset))
		return -1;
	/* the device (MAJ:MIN) and the inode */
	skip_spaces(&s, end);
	while (s < end && !is_space(*s))
		s++;
	if (dec(r, &s, end, &skip))
		return -1;
	skip_spaces(&s, end);
	if (m.end <= m.start)
		return line_error(&r->pos, "a mapping that ends before it starts");
	if (perms[2] != 'x' || s >= end || *s != '/')
		return 0;
	if (r->nr_maps == JEPROF_MAX_MAPS)
		return line_error(&r->pos, "more than %d mappings", JEPROF_MAX_MAPS);
	m.path = s;
	m.path_len = (size_t)(end - s);
	ALLOC_GROW(r->maps, r->nr_maps + 1, r->alloc_maps);
	r->maps[r->nr_maps++] = m;
	return 0;
}

static int parse(struct je_reader *r, const char *buf, size_t len)
{
	const char *line, *s, *end;
	size_t pos = 0, n;
	bool in_maps = false, have_total = false;

	if (!next_line(buf, len, &pos, &line, &n) || n < 9 || memcmp(line, "heap_v2/", 8))
		return error("cannot read '%s': not a jemalloc heap profile (no heap_v2/ line)", r->pos.what);
	r->pos.lineno = 1;
	s = line + 8;
	end = line + n;
	if (dec(r, &s, end, &r->rate))
		return -1;
	skip_spaces(&s, end);
	if (s < end)
		return line_error(&r->pos, "junk after the sample rate");
	while (next_line(buf, len, &pos, &line, &n)) {
		r->pos.lineno++;
		s = line;
		end = line + n;
		if (memchr(line, '\0', n))
			return line_error(&r->pos, "a NUL byte");
		trim(&s, &n);
		end = s + n;
		if (!n)
			continue;
		if (in_maps) {
			if (map_line(r, s, end))
				return -1;
		} else if (n == 17 && !memcmp(s, "MAPPED_LIBRARIES:", 17)) {
			in_maps = true;
		} else if (*s == '@') {
			if (stack_line(r, s + 1, end))
				return -1;
		} else if (n >= 3 && !memcmp(s, "t*:", 3)) {
			struct je_stack total;

			if (r->nr_stacks && r->stacks[r->nr_stacks - 1].counted)
				return line_error(&r->pos, "a second t*: line for one stack");
			if (!r->nr_stacks) {
				/* the profile's totals, before the first stack */
				if (have_total)
					return line_error(&r->pos, "a second total");
				have_total = true;
				if (counts(r, s + 3, end, &total))
					return -1;
			} else if (counts(r, s + 3, end, &r->stacks[r->nr_stacks - 1])) {
				return -1;
			}
		} else if (*s == 't' && n > 1 && is_digit(s[1])) {
			continue;	/* a thread's share: t*: has the sum */
		} else {
			return line_error(&r->pos, "not a line of a jemalloc heap profile");
		}
	}
	return 0;
}

static int cmp_uniq(const void *a, const void *b)
{
	const struct je_addr *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->ret - (int)y->ret;
}

static struct je_map *map_of(struct je_reader *r, uint64_t addr)
{
	for (size_t i = 0; i < r->nr_maps; i++)
		if (addr >= r->maps[i].start && addr < r->maps[i].end)
			return &r->maps[i];
	return NULL;
}

static void symbolize(struct profile *p, struct je_reader *r)
{
	struct symbolizer *sym = r->sym = symbolizer_new();
	struct sym_frame sf[MAX_INLINE];
	struct pf_line lines[MAX_INLINE];
	struct strbuf path = STRBUF_INIT;

	for (size_t i = 0; i < r->nr_uniq; i++) {
		struct je_addr *u = &r->uniq[i];
		struct je_map *m = map_of(r, u->addr);
		int got = 0;

		if (m && !m->opened) {
			strbuf_reset(&path);
			strbuf_add(&path, m->path, m->path_len);
			m->opened = true;
			m->dso = symbolizer_dso(sym, path.buf, NULL);
			m->id = profile_add_mapping(p, m->start, m->end, m->offset, path.buf, NULL);
			m->allocator = strstr(path.buf, "/libjemalloc") != NULL;
		}
		if (m && m->dso)
			got = sym_lookup(m->dso, u->addr - m->start + m->offset - u->ret, sf, MAX_INLINE);
		for (int k = 0; k < got; k++) {
			lines[k].function_id = profile_add_function(p, sf[k].name, sf[k].system_name,
								    sf[k].file, sf[k].start_line);
			lines[k].line = sf[k].line;
			lines[k].column = 0;
		}
		u->allocator = m && m->allocator;
		u->map = m;
		u->fn = got ? profile_string(p, profile_function(p, lines[got - 1].function_id)->name) : NULL;
		u->loc = profile_add_location(p, m ? m->id : 0, u->addr, lines, got > 0 ? (size_t)got : 0);
	}
	strbuf_release(&path);
}

/*
 * What the program's call before return address u->addr called (its PLT
 * stub, "realloc@plt"): the allocator's own symbols may be stripped.
 */
static const char *callee_of(struct je_addr *u)
{
	struct je_map *m = u->map;

	if (!u->callee_known && m && m->dso && u->addr >= m->start)
		u->callee = sym_callee(m->dso, u->addr - m->start + m->offset);
	u->callee_known = true;
	return u->callee;
}

static const struct je_addr *find_uniq(const struct je_reader *r, uint64_t addr, bool ret)
{
	struct je_addr key = { .addr = addr, .ret = ret };

	return bsearch(&key, r->uniq, r->nr_uniq, sizeof(*r->uniq), cmp_uniq);
}

/* What a call into the allocator named 'fn' was: malloc, calloc, realloc, memalign. */
static const char *op_of(const char *fn)
{
	if (!fn)
		return "malloc";
	/* a __libc_ or je_ prefix, an @plt suffix: the name is what counts */
	if (strstr(fn, "posix_memalign") || strstr(fn, "aligned_alloc"))
		return "memalign";
	if (strstr(fn, "realloc"))
		return "realloc";
	if (strstr(fn, "calloc"))
		return "calloc";
	if (strstr(fn, "memalign") || strstr(fn, "aligned_alloc") || strstr(fn, "valloc"))
		return "memalign";
	return "malloc";
}

/* jemalloc's (jeprof's) unsampling of one stack's objects and bytes. */
static void unsample(uint64_t rate, uint64_t objs, uint64_t bytes, int64_t *o, int64_t *b)
{
	double scale = 1;

	if (rate > 1 && objs) {
		double ratio = (double)bytes / (double)objs / (double)rate;

		scale = 1 / (1 - exp(-ratio));
	}
	*o = (int64_t)fmin(llround((double)objs * scale), (double)INT64_MAX / 4);
	*b = (int64_t)fmin(llround((double)bytes * scale), (double)INT64_MAX / 4);
}

static bool is_final_dump(const char *what)
{
	size_t n = strlen(what);

	return n >= 7 && !strcmp(what + n - 7, ".f.heap");
}

static void build(struct profile *p, struct je_reader *r, const char *what)
{
	uint64_t *locs = xcalloc(JEPROF_MAX_DEPTH, sizeof(*locs));
	int64_t op_key = profile_str(p, HEAP_LABEL_OP);
	bool final = is_final_dump(what), accum = false;
	size_t n;
	char *c;

	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
		profile_add_sample_type(p, heap_sample_types[t][0], heap_sample_types[t][1]);
	p->period_type.type = profile_str(p, "space");
	p->period_type.unit = profile_str(p, "bytes");
	p->period = r->rate > INT64_MAX ? INT64_MAX : (int64_t)(r->rate ? r->rate : 1);
	c = xstrfmt("jemalloc: rate=%" PRIu64, r->rate);
	profile_add_comment(p, c);
	free(c);

	/* every distinct address once, the first of a stack as it is, the others a byte back */
	r->uniq = xcalloc(r->nr_addrs + 1, sizeof(*r->uniq));
	for (size_t i = 0; i < r->nr_stacks; i++)
		for (size_t k = 0; k < r->stacks[i].naddr; k++)
			r->uniq[r->nr_uniq++] = (struct je_addr){
				.addr = r->addrs[r->stacks[i].addr_off + k],
				.ret = k > 0 && r->addrs[r->stacks[i].addr_off + k] > 0,
			};
	if (r->nr_uniq)
		qsort(r->uniq, r->nr_uniq, sizeof(*r->uniq), cmp_uniq);
	n = 0;
	for (size_t i = 0; i < r->nr_uniq; i++)
		if (!n || cmp_uniq(&r->uniq[n - 1], &r->uniq[i]))
			r->uniq[n++] = r->uniq[i];
	r->nr_uniq = n;
	symbolize(p, r);

	for (size_t i = 0; i < r->nr_stacks; i++) {
		const struct je_stack *st = &r->stacks[i];
		int64_t v[HEAP_NR_SAMPLE_TYPES] = { 0 };
		const char *entry = NULL;
		struct pf_label label;
		size_t nloc = 0, k = 0;

		if (!st->counted || (!st->cur_objs && !st->acc_objs))
			continue;
		/* the allocator's own frames go; the outermost names the call */
		for (; k < st->naddr; k++) {
			const struct je_addr *u = find_uniq(r, r->addrs[st->addr_off + k],
							    k > 0 && r->addrs[st->addr_off + k] > 0);

			if (!u->allocator)
				break;
			entry = u->fn ? u->fn : entry;
		}
		if (k == st->naddr) {
			k = 0;	/* nothing but the allocator: keep it all */
		} else if (k > 0) {
			/* the program's call into the allocator says best what it called */
			struct je_addr *u = (struct je_addr *)find_uniq(r, r->addrs[st->addr_off + k], true);
			const char *callee = u ? callee_of(u) : NULL;

			if (callee)
				entry = callee;
		}
		for (; k < st->naddr; k++)
			locs[nloc++] = find_uniq(r, r->addrs[st->addr_off + k],
						 k > 0 && r->addrs[st->addr_off + k] > 0)->loc;
		unsample(r->rate, st->cur_objs, st->cur_bytes, &v[HEAP_INUSE_OBJECTS], &v[HEAP_INUSE_SPACE]);
		unsample(r->rate, st->acc_objs, st->acc_bytes, &v[HEAP_ALLOC_OBJECTS], &v[HEAP_ALLOC_SPACE]);
		if (final) {
			v[HEAP_LEAK_OBJECTS] = v[HEAP_INUSE_OBJECTS];
			v[HEAP_LEAK_SPACE] = v[HEAP_INUSE_SPACE];
		}
		accum |= st->acc_objs > 0;
		label = (struct pf_label){ op_key, profile_str(p, op_of(entry)), 0, 0 };
		profile_add_sample(p, locs, nloc, v, &label, 1);
	}
	p->default_sample_type = profile_str(p, heap_sample_types[accum ? HEAP_ALLOC_SPACE : HEAP_INUSE_SPACE][0]);
	profile_mark_symbolized(p);
	free(locs);
}

int jeprof_parse(struct profile *p, const char *buf, size_t len, const char *what)
{
	struct je_reader r = { .pos = { what, 0 } };
	int ret = parse(&r, buf, len);

	if (!ret) {
		build(p, &r, what);
		ret = profile_validate(p);
	}
	free(r.stacks);
	free(r.addrs);
	free(r.maps);
	free(r.uniq);
	if (r.sym)
		symbolizer_free(r.sym);
	if (ret)
		profile_clear(p);
	return ret;
}
