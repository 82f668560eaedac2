/*
 * t-heap-import.c: unit tests of the heap profile importers, lib/heaptrack.c
 * and lib/jeprof.c: small hand-written files checked value by value
 * (allocations, the peak, the leak, heaptrack_print's temporaries, the op
 * label, jemalloc's unsampling), errors that name their line, sniffing and
 * detection through profile_decode_any(). Cases are tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "folded.h"
#include "heap-profile.h"
#include "heaptrack.h"
#include "jeprof.h"
#include "profile-io.h"

static void quiet(const char *prefix, const char *msg)
{
}

static int setup(void **state)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

/*
 * Two allocation infos: 0 (16 bytes from site <- main) and 1 (256 bytes
 * from main). Events: +0 -0 (temporary) +0 +1 (the peak: 272) -0 +0.
 */
#define HT_HEAD "v 10400 3\nX ./prog arg\nI 1000 100\n" \
	"s 5 /prog\ns 4 main\ns 6 main.c\ns 4 site\n" \
	"i 1000 1 2 3 a\nt 1 0\ni 1010 1 4 3 14\nt 2 1\na 10 2\na 100 1\n"
#define HT_EVENTS "+ 0\n- 0\n+ 0\n+ 1\n- 0\n+ 0\nc 5\nR 10\n# strings: 4\n"

static const char *sample_op(const struct profile *p, size_t i)
{
	return profile_sample_label(p, &p->samples[i], HEAP_LABEL_OP);
}

static bool has_comment(const struct profile *p, const char *c)
{
	for (size_t i = 0; i < p->nr_comments; i++)
		if (!strcmp(profile_string(p, p->comments[i]), c))
			return true;
	return false;
}

static void test_heaptrack__values(void **state)
{
	static const char in[] = HT_HEAD HT_EVENTS;
	static const int64_t want[2][HEAP_NR_SAMPLE_TYPES] = {
		{ 3, 48, 1, 16, 1, 16, 1 },
		{ 1, 256, 1, 256, 1, 256, 0 },
	};
	struct profile p;
	struct strbuf sb = STRBUF_INIT;

	profile_init(&p);
	assert_int_equal(heaptrack_parse(&p, in, strlen(in), "t"), 0);
	assert_true(profile_is_heap(&p));
	assert_int_equal(p.nr_sample_type, HEAP_NR_SAMPLE_TYPES);
	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
		assert_int_equal(profile_find_sample_type(&p, heap_sample_types[t][0]), t);
	assert_string_equal(profile_string(&p, p.default_sample_type), "alloc_space");
	assert_int_equal(p.nr_samples, 2);
	for (size_t i = 0; i < 2; i++)
		for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
			assert_int_equal(profile_sample_values(&p, &p.samples[i])[t], want[i][t]);
	/* info 0 came again right after its own free: a free and a malloc of one size */
	assert_string_equal(sample_op(&p, 0), "malloc");
	assert_string_equal(sample_op(&p, 1), "malloc");
	assert_true(has_comment(&p, "heaptrack"));
	assert_true(has_comment(&p, "heap-peak=272"));
	assert_true(has_comment(&p, "command: ./prog arg"));
	assert_int_equal(p.duration_nanos, 5000000);
	assert_int_equal(folded_write(&p, HEAP_ALLOC_SPACE, &sb), 0);
	assert_non_null(strstr(sb.buf, "main;site 48\n"));
	assert_non_null(strstr(sb.buf, "main 256\n"));
	/* the executable is the first mapping */
	assert_string_equal(profile_string(&p, p.mappings[0].filename), "/prog");
	strbuf_release(&sb);
	profile_release(&p);
}

static void test_heaptrack__realloc(void **state)
{
	/* no module file here: a free of 16 bytes then 32 from the same stack is a realloc */
	static const char in[] = "v 10400 3\ns 5 /none\ns 4 grow\ni 1 1 2 0 0\nt 1 0\n"
		"a 10 1\na 20 1\na 30 1\n+ 0\n- 0\n+ 1\n- 1\n+ 2\n";
	struct profile p;

	profile_init(&p);
	assert_int_equal(heaptrack_parse(&p, in, strlen(in), "t"), 0);
	assert_int_equal(p.nr_samples, 3);
	assert_string_equal(sample_op(&p, 0), "malloc");
	assert_string_equal(sample_op(&p, 1), "realloc");
	assert_string_equal(sample_op(&p, 2), "realloc");
	profile_release(&p);
}

static void test_heaptrack__strings(void **state)
{
	/* version 3 strings are sized: they may hold newlines; version 2's are the line */
	static const char v3[] = "v 10400 3\ns 4 /p\nn\ns 1 f\ni 1 1 2 0 0\nt 1 0\na 8 1\n+ 0\n";
	static const char v2[] = "v 10300 2\ns /a b\ns fn with spaces\ni 1 1 2 0 3\nt 1 0\na 8 1\n+ 0\n";
	struct profile p;

	profile_init(&p);
	assert_int_equal(heaptrack_parse(&p, v3, strlen(v3), "t"), 0);
	assert_string_equal(profile_string(&p, p.mappings[0].filename), "/p\nn");
	profile_clear(&p);
	assert_int_equal(heaptrack_parse(&p, v2, strlen(v2), "t"), 0);
	assert_string_equal(profile_string(&p, p.mappings[0].filename), "/a b");
	assert_string_equal(profile_string(&p, p.functions[0].name), "fn with spaces");
	profile_release(&p);
}

static void test_heaptrack__operator_new(void **state)
{
	static const char in[] = "v 10400 3\ns 2 /p\ns 1b operator new(unsigned long)\ns 4 main\n"
		"i 1 1 3 0 0\nt 1 0\ni 2 1 2 0 0\nt 2 1\na 8 2\n+ 0\n";
	struct profile p;
	struct strbuf sb = STRBUF_INIT;

	profile_init(&p);
	assert_int_equal(heaptrack_parse(&p, in, strlen(in), "t"), 0);
	assert_int_equal(folded_write(&p, HEAP_ALLOC_SPACE, &sb), 0);
	assert_string_equal(sb.buf, "main 8\n");
	strbuf_release(&sb);
	profile_release(&p);
}

struct error_case {
	const char *in, *msg;
};

static const struct error_case ht_errors[] = {
	{ "X ./p\n", "line 1: no version line first" },
	{ "v 1 9\n", "line 1: heaptrack file version 9 is not supported" },
	{ "v 1 3\ni 1 5\n", "line 2: module string index 5 is not defined" },
	{ "v 1 3\ns 1 m\ni 1 1\nt 1 1\n", "line 4: parent trace index 1 is not defined" },
	{ "v 1 3\ni 1 0\nt 2 0\n", "line 3: instruction pointer index 2 is not defined" },
	{ "v 1 3\na 8 0\n+ 5\n", "line 3: allocation info 5 is not defined" },
	{ "v 1 3\ns ff abc\n", "line 2: the string runs past the end of the file" },
	{ "v 1 3\na 8 0\n+ zz\n", "line 3: expected a hexadecimal number" },
	{ "v 1 3\na fffffffffffffffff 0\n", "line 2: number out of range" },
	{ "v 1 3\na 8 0 7\n", "line 2: junk after an allocation info" },
	{ "v 1 3\nhello\n", "line 2: not a heaptrack line" },
	{ "v 1 3\nv 1 3\n", "line 2: a second version line" },
	{ "v 1 3\na 8 0\n+ 0\x00\n", "line 3: a NUL byte" },
};

static void check_errors(const struct error_case *cases, size_t n,
			 int (*parse)(struct profile *, const char *, size_t, const char *))
{
	for (size_t i = 0; i < n; i++) {
		struct profile p;
		size_t len = strlen(cases[i].in);

		/* a case may hold a NUL: its length runs to the "\n" after it */
		if (strstr(cases[i].msg, "NUL"))
			len += 2;
		profile_init(&p);
		if (parse(&p, cases[i].in, len, "t") != -1)
			fail_msg("case %zu parsed", i);
		if (!strstr(last_error(), cases[i].msg))
			fail_msg("case %zu: '%s' has no '%s'", i, last_error(), cases[i].msg);
		assert_int_equal(p.nr_samples, 0);
		profile_release(&p);
	}
}

static void test_heaptrack__errors(void **state)
{
	check_errors(ht_errors, ARRAY_SIZE(ht_errors), heaptrack_parse);
}

#define JE_HAND "heap_v2/524288\n  t*: 10: 10000 [20: 20000]\n  t0: 10: 10000 [20: 20000]\n" \
	"@ 0x400100 0x400200\n  t*: 10: 10000 [20: 20000]\n  t0: 10: 10000 [20: 20000]\n\n" \
	"MAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 08:01 1234 /nonexistent/prog\n" \
	"7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n"

static void test_jeprof__values(void **state)
{
	static const char in[] = JE_HAND;
	double scale = 1 / (1 - exp(-1000.0 / 524288));
	struct profile p;
	const int64_t *v;

	profile_init(&p);
	assert_int_equal(jeprof_parse(&p, in, strlen(in), "x.0.m.heap"), 0);
	assert_true(profile_is_heap(&p));
	assert_int_equal(p.nr_samples, 1);
	assert_int_equal(p.period, 524288);
	v = profile_sample_values(&p, &p.samples[0]);
	assert_int_equal(v[HEAP_ALLOC_OBJECTS], llround(20 * scale));
	assert_int_equal(v[HEAP_ALLOC_SPACE], llround(20000 * scale));
	assert_int_equal(v[HEAP_INUSE_OBJECTS], llround(10 * scale));
	assert_int_equal(v[HEAP_INUSE_SPACE], llround(10000 * scale));
	/* not a final dump: nothing said about the exit */
	assert_int_equal(v[HEAP_LEAK_SPACE], 0);
	assert_string_equal(profile_string(&p, p.default_sample_type), "alloc_space");
	assert_string_equal(sample_op(&p, 0), "malloc");
	assert_true(has_comment(&p, "jemalloc: rate=524288"));
	/* the executable mapping only, with its addresses */
	assert_int_equal(p.nr_mappings, 1);
	assert_int_equal(p.mappings[0].start, 0x400000);
	assert_int_equal(p.samples[0].nloc, 2);
	profile_clear(&p);

	/* a final dump: what is live is the leak */
	assert_int_equal(jeprof_parse(&p, in, strlen(in), "/d/jeprof.1.0.f.heap"), 0);
	v = profile_sample_values(&p, &p.samples[0]);
	assert_int_equal(v[HEAP_LEAK_SPACE], llround(10000 * scale));
	profile_release(&p);
}

static void test_jeprof__every_allocation(void **state)
{
	static const char in[] = "heap_v2/1\n  t*: 3: 300 [0: 0]\n@ 0x10\n  t*: 3: 300 [0: 0]\n";
	struct profile p;

	profile_init(&p);
	assert_int_equal(jeprof_parse(&p, in, strlen(in), "t"), 0);
	assert_int_equal(profile_sample_values(&p, &p.samples[0])[HEAP_INUSE_SPACE], 300);
	/* no accumulated counts: what is in use is the default */
	assert_string_equal(profile_string(&p, p.default_sample_type), "inuse_space");
	profile_release(&p);
}

static const struct error_case je_errors[] = {
	{ "heap profile: 1: 2 [3: 4] @ heapprofile\n", "no heap_v2/ line" },
	{ "heap_v2/x\n", "line 1: expected a number" },
	{ "heap_v2/1\n@ 0x1 zz\n", "line 2: expected a hexadecimal number" },
	{ "heap_v2/1\n@ 0x1\n  t*: 1: 2\n", "line 3: expected '['" },
	{ "heap_v2/1\n@ 0x1\n  t*: 1: 2 [3: 4]\n  t*: 1: 2 [3: 4]\n", "line 4: a second t*: line" },
	{ "heap_v2/1\n@ 0x1\n  t*: 99999999999999999999: 2 [3: 4]\n", "line 3: number out of range" },
	{ "heap_v2/1\nMAPPED_LIBRARIES:\n2000-1000 r-xp 0 0:0 0 /x\n", "line 3: a mapping that ends" },
	{ "heap_v2/1\nMAPPED_LIBRARIES:\n1000-2000 rx 0 0:0 0 /x\n", "line 3: bad permissions" },
	{ "heap_v2/1\nwhat\n", "line 2: not a line of a jemalloc heap profile" },
};

static void test_jeprof__errors(void **state)
{
	check_errors(je_errors, ARRAY_SIZE(je_errors), jeprof_parse);
}

static void test_jeprof__deep_stack(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct profile p;

	strbuf_addstr(&sb, "heap_v2/1\n@");
	for (int i = 0; i <= JEPROF_MAX_DEPTH; i++)
		strbuf_addf(&sb, " 0x%x", i + 1);
	strbuf_addstr(&sb, "\n");
	profile_init(&p);
	assert_int_equal(jeprof_parse(&p, sb.buf, sb.len, "t"), -1);
	assert_non_null(strstr(last_error(), "a stack of more than"));
	profile_release(&p);
	strbuf_release(&sb);
}

static void test_heap_import__sniff_and_detect(void **state)
{
	static const char ht[] = HT_HEAD HT_EVENTS, je[] = JE_HAND;
	enum profile_format fmt;
	struct profile p;

	assert_true(heaptrack_sniff(ht, strlen(ht)));
	assert_false(heaptrack_sniff("v 1 2\nmain 3\n", 13));
	assert_false(heaptrack_sniff("v 1\nX a\n", 8));
	assert_false(heaptrack_sniff(je, strlen(je)));
	assert_true(jeprof_sniff(je, strlen(je)));
	assert_false(jeprof_sniff(ht, strlen(ht)));
	profile_init(&p);
	assert_int_equal(profile_decode_any(&p, ht, strlen(ht), "t", &fmt), 0);
	assert_int_equal(fmt, PROFILE_FORMAT_HEAPTRACK);
	profile_clear(&p);
	assert_int_equal(profile_decode_any(&p, je, strlen(je), "t", &fmt), 0);
	assert_int_equal(fmt, PROFILE_FORMAT_JEPROF);
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heaptrack__values),
		cmocka_unit_test(test_heaptrack__realloc),
		cmocka_unit_test(test_heaptrack__strings),
		cmocka_unit_test(test_heaptrack__operator_new),
		cmocka_unit_test(test_heaptrack__errors),
		cmocka_unit_test(test_jeprof__values),
		cmocka_unit_test(test_jeprof__every_allocation),
		cmocka_unit_test(test_jeprof__errors),
		cmocka_unit_test(test_jeprof__deep_stack),
		cmocka_unit_test(test_heap_import__sniff_and_detect),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
