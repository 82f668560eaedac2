/*
 * t-dwarf-line.c: unit tests of lib/dwarf-line: every line table of
 * programs built here with cc (DWARF 4 and 5, include directories with
 * "..") and of this test binary itself read by dwarf_line_read() and by
 * libdw's dwarf_getsrclines(), which must give the same rows and files
 * (but for the unit's last row, which libdw marks as an end, and the
 * file of an end, which the reader does not name); a table read with
 * rows merged answering every lookup as the whole table;
 * and hostile tables (cut short at every length, bytes flipped, a table
 * that is only a header) that must give an error or sane rows, never a
 * crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "util.h"
#include "strbuf.h"
#include "dwarf-line.h"

static char tmpdir[64];
static const char *skip_reason;

static int run(const char *fmt, ...) ATTR_PRINTF(1, 2);
static int run(const char *fmt, ...)
{
	struct strbuf cmd = STRBUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	strbuf_vaddf(&cmd, fmt, ap);
	va_end(ap);
	rc = system(cmd.buf);
	strbuf_release(&cmd);
	return rc;
}

static const char helper_h[] =
	"static inline __attribute__((always_inline)) int helper(int x)\n"
	"{\n"
	"\tfor (int i = 0; i < 5; i++)\n"
	"\t\tx = x * 31 + i;\n"
	"\treturn x;\n"
	"}\n";
static const char main_c[] =
	"#include \"helper.h\"\n"
	"#include <stdio.h>\n"
	"__attribute__((noinline)) int work(int x) { return helper(x) + 1; }\n"
	"__attribute__((cold, noinline)) int rare(int x) { printf(\"%d\\n\", x); return x; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\treturn argc > 5 ? rare(argc) : work(argc) & 1;\n"
	"}\n";

static int setup(void **state)
{
	FILE *f;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hotloop-t-dwarf-line-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	if (run("mkdir -p %s/src/inc %s/build", tmpdir, tmpdir))
		return -1;
	{
		char *h = xstrfmt("%s/src/inc/helper.h", tmpdir), *c = xstrfmt("%s/src/main.c", tmpdir);

		if (!(f = fopen(h, "w")) || fputs(helper_h, f) < 0 || fclose(f) ||
		    !(f = fopen(c, "w")) || fputs(main_c, f) < 0 || fclose(f))
			return -1;
		free(h);
		free(c);
	}
	if (run("cd %s/build && cc -O2 -g -gdwarf-5 -I../src/../src/inc -o p5 ../src/main.c && "
		"cc -O2 -g -gdwarf-4 -I../src/inc -o p4 ../src/main.c && "
		"cc -O0 -g -gdwarf-2 -I../src/inc -o p2 ../src/main.c 2>/dev/null", tmpdir))
		skip_reason = "cc cannot build the test programs";
	return 0;
}

static int teardown(void **state)
{
	if (tmpdir[0])
		run("rm -rf '%s'", tmpdir);
	return 0;
}

#define SKIP_IF_UNABLE() do { \
		if (skip_reason) { \
			print_message("skipped: %s\n", skip_reason); \
			skip(); \
		} \
	} while (0)

/* The sections of the file libdw opened. */
static void sections_of(Dwarf *dw, struct dwarf_line_sections *sec)
{
	Elf *elf = dwarf_getelf(dw);
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx;

	memset(sec, 0, sizeof(*sec));
	assert_non_null(gelf_getehdr(elf, &eh));
	sec->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		if (!strcmp(name, ".debug_line")) {
			sec->line = data->d_buf;
			sec->line_size = data->d_size;
		} else if (!strcmp(name, ".debug_line_str")) {
			sec->line_str = data->d_buf;
			sec->line_str_size = data->d_size;
		} else if (!strcmp(name, ".debug_str")) {
			sec->str = data->d_buf;
			sec->str_size = data->d_size;
		}
	}
	assert_non_null(sec->line);
}

struct row {
	uint64_t addr;
	int line;
	bool end;
	char *file;
};

static int row_cmp(const void *a_, const void *b_)
{
	const struct row *a = a_, *b = b_;
	int c;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->end != b->end)
		return a->end ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	c = strcmp(a->file, b->file);
	return c;
}

/* libdw's name of a file: the directory joined as it joins them (comp_dir for DWARF 4's 0). */
static char *ours(const struct dwarf_line_file *f, const char *comp_dir, int version)
{
	struct strbuf sb = STRBUF_INIT;

	if (*f->name == '/')
		strbuf_addstr(&sb, f->name);
	else if (*f->dir)
		strbuf_addf(&sb, "%s/%s", f->dir, f->name);
	else if (version < 5 && comp_dir)
		strbuf_addf(&sb, "%s/%s", comp_dir, f->name);
	else
		strbuf_addstr(&sb, f->name);
	return strbuf_detach(&sb, NULL);
}

/* Every unit of 'path': dwarf_line_read() against dwarf_getsrclines(). */
static size_t check_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, sub;
	Dwarf_Half version;
	uint8_t unit_type;
	struct dwarf_line_sections sec;
	struct dwarf_line_table t = DWARF_LINE_TABLE_INIT;
	size_t units = 0;

	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	sections_of(dw, &sec);
	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &sub) == 0) {
		Dwarf_Attribute attr;
		Dwarf_Word off;
		Dwarf_Lines *lines;
		Dwarf_Files *files;
		size_t nl, nf, nr = 0;
		uint8_t asz, osz;
		Dwarf_Die d;
		struct row *a, *b;
		const char *comp_dir;

		if (!dwarf_attr(&cudie, DW_AT_stmt_list, &attr) || dwarf_formudata(&attr, &off))
			continue;
		assert_non_null(dwarf_diecu(&cudie, &d, &asz, &osz));
		assert_int_equal(dwarf_getsrclines(&cudie, &lines, &nl), 0);
		assert_int_equal(dwarf_getsrcfiles(&cudie, &files, &nf), 0);
		comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attr));
		if (dwarf_line_read(&t, &sec, off, asz, 0))
			fail_msg("%s: unit at %#llx: dwarf_line_read failed", path, (unsigned long long)off);
		assert_int_equal(t.version, version < 5 ? t.version : 5);
		/* the same files, index by index (libdw's 0 in DWARF 2-4 is "???") */
		assert_int_equal(t.nr_files, nf);
		for (size_t i = t.version < 5 ? 1 : 0; i < nf; i++) {
			char *mine = ours(&t.files[i], comp_dir, t.version);

			assert_string_equal(mine, dwarf_filesrc(files, i, NULL, NULL));
			free(mine);
		}
		/* the same rows */
		assert_int_equal(t.nr_rows, nl);
		a = xcalloc(nl + 1, sizeof(*a));
		b = xcalloc(nl + 1, sizeof(*b));
		for (size_t i = 0; i < nl; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			Dwarf_Addr addr;
			int lineno;
			bool end;
			const char *src = dwarf_linesrc(l, NULL, NULL);

			assert_int_equal(dwarf_lineaddr(l, &addr), 0);
			assert_int_equal(dwarf_lineno(l, &lineno), 0);
			assert_int_equal(dwarf_lineendsequence(l, &end), 0);
			/* an end is no row of a file: the reader names none */
			a[i] = (struct row){ addr, lineno, end, xstrdup(src && !end ? src : "") };
			if (t.rows[i].file == DWARF_LINE_END) {
				b[nr++] = (struct row){ t.addrs[i], t.rows[i].line, true, xstrdup("") };
				continue;
			}
			assert_true(t.rows[i].file < t.nr_files);
			b[nr++] = (struct row){ t.addrs[i], t.rows[i].line, false,
						 ours(&t.files[t.rows[i].file], comp_dir, t.version) };
		}
		qsort(a, nl, sizeof(*a), row_cmp);
		qsort(b, nl, sizeof(*b), row_cmp);
		/* libdw marks the unit's last row as an end; the reader gives rows as they are */
		if (nl && a[nl - 1].end && !b[nl - 1].end && a[nl - 1].addr == b[nl - 1].addr) {
			b[nl - 1].end = true;
			b[nl - 1].file[0] = '\0';
			qsort(b, nl, sizeof(*b), row_cmp);
		}
		for (size_t i = 0; i < nl; i++) {
			if (row_cmp(&a[i], &b[i]))
				fail_msg("%s: row %zu: libdw %#llx %s:%d%s, ours %#llx %s:%d%s", path, i,
					 (unsigned long long)a[i].addr, a[i].file, a[i].line, a[i].end ? " end" : "",
					 (unsigned long long)b[i].addr, b[i].file, b[i].line, b[i].end ? " end" : "");
			free(a[i].file);
			free(b[i].file);
		}
		free(a);
		free(b);
		units++;
	}
	dwarf_line_table_release(&t);
	dwarf_end(dw);
	close(fd);
	return units;
}

static void test_dwarf_line__same_as_libdw(void **state)
{
	static const char *progs[] = { "p5", "p4", "p2" };
	char self[4096];
	ssize_t n;

	SKIP_IF_UNABLE();
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		char *path = xstrfmt("%s/build/%s", tmpdir, progs[i]);

		if (access(path, R_OK)) {
			print_message("no %s: skipped\n", progs[i]);
		} else {
			assert_true(check_file(path) >= 1);
		}
		free(path);
	}
	/* this test program: its own unit and those of the library it links */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	assert_true(check_file(self) > 1);
}

/* A row with its place in the table, sorted as lib/symbolize sorts them. */
struct srow {
	uint64_t addr;
	struct dwarf_line_row r;
	size_t order;
};

static int srow_cmp(const void *a_, const void *b_)
{
	const struct srow *a = a_, *b = b_;
	bool ae = a->r.file == DWARF_LINE_END, be = b->r.file == DWARF_LINE_END;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (ae != be)
		return ae ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static struct srow *sorted_rows(const struct dwarf_line_table *t)
{
	struct srow *v = xcalloc(t->nr_rows + 1, sizeof(*v));

	for (size_t i = 0; i < t->nr_rows; i++)
		v[i] = (struct srow){ t->addrs[i], t->rows[i], i };
	qsort(v, t->nr_rows, sizeof(*v), srow_cmp);
	if (t->nr_rows)
		v[t->nr_rows - 1].r.file = DWARF_LINE_END;	/* the unit's end */
	return v;
}

/* The last row at or before 'addr', as lib/symbolize finds it: its file and line, or -1. */
static int64_t answer(const struct srow *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || v[lo - 1].r.file == DWARF_LINE_END)
		return -1;
	return (int64_t)v[lo - 1].r.file << 32 | (uint32_t)v[lo - 1].r.line;
}

/* Every unit's table read with rows merged answers every lookup as the whole table. */
static size_t check_merged(const char *path, size_t *left_out)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, sub, d;
	Dwarf_Half version;
	uint8_t unit_type, asz, osz;
	struct dwarf_line_sections sec;
	struct dwarf_line_table all = DWARF_LINE_TABLE_INIT, merged = DWARF_LINE_TABLE_INIT;
	size_t units = 0;

	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	sections_of(dw, &sec);
	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &sub) == 0) {
		Dwarf_Attribute attr;
		Dwarf_Word off;
		struct srow *a, *b;

		if (!dwarf_attr(&cudie, DW_AT_stmt_list, &attr) || dwarf_formudata(&attr, &off))
			continue;
		assert_non_null(dwarf_diecu(&cudie, &d, &asz, &osz));
		assert_int_equal(dwarf_line_read(&all, &sec, off, asz, 0), 0);
		assert_int_equal(dwarf_line_read(&merged, &sec, off, asz, DWARF_LINE_MERGE), 0);
		assert_false(all.merged);
		assert_true(merged.nr_rows <= all.nr_rows);
		*left_out += all.nr_rows - merged.nr_rows;
		a = sorted_rows(&all);
		b = sorted_rows(&merged);
		for (size_t i = 0; i < all.nr_rows; i++) {
			for (int delta = -1; delta <= 1; delta++) {
				uint64_t x = all.addrs[i] + (uint64_t)(int64_t)delta;

				if (answer(a, all.nr_rows, x) != answer(b, merged.nr_rows, x))
					fail_msg("%s: unit at %#llx: address %#llx answers differently merged",
						 path, (unsigned long long)off, (unsigned long long)x);
			}
		}
		free(a);
		free(b);
		units++;
	}
	dwarf_line_table_release(&all);
	dwarf_line_table_release(&merged);
	dwarf_end(dw);
	close(fd);
	return units;
}

static void test_dwarf_line__merged_same_answers(void **state)
{
	static const char *progs[] = { "p5", "p4", "p2" };
	size_t left_out = 0, units = 0;
	char self[4096];
	ssize_t n;

	SKIP_IF_UNABLE();
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		char *path = xstrfmt("%s/build/%s", tmpdir, progs[i]);

		if (!access(path, R_OK))
			units += check_merged(path, &left_out);
		free(path);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	units += check_merged(self, &left_out);
	print_message("%zu units, %zu rows left out merged\n", units, left_out);
	assert_true(left_out > 0);
}

/* The first unit's table of 'path' as bytes of its own, with the sections. */
static void first_table(const char *path, struct strbuf *bytes, struct dwarf_line_sections *sec,
			uint8_t *asz, Dwarf **dwp, int *fdp)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, sub, d;
	Dwarf_Half version;
	uint8_t unit_type, osz;
	Dwarf_Attribute attr;
	Dwarf_Word off;
	uint64_t len;

	*fdp = open(path, O_RDONLY);
	assert_true(*fdp >= 0);
	*dwp = dwarf_begin(*fdp, DWARF_C_READ);
	assert_non_null(*dwp);
	sections_of(*dwp, sec);
	assert_int_equal(dwarf_get_units(*dwp, cu, &cu, &version, &unit_type, &cudie, &sub), 0);
	assert_non_null(dwarf_attr(&cudie, DW_AT_stmt_list, &attr));
	assert_int_equal(dwarf_formudata(&attr, &off), 0);
	assert_non_null(dwarf_diecu(&cudie, &d, asz, &osz));
	assert_true(off + 4 <= sec->line_size);
	len = (uint64_t)sec->line[off] | (uint64_t)sec->line[off + 1] << 8 |
	      (uint64_t)sec->line[off + 2] << 16 | (uint64_t)sec->line[off + 3] << 24;
	assert_true(len + 4 <= sec->line_size - off);
	strbuf_add(bytes, sec->line + off, (size_t)len + 4);
}

static void check_sane(const struct dwarf_line_table *t)
{
	for (size_t i = 0; i < t->nr_rows; i++)
		assert_true(t->rows[i].line >= 0);
	for (size_t i = 0; i < t->nr_files; i++) {
		assert_non_null(t->files[i].dir);
		assert_non_null(t->files[i].name);
		(void)strlen(t->files[i].dir);
		(void)strlen(t->files[i].name);
	}
}

static void test_dwarf_line__hostile(void **state)
{
	struct strbuf bytes = STRBUF_INIT;
	struct dwarf_line_sections sec, cut;
	struct dwarf_line_table t = DWARF_LINE_TABLE_INIT;
	char *path;
	uint8_t asz;
	Dwarf *dw;
	int fd, ok = 0;
	unsigned seed = 12345;

	SKIP_IF_UNABLE();
	path = xstrfmt("%s/build/p5", tmpdir);
	first_table(path, &bytes, &sec, &asz, &dw, &fd);
	cut = sec;
	cut.line = (const unsigned char *)bytes.buf;
	cut.line_size = bytes.len;
	assert_int_equal(dwarf_line_read(&t, &cut, 0, asz, 0), 0);
	assert_true(t.nr_rows > 10);

	/* cut short at every length: the unit length no longer fits, an error */
	for (size_t len = 0; len < bytes.len; len++) {
		unsigned char *copy = xmalloc(len ? len : 1);

		memcpy(copy, bytes.buf, len);
		cut.line = copy;
		cut.line_size = len;
		assert_int_equal(dwarf_line_read(&t, &cut, 0, asz, 0), -1);
		assert_int_equal(t.nr_rows, 0);
		free(copy);
	}
	/* offsets past the end, odd address sizes */
	cut.line = (const unsigned char *)bytes.buf;
	cut.line_size = bytes.len;
	assert_int_equal(dwarf_line_read(&t, &cut, bytes.len, asz, 0), -1);
	assert_int_equal(dwarf_line_read(&t, &cut, UINT64_MAX, asz, 0), -1);
	assert_int_equal(dwarf_line_read(&t, &cut, 0, 3, 0), -1);
	/* no string sections: DWARF 5's names point nowhere */
	cut.line_str = cut.str = NULL;
	cut.line_str_size = cut.str_size = 0;
	assert_int_equal(dwarf_line_read(&t, &cut, 0, asz, 0), -1);
	cut = sec;
	/* bytes flipped: an error or sane rows */
	for (int round = 0; round < 3000; round++) {
		unsigned char *copy = xmalloc(bytes.len);

		memcpy(copy, bytes.buf, bytes.len);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 8) % bytes.len] = (unsigned char)(seed >> 20);
		}
		cut.line = copy;
		cut.line_size = bytes.len;
		if (!dwarf_line_read(&t, &cut, 0, asz, 0)) {
			check_sane(&t);
			ok++;
		}
		free(copy);
	}
	print_message("%d of 3000 corrupted tables still read\n", ok);
	/* a huge unit length in 64-bit DWARF */
	{
		static const unsigned char big[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						      0xff, 0xff, 0xff, 0x7f, 5, 0 };

		cut.line = big;
		cut.line_size = sizeof(big);
		assert_int_equal(dwarf_line_read(&t, &cut, 0, 8, 0), -1);
	}
	dwarf_line_table_release(&t);
	strbuf_release(&bytes);
	dwarf_end(dw);
	close(fd);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dwarf_line__same_as_libdw),
		cmocka_unit_test(test_dwarf_line__merged_same_answers),
		cmocka_unit_test(test_dwarf_line__hostile),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, setup, teardown);
}
