/*
 * t-target.c: unit tests for target.h: the diff parser (modified, added,
 * deleted, binary, renamed files, insertions, broken hunks), the C brace
 * scanner, the DWARF functions of a program compiled here, the mapping of
 * changed lines to functions and shares, and the target-gain estimate.
 */
#include "test-helpers.h"
#include "strbuf.h"
#include "target.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int parse(const char *text, struct target_diff *d)
{
	struct strbuf why = STRBUF_INIT;
	int ret = target_parse_diff(text, strlen(text), d, &why);

	strbuf_release(&why);
	return ret;
}

static void test_target__parse_modified(void **state)
{
	static const char diff[] =
		"diff --git a/src/a.c b/src/a.c\n"
		"index 1111111..2222222 100644\n"
		"--- a/src/a.c\n"
		"+++ b/src/a.c\n"
		"@@ -3,2 +3,2 @@ int f(void)\n"
		"-\tint x = 1;\n"
		"-\treturn x;\n"
		"+\tint x = 2;\n"
		"+\treturn x;\n"
		"@@ -9,0 +10,1 @@\n"
		"+\t/* new */\n"
		"@@ -20 +20,0 @@\n"
		"-gone\n"
		"\\ No newline at end of file\n";
	struct target_diff d;

	assert_int_equal(parse(diff, &d), 0);
	assert_int_equal(d.nr, 1);
	assert_string_equal(d.files[0].path, "src/a.c");
	assert_int_equal(d.files[0].status, 'M');
	assert_int_equal(d.files[0].nr, 3);
	assert_int_equal(d.files[0].v[0].lo, 3);
	assert_int_equal(d.files[0].v[0].hi, 4);
	assert_false(d.files[0].v[0].insert);
	/* "-9,0": after line 9, before 10 */
	assert_true(d.files[0].v[1].insert);
	assert_int_equal(d.files[0].v[1].lo, 9);
	assert_int_equal(d.files[0].v[1].hi, 10);
	assert_int_equal(d.files[0].v[2].lo, 20);
	assert_int_equal(d.files[0].v[2].hi, 20);
	target_diff_release(&d);
}

static void test_target__parse_context(void **state)
{
	/* with context lines, only the - and + lines count */
	static const char diff[] =
		"diff --git a/a.c b/a.c\n"
		"--- a/a.c\n"
		"+++ b/a.c\n"
		"@@ -10,6 +10,7 @@\n"
		" a\n"
		" b\n"
		" c\n"
		"+d\n"
		" e\n"
		"\n"
		"-g\n"
		"+G\n";
	struct target_diff d;

	assert_int_equal(parse(diff, &d), 0);
	assert_int_equal(d.files[0].nr, 2);
	assert_true(d.files[0].v[0].insert);
	assert_int_equal(d.files[0].v[0].lo, 12);
	assert_int_equal(d.files[0].v[1].lo, 15);
	assert_int_equal(d.files[0].v[1].hi, 15);
	target_diff_release(&d);
}

static void test_target__parse_kinds(void **state)
{
	static const char diff[] =
		"diff --git a/new.c b/new.c\n"
		"new file mode 100644\n"
		"--- /dev/null\n"
		"+++ b/new.c\n"
		"@@ -0,0 +1,2 @@\n"
		"+int a;\n"
		"+int b;\n"
		"diff --git a/old.c b/old.c\n"
		"deleted file mode 100644\n"
		"--- a/old.c\n"
		"+++ /dev/null\n"
		"@@ -1,2 +0,0 @@\n"
		"-int a;\n"
		"-int b;\n"
		"diff --git a/data.bin b/data.bin\n"
		"Binary files a/data.bin and b/data.bin differ\n"
		"diff --git a/x.c b/y.c\n"
		"similarity index 90%\n"
		"rename from x.c\n"
		"rename to y.c\n"
		"diff --git \"a/sp ace.c\" \"b/sp ace.c\"\n"
		"--- \"a/sp ace.c\"\n"
		"+++ \"b/sp ace.c\"\n"
		"@@ -1 +1 @@\n"
		"-x\n"
		"+y\n";
	struct target_diff d;

	assert_int_equal(parse(diff, &d), 0);
	assert_int_equal(d.nr, 5);
	assert_string_equal(d.files[0].path, "new.c");
	assert_int_equal(d.files[0].status, 'A');
	assert_string_equal(d.files[1].path, "old.c");
	assert_int_equal(d.files[1].status, 'D');
	assert_int_equal(d.files[1].v[0].lo, 1);
	assert_int_equal(d.files[1].v[0].hi, 2);
	assert_int_equal(d.files[2].status, 'B');
	assert_string_equal(d.files[3].path, "x.c");
	assert_int_equal(d.files[3].nr, 0);
	assert_string_equal(d.files[4].path, "sp ace.c");
	target_diff_release(&d);
}

static void test_target__parse_broken(void **state)
{
	static const char *const bad[] = {
		"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n-x\n",	/* ends early */
		"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n+z\n",	/* too many */
		"diff --git a/a b/a\n@@ -x +1 @@\n",
		"diff --git a/a b/a\n@@ -99999999999999999999 +1 @@\n",
		"diff --git a/a b/a\n@@ -1 +1 @@\n?junk\n",
	};
	struct target_diff d;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(parse(bad[i], &d), -1);
	/* nothing to parse is no change */
	assert_int_equal(parse("", &d), 0);
	assert_int_equal(d.nr, 0);
	target_diff_release(&d);
}

static void test_target__scan(void **state)
{
	static const char src[] =
		"/* a { comment */\n"				/* 1 */
		"#include <stdio.h>\n"				/* 2 */
		"#define M(x) { x }\n"				/* 3 */
		"struct s { int a; };\n"			/* 4 */
		"static int t[] = { 1, 2 };\n"			/* 5 */
		"int proto(int);\n"				/* 6 */
		"__attribute__((noinline)) static int\n"	/* 7 */
		"spin(int n)\n"					/* 8 */
		"{\n"						/* 9 */
		"\tconst char *s = \"}\";\n"			/* 10 */
		"\tif (n) { return '}'; }\n"			/* 11 */
		"\treturn 0;\n"					/* 12 */
		"}\n"						/* 13 */
		"namespace ns {\n"				/* 14 */
		"void inner(void) { }\n"			/* 15 */
		"}\n"						/* 16 */
		"extern \"C\" {\n"				/* 17 */
		"int c_fn(void)\n"				/* 18 */
		"{\n"						/* 19 */
		"\treturn 1;\n"					/* 20 */
		"}\n"						/* 21 */
		"}\n"						/* 22 */
		"int main(int argc, char **argv) { return spin(argc); }\n";	/* 23 */
	struct target_fns f = { 0 };

	target_scan_source(src, strlen(src), &f);
	target_fns_sort(&f);
	assert_int_equal(f.nr, 4);
	assert_string_equal(f.v[0].name, "spin");
	assert_int_equal(f.v[0].lo, 7);
	assert_int_equal(f.v[0].hi, 13);
	assert_string_equal(f.v[1].name, "inner");
	assert_int_equal(f.v[1].lo, 15);
	assert_int_equal(f.v[1].hi, 15);
	assert_string_equal(f.v[2].name, "c_fn");
	assert_int_equal(f.v[2].lo, 18);
	assert_int_equal(f.v[2].hi, 21);
	assert_string_equal(f.v[3].name, "main");
	assert_int_equal(f.v[3].lo, 23);
	target_fns_release(&f);
	/* hostile text: no crash, whatever it finds */
	target_scan_source("}}}{{{(((\"\\", 11, &f);
	target_scan_source("int f() {", 9, &f);
	assert_true(f.nr >= 1);
	target_fns_release(&f);
}

static struct target_fn fn(const char *name, int64_t lo, int64_t hi)
{
	return (struct target_fn){ (char *)name, lo, hi };
}

static void test_target__classify(void **state)
{
	static const char diff[] =
		"diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n"
		"@@ -3 +3 @@\n-x\n+y\n"			/* in cold */
		"@@ -9,0 +10 @@\n+z\n"			/* between cold and hot: outside */
		"@@ -15,0 +16 @@\n+w\n"			/* inside hot */
		"diff --git a/n.c b/n.c\nnew file mode 100644\n--- /dev/null\n+++ b/n.c\n@@ -0,0 +1 @@\n+q\n";
	struct target_fn v[] = { fn("cold", 1, 8), fn("hot", 10, 20) };
	struct target_fns fns[2] = { { v, 2, 2 }, { 0 } };
	struct target_share shares[] = { { "ns::hot(int)", 0.6 }, { "cold", 0.02 } };
	struct target_diff d;
	struct target_result r;
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(parse(diff, &d), 0);
	target_classify(&d, fns, shares, 2, &r);
	assert_int_equal(r.nr, 2);
	assert_string_equal(r.changed[0].function, "hot");
	assert_true(r.changed[0].known);
	assert_true(fabs(r.changed[0].share - 0.6) < 1e-9);
	assert_string_equal(r.changed[1].function, "cold");
	assert_int_equal(r.nr_outside, 2);
	assert_string_equal(r.outside[0], "a.c:9 (added after it)");
	assert_string_equal(r.outside[1], "n.c (new file)");
	target_changed_text(&r, 1, &sb);
	assert_string_equal(sb.buf, "hot (60.0%) and 1 more");
	strbuf_release(&sb);
	target_result_release(&r);
	target_diff_release(&d);
}

/* A program built here: its DWARF says where spin and main are. */
static void test_target__dwarf(void **state)
{
	static const char src[] =
		"static int t = 3;\n"				/* 1 */
		"__attribute__((noinline)) int spin(int n)\n"	/* 2 */
		"{\n"						/* 3 */
		"\tint x = 0;\n"				/* 4 */
		"\tfor (int i = 0; i < n; i++)\n"		/* 5 */
		"\t\tx += i * t;\n"				/* 6 */
		"\treturn x;\n"					/* 7 */
		"}\n"						/* 8 */
		"\n"						/* 9 */
		"int main(int argc, char **argv)\n"		/* 10 */
		"{\n"						/* 11 */
		"\treturn spin(argc) == 7;\n"			/* 12 */
		"}\n";						/* 13 */
	char dir[] = "/tmp/t-target.XXXXXX", *c, *bin, *cmd, *real;
	struct target_fns fns[1] = { { 0 } };
	bool found[1] = { false };
	FILE *f;

	assert_non_null(mkdtemp(dir));
	c = xstrfmt("%s/p.c", dir);
	bin = xstrfmt("%s/p", dir);
	f = fopen(c, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	cmd = xstrfmt("cc -O1 -g -o '%s' '%s' 2>/dev/null", bin, c);
	if (system(cmd)) {
		free(cmd);
		skip();
	}
	real = realpath(c, NULL);
	assert_int_equal(target_dwarf_functions(bin, (const char *const *)&real, 1, fns, found), 0);
	assert_true(found[0]);
	target_fns_sort(&fns[0]);
	assert_int_equal(fns[0].nr, 2);
	assert_string_equal(fns[0].v[0].name, "spin");
	assert_int_equal(fns[0].v[0].lo, 2);
	assert_true(fns[0].v[0].hi >= 7 && fns[0].v[0].hi <= 8);
	assert_string_equal(fns[0].v[1].name, "main");
	assert_int_equal(fns[0].v[1].lo, 10);
	assert_true(fns[0].v[1].hi >= 12 && fns[0].v[1].hi <= 13);
	target_fns_release(&fns[0]);
	/* a file it does not hold, and a file that is not ELF */
	found[0] = false;
	assert_int_equal(target_dwarf_functions(bin, (const char *const *)&(const char *){ "/nowhere/q.c" },
						1, fns, found), 0);
	assert_false(found[0]);
	assert_int_equal(fns[0].nr, 0);
	assert_int_equal(target_dwarf_functions(c, (const char *const *)&real, 1, fns, found), 1);
	free(real);
	free(cmd);
	cmd = xstrfmt("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(c);
	free(bin);
}

static void test_target__gain(void **state)
{
	struct target_gain g;

	/* 60% -> 30% with the whole 40% faster: its CPU is 0.3x */
	target_gain_estimate(600, 1000, 300, 1000, -40, -42, -38, &g);
	assert_true(fabs(g.ratio - 0.3) < 1e-9);
	assert_true(g.ratio_low < 0.3 && g.ratio_high > 0.3 && g.ratio_high < 1);
	assert_true(g.cheaper);
	/* 60% -> 80% with the whole 25% faster: 1.0x, not cheaper */
	target_gain_estimate(600, 1000, 800, 1000, -25, -27, -23, &g);
	assert_true(fabs(g.ratio - 1.0) < 1e-9);
	assert_false(g.cheaper);
	/* gone from the candidate's profile: half a sample */
	target_gain_estimate(600, 1000, 0, 1000, -50, -52, -48, &g);
	assert_true(g.cheaper);
	/* not in the best's: cannot tell */
	target_gain_estimate(0, 1000, 10, 1000, -50, -52, -48, &g);
	assert_true(isnan(g.ratio));
	assert_false(g.cheaper);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target__parse_modified),
		cmocka_unit_test(test_target__parse_context),
		cmocka_unit_test(test_target__parse_kinds),
		cmocka_unit_test(test_target__parse_broken),
		cmocka_unit_test(test_target__scan),
		cmocka_unit_test(test_target__classify),
		cmocka_unit_test(test_target__dwarf),
		cmocka_unit_test(test_target__gain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
