/*
 * t-dwarf-info.c: unit tests of lib/dwarf-info: every unit of programs
 * built here (gcc and clang, DWARF 2, 4 and 5, C and C++, -O0 to -O3,
 * -ffunction-sections, LTO), of the test workloads (tests/workloads,
 * built here from their sources, and tests/workloads/bin when it is
 * there) and of this test binary read by dwarf_info_scopes() and
 * dwarf_info_names() and by libdw (dwarf_child(), dwarf_siblingof(),
 * dwarf_ranges(), dwarf_attr_integrate(), walked as lib/symbolize walked
 * them), which must give the same scopes, ranges, call sites and names;
 * and hostile sections (bytes flipped, cut short) that must give an error
 * or sane answers, never a crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "util.h"
#include "strbuf.h"
#include "dwarf-info.h"

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

static const char prog_c[] =
	"#include \"helper.h\"\n"
	"volatile unsigned long sink;\n"
	"static inline __attribute__((always_inline)) unsigned long twice(unsigned long x)\n"
	"{\n"
	"\treturn helper(helper(x) + 7);\n"
	"}\n"
	"__attribute__((noinline)) unsigned long work(unsigned long x)\n"
	"{\n"
	"\tfor (int i = 0; i < 50; i++) {\n"
	"\t\tunsigned long y = twice(x ^ (unsigned long)i);\n"
	"\t\t{ unsigned long z = helper(y); x += z; }\n"
	"\t}\n"
	"\treturn x;\n"
	"}\n"
	"__attribute__((cold, noinline)) unsigned long rare(unsigned long x) { return x * 3 + sink; }\n"
	"struct s { int a; union { int b; float c; } u; };\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tstruct s v = { argc, { 0 } };\n"
	"\t(void)argv;\n"
	"\tsink = argc > 5 ? rare((unsigned long)v.a) : work((unsigned long)argc);\n"
	"\treturn 0;\n"
	"}\n";

static const char helper_h[] =
	"static inline __attribute__((always_inline)) unsigned long helper(unsigned long x)\n"
	"{\n"
	"\tfor (int i = 0; i < 5; i++)\n"
	"\t\tx = x * 31 + (unsigned long)i;\n"
	"\treturn x;\n"
	"}\n";

static const char prog_cc[] =
	"#include <map>\n"
	"#include <string>\n"
	"#include <vector>\n"
	"#include <algorithm>\n"
	"namespace outer { namespace inner {\n"
	"template <typename T> struct Acc {\n"
	"\tT v = 0;\n"
	"\tvoid add(T x) { v = v * 31 + x; }\n"
	"\t__attribute__((noinline)) T total(const std::vector<T> &xs) {\n"
	"\t\tfor (auto x : xs) add(x);\n"
	"\t\treturn v;\n"
	"\t}\n"
	"};\n"
	"} }\n"
	"volatile unsigned long sink;\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tstd::map<std::string, int> m;\n"
	"\tstd::vector<unsigned long> xs;\n"
	"\tfor (int i = 0; i < argc * 100; i++) {\n"
	"\t\tm[std::to_string(i % 17)] += i;\n"
	"\t\txs.push_back((unsigned long)i);\n"
	"\t}\n"
	"\tstd::sort(xs.begin(), xs.end(), [](unsigned long a, unsigned long b) { return a > b; });\n"
	"\touter::inner::Acc<unsigned long> acc;\n"
	"\tsink = acc.total(xs) + m.size() + (argv[0][0] == 'x');\n"
	"\treturn 0;\n"
	"}\n";

/* The programs built in setup(): name and command (run in tmpdir/build). */
static const struct {
	const char *name, *cmd;
} progs[] = {
	{ "c-gcc5", "cc -O2 -g -gdwarf-5 -I../src -o c-gcc5 ../src/main.c" },
	{ "c-gcc4", "cc -O2 -g -gdwarf-4 -I../src -o c-gcc4 ../src/main.c" },
	{ "c-gcc3-sections", "cc -O3 -g -gdwarf-3 -ffunction-sections -I../src -o c-gcc3-sections ../src/main.c" },
	{ "c-gcc2-O0", "cc -O0 -g -gdwarf-2 -I../src -o c-gcc2-O0 ../src/main.c" },
	{ "c-gcc-lto", "cc -O2 -g -flto -I../src -o c-gcc-lto ../src/main.c ../src/two.c" },
	{ "cc-gcc", "c++ -O2 -g -o cc-gcc ../src/main.cc" },
	{ "cc-gcc4", "c++ -O1 -g -gdwarf-4 -o cc-gcc4 ../src/main.cc" },
	{ "c-clang5", "clang -O2 -g -gdwarf-5 -I../src -o c-clang5 ../src/main.c" },
	{ "c-clang4", "clang -O2 -g -gdwarf-4 -I../src -o c-clang4 ../src/main.c" },
	{ "cc-clang", "clang++ -O2 -g -o cc-clang ../src/main.cc" },
};

/* Workloads built here from tests/workloads, with its flags. */
static const char *const workloads[] = {
	"inlined.c", "inlinemix.c", "deepcall.c", "recursive.c", "cxxmap.cc", "cxxsort.cc",
};

static int write_text(const char *dir, const char *name, const char *text)
{
	char *path = xstrfmt("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	int ok = f && fputs(text, f) >= 0;

	if (f && fclose(f))
		ok = 0;
	free(path);
	return ok ? 0 : -1;
}

static int setup(void **state)
{
	char *src;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hotloop-t-dwarf-info-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	if (run("mkdir -p %s/src %s/build", tmpdir, tmpdir))
		return -1;
	src = xstrfmt("%s/src", tmpdir);
	if (write_text(src, "main.c", prog_c) || write_text(src, "helper.h", helper_h) ||
	    write_text(src, "main.cc", prog_cc) ||
	    write_text(src, "two.c", "#include \"helper.h\"\nunsigned long two(unsigned long x) { return helper(x); }\n"))
		return -1;
	free(src);
	if (run("cd %s/build && cc -O2 -g -I../src -o c-gcc5 ../src/main.c", tmpdir))
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
static void sections_of(Dwarf *dw, struct dwarf_info_sections *sec)
{
	static const char *const names[DWARF_NR_SECTIONS] = {
		[DWARF_INFO] = ".debug_info", [DWARF_ABBREV] = ".debug_abbrev",
		[DWARF_STR] = ".debug_str", [DWARF_LINE_STR] = ".debug_line_str",
		[DWARF_STR_OFFSETS] = ".debug_str_offsets", [DWARF_ADDR] = ".debug_addr",
		[DWARF_RANGES] = ".debug_ranges", [DWARF_RNGLISTS] = ".debug_rnglists",
	};
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
		for (int i = 0; i < DWARF_NR_SECTIONS; i++) {
			if (!strcmp(name, names[i])) {
				sec->data[i] = data->d_buf;
				sec->size[i] = data->d_size;
			}
		}
	}
	assert_non_null(sec->data[DWARF_INFO]);
}

/* ---- the same walk with libdw, as lib/symbolize did it ---- */

static void ref_add_scope(Dwarf_Die *die, uint32_t parent, bool inlined, unsigned depth,
			  struct dwarf_info_scopes *out, uint32_t *idx)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t before = out->nr_ranges;
	struct dwarf_info_scope *s;
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	Dwarf_Word w;

	*idx = DWARF_INFO_NONE;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo && hi > lo) {
			ALLOC_GROW(out->ranges, out->nr_ranges + 1, out->alloc_ranges);
			out->ranges[out->nr_ranges++] = (struct dwarf_info_range){
				lo, hi, (uint32_t)out->nr_scopes, depth };
		}
	}
	assert_true(off == 0);
	if (out->nr_ranges == before)
		return;
	ALLOC_GROW(out->scopes, out->nr_scopes + 1, out->alloc_scopes);
	s = &out->scopes[out->nr_scopes];
	memset(s, 0, sizeof(*s));
	s->die = dwarf_dieoffset(die);
	s->inlined = inlined;
	s->parent = inlined ? parent : DWARF_INFO_NONE;
	if (dwarf_attr(die, DW_AT_abstract_origin, &attr) && dwarf_formref_die(&attr, &origin))
		s->origin = dwarf_dieoffset(&origin);
	s->call_file = UINT64_MAX;
	if (dwarf_attr(die, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &w))
		s->call_file = w;
	if (dwarf_attr(die, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &w))
		s->call_line = w > INT32_MAX ? 0 : (int32_t)w;
	*idx = (uint32_t)out->nr_scopes++;
}

static void ref_walk(Dwarf_Die *parent, uint32_t scope, unsigned depth, bool is_c,
		     struct dwarf_info_scopes *out)
{
	Dwarf_Die child;
	int r;

	assert_true(depth <= 256);
	r = dwarf_child(parent, &child);
	assert_true(r >= 0);
	if (r)
		return;
	do {
		uint32_t idx;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_entry_point:
		case DW_TAG_inlined_subroutine:
			ref_add_scope(&child, scope, dwarf_tag(&child) == DW_TAG_inlined_subroutine,
				      depth, out, &idx);
			if (idx != DWARF_INFO_NONE)
				ref_walk(&child, idx, depth + 1, is_c, out);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_with_stmt:
		case DW_TAG_namespace:
		case DW_TAG_module:
			ref_walk(&child, scope, depth + 1, is_c, out);
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			if (!is_c)
				ref_walk(&child, scope, depth + 1, is_c, out);
			break;
		default:
			break;
		}
		r = dwarf_siblingof(&child, &child);
	} while (r == 0);
	assert_true(r == 1);
}

static bool is_c_unit(Dwarf_Die *cudie)
{
	switch (dwarf_srclang(cudie)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
		return true;
	default:
		return false;
	}
}

/* libdw's names of a DIE, as lib/symbolize read them. */
static void ref_names(Dwarf *dw, uint64_t off, struct dwarf_info_names *n)
{
	Dwarf_Die die;
	Dwarf_Attribute attr;
	int line;

	memset(n, 0, sizeof(*n));
	assert_non_null(dwarf_offdie(dw, off, &die));
	if (dwarf_attr_integrate(&die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(&die, DW_AT_MIPS_linkage_name, &attr))
		n->linkage_name = dwarf_formstring(&attr);
	if (dwarf_attr_integrate(&die, DW_AT_name, &attr))
		n->name = dwarf_formstring(&attr);
	if (!dwarf_decl_line(&die, &line))
		n->decl_line = line;
}

static void check_str(const char *what, uint64_t off, const char *a, const char *b)
{
	if (!a || !b) {
		if (a != b)
			fail_msg("DIE %#llx: %s: libdw '%s', ours '%s'", (unsigned long long)off,
				 what, a ? a : "(null)", b ? b : "(null)");
		return;
	}
	if (strcmp(a, b))
		fail_msg("DIE %#llx: %s: libdw '%s', ours '%s'", (unsigned long long)off, what, a, b);
}

struct counts {
	size_t units, scopes, ranges, names;
};

/* Every unit of 'path': the reader against libdw. */
static void check_file(const char *path, struct counts *n)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, sub;
	Dwarf_Half version;
	uint8_t unit_type;
	struct dwarf_info_sections sec;
	struct dwarf_info di;
	struct dwarf_info_scopes mine = { 0 }, ref = { 0 };
	size_t unit;

	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		print_message("%s: no DWARF, skipped\n", path);
		close(fd);
		return;
	}
	sections_of(dw, &sec);
	dwarf_info_init(&di, &sec);
	for (unit = 0; dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &sub) == 0;
	     unit++) {
		uint64_t off = dwarf_dieoffset(&cudie), mine_die;

		/* the units as the headers give them, libdw's too */
		assert_int_equal(dwarf_info_unit_die(&di, unit, &mine_die), 0);
		assert_int_equal(mine_die, off);
		if (unit_type != DW_UT_compile)
			continue;
		ref.nr_scopes = ref.nr_ranges = 0;
		ref_walk(&cudie, DWARF_INFO_NONE, 0, is_c_unit(&cudie), &ref);
		if (dwarf_info_scopes(&di, off, is_c_unit(&cudie), &mine))
			fail_msg("%s: unit at %#llx: dwarf_info_scopes failed", path, (unsigned long long)off);
		assert_int_equal(mine.nr_scopes, ref.nr_scopes);
		assert_int_equal(mine.nr_ranges, ref.nr_ranges);
		for (size_t i = 0; i < ref.nr_scopes; i++) {
			const struct dwarf_info_scope *a = &ref.scopes[i], *b = &mine.scopes[i];
			struct dwarf_info_names na, nb;
			uint64_t key;

			assert_int_equal(a->die, b->die);
			assert_int_equal(a->origin, b->origin);
			assert_int_equal(a->parent, b->parent);
			assert_int_equal(a->inlined, b->inlined);
			assert_int_equal(a->call_file, b->call_file);
			assert_int_equal(a->call_line, b->call_line);
			/* the names lib/symbolize reads: the origin's, else the DIE's own */
			key = a->origin ? a->origin : a->die;
			ref_names(dw, key, &na);
			if (dwarf_info_names(&di, key, &nb))
				fail_msg("%s: DIE %#llx: dwarf_info_names failed", path, (unsigned long long)key);
			check_str("name", key, na.name, nb.name);
			check_str("linkage name", key, na.linkage_name, nb.linkage_name);
			assert_int_equal(na.decl_line, nb.decl_line);
			/* and the DIE's own, through its origin */
			ref_names(dw, a->die, &na);
			assert_int_equal(dwarf_info_names(&di, a->die, &nb), 0);
			check_str("name", a->die, na.name, nb.name);
			check_str("linkage name", a->die, na.linkage_name, nb.linkage_name);
			assert_int_equal(na.decl_line, nb.decl_line);
			n->names++;
		}
		for (size_t i = 0; i < ref.nr_ranges; i++) {
			const struct dwarf_info_range *a = &ref.ranges[i], *b = &mine.ranges[i];

			if (a->lo != b->lo || a->hi != b->hi || a->scope != b->scope || a->depth != b->depth)
				fail_msg("%s: range %zu: libdw [%#llx, %#llx) scope %u depth %u, ours [%#llx, %#llx) scope %u depth %u",
					 path, i, (unsigned long long)a->lo, (unsigned long long)a->hi,
					 a->scope, a->depth, (unsigned long long)b->lo,
					 (unsigned long long)b->hi, b->scope, b->depth);
		}
		n->units++;
		n->scopes += ref.nr_scopes;
		n->ranges += ref.nr_ranges;
	}
	{
		uint64_t x;
		size_t nr = 0;

		while (!dwarf_info_unit_die(&di, nr, &x))
			nr++;
		assert_int_equal(nr, unit);	/* and no more */
	}
	dwarf_info_scopes_release(&mine);
	dwarf_info_scopes_release(&ref);
	dwarf_info_release(&di);
	dwarf_end(dw);
	close(fd);
}

static void test_dwarf_info__same_as_libdw(void **state)
{
	struct counts n = { 0 };
	char self[4096];
	ssize_t len;

	SKIP_IF_UNABLE();
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		char *path = xstrfmt("%s/build/%s", tmpdir, progs[i].name);

		if (access(path, R_OK) && run("cd %s/build && %s 2>/dev/null", tmpdir, progs[i].cmd)) {
			print_message("cannot build %s: skipped\n", progs[i].name);
		} else {
			struct counts before = n;

			check_file(path, &n);
			assert_true(n.units > before.units);
			assert_true(n.scopes > before.scopes);
		}
		free(path);
	}
	print_message("test programs: %zu units, %zu scopes, %zu ranges, %zu names\n",
		      n.units, n.scopes, n.ranges, n.names);
	/* this test program: its units and those of lib/ it links */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = '\0';
	check_file(self, &n);
	print_message("with this binary: %zu units, %zu scopes\n", n.units, n.scopes);
}

static void test_dwarf_info__workloads(void **state)
{
	struct counts n = { 0 };
	size_t files = 0;
	DIR *dir;

	SKIP_IF_UNABLE();
	if (access("tests/workloads/workload.h", R_OK)) {
		print_message("skipped: no tests/workloads here\n");
		skip();
	}
	for (size_t i = 0; i < ARRAY_SIZE(workloads); i++) {
		const char *w = workloads[i];
		bool cxx = strstr(w, ".cc") != NULL;
		char *path = xstrfmt("%s/build/wl-%.*s", tmpdir, (int)strcspn(w, "."), w);

		/* as tests/workloads/Makefile builds them */
		if (run("%s -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o %s tests/workloads/%s %s",
			cxx ? "c++" : "cc", path, w, cxx ? "" : "-lpthread")) {
			print_message("cannot build %s: skipped\n", w);
		} else {
			check_file(path, &n);
			files++;
		}
		free(path);
	}
	/* and whatever 'make workloads' built */
	if ((dir = opendir("tests/workloads/bin"))) {
		struct dirent *de;

		while ((de = readdir(dir))) {
			char *path;

			if (de->d_name[0] == '.')
				continue;
			path = xstrfmt("tests/workloads/bin/%s", de->d_name);
			check_file(path, &n);
			files++;
			free(path);
		}
		closedir(dir);
	}
	print_message("%zu workloads: %zu units, %zu scopes, %zu ranges\n",
		      files, n.units, n.scopes, n.ranges);
	assert_true(n.scopes > 0);
}

/* ---- hostile sections ---- */

/* The reader on one set of sections: an error or sane answers, never a crash. */
static void poke(struct dwarf_info_sections *sec, const uint64_t *dies, size_t nr_dies,
		 size_t *ok)
{
	struct dwarf_info di;
	struct dwarf_info_scopes s = { 0 };

	dwarf_info_init(&di, sec);
	for (size_t i = 0; i < nr_dies; i++) {
		if (!dwarf_info_scopes(&di, dies[i], i & 1, &s)) {
			(*ok)++;
			for (size_t k = 0; k < s.nr_ranges; k++) {
				assert_true(s.ranges[k].scope < s.nr_scopes);
				assert_true(s.ranges[k].lo && s.ranges[k].hi > s.ranges[k].lo);
			}
			for (size_t k = 0; k < s.nr_scopes; k++) {
				struct dwarf_info_names nm;

				assert_true(s.scopes[k].parent == DWARF_INFO_NONE ||
					    s.scopes[k].parent < k);
				if (!dwarf_info_names(&di, s.scopes[k].die, &nm)) {
					if (nm.name)
						(void)strlen(nm.name);
					if (nm.linkage_name)
						(void)strlen(nm.linkage_name);
					assert_true(nm.decl_line >= 0);
				}
			}
		}
		/* names of any offset at all */
		{
			struct dwarf_info_names nm;

			(void)dwarf_info_names(&di, dies[i] + i * 7, &nm);
		}
	}
	dwarf_info_scopes_release(&s);
	dwarf_info_release(&di);
}

static void test_dwarf_info__hostile(void **state)
{
	char *path;
	int fd;
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, sub;
	Dwarf_Half version;
	uint8_t unit_type;
	struct dwarf_info_sections sec, bad;
	uint64_t dies[64];
	size_t nr_dies = 0, ok = 0;
	unsigned seed = 4321;
	static const int flip[] = { DWARF_INFO, DWARF_ABBREV, DWARF_RNGLISTS, DWARF_STR };

	SKIP_IF_UNABLE();
	path = xstrfmt("%s/build/c-gcc5", tmpdir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	sections_of(dw, &sec);
	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &sub) == 0 &&
	       nr_dies < ARRAY_SIZE(dies))
		dies[nr_dies++] = dwarf_dieoffset(&cudie);
	assert_true(nr_dies > 0);

	/* no sections, offsets anywhere */
	memset(&bad, 0, sizeof(bad));
	poke(&bad, dies, nr_dies, &ok);
	{
		uint64_t odd[] = { 0, 1, UINT64_MAX, sec.size[DWARF_INFO], sec.size[DWARF_INFO] - 1 };

		poke(&sec, odd, ARRAY_SIZE(odd), &ok);
	}
	/* every section cut short at many lengths */
	for (int k = 0; k < DWARF_NR_SECTIONS; k++) {
		for (size_t len = 0; len < sec.size[k]; len += 1 + len / 8) {
			unsigned char *copy = xmalloc(len ? len : 1);

			bad = sec;
			memcpy(copy, sec.data[k], len);
			bad.data[k] = copy;
			bad.size[k] = len;
			poke(&bad, dies, nr_dies, &ok);
			free(copy);
		}
	}
	/* bytes flipped in one section at a time */
	for (int round = 0; round < 2000; round++) {
		int k = flip[round % ARRAY_SIZE(flip)];
		unsigned char *copy;

		if (!sec.data[k])
			continue;
		copy = xmalloc(sec.size[k]);
		memcpy(copy, sec.data[k], sec.size[k]);
		for (int j = 0; j < 1 + round % 8; j++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 8) % sec.size[k]] = (unsigned char)(seed >> 20);
		}
		bad = sec;
		bad.data[k] = copy;
		poke(&bad, dies, nr_dies, &ok);
		free(copy);
	}
	print_message("%zu walks of hostile sections still read\n", ok);
	dwarf_end(dw);
	close(fd);
	free(path);
}

/* Bytes of a hand-made section. */
static void put_uleb(struct strbuf *sb, uint64_t v)
{
	do {
		unsigned char b = v & 0x7f;

		v >>= 7;
		strbuf_addch(sb, (char)(b | (v ? 0x80 : 0)));
	} while (v);
}

static void put_u32(struct strbuf *sb, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		strbuf_addch(sb, (char)(v >> (8 * i)));
}

/*
 * Hostile shapes that are valid bytes: thousands of functions sharing one
 * range list of thousands of entries (millions of ranges), and units
 * whose abbreviation tables start inside one another (each decoded to the
 * section's end): an error, in bounded time and memory.
 */
static void test_dwarf_info__hostile_shapes(void **state)
{
	enum { N = 20000 };
	struct strbuf abbrev = STRBUF_INIT, info = STRBUF_INIT, rng = STRBUF_INIT;
	struct dwarf_info_sections sec = { 0 };
	struct dwarf_info_scopes out = { 0 };
	struct dwarf_info di;
	uint64_t die;
	size_t len_at;

	/* 1: a unit with children, no attributes; 2: a function with DW_AT_ranges */
	put_uleb(&abbrev, 1);
	put_uleb(&abbrev, DW_TAG_compile_unit);
	strbuf_addch(&abbrev, 1);
	strbuf_add(&abbrev, "\0\0", 2);
	put_uleb(&abbrev, 2);
	put_uleb(&abbrev, DW_TAG_subprogram);
	strbuf_addch(&abbrev, 0);
	put_uleb(&abbrev, DW_AT_ranges);
	put_uleb(&abbrev, DW_FORM_sec_offset);
	strbuf_add(&abbrev, "\0\0\0", 3);
	/* .debug_rnglists: a header, then one list of N pairs */
	put_u32(&rng, 0);
	strbuf_add(&rng, "\x05\0\x08\0\0\0\0\0", 8);
	for (uint64_t i = 0; i < N; i++) {
		strbuf_addch(&rng, DW_RLE_offset_pair);
		put_uleb(&rng, 16 + 4 * i);
		put_uleb(&rng, 18 + 4 * i);
	}
	strbuf_addch(&rng, DW_RLE_end_of_list);
	/* .debug_info: one DWARF 5 unit, N functions all naming that list */
	put_u32(&info, 0);
	len_at = 0;
	strbuf_add(&info, "\x05\0\x01\x08\0\0\0\0", 8);
	put_uleb(&info, 1);
	for (size_t i = 0; i < N; i++) {
		put_uleb(&info, 2);
		put_u32(&info, 12);
	}
	strbuf_addch(&info, 0);
	for (int i = 0; i < 4; i++)
		info.buf[len_at + i] = (char)((info.len - 4) >> (8 * i));
	sec.data[DWARF_ABBREV] = (const unsigned char *)abbrev.buf;
	sec.size[DWARF_ABBREV] = abbrev.len;
	sec.data[DWARF_INFO] = (const unsigned char *)info.buf;
	sec.size[DWARF_INFO] = info.len;
	sec.data[DWARF_RNGLISTS] = (const unsigned char *)rng.buf;
	sec.size[DWARF_RNGLISTS] = rng.len;
	dwarf_info_init(&di, &sec);
	assert_int_equal(dwarf_info_unit_die(&di, 0, &die), 0);
	assert_int_equal(dwarf_info_scopes(&di, die, true, &out), -1);
	assert_int_equal(out.nr_ranges, 0);
	dwarf_info_release(&di);

	/* N units, the abbreviations of unit i starting at byte i of one long table */
	strbuf_reset(&abbrev);
	strbuf_reset(&info);
	for (size_t i = 0; i < N; i++) {
		put_uleb(&abbrev, 1);
		put_uleb(&abbrev, DW_TAG_compile_unit);
		strbuf_addch(&abbrev, 0);
		put_uleb(&abbrev, DW_AT_name);
		put_uleb(&abbrev, DW_FORM_data1);
		strbuf_add(&abbrev, "\0\0", 2);
	}
	for (size_t i = 0; i < N; i++) {
		put_u32(&info, 8);
		strbuf_add(&info, "\x05\0\x01\x08", 4);
		put_u32(&info, (uint32_t)(i % abbrev.len));
		put_uleb(&info, 1);
		strbuf_add(&info, "\0\0\0", 3);
		info.buf[info.len - 12] = 11;	/* the unit length, header and DIE */
	}
	sec.data[DWARF_ABBREV] = (const unsigned char *)abbrev.buf;
	sec.size[DWARF_ABBREV] = abbrev.len;
	sec.data[DWARF_INFO] = (const unsigned char *)info.buf;
	sec.size[DWARF_INFO] = info.len;
	dwarf_info_init(&di, &sec);
	for (size_t i = 0; !dwarf_info_unit_die(&di, i, &die); i++)
		(void)dwarf_info_scopes(&di, die, true, &out);
	assert_true(di.abbrev_attrs <= 8 * abbrev.len + 4096 + 1);
	dwarf_info_release(&di);
	dwarf_info_scopes_release(&out);
	strbuf_release(&abbrev);
	strbuf_release(&info);
	strbuf_release(&rng);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dwarf_info__same_as_libdw),
		cmocka_unit_test(test_dwarf_info__workloads),
		cmocka_unit_test(test_dwarf_info__hostile),
		cmocka_unit_test(test_dwarf_info__hostile_shapes),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, setup, teardown);
}
