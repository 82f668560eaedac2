/*
 * symbolize-driver: the hotloop side of bench/symbolize. Reads file offsets
 * (hex, one a line) for one ELF file, symbolizes them all with lib/symbolize
 * and writes one line per address: offset, innermost function, file:line,
 * the depth of the inline chain and the chain (name@file:line|...). The time
 * taken (opening the file included, writing the answers not) goes to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "symbolize.h"

/* "name<sep>file:line", "??" for an unknown file. */
static void add_location(struct strbuf *sb, const char *name, char sep, const char *file, int line)
{
	char num[16], *p = num + sizeof(num);
	unsigned v = line < 0 ? 0 : (unsigned)line;

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	*--p = ':';
	strbuf_addstr(sb, name);
	strbuf_addch(sb, sep);
	strbuf_addstr(sb, *file ? file : "??");
	strbuf_add(sb, p, (size_t)(num + sizeof(num) - p));
}

/* One address's answer, kept until the clock stops. */
struct answer {
	int n;
	struct sym_frame f[16];
};

int main(int argc, char **argv)
{
	struct answer *lines;
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

	lines = xcalloc(nr ? nr : 1, sizeof(*lines));
	t0 = now_ns();
	s = symbolizer_new();
	d = symbolizer_dso(s, argv[1], NULL);
	for (size_t i = 0; i < nr; i++) {
		int n = sym_lookup(d, offs[i], frames, (int)ARRAY_SIZE(frames));

		if (n > 0) {
			resolved++;
			nframes += (size_t)n;
		}
		lines[i].n = n;
		memcpy(lines[i].f, frames, (size_t)(n > 0 ? n : 0) * sizeof(*frames));
	}
	t1 = now_ns();

	/*
	 * Written after the clock stops (printing is not symbolizing), into
	 * one buffer: a fprintf() per field would cost more than the lookups.
	 */
	for (size_t i = 0; i < nr; i++) {
		const struct sym_frame *f = lines[i].f;
		int n = lines[i].n;

		strbuf_addf(&text, "%" PRIx64 "\t", offs[i]);
		if (n <= 0) {
			strbuf_addstr(&text, "??\t??:0\t0\t??@??:0\n");
			continue;
		}
		add_location(&text, f[0].name, '\t', f[0].file, f[0].line);
		strbuf_addf(&text, "\t%d\t", n);
		for (int k = 0; k < n; k++) {
			if (k)
				strbuf_addch(&text, '|');
			add_location(&text, f[k].name, '@', f[k].file, f[k].line);
		}
		strbuf_addch(&text, '\n');
	}
	fwrite(text.buf, 1, text.len, out);
	fprintf(stderr, "hotloop: %zu addresses, %zu resolved, %zu frames in %.1f ms\n",
		nr, resolved, nframes, (double)(t1 - t0) / 1e6);
	symbolizer_free(s);
	free(lines);
	free(offs);
	strbuf_release(&in);
	strbuf_release(&text);
	if (fclose(out)) {
		fprintf(stderr, "symbolize-driver: cannot write '%s'\n", argv[3]);
		return HL_EXIT_FAILURE;
	}
	return HL_EXIT_OK;
}
