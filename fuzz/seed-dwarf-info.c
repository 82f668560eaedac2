/*
 * seed-dwarf-info.c: writes the seed corpus of fuzz-dwarf-info into a
 * directory: the DWARF sections of small programs, in the target's
 * format (fuzz/fuzz-dwarf-info.c), built with gcc (DWARF 4 and 5, C and
 * C++) and clang (DWARF 5: string, address and range list indexes) when
 * they and objcopy are at hand; else nothing (the target starts from an
 * empty input).
 * usage: seed-dwarf-info DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "strbuf.h"

static const char prog[] =
	"static inline int h(int x) { for (int i = 0; i < 4; i++) x = x * 3 + i; return x; }\n"
	"struct s { int a; union { int b; float c; } u; };\n"
	"__attribute__((noinline)) int w(struct s *p) { { int y = h(p->a); p->u.b = h(y); } return p->u.b; }\n"
	"int main(int c, char **v) { struct s x = { c, { 0 } }; (void)v; return w(&x) & 1; }\n";

/* In the target's order: the seven sections with a length, then .debug_info. */
static const char *const sections[] = {
	"abbrev", "str", "line_str", "str_offsets", "addr", "ranges", "rnglists", "info",
};

/* The seed from the sections dumped into 'dir': 0, or -1 when it cannot be made. */
static int pack(const char *dir, unsigned char flags, struct strbuf *seed)
{
	struct strbuf sec[ARRAY_SIZE(sections)];
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		char *path = xstrfmt("%s/%s", dir, sections[i]);

		strbuf_init(&sec[i], 0);
		/* a section the program does not have is empty */
		if (!access(path, R_OK) && read_file(&sec[i], path, 1 << 20))
			ret = -1;
		if (i + 1 < ARRAY_SIZE(sections) && sec[i].len > 0xffff)
			ret = -1;
		free(path);
	}
	strbuf_reset(seed);
	strbuf_addch(seed, (char)flags);
	for (size_t i = 0; i + 1 < ARRAY_SIZE(sections); i++) {
		strbuf_addch(seed, (char)(sec[i].len & 0xff));
		strbuf_addch(seed, (char)(sec[i].len >> 8));
	}
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		strbuf_add(seed, sec[i].buf, sec[i].len);
		strbuf_release(&sec[i]);
	}
	return ret;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name, *cc, *flags;
		bool cxx;
	} builds[] = {
		{ "gcc-v5", "cc", "-O2 -g -gdwarf-5", false },
		{ "gcc-v4", "cc", "-O2 -g -gdwarf-4", false },
		{ "gcc-v4-O0", "cc", "-O0 -g -gdwarf-4", false },
		{ "gxx-v5", "c++", "-O2 -g", true },
		{ "clang-v5", "clang", "-O2 -g -gdwarf-5", false },
		{ "clangxx-v5", "clang++", "-O2 -g -gdwarf-5", true },
	};
	struct strbuf seed = STRBUF_INIT;
	char tmp[] = "/tmp/seed-dwarf-info-XXXXXX";
	int made = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: seed-dwarf-info DIR\n");
		return 2;
	}
	if (!mkdtemp(tmp))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(builds); i++) {
		const char *ext = builds[i].cxx ? "cc" : "c";
		char *src = xstrfmt("%s/m.%s", tmp, ext), *cmd, *out;
		FILE *f = fopen(src, "w");

		if (!f || fputs(prog, f) < 0 || fclose(f))
			return 1;
		cmd = xstrfmt("cd %s && rm -f m abbrev str line_str str_offsets addr ranges rnglists info && "
			      "%s %s -o m m.%s 2>/dev/null && for s in %s %s %s %s %s %s %s %s; do "
			      "objcopy --dump-section .debug_$s=$s m 2>/dev/null || :; done",
			      tmp, builds[i].cc, builds[i].flags, ext, sections[0], sections[1],
			      sections[2], sections[3], sections[4], sections[5], sections[6],
			      sections[7]);
		out = xstrfmt("%s/%s", argv[1], builds[i].name);
		/* flags: a C unit's types are skipped */
		if (!system(cmd) && !pack(tmp, builds[i].cxx ? 0 : 2, &seed) &&
		    !write_file_atomic(out, seed.buf, seed.len))
			made++;
		free(cmd);
		free(out);
		free(src);
	}
	{
		char *rm = xstrfmt("rm -rf '%s'", tmp);

		if (system(rm))
			fprintf(stderr, "seed-dwarf-info: cannot remove '%s'\n", tmp);
		free(rm);
	}
	strbuf_release(&seed);
	if (!made)
		fprintf(stderr, "seed-dwarf-info: no compiler: no seeds\n");
	return 0;
}
