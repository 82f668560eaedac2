/*
 * t-symbolize.c: unit tests of lib/symbolize. The programs being symbolized
 * are built here, at test time, with the machine's cc and c++ (-O2 -g) into
 * a temporary directory; binutils' addr2line is the oracle for file:line and
 * inline chains, objdump's labels for the names of PLT stubs. Hostile files (truncated, random, corrupted) must give 0
 * frames or sane ones, never a crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "strbuf.h"
#include "symbolize.h"

/* ---- the programs under test ---- */

static const char prog_c[] =
	"/* symbolizer test program */\n"
	"#define NOINLINE __attribute__((noinline))\n"
	"#define ALWAYS __attribute__((always_inline)) inline\n"
	"volatile unsigned long sink;\n"
	"\n"
	"static ALWAYS unsigned long mix_step(unsigned long x)\n"
	"{\n"
	"\tfor (int i = 0; i < 8; i++) {\n"
	"\t\tx ^= x >> 13;\n"
	"\t\tx *= 0xff51afd7ed558ccdul;\n"
	"\t}\n"
	"\treturn x;\n"
	"}\n"
	"\n"
	"static ALWAYS unsigned long mix_twice(unsigned long x)\n"
	"{\n"
	"\treturn mix_step(mix_step(x) + 7); /* CALL_IN_TWICE */\n"
	"}\n"
	"\n"
	"NOINLINE unsigned long outer_loop(unsigned long x)\n"
	"{\n"
	"\tfor (int i = 0; i < 100; i++)\n"
	"\t\tx = mix_step(x + (unsigned long)i); /* CALL_MIX */\n"
	"\treturn x;\n"
	"}\n"
	"\n"
	"NOINLINE unsigned long outer_twice(unsigned long x)\n"
	"{\n"
	"\tfor (int i = 0; i < 50; i++)\n"
	"\t\tx = mix_twice(x ^ (unsigned long)i); /* CALL_TWICE */\n"
	"\treturn x;\n"
	"}\n"
	"\n"
	"NOINLINE unsigned long hot_noinline(unsigned long x) /* HOT_DECL */\n"
	"{\n"
	"\treturn x * 3 + sink; /* HOT_BODY */\n"
	"}\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\tsink = outer_loop((unsigned long)argc) + outer_twice(sink);\n"
	"\tsink += hot_noinline(sink);\n"
	"\treturn 0;\n"
	"}\n";

static const char cxx_cc[] =
	"// symbolizer test program, C++\n"
	"namespace hotns {\n"
	"struct Matrix {\n"
	"\tunsigned long v[16];\n"
	"\t__attribute__((noinline)) unsigned long multiply(int n);\n"
	"};\n"
	"\n"
	"unsigned long Matrix::multiply(int n) /* MULTIPLY_DECL */\n"
	"{\n"
	"\tunsigned long acc = 1;\n"
	"\tfor (int i = 0; i < n; i++)\n"
	"\t\tacc = acc * v[i & 15] + (unsigned long)i;\n"
	"\treturn acc;\n"
	"}\n"
	"}\n"
	"\n"
	"volatile unsigned long sink;\n"
	"\n"
	"int main(int argc, char **)\n"
	"{\n"
	"\thotns::Matrix m = {};\n"
	"\tm.v[3] = (unsigned long)argc;\n"
	"\tsink = m.multiply(argc * 100);\n"
	"\treturn 0;\n"
	"}\n";

static const char shlib_c[] =
	"/* symbolizer test shared library */\n"
	"static inline __attribute__((always_inline)) int shlib_step(int x)\n"
	"{\n"
	"\treturn x * 31 + (x >> 3); /* SHLIB_STEP */\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int shlib_hot(int x)\n"
	"{\n"
	"\tfor (int i = 0; i < 1000; i++)\n"
	"\t\tx = shlib_step(x + i); /* CALL_STEP */\n"
	"\treturn x;\n"
	"}\n";

static const char rprog_rs[] =
	"// symbolizer test program, Rust\n"
	"mod hot {\n"
	"    #[inline(always)]\n"
	"    fn step(x: u64) -> u64 {\n"
	"        x.wrapping_mul(0x9e3779b97f4a7c15) ^ (x >> 7) // RUST_STEP\n"
	"    }\n"
	"\n"
	"    #[inline(never)]\n"
	"    pub fn spin(mut x: u64, n: u64) -> u64 {\n"
	"        for i in 0..n {\n"
	"            x = step(x.wrapping_add(i)); // RUST_CALL\n"
	"        }\n"
	"        x\n"
	"    }\n"
	"}\n"
	"\n"
	"fn main() {\n"
	"    let n = std::env::args().count() as u64;\n"
	"    println!(\"{}\", hot::spin(n, 1000));\n"
	"}\n";

/* Aliases and a symbol without size; built without -g: symbols only. */
static const char alias_c[] =
	"int base_impl(int x) { return x * 5 + 1; }\n"
	"int longer_global_name(int) __attribute__((alias(\"base_impl\")));\n"
	"int _base(int) __attribute__((alias(\"base_impl\")));\n"
	"int weak_alias(int) __attribute__((weak, alias(\"base_impl\")));\n"
	"__attribute__((used)) static int local_alias(int) __attribute__((alias(\"base_impl\")));\n"
	"int weak_only(int x) __attribute__((weak));\n"
	"int weak_only(int x) { return x - 3; }\n"
	"__attribute__((used)) static int weak_local(int) __attribute__((alias(\"weak_only\")));\n"
	"__asm__(\".text\\n.globl zsize_fn\\n.type zsize_fn,@function\\n\"\n"
	"\t\"zsize_fn:\\n\\tnop\\n\\tnop\\n\\tnop\\n\\tnop\\n\\tret\\n\");\n"
	"int after_zsize(int x) { return x ^ 0x55; }\n";

/* Library calls the compiler cannot inline: they go through the PLT. */
static const char plt_c[] =
	"/* symbolizer PLT test program */\n"
	"#include <stdio.h>\n"
	"#include <string.h>\n"
	"int plt_calls(int argc, char **argv)\n"
	"{\n"
	"\tunsigned long n = 0;\n"
	"\tfor (int i = 0; i < argc; i++)\n"
	"\t\tn += strlen(argv[i]) + (strcmp(argv[i], argv[0]) != 0);\n"
	"\treturn printf(\"%lu\\n\", n);\n"
	"}\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\treturn plt_calls(argc, argv) < 0;\n"
	"}\n";

/* The same for arm64, built without arm64 headers or libc: a stand-in libc. */
static const char plt_a64_c[] =
	"extern int strcmp(const char *, const char *);\n"
	"extern unsigned long strlen(const char *);\n"
	"extern int printf(const char *, ...);\n"
	"int plt_calls(const char *a, const char *b)\n"
	"{\n"
	"\treturn strcmp(a, b) + (int)strlen(a) + printf(\"%s\\n\", b);\n"
	"}\n";

static const char fakec_c[] =
	"int strcmp(const char *a, const char *b) { return a[0] - b[0]; }\n"
	"unsigned long strlen(const char *s) { return (unsigned long)s[0]; }\n"
	"int printf(const char *f, ...) { return f[0]; }\n";

/* ---- fixture ---- */

static char tmpdir[64];
static const char *skip_reason;
/* optional toolchains: the tests that need one skip without it */
static bool have_clang, have_rustc, have_split;
static int warnings;
static char last_warning[1024];

static void count_warning(const char *prefix, const char *msg)
{
	warnings++;
	snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

static char *tmp_path(const char *name)
{
	return xstrfmt("%s/%s", tmpdir, name);
}

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
	if (rc)
		print_message("command failed (%d): %s\n", rc, cmd.buf);
	strbuf_release(&cmd);
	return rc;
}

static int write_text(const char *name, const char *text)
{
	char *path = tmp_path(name);
	FILE *f = fopen(path, "w");
	int rc = -1;

	if (f) {
		rc = fputs(text, f) < 0 ? -1 : 0;
		if (fclose(f))
			rc = -1;
	}
	free(path);
	return rc;
}

static bool have_tool(const char *tool)
{
	return !run("command -v %s >/dev/null 2>&1", tool);
}

static int setup(void **state)
{
	static const char *tools[] = { "cc", "c++", "nm", "addr2line", "objcopy", "readelf" };

	set_warn_routine(count_warning);
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
		if (!have_tool(tools[i])) {
			skip_reason = xstrfmt("'%s' is not installed (make deps)", tools[i]);
			return 0;
		}
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hotloop-t-symbolize-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	if (write_text("prog.c", prog_c) || write_text("cxx.cc", cxx_cc) ||
	    write_text("shlib.c", shlib_c) || write_text("alias.c", alias_c))
		return -1;
	if (run("cd %s && cc -O2 -g -fPIE -pie -o prog prog.c", tmpdir) ||
	    run("cd %s && cc -O2 -g -fno-pie -no-pie -o prog-nopie prog.c", tmpdir) ||
	    run("cd %s && c++ -O2 -g -o cxx cxx.cc", tmpdir) ||
	    run("cd %s && cc -O2 -g -fPIC -shared -o libshlib.so shlib.c", tmpdir) ||
	    run("cd %s && cc -O2 -fPIC -shared -o libalias.so alias.c", tmpdir) ||
	    /* stripped, debug info beside it via .gnu_debuglink */
	    run("cd %s && objcopy --only-keep-debug prog prog.debug && "
		"objcopy --strip-all prog prog-stripped && "
		"objcopy --add-gnu-debuglink=prog.debug prog-stripped", tmpdir) ||
	    /* stripped, debug info only findable by build id */
	    run("cd %s && objcopy --strip-all prog prog-bare", tmpdir) ||
	    run("cd %s && cp libshlib.so libshlib-stripped.so && "
		"objcopy --strip-all libshlib-stripped.so", tmpdir)) {
		skip_reason = "the compiler cannot build the test programs";
		return 0;
	}
	have_clang = have_tool("clang") &&
		!run("cd %s && clang -O2 -g -o prog-clang prog.c", tmpdir);
	have_split = !run("cd %s && cc -O2 -g -gsplit-dwarf -c -o prog-split.o prog.c && "
			  "cc -o prog-split prog-split.o", tmpdir);
	have_rustc = have_tool("rustc") && !write_text("rprog.rs", rprog_rs) &&
		!run("cd %s && rustc -C opt-level=2 -g -o rprog rprog.rs", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	if (tmpdir[0])
		run("rm -rf '%s'", tmpdir);
	set_warn_routine(NULL);
	return 0;
}

#define SKIP_IF_UNABLE() do { \
		if (skip_reason) { \
			print_message("skipped: %s\n", skip_reason); \
			skip(); \
		} \
	} while (0)

/* ---- helpers ---- */

/* Address and size of symbol 'name' in 'bin', from nm. */
static bool nm_symbol(const char *bin, const char *name, uint64_t *addr, uint64_t *size)
{
	char *cmd = xstrfmt("nm -S '%s' 2>/dev/null", bin);
	FILE *p = popen(cmd, "r");
	char line[1024];
	bool found = false;

	free(cmd);
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		uint64_t a, sz = 0;
		char type, sym[512];

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %511s", &a, &sz, &type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*addr = a;
			*size = sz;
			found = true;
		} else if (sscanf(line, "%" SCNx64 " %c %511s", &a, &type, sym) == 3 &&
			   !strcmp(sym, name)) {
			*addr = a;
			*size = 0;
			found = true;
		}
	}
	pclose(p);
	return found;
}

/* The first symbol of 'bin' whose name contains 'needle' (Rust names carry a hash). */
static char *nm_find(const char *bin, const char *needle)
{
	char *cmd = xstrfmt("nm '%s' 2>/dev/null", bin);
	FILE *p = popen(cmd, "r");
	char line[1024], sym[512], *found = NULL;

	free(cmd);
	assert_non_null(p);
	while (!found && fgets(line, sizeof(line), p)) {
		uint64_t a;
		char type;

		if (sscanf(line, "%" SCNx64 " %c %511s", &a, &type, sym) == 3 &&
		    strstr(sym, needle))
			found = xstrdup(sym);
	}
	pclose(p);
	assert_non_null(found);
	return found;
}

/* File offset of virtual address 'vaddr' in 'bin' (the test's own PT_LOAD walk). */
static uint64_t vaddr_to_off(const char *bin, uint64_t vaddr)
{
	int fd = open(bin, O_RDONLY);
	Elf *elf;
	size_t phnum;
	uint64_t off = UINT64_MAX;

	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &phnum), 0);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
			off = vaddr - ph.p_vaddr + ph.p_offset;
	}
	elf_end(elf);
	close(fd);
	assert_true(off != UINT64_MAX);
	return off;
}

/* The 1-based line of the source holding 'marker'. */
static int line_of(const char *src, const char *marker)
{
	const char *m = strstr(src, marker);
	int line = 1;

	assert_non_null(m);
	for (const char *p = src; p < m; p++)
		line += *p == '\n';
	return line;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* An addr2line answer: one inline chain, innermost first. */
struct oracle_frame {
	char name[512];
	char file[512];
	int line;
};

struct oracle {
	uint64_t addr;
	int nr;
	struct oracle_frame f[16];
};

/* addr2line -a -f -i -C for vaddrs [lo, hi), one per byte. */
static struct oracle *addr2line_range(const char *bin, uint64_t lo, uint64_t hi, size_t *nr)
{
	char *in = tmp_path("oracle.in"), *out = tmp_path("oracle.out");
	struct oracle *res = xcalloc(hi - lo, sizeof(*res));
	FILE *f = fopen(in, "w");
	char line[512];
	struct strbuf norm = STRBUF_INIT;
	ssize_t cur = -1;
	int want_file = 0;

	assert_non_null(f);
	for (uint64_t a = lo; a < hi; a++)
		fprintf(f, "0x%" PRIx64 "\n", a);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(run("addr2line -a -f -i -C -e '%s' < '%s' > '%s'", bin, in, out), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		struct oracle *o;
		char *colon, *disc;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "0x", 2) && !want_file) {
			cur++;
			assert_true((uint64_t)cur < hi - lo);
			res[cur].addr = strtoull(line, NULL, 16);
			continue;
		}
		assert_true(cur >= 0);
		o = &res[cur];
		if (!want_file) {
			assert_true(o->nr < 16);
			snprintf(o->f[o->nr].name, sizeof(o->f[0].name), "%s", line);
			want_file = 1;
			continue;
		}
		want_file = 0;
		disc = strstr(line, " (discriminator");
		if (disc)
			*disc = '\0';
		colon = strrchr(line, ':');
		assert_non_null(colon);
		*colon = '\0';
		/* addr2line joins the directory and the name, but leaves "..": normalize */
		strbuf_setlen(&norm, 0);
		if (strcmp(line, "??"))
			path_join_normalize(&norm, NULL, line);
		else
			strbuf_addstr(&norm, line);
		snprintf(o->f[o->nr].file, sizeof(o->f[0].file), "%s", norm.buf);
		o->f[o->nr].line = atoi(colon + 1);	/* "?" gives 0 */
		o->nr++;
	}
	fclose(f);
	strbuf_release(&norm);
	*nr = (size_t)(cur + 1);
	free(in);
	free(out);
	return res;
}

/*
 * Compare every address of function 'fn' in 'bin' against addr2line: the
 * whole inline chain, names, files and lines. Returns the number of
 * addresses whose chain had more than one frame.
 */
static int check_function_against_addr2line(struct sym_dso *d, const char *bin, const char *fn)
{
	uint64_t addr, size;
	struct oracle *o;
	size_t nr;
	int mismatches = 0, inlined = 0;

	assert_true(nm_symbol(bin, fn, &addr, &size));
	assert_true(size > 0);
	o = addr2line_range(bin, addr, addr + size, &nr);
	assert_int_equal(nr, size);
	for (size_t i = 0; i < nr; i++) {
		struct sym_frame fr[16];
		int n = sym_lookup(d, vaddr_to_off(bin, o[i].addr), fr, 16);
		bool ok = n == o[i].nr;

		for (int k = 0; ok && k < n; k++) {
			ok = !strcmp(fr[k].name, o[i].f[k].name) &&
			     !strcmp(fr[k].file, o[i].f[k].file) &&
			     fr[k].line == o[i].f[k].line &&
			     fr[k].inlined == (k < n - 1);
		}
		if (!ok && mismatches++ < 5) {
			print_message("%s+0x%" PRIx64 ": hotloop %d frames, addr2line %d\n",
				      fn, o[i].addr - addr, n, o[i].nr);
			for (int k = 0; k < n; k++)
				print_message("  hotloop   %s %s:%d%s\n", fr[k].name, fr[k].file,
					      fr[k].line, fr[k].inlined ? " (inlined)" : "");
			for (int k = 0; k < o[i].nr; k++)
				print_message("  addr2line %s %s:%d\n", o[i].f[k].name,
					      o[i].f[k].file, o[i].f[k].line);
		}
		inlined += n > 1;
	}
	free(o);
	assert_int_equal(mismatches, 0);
	return inlined;
}

/* Look up the symbol 'fn' of 'bin' at byte 'delta' into it. */
static int lookup_fn(struct sym_dso *d, const char *bin, const char *fn, uint64_t delta,
		     struct sym_frame *fr, int max)
{
	uint64_t addr, size;

	assert_true(nm_symbol(bin, fn, &addr, &size));
	return sym_lookup(d, vaddr_to_off(bin, addr + delta), fr, max);
}

/* Find an address in 'fn' whose chain is exactly 'depth' deep with 'inner' innermost. */
static bool find_chain(struct sym_dso *d, const char *bin, const char *fn, int depth,
		       const char *inner, struct sym_frame *out)
{
	uint64_t addr, size;

	assert_true(nm_symbol(bin, fn, &addr, &size));
	for (uint64_t a = addr; a < addr + size; a++) {
		int n = sym_lookup(d, vaddr_to_off(bin, a), out, 16);

		if (n == depth && !strcmp(out[0].name, inner))
			return true;
	}
	return false;
}

/* ---- tests ---- */

/*
 * The copies of an inlined function: every range lies in a function it was
 * inlined into, and each of their addresses has it in its inline chain.
 */
static void test_symbolize__inlined_ranges(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_inlined in;
	struct sym_frame fr[8];
	uint64_t loop_addr, loop_size, twice_addr, twice_size;
	size_t in_loop = 0, in_twice = 0;
	char *bin;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	bin = tmp_path("prog");
	d = symbolizer_dso(s, bin, NULL);
	assert_true(nm_symbol(bin, "outer_loop", &loop_addr, &loop_size));
	assert_true(nm_symbol(bin, "outer_twice", &twice_addr, &twice_size));

	/* once in outer_loop, twice through mix_twice in outer_twice */
	assert_true(sym_inlined_ranges(d, "mix_step", &in) >= 3);
	assert_string_equal(in.name, "mix_step");
	assert_true(in.nr_ranges >= in.copies);
	for (size_t i = 0; i < in.nr_ranges; i++) {
		const struct sym_range *r = &in.ranges[i];
		bool found = false;
		int n;

		assert_true(r->lo < r->hi && r->instance < in.copies);
		if (r->lo - loop_addr < loop_size) {
			assert_true(r->hi <= loop_addr + loop_size);
			in_loop++;
		} else {
			assert_true(r->lo - twice_addr < twice_size && r->hi <= twice_addr + twice_size);
			in_twice++;
		}
		n = sym_lookup(d, vaddr_to_off(bin, r->lo), fr, 8);
		for (int k = 0; k < n; k++)
			found |= !strcmp(fr[k].name, "mix_step") && fr[k].inlined;
		assert_true(found);
	}
	assert_true(in_loop > 0 && in_twice > 0);
	sym_inlined_release(&in);

	assert_true(sym_inlined_ranges(d, "mix_twice", &in) >= 1);
	for (size_t i = 0; i < in.nr_ranges; i++)
		assert_true(in.ranges[i].lo - twice_addr < twice_size);
	sym_inlined_release(&in);

	/* a function of its own, and no function at all: no copy */
	assert_int_equal(sym_inlined_ranges(d, "hot_noinline", &in), 0);
	assert_null(in.name);
	assert_int_equal(in.nr_ranges, 0);
	sym_inlined_release(&in);
	assert_int_equal(sym_inlined_ranges(d, "no_such_function", &in), 0);
	sym_inlined_release(&in);
	free(bin);
	symbolizer_free(s);
}

static void test_symbolize__noinline_function_pie(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[8];
	char *bin;
	int n;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	bin = tmp_path("prog");
	d = symbolizer_dso(s, bin, NULL);
	assert_true(sym_dso_has_dwarf(d));
	assert_string_equal(sym_dso_path(d), bin);
	n = lookup_fn(d, bin, "hot_noinline", 0, fr, 8);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].name, "hot_noinline");
	assert_string_equal(fr[0].system_name, "hot_noinline");
	assert_true(ends_with(fr[0].file, "/prog.c"));
	assert_false(fr[0].inlined);
	assert_int_equal(fr[0].start_line, line_of(prog_c, "HOT_DECL"));
	assert_true(fr[0].line == line_of(prog_c, "HOT_DECL") ||
		    fr[0].line == line_of(prog_c, "HOT_BODY"));
	check_function_against_addr2line(d, bin, "hot_noinline");
	check_function_against_addr2line(d, bin, "main");
	symbolizer_free(s);
	free(bin);
}

static void test_symbolize__inline_chain(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[16];
	char *bin;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	bin = tmp_path("prog");
	d = symbolizer_dso(s, bin, NULL);

	/* mix_step inlined into outer_loop, at the call's line */
	assert_true(find_chain(d, bin, "outer_loop", 2, "mix_step", fr));
	assert_true(fr[0].inlined);
	assert_true(ends_with(fr[0].file, "/prog.c"));
	assert_true(fr[0].line >= line_of(prog_c, "mix_step(unsigned long x)") &&
		    fr[0].line < line_of(prog_c, "mix_twice(unsigned long x)"));
	assert_string_equal(fr[1].name, "outer_loop");
	assert_false(fr[1].inlined);
	assert_int_equal(fr[1].line, line_of(prog_c, "CALL_MIX"));

	/* two levels: mix_step in mix_twice in outer_twice */
	assert_true(find_chain(d, bin, "outer_twice", 3, "mix_step", fr));
	assert_true(fr[0].inlined);
	assert_string_equal(fr[1].name, "mix_twice");
	assert_true(fr[1].inlined);
	assert_int_equal(fr[1].line, line_of(prog_c, "CALL_IN_TWICE"));
	assert_int_equal(fr[1].start_line, line_of(prog_c, "mix_twice(unsigned long x)"));
	assert_string_equal(fr[2].name, "outer_twice");
	assert_false(fr[2].inlined);
	assert_int_equal(fr[2].line, line_of(prog_c, "CALL_TWICE"));

	/* a short buffer keeps the innermost frames */
	assert_int_equal(lookup_fn(d, bin, "outer_twice", 0, fr, 0), 0);
	assert_true(find_chain(d, bin, "outer_twice", 3, "mix_step", fr));
	{
		struct sym_frame one[1];
		uint64_t addr, size;
		int n = 0;

		assert_true(nm_symbol(bin, "outer_twice", &addr, &size));
		for (uint64_t a = addr; a < addr + size && !n; a++) {
			struct sym_frame all[16];

			if (sym_lookup(d, vaddr_to_off(bin, a), all, 16) == 3)
				n = sym_lookup(d, vaddr_to_off(bin, a), one, 1);
		}
		assert_int_equal(n, 1);
		assert_string_equal(one[0].name, "mix_step");
		assert_true(one[0].inlined);
	}

	/* every address of both functions, whole chains, against addr2line */
	assert_true(check_function_against_addr2line(d, bin, "outer_loop") > 0);
	assert_true(check_function_against_addr2line(d, bin, "outer_twice") > 0);
	symbolizer_free(s);
	free(bin);
}

/*
 * A program of several units built the way make builds one: from a build
 * directory, with relative source names and include directories that have
 * ".." in them (zstd's "../lib/compress/../common/bitstream.h"), DWARF 5 and
 * 4, and one unit named by its absolute path. Every file is the unit's
 * DW_AT_comp_dir joined with the name, normalized: absolute, without "."
 * or "..", the file addr2line names once normalized the same way.
 */
static const char mu_helper_h[] =
	"/* multi-unit test: an always-inline helper in an included header */\n"
	"static inline __attribute__((always_inline)) unsigned long\n"
	"mu_helper(unsigned long x)\n"
	"{\n"
	"\tfor (int i = 0; i < 6; i++)\n"
	"\t\tx = (x ^ (x >> 11)) * 0x9e3779b97f4a7c15ul; /* MU_HELPER */\n"
	"\treturn x;\n"
	"}\n";
static const char mu_a_c[] =
	"/* multi-unit test: unit a */\n"
	"#include \"helper.h\"\n"
	"unsigned long mu_b(unsigned long);\n"
	"unsigned long mu_c(unsigned long);\n"
	"volatile unsigned long mu_sink;\n"
	"__attribute__((noinline)) unsigned long mu_a(unsigned long x)\n"
	"{\n"
	"\treturn mu_helper(x + mu_sink); /* MU_A */\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\tmu_sink = mu_a((unsigned long)argc) + mu_b(mu_sink) + mu_c(mu_sink);\n"
	"\treturn 0;\n"
	"}\n";
static const char mu_b_c[] =
	"/* multi-unit test: unit b */\n"
	"#include \"helper.h\"\n"
	"extern volatile unsigned long mu_sink;\n"
	"__attribute__((noinline)) unsigned long mu_b(unsigned long x)\n"
	"{\n"
	"\treturn mu_helper(x * 3 + mu_sink) + 1; /* MU_B */\n"
	"}\n";
static const char mu_c_c[] =
	"/* multi-unit test: unit c, compiled by its absolute name */\n"
	"extern volatile unsigned long mu_sink;\n"
	"__attribute__((noinline)) unsigned long mu_c(unsigned long x)\n"
	"{\n"
	"\treturn x * 5 + mu_sink; /* MU_C */\n"
	"}\n";

static bool has_dot_component(const char *path)
{
	return strstr(path, "/./") || strstr(path, "/../") || strstr(path, "//") ||
	       ends_with(path, "/.") || ends_with(path, "/..");
}

static void test_symbolize__multi_unit_paths(void **state)
{
	static const char *dwarf[] = { "-gdwarf-5", "-gdwarf-4" };

	SKIP_IF_UNABLE();
	assert_int_equal(run("mkdir -p %s/mu/src/inc %s/mu/lib %s/mu/build", tmpdir, tmpdir, tmpdir), 0);
	assert_int_equal(write_text("mu/src/inc/helper.h", mu_helper_h), 0);
	assert_int_equal(write_text("mu/src/a.c", mu_a_c), 0);
	assert_int_equal(write_text("mu/lib/b.c", mu_b_c), 0);
	assert_int_equal(write_text("mu/lib/c.c", mu_c_c), 0);
	for (size_t v = 0; v < ARRAY_SIZE(dwarf); v++) {
		char *name = xstrfmt("mu/build/mu%zu", v), *bin = tmp_path(name);
		char *helper = tmp_path("mu/src/inc/helper.h"), *a = tmp_path("mu/src/a.c");
		char *b = tmp_path("mu/lib/b.c"), *c = tmp_path("mu/lib/c.c");
		struct symbolizer *s = symbolizer_new();
		struct sym_dso *d;
		struct sym_frame fr[16];
		int n;

		assert_int_equal(run("cd %s/mu/build && cc -O2 -g %s -I../src/../src/./inc -c ../src/a.c && "
				     "cc -O2 -g %s -I..//src/inc -c ./../lib/b.c && "
				     "cc -O2 -g %s -c %s/mu/build/../lib/c.c && "
				     "cc -o mu%zu a.o b.o c.o", tmpdir, dwarf[v], dwarf[v], dwarf[v],
				     tmpdir, v), 0);
		d = symbolizer_dso(s, bin, NULL);

		/* the helper inlined into both units names the one header */
		assert_true(find_chain(d, bin, "mu_a", 2, "mu_helper", fr));
		assert_string_equal(fr[0].file, helper);
		assert_int_equal(fr[0].line, line_of(mu_helper_h, "MU_HELPER"));
		assert_string_equal(fr[1].file, a);
		assert_int_equal(fr[1].line, line_of(mu_a_c, "MU_A"));
		assert_true(find_chain(d, bin, "mu_b", 2, "mu_helper", fr));
		assert_string_equal(fr[0].file, helper);
		assert_string_equal(fr[1].file, b);
		assert_int_equal(fr[1].line, line_of(mu_b_c, "MU_B"));
		n = lookup_fn(d, bin, "mu_c", 0, fr, 16);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].file, c);

		/* every address of the three, whole chains, against addr2line */
		assert_true(check_function_against_addr2line(d, bin, "mu_a") > 0);
		assert_true(check_function_against_addr2line(d, bin, "mu_b") > 0);
		check_function_against_addr2line(d, bin, "mu_c");
		for (const char *const *f = (const char *const[]){ helper, a, b, c, NULL }; *f; f++)
			assert_false(has_dot_component(*f));
		symbolizer_free(s);
		free(name);
		free(bin);
		free(helper);
		free(a);
		free(b);
		free(c);
	}
}

static void test_symbolize__non_pie(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[16];
	char *bin;
	uint64_t addr, size;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	bin = tmp_path("prog-nopie");
	d = symbolizer_dso(s, bin, NULL);
	/* the file offset is not the address in an ET_EXEC */
	assert_true(nm_symbol(bin, "hot_noinline", &addr, &size));
	assert_true(vaddr_to_off(bin, addr) != addr);
	assert_int_equal(lookup_fn(d, bin, "hot_noinline", 0, fr, 16), 1);
	assert_string_equal(fr[0].name, "hot_noinline");
	assert_true(find_chain(d, bin, "outer_twice", 3, "mix_step", fr));
	assert_string_equal(fr[2].name, "outer_twice");
	check_function_against_addr2line(d, bin, "outer_loop");
	check_function_against_addr2line(d, bin, "outer_twice");
	/* an offset outside every loadable segment resolves nothing */
	assert_int_equal(sym_lookup(d, UINT64_C(1) << 40, fr, 16), 0);
	symbolizer_free(s);
	free(bin);
}

static void test_symbolize__shared_library(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[16];
	char *lib, *stripped;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	lib = tmp_path("libshlib.so");
	d = symbolizer_dso(s, lib, NULL);
	assert_int_equal(lookup_fn(d, lib, "shlib_hot", 0, fr, 16), 1);
	assert_string_equal(fr[0].name, "shlib_hot");
	assert_true(ends_with(fr[0].file, "/shlib.c"));
	assert_true(find_chain(d, lib, "shlib_hot", 2, "shlib_step", fr));
	assert_int_equal(fr[0].line, line_of(shlib_c, "SHLIB_STEP"));
	assert_string_equal(fr[1].name, "shlib_hot");
	assert_int_equal(fr[1].line, line_of(shlib_c, "CALL_STEP"));
	check_function_against_addr2line(d, lib, "shlib_hot");

	/* stripped, no debug file: .dynsym still names exported functions */
	stripped = tmp_path("libshlib-stripped.so");
	d = symbolizer_dso(s, stripped, NULL);
	assert_false(sym_dso_has_dwarf(d));
	assert_int_equal(lookup_fn(d, lib, "shlib_hot", 4, fr, 16), 1);
	assert_string_equal(fr[0].name, "shlib_hot");
	assert_string_equal(fr[0].file, "");
	assert_int_equal(fr[0].line, 0);
	assert_false(fr[0].inlined);
	symbolizer_free(s);
	free(lib);
	free(stripped);
}

static void test_symbolize__cxx_method(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[16];
	char *bin;
	int n;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	bin = tmp_path("cxx");
	d = symbolizer_dso(s, bin, NULL);
	n = lookup_fn(d, bin, "_ZN5hotns6Matrix8multiplyEi", 0, fr, 16);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].name, "hotns::Matrix::multiply(int)");
	assert_string_equal(fr[0].system_name, "_ZN5hotns6Matrix8multiplyEi");
	assert_int_equal(fr[0].start_line, line_of(cxx_cc, "MULTIPLY_DECL"));
	assert_true(ends_with(fr[0].file, "/cxx.cc"));
	check_function_against_addr2line(d, bin, "_ZN5hotns6Matrix8multiplyEi");
	symbolizer_free(s);
	free(bin);
}

/* clang's DWARF 5 (address and string indexes, rnglists) */
static void test_symbolize__clang(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[16];
	char *bin;

	SKIP_IF_UNABLE();
	if (!have_clang) {
		print_message("skipped: clang is not installed or cannot build\n");
		skip();
	}
	s = symbolizer_new();
	bin = tmp_path("prog-clang");
	d = symbolizer_dso(s, bin, NULL);
	assert_int_equal(lookup_fn(d, bin, "hot_noinline", 0, fr, 16), 1);
	assert_string_equal(fr[0].name, "hot_noinline");
	assert_true(ends_with(fr[0].file, "/prog.c"));
	assert_int_equal(fr[0].start_line, line_of(prog_c, "HOT_DECL"));
	assert_true(check_function_against_addr2line(d, bin, "outer_loop") > 0);
	assert_true(check_function_against_addr2line(d, bin, "outer_twice") > 0);
	check_function_against_addr2line(d, bin, "main");
	symbolizer_free(s);
	free(bin);
}

/*
 * Split DWARF (-gsplit-dwarf): lines from the skeleton unit, functions and
 * inline frames from the .dwo beside it. addr2line cannot read it, so the
 * oracle is the same program built without splitting (same code).
 */
static void test_symbolize__split_dwarf(void **state)
{
	struct symbolizer *s;
	struct sym_dso *split, *whole;
	char *bin_split, *bin;
	static const char *fns[] = { "outer_loop", "outer_twice", "hot_noinline", "main" };
	int chains = 0;

	SKIP_IF_UNABLE();
	if (!have_split) {
		print_message("skipped: the compiler cannot build with -gsplit-dwarf\n");
		skip();
	}
	s = symbolizer_new();
	bin = tmp_path("prog");
	bin_split = tmp_path("prog-split");
	whole = symbolizer_dso(s, bin, NULL);
	split = symbolizer_dso(s, bin_split, NULL);
	assert_true(sym_dso_has_dwarf(split));
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
		uint64_t a1, s1, a2, s2;

		assert_true(nm_symbol(bin, fns[i], &a1, &s1));
		assert_true(nm_symbol(bin_split, fns[i], &a2, &s2));
		assert_int_equal(s1, s2);
		for (uint64_t k = 0; k < s1; k++) {
			struct sym_frame f1[16], f2[16];
			int n1 = sym_lookup(whole, vaddr_to_off(bin, a1 + k), f1, 16);
			int n2 = sym_lookup(split, vaddr_to_off(bin_split, a2 + k), f2, 16);

			assert_int_equal(n1, n2);
			for (int j = 0; j < n1; j++) {
				assert_string_equal(f1[j].name, f2[j].name);
				assert_string_equal(f1[j].file, f2[j].file);
				assert_int_equal(f1[j].line, f2[j].line);
				assert_int_equal(f1[j].start_line, f2[j].start_line);
				assert_int_equal(f1[j].inlined, f2[j].inlined);
			}
			chains += n2 > 2;
		}
	}
	assert_true(chains > 0);
	symbolizer_free(s);
	free(bin);
	free(bin_split);
}

static void test_symbolize__rust(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[16];
	char *bin, *spin;
	uint64_t addr, size;
	bool found = false;

	SKIP_IF_UNABLE();
	if (!have_rustc) {
		print_message("skipped: rustc is not installed or cannot build\n");
		skip();
	}
	s = symbolizer_new();
	bin = tmp_path("rprog");
	spin = nm_find(bin, "3hot4spin");
	d = symbolizer_dso(s, bin, NULL);
	assert_int_equal(lookup_fn(d, bin, spin, 0, fr, 16), 1);
	assert_string_equal(fr[0].name, "rprog::hot::spin");
	assert_string_equal(fr[0].system_name, spin);
	assert_true(ends_with(fr[0].file, "/rprog.rs"));
	/* step() inlined into spin() at the call's line, maybe under core's frames */
	assert_true(nm_symbol(bin, spin, &addr, &size));
	for (uint64_t a = addr; a < addr + size && !found; a++) {
		int n = sym_lookup(d, vaddr_to_off(bin, a), fr, 16);

		for (int k = 0; k + 1 < n; k++) {
			if (!strcmp(fr[k].name, "rprog::hot::step") && fr[k].inlined &&
			    !strcmp(fr[k + 1].name, "rprog::hot::spin") && !fr[k + 1].inlined &&
			    fr[k + 1].line == line_of(rprog_rs, "RUST_CALL"))
				found = true;
		}
	}
	assert_true(found);
	assert_true(check_function_against_addr2line(d, bin, spin) > 0);
	symbolizer_free(s);
	free(spin);
	free(bin);
}

static void test_symbolize__debuglink(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[16];
	char *bin, *stripped;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	bin = tmp_path("prog");
	stripped = tmp_path("prog-stripped");
	d = symbolizer_dso(s, stripped, NULL);
	assert_true(sym_dso_has_dwarf(d));
	/* same offsets as the unstripped file */
	assert_int_equal(lookup_fn(d, bin, "hot_noinline", 0, fr, 16), 1);
	assert_string_equal(fr[0].name, "hot_noinline");
	assert_true(ends_with(fr[0].file, "/prog.c"));
	assert_true(find_chain(d, bin, "outer_twice", 3, "mix_step", fr));
	assert_int_equal(fr[2].line, line_of(prog_c, "CALL_TWICE"));
	symbolizer_free(s);
	free(bin);
	free(stripped);
}

static void test_symbolize__build_id_dir(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[16];
	char *bin, *bare, *root, *hex;
	const char *id;
	int before;

	SKIP_IF_UNABLE();
	bin = tmp_path("prog");
	bare = tmp_path("prog-bare");
	root = tmp_path("debugroot");

	/* the build id, as hotloop reads it, is the one readelf shows */
	s = symbolizer_new();
	d = symbolizer_dso(s, bin, NULL);
	id = sym_dso_build_id(d);
	assert_true(strlen(id) > 2);
	assert_int_equal(run("readelf -n '%s' | grep -q 'Build ID: %s$'", bin, id), 0);
	hex = xstrdup(id);
	symbolizer_free(s);

	/* without the debug file: no DWARF, and no symbols in a stripped PIE */
	s = symbolizer_new();
	symbolizer_set_debug_path(s, root);
	d = symbolizer_dso(s, bare, NULL);
	assert_false(sym_dso_has_dwarf(d));
	assert_int_equal(lookup_fn(d, bin, "hot_noinline", 0, fr, 16), 0);
	symbolizer_free(s);

	/* with it under ROOT/.build-id/xx/rest.debug */
	assert_int_equal(run("mkdir -p '%s/.build-id/%.2s' && cp '%s/prog.debug' '%s/.build-id/%.2s/%s.debug'",
			     root, hex, tmpdir, root, hex, hex + 2), 0);
	s = symbolizer_new();
	symbolizer_set_debug_path(s, root);
	d = symbolizer_dso(s, bare, NULL);
	assert_true(sym_dso_has_dwarf(d));
	assert_int_equal(lookup_fn(d, bin, "hot_noinline", 0, fr, 16), 1);
	assert_string_equal(fr[0].name, "hot_noinline");
	assert_true(find_chain(d, bin, "outer_loop", 2, "mix_step", fr));

	/* asking with the right build id gives the same DSO; a wrong one resolves nothing */
	assert_ptr_equal(symbolizer_dso(s, bare, hex), d);
	before = warnings;
	d = symbolizer_dso(s, bare, "00112233445566778899aabbccddeeff00112233");
	assert_int_equal(warnings, before + 1);
	assert_non_null(strstr(last_warning, "build id"));
	assert_int_equal(lookup_fn(d, bin, "hot_noinline", 0, fr, 16), 0);
	assert_ptr_equal(symbolizer_dso(s, bare, "00112233445566778899aabbccddeeff00112233"), d);
	assert_int_equal(warnings, before + 1);
	symbolizer_free(s);

	/* a mismatch on first open also resolves nothing, warned once */
	s = symbolizer_new();
	before = warnings;
	d = symbolizer_dso(s, bin, "deadbeef");
	assert_int_equal(warnings, before + 1);
	assert_int_equal(lookup_fn(d, bin, "hot_noinline", 0, fr, 16), 0);
	assert_ptr_equal(symbolizer_dso(s, bin, "DEADBEEF"), d);
	/* while the file itself, asked for without a build id, still works */
	d = symbolizer_dso(s, bin, NULL);
	assert_int_equal(lookup_fn(d, bin, "hot_noinline", 0, fr, 16), 1);
	assert_int_equal(warnings, before + 1);
	symbolizer_free(s);
	free(hex);
	free(bin);
	free(bare);
	free(root);
}

static void test_symbolize__aliases_and_sizeless_symbols(void **state)
{
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[4];
	char *lib;
	uint64_t za, zs, aa, as;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	lib = tmp_path("libalias.so");
	d = symbolizer_dso(s, lib, NULL);
	assert_false(sym_dso_has_dwarf(d));

	/* global over weak and local, fewer underscores, then shorter */
	assert_int_equal(lookup_fn(d, lib, "local_alias", 1, fr, 4), 1);
	assert_string_equal(fr[0].name, "base_impl");
	assert_string_equal(fr[0].file, "");
	assert_int_equal(fr[0].line, 0);
	/* weak over local */
	assert_int_equal(lookup_fn(d, lib, "weak_local", 0, fr, 4), 1);
	assert_string_equal(fr[0].name, "weak_only");

	/* a symbol of size 0 extends to the next one */
	assert_true(nm_symbol(lib, "zsize_fn", &za, &zs));
	assert_int_equal(zs, 0);
	for (uint64_t a = za; a < za + 5; a++) {	/* four nops and a ret */
		assert_int_equal(sym_lookup(d, vaddr_to_off(lib, a), fr, 4), 1);
		assert_string_equal(fr[0].name, "zsize_fn");
	}
	/* and not into the next symbol */
	assert_true(nm_symbol(lib, "after_zsize", &aa, &as));
	assert_true(as > 0);
	assert_int_equal(sym_lookup(d, vaddr_to_off(lib, aa), fr, 4), 1);
	assert_string_equal(fr[0].name, "after_zsize");
	symbolizer_free(s);
	free(lib);
}

/* ---- PLT stubs ---- */

/* Whether 'bin' has a section called 'name' (of any type but NOBITS). */
static bool has_section(const char *bin, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd = open(bin, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			found = true;
			if (addr)
				*addr = sh.sh_addr;
			if (size)
				*size = sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/* Whether 'name' is one of the symbols that nm 'opts' lists at 'addr'. */
static bool nm_has_at(const char *bin, const char *opts, uint64_t addr, const char *name)
{
	char *cmd = xstrfmt("nm %s '%s' 2>/dev/null", opts, bin);
	FILE *p = popen(cmd, "r");
	char line[1024];
	bool found = false;

	free(cmd);
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		uint64_t a;
		char type, sym[512];

		/* -D lists versions: "strnlen@@GLIBC_2.2.5" */
		if (sscanf(line, "%" SCNx64 " %c %511s", &a, &type, sym) == 3 && a == addr) {
			sym[strcspn(sym, "@")] = '\0';
			found |= !strcmp(sym, name);
		}
	}
	pclose(p);
	return found;
}

/* One line of a disassembly of the PLT sections, with its label. */
struct plt_row {
	uint64_t addr;
	int section;
	size_t label;		/* index into the labels */
};

static bool ends_with_plt(const char *s)
{
	return ends_with(s, "@plt");
}

/*
 * Every byte of the PLT sections of 'bin' against 'objdump -d': in a stub
 * labelled "<target>@plt" the frame must be "<target>@plt", elsewhere (the
 * header objdump labels "<.plt>" or "<x@plt-0x10>", lazy-binding entries)
 * "[plt]"; file "", line 0, not inlined. With 'demangle' (objdump -C) the
 * frame's name is compared, else its system_name. objdump's "*ABS*+0xR@plt"
 * (IRELATIVE) must be named after a dynamic symbol at R. Each of the
 * NULL-terminated 'must' must be among the labels (at most 8). Returns the
 * number of stubs.
 */
static int check_plt_against_objdump(struct sym_dso *d, const char *bin, const char *objdump,
				     bool demangle, const char *const *must)
{
	char *cmd = xstrfmt("%s -d %s -j .plt -j .plt.sec -j .plt.got -j .iplt '%s' 2>/dev/null",
			    objdump, demangle ? "-C" : "", bin);
	FILE *p = popen(cmd, "r");
	struct plt_row *rows = NULL;
	char **labels = NULL, *line = NULL, *abs_ok = xstrdup("");
	size_t nr = 0, alloc = 0, nr_labels = 1, alloc_labels = 0, linecap = 0;
	int section = 0, mismatches = 0, stubs = 0;
	bool seen[8] = { false };
	uint64_t delta = 0;

	assert_non_null(p);
	ALLOC_GROW(labels, 1, alloc_labels);
	labels[0] = xstrdup("");
	while (getline(&line, &linecap, p) > 0) {
		char *s = line, *end, *label;
		uint64_t a;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "Disassembly of section ", 23)) {
			section++;
			ALLOC_GROW(labels, nr_labels + 1, alloc_labels);
			labels[nr_labels++] = xstrdup("");
			continue;
		}
		while (*s == ' ')
			s++;
		a = strtoull(s, &end, 16);
		if (end == s)
			continue;
		if (s == line && !strncmp(end, " <", 2) && ends_with(end, ">:")) {
			label = xstrndup(end + 2, strlen(end) - 4);
			ALLOC_GROW(labels, nr_labels + 1, alloc_labels);
			labels[nr_labels++] = label;
			if (ends_with_plt(label))
				stubs++;
			for (size_t k = 0; must && must[k]; k++)
				seen[k] |= !strcmp(must[k], label);
			continue;
		}
		if (s == line || *end != ':' || !section)
			continue;
		ALLOC_GROW(rows, nr + 1, alloc);
		rows[nr].addr = a;
		rows[nr].section = section;
		rows[nr].label = nr_labels - 1;
		nr++;
	}
	free(line);
	pclose(p);
	free(cmd);
	for (size_t k = 0; must && must[k]; k++) {
		if (!seen[k])
			print_message("%s: no label '%s' in %s's disassembly\n", bin, must[k], objdump);
		assert_true(seen[k]);
	}
	for (size_t i = 0; i < nr; i++) {
		uint64_t end = i + 1 < nr && rows[i + 1].section == rows[i].section ?
			rows[i + 1].addr : rows[i].addr + 1;

		if (!i || rows[i - 1].section != rows[i].section)
			delta = vaddr_to_off(bin, rows[i].addr) - rows[i].addr;
		for (uint64_t a = rows[i].addr; a < end; a++) {
			const char *lab = labels[rows[i].label];
			struct sym_frame fr[4];
			int n = sym_lookup(d, a + delta, fr, 4);
			const char *got = n == 1 ? (demangle ? fr[0].name : fr[0].system_name) : "(none)";
			bool ok;

			if (!ends_with_plt(lab)) {
				ok = !strcmp(got, "[plt]");
			} else if (!strncmp(lab, "*ABS*+0x", 8)) {
				char *key = n == 1 ? xstrfmt("%s %s", lab, fr[0].system_name) : NULL;

				ok = key && !strcmp(key, abs_ok);
				if (key && !ok && ends_with_plt(fr[0].system_name)) {
					char *target = xstrndup(fr[0].system_name,
								strlen(fr[0].system_name) - 4);

					ok = nm_has_at(bin, "-D --defined-only",
						       strtoull(lab + 8, NULL, 16), target);
					if (ok) {
						free(abs_ok);
						abs_ok = xstrdup(key);
					}
					free(target);
				}
				free(key);
			} else {
				ok = !strcmp(got, lab);
			}
			ok = ok && n == 1 && !strcmp(fr[0].file, "") && fr[0].line == 0 &&
			     fr[0].start_line == 0 && !fr[0].inlined;
			if (!ok && mismatches++ < 5)
				print_message("%s 0x%" PRIx64 ": objdump <%s>, hotloop %d frames '%s'\n",
					      bin, a, lab, n, got);
		}
	}
	for (size_t k = 0; k < nr_labels; k++)
		free(labels[k]);
	free(labels);
	free(abs_ok);
	free(rows);
	assert_int_equal(mismatches, 0);
	return stubs;
}

/* Both checks: system names against objdump, demangled ones against objdump -C. */
static void check_plt(struct symbolizer *s, const char *bin, const char *objdump)
{
	static const char *const names[] = { "strlen@plt", "strcmp@plt", "printf@plt", NULL };
	struct sym_dso *d = symbolizer_dso(s, bin, NULL);

	assert_true(check_plt_against_objdump(d, bin, objdump, false, names) >= 3);
	assert_true(check_plt_against_objdump(d, bin, objdump, true, names) >= 3);
}

static void test_symbolize__plt_x86_64(void **state)
{
	static const struct { const char *name, *flags; } builds[] = {
		{ "plt", "-O2 -g -fPIE -pie" },
		{ "plt-nopie", "-O2 -fno-pie -no-pie" },
		{ "plt-now", "-O2 -g -Wl,-z,now" },
		{ "plt-nopie-now", "-O2 -fno-pie -no-pie -Wl,-z,now" },
		/* ld gives .plt.sec when every input is IBT-marked, or when told */
		{ "plt-ibt", "-O2 -fcf-protection -Wl,-z,ibtplt" },
		{ "plt-ibt-now", "-O2 -fcf-protection -Wl,-z,ibtplt -Wl,-z,now" },
		{ "libplt.so", "-O2 -g -fPIC -shared" },
		{ "libplt-ibt.so", "-O2 -fPIC -shared -fcf-protection -Wl,-z,ibtplt" },
	};
	struct symbolizer *s;
	struct sym_frame fr[4];
	char *bin;

	SKIP_IF_UNABLE();
#ifndef __x86_64__
	print_message("skipped: not an x86-64 machine\n");
	skip();
#endif
	assert_int_equal(write_text("plt.c", plt_c), 0);
	s = symbolizer_new();
	for (size_t i = 0; i < ARRAY_SIZE(builds); i++) {
		assert_int_equal(run("cd %s && cc %s -o %s plt.c", tmpdir, builds[i].flags,
				     builds[i].name), 0);
		bin = tmp_path(builds[i].name);
		assert_true(has_section(bin, ".plt", NULL, NULL));
		if (strstr(builds[i].flags, "ibtplt"))
			assert_true(has_section(bin, ".plt.sec", NULL, NULL));
		check_plt(s, bin, "objdump");
		/* the program's own functions are still found */
		assert_int_equal(lookup_fn(symbolizer_dso(s, bin, NULL), bin, "plt_calls", 0,
					   fr, 4), 1);
		assert_string_equal(fr[0].name, "plt_calls");
		free(bin);
	}

	/* stripped: only .dynsym is left, which the relocations name anyway */
	assert_int_equal(run("cd %s && objcopy --strip-all plt-ibt plt-ibt-stripped && "
			     "objcopy --strip-all libplt.so libplt-stripped.so", tmpdir), 0);
	bin = tmp_path("plt-ibt-stripped");
	assert_false(has_section(bin, ".symtab", NULL, NULL));
	check_plt(s, bin, "objdump");
	free(bin);
	bin = tmp_path("libplt-stripped.so");
	check_plt(s, bin, "objdump");
	free(bin);

	/* lld: no sh_entsize, no .plt.got, another order */
	if (have_tool("ld.lld") &&
	    !run("cd %s && clang -fuse-ld=lld -O2 -o plt-lld plt.c", tmpdir)) {
		bin = tmp_path("plt-lld");
		check_plt(s, bin, "objdump");
		free(bin);
	} else {
		print_message("lld: skipped, clang cannot link with ld.lld (apt-get install lld)\n");
	}

	/*
	 * static: .plt holds only IRELATIVE stubs, 8 bytes each, which objdump
	 * does not label; each must be named after an ifunc of the program
	 */
	if (!run("cd %s && cc -O2 -static -o plt-static plt.c 2>/dev/null", tmpdir)) {
		uint64_t addr, size, delta;
		struct sym_dso *d;
		char last[512] = "";
		int stubs = 0;

		bin = tmp_path("plt-static");
		d = symbolizer_dso(s, bin, NULL);
		assert_true(has_section(bin, ".plt", &addr, &size));
		delta = vaddr_to_off(bin, addr) - addr;
		for (uint64_t a = addr; a < addr + size; a++) {
			uint64_t taddr, tsize;
			char *target;

			assert_int_equal(sym_lookup(d, a + delta, fr, 4), 1);
			assert_true(ends_with_plt(fr[0].name));
			if (!strcmp(fr[0].name, last))
				continue;
			snprintf(last, sizeof(last), "%s", fr[0].name);
			target = xstrndup(fr[0].name, strlen(fr[0].name) - 4);
			if (!nm_symbol(bin, target, &taddr, &tsize))
				print_message("plt-static 0x%" PRIx64 ": '%s' is no symbol\n",
					      a, fr[0].name);
			assert_true(nm_symbol(bin, target, &taddr, &tsize));
			free(target);
			stubs++;
		}
		assert_true(stubs > 1);
		free(bin);
	} else {
		print_message("static: skipped, cc cannot link -static (libc6-dev static libraries)\n");
	}
	symbolizer_free(s);
}

/* The machine's libc (IRELATIVE stubs, .plt.got) and libstdc++ (C++ names). */
static void test_symbolize__plt_system_libraries(void **state)
{
	static const char *const libs[][2] = {
		{ "cc", "libc.so.6" },
		{ "c++", "libstdc++.so.6" },
	};
	struct symbolizer *s;

	SKIP_IF_UNABLE();
#ifndef __x86_64__
	print_message("skipped: not an x86-64 machine\n");
	skip();
#endif
	s = symbolizer_new();
	for (size_t i = 0; i < ARRAY_SIZE(libs); i++) {
		char *cmd = xstrfmt("%s -print-file-name=%s", libs[i][0], libs[i][1]);
		FILE *p = popen(cmd, "r");
		char path[1024] = "";
		struct sym_dso *d;
		int stubs;

		assert_non_null(p);
		if (!fgets(path, sizeof(path), p))
			path[0] = '\0';
		pclose(p);
		free(cmd);
		path[strcspn(path, "\n")] = '\0';
		if (path[0] != '/' || access(path, R_OK)) {
			print_message("%s: skipped, %s does not find it\n", libs[i][1], libs[i][0]);
			continue;
		}
		d = symbolizer_dso(s, path, NULL);
		stubs = check_plt_against_objdump(d, path, "objdump", false, NULL);
		assert_int_equal(check_plt_against_objdump(d, path, "objdump", true, NULL), stubs);
		print_message("%s: %d PLT stubs agree with objdump\n", path, stubs);
		assert_true(stubs > 10);
	}
	symbolizer_free(s);
}

/*
 * arm64, cross-built: clang compiles, ld.lld and binutils' ld (when there)
 * link, with and without BTI ("bti c" before each stub) and PAC.
 */
static void test_symbolize__plt_arm64(void **state)
{
	static const struct { const char *ld, *name, *flags; } links[] = {
		{ "ld.lld", "libplt-a64-lld.so", "-shared plt-a64.o libfakec-lld.so" },
		{ "ld.lld", "plt-a64-lld-pie", "-pie -e plt_calls plt-a64.o libfakec-lld.so" },
		{ "ld.lld", "plt-a64-lld-bti", "-no-pie -z force-bti -e plt_calls plt-a64-bti.o libfakec-lld.so" },
		{ "ld.lld", "plt-a64-lld-now", "-pie -z now -e plt_calls plt-a64.o libfakec-lld.so" },
		{ "aarch64-linux-gnu-ld", "libplt-a64-bfd.so", "-shared plt-a64.o libfakec-bfd.so" },
		{ "aarch64-linux-gnu-ld", "plt-a64-bfd", "-no-pie -e plt_calls plt-a64-nopic.o libfakec-bfd.so" },
		{ "aarch64-linux-gnu-ld", "plt-a64-bfd-pie", "-pie -e plt_calls plt-a64.o libfakec-bfd.so" },
		{ "aarch64-linux-gnu-ld", "plt-a64-bfd-bti", "-no-pie -z force-bti -e plt_calls plt-a64-bti-nopic.o libfakec-bfd.so" },
		{ "aarch64-linux-gnu-ld", "plt-a64-bfd-btipac", "-no-pie -z force-bti -z pac-plt -e plt_calls plt-a64-bti-nopic.o libfakec-bfd.so" },
		{ "aarch64-linux-gnu-ld", "plt-a64-bfd-now", "-pie -z now -e plt_calls plt-a64.o libfakec-bfd.so" },
	};
	const char *objdump = NULL;
	bool have_lld, have_bfd;
	struct symbolizer *s;
	int built = 0;

	SKIP_IF_UNABLE();
	if (have_tool("aarch64-linux-gnu-objdump"))
		objdump = "aarch64-linux-gnu-objdump";
	else if (have_tool("llvm-objdump"))
		objdump = "llvm-objdump";
	have_lld = have_tool("ld.lld");
	have_bfd = have_tool("aarch64-linux-gnu-ld");
	if (!objdump || !(have_lld || have_bfd) || write_text("plt-a64.c", plt_a64_c) ||
	    write_text("fakec.c", fakec_c) ||
	    run("cd %s && T='clang --target=aarch64-linux-gnu -O2 -ffreestanding' && "
		"$T -fPIC -c -o plt-a64.o plt-a64.c && "
		"$T -fno-pic -c -o plt-a64-nopic.o plt-a64.c && "
		"$T -fPIC -mbranch-protection=standard -c -o plt-a64-bti.o plt-a64.c && "
		"$T -fno-pic -mbranch-protection=standard -c -o plt-a64-bti-nopic.o plt-a64.c && "
		"$T -fPIC -c -o fakec-a64.o fakec.c 2>/dev/null", tmpdir)) {
		print_message("skipped: no arm64 cross tools (clang, and ld.lld or "
			      "binutils-aarch64-linux-gnu)\n");
		skip();
	}
	if (have_lld)
		assert_int_equal(run("cd %s && ld.lld -shared -soname libfakec.so -o libfakec-lld.so "
				     "fakec-a64.o", tmpdir), 0);
	if (have_bfd)
		assert_int_equal(run("cd %s && aarch64-linux-gnu-ld -shared -soname libfakec.so "
				     "-o libfakec-bfd.so fakec-a64.o", tmpdir), 0);
	s = symbolizer_new();
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		char *bin;

		if (!strcmp(links[i].ld, "ld.lld") ? !have_lld : !have_bfd)
			continue;
		assert_int_equal(run("cd %s && %s %s -o %s", tmpdir, links[i].ld, links[i].flags,
				     links[i].name), 0);
		bin = tmp_path(links[i].name);
		check_plt(s, bin, objdump);
		free(bin);
		built++;
	}
	print_message("%d arm64 binaries checked against %s\n", built, objdump);
	if (!have_bfd)
		print_message("binutils' arm64 PLTs skipped: apt-get install binutils-aarch64-linux-gnu\n");
	symbolizer_free(s);
}

/*
 * Alignment padding after a function (inside an executable section, before
 * the next symbol) resolves to nothing, with DWARF or without: no guessed name.
 */
static void test_symbolize__padding_after_function(void **state)
{
	static const char *const bins[] = { "prog", "prog-nopie", "libalias.so" };
	struct symbolizer *s;

	SKIP_IF_UNABLE();
	s = symbolizer_new();
	for (size_t i = 0; i < ARRAY_SIZE(bins); i++) {
		char *bin = tmp_path(bins[i]);
		char *cmd = xstrfmt("nm -S -n '%s'", bin);
		struct { uint64_t addr, size; char type; } *sy = NULL;
		size_t nr = 0, alloc = 0, gaps = 0;
		struct sym_dso *d = symbolizer_dso(s, bin, NULL);
		struct sym_frame fr[8];
		char line[1024];
		FILE *p;

		p = popen(cmd, "r");
		assert_non_null(p);
		while (fgets(line, sizeof(line), p)) {
			uint64_t a, sz;
			char type, name[512];

			ALLOC_GROW(sy, nr + 1, alloc);
			if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %511s", &a, &sz, &type, name) == 4) {
				sy[nr].addr = a;
				sy[nr].size = sz;
				sy[nr].type = type;
				nr++;
			} else if (sscanf(line, "%" SCNx64 " %c %511s", &a, &type, name) == 3) {
				sy[nr].addr = a;
				sy[nr].size = 0;
				sy[nr].type = type;
				nr++;
			}
		}
		pclose(p);
		free(cmd);
		for (size_t k = 0; k + 1 < nr; k++) {
			uint64_t end = sy[k].addr + sy[k].size, next = sy[k + 1].addr;
			bool covered = false;

			if (!sy[k].size || (sy[k].type != 't' && sy[k].type != 'T') ||
			    (sy[k + 1].type != 't' && sy[k + 1].type != 'T') || end >= next)
				continue;
			for (size_t j = 0; j < k && !covered; j++)
				covered = sy[j].addr + sy[j].size > end;
			if (covered)
				continue;
			for (uint64_t a = end; a < next; a++)
				assert_int_equal(sym_lookup(d, vaddr_to_off(bin, a), fr, 8), 0);
			/* while the bytes either side are in the functions */
			assert_true(sym_lookup(d, vaddr_to_off(bin, end - 1), fr, 8) > 0);
			assert_true(sym_lookup(d, vaddr_to_off(bin, next), fr, 8) > 0);
			gaps++;
		}
		print_message("%s: %zu padding gaps resolve to nothing\n", bins[i], gaps);
		assert_true(gaps > 0);
		free(sy);
		free(bin);
	}
	symbolizer_free(s);
}

/* Scribbled PLT sections, relocations and dynamic symbols: sane frames, no crash. */
static void test_symbolize__corrupted_plt(void **state)
{
	static const char *const names[] = {
		".plt", ".plt.sec", ".plt.got", ".rela.plt", ".rela.dyn", ".dynsym", ".dynstr",
	};
	struct { uint64_t off, size, shdr; bool code; } secs[ARRAY_SIZE(names)];
	struct strbuf elf = STRBUF_INIT;
	uint64_t rnd = 0x0123456789abcdefull;
	size_t nsecs = 0, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	char *bin;
	Elf *e;
	int fd;

	SKIP_IF_UNABLE();
#ifndef __x86_64__
	print_message("skipped: not an x86-64 machine\n");
	skip();
#endif
	assert_int_equal(write_text("plt.c", plt_c), 0);
	assert_int_equal(run("cd %s && cc -O2 -fcf-protection -Wl,-z,ibtplt -o plt-corrupt plt.c",
			     tmpdir), 0);
	bin = tmp_path("plt-corrupt");
	assert_int_equal(read_file(&elf, bin, 64 << 20), 0);
	fd = open(bin, O_RDONLY);
	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_non_null(gelf_getehdr(e, &ehdr));
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
			if (strcmp(n, names[k]) || !sh.sh_size)
				continue;
			secs[nsecs].off = sh.sh_offset;
			secs[nsecs].size = sh.sh_size;
			secs[nsecs].shdr = ehdr.e_shoff + elf_ndxscn(scn) * ehdr.e_shentsize;
			secs[nsecs].code = !!(sh.sh_flags & SHF_EXECINSTR);
			nsecs++;
		}
	}
	elf_end(e);
	close(fd);
	assert_int_equal(nsecs, ARRAY_SIZE(names));

	for (int round = 0; round < 24; round++) {
		struct strbuf bad = STRBUF_INIT;
		struct symbolizer *s = symbolizer_new();
		struct sym_dso *d;
		char name[64], *path;

		strbuf_add(&bad, elf.buf, elf.len);
		for (size_t k = 0; k < nsecs; k++) {
			for (int j = 0; j < 2 + round * 4; j++) {
				rnd ^= rnd << 13;
				rnd ^= rnd >> 7;
				rnd ^= rnd << 17;
				bad.buf[secs[k].off + rnd % secs[k].size] = (char)(rnd >> 32);
			}
			/* odd rounds: bad sh_link and sh_entsize too */
			if (round & 1) {
				uint32_t link = (uint32_t)(rnd >> 20) % 64;
				uint64_t entsize = rnd >> (round % 60);

				memcpy(bad.buf + secs[k].shdr + offsetof(Elf64_Shdr, sh_link),
				       &link, sizeof(link));
				memcpy(bad.buf + secs[k].shdr + offsetof(Elf64_Shdr, sh_entsize),
				       &entsize, sizeof(entsize));
			}
		}
		snprintf(name, sizeof(name), "plt-corrupt-%d", round);
		path = tmp_path(name);
		assert_int_equal(write_file_atomic(path, bad.buf, bad.len), 0);
		d = symbolizer_dso(s, path, NULL);
		for (size_t k = 0; k < nsecs; k++) {
			if (!secs[k].code)
				continue;
			for (uint64_t a = 0; a < secs[k].size; a++) {
				struct sym_frame fr[8];
				int n = sym_lookup(d, secs[k].off + a, fr, 8);

				assert_true(n == 0 || n == 1);
				if (n) {
					assert_non_null(fr[0].name);
					assert_non_null(fr[0].system_name);
					assert_string_equal(fr[0].file, "");
					assert_false(fr[0].inlined);
				}
			}
		}
		symbolizer_free(s);
		strbuf_release(&bad);
		free(path);
	}
	strbuf_release(&elf);
	free(bin);
}

/* Truncated copies, random bytes, empty files, directories: 0 frames. */
static void test_symbolize__hostile_files(void **state)
{
	struct symbolizer *s;
	struct strbuf elf = STRBUF_INIT;
	char *bin, *path;
	uint64_t addr, size, off;
	size_t cuts[10];
	uint64_t rnd = 0x9e3779b97f4a7c15ull;

	SKIP_IF_UNABLE();
	bin = tmp_path("prog");
	assert_int_equal(read_file(&elf, bin, 64 << 20), 0);
	assert_true(nm_symbol(bin, "outer_twice", &addr, &size));
	off = vaddr_to_off(bin, addr);
	cuts[0] = 0;
	cuts[1] = 16;
	cuts[2] = 64;
	cuts[3] = 200;
	cuts[4] = 4096;
	cuts[5] = elf.len / 4;
	cuts[6] = elf.len / 2;
	cuts[7] = elf.len * 3 / 4;
	cuts[8] = elf.len - 100;
	cuts[9] = elf.len - 1;

	s = symbolizer_new();
	for (size_t i = 0; i < ARRAY_SIZE(cuts); i++) {
		struct sym_frame fr[16];
		struct sym_dso *d;
		char name[64];
		int before = warnings;

		snprintf(name, sizeof(name), "truncated-%zu", i);
		path = tmp_path(name);
		assert_int_equal(write_file_atomic(path, elf.buf, cuts[i]), 0);
		d = symbolizer_dso(s, path, NULL);
		for (uint64_t a = 0; a < size; a += 3)
			assert_int_equal(sym_lookup(d, off + a, fr, 16), 0);
		assert_int_equal(sym_lookup(d, 0, fr, 16), 0);
		if (warnings != before + 1)
			print_message("cut at %zu bytes: %d warnings\n", cuts[i], warnings - before);
		/* warned once, even when asked for again */
		assert_int_equal(warnings, before + 1);
		assert_ptr_equal(symbolizer_dso(s, path, NULL), d);
		assert_int_equal(warnings, before + 1);
		free(path);
	}

	/* random bytes, with and without an ELF magic in front */
	for (int k = 0; k < 2; k++) {
		struct strbuf junk = STRBUF_INIT;
		struct sym_frame fr[16];
		struct sym_dso *d;

		for (int i = 0; i < 65536; i++) {
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			strbuf_addch(&junk, (int)(rnd & 0xff));
		}
		if (k)
			memcpy(junk.buf, elf.buf, 64);	/* a real ELF header */
		path = tmp_path(k ? "junk-with-header" : "junk");
		assert_int_equal(write_file_atomic(path, junk.buf, junk.len), 0);
		d = symbolizer_dso(s, path, NULL);
		for (uint64_t a = 0; a < 65536; a += 61)
			assert_int_equal(sym_lookup(d, a, fr, 16), 0);
		strbuf_release(&junk);
		free(path);
	}

	/* missing file, a directory, an empty path */
	{
		struct sym_frame fr[4];
		int before = warnings;

		path = tmp_path("does-not-exist");
		assert_int_equal(sym_lookup(symbolizer_dso(s, path, NULL), 0x1000, fr, 4), 0);
		assert_int_equal(sym_lookup(symbolizer_dso(s, path, "abcd"), 0x1000, fr, 4), 0);
		assert_int_equal(sym_lookup(symbolizer_dso(s, tmpdir, NULL), 0x1000, fr, 4), 0);
		assert_int_equal(sym_lookup(symbolizer_dso(s, "", NULL), 0x1000, fr, 4), 0);
		assert_int_equal(warnings, before + 3);
		assert_int_equal(sym_lookup(NULL, 0x1000, fr, 4), 0);
		free(path);
	}
	symbolizer_free(s);
	strbuf_release(&elf);
	free(bin);
}

/* Corrupted DWARF sections in an otherwise valid file: sane frames, no crash. */
static void test_symbolize__corrupted_dwarf(void **state)
{
	struct strbuf elf = STRBUF_INIT;
	char *bin, *path;
	uint64_t addr, size, off;
	uint64_t rnd = 0x1234567887654321ull;
	int fd;
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	struct { uint64_t off, size; } secs[16];
	size_t nsecs = 0;

	SKIP_IF_UNABLE();
	bin = tmp_path("prog");
	assert_int_equal(read_file(&elf, bin, 64 << 20), 0);
	assert_true(nm_symbol(bin, "outer_twice", &addr, &size));
	off = vaddr_to_off(bin, addr);

	/* where the .debug_* sections are */
	fd = open(bin, O_RDONLY);
	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn)) && nsecs < ARRAY_SIZE(secs)) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strncmp(name, ".debug_", 7) && sh.sh_size > 16) {
			secs[nsecs].off = sh.sh_offset;
			secs[nsecs].size = sh.sh_size;
			nsecs++;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(nsecs >= 3);

	for (int round = 0; round < 12; round++) {
		struct strbuf bad = STRBUF_INIT;
		struct symbolizer *s = symbolizer_new();
		struct sym_dso *d;
		char name[64];

		strbuf_add(&bad, elf.buf, elf.len);
		/* scribble over every debug section, more each round */
		for (size_t k = 0; k < nsecs; k++) {
			for (int j = 0; j < 4 + round * 8; j++) {
				rnd ^= rnd << 13;
				rnd ^= rnd >> 7;
				rnd ^= rnd << 17;
				bad.buf[secs[k].off + rnd % secs[k].size] = (char)(rnd >> 32);
			}
		}
		snprintf(name, sizeof(name), "corrupt-%d", round);
		path = tmp_path(name);
		assert_int_equal(write_file_atomic(path, bad.buf, bad.len), 0);
		d = symbolizer_dso(s, path, NULL);
		for (uint64_t a = 0; a < size; a++) {
			struct sym_frame fr[16];
			int n = sym_lookup(d, off + a, fr, 16);

			assert_true(n >= 0 && n <= 16);
			for (int i = 0; i < n; i++) {
				assert_non_null(fr[i].name);
				assert_non_null(fr[i].system_name);
				assert_non_null(fr[i].file);
				assert_true(fr[i].line >= 0);
			}
			if (n)
				assert_false(fr[n - 1].inlined);
		}
		symbolizer_free(s);
		strbuf_release(&bad);
		free(path);
	}
	strbuf_release(&elf);
	free(bin);
}

static void test_symbolize__kallsyms(void **state)
{
	static const char fake[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff81000000 t early_alias\n"
		"ffffffff81000100 t secondary_startup\n"
		"ffffffff81000200 W do_work\n"
		"ffffffff81000300 D some_data\n"
		"garbage line\n"
		"ffffffff8100040\n"
		"ffffffff81000400 T\n"
		"ffffffffc0000000 t mod_fn\t[mymod]\n"
		"ffffffffc0000040 T mod_fn2\t[mymod]\n";
	static const char hidden[] =
		"0000000000000000 T _stext\n"
		"0000000000000000 T startup_64\n"
		"0000000000000000 t mod_fn\t[mymod]\n";
	static const struct { uint64_t addr; const char *name; } cases[] = {
		{ 0xffffffff81000000ull, "startup_64" },
		{ 0xffffffff810000ffull, "startup_64" },
		{ 0xffffffff81000100ull, "secondary_startup" },
		{ 0xffffffff810001f0ull, "secondary_startup" },
		{ 0xffffffff81000250ull, "do_work" },
		{ 0xffffffff81000300ull, NULL },
		{ 0xffffffff80ffffffull, NULL },
		{ 0xffffffffc0000008ull, "mod_fn" },
		{ 0xffffffffc0000040ull, "mod_fn2" },
		{ 0xffffffffc0000041ull, "mod_fn2" },
		{ 0xffffffffc2000000ull, NULL },
	};
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[4];
	char *path;
	int before;

	if (!tmpdir[0]) {
		print_message("skipped: no temporary directory\n");
		skip();
	}
	s = symbolizer_new();
	path = tmp_path("kallsyms");
	assert_int_equal(write_text("kallsyms", fake), 0);
	d = symbolizer_kallsyms(s, path);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int n = sym_lookup(d, cases[i].addr, fr, 4);

		if (!cases[i].name) {
			assert_int_equal(n, 0);
			continue;
		}
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].name, cases[i].name);
		assert_string_equal(fr[0].file, "");
		assert_false(fr[0].inlined);
	}
	assert_ptr_equal(symbolizer_kallsyms(s, path), d);
	free(path);

	/* kptr_restrict: all addresses zero, one warning, nothing resolves */
	path = tmp_path("kallsyms-hidden");
	assert_int_equal(write_text("kallsyms-hidden", hidden), 0);
	before = warnings;
	d = symbolizer_kallsyms(s, path);
	assert_int_equal(warnings, before + 1);
	assert_non_null(strstr(last_warning, "kptr_restrict"));
	assert_int_equal(sym_lookup(d, 0, fr, 4), 0);
	assert_int_equal(sym_lookup(d, 0xffffffff81000000ull, fr, 4), 0);
	free(path);
	symbolizer_free(s);
}

/*
 * kallsyms out of address order (a module's symbols, a core symbol listed
 * late): sorted once all the same; an alias at one address resolves to the
 * global name; a data symbol right after a function ends it.
 */
static void test_symbolize__kallsyms_unsorted(void **state)
{
	static const char fake[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T b_fn\n"
		"ffffffffc0000100 t mod_b\t[m]\n"
		"ffffffffc0000000 t mod_a\t[m]\n"
		"ffffffffc0000000 T mod_a_global\t[m]\n"
		"ffffffffc0000080 d mod_data\t[m]\n"
		"ffffffff81000080 t a_fn\n";
	static const struct { uint64_t addr; const char *name; } cases[] = {
		{ 0xffffffff81000050ull, "_stext" },
		{ 0xffffffff81000090ull, "a_fn" },
		{ 0xffffffff81000100ull, "b_fn" },
		{ 0xffffffffc0000010ull, "mod_a_global" },
		{ 0xffffffffc0000080ull, NULL },
		{ 0xffffffffc0000100ull, "mod_b" },
	};
	struct symbolizer *s;
	struct sym_dso *d;
	struct sym_frame fr[4];
	char *path;

	if (!tmpdir[0]) {
		print_message("skipped: no temporary directory\n");
		skip();
	}
	s = symbolizer_new();
	path = tmp_path("kallsyms-unsorted");
	assert_int_equal(write_text("kallsyms-unsorted", fake), 0);
	d = symbolizer_kallsyms(s, path);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int n = sym_lookup(d, cases[i].addr, fr, 4);

		if (!cases[i].name) {
			assert_int_equal(n, 0);
			continue;
		}
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].name, cases[i].name);
	}
	free(path);
	symbolizer_free(s);
}

/* The running kernel: a symbol read from /proc/kallsyms resolves to itself. */
static void test_symbolize__running_kernel(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct sym_dso *d = symbolizer_kernel(s);
	struct sym_frame fr[4];
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], want[256] = "";
	uint64_t addr = 0;

	while (f && fgets(line, sizeof(line), f)) {
		char type;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, want) == 3 &&
		    addr && (type == 'T') && !strcmp(want, "schedule"))
			break;
		want[0] = '\0';
	}
	if (f)
		fclose(f);
	if (!want[0]) {
		symbolizer_free(s);
		print_message("skipped: /proc/kallsyms hides 'schedule' (kernel.kptr_restrict)\n");
		skip();
	}
	assert_ptr_equal(symbolizer_kernel(s), d);
	/* the build id from /sys/kernel/notes, when readable: hex */
	{
		const char *id = sym_dso_build_id(d);

		assert_int_equal(strspn(id, "0123456789abcdef"), strlen(id));
		assert_int_equal(strlen(id) % 2, 0);
		if (!access("/sys/kernel/notes", R_OK))
			assert_true(strlen(id) >= 16);
	}
	assert_int_equal(sym_lookup(d, addr, fr, 4), 1);
	assert_string_equal(fr[0].name, "schedule");
	assert_int_equal(sym_lookup(d, addr + 1, fr, 4), 1);
	assert_string_equal(fr[0].name, "schedule");
	symbolizer_free(s);
}

static void test_symbolize__demangle(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "_ZN5hotns6Matrix8multiplyEi", "hotns::Matrix::multiply(int)" },
		{ "_Z3fooi.cold", "foo(int) [clone .cold]" },
		{ "_ZN12_GLOBAL__N_13barEv", "(anonymous namespace)::bar()" },
		/* Rust, legacy (the hash is dropped) and v0 */
		{ "_ZN4core3fmt9Formatter3pad17h0123456789abcdefE", "core::fmt::Formatter::pad" },
		{ "_RNvNtCs1234_7mycrate4util3bar", "mycrate::util::bar" },
		{ "main", "main" },
		{ "_Znot_really_mangled", "_Znot_really_mangled" },
		{ "", "" },
	};
	struct symbolizer *s = symbolizer_new();

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *r = sym_demangle(s, cases[i].in);

		assert_string_equal(r, cases[i].out);
		/* cached: the same pointer the second time */
		assert_ptr_equal(sym_demangle(s, cases[i].in), r);
		if (!strcmp(cases[i].in, cases[i].out))
			assert_ptr_equal(r, cases[i].in);
	}
	assert_null(sym_demangle(s, NULL));
	symbolizer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbolize__noinline_function_pie),
		cmocka_unit_test(test_symbolize__inline_chain),
		cmocka_unit_test(test_symbolize__inlined_ranges),
		cmocka_unit_test(test_symbolize__multi_unit_paths),
		cmocka_unit_test(test_symbolize__non_pie),
		cmocka_unit_test(test_symbolize__shared_library),
		cmocka_unit_test(test_symbolize__cxx_method),
		cmocka_unit_test(test_symbolize__clang),
		cmocka_unit_test(test_symbolize__split_dwarf),
		cmocka_unit_test(test_symbolize__rust),
		cmocka_unit_test(test_symbolize__debuglink),
		cmocka_unit_test(test_symbolize__build_id_dir),
		cmocka_unit_test(test_symbolize__aliases_and_sizeless_symbols),
		cmocka_unit_test(test_symbolize__plt_x86_64),
		cmocka_unit_test(test_symbolize__plt_system_libraries),
		cmocka_unit_test(test_symbolize__plt_arm64),
		cmocka_unit_test(test_symbolize__padding_after_function),
		cmocka_unit_test(test_symbolize__corrupted_plt),
		cmocka_unit_test(test_symbolize__hostile_files),
		cmocka_unit_test(test_symbolize__corrupted_dwarf),
		cmocka_unit_test(test_symbolize__kallsyms),
		cmocka_unit_test(test_symbolize__kallsyms_unsorted),
		cmocka_unit_test(test_symbolize__running_kernel),
		cmocka_unit_test(test_symbolize__demangle),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
