/*
 * symbolize-driver: the hotloop side of bench/symbolize. Reads file offsets
 * (hex, one a line) for one ELF file, symbolizes them all with lib/symbolize
 * and writes one line per address: offset, innermost function, file:line,
 * the depth of the inline chain and the chain (name@file:line|...). The time
 * taken (opening the file included, writing the answers not) goes to stderr.
 * The answers are kept in one array of frames and written through a small
 * buffer, as a command would print them: the bench times the whole run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "symbolize.h"

static void add_dec(struct strbuf *sb, unsigned v)
{
	char num[16], *p = num + sizeof(num);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	strbuf_add(sb, p, (size_t)(num + sizeof(num) - p));
}

/* "name<sep>file:line", "??" for an unknown file. */
static void add_location(struct strbuf *sb, const char *name, char sep, const char *file, int line)
{
	strbuf_addstr(sb, name);
	strbuf_addch(sb, sep);
	strbuf_addstr(sb, *file ? file : "??");
	strbuf_addch(sb, ':');
	add_dec(sb, line < 0 ? 0 : (unsigned)line);
}

/* Where the written text goes: flushed to 'out' when it holds OUT_CHUNK bytes. */
#define OUT_CHUNK (64 << 10)

static void flush_text(struct strbuf *text, FILE *out, size_t keep)
{
	if (text->len < keep)
		return;
	fwrite(text->buf, 1, text->len, out);
	strbuf_reset(text);
}

static void add_hex(struct strbuf *sb, uint64_t v)
{
	char num[20], *p = num + sizeof(num);

	do
		*--p = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	strbuf_add(sb, p, (size_t)(num + sizeof(num) - p));
}

int main(int argc, char **argv)
{
	int *counts;
	struct sym_frame *all = NULL;
	size_t nr_all = 0, alloc_all = 0;
	struct strbuf in = STRBUF_INIT, text = STRBUF_INIT;
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame frames[16];
	uint64_t *offs = NULL, t0, t1;
	size_t nr = 0, alloc = 0, resolved = 0, nframes = 0;
	FILE *out;
	char *p, *end;

	if (argc != 4) {
		fprintf(stderr, "usage: symbolize-driver BINARY OFFSETS-FILE OUT-FILE\n");
		return HL_EXIT_USAGE;
	}
	if (read_file(&in, argv[2], 1 << 28))
		return HL_EXIT_FAILURE;
	for (p = in.buf; *p; p = end) {
		uint64_t v;

		while (*p == '\n' || *p == ' ')
			p++;
		if (!*p)
			break;
		errno = 0;
		v = strtoull(p, &end, 16);
		if (end == p || errno) {
			fprintf(stderr, "symbolize-driver: bad offset near '%.20s'\n", p);
			return HL_EXIT_FAILURE;
		}
		ALLOC_GROW(offs, nr + 1, alloc);
		offs[nr++] = v;
	}
	out = fopen(argv[3], "w");
	if (!out) {
		fprintf(stderr, "symbolize-driver: cannot open '%s': %s\n", argv[3], strerror(errno));
		return HL_EXIT_FAILURE;
	}

	counts = xcalloc(nr ? nr : 1, sizeof(*counts));
	t0 = now_ns();
	s = symbolizer_new();
	d = symbolizer_dso(s, argv[1], NULL);
	for (size_t i = 0; i < nr; i++) {
		int n = sym_lookup(d, offs[i], frames, (int)ARRAY_SIZE(frames));

		if (n > 0) {
			resolved++;
			nframes += (size_t)n;
		}
		counts[i] = n;
		if (n > 0) {
			ALLOC_GROW(all, nr_all + (size_t)n, alloc_all);
			memcpy(all + nr_all, frames, (size_t)n * sizeof(*frames));
			nr_all += (size_t)n;
		}
	}
	t1 = now_ns();

	/*
	 * Written after the clock stops (printing is not symbolizing), through
	 * one buffer: a fprintf() per field would cost more than the lookups.
	 */
	strbuf_grow(&text, OUT_CHUNK + 4096);
	for (size_t i = 0, at = 0; i < nr; i++) {
		const struct sym_frame *f = all + at;
		int n = counts[i];

		flush_text(&text, out, OUT_CHUNK);
		add_hex(&text, offs[i]);
		strbuf_addch(&text, '\t');
		if (n <= 0) {
			strbuf_addstr(&text, "??\t??:0\t0\t??@??:0\n");
			continue;
		}
		add_location(&text, f[0].name, '\t', f[0].file, f[0].line);
		at += (size_t)n;
		strbuf_addch(&text, '\t');
		add_dec(&text, (unsigned)n);
		strbuf_addch(&text, '\t');
		for (int k = 0; k < n; k++) {
			if (k)
				strbuf_addch(&text, '|');
			add_location(&text, f[k].name, '@', f[k].file, f[k].line);
		}
		strbuf_addch(&text, '\n');
	}
	flush_text(&text, out, 0);
	fprintf(stderr, "hotloop: %zu addresses, %zu resolved, %zu frames in %.1f ms\n",
		nr, resolved, nframes, (double)(t1 - t0) / 1e6);
	symbolizer_free(s);
	free(counts);
	free(all);
	free(offs);
	strbuf_release(&in);
	strbuf_release(&text);
	if (fclose(out)) {
		fprintf(stderr, "symbolize-driver: cannot write '%s'\n", argv[3]);
		return HL_EXIT_FAILURE;
	}
	return HL_EXIT_OK;
}
