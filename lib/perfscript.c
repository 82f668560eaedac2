/*
 * perfscript.c: the `perf script` text reader (see perfscript.h). Built for
 * gigabytes: the text is read in chunks into one buffer that a line cut by
 * a chunk's end waits in for its rest, so memory depends on what is
 * distinct, not on the input's size; a frame line is looked up by its
 * bytes in an open-addressed table and parsed only the first time it is
 * seen, stacks are deduplicated by a hash of their frame ids, and the
 * profile is built once, at the end, from the distinct frames and stacks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "strbuf.h"
#include "hindex.h"
#include "lines.h"
#include "profile.h"
#include "perfscript.h"

#define NONE UINT32_MAX		/* an absent pid, tid or event */
#define MAX_TOKENS 32		/* header tokens looked at */
#define CHUNK ((size_t)256 << 10)	/* bytes read at a time */

enum frame_kind {
	FK_FRAME,	/* "ADDR SYM (DSO)" */
	FK_INLINED,	/* "ADDR SYM (inlined)": joins the next frame's location */
	FK_SRCLINE,	/* "FILE:LINE" under a frame */
	FK_NOLINE,	/* a source line saying nothing ("??:0", "dso[addr]") */
};

/*
 * A slot of the frame lines' index: the hash's low half (which picks the
 * slot), the frame's id + 1 (0: empty), and where its line is in keys
 * with its length, so that a lookup reads the slot and the line, not the
 * frame.
 */
struct fslot {
	uint32_t tag, id1;
	uint64_t key;		/* offset << KEY_LEN_BITS | length */
};
#define KEY_LEN_BITS 24		/* holds PERFSCRIPT_MAX_LINE */

/* One distinct frame or source line, keyed by its bytes in the input. */
struct ps_frame {
	size_t key;		/* offset of the line's bytes in ps->keys */
	uint32_t keylen;
	uint8_t kind;
	bool line_set;
	uint32_t chain;		/* id + 1 of the chain of this frame alone */
	uint64_t hash, address;
	int64_t name, dso;	/* string indexes, 0 = none */
	int64_t file, line;	/* from its source line */
};

/* Deduplicated sequences of 32-bit words: inline chains, and stacks. */
struct seqtab {
	uint32_t *words;
	size_t nr_words, alloc_words;
	struct seq {
		size_t off;
		uint32_t n;
		uint64_t hash;
	} *seqs;
	size_t nr, alloc;
	struct hindex index;
};

struct event {
	char *s;		/* name as in the header, modifiers stripped (a copy) */
	size_t n;
	bool is_cpu;
};

struct header {
	const char *comm;
	size_t comm_len;
	uint32_t pid, tid;
	const char *event;
	size_t event_len;
	int64_t period;
	bool has_period, anchored, strong;
	const char *rest;	/* what follows the known fields */
	size_t rest_len;
	const char *time;	/* the time token, when there is one */
	size_t time_len;
};

/*
 * The last header parsed that has a time: the next one most often differs
 * from it only in its time, and then means the same.
 */
struct header_cache {
	struct strbuf text;	/* its bytes; h points into them */
	size_t time_at, time_len;
	struct header h;
	bool valid;
};

struct ps {
	struct profile *p;
	struct input_pos in;	/* the input's name, the line */

	struct ps_frame *frames;
	size_t nr_frames, alloc_frames;
	/*
	 * The frame lines, copied: compared on every lookup, they stay in
	 * cache here, not scattered over the whole input.
	 */
	struct strbuf keys;
	struct fslot *fslots;	/* the frames by line, nr_frames * 2 at most */
	size_t nr_fslots;

	struct seqtab chains, stacks;
	int64_t *count, *period;
	size_t alloc_values;

	struct event events[PERFSCRIPT_MAX_EVENTS];
	size_t nr_events;
	uint32_t last_event;
	bool any_period, any_inline, any_line, bare_period;

	struct strbuf last_comm;	/* a copy: the line it came from is gone */
	uint32_t last_comm_idx;
	struct strbuf last_event_raw;	/* the last event token, modifiers kept */
	struct header_cache hc;

	/* the sample being read */
	bool in_sample, in_chain, prev_frame;
	uint32_t comm, pid, tid, event;
	int64_t speriod;
	uint32_t *cur;
	size_t ncur, alloc_cur;
	uint32_t *key;
	size_t alloc_key;
	/* the last sample ended, not counted yet: its key, hash and period */
	uint32_t *pkey;
	size_t alloc_pkey, npkey;
	uint64_t phash;
	int64_t pperiod;
	bool pending;

	/*
	 * The text: whole lines are parsed where they lie in buf; the line a
	 * chunk's end cut waits at buf's start for the rest of it.
	 */
	char *buf;
	size_t len, alloc, chunk;
	const char *nul;	/* the first NUL byte in buf, or NULL */
};

/* ---- hashing ---------------------------------------------------------- */

static inline uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/*
 * A frame line is hashed on every occurrence, a word at a time: each whole
 * word, then the last bytes as a little-endian word, then the length, so
 * scan_line() can hash a line while it looks for its end.
 */
#define LINE_SEED 0x9e3779b97f4a7c15ull

static inline uint64_t hash_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
	return (h << 31) | (h >> 33);
}

static inline uint64_t hash_end(uint64_t h, uint64_t tail, size_t n)
{
	return mix64((h ^ tail ^ ((uint64_t)n << 56 | n)) * 0x94d049bb133111ebull);
}

static inline uint64_t hash_line(const char *s, size_t n)
{
	uint64_t h = LINE_SEED, w;
	size_t len = n;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = hash_word(h, w);
		s += 8;
		n -= 8;
	}
	w = 0;
	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)(unsigned char)s[i] << (8 * i);
	return hash_end(h, w, len);
}

#define SCAN_PAD 8	/* bytes past the text that scan_line() may read */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * The end of the line at s (its '\n', before end), and meanwhile the hash
 * hash_line() gives s[0..that): eight bytes at a time, a word holding a
 * '\n' found by the carry trick (its lowest flagged byte is the first
 * '\n'). Reads up to SCAN_PAD bytes past end. NULL when no '\n' is
 * before end.
 */
static inline const char *scan_line(const char *s, const char *end, uint64_t *hash)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	const char *p = s;
	uint64_t h = LINE_SEED, w, m;

	for (;;) {
		memcpy(&w, p, 8);
		m = w ^ (ones * '\n');
		m = (m - ones) & ~m & highs;
		if (m)
			break;
		if (p + 8 >= end)
			return NULL;
		h = hash_word(h, w);
		p += 8;
	}
	m = (uint64_t)__builtin_ctzll(m) / 8;	/* bytes before the '\n' */
	if (p + m >= end)
		return NULL;
	w = m ? w & (~0ull >> (64 - 8 * m)) : 0;
	*hash = hash_end(h, w, (size_t)(p + m - s));
	return p + m;
}
#else
static inline const char *scan_line(const char *s, const char *end, uint64_t *hash)
{
	const char *nl = memchr(s, '\n', (size_t)(end - s));

	if (nl)
		*hash = hash_line(s, (size_t)(nl - s));
	return nl;
}
#endif

static uint64_t hash_words(const uint32_t *w, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull * (n + 1);

	for (size_t i = 0; i < n; i++) {
		h = (h ^ w[i]) * 0xbf58476d1ce4e5b9ull;
		h = (h << 31) | (h >> 33);
	}
	return mix64(h);
}

struct words {
	const uint32_t *w;
	size_t n;
};

static inline bool seq_eq(const void *table, size_t i, const void *key_)
{
	const struct seqtab *t = table;
	const struct seq *q = &t->seqs[i];
	const struct words *key = key_;

	const uint32_t *w = t->words + q->off;

	/* short: a loop beats a call to memcmp() */
	if (q->n != key->n)
		return false;
	for (size_t j = 0; j < key->n; j++)
		if (w[j] != key->w[j])
			return false;
	return true;
}

static uint32_t seqtab_add_hashed(struct seqtab *t, const uint32_t *w, size_t n,
				  uint64_t hash, bool *added)
{
	struct words key = { w, n };
	struct seq *q;
	size_t i, s;

	if ((i = hindex_probe(&t->index, hash, seq_eq, t, &key, &s)) != HINDEX_NONE) {
		if (added)
			*added = false;
		return (uint32_t)i;
	}
	ALLOC_GROW(t->seqs, t->nr + 1, t->alloc);
	ALLOC_GROW(t->words, t->nr_words + n, t->alloc_words);
	q = &t->seqs[t->nr];
	q->off = t->nr_words;
	q->n = (uint32_t)n;
	q->hash = hash;
	if (n)
		memcpy(t->words + t->nr_words, w, n * sizeof(*w));
	t->nr_words += n;
	hindex_set(&t->index, s, hash, t->nr);
	if (added)
		*added = true;
	return (uint32_t)t->nr++;
}

static uint32_t seqtab_add(struct seqtab *t, const uint32_t *w, size_t n, bool *added)
{
	return seqtab_add_hashed(t, w, n, hash_words(w, n), added);
}

static void seqtab_release(struct seqtab *t)
{
	free(t->words);
	free(t->seqs);
	hindex_release(&t->index);
}

/* ---- errors ------------------------------------------------------------ */

static int bad_line(struct ps *ps, const char *s, size_t n, const char *why)
{
	return line_error(&ps->in, "%s: '%.*s%s'", why, n > 60 ? 60 : (int)n, s,
			  n > 60 ? "..." : "");
}

/* ---- tokens ------------------------------------------------------------- */

static inline bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool parse_u32(const char *s, size_t n, uint32_t *v)
{
	uint64_t x = 0;

	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (x >= NONE)
		return false;
	*v = (uint32_t)x;
	return true;
}

/* "TID" or "PID/TID" */
static bool pid_token(const char *s, size_t n, uint32_t *pid, uint32_t *tid)
{
	const char *slash = memchr(s, '/', n);

	if (!slash) {
		*pid = NONE;
		return parse_u32(s, n, tid);
	}
	return parse_u32(s, (size_t)(slash - s), pid) &&
	       parse_u32(slash + 1, n - (size_t)(slash - s) - 1, tid);
}

/* "[001]" */
static bool cpu_token(const char *s, size_t n)
{
	if (n < 3 || s[0] != '[' || s[n - 1] != ']')
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

/* "123.456789:" */
static bool time_token(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	while (i < n && is_digit(s[i]))
		i++, digits++;
	if (!digits || i >= n || s[i] != '.')
		return false;
	for (i++; i < n && is_digit(s[i]); i++)
		;
	return i + 1 == n && s[i] == ':';
}

/* "cpu-clock:", "cpu-clock:pppH:", "sched:sched_switch:" */
static bool event_token(const char *s, size_t n)
{
	return n >= 2 && s[n - 1] == ':' && s[0] != ':' && !time_token(s, n);
}

static bool all_digits(const char *s, size_t n)
{
	if (!n || n > 18)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

/* ---- frames ------------------------------------------------------------ */

struct frame_text {
	uint64_t address;
	const char *sym, *dso;
	size_t sym_len, dso_len;
	bool inlined;
};

/*
 * "ADDR", "ADDR SYM", "ADDR SYM+0xOFF (DSO)", "ADDR (DSO)"; s is trimmed.
 * The DSO is the last parenthesized group preceded by white space, its
 * parentheses balanced ("(/lib/x.so (deleted))"); a symbol may hold
 * spaces and parentheses of its own ("f(int) const").
 */
static bool parse_frame_text(const char *s, size_t n, struct frame_text *ft)
{
	size_t i = 0, k;
	uint64_t a = 0;

	while (i < n && is_hex(s[i])) {
		char c = s[i];
		a = a << 4 | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		i++;
	}
	if (!i || i > 16 || (i < n && !is_space(s[i])))
		return false;
	memset(ft, 0, sizeof(*ft));
	ft->address = a;
	while (i < n && is_space(s[i]))
		i++;
	s += i;
	n -= i;
	if (n && s[n - 1] == ')') {
		int depth = 0;

		for (k = n; k-- > 0; ) {
			if (s[k] == ')')
				depth++;
			else if (s[k] == '(' && --depth == 0)
				break;
		}
		if (k < n && depth == 0 && (k == 0 || is_space(s[k - 1]))) {
			ft->dso = s + k + 1;
			ft->dso_len = n - k - 2;
			n = k;
			while (n && is_space(s[n - 1]))
				n--;
		}
	}
	if (ft->dso && ft->dso_len == 7 && !memcmp(ft->dso, "inlined", 7)) {
		ft->inlined = true;
		ft->dso = NULL;
		ft->dso_len = 0;
	}
	/* strip "+0xOFF" */
	for (k = n; k > 0 && is_hex(s[k - 1]); k--)
		;
	if (k >= 3 && k < n && s[k - 1] == 'x' && s[k - 2] == '0' && s[k - 3] == '+')
		n = k - 3;
	ft->sym = s;
	ft->sym_len = n;
	return true;
}

static int64_t intern(struct ps *ps, const char *s, size_t n)
{
	return strtab_intern(&ps->p->strings, s, n);
}

/* "FILE:LINE", or a form that names no line; s is trimmed. */
static int parse_srcline(struct ps *ps, const char *s, size_t n, struct ps_frame *f)
{
	static const char discr[] = " (discriminator ";
	size_t k;
	uint32_t line;

	for (k = 0; k + sizeof(discr) - 1 <= n; k++)
		if (!memcmp(s + k, discr, sizeof(discr) - 1)) {
			n = k;
			break;
		}
	if (n && s[n - 1] == ']') {
		f->kind = FK_NOLINE;
		return 0;
	}
	for (k = n; k > 0 && is_digit(s[k - 1]); k--)
		;
	if (k < 1 || k == n || s[k - 1] != ':' || !parse_u32(s + k, n - k, &line))
		return -1;
	if (!line || k == 1 || (k == 3 && !memcmp(s, "??", 2))) {
		f->kind = FK_NOLINE;
		return 0;
	}
	f->kind = FK_SRCLINE;
	f->file = intern(ps, s, k - 1);
	f->line = line;
	return 0;
}

static void frame_from_text(struct ps *ps, const struct frame_text *ft, struct ps_frame *f)
{
	bool unknown_dso = !ft->dso || !ft->dso_len ||
		(ft->dso_len == 9 && !memcmp(ft->dso, "[unknown]", 9));

	f->kind = ft->inlined ? FK_INLINED : FK_FRAME;
	f->address = ft->address;
	f->dso = unknown_dso ? 0 : intern(ps, ft->dso, ft->dso_len);
	if (ft->sym_len == 9 && !memcmp(ft->sym, "[unknown]", 9)) {
		if (!unknown_dso) {
			/* as stackcollapse-perf.pl names it: the DSO's basename */
			const char *b = ft->dso + ft->dso_len;
			struct strbuf sb = STRBUF_INIT;

			while (b > ft->dso && b[-1] != '/')
				b--;
			strbuf_addch(&sb, '[');
			strbuf_add(&sb, b, (size_t)(ft->dso + ft->dso_len - b));
			strbuf_addch(&sb, ']');
			f->name = intern(ps, sb.buf, sb.len);
			strbuf_release(&sb);
		}
	} else if (ft->sym_len) {
		f->name = intern(ps, ft->sym, ft->sym_len);
	}
}

/* The frame for line s[0..n), or NONE. */
static inline uint32_t frame_lookup(struct ps *ps, const char *s, size_t n, uint64_t hash)
{
	const uint32_t tag = (uint32_t)hash;
	const size_t mask = ps->nr_fslots - 1;

	if (!ps->nr_fslots)
		return NONE;
	for (size_t i = tag & mask; ps->fslots[i].id1; i = (i + 1) & mask) {
		const struct fslot *sl = &ps->fslots[i];

		if (sl->tag == tag && (sl->key & ((1u << KEY_LEN_BITS) - 1)) == n &&
		    !memcmp(ps->keys.buf + (sl->key >> KEY_LEN_BITS), s, n))
			return sl->id1 - 1;
	}
	return NONE;
}

/* Whether the index can take no more frames: ids, or offsets in keys. */
static bool frames_full(const struct ps *ps)
{
	return ps->nr_frames >= NONE - 1 ||
	       (uint64_t)ps->keys.len + PERFSCRIPT_MAX_LINE >= (uint64_t)1 << (64 - KEY_LEN_BITS);
}

static void fslot_put(struct fslot *slots, size_t nr, const struct fslot *sl)
{
	size_t i;

	for (i = sl->tag & (nr - 1); slots[i].id1; i = (i + 1) & (nr - 1))
		;
	slots[i] = *sl;
}

static uint32_t frame_insert(struct ps *ps, const char *s, size_t n, uint64_t hash,
			     const struct ps_frame *proto)
{
	struct ps_frame *f;
	struct fslot sl;

	if ((ps->nr_frames + 1) * 2 > ps->nr_fslots) {
		size_t nr = ps->nr_fslots ? ps->nr_fslots * 2 : 1024;
		struct fslot *slots = xcalloc(nr, sizeof(*slots));

		for (size_t i = 0; i < ps->nr_fslots; i++)
			if (ps->fslots[i].id1)
				fslot_put(slots, nr, &ps->fslots[i]);
		free(ps->fslots);
		ps->fslots = slots;
		ps->nr_fslots = nr;
	}
	ALLOC_GROW(ps->frames, ps->nr_frames + 1, ps->alloc_frames);
	f = &ps->frames[ps->nr_frames];
	*f = *proto;
	f->key = ps->keys.len;
	f->keylen = (uint32_t)n;
	f->hash = hash;
	sl.tag = (uint32_t)hash;
	sl.id1 = (uint32_t)ps->nr_frames + 1;
	sl.key = (uint64_t)ps->keys.len << KEY_LEN_BITS | n;
	fslot_put(ps->fslots, ps->nr_fslots, &sl);
	strbuf_add(&ps->keys, s, n);
	return (uint32_t)ps->nr_frames++;
}

/* ---- samples ----------------------------------------------------------- */

static void grow_values(struct ps *ps)
{
	if (ps->stacks.nr < ps->alloc_values)
		return;
	ps->alloc_values = ps->alloc_values ? ps->alloc_values * 2 : 1024;
	ps->count = xrealloc(ps->count, ps->alloc_values * sizeof(*ps->count));
	ps->period = xrealloc(ps->period, ps->alloc_values * sizeof(*ps->period));
}

static uint32_t chain_of(struct ps *ps, uint32_t f)
{
	if (!ps->frames[f].chain)
		ps->frames[f].chain = seqtab_add(&ps->chains, &f, 1, NULL) + 1;
	return ps->frames[f].chain - 1;
}

/* Count the sample end_sample() left pending: add its stack, or count it again. */
static void count_pending(struct ps *ps)
{
	uint32_t id;
	bool added;

	if (!ps->pending)
		return;
	id = seqtab_add_hashed(&ps->stacks, ps->pkey, ps->npkey, ps->phash, &added);
	if (added) {
		grow_values(ps);
		ps->count[id] = 0;
		ps->period[id] = 0;
	}
	ps->count[id]++;
	ps->period[id] = sat_add(ps->period[id], ps->pperiod);
	ps->pending = false;
}

/* Finish the sample being read: its stack, to count (count_pending()). */
static void end_sample(struct ps *ps)
{
	size_t nkey = 4, start = 0, swap_alloc;
	uint32_t *swap_key;
	uint64_t hash;

	if (!ps->in_sample)
		return;
	ALLOC_GROW(ps->key, ps->ncur + 4, ps->alloc_key);
	ps->key[0] = ps->comm;
	ps->key[1] = ps->pid;
	ps->key[2] = ps->tid;
	ps->key[3] = ps->event;
	for (size_t i = 0; i < ps->ncur; i++) {
		uint32_t f = ps->cur[i];

		if (ps->frames[f].kind == FK_INLINED)
			continue;
		if (i == start) {
			ps->key[nkey++] = chain_of(ps, f);
		} else {
			ps->key[nkey++] = seqtab_add(&ps->chains, ps->cur + start,
						     i + 1 - start, NULL);
			ps->any_inline = true;
		}
		start = i + 1;
	}
	/* inlined frames with nothing to join below the root */
	for (size_t i = start; i < ps->ncur; i++)
		ps->key[nkey++] = chain_of(ps, ps->cur[i]);

	/*
	 * Counted at the next sample's end: its slot in the index is
	 * fetched meanwhile, while the next sample's lines are read.
	 */
	hash = hash_words(ps->key, nkey);
	if (ps->stacks.index.nslots)
		__builtin_prefetch(&ps->stacks.index.slots[(uint32_t)hash &
							   (ps->stacks.index.nslots - 1)]);
	count_pending(ps);
	swap_key = ps->key;
	ps->key = ps->pkey;
	ps->pkey = swap_key;
	swap_alloc = ps->alloc_key;
	ps->alloc_key = ps->alloc_pkey;
	ps->alloc_pkey = swap_alloc;
	ps->npkey = nkey;
	ps->phash = hash;
	ps->pperiod = ps->speriod;
	ps->pending = true;

	ps->in_sample = ps->in_chain = ps->prev_frame = false;
	ps->ncur = 0;
}

static int push_frame(struct ps *ps, uint32_t f)
{
	if (ps->ncur >= PERFSCRIPT_MAX_DEPTH)
		return line_error(&ps->in, "stack deeper than %d frames", PERFSCRIPT_MAX_DEPTH);
	ALLOC_GROW(ps->cur, ps->ncur + 1, ps->alloc_cur);
	ps->cur[ps->ncur++] = f;
	ps->prev_frame = true;
	return 0;
}

/*
 * A frame line: the next frame of the sample being read, or, outside a
 * callchain, the first frame of a sample with no header at all (-F ip,sym).
 */
static int chain_frame(struct ps *ps, uint32_t f)
{
	if (!ps->in_chain) {
		end_sample(ps);
		ps->in_sample = ps->in_chain = true;
		ps->comm = 0;
		ps->pid = ps->tid = ps->event = NONE;
		ps->speriod = 1;
	}
	return push_frame(ps, f);
}

static void apply_srcline(struct ps *ps, const struct ps_frame *src)
{
	struct ps_frame *f = &ps->frames[ps->cur[ps->ncur - 1]];

	ps->prev_frame = false;
	if (f->line_set || src->kind != FK_SRCLINE)
		return;
	f->line_set = true;
	f->file = src->file;
	f->line = src->line;
	ps->any_line = true;
}

/* ---- headers ----------------------------------------------------------- */

static bool tokenize_rest(const char *s, size_t n, struct header *h, size_t at)
{
	h->rest = s + at;
	h->rest_len = n - at;
	return true;
}

/*
 * Parse a header line (trimmed). Known fields come in perf's order: comm,
 * pid/tid, [cpu], time:, period, event:; the comm may hold spaces, so it
 * is what precedes the pid/tid before the first [cpu], time: or event:.
 * Without any of those, the pid/tid is the rightmost number after which
 * nothing or a frame follows.
 */
static bool parse_header(const char *s, size_t n, struct header *h)
{
	const char *ts[MAX_TOKENS];
	size_t tn[MAX_TOKENS], nt = 0, i = 0, a, j;
	struct frame_text ft;

	memset(h, 0, sizeof(*h));
	h->pid = h->tid = NONE;
	while (i < n && nt < MAX_TOKENS) {
		size_t b = i;

		while (i < n && !is_space(s[i]))
			i++;
		ts[nt] = s + b;
		tn[nt++] = i - b;
		while (i < n && is_space(s[i]))
			i++;
	}
	if (!nt)
		return false;

	for (a = 0; a < nt; a++) {
		if (cpu_token(ts[a], tn[a]) || time_token(ts[a], tn[a])) {
			h->strong = true;
			break;
		}
		if (event_token(ts[a], tn[a]))
			break;
	}
	if (a < nt) {
		size_t k = a;

		h->anchored = true;
		j = a;
		if (a && pid_token(ts[a - 1], tn[a - 1], &h->pid, &h->tid))
			j = a - 1;
		if (j) {
			h->comm = ts[0];
			h->comm_len = (size_t)(ts[j - 1] + tn[j - 1] - ts[0]);
		}
		if (k < nt && cpu_token(ts[k], tn[k]))
			k++;
		if (k < nt && time_token(ts[k], tn[k])) {
			h->time = ts[k];
			h->time_len = tn[k];
			k++;
		}
		if (k < nt && all_digits(ts[k], tn[k]) &&
		    (k + 1 == nt || event_token(ts[k + 1], tn[k + 1]))) {
			h->has_period = true;
			h->period = 0;
			for (size_t d = 0; d < tn[k]; d++)	/* at most 18 digits */
				h->period = h->period * 10 + (ts[k][d] - '0');
			k++;
		}
		if (k < nt && event_token(ts[k], tn[k])) {
			h->event = ts[k];
			h->event_len = tn[k] - 1;
			k++;
		}
		return tokenize_rest(s, n, h, k < nt ? (size_t)(ts[k] - s) : n);
	}
	if (nt == MAX_TOKENS)
		return false;
	/* no anchor: COMM... PID[/TID] [FRAME] */
	for (j = nt; j-- > 0; ) {
		size_t after = j + 1 < nt ? (size_t)(ts[j + 1] - s) : n;

		if (!pid_token(ts[j], tn[j], &h->pid, &h->tid))
			continue;
		if (after < n && !parse_frame_text(s + after, n - after, &ft))
			continue;
		if (!j && after == n)
			return false;	/* a bare number is a frame's address */
		if (j) {
			h->comm = ts[0];
			h->comm_len = (size_t)(ts[j - 1] + tn[j - 1] - ts[0]);
		}
		return tokenize_rest(s, n, h, after);
	}
	return false;
}

/* "cpu-clock:pppH" -> "cpu-clock"; "sched:sched_switch" stays. */
static size_t strip_modifiers(const char *s, size_t n)
{
	static const char mods[] = "ukhIGHpPSDWeb";
	const char *colon = NULL;

	for (size_t i = n; i-- > 0; )
		if (s[i] == ':') {
			colon = s + i;
			break;
		}
	if (!colon || colon == s)
		return n;
	for (const char *c = colon + 1; c < s + n; c++)
		if (!strchr(mods, *c))
			return n;
	return (size_t)(colon - s);
}

static int event_index(struct ps *ps, const char *s, size_t n, uint32_t *idx)
{
	struct event *e;

	if (ps->last_event != NONE && ps->last_event_raw.len == n &&
	    !memcmp(ps->last_event_raw.buf, s, n)) {
		*idx = ps->last_event;
		return 0;
	}
	strbuf_reset(&ps->last_event_raw);
	strbuf_add(&ps->last_event_raw, s, n);
	n = strip_modifiers(s, n);
	if (ps->last_event != NONE) {
		e = &ps->events[ps->last_event];
		if (e->n == n && !memcmp(e->s, s, n)) {
			*idx = ps->last_event;
			return 0;
		}
	}
	for (size_t i = 0; i < ps->nr_events; i++)
		if (ps->events[i].n == n && !memcmp(ps->events[i].s, s, n)) {
			*idx = ps->last_event = (uint32_t)i;
			return 0;
		}
	if (ps->nr_events == PERFSCRIPT_MAX_EVENTS)
		return line_error(&ps->in, "more than %d different events", PERFSCRIPT_MAX_EVENTS);
	e = &ps->events[ps->nr_events];
	e->s = xstrndup(s, n);
	e->n = n;
	e->is_cpu = (n == 9 && (!memcmp(s, "cpu-clock", 9) || !memcmp(s, "task-clock", 9))) ||
		    (n == 10 && !memcmp(s, "task-clock", 10));
	*idx = ps->last_event = (uint32_t)ps->nr_events++;
	return 0;
}

static int frame_for_text(struct ps *ps, const char *s, size_t n, uint32_t *idx);

static int start_sample(struct ps *ps, const struct header *h)
{
	end_sample(ps);
	ps->in_sample = ps->in_chain = true;
	ps->prev_frame = false;
	ps->pid = h->pid;
	ps->tid = h->tid;
	ps->event = NONE;
	ps->speriod = 1;
	if (h->has_period) {
		ps->speriod = h->period;
		ps->any_period = true;
	}
	if (h->event_len && event_index(ps, h->event, h->event_len, &ps->event))
		return -1;
	if (!h->comm_len) {
		ps->comm = 0;
	} else if (ps->last_comm_idx && ps->last_comm.len == h->comm_len &&
		   !memcmp(ps->last_comm.buf, h->comm, h->comm_len)) {
		ps->comm = ps->last_comm_idx;
	} else {
		ps->comm = (uint32_t)intern(ps, h->comm, h->comm_len);
		strbuf_reset(&ps->last_comm);
		strbuf_add(&ps->last_comm, h->comm, h->comm_len);
		ps->last_comm_idx = ps->comm;
	}
	if (h->rest_len) {
		struct frame_text ft;
		uint32_t f;

		/* no callchain: the sample's own ip and symbol end the header */
		if (parse_frame_text(h->rest, h->rest_len, &ft)) {
			if (frame_for_text(ps, h->rest, h->rest_len, &f) || push_frame(ps, f))
				return -1;
			ps->in_chain = false;
		}
	}
	return 0;
}

/* ---- lines ------------------------------------------------------------- */

/* The frame for text s (a frame line, trimmed), parsed and added if new. */
static int frame_for_text(struct ps *ps, const char *s, size_t n, uint32_t *idx)
{
	uint64_t hash = hash_line(s, n);
	struct ps_frame proto = { 0 };
	struct frame_text ft;

	*idx = frame_lookup(ps, s, n, hash);
	if (*idx != NONE)
		return 0;
	if (!parse_frame_text(s, n, &ft))
		return bad_line(ps, s, n, "not a frame");
	if (frames_full(ps))
		return line_error(&ps->in, "too many different frames");
	frame_from_text(ps, &ft, &proto);
	*idx = frame_insert(ps, s, n, hash, &proto);
	return 0;
}

/* A frame or source line seen for the first time. */
static int new_indented(struct ps *ps, const char *s, size_t n, uint64_t hash)
{
	struct ps_frame proto = { 0 };
	struct frame_text ft;
	struct header h;
	uint32_t f;
	bool header = parse_header(s, n, &h);

	/*
	 * Inside a callchain, frames come first; a header there is a sample
	 * without one (perf pads its comm when there is no callchain).
	 */
	if (header && (h.strong || !ps->in_chain))
		return start_sample(ps, &h);
	if (ps->prev_frame && !parse_srcline(ps, s, n, &proto)) {
		if (frames_full(ps))
			return line_error(&ps->in, "too many different frames");
		f = frame_insert(ps, s, n, hash, &proto);
		apply_srcline(ps, &ps->frames[f]);
		return 0;
	}
	if (parse_frame_text(s, n, &ft)) {
		if (frames_full(ps))
			return line_error(&ps->in, "too many different frames");
		frame_from_text(ps, &ft, &proto);
		f = frame_insert(ps, s, n, hash, &proto);
		return chain_frame(ps, f);
	}
	if (header)
		return start_sample(ps, &h);
	if (!parse_srcline(ps, s, n, &proto))
		return bad_line(ps, s, n, "a source line with no frame above it");
	return bad_line(ps, s, n, "neither a sample header nor a frame");
}

static int indented_hashed(struct ps *ps, const char *s, size_t n, uint64_t hash)
{
	uint32_t f = frame_lookup(ps, s, n, hash);
	const struct ps_frame *fr;

	if (f == NONE)
		return new_indented(ps, s, n, hash);
	fr = &ps->frames[f];
	if (fr->kind == FK_SRCLINE || fr->kind == FK_NOLINE) {
		if (!ps->prev_frame)
			return bad_line(ps, s, n, "a source line with no frame above it");
		apply_srcline(ps, fr);
		return 0;
	}
	return chain_frame(ps, f);
}

/* The length of the time token ("123.456789:") at s, or 0. */
static size_t time_at(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && is_digit(s[i]))
		i++;
	if (!i || i >= n || s[i] != '.')
		return 0;
	for (i++; i < n && is_digit(s[i]); i++)
		;
	return i < n && s[i] == ':' ? i + 1 : 0;
}

/*
 * The cached header, when s is it but for the time: the same bytes
 * before the time token and after it, so the same tokens in the same
 * places, which parse_header() reads the same way.
 */
static const struct header *cached_header(const struct header_cache *hc,
					  const char *s, size_t n)
{
	size_t t, after;

	if (!hc->valid || n <= hc->time_at || memcmp(s, hc->text.buf, hc->time_at))
		return NULL;
	t = time_at(s + hc->time_at, n - hc->time_at);
	if (!t)
		return NULL;
	after = hc->time_at + hc->time_len;
	if (n - hc->time_at - t != hc->text.len - after ||
	    memcmp(s + hc->time_at + t, hc->text.buf + after, hc->text.len - after))
		return NULL;
	return &hc->h;
}

static void cache_header(struct header_cache *hc, const char *s, size_t n,
			 const struct header *h)
{
	const char *base;

	hc->valid = false;
	if (!h->time)
		return;
	strbuf_reset(&hc->text);
	strbuf_add(&hc->text, s, n);
	base = hc->text.buf;
	hc->h = *h;
	hc->h.comm = h->comm ? base + (h->comm - s) : NULL;
	hc->h.event = h->event ? base + (h->event - s) : NULL;
	hc->h.rest = base + (h->rest - s);
	hc->h.time = base + (h->time - s);
	hc->time_at = (size_t)(h->time - s);
	hc->time_len = h->time_len;
	hc->valid = true;
}

static int header_line(struct ps *ps, const char *s, size_t n)
{
	const struct header *c = cached_header(&ps->hc, s, n);
	struct header h;

	if (c)
		return start_sample(ps, c);
	if (!parse_header(s, n, &h))
		return bad_line(ps, s, n, "neither a sample header nor a frame");
	cache_header(&ps->hc, s, n, &h);
	return start_sample(ps, &h);
}

static int indented_line(struct ps *ps, const char *s, size_t n)
{
	return indented_hashed(ps, s, n, hash_line(s, n));
}

/* ---- building the profile ---------------------------------------------- */

static bool is_bracketed(const char *s)
{
	return s[0] == '[';
}

static const char *base_name(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

/*
 * pprof's first mapping is the main binary (brief counts it as owned
 * code): the DSO named like a sample's comm (which perf cuts to 15
 * characters), else the first one not bracketed and not a shared library.
 */
static int64_t main_dso(struct ps *ps, const int64_t *dsos, size_t nd)
{
	struct profile *p = ps->p;

	for (size_t s = 0; s < ps->stacks.nr && s < 64; s++) {
		const char *comm = profile_string(p, ps->stacks.words[ps->stacks.seqs[s].off]);

		if (!*comm)
			continue;
		for (size_t i = 0; i < nd; i++) {
			const char *b = base_name(profile_string(p, dsos[i]));
			if (!is_bracketed(b) && !strncmp(b, comm, 15) && strlen(comm) <= 15 &&
			    (strlen(b) == strlen(comm) || strlen(comm) == 15))
				return dsos[i];
		}
	}
	for (size_t i = 0; i < nd; i++) {
		const char *name = profile_string(p, dsos[i]);
		if (!is_bracketed(name) && !strstr(base_name(name), ".so"))
			return dsos[i];
	}
	return nd ? dsos[0] : 0;
}

/*
 * One mapping per DSO, the main one first. A DSO whose frames all lie in
 * the kernel's half of the address space (a module: "[nf_conntrack]") gets
 * their range, which marks it as kernel (frame_is_kernel()); the others
 * keep no range, as perf script shows none.
 */
static void build_mappings(struct ps *ps, uint64_t *map_of)
{
	struct profile *p = ps->p;
	int64_t *dsos = NULL, first;
	size_t nd = 0, alloc = 0;
	uint8_t *seen = xcalloc(p->strings.nr + 1, 1);	/* 1: seen, 2: has user addresses */
	uint64_t *lo = xcalloc(p->strings.nr + 1, sizeof(*lo));
	uint64_t *hi = xcalloc(p->strings.nr + 1, sizeof(*hi));

	for (size_t i = 0; i < ps->nr_frames; i++) {
		const struct ps_frame *f = &ps->frames[i];
		int64_t d = f->dso;

		if (f->kind != FK_FRAME || !d)
			continue;
		if (!seen[d]) {
			seen[d] = 1;
			lo[d] = hi[d] = f->address;
			ALLOC_GROW(dsos, nd + 1, alloc);
			dsos[nd++] = d;
		}
		if (f->address < KERNEL_HALF)
			seen[d] = 2;
		if (f->address < lo[d])
			lo[d] = f->address;
		if (f->address > hi[d])
			hi[d] = f->address;
	}
	first = main_dso(ps, dsos, nd);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nd; i++) {
			struct pf_mapping m = { 0 };
			int64_t d = dsos[i];

			if ((pass == 0) != (d == first))
				continue;
			m.filename = d;
			if (seen[d] == 1) {
				m.start = lo[d];
				m.limit = hi[d] == UINT64_MAX ? hi[d] : hi[d] + 1;
			}
			m.has_functions = true;
			m.has_filenames = m.has_line_numbers = ps->any_line;
			m.has_inline_frames = ps->any_inline;
			map_of[d] = profile_add_mapping_idx(p, &m);
		}
	free(seen);
	free(lo);
	free(hi);
	free(dsos);
}

static uint64_t frame_function(struct ps *ps, const struct ps_frame *f)
{
	return profile_add_function_idx(ps->p, f->name, f->name, f->line_set ? f->file : 0, 0);
}

static void build_profile(struct ps *ps)
{
	struct profile *p = ps->p;
	int64_t col_type[PERFSCRIPT_MAX_EVENTS];
	size_t ncol = 0, col_of[PERFSCRIPT_MAX_EVENTS + 1];
	uint64_t *map_of = xcalloc(p->strings.nr + 1, sizeof(*map_of));
	uint64_t *loc_of, *locs = NULL;
	struct pf_line *lines = NULL;
	size_t alloc_lines = 0, alloc_locs = 0;
	int64_t k_comm = profile_str(p, "comm"), k_pid = profile_str(p, "pid");
	int64_t k_tid = profile_str(p, "tid");
	int64_t values[PERFSCRIPT_MAX_EVENTS + 2];

	/* sample types: samples, then one period column per kind of event */
	for (size_t s = 0; s < ps->stacks.nr; s++)
		if (ps->stacks.words[ps->stacks.seqs[s].off + 3] == NONE)
			ps->bare_period = true;	/* a "period" column for these */
	profile_add_sample_type(p, "samples", "count");
	p->default_sample_type = profile_str(p, "samples");
	for (size_t e = 0; ps->any_period && e <= ps->nr_events; e++) {
		const struct event *ev = e < ps->nr_events ? &ps->events[e] : NULL;
		struct strbuf name = STRBUF_INIT;
		int64_t t;
		size_t c;

		if (!ev && !ps->bare_period)
			break;
		if (!ev)
			strbuf_addstr(&name, "period");
		else if (ev->is_cpu)
			strbuf_addstr(&name, "cpu");
		else
			strbuf_add(&name, ev->s, ev->n);
		t = profile_str(p, name.buf);
		for (c = 0; c < ncol && col_type[c] != t; c++)
			;
		if (c == ncol) {
			col_type[ncol++] = t;
			profile_add_sample_type(p, name.buf,
						ev && ev->is_cpu ? "nanoseconds" : "count");
			if (ev && ev->is_cpu)
				p->default_sample_type = t;
		}
		col_of[e] = c;
		strbuf_release(&name);
	}

	build_mappings(ps, map_of);

	/* locations: one per chain (a frame and the frames inlined into it) */
	loc_of = xcalloc(ps->chains.nr + 1, sizeof(*loc_of));
	for (size_t c = 0; c < ps->chains.nr; c++) {
		const struct seq *q = &ps->chains.seqs[c];
		const uint32_t *fr = ps->chains.words + q->off;
		const struct ps_frame *last = &ps->frames[fr[q->n - 1]];
		size_t nline = 0;

		ALLOC_GROW(lines, q->n, alloc_lines);
		for (uint32_t j = 0; j < q->n; j++) {
			const struct ps_frame *f = &ps->frames[fr[j]];
			if (!f->name)
				continue;
			lines[nline++] = (struct pf_line){
				.function_id = frame_function(ps, f),
				.line = f->line_set ? f->line : 0,
			};
		}
		loc_of[c] = profile_add_location(p, last->kind == FK_FRAME && last->dso ?
						 map_of[last->dso] : 0,
						 last->address, nline ? lines : NULL, nline);
	}

	/* samples: one per distinct (comm, pid, tid, event, stack) */
	for (size_t s = 0; s < ps->stacks.nr; s++) {
		const struct seq *q = &ps->stacks.seqs[s];
		const uint32_t *w = ps->stacks.words + q->off;
		struct pf_label labels[3];
		size_t nl = 0, nloc = q->n - 4, nv = 1 + ncol;

		ALLOC_GROW(locs, nloc + 1, alloc_locs);
		for (size_t j = 0; j < nloc; j++)
			locs[j] = loc_of[w[4 + j]];
		if (w[0])
			labels[nl++] = (struct pf_label){ .key = k_comm, .str = w[0] };
		if (w[1] != NONE)
			labels[nl++] = (struct pf_label){ .key = k_pid, .num = w[1] };
		if (w[2] != NONE)
			labels[nl++] = (struct pf_label){ .key = k_tid, .num = w[2] };
		memset(values, 0, sizeof(values));
		values[0] = ps->count[s];
		if (ncol)
			values[1 + col_of[w[3] == NONE ? ps->nr_events : w[3]]] = ps->period[s];
		(void)nv;
		profile_add_sample(p, locs, nloc, values, labels, nl);
	}

	free(lines);
	free(locs);
	free(loc_of);
	free(map_of);
}

/* ---- reading ----------------------------------------------------------- */

static int one_line(struct ps *ps, const char *t, size_t m)
{
	if (!m) {
		end_sample(ps);
		return 0;
	}
	if (is_space(t[0])) {
		trim(&t, &m);
		if (!m) {
			end_sample(ps);
			return 0;
		}
		return indented_line(ps, t, m);
	}
	if (t[0] == '#')
		return 0;
	trim(&t, &m);
	return header_line(ps, t, m);
}

/* A line split off, not parsed yet. */
struct span {
	const char *s, *t;	/* the line; t: a frame line's text */
	size_t n, m;		/* their lengths */
	uint64_t hash;		/* a frame line's */
	bool frame;
};

#define BATCH 16	/* lines split, hashed and looked up ahead of parsing */
#define KEY_AHEAD 8	/* lines ahead whose frame line is fetched from keys */

/* Fetch the line of the first frame in hash's slot (fetched before) ahead. */
static inline void prefetch_key(const struct ps *ps, uint64_t hash)
{
	const struct fslot *sl;

	if (!ps->nr_fslots)
		return;
	sl = &ps->fslots[(uint32_t)hash & (ps->nr_fslots - 1)];
	if (sl->id1)
		__builtin_prefetch(ps->keys.buf + (sl->key >> KEY_LEN_BITS));
}

/*
 * Split lines off s: at most BATCH, each frame line (the common line:
 * indented, ended, no white space at its end) found and hashed in one
 * pass, and its slot in the index fetched ahead, so that parsing the
 * batch waits for memory once, not once a line. *s moves past them;
 * *cut says a line cut by the end stopped it.
 */
static size_t split(struct ps *ps, const char **s, const char *end, bool eof,
		    struct span *sp, bool *cut)
{
	const char *p = *s;
	size_t nb = 0;

	*cut = false;
	while (nb < BATCH && p < end) {
		const char *nl, *t = p;
		struct span *x = &sp[nb];

		while (t < end && is_space(*t))
			t++;
		if (t != p && t < end && (nl = scan_line(t, end, &x->hash)) && nl != t &&
		    !is_space(nl[-1])) {
			x->s = p;
			x->n = (size_t)(nl - p);
			x->t = t;
			x->m = (size_t)(nl - t);
			x->frame = true;
			if (ps->nr_fslots)
				__builtin_prefetch(&ps->fslots[(uint32_t)x->hash & (ps->nr_fslots - 1)]);
			nb++;
			p = nl + 1;
			continue;
		}
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl && !eof) {
			*cut = true;
			break;
		}
		x->s = x->t = p;
		x->n = x->m = nl ? (size_t)(nl - p) : (size_t)(end - p);
		x->frame = false;
		nb++;
		p = nl ? nl + 1 : end;
	}
	*s = p;
	return nb;
}

/*
 * The error of a line of n bytes at s that holds a NUL byte or is too
 * long, else 0. Only its first PERFSCRIPT_MAX_LINE + 1 bytes count: a
 * line cut by a chunk's end may show no more, and the error must not
 * depend on where chunks end.
 */
static int bad_bytes(struct ps *ps, const char *s, size_t n)
{
	size_t k = n > PERFSCRIPT_MAX_LINE ? PERFSCRIPT_MAX_LINE + 1 : n;

	if (ps->nul && ps->nul < s + k)
		return line_error(&ps->in, "contains a NUL byte (is this a binary file?)");
	if (n > PERFSCRIPT_MAX_LINE)
		return line_error(&ps->in, "longer than %zu bytes", PERFSCRIPT_MAX_LINE);
	return 0;
}

/*
 * Parse the whole lines in buf (at the end of the input, the last one
 * too) and keep the line they leave cut at buf's start.
 */
static int drain(struct ps *ps, bool eof)
{
	const char *s = ps->buf, *end;
	struct span sp[BATCH];
	bool cut = false;
	size_t rest;

	if (!ps->len)
		return 0;
	end = ps->buf + ps->len;

	while (s < end && !cut) {
		size_t nb = split(ps, &s, end, eof, sp, &cut);

		for (size_t i = 0; i < nb; i++) {
			const struct span *x = &sp[i];

			if (i + KEY_AHEAD < nb && sp[i + KEY_AHEAD].frame)
				prefetch_key(ps, sp[i + KEY_AHEAD].hash);
			ps->in.lineno++;
			if (bad_bytes(ps, x->s, x->n))
				return -1;
			if (x->frame ? indented_hashed(ps, x->t, x->m, x->hash) :
				       one_line(ps, x->s, x->n))
				return -1;
		}
	}
	if (s >= end) {
		ps->len = 0;
		memset(ps->buf, 0, SCAN_PAD);
		return 0;
	}
	rest = (size_t)(end - s);
	if (rest > PERFSCRIPT_MAX_LINE) {
		ps->in.lineno++;
		return bad_bytes(ps, s, rest);
	}
	if (ps->nul)
		ps->nul -= s - ps->buf;
	memmove(ps->buf, s, rest);
	ps->len = rest;
	memset(ps->buf + ps->len, 0, SCAN_PAD);
	return 0;
}

/* Room in buf for a chunk after the cut line it holds, and SCAN_PAD more. */
static char *room(struct ps *ps)
{
	if (ps->alloc - ps->len < ps->chunk + SCAN_PAD) {
		size_t off = ps->nul ? (size_t)(ps->nul - ps->buf) : 0;

		size_t want = ps->len + ps->chunk + SCAN_PAD;

		/* doubled: a long cut line would have it grow at every chunk */
		ps->alloc = want > 2 * ps->alloc ? want : 2 * ps->alloc;
		ps->buf = xrealloc(ps->buf, ps->alloc);
		if (ps->nul)
			ps->nul = ps->buf + off;
	}
	return ps->buf + ps->len;
}

/* n bytes were put at room(): look for a NUL in them, parse the lines they end. */
static int added(struct ps *ps, size_t n)
{
	const char *at = ps->buf + ps->len;

	if (!ps->nul)
		ps->nul = memchr(at, '\0', n);
	ps->len += n;
	memset(ps->buf + ps->len, 0, SCAN_PAD);
	/* buf holds no '\n' but in what came: the cut line goes on? */
	if (!memchr(at, '\n', n) && ps->len <= PERFSCRIPT_MAX_LINE)
		return 0;
	return drain(ps, false);
}

static int feed(struct ps *ps, const char *data, size_t len)
{
	while (len) {
		size_t n = len < ps->chunk ? len : ps->chunk;

		memcpy(room(ps), data, n);
		data += n;
		len -= n;
		if (added(ps, n))
			return -1;
	}
	return 0;
}

static int read_all(struct ps *ps, int fd)
{
	for (;;) {
		char *at = room(ps);
		ssize_t n = read(fd, at, ps->chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error("cannot read '%s': %s", ps->in.what, strerror(errno));
		if (!n)
			return 0;
		if (added(ps, (size_t)n))
			return -1;
	}
}

static void ps_init(struct ps *ps, struct profile *p, const char *what, size_t chunk)
{
	memset(ps, 0, sizeof(*ps));
	ps->p = p;
	ps->in.what = what;
	ps->last_event = NONE;
	strbuf_init(&ps->keys, 0);
	strbuf_init(&ps->last_comm, 0);
	strbuf_init(&ps->last_event_raw, 0);
	strbuf_init(&ps->hc.text, 0);
	ps->chunk = chunk ? chunk : CHUNK;
}

/* The end of the input: its last line, the profile; then what was held goes. */
static int ps_finish(struct ps *ps, int ret)
{
	if (!ret)
		ret = drain(ps, true);
	if (!ret) {
		end_sample(ps);
		count_pending(ps);
		build_profile(ps);
		ret = profile_validate(ps->p);
	}
	free(ps->frames);
	strbuf_release(&ps->keys);
	strbuf_release(&ps->last_comm);
	strbuf_release(&ps->last_event_raw);
	strbuf_release(&ps->hc.text);
	free(ps->fslots);
	seqtab_release(&ps->chains);
	seqtab_release(&ps->stacks);
	free(ps->count);
	free(ps->period);
	free(ps->cur);
	free(ps->key);
	free(ps->pkey);
	free(ps->buf);
	for (size_t i = 0; i < ps->nr_events; i++)
		free(ps->events[i].s);
	if (ret)
		profile_clear(ps->p);
	return ret;
}

int perfscript_parse_chunked(struct profile *p, const char *buf, size_t len,
			     const char *what, size_t chunk)
{
	struct ps ps;

	ps_init(&ps, p, what, chunk);
	return ps_finish(&ps, feed(&ps, buf, len));
}

int perfscript_parse(struct profile *p, const char *buf, size_t len, const char *what)
{
	return perfscript_parse_chunked(p, buf, len, what, 0);
}

int perfscript_read_fd(struct profile *p, int fd, const void *head, size_t head_len,
		       const char *what)
{
	struct ps ps;
	int ret;

	ps_init(&ps, p, what, 0);
	ret = feed(&ps, head, head_len);
	if (!ret)
		ret = read_all(&ps, fd);
	return ps_finish(&ps, ret);
}

bool perfscript_sniff(const void *data, size_t len)
{
	const char *buf = data, *s = buf, *end;
	enum { AT_START, AT_BLANK, AT_HEADER, AT_OTHER } prev = AT_START;
	struct frame_text ft;
	struct header h;

	if (len > 65536)
		len = 65536;
	end = buf + len;
	if (memchr(buf, '\0', len))
		return false;
	for (int lines = 0; s < end && lines < 256; lines++) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		const char *t = s;
		size_t m = n;
		bool indented = n && is_space(t[0]), tab = n && t[0] == '\t';

		if (!nl && s != buf)
			break;	/* a line cut by the window */
		s += n + 1;
		trim(&t, &m);
		if (!m) {
			prev = AT_BLANK;
			continue;
		}
		if (t[0] == '#' && !indented)
			continue;
		if (indented && parse_frame_text(t, m, &ft) && (tab || ft.dso) &&
		    (prev == AT_HEADER || (tab && prev != AT_OTHER)))
			return true;
		if (parse_header(t, m, &h)) {
			if (h.anchored && h.rest_len &&
			    parse_frame_text(h.rest, h.rest_len, &ft) && ft.sym_len)
				return true;
			prev = AT_HEADER;
			continue;
		}
		prev = AT_OTHER;
	}
	return false;
}
