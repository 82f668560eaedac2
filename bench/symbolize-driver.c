/*
 * symbolize-driver: the hotloop side of bench/symbolize. Reads file offsets
 * (hex, one a line) for one ELF file, symbolizes them all with lib/symbolize
 * and writes the answers as addr2line -a -f -i writes its own: per address
 * a line "0x<address>", then each frame of its inline chain, innermost
 * first, as a line with the function and a line "file:line" ("??" for what
 * is not known), so the bench reads both tools' answers with one parser.
 * They go out through a 64 KiB buffer as they come, as a command prints.
 * The time from opening the file to the last byte written goes to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "symbolize.h"

#define OUT_SIZE (64 << 10)

/* The answers being written: flushed to 'f' before an answer might not fit. */
struct out {
	FILE *f;
	size_t len;
	char buf[OUT_SIZE];
};

static void out_flush(struct out *o)
{
	fwrite(o->buf, 1, o->len, o->f);
	o->len = 0;
}

/* Room for n more bytes: flushed first when they do not fit. */
static char *out_room(struct out *o, size_t n)
{
	if (o->len + n > sizeof(o->buf))
		out_flush(o);
	return n <= sizeof(o->buf) ? o->buf + o->len : NULL;
}

static void out_add(struct out *o, const char *s, size_t n)
{
	char *p = out_room(o, n);

	if (!p) {	/* longer than the buffer: straight out */
		fwrite(s, 1, n, o->f);
		return;
	}
	memcpy(p, s, n);
	o->len += n;
}

static void out_str(struct out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

/* ":<line>\n" */
static void out_line_number(struct out *o, int line)
{
	char num[16], *p = num + sizeof(num);
	unsigned v = line < 0 ? 0 : (unsigned)line;

	*--p = '\n';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	*--p = ':';
	out_add(o, p, (size_t)(num + sizeof(num) - p));
}

/* "0x<16 hex digits>\n", as addr2line -a */
static void out_address(struct out *o, uint64_t v)
{
	char num[19];

	num[0] = '0';
	num[1] = 'x';
	for (int i = 17; i >= 2; i--, v >>= 4)
		num[i] = "0123456789abcdef"[v & 15];
	num[18] = '\n';
	out_add(o, num, sizeof(num));
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int main(int argc, char **argv)
{
	static struct out out;
	struct strbuf in = STRBUF_INIT;
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame frames[16];
	uint64_t *offs = NULL, t0, t1;
	size_t nr = 0, alloc = 0, resolved = 0, nframes = 0;
	char *p, *end;

	if (argc != 4) {
		fprintf(stderr, "usage: symbolize-driver BINARY OFFSETS-FILE OUT-FILE\n");
		return HL_EXIT_USAGE;
	}
	if (read_file(&in, argv[2], 1 << 28))
		return HL_EXIT_FAILURE;
	/* hex digits a line (strtoull() with its locale took a tenth of the run) */
	for (p = in.buf; *p; p = end) {
		uint64_t v = 0;
		int digits = 0;

		while (*p == '\n' || *p == ' ')
			p++;
		if (!*p)
			break;
		for (end = p; digits <= 16; end++, digits++) {
			int d = hex_digit(*end);

			if (d < 0)
				break;
			v = v << 4 | (uint64_t)d;
		}
		if (!digits || digits > 16 || (*end && *end != '\n' && *end != ' ')) {
			fprintf(stderr, "symbolize-driver: bad offset near '%.20s'\n", p);
			return HL_EXIT_FAILURE;
		}
		ALLOC_GROW(offs, nr + 1, alloc);
		offs[nr++] = v;
	}
	out.f = fopen(argv[3], "w");
	if (!out.f) {
		fprintf(stderr, "symbolize-driver: cannot open '%s': %s\n", argv[3], strerror(errno));
		return HL_EXIT_FAILURE;
	}

	t0 = now_ns();
	s = symbolizer_new();
	d = symbolizer_dso(s, argv[1], NULL);
	for (size_t i = 0; i < nr; i++) {
		int n = sym_lookup(d, offs[i], frames, (int)ARRAY_SIZE(frames));

		out_address(&out, offs[i]);
		if (n <= 0) {
			out_str(&out, "??\n??:0\n");
			continue;
		}
		resolved++;
		nframes += (size_t)n;
		for (int k = 0; k < n; k++) {
			out_str(&out, frames[k].name);
			out_add(&out, "\n", 1);
			out_str(&out, *frames[k].file ? frames[k].file : "??");
			out_line_number(&out, frames[k].line);
		}
	}
	out_flush(&out);
	t1 = now_ns();

	fprintf(stderr, "hotloop: %zu addresses, %zu resolved, %zu frames in %.1f ms (with writing them)\n",
		nr, resolved, nframes, (double)(t1 - t0) / 1e6);
	symbolizer_free(s);
	free(offs);
	strbuf_release(&in);
	if (fclose(out.f)) {
		fprintf(stderr, "symbolize-driver: cannot write '%s'\n", argv[3]);
		return HL_EXIT_FAILURE;
	}
	return HL_EXIT_OK;
}
