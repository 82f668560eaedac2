/*
 * heaptrack.c: the heaptrack data file reader (heaptrack.h has the mapping).
 * One pass reads the tables (strings, instruction pointers, traces,
 * allocation infos) and replays the "+"/"-" events for the totals, the
 * temporaries, the leak and what was live at the peak (kept lazily: an
 * allocation info notes its count at the latest peak when it next changes).
 * Then each allocation info becomes a sample.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "lines.h"
#include "symbolize.h"
#include "profile.h"
#include "heap-profile.h"
#include "heaptrack.h"

#define NONE UINT32_MAX

static bool is_hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned hex_digit_value(char c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* n * size, at most INT64_MAX. */
static int64_t sat_mul(uint64_t n, int64_t size)
{
	if (size && n > (uint64_t)INT64_MAX / (uint64_t)size)
		return INT64_MAX;
	return (int64_t)(n * (uint64_t)size);
}

struct ht_str {
	size_t off, len;
};

struct ht_frame {
	uint32_t fn, file;	/* string indexes from 1; 0: none */
	int64_t line;
};

struct ht_ip {
	uint64_t ip;
	uint32_t module;
	uint32_t frame_off, nframe;
	uint64_t loc_id;	/* 0: not made yet */
};

struct ht_trace {
	uint32_t ip, parent;	/* parent: a trace index from 1, 0 for the root */
};

struct ht_alloc {
	uint64_t size;
	uint32_t trace;
	uint64_t allocs, reallocs, temp, live, peak_live;
	uint64_t stamp;		/* the peak peak_live is of */
};

/* A module as found on this machine: where heaptrack saw it loaded. */
struct ht_module {
	bool looked;		/* tried to find its load address */
	struct sym_dso *dso;	/* NULL: its file's addresses are not known */
	uint64_t start, limit, offset;	/* its executable segment, as mapped */
	uint64_t map_id;
};

struct ht_reader {
	const char *buf;
	size_t len, pos;
	struct input_pos ip_pos;
	unsigned version;
	struct ht_str *strs;
	size_t nr_strs, alloc_strs;
	struct ht_frame *frames;
	size_t nr_frames, alloc_frames;
	struct ht_ip *ips;
	size_t nr_ips, alloc_ips;
	struct ht_trace *traces;
	size_t nr_traces, alloc_traces;
	struct ht_alloc *allocs;
	size_t nr_allocs, alloc_allocs;
	const char *command;
	size_t command_len;
	uint64_t live_bytes, peak_bytes, last_ms;
	uint64_t peaks;		/* new highs of live_bytes so far */
	uint64_t page_size;	/* from the "I" line; 4096 without one */
	size_t biases_tried;	/* by find_module(), in all */
	struct ht_module *modules;	/* by module string index */
	struct symbolizer *sym;
	size_t skipped;
	char skipped_kind;
};

bool heaptrack_sniff(const void *buf, size_t len)
{
	const char *s = buf, *nl;
	size_t i = 2, n;
	int fields = 0;

	if (len < 6 || memcmp(s, "v ", 2))
		return false;
	nl = memchr(s, '\n', len);
	if (!nl)
		return false;
	n = (size_t)(nl - s);
	while (i < n) {
		size_t start = i;

		while (i < n && is_hex_digit(s[i]))
			i++;
		if (i == start || fields == 2)
			return false;
		fields++;
		if (i < n && s[i++] != ' ')
			return false;
	}
	if (fields != 2 || len - n - 1 < 2)
		return false;
	return (nl[1] == 'X' || nl[1] == 'I' || nl[1] == 's') && nl[2] == ' ';
}

/* A hex number at *s (up to end), *s moved past it and one space after. */
static int hex_field(struct ht_reader *r, const char **s, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = *s;

	if (p >= end || !is_hex_digit(*p))
		return line_error(&r->ip_pos, "expected a hexadecimal number");
	while (p < end && is_hex_digit(*p)) {
		if (v >> 60)
			return line_error(&r->ip_pos, "number out of range");
		v = v << 4 | (uint64_t)hex_digit_value(*p);
		p++;
	}
	if (p < end && *p != ' ')
		return line_error(&r->ip_pos, "expected a space after a number");
	if (p < end)
		p++;
	*s = p;
	*out = v;
	return 0;
}

/* An index from 1 into a table of 'nr' (0 allowed when 'zero_ok'). */
static int index_field(struct ht_reader *r, const char **s, const char *end, size_t nr,
		       bool zero_ok, const char *what, uint32_t *out)
{
	uint64_t v;

	if (hex_field(r, s, end, &v))
		return -1;
	if ((!v && !zero_ok) || v > nr)
		return line_error(&r->ip_pos, "%s index %" PRIu64 " is not defined", what, v);
	*out = (uint32_t)v;
	return 0;
}

static int read_string(struct ht_reader *r, const char *s, const char *end)
{
	struct ht_str *st;

	if (r->nr_strs >= UINT32_MAX - 1)
		return line_error(&r->ip_pos, "too many strings");
	ALLOC_GROW(r->strs, r->nr_strs + 1, r->alloc_strs);
	st = &r->strs[r->nr_strs];
	if (r->version >= 3) {
		uint64_t n;

		/* "s LEN STRING": the string may hold anything, newlines too */
		if (hex_field(r, &s, end, &n))
			return -1;
		if (n > (uint64_t)(r->buf + r->len - s))
			return line_error(&r->ip_pos, "the string runs past the end of the file");
		st->off = (size_t)(s - r->buf);
		st->len = (size_t)n;
		s += n;
		if (s < r->buf + r->len && *s != '\n')
			return line_error(&r->ip_pos, "junk after a string of %" PRIu64 " bytes", n);
		for (const char *c = r->buf + st->off; c < s; c++)
			if (*c == '\n')
				r->ip_pos.lineno++;
		r->pos = (size_t)(s - r->buf) + (s < r->buf + r->len);
	} else {
		st->off = (size_t)(s - r->buf);
		st->len = (size_t)(end - s);
	}
	r->nr_strs++;
	return 0;
}

static int read_ip(struct ht_reader *r, const char *s, const char *end)
{
	struct ht_ip ip = { 0 };
	uint64_t v;

	if (r->nr_ips >= UINT32_MAX - 1)
		return line_error(&r->ip_pos, "too many instruction pointers");
	if (hex_field(r, &s, end, &ip.ip) ||
	    index_field(r, &s, end, r->nr_strs, true, "module string", &ip.module))
		return -1;
	ip.frame_off = (uint32_t)r->nr_frames;
	while (s < end) {
		struct ht_frame f;

		if (ip.nframe == HEAPTRACK_MAX_FRAMES)
			return line_error(&r->ip_pos, "more than %d frames at one address",
					  HEAPTRACK_MAX_FRAMES);
		if (index_field(r, &s, end, r->nr_strs, true, "function string", &f.fn))
			return -1;
		f.file = 0;
		f.line = 0;
		if (s < end) {
			if (index_field(r, &s, end, r->nr_strs, true, "file string", &f.file) ||
			    hex_field(r, &s, end, &v))
				return -1;
			if (v > INT32_MAX)
				return line_error(&r->ip_pos, "line number out of range");
			f.line = (int64_t)v;
		}
		if (r->nr_frames >= UINT32_MAX - HEAPTRACK_MAX_FRAMES)
			return line_error(&r->ip_pos, "too many frames");
		ALLOC_GROW(r->frames, r->nr_frames + 1, r->alloc_frames);
		r->frames[r->nr_frames++] = f;
		ip.nframe++;
	}
	ALLOC_GROW(r->ips, r->nr_ips + 1, r->alloc_ips);
	r->ips[r->nr_ips++] = ip;
	return 0;
}

static int read_trace(struct ht_reader *r, const char *s, const char *end)
{
	struct ht_trace t;

	if (r->nr_traces >= UINT32_MAX - 1)
		return line_error(&r->ip_pos, "too many traces");
	/* the parent is older: the tree has no cycles */
	if (index_field(r, &s, end, r->nr_ips, false, "instruction pointer", &t.ip) ||
	    index_field(r, &s, end, r->nr_traces, true, "parent trace", &t.parent))
		return -1;
	if (s < end)
		return line_error(&r->ip_pos, "junk after a trace");
	ALLOC_GROW(r->traces, r->nr_traces + 1, r->alloc_traces);
	r->traces[r->nr_traces++] = t;
	return 0;
}

static int read_alloc_info(struct ht_reader *r, const char *s, const char *end)
{
	struct ht_alloc a = { 0 };

	if (r->nr_allocs >= UINT32_MAX - 1)
		return line_error(&r->ip_pos, "too many allocation infos");
	if (hex_field(r, &s, end, &a.size) ||
	    index_field(r, &s, end, r->nr_traces, true, "trace", &a.trace))
		return -1;
	if (s < end)
		return line_error(&r->ip_pos, "junk after an allocation info");
	if (a.size > INT64_MAX / 2)
		return line_error(&r->ip_pos, "allocation size out of range");
	ALLOC_GROW(r->allocs, r->nr_allocs + 1, r->alloc_allocs);
	r->allocs[r->nr_allocs++] = a;
	return 0;
}

/* An event's allocation info index (from 0). */
static int event_index(struct ht_reader *r, const char *s, const char *end, uint32_t *out)
{
	uint64_t v;

	if (hex_field(r, &s, end, &v))
		return -1;
	if (v >= r->nr_allocs)
		return line_error(&r->ip_pos, "allocation info %" PRIu64 " is not defined", v);
	if (s < end)
		return line_error(&r->ip_pos, "junk after an allocation index");
	*out = (uint32_t)v;
	return 0;
}

/*
 * The state of the "+"/"-" replay. last_plus is heaptrack_print's: the
 * allocation info of the last "+", 0 after a "-" (so a "-" of the first
 * allocation info after a "-" counts as temporary there too).
 */
struct replay {
	uint32_t last_plus;
	uint32_t last_minus;	/* the allocation info of the last event when a "-" */
};

#define REPLAY_INIT { 0, NONE }

/* Note what a was live with at the latest peak before it changes. */
static void catch_up(struct ht_reader *r, struct ht_alloc *a)
{
	if (a->stamp < r->peaks) {
		a->peak_live = a->live;
		a->stamp = r->peaks;
	}
}

static int event(struct ht_reader *r, struct replay *rp, char kind, uint32_t i)
{
	struct ht_alloc *a = &r->allocs[i];

	if (kind == '+') {
		if (a->live == UINT64_MAX || r->live_bytes > UINT64_MAX - a->size)
			return line_error(&r->ip_pos, "too many allocations");
		catch_up(r, a);
		a->live++;
		a->allocs++;
		/* realloc is written as the free of the old block, then the new one */
		if (rp->last_minus != NONE && rp->last_minus != i &&
		    r->allocs[rp->last_minus].trace == a->trace)
			a->reallocs++;
		r->live_bytes += a->size;
		if (r->live_bytes > r->peak_bytes) {
			r->peak_bytes = r->live_bytes;
			r->peaks++;
			a->peak_live = a->live;
			a->stamp = r->peaks;
		}
		rp->last_plus = i;
		rp->last_minus = NONE;
		return 0;
	}
	/* a free of nothing live (heaptrack_interpret drops those): ignored */
	if (!a->live) {
		rp->last_plus = 0;
		rp->last_minus = NONE;
		return 0;
	}
	catch_up(r, a);
	a->live--;
	r->live_bytes -= a->size;
	if (rp->last_plus == i)
		a->temp++;
	rp->last_plus = 0;
	rp->last_minus = i;
	return 0;
}

static int read_version(struct ht_reader *r, const char *s, const char *end)
{
	uint64_t tool, file;

	if (hex_field(r, &s, end, &tool) || hex_field(r, &s, end, &file))
		return -1;
	if (file < 1 || file > 3)
		return line_error(&r->ip_pos, "heaptrack file version %" PRIu64 " is not supported "
				  "(versions 1 to 3 are: heaptrack 1.0 and later)", file);
	r->version = (unsigned)file;
	return 0;
}

static int parse_pass(struct ht_reader *r)
{
	struct replay rp = REPLAY_INIT;
	const char *line;
	size_t n;

	r->pos = 0;
	r->ip_pos.lineno = 0;
	while (next_line(r->buf, r->len, &r->pos, &line, &n)) {
		const char *end = line + n, *s = line + 2;
		uint32_t idx = 0;
		uint64_t v;
		int ret = 0;

		r->ip_pos.lineno++;
		if (memchr(line, '\0', n))
			return line_error(&r->ip_pos, "a NUL byte");
		if (!n || line[0] == '#')
			continue;
		if (n < 2 || line[1] != ' ') {
			if (!(n == 1 && line[0] == 'A'))
				return line_error(&r->ip_pos, "not a heaptrack line");
			continue;
		}
		if (!r->version && line[0] != 'v')
			return line_error(&r->ip_pos, "no version line first");
		switch (line[0]) {
		case 'v':
			if (r->version)
				return line_error(&r->ip_pos, "a second version line");
			ret = read_version(r, s, end);
			break;
		case 'X':
			r->command = s;
			r->command_len = (size_t)(end - s);
			break;
		case 's':
			/* read_string() moves past a string's end itself */
			r->pos = (size_t)(end - r->buf) + (end < r->buf + r->len);
			ret = read_string(r, s, end);
			break;
		case 'i':
			ret = read_ip(r, s, end);
			break;
		case 't':
			ret = read_trace(r, s, end);
			break;
		case 'a':
			ret = read_alloc_info(r, s, end);
			break;
		case '+':
		case '-':
			ret = event_index(r, s, end, &idx);
			if (!ret)
				ret = event(r, &rp, line[0], idx);
			break;
		case 'c':
			ret = hex_field(r, &s, end, &v);
			if (!ret)
				r->last_ms = v;
			break;
		case 'I':
			ret = hex_field(r, &s, end, &v);
			if (!ret && v >= 512 && v <= ((uint64_t)1 << 30) && !(v & (v - 1)))
				r->page_size = v;
			break;
		case 'R': case 'A':
			break;
		default:
			if (!r->skipped++)
				r->skipped_kind = line[0];
			break;
		}
		if (ret)
			return -1;
	}
	if (!r->version)
		return error("cannot read '%s': no heaptrack version line", r->ip_pos.what);
	for (size_t i = 0; i < r->nr_allocs; i++)
		catch_up(r, &r->allocs[i]);
	return 0;
}

static const char *str_dup(struct ht_reader *r, uint32_t i, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (i)
		strbuf_add(sb, r->buf + r->strs[i - 1].off, r->strs[i - 1].len);
	return sb->buf;
}

/* heaptrack_print leaves operator new out of the stacks it starts */
static bool is_operator_new(struct ht_reader *r, uint32_t ip)
{
	static const char *const names[] = {
		"operator new(unsigned long)", "operator new[](unsigned long)",
		"operator new(unsigned int)", "operator new[](unsigned int)",
	};
	const struct ht_ip *in = &r->ips[ip - 1];
	const struct ht_str *st;

	if (!in->nframe || !r->frames[in->frame_off].fn)
		return false;
	st = &r->strs[r->frames[in->frame_off].fn - 1];
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (st->len == strlen(names[i]) && !memcmp(r->buf + st->off, names[i], st->len))
			return true;
	return false;
}

/* The name heaptrack gives the function holding ip i (its outermost frame), or NULL. */
static bool outer_name(struct ht_reader *r, const struct ht_ip *ip, const char **s, size_t *n)
{
	uint32_t fn = ip->nframe ? r->frames[ip->frame_off + ip->nframe - 1].fn : 0;

	if (!fn)
		return false;
	*s = r->buf + r->strs[fn - 1].off;
	*n = r->strs[fn - 1].len;
	return true;
}

/*
 * Whether the frames hotloop's symbolizer gives share a function name with
 * heaptrack's frames of ip (heaptrack and elfutils may split an inline
 * chain differently, so any name in common counts).
 */
static bool same_function(struct ht_reader *r, const struct ht_ip *ip,
			  const struct sym_frame *sf, int got)
{
	for (uint32_t j = 0; j < ip->nframe; j++) {
		uint32_t fn = r->frames[ip->frame_off + j].fn;
		const struct ht_str *st = fn ? &r->strs[fn - 1] : NULL;

		for (int k = 0; st && k < got; k++)
			if (strlen(sf[k].name) == st->len && !memcmp(sf[k].name, r->buf + st->off, st->len))
				return true;
	}
	return false;
}

/*
 * Candidate load biases tried per module and in all (a hostile file may
 * name the same big library as thousands of modules), and named addresses
 * checked per candidate.
 */
#define MAX_BIASES 65536
#define MAX_ALL_BIASES ((size_t)1 << 20)
#define CHECK_IPS 4

/*
 * Where module m was loaded, found from its file on this machine: the
 * files carry no load addresses, but a bias is page-aligned and must put
 * every address of the module inside its executable segment and give the
 * functions heaptrack named there the same names here. The first such
 * bias is taken; none (the file is gone, changed or stripped, or heaptrack
 * named nothing in it) leaves the module's addresses as they are.
 */
static void find_module(struct ht_reader *r, uint32_t m, struct strbuf *path)
{
	struct ht_module *mod = &r->modules[m];
	uint64_t lo = UINT64_MAX, hi = 0, vaddr, off, size, first, last, page = r->page_size;
	const struct ht_ip *named[CHECK_IPS];
	size_t nnamed = 0, tries = 0;
	struct sym_dso *d;

	mod->looked = true;
	str_dup(r, m, path);
	if (path->buf[0] != '/')
		return;
	for (size_t i = 0; i < r->nr_ips; i++) {
		const struct ht_ip *ip = &r->ips[i];
		const char *s = NULL;
		size_t n = 0;

		if (ip->module != m)
			continue;
		lo = ip->ip < lo ? ip->ip : lo;
		hi = ip->ip > hi ? ip->ip : hi;
		if (nnamed < CHECK_IPS && outer_name(r, ip, &s, &n))
			named[nnamed++] = ip;
	}
	if (!nnamed)
		return;
	if (!r->sym)
		r->sym = symbolizer_new();
	d = symbolizer_dso(r->sym, path->buf, NULL);
	if (!sym_dso_exec_segment(d, &vaddr, &off, &size) || !size || hi - lo >= size ||
	    lo < vaddr)
		return;
	/* bias + vaddr <= lo and hi < bias + vaddr + size */
	last = lo - vaddr;
	first = hi - vaddr >= size ? hi - vaddr - size + 1 : 0;
	first = (first + page - 1) / page * page;
	for (uint64_t bias = first; bias <= last && tries < MAX_BIASES && r->biases_tried < MAX_ALL_BIASES;
	     bias += page, tries++, r->biases_tried++) {
		bool ok = true;

		for (size_t k = 0; k < nnamed && ok; k++) {
			struct sym_frame sf[HEAPTRACK_MAX_FRAMES];
			int got = sym_lookup(d, named[k]->ip - bias - vaddr + off, sf, HEAPTRACK_MAX_FRAMES);

			ok = same_function(r, named[k], sf, got);
		}
		if (ok) {
			mod->dso = d;
			mod->start = bias + vaddr;
			mod->limit = bias + vaddr + size;
			mod->offset = off;
			return;
		}
		if (bias > UINT64_MAX - page)
			break;
	}
}

static uint64_t ip_location(struct profile *p, struct ht_reader *r, uint32_t i,
			    struct pf_line *lines, struct strbuf *a, struct strbuf *b)
{
	struct ht_ip *ip = &r->ips[i - 1];
	struct ht_module *mod = ip->module ? &r->modules[ip->module] : NULL;
	uint64_t map = 0;
	uint32_t nl = 0;

	if (ip->loc_id)
		return ip->loc_id;
	if (mod && !mod->looked)
		find_module(r, ip->module, a);
	if (mod && !mod->map_id)
		mod->map_id = profile_add_mapping(p, mod->start, mod->limit, mod->offset,
						  str_dup(r, ip->module, a), NULL);
	map = mod ? mod->map_id : 0;
	if (mod && mod->dso && !ip->nframe && ip->ip >= mod->start && ip->ip < mod->limit) {
		/* heaptrack could not name it: hotloop's symbolizer, a byte back (a return address) */
		struct sym_frame sf[HEAPTRACK_MAX_FRAMES];
		int got = sym_lookup(mod->dso, ip->ip - mod->start + mod->offset - 1, sf,
				     HEAPTRACK_MAX_FRAMES);

		for (int k = 0; k < got; k++) {
			lines[k].function_id = profile_add_function(p, sf[k].name, sf[k].system_name,
								    sf[k].file, sf[k].start_line);
			lines[k].line = sf[k].line;
			lines[k].column = 0;
		}
		ip->loc_id = profile_add_location(p, map, ip->ip, lines, got > 0 ? (size_t)got : 0);
		return ip->loc_id;
	}
	for (uint32_t j = 0; j < ip->nframe; j++) {
		const struct ht_frame *f = &r->frames[ip->frame_off + j];

		if (!f->fn)
			continue;
		str_dup(r, f->fn, a);
		str_dup(r, f->file, b);
		lines[nl].function_id = profile_add_function(p, a->buf, a->buf, b->buf, 0);
		lines[nl].line = f->line;
		lines[nl].column = 0;
		nl++;
	}
	ip->loc_id = profile_add_location(p, map, ip->ip, lines, nl);
	return ip->loc_id;
}

/* The op label for a call to 'fn' ("realloc@plt", "calloc"): malloc when unknown. */
static const char *op_of(const char *fn)
{
	if (!fn)
		return "malloc";
	if (strstr(fn, "posix_memalign") || strstr(fn, "aligned_alloc") || strstr(fn, "memalign") ||
	    strstr(fn, "valloc"))
		return "memalign";
	if (strstr(fn, "realloc"))
		return "realloc";
	if (strstr(fn, "calloc"))
		return "calloc";
	return "malloc";
}

/*
 * The op of an allocation info whose stack starts at ip (after operator
 * new): what the call there called, when its module was found here; else
 * realloc when most of its allocations came right after the free of a
 * block of another size from the same stack, as heaptrack writes a realloc.
 */
static const char *alloc_op(struct ht_reader *r, const struct ht_alloc *al, uint32_t ip)
{
	const struct ht_ip *in = ip ? &r->ips[ip - 1] : NULL;
	const struct ht_module *mod = in && in->module ? &r->modules[in->module] : NULL;

	if (mod && mod->dso && in->ip >= mod->start && in->ip < mod->limit) {
		const char *callee = sym_callee(mod->dso, in->ip - mod->start + mod->offset);

		if (callee)
			return op_of(callee);
	}
	return al->reallocs * 2 > al->allocs ? "realloc" : "malloc";
}

static int build_profile(struct profile *p, struct ht_reader *r)
{
	struct pf_line lines[HEAPTRACK_MAX_FRAMES];
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	uint64_t *locs = NULL;
	size_t total_locs = 0;
	char *c;
	int64_t op_key = profile_str(p, HEAP_LABEL_OP), bytes_key = profile_str(p, "bytes"),
		bytes_unit = profile_str(p, "bytes");
	int ret = 0;

	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
		profile_add_sample_type(p, heap_sample_types[t][0], heap_sample_types[t][1]);
	p->default_sample_type = profile_str(p, heap_sample_types[HEAP_ALLOC_SPACE][0]);
	p->period_type.type = profile_str(p, "space");
	p->period_type.unit = profile_str(p, "bytes");
	p->period = 1;
	p->duration_nanos = r->last_ms > INT64_MAX / 1000000 ? 0 : (int64_t)r->last_ms * 1000000;
	profile_add_comment(p, "heaptrack");
	c = xstrfmt("heap-peak=%" PRIu64, r->peak_bytes);
	profile_add_comment(p, c);
	free(c);
	if (r->command) {
		strbuf_addstr(&a, "command: ");
		strbuf_add(&a, r->command, r->command_len);
		profile_add_comment(p, a.buf);
	}
	r->modules = xcalloc(r->nr_strs + 1, sizeof(*r->modules));
	/* heaptrack names the executable first: its mapping is the first, as pprof's are */
	for (size_t i = 0; i < r->nr_ips; i++)
		if (r->ips[i].module == 1) {
			find_module(r, 1, &a);
			r->modules[1].map_id = profile_add_mapping(p, r->modules[1].start, r->modules[1].limit,
								   r->modules[1].offset, str_dup(r, 1, &a), NULL);
			break;
		}
	locs = xcalloc(HEAPTRACK_MAX_DEPTH, sizeof(*locs));
	for (size_t i = 0; i < r->nr_allocs; i++) {
		const struct ht_alloc *al = &r->allocs[i];
		struct pf_label labels[2];
		int64_t v[HEAP_NR_SAMPLE_TYPES], sz = (int64_t)al->size;
		size_t nloc = 0;
		uint32_t leaf = 0;

		if (!al->allocs)
			continue;
		for (uint32_t t = al->trace; t && nloc < HEAPTRACK_MAX_DEPTH; t = r->traces[t - 1].parent) {
			uint32_t ip = r->traces[t - 1].ip;

			if (!nloc && is_operator_new(r, ip))
				continue;
			if (!nloc)
				leaf = ip;
			locs[nloc++] = ip_location(p, r, ip, lines, &a, &b);
		}
		total_locs += nloc;
		if (total_locs > HEAPTRACK_MAX_LOCS) {
			ret = error("cannot read '%s': more than %zu frames in all its stacks",
				    r->ip_pos.what, HEAPTRACK_MAX_LOCS);
			break;
		}
		/* counts times sizes stay in range: sizes are < 2^62, counts < lines */
		v[HEAP_ALLOC_OBJECTS] = (int64_t)al->allocs;
		v[HEAP_ALLOC_SPACE] = sat_mul(al->allocs, sz);
		v[HEAP_INUSE_OBJECTS] = (int64_t)al->peak_live;
		v[HEAP_INUSE_SPACE] = sat_mul(al->peak_live, sz);
		v[HEAP_LEAK_OBJECTS] = (int64_t)al->live;
		v[HEAP_LEAK_SPACE] = sat_mul(al->live, sz);
		v[HEAP_TEMP_OBJECTS] = (int64_t)al->temp;
		labels[0] = (struct pf_label){ op_key, profile_str(p, alloc_op(r, al, leaf)), 0, 0 };
		labels[1] = (struct pf_label){ bytes_key, 0, sz, bytes_unit };
		profile_add_sample(p, locs, nloc, v, labels, 2);
	}
	profile_mark_symbolized(p);
	free(locs);
	strbuf_release(&a);
	strbuf_release(&b);
	return ret;
}

static void reader_release(struct ht_reader *r)
{
	free(r->modules);
	if (r->sym)
		symbolizer_free(r->sym);
	free(r->strs);
	free(r->frames);
	free(r->ips);
	free(r->traces);
	free(r->allocs);
}

int heaptrack_parse(struct profile *p, const char *buf, size_t len, const char *what)
{
	struct ht_reader r = { .buf = buf, .len = len, .ip_pos = { what, 0 }, .page_size = 4096 };
	int ret = parse_pass(&r);

	if (!ret && r.skipped)
		warning("'%s': skipped %zu heaptrack lines of a kind not known here ('%c')",
			what, r.skipped, r.skipped_kind);
	if (!ret)
		ret = build_profile(p, &r);
	if (!ret)
		ret = profile_validate(p);
	reader_release(&r);
	if (ret)
		profile_clear(p);
	return ret;
}
