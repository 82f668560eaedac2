/*
 * t-folded.c: unit tests of lib/folded.c: folded text written from profiles
 * built with the profile API, parsing (good and hostile input), and the
 * folded -> profile -> folded round trip. Cases are tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "folded.h"

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
 * A sample as text: locations leaf first, separated by spaces. A location
 * is its frames innermost first joined by '<' ("mix<outer": mix inlined
 * into outer); "k:" puts it in the kernel, "@N" gives it address N, and
 * "?" is a location without symbols.
 */
static void add_sample(struct profile *p, const char *spec, int64_t v0, int64_t v1)
{
	uint64_t user = profile_add_mapping(p, 0x400000, 0x500000, 0, "/usr/bin/prog", "");
	uint64_t kernel = profile_add_mapping(p, 0, 0, 0, "[kernel.kallsyms]", "");
	uint64_t locs[32];
	int64_t values[2] = { v0, v1 };
	size_t nloc = 0;
	const char *s = spec;

	while (*s) {
		const char *end = strchr(s, ' ');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char *tok = xstrndup(s, len), *at, *f;
		struct pf_line lines[8];
		size_t nline = 0;
		uint64_t map = user, addr = 0;

		f = tok;
		if (!strncmp(f, "k:", 2)) {
			map = kernel;
			f += 2;
		}
		at = strchr(f, '@');
		if (at) {
			*at = '\0';
			addr = strtoull(at + 1, NULL, 10);
		}
		while (strcmp(f, "?")) {
			char *lt = strchr(f, '<');
			if (lt)
				*lt = '\0';
			assert_true(nline < ARRAY_SIZE(lines));
			lines[nline++] = (struct pf_line){
				.function_id = profile_add_function(p, f, NULL, "prog.c", 1),
				.line = 10,
			};
			if (!lt)
				break;
			f = lt + 1;
		}
		assert_true(nloc < ARRAY_SIZE(locs));
		locs[nloc++] = profile_add_location(p, map, addr, lines, nline);
		free(tok);
		s += len;
		while (*s == ' ')
			s++;
	}
	profile_add_sample(p, locs, nloc, values, NULL, 0);
}

struct write_case {
	const char *name;
	struct {
		const char *stack;
		int64_t samples, cpu;
	} samples[6];
	int idx;		/* 0: samples, 1: cpu */
	const char *expect;
};

static const struct write_case write_cases[] = {
	{ "merges equal stacks and sorts",
	  { { "hot run main", 3, 30 }, { "cold run main", 1, 10 }, { "hot run main", 2, 20 } },
	  0, "main;run;cold 1\nmain;run;hot 5\n" },
	{ "weights by another sample type",
	  { { "hot run main", 3, 30 }, { "cold run main", 1, 10 } },
	  1, "main;run;cold 10\nmain;run;hot 30\n" },
	{ "suffixes kernel frames",
	  { { "k:sys_read k:entry_SYSCALL_64 read main", 2, 0 } },
	  0, "main;read;entry_SYSCALL_64_[k];sys_read_[k] 2\n" },
	{ "suffixes inlined frames and keeps their order",
	  { { "mix<step<outer main", 4, 0 } },
	  0, "main;outer;step_[i];mix_[i] 4\n" },
	{ "merges locations with equal names",
	  { { "hot@1 main", 2, 0 }, { "hot@2 main", 3, 0 } },
	  0, "main;hot 5\n" },
	{ "leaves out stacks without weight",
	  { { "a main", 0, 5 }, { "b main", 1, 0 }, { "c main", -4, 0 } },
	  0, "main;b 1\n" },
	{ "sorts in byte order",
	  { { "b x", 1, 0 }, { "a x", 1, 0 }, { "B x", 1, 0 }, { "x", 7, 0 } },
	  0, "x 7\nx;B 1\nx;a 1\nx;b 1\n" },
	{ "names unsymbolized frames",
	  { { "? main", 6, 0 } },
	  0, "main;[unknown] 6\n" },
	{ "drops samples without frames",
	  { { "", 6, 0 }, { "main", 1, 0 } },
	  0, "main 1\n" },
	{ "saturates instead of overflowing",
	  { { "main", INT64_MAX, 0 }, { "main", 5, 0 } },
	  0, "main 9223372036854775807\n" },
};

static void test_folded__write_cases(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(write_cases); i++) {
		const struct write_case *c = &write_cases[i];
		struct profile p;
		struct strbuf out = STRBUF_INIT;

		profile_init(&p);
		profile_add_sample_type(&p, "samples", "count");
		profile_add_sample_type(&p, "cpu", "nanoseconds");
		for (size_t j = 0; j < ARRAY_SIZE(c->samples) && c->samples[j].stack; j++)
			add_sample(&p, c->samples[j].stack, c->samples[j].samples, c->samples[j].cpu);
		assert_int_equal(folded_write(&p, c->idx, &out), 0);
		if (strcmp(out.buf, c->expect))
			fail_msg("case '%s': got\n%s\nexpected\n%s", c->name, out.buf, c->expect);
		strbuf_release(&out);
		profile_release(&p);
	}
}

static void test_folded__write_sanitizes_names(void **state)
{
	struct profile p;
	struct strbuf out = STRBUF_INIT;
	uint64_t fn, loc;
	int64_t v = 3;

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	fn = profile_add_function(&p, "odd;name\nwith\tcontrols", NULL, "", 0);
	loc = profile_add_location(&p, 0, 1, &(struct pf_line){ .function_id = fn }, 1);
	profile_add_sample(&p, &loc, 1, &v, NULL, 0);
	assert_int_equal(folded_write(&p, 0, &out), 0);
	assert_string_equal(out.buf, "odd:name with controls 3\n");
	assert_int_equal(folded_write(&p, 1, &out), -1);
	strbuf_release(&out);
	profile_release(&p);
}

/* Parse 'in', then write sample type 'type'; NULL expect means an error containing 'err'. */
struct parse_case {
	const char *name, *in, *type, *expect, *err;
};

static const struct parse_case parse_cases[] = {
	{ "sums repeated stacks", "a;b 1\na;b 2\n", "samples", "a;b 3\n", NULL },
	{ "tolerates blank lines and white space", "\n\n  a;b 1  \r\n\t\n", "samples", "a;b 1\n", NULL },
	{ "no final newline", "a;b 1", "samples", "a;b 1\n", NULL },
	{ "keeps kernel frames", "x;y_[k];z_[k] 1\n", "samples", "x;y_[k];z_[k] 1\n", NULL },
	{ "keeps inlined frames", "m;o;i2_[i];i1_[i] 5\n", "samples", "m;o;i2_[i];i1_[i] 5\n", NULL },
	{ "spaces inside names", "foo bar;baz(int, char) 7\n", "samples", "foo bar;baz(int, char) 7\n", NULL },
	{ "empty frame is unknown", "a;;b 1\n", "samples", "a;[unknown];b 1\n", NULL },
	{ "inlined root stands alone", "i_[i];j 1\n", "samples", "i;j 1\n", NULL },
	{ "largest count", "a 9223372036854775807\n", "samples", "a 9223372036854775807\n", NULL },
	{ "two columns: second is samples", "a;b 1 2\na;c 3 0\n", "samples", "a;b 2\n", NULL },
	{ "two columns: first is base", "a;b 1 2\na;c 3 0\n", "base", "a;b 1\na;c 3\n", NULL },
	{ "a name ending in a number", "a;b 1 2\na;c 3\n", "samples", "a;b 1 2\na;c 3\n", NULL },
	{ "no count", "a;b 1\na;b\n", NULL, NULL, "line 2: no count at the end of the line" },
	{ "only a count", "5\n", NULL, NULL, "line 1: no stack before the count" },
	{ "negative count", "ok 1\n\na;b -3\n", NULL, NULL, "line 3: negative count '-3'" },
	{ "fractional count", "a 1.5\n", NULL, NULL, "line 1: count '1.5' is not a whole number" },
	{ "overflowing count", "a 9223372036854775808\n", NULL, NULL,
	  "line 1: count '9223372036854775808' is out of range" },
	{ "NUL byte", "a 1\nb\0c 2\n", NULL, NULL, "line 2: contains a NUL byte" },
};

static void test_folded__parse_cases(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];
		size_t len = strlen(c->in);
		struct profile p;
		struct strbuf out = STRBUF_INIT;
		int ret;

		if (!strcmp(c->name, "NUL byte"))
			len = 10;
		profile_init(&p);
		ret = folded_parse(&p, c->in, len, "test.folded");
		if (!c->expect) {
			if (ret != -1 || !strstr(last_error(), c->err))
				fail_msg("case '%s': got %d, '%s'; expected an error with '%s'",
					 c->name, ret, last_error(), c->err);
			assert_int_equal(p.nr_samples, 0);
			assert_true(strstr(last_error(), "cannot read 'test.folded': ") == last_error());
		} else {
			if (ret)
				fail_msg("case '%s': %s", c->name, last_error());
			assert_int_equal(folded_write(&p, profile_find_sample_type(&p, c->type), &out), 0);
			if (strcmp(out.buf, c->expect))
				fail_msg("case '%s': got\n%s\nexpected\n%s", c->name, out.buf, c->expect);
		}
		strbuf_release(&out);
		profile_release(&p);
	}
}

static void test_folded__parse_model(void **state)
{
	const char in[] = "main;outer;mix_[i] 4\nmain;read_[k];sys_read_[k] 2\n";
	struct pf_frame *frames = NULL;
	size_t alloc = 0, n;
	struct profile p;

	profile_init(&p);
	assert_int_equal(folded_parse(&p, in, strlen(in), "t"), 0);
	assert_int_equal(p.nr_samples, 2);
	assert_int_equal(p.nr_sample_type, 1);
	assert_string_equal(profile_string(&p, p.sample_type[0].type), "samples");
	assert_string_equal(profile_string(&p, p.default_sample_type), "samples");

	/* mix is inlined into outer: one location, two lines, innermost first */
	n = profile_sample_frames(&p, &p.samples[0], &frames, &alloc);
	assert_int_equal(n, 3);
	assert_int_equal(p.samples[0].nloc, 2);
	assert_string_equal(frame_name(&p, &frames[0]), "mix");
	assert_true(frames[0].inlined);
	assert_string_equal(frame_name(&p, &frames[1]), "outer");
	assert_false(frames[1].inlined);
	assert_true(frames[0].loc == frames[1].loc);
	assert_string_equal(frame_name(&p, &frames[2]), "main");
	assert_false(frame_is_kernel(&p, &frames[2]));
	assert_true(profile_mapping(&p, frames[0].loc->mapping_id)->has_inline_frames);
	assert_int_equal(profile_sample_values(&p, &p.samples[0])[0], 4);

	n = profile_sample_frames(&p, &p.samples[1], &frames, &alloc);
	assert_int_equal(n, 3);
	assert_string_equal(frame_name(&p, &frames[0]), "sys_read");
	assert_true(frame_is_kernel(&p, &frames[0]));
	assert_true(frame_is_kernel(&p, &frames[1]));
	assert_false(frame_is_kernel(&p, &frames[2]));
	assert_int_equal(profile_validate(&p), 0);
	free(frames);
	profile_release(&p);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 'text' with its lines sorted in byte order. */
static char *sorted_lines(const char *text)
{
	char *copy = xstrdup(text), *lines[64], *s = copy;
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;

	while (*s) {
		char *nl = strchr(s, '\n');
		assert_non_null(nl);
		*nl = '\0';
		assert_true(n < ARRAY_SIZE(lines));
		lines[n++] = s;
		s = nl + 1;
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s\n", lines[i]);
	free(copy);
	return strbuf_detach(&sb, NULL);
}

static void test_folded__round_trip(void **state)
{
	const char in[] =
		"start_thread;worker;compute;hot_loop 812\n"
		"main;parse;strtol 3\n"
		"main;run;std::vector<int, std::allocator<int> >::push_back(int const&) 40\n"
		"main;read_input;__libc_read;entry_SYSCALL_64_[k];ksys_read_[k];vfs_read_[k] 17\n"
		"main;run;outer_loop;mix_step_[i] 250\n"
		"main;run;outer_loop 31\n"
		"main 1\n"
		"main;run 2\n"
		"[unknown];[unknown];main 9\n"
		"start_thread;worker;compute 5\n";
	char *want = sorted_lines(in);
	struct strbuf out = STRBUF_INIT, again = STRBUF_INIT;
	struct profile p, q;

	profile_init(&p);
	profile_init(&q);
	assert_int_equal(folded_parse(&p, in, strlen(in), "in"), 0);
	assert_int_equal(folded_write(&p, 0, &out), 0);
	assert_string_equal(out.buf, want);
	/* and once more from our own output */
	assert_int_equal(folded_parse(&q, out.buf, out.len, "out"), 0);
	assert_int_equal(folded_write(&q, 0, &again), 0);
	assert_string_equal(again.buf, want);
	free(want);
	strbuf_release(&out);
	strbuf_release(&again);
	profile_release(&p);
	profile_release(&q);
}

static void test_folded__hostile_depth(void **state)
{
	struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	struct profile p;

	for (int i = 0; i < FOLDED_MAX_DEPTH + 1; i++)
		strbuf_addstr(&in, i ? ";f" : "f");
	strbuf_addstr(&in, " 1\n");
	profile_init(&p);
	assert_int_equal(folded_parse(&p, in.buf, in.len, "deep"), -1);
	assert_non_null(strstr(last_error(), "line 1: stack deeper than 65536 frames"));
	profile_release(&p);

	/* exactly at the cap is fine, and recursion shares one location */
	strbuf_reset(&in);
	for (int i = 0; i < FOLDED_MAX_DEPTH; i++)
		strbuf_addstr(&in, i ? ";f" : "f");
	strbuf_addstr(&in, " 1\n");
	profile_init(&p);
	assert_int_equal(folded_parse(&p, in.buf, in.len, "deep"), 0);
	assert_int_equal(p.samples[0].nloc, FOLDED_MAX_DEPTH);
	assert_int_equal(p.nr_locations, 1);
	assert_int_equal(folded_write(&p, 0, &out), 0);
	assert_int_equal(out.len, in.len);
	strbuf_release(&out);
	strbuf_release(&in);
	profile_release(&p);
}

static void test_folded__hostile_long_line(void **state)
{
	struct strbuf in = STRBUF_INIT;
	struct profile p;

	strbuf_addstr(&in, "ok 1\n");
	strbuf_addchars(&in, 'x', FOLDED_MAX_LINE);
	strbuf_addstr(&in, " 1\n");
	profile_init(&p);
	assert_int_equal(folded_parse(&p, in.buf, in.len, "long"), -1);
	assert_non_null(strstr(last_error(), "line 2: longer than"));
	strbuf_release(&in);
	profile_release(&p);
}

static void test_folded__garbage_never_crashes(void **state)
{
	/* a fixed pseudo-random walk over bytes that matter to the parser */
	static const char alphabet[] = "ab;; \t\r\n0123456789-+._[]ki\x80\xff";
	uint64_t x = 0x2545f4914f6cdd1dull;
	char buf[512];

	for (int round = 0; round < 2000; round++) {
		struct profile p;
		struct strbuf out = STRBUF_INIT;
		size_t len = (size_t)(round % (int)sizeof(buf));

		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = alphabet[x % (sizeof(alphabet) - 1)];
		}
		profile_init(&p);
		if (!folded_parse(&p, buf, len, "garbage")) {
			assert_int_equal(profile_validate(&p), 0);
			assert_int_equal(folded_write(&p, (int)p.nr_sample_type - 1, &out), 0);
		}
		strbuf_release(&out);
		profile_release(&p);
	}
}

static void test_folded__sniff(void **state)
{
	static const unsigned char pprof_start[] = { 0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x12, 0x0c };

	assert_true(folded_sniff("main;hot 1\n", 11));
	assert_true(folded_sniff("\n\nmain;hot 1\n", 13));
	assert_true(folded_sniff("a;b 1\n\0\n", 8));	/* text with a stray NUL */
	assert_false(folded_sniff(pprof_start, sizeof(pprof_start)));
	assert_false(folded_sniff("\x1f\x8b\x08\x00", 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded__write_cases),
		cmocka_unit_test(test_folded__write_sanitizes_names),
		cmocka_unit_test(test_folded__parse_cases),
		cmocka_unit_test(test_folded__parse_model),
		cmocka_unit_test(test_folded__round_trip),
		cmocka_unit_test(test_folded__hostile_depth),
		cmocka_unit_test(test_folded__hostile_long_line),
		cmocka_unit_test(test_folded__garbage_never_crashes),
		cmocka_unit_test(test_folded__sniff),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
