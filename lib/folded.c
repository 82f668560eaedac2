/*
 * folded.c: reading and writing folded stacks (see folded.h). The reader
 * treats its input as hostile: line length and stack depth are capped,
 * counts are checked for sign and overflow, and every error names its line.
 * The writer merges stacks by location first, so its cost follows the
 * number of distinct stacks rather than the number of samples.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "lines.h"
#include "profile.h"
#include "stacks.h"
#include "folded.h"

#define SUFFIX_LEN 4
static const char kernel_suffix[] = "_[k]";
static const char inlined_suffix[] = "_[i]";
static const char kernel_mapping[] = "[kernel.kallsyms]";

/* ---- reading ---------------------------------------------------------- */

struct frame_ref {
	const char *s;
	size_t len;
	bool kernel, inlined;
};

struct parser {
	struct profile *p;
	struct input_pos in;	/* the input's name, the line */
	int ncounts;
	uint64_t user_map, kernel_map;
	bool any_inlined;
	struct frame_ref *frames;
	size_t alloc_frames;
	struct pf_line *lines;
	size_t alloc_lines;
	uint64_t *locs;
	size_t alloc_locs;
};

enum count_status { COUNT_OK, COUNT_NONE, COUNT_NEGATIVE, COUNT_FRACTION, COUNT_RANGE };

/* Start of the last white-space separated token of s[0..len). */
static size_t last_token(const char *s, size_t len)
{
	while (len && !is_space(s[len - 1]))
		len--;
	return len;
}

static enum count_status parse_count_token(const char *s, size_t len, int64_t *v)
{
	bool neg = false, dot = false, digits = false, over = false;
	uint64_t n = 0;
	size_t i = 0;

	if (len && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	for (; i < len; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			unsigned d = (unsigned)(s[i] - '0');
			digits = true;
			if (dot || over)
				continue;
			if (n > ((uint64_t)INT64_MAX - d) / 10)
				over = true;
			else
				n = n * 10 + d;
		} else if (s[i] == '.' && !dot) {
			dot = true;
		} else {
			return COUNT_NONE;
		}
	}
	if (!digits)
		return COUNT_NONE;
	if (neg)
		return COUNT_NEGATIVE;
	if (dot)
		return COUNT_FRACTION;
	if (over)
		return COUNT_RANGE;
	*v = (int64_t)n;
	return COUNT_OK;
}

static int count_error(struct parser *ps, enum count_status st, const char *tok, size_t len)
{
	int shown = len > 40 ? 40 : (int)len;

	switch (st) {
	case COUNT_NEGATIVE:
		return line_error(&ps->in, "negative count '%.*s'", shown, tok);
	case COUNT_FRACTION:
		return line_error(&ps->in, "count '%.*s' is not a whole number", shown, tok);
	case COUNT_RANGE:
		return line_error(&ps->in, "count '%.*s' is out of range (at most %lld)",
				  shown, tok, (long long)INT64_MAX);
	default:
		return line_error(&ps->in, "no count at the end of the line (expected 'frame;frame;... COUNT')");
	}
}

/*
 * First pass: enforce the line cap and refuse NUL bytes, and find out
 * whether every line ends in two counts (the differential form). Deciding
 * on every line, not the first, keeps a frame name that happens to end in
 * " 12" from turning a one-column file into a two-column one.
 */
static int scan_lines(struct parser *ps, const char *buf, size_t len, bool *two)
{
	size_t pos = 0, nonblank = 0, n;
	const char *s;

	*two = true;
	ps->in.lineno = 0;
	while (next_line(buf, len, &pos, &s, &n)) {
		size_t t, end;
		int64_t v;

		ps->in.lineno++;
		if (n > FOLDED_MAX_LINE)
			return line_error(&ps->in, "longer than %zu bytes", FOLDED_MAX_LINE);
		if (memchr(s, '\0', n))
			return line_error(&ps->in, "contains a NUL byte (is this a binary file?)");
		trim(&s, &n);
		if (!n || !*two)
			continue;
		nonblank++;
		t = last_token(s, n);
		if (!t || parse_count_token(s + t, n - t, &v) != COUNT_OK) {
			*two = false;
			continue;
		}
		end = t;
		while (end && is_space(s[end - 1]))
			end--;
		t = last_token(s, end);
		if (!t || parse_count_token(s + t, end - t, &v) != COUNT_OK)
			*two = false;
	}
	if (!nonblank)
		*two = false;
	return 0;
}

static uint64_t parser_mapping(struct parser *ps, bool kernel)
{
	uint64_t *id = kernel ? &ps->kernel_map : &ps->user_map;

	if (!*id) {
		struct pf_mapping m = {
			.filename = profile_str(ps->p, kernel ? kernel_mapping : ""),
			.has_functions = true,
		};
		*id = profile_add_mapping_idx(ps->p, &m);
	}
	return *id;
}

static uint64_t parser_function(struct parser *ps, const struct frame_ref *f)
{
	int64_t name = f->len ? strtab_intern(&ps->p->strings, f->s, f->len)
			      : profile_str(ps->p, "[unknown]");

	return profile_add_function_idx(ps->p, name, name, 0, 0);
}

static bool has_suffix(const char *s, size_t len, const char *suffix)
{
	return len >= SUFFIX_LEN && !memcmp(s + len - SUFFIX_LEN, suffix, SUFFIX_LEN);
}

/* Parse one trimmed, non-blank line and add its sample. */
static int parse_line(struct parser *ps, const char *s, size_t n)
{
	int64_t v[2] = { 0, 0 };
	size_t end = n, nf = 0, nloc = 0, nline = 0, i = 0;

	for (int c = ps->ncounts - 1; c >= 0; c--) {
		size_t t = last_token(s, end);
		enum count_status st = parse_count_token(s + t, end - t, &v[c]);

		if (st != COUNT_OK)
			return count_error(ps, st, s + t, end - t);
		end = t;
		while (end && is_space(s[end - 1]))
			end--;
		if (!end)
			return line_error(&ps->in, "no stack before the count");
	}

	for (;;) {
		const char *f = s + i, *semi = memchr(f, ';', end - i);
		size_t flen = semi ? (size_t)(semi - f) : end - i;
		struct frame_ref *fr;

		if (nf == FOLDED_MAX_DEPTH)
			return line_error(&ps->in, "stack deeper than %d frames", FOLDED_MAX_DEPTH);
		ALLOC_GROW(ps->frames, nf + 1, ps->alloc_frames);
		fr = &ps->frames[nf++];
		fr->s = f;
		fr->len = flen;
		fr->kernel = fr->inlined = false;
		if (has_suffix(f, flen, inlined_suffix)) {
			fr->inlined = true;
			fr->len -= SUFFIX_LEN;
		} else if (has_suffix(f, flen, kernel_suffix)) {
			fr->kernel = true;
			fr->len -= SUFFIX_LEN;
		}
		if (!semi)
			break;
		i += flen + 1;
	}

	/*
	 * Leaf first: inlined frames join the location of the next frame
	 * toward the root (pprof keeps an inline chain in one location,
	 * innermost first). An inlined frame at the root has no caller to
	 * join and gets a location of its own.
	 */
	for (size_t k = nf; k-- > 0; ) {
		const struct frame_ref *fr = &ps->frames[k];

		ALLOC_GROW(ps->lines, nline + 1, ps->alloc_lines);
		ps->lines[nline++] = (struct pf_line){ .function_id = parser_function(ps, fr) };
		if (fr->inlined) {
			ps->any_inlined = true;
			if (k)
				continue;
		}
		ALLOC_GROW(ps->locs, nloc + 1, ps->alloc_locs);
		ps->locs[nloc++] = profile_add_location(ps->p, parser_mapping(ps, fr->kernel),
							0, ps->lines, nline);
		nline = 0;
	}
	profile_add_sample(ps->p, ps->locs, nloc, v, NULL, 0);
	return 0;
}

int folded_parse(struct profile *p, const char *buf, size_t len, const char *what)
{
	struct parser ps = { .p = p, .in = { .what = what } };
	size_t pos = 0, n;
	const char *s;
	bool two;
	int ret = -1;

	if (scan_lines(&ps, buf, len, &two))
		goto out;
	ps.ncounts = two ? 2 : 1;
	if (two)
		profile_add_sample_type(p, "base", "count");
	profile_add_sample_type(p, "samples", "count");
	p->default_sample_type = profile_str(p, "samples");
	parser_mapping(&ps, false);

	ps.in.lineno = 0;
	while (next_line(buf, len, &pos, &s, &n)) {
		ps.in.lineno++;
		trim(&s, &n);
		if (n && parse_line(&ps, s, n))
			goto out;
	}
	if (ps.any_inlined)
		for (size_t i = 0; i < p->nr_mappings; i++)
			p->mappings[i].has_inline_frames = true;
	ret = profile_validate(p);
out:
	free(ps.frames);
	free(ps.lines);
	free(ps.locs);
	if (ret)
		profile_clear(p);
	return ret;
}

static bool is_binary(unsigned char c)
{
	return (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') ||
	       c == 0x7f;
}

bool folded_sniff(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t binary = 0, first_line;

	/*
	 * A pprof message is full of small field tags and lengths and starts
	 * with one; text has none, or a stray few that the folded parser then
	 * reports by line. A clean first line settles short inputs.
	 */
	if (len > 4096)
		len = 4096;
	for (first_line = 0; first_line < len && b[first_line] != '\n'; first_line++)
		if (is_binary(b[first_line]))
			break;
	if (first_line && (first_line == len || b[first_line] == '\n'))
		return true;
	for (size_t i = 0; i < len; i++)
		binary += is_binary(b[i]);
	return binary * 100 <= len;
}

/* ---- writing ---------------------------------------------------------- */

static void add_frame(struct strbuf *sb, const struct profile *p, const struct pf_frame *f)
{
	const unsigned char *name = (const unsigned char *)frame_name(p, f);
	size_t start = sb->len;

	strbuf_addstr(sb, (const char *)name);
	for (size_t i = start; i < sb->len; i++) {
		unsigned char c = (unsigned char)sb->buf[i];
		if (c == ';')
			sb->buf[i] = ':';
		else if (c < 0x20 || c == 0x7f)
			sb->buf[i] = ' ';
	}
	if (f->inlined)
		strbuf_addstr(sb, inlined_suffix);
	else if (frame_is_kernel(p, f))
		strbuf_addstr(sb, kernel_suffix);
}

struct text_value {
	const char *text;
	int64_t value;
};

static int cmp_text(const void *a, const void *b)
{
	return strcmp(((const struct text_value *)a)->text, ((const struct text_value *)b)->text);
}

int folded_write(const struct profile *p, int idx, struct strbuf *out)
{
	struct strbuf segs = STRBUF_INIT, stacks = STRBUF_INIT, lines = STRBUF_INIT;
	struct stack_sum *sums = NULL;
	struct text_value *tv;
	size_t *seg_off, *seg_len, *text_off, nsums, ntext = 0, nmerged = 0;

	if (idx < 0 || (size_t)idx >= p->nr_sample_type)
		return error("cannot write folded stacks: the profile has no sample type %d", idx);

	/* each location's frames, root first, as text */
	seg_off = xcalloc(p->nr_locations + 1, sizeof(*seg_off));
	seg_len = xcalloc(p->nr_locations + 1, sizeof(*seg_len));
	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct pf_location *l = &p->locations[i];

		seg_off[i] = segs.len;
		for (uint32_t j = l->nline ? l->nline : 1; j-- > 0; ) {
			struct pf_frame f = profile_location_frame(p, l, j);

			if (segs.len > seg_off[i])
				strbuf_addch(&segs, ';');
			add_frame(&segs, p, &f);
		}
		seg_len[i] = segs.len - seg_off[i];
	}

	/* each distinct stack as text (NUL-terminated in one buffer) */
	nsums = stacks_merge(p, idx, &sums);
	text_off = xcalloc(nsums + 1, sizeof(*text_off));
	tv = xcalloc(nsums + 1, sizeof(*tv));
	for (size_t k = 0; k < nsums; k++) {
		const struct pf_sample *s = &p->samples[sums[k].sample];
		const uint64_t *locs = profile_sample_locs(p, s);
		size_t off = stacks.len;

		if (sums[k].value <= 0)
			continue;
		for (uint32_t j = s->nloc; j-- > 0; ) {
			uint64_t id = locs[j];
			if (!id || id > p->nr_locations)
				continue;
			if (stacks.len > off)
				strbuf_addch(&stacks, ';');
			strbuf_add(&stacks, segs.buf + seg_off[id - 1], seg_len[id - 1]);
		}
		if (stacks.len == off)
			continue;	/* a sample without frames has no line */
		strbuf_addch(&stacks, '\0');
		text_off[ntext] = off;
		tv[ntext++].value = sums[k].value;
	}
	for (size_t k = 0; k < ntext; k++)
		tv[k].text = stacks.buf + text_off[k];

	/* merge stacks that read the same (different addresses, same names) */
	qsort(tv, ntext, sizeof(*tv), cmp_text);
	for (size_t k = 0; k < ntext; k++) {
		if (nmerged && !strcmp(tv[nmerged - 1].text, tv[k].text))
			tv[nmerged - 1].value = sat_add(tv[nmerged - 1].value, tv[k].value);
		else
			tv[nmerged++] = tv[k];
	}

	/* lines in byte order, so the output is what `LC_ALL=C sort` gives */
	for (size_t k = 0; k < nmerged; k++) {
		text_off[k] = lines.len;
		strbuf_addf(&lines, "%s %lld", tv[k].text, (long long)tv[k].value);
		strbuf_addch(&lines, '\0');
	}
	for (size_t k = 0; k < nmerged; k++)
		tv[k].text = lines.buf + text_off[k];
	qsort(tv, nmerged, sizeof(*tv), cmp_text);
	for (size_t k = 0; k < nmerged; k++) {
		strbuf_addstr(out, tv[k].text);
		strbuf_addch(out, '\n');
	}

	free(tv);
	free(text_off);
	free(sums);
	free(seg_off);
	free(seg_len);
	strbuf_release(&segs);
	strbuf_release(&stacks);
	strbuf_release(&lines);
	return 0;
}
