/*
 * seed-dwarf-line.c: writes the seed corpus of fuzz-dwarf-line into a
 * directory: the .debug_line of a small program built with cc -g as DWARF
 * 2, 4 and 5 (each behind the byte that says 8-byte addresses, little
 * endian), when a C compiler and objcopy are at hand; else one hand-made
 * DWARF 4 table.
 * usage: seed-dwarf-line DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A DWARF 4 table: one file, set_address, two special opcodes, end_sequence. */
static const unsigned char hand[] = {
	0x01,					/* the target's selector: 8-byte addresses */
	0x35, 0, 0, 0,				/* unit_length */
	4, 0,					/* version */
	0x1f, 0, 0, 0,				/* header_length */
	1, 1, 1, 0xfb, 14, 13,			/* min_insn, max_ops, is_stmt, line_base, line_range, opcode_base */
	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1,	/* standard_opcode_lengths */
	'i', 'n', 'c', 0, 0,			/* include_directories */
	'a', '.', 'c', 0, 1, 0, 0, 0,		/* file_names */
	0, 9, 2, 0x10, 0, 0, 0, 0, 0, 0, 0,	/* DW_LNE_set_address 0x10 */
	0x14, 0x21,				/* two rows */
	0, 1, 1,				/* DW_LNE_end_sequence */
};

static int write_seed(const char *dir, const char *name, const void *buf, size_t len)
{
	char *path = xstrfmt("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	int ret = f && fwrite(buf, 1, len, f) == len ? 0 : -1;

	if (f && fclose(f))
		ret = -1;
	free(path);
	return ret;
}

int main(int argc, char **argv)
{
	static const char *versions[] = { "2", "4", "5" };
	char *dir;
	int made = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: seed-dwarf-line DIR\n");
		return 2;
	}
	if (write_seed(argv[1], "hand-v4", hand, sizeof(hand)))
		return 1;
	/* the commands below write from another directory: the seeds' must be absolute */
	if (!(dir = realpath(argv[1], NULL)))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(versions); i++) {
		char *cmd = xstrfmt("set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; cd $d; mkdir inc; "
				    "printf 'static inline int h(int x) { return x * 3; }\\n' > inc/h.h; "
				    "printf '#include \"h.h\"\\nint main(int c, char **v) { (void)v; return h(c); }\\n' > m.c; "
				    "cc -O2 -g -gdwarf-%s -Iinc -o m m.c 2>/dev/null; "
				    "objcopy --dump-section .debug_line=line m; "
				    "{ printf '\\001'; cat line; } > '%s/cc-v%s'",
				    versions[i], dir, versions[i]);

		made += system(cmd) == 0;
		free(cmd);
	}
	free(dir);
	if (!made)
		fprintf(stderr, "seed-dwarf-line: no compiler: only the hand-made seed\n");
	return 0;
}
