/*
 * t-callgrind.c: unit tests of lib/callgrind.c: small hand-written
 * callgrind files (name compression, subpositions, calls, recursion,
 * inlined files, several events and parts) checked by self and total per
 * function through report_build() and by stacks through folded_write();
 * errors that name their line; bounded work on hostile graphs. Cases are
 * tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "report.h"
#include "folded.h"
#include "callgrind.h"
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

#define HEAD "# callgrind format\nversion: 1\ncreator: test\n"

struct report_case {
	const char *name;
	const char *in;
	const char *event;	/* sample type to report */
	/* "name[@file] self total" rows, ';' separated */
	const char *rows;
	const char *folded;	/* the stacks, when checked */
};

static const struct report_case report_cases[] = {
	{ "name compression, subpositions and calls",
	  HEAD "positions: line\nevents: Ir\n\n"
	  "ob=(1) /bin/prog\nfl=(1) main.c\nfn=(1) main\n10 10\ncfn=(2) work\ncalls=2 20\n11 90\n\n"
	  "fn=(2)\n20 50\n+1 10\ncfi=(2) leaf.c\ncfn=(3) leaf\ncalls=4 30\n* 30\n\n"
	  "fl=(2)\nfn=(3)\n30 20\n-2 10\n",
	  "Ir", "main@main.c 10 100;work@main.c 60 90;leaf@leaf.c 30 30",
	  "main 10\nmain;work 60\nmain;work;leaf 30\n" },
	{ "a function with two callers is split by call cost",
	  HEAD "events: Ir\nfl=f.c\nfn=main\n1 0\ncfn=A\ncalls=1 1\n1 60\ncfn=B\ncalls=1 1\n1 40\n"
	  "fn=A\n1 10\ncfn=C\ncalls=1 1\n1 50\n"
	  "fn=B\n1 30\ncfn=C\ncalls=1 1\n1 10\n"
	  "fn=C\n1 60\n",
	  "Ir", "C 60 60;A 10 60;B 30 40;main 0 100",
	  "main;A 10\nmain;A;C 50\nmain;B 30\nmain;B;C 10\n" },
	{ "rounding keeps self exact",
	  HEAD "events: Ir\nfl=f.c\nfn=main\ncfn=X\ncalls=1 1\n1 4\ncfn=Y\ncalls=1 1\n1 8\n"
	  "fn=X\n1 1\ncfn=C\ncalls=1 1\n1 3\n"
	  "fn=Y\n1 2\ncfn=C\ncalls=1 1\n1 6\n"
	  "fn=C\n1 5\n2 4\n",
	  "Ir", "C 9 9;X 1 4;Y 2 8;main 0 12", NULL },
	{ "self recursion is cut",
	  HEAD "events: Ir\nfl=f.c\nfn=main\n1 1\ncfn=fact\ncalls=1 1\n2 100\n"
	  "fn=fact\n1 100\ncfn=fact\ncalls=9 1\n2 90\n",
	  "Ir", "fact 100 100;main 1 101", "main 1\nmain;fact 100\n" },
	{ "mutual recursion is cut",
	  HEAD "events: Ir\nfl=f.c\nfn=main\ncfn=A\ncalls=1 1\n1 70\n"
	  "fn=A\n1 40\ncfn=B\ncalls=2 1\n2 50\n"
	  "fn=B\n1 30\ncfn=A\ncalls=1 1\n2 20\n",
	  "Ir", "A 40 70;B 30 30;main 0 70", "main;A 40\nmain;A;B 30\n" },
	{ "two events, instr and line positions, hex and relative",
	  HEAD "positions: instr line\nevents: Ir Dr\nfl=(1) a.c\nfn=(1) main\n"
	  "0x10 5 3 1\n+4 +1 2\n-2 * 1 1\ncfn=(2) f\ncalls=1 0x100 20\n* * 10 4\n"
	  "fn=(2)\n0x100 20 10 4\n",
	  "Dr", "f 4 4;main 2 6", NULL },
	{ "the default event is Ir",
	  HEAD "events: Dr Ir\nfl=a.c\nfn=main\n1 7 3\n",
	  NULL, "main 3 3", NULL },
	{ "fewer costs than events are zeros",
	  HEAD "events: Ir Dr\nfl=a.c\nfn=main\n1 7\n2 1 5\n",
	  "Dr", "main 5 5", NULL },
	{ "cost under fi= is an inlined frame in that file",
	  HEAD "events: Ir\nfl=(1) a.c\nfn=(1) main\n1 5\nfi=(2) h.h\n7 3\nfe=(1)\n2 1\n",
	  "Ir", "main@a.c 6 9;main@h.h 3 3", "main 6\nmain;main_[i] 3\n" },
	{ "callee's file is cfi, else the current file",
	  HEAD "events: Ir\nfl=(1) a.c\nfn=(1) main\ncfi=(2) b.c\ncfn=(2) g\ncalls=1 1\n1 4\n"
	  "cfn=(3) h\ncalls=1 1\n1 2\nfl=(2)\nfn=(2)\n1 4\nfl=(1)\nfn=(3)\n1 2\n",
	  "Ir", "g@b.c 4 4;h@a.c 2 2;main@a.c 0 6", NULL },
	{ "several parts add up",
	  HEAD "events: Ir\npart: 1\nfl=(1) a.c\nfn=(1) main\n1 5\ncfn=(2) w\ncalls=1 1\n1 3\n"
	  "fn=(2)\n1 3\n\ntotals: 8\n\npart: 2\nevents: Ir\nfl=(1)\nfn=(1)\n1 1\nfn=(2)\n1 2\n",
	  "Ir", "main 6 11;w 5 5", NULL },
	{ "functions nobody reaches are roots",
	  HEAD "events: Ir\nfl=a.c\nfn=A\ncfn=B\ncalls=1 1\n1 0\nfn=B\n1 7\ncfn=A\ncalls=1 1\n1 0\n",
	  "Ir", "B 7 7", "B 7\n" },
	{ "cachegrind-like file without a format line",
	  "version: 1\nevents: Ir\nfl=a.c\nfn=main\n3 2\n",
	  "Ir", "main 2 2", NULL },
	{ "instr positions only: no lines",
	  HEAD "positions: instr\nevents: Ir\nob=/bin/p\nfn=main\n0x400000 4\n+3 2\n"
	  "cfn=leaf\ncalls=1 0x500000\n* 6\nfn=leaf\n0x500000 6\n",
	  "Ir", "main 6 12;leaf 6 6", "main 6\nmain;leaf 6\n" },
	{ "jumps and comments are ignored",
	  HEAD "positions: line\nevents: Ir\n# a comment\nfl=a.c\nfn=main\n1 2\njump=3 +2\njcnd=1/2 -1\n"
	  "jfi=(9) x.c\njfn=(9) y\n2 3\n",
	  "Ir", "main 5 5", NULL },
};

/* The row for "name" or "name@file" (file compared by its end). */
static const struct report_row *find_row(const struct report *r, const char *spec)
{
	const char *at = strchr(spec, '@');
	size_t nlen = at ? (size_t)(at - spec) : strlen(spec);

	for (size_t i = 0; i < r->nr; i++) {
		const struct report_row *row = &r->rows[i];
		size_t flen = strlen(row->file);

		if (strlen(row->name) != nlen || memcmp(row->name, spec, nlen))
			continue;
		if (at && (flen < strlen(at + 1) ||
			   strcmp(row->file + flen - strlen(at + 1), at + 1)))
			continue;
		return row;
	}
	return NULL;
}

static void check_rows(const char *casename, const struct profile *p, int idx, const char *rows)
{
	struct report r = REPORT_INIT;
	char *copy = xstrdup(rows), *save = copy;

	assert_int_equal(report_build(&r, p, idx, REPORT_BY_FUNCTION), 0);
	for (char *row = copy; row && *row; ) {
		char *semi = strchr(row, ';'), name[128];
		long long self, total;
		const struct report_row *rr;

		if (semi)
			*semi = '\0';
		if (sscanf(row, "%127s %lld %lld", name, &self, &total) != 3)
			fail_msg("case '%s': bad row spec '%s'", casename, row);
		rr = find_row(&r, name);
		if (!rr)
			fail_msg("case '%s': no row '%s'", casename, name);
		if (rr->self != self || rr->total != total)
			fail_msg("case '%s': %s has self %lld total %lld, expected %lld %lld",
				 casename, name, (long long)rr->self, (long long)rr->total,
				 self, total);
		row = semi ? semi + 1 : NULL;
	}
	free(save);
	report_release(&r);
}

static void test_callgrind__report_cases(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(report_cases); i++) {
		const struct report_case *c = &report_cases[i];
		struct profile p;
		int idx;

		profile_init(&p);
		if (callgrind_parse(&p, c->in, strlen(c->in), "test.out"))
			fail_msg("case '%s': %s", c->name, last_error());
		assert_true(callgrind_sniff(c->in, strlen(c->in)));
		idx = c->event ? profile_find_sample_type(&p, c->event)
			       : profile_find_sample_type(&p, profile_string(&p, p.default_sample_type));
		if (idx < 0)
			fail_msg("case '%s': no sample type", c->name);
		check_rows(c->name, &p, idx, c->rows);
		if (c->folded) {
			struct strbuf out = STRBUF_INIT;

			assert_int_equal(folded_write(&p, idx, &out), 0);
			if (strcmp(out.buf, c->folded))
				fail_msg("case '%s': stacks\n%s\nexpected\n%s", c->name, out.buf,
					 c->folded);
			strbuf_release(&out);
		}
		profile_release(&p);
	}
}

static void test_callgrind__model(void **state)
{
	const char in[] = HEAD "positions: instr line\nevents: Ir\nob=(1) /bin/prog\n"
		"fl=(1) /src/a.c\nfn=(1) main\n0x400010 12 5\ncob=(2) /lib/libc.so.6\n"
		"cfi=(2) ???\ncfn=(2) memcpy\ncalls=1 0x7000 0\n+5 14 3\n"
		"ob=(2)\nfl=(2)\nfn=(2)\n0x7000 0 3\n";
	struct pf_frame *frames = NULL;
	size_t alloc = 0, n;
	struct profile p;
	bool seen = false;

	profile_init(&p);
	assert_int_equal(callgrind_parse(&p, in, strlen(in), "m"), 0);
	assert_int_equal(p.nr_sample_type, 1);
	assert_string_equal(profile_string(&p, p.sample_type[0].type), "Ir");
	assert_string_equal(profile_string(&p, p.sample_type[0].unit), "count");
	for (size_t i = 0; i < p.nr_samples; i++) {
		n = profile_sample_frames(&p, &p.samples[i], &frames, &alloc);
		if (strcmp(frame_name(&p, &frames[0]), "memcpy"))
			continue;
		seen = true;
		assert_int_equal(n, 2);
		assert_string_equal(frame_dso(&p, &frames[0]), "libc.so.6");
		assert_string_equal(frame_file(&p, &frames[0]), "");
		assert_int_equal(frames[0].loc->address, 0x7000);
		assert_string_equal(frame_name(&p, &frames[1]), "main");
		assert_string_equal(frame_dso(&p, &frames[1]), "prog");
		assert_string_equal(frame_file(&p, &frames[1]), "/src/a.c");
		assert_int_equal(frames[1].line, 14);
		assert_int_equal(frames[1].loc->address, 0x400015);
		assert_int_equal(profile_sample_values(&p, &p.samples[i])[0], 3);
	}
	assert_true(seen);
	free(frames);
	profile_release(&p);
}

struct error_case {
	const char *name;
	const char *in;
	const char *err;
};

static const struct error_case error_cases[] = {
	{ "cost line before fn=", "events: Ir\n10 5\n", "line 2: a cost line before any 'fn=' line" },
	{ "cost line before events:", "fn=main\n1 2\n",
	  "line 2: a cost line before the 'events:' header" },
	{ "calls= followed by another line", "events: Ir\nfn=a\ncfn=b\ncalls=1 2\nfn=c\n",
	  "line 5: 'calls=' on line 4 is not followed by its cost line" },
	{ "calls= at the end", "events: Ir\nfn=a\ncfn=b\ncalls=1 2\n\n# end\n",
	  "line 4: 'calls=' is not followed by its cost line" },
	{ "calls= without cfn=", "events: Ir\nfn=a\ncalls=1 2\n1 1\n", "line 3: 'calls=' without a 'cfn='" },
	{ "calls= with a bad target", "events: Ir\nfn=a\ncfn=b\ncalls=1 zz\n1 1\n",
	  "line 4: bad line position 'zz'" },
	{ "calls= without a count", "events: Ir\nfn=a\ncfn=b\ncalls=x\n", "line 4: 'calls=' needs a call count" },
	{ "negative cost", "events: Ir\nfn=a\n1 -5\n", "line 3: cost '-5' is not a number" },
	{ "huge cost", "events: Ir\nfn=a\n1 9223372036854775808\n", "line 3: cost '9223372036854775808'" },
	{ "overflowing cost", "events: Ir\nfn=a\n1 0x1ffffffffffffffff\n", "line 3: cost '0x1ff" },
	{ "more costs than events", "events: Ir\nfn=a\n1 2 3\n", "line 3: more costs than the 1 event" },
	{ "undefined name id", "events: Ir\nfn=(7)\n", "line 2: 'fn=' uses name id (7) before defining it" },
	{ "huge name id", "events: Ir\nfn=(99999999999) x\n", "line 2: 'fn=' has a bad name id" },
	{ "name id without )", "events: Ir\nfl=(3 x\n", "line 2: 'fl=' name id without ')'" },
	{ "empty name", "events: Ir\nfn=\n", "line 2: 'fn=' without a name" },
	{ "unknown key", "events: Ir\nfoo=bar\n", "line 2: not a callgrind line: 'foo=bar'" },
	{ "garbage", "events: Ir\nfn=a\n!!\n", "line 3: not a callgrind line" },
	{ "bad position", "events: Ir\nfn=a\n1x 5\n", "line 3: bad line position '1x'" },
	{ "position below zero", "events: Ir\nfn=a\n-5 1\n", "line 3: line position '-5' is out of range" },
	{ "line past int64", "events: Ir\nfn=a\n9223372036854775808 1\n", "line 3: line position" },
	{ "instr past uint64", "positions: instr\nevents: Ir\nfn=a\n0xffffffffffffffff 1\n+1 1\n",
	  "line 5: instr position '+1' is out of range" },
	{ "missing position", "positions: instr line\nevents: Ir\nfn=a\n0x10\n",
	  "line 4: 2 positions expected, found 1" },
	{ "unknown position kind", "positions: bb\n", "line 1: unknown position 'bb'" },
	{ "event named twice", "events: Ir Ir\n", "line 1: event 'Ir' named twice" },
	{ "no events", "events:\n", "line 1: 'events:' names no event" },
	{ "events differ between parts", "events: Ir\nfn=a\n1 1\nevents: Dr\n",
	  "line 4: 'events:' differs from the first part's" },
	{ "no events header", "fn=a\n", "no 'events:' header" },
	{ "NUL byte", "events: Ir\nfn=a\0\n", "line 2: contains a NUL byte" },
};

static void test_callgrind__errors(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(error_cases); i++) {
		const struct error_case *c = &error_cases[i];
		size_t len = strlen(c->in);
		struct profile p;
		int ret;

		if (!strcmp(c->name, "NUL byte"))
			len = sizeof("events: Ir\nfn=a\0\n") - 1;
		profile_init(&p);
		ret = callgrind_parse(&p, c->in, len, "bad.out");
		if (ret != -1 || !strstr(last_error(), c->err))
			fail_msg("case '%s': got %d, '%s'; expected an error with '%s'",
				 c->name, ret, last_error(), c->err);
		assert_true(strstr(last_error(), "cannot read 'bad.out': ") == last_error());
		assert_int_equal(p.nr_samples, 0);
		assert_int_equal(p.nr_functions, 0);
		profile_release(&p);
	}
}

static void test_callgrind__long_line(void **state)
{
	struct strbuf in = STRBUF_INIT;
	struct profile p;

	strbuf_addstr(&in, "events: Ir\nfn=");
	strbuf_addchars(&in, 'x', (size_t)4 << 20);
	strbuf_addstr(&in, "\n1 1\n");
	profile_init(&p);
	assert_int_equal(callgrind_parse(&p, in.buf, in.len, "long"), -1);
	assert_non_null(strstr(last_error(), "line 2: longer than"));
	strbuf_release(&in);
	profile_release(&p);
}

static bool has_comment(const struct profile *p, const char *part)
{
	for (size_t i = 0; i < p->nr_comments; i++)
		if (strstr(profile_string(p, p->comments[i]), part))
			return true;
	return false;
}

/* A chain deeper than the depth cap keeps every function's self cost. */
static void test_callgrind__deep_chain(void **state)
{
	struct strbuf in = STRBUF_INIT;
	struct report r = REPORT_INIT;
	struct profile p;
	int n = CALLGRIND_MAX_DEPTH + 44;

	strbuf_addstr(&in, HEAD "events: Ir\nfl=a.c\n");
	for (int i = 0; i < n; i++) {
		strbuf_addf(&in, "fn=f%d\n1 1\n", i);
		if (i + 1 < n)
			strbuf_addf(&in, "cfn=f%d\ncalls=1 1\n2 %d\n", i + 1, n - i - 1);
	}
	profile_init(&p);
	assert_int_equal(callgrind_parse(&p, in.buf, in.len, "deep"), 0);
	assert_true(has_comment(&p, "cut at depth"));
	assert_int_equal(profile_total(&p, 0), n);
	assert_int_equal(report_build(&r, &p, 0, REPORT_BY_FUNCTION), 0);
	assert_int_equal(r.nr, n);
	for (size_t i = 0; i < r.nr; i++)
		assert_int_equal(r.rows[i].self, 1);
	for (size_t i = 0; i < p.nr_samples; i++)
		assert_true(p.samples[i].nloc <= CALLGRIND_MAX_DEPTH + 1);
	report_release(&r);
	strbuf_release(&in);
	profile_release(&p);
}

/*
 * Layers of two functions, each calling both of the next layer: 2^24
 * paths. The expansion stops at the path cap and self stays exact.
 */
static void test_callgrind__exponential_paths(void **state)
{
	struct strbuf in = STRBUF_INIT;
	struct report r = REPORT_INIT;
	struct profile p;
	int layers = 24;
	int64_t expect = 0;

	strbuf_addstr(&in, HEAD "events: Ir\nfl=a.c\nfn=root\n1 1\n"
		      "cfn=a0\ncalls=1 1\n1 1000\ncfn=b0\ncalls=1 1\n1 1000\n");
	expect = 1;
	for (int l = 0; l < layers; l++)
		for (int ab = 0; ab < 2; ab++) {
			strbuf_addf(&in, "fn=%c%d\n1 %d\n", "ab"[ab], l, 7 + l);
			expect += 7 + l;
			if (l + 1 < layers)
				strbuf_addf(&in, "cfn=a%d\ncalls=1 1\n1 500\ncfn=b%d\ncalls=1 1\n1 500\n",
					    l + 1, l + 1);
		}
	profile_init(&p);
	assert_int_equal(callgrind_parse(&p, in.buf, in.len, "wide"), 0);
	assert_true(has_comment(&p, "left out past the limit"));
	assert_int_equal(profile_total(&p, 0), expect);
	assert_int_equal(report_build(&r, &p, 0, REPORT_BY_FUNCTION), 0);
	for (size_t i = 0; i < r.nr; i++) {
		int l = atoi(r.rows[i].name + 1);
		if (strcmp(r.rows[i].name, "root"))
			assert_int_equal(r.rows[i].self, 7 + l);
	}
	report_release(&r);
	strbuf_release(&in);
	profile_release(&p);
}

static void test_callgrind__sniff(void **state)
{
	static const struct {
		const char *in;
		bool yes;
	} cases[] = {
		{ "# callgrind format\n", true },
		{ "version: 1\ncreator: x\nevents: Ir\n\nfn=main\n1 1\n", true },
		{ "# comment\nevents: Ir\nfl=a\nfn=(1) main\n", true },
		{ "events: Ir\nfl=a\n", false },
		{ "main;run;hot_spin 42\n", false },
		{ "fn=main\n1 1\n", false },
		{ "version: 1\nmain;run 4\nfn=x\n", false },
		{ "", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (callgrind_sniff(cases[i].in, strlen(cases[i].in)) != cases[i].yes)
			fail_msg("sniff case %zu: expected %d", i, cases[i].yes);
}

/* profile_decode_any() tells callgrind output from folded stacks by content */
static void test_callgrind__decode_any(void **state)
{
	static const struct {
		const char *in;
		enum profile_format fmt;
	} cases[] = {
		{ HEAD "events: Ir\nfn=main\n1 3\n", PROFILE_FORMAT_CALLGRIND },
		{ "events: Ir\nfl=a.c\nfn=main\n1 3\n", PROFILE_FORMAT_CALLGRIND },
		{ "main;run 3\n", PROFILE_FORMAT_FOLDED },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum profile_format fmt = PROFILE_FORMAT_PPROF;
		struct profile p;

		profile_init(&p);
		assert_int_equal(profile_decode_any(&p, cases[i].in, strlen(cases[i].in), "x", &fmt), 0);
		assert_int_equal(fmt, cases[i].fmt);
		assert_int_equal(profile_total(&p, 0), 3);
		assert_int_equal(callgrind_rebuilt(&p), fmt == PROFILE_FORMAT_CALLGRIND);
		profile_release(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callgrind__report_cases),
		cmocka_unit_test(test_callgrind__model),
		cmocka_unit_test(test_callgrind__errors),
		cmocka_unit_test(test_callgrind__long_line),
		cmocka_unit_test(test_callgrind__deep_chain),
		cmocka_unit_test(test_callgrind__exponential_paths),
		cmocka_unit_test(test_callgrind__sniff),
		cmocka_unit_test(test_callgrind__decode_any),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
