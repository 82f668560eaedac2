/*
 * t-report.c: unit tests for report.c: self/total per function, line, file
 * and DSO; recursion counted once, however deep; inlined frames flagged.
 */
#include <jansson.h>

#include "test-helpers.h"
#include "report.h"
#include "strbuf.h"

static const struct report_row *find_row(const struct report *r, const char *name)
{
	for (size_t i = 0; i < r->nr; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	return NULL;
}

static void build(struct profile *p, struct report *r, const char *text,
		  enum report_by by, enum report_sort sort)
{
	profile_init(p);
	profile_add_sample_type(p, "samples", "count");
	th_add_samples(p, text);
	assert_int_equal(profile_validate(p), 0);
	assert_int_equal(report_build(r, p, 0, by), 0);
	report_sort(r, sort);
}

static void test_report__self_and_total(void **state)
{
	struct profile p;
	struct report r;

	build(&p, &r,
	      "hot@a.c:10;main@a.c:3 70\n"
	      "hot@a.c:11;main@a.c:3 20\n"
	      "cold@a.c:20;main@a.c:4 10\n",
	      REPORT_BY_FUNCTION, REPORT_SORT_SELF);
	assert_int_equal(r.total, 100);
	assert_string_equal(r.rows[0].name, "hot");
	assert_int_equal(r.rows[0].self, 90);
	assert_int_equal(r.rows[0].total, 90);
	assert_int_equal(r.rows[0].line, 10);	/* the hottest line */
	assert_int_equal(find_row(&r, "main")->self, 0);
	assert_int_equal(find_row(&r, "main")->total, 100);
	report_sort(&r, REPORT_SORT_TOTAL);
	assert_string_equal(r.rows[0].name, "main");
	report_release(&r);
	profile_release(&p);
}

static void test_report__recursion_counted_once(void **state)
{
	struct profile p;
	struct report r;

	build(&p, &r,
	      "fib@f.c:5;fib@f.c:6;fib@f.c:6;main@f.c:1 8\n"
	      "main@f.c:2 2\n",
	      REPORT_BY_FUNCTION, REPORT_SORT_TOTAL);
	assert_int_equal(find_row(&r, "fib")->total, 8);
	assert_int_equal(find_row(&r, "fib")->self, 8);
	assert_int_equal(find_row(&r, "main")->total, 10);
	report_release(&r);
	profile_release(&p);
}

static void test_report__inlined_flag(void **state)
{
	struct profile p;
	struct report r;

	/* mix inlined into outer at one location */
	build(&p, &r, "outer@i.c:20+mix@i.c:7;main@i.c:30 5\n",
	      REPORT_BY_FUNCTION, REPORT_SORT_SELF);
	assert_string_equal(r.rows[0].name, "mix");
	assert_true(r.rows[0].inlined);
	assert_int_equal(r.rows[0].self, 5);
	assert_false(find_row(&r, "outer")->inlined);
	assert_int_equal(find_row(&r, "outer")->self, 0);
	assert_int_equal(find_row(&r, "outer")->total, 5);
	report_release(&r);
	profile_release(&p);
}

static void test_report__by_line_file_dso(void **state)
{
	struct profile p;
	struct report r;
	const char *text =
		"hot@src/a.c:10;main@src/m.c:3 6\n"
		"hot@src/a.c:11;main@src/m.c:3 3\n"
		"[x];main@src/m.c:4 1\n";

	build(&p, &r, text, REPORT_BY_LINE, REPORT_SORT_SELF);
	assert_int_equal(r.rows[0].line, 10);
	assert_int_equal(r.rows[0].self, 6);
	assert_int_equal(r.rows[1].line, 11);
	report_release(&r);
	profile_release(&p);

	build(&p, &r, text, REPORT_BY_FILE, REPORT_SORT_TOTAL);
	assert_string_equal(r.rows[0].name, "src/m.c");
	assert_int_equal(r.rows[0].total, 10);
	assert_int_equal(r.rows[0].self, 0);
	assert_string_equal(r.rows[1].name, "src/a.c");
	assert_int_equal(r.rows[1].self, 9);
	report_release(&r);
	profile_release(&p);

	build(&p, &r, text, REPORT_BY_DSO, REPORT_SORT_SELF);
	assert_int_equal(r.nr, 1);
	assert_string_equal(r.rows[0].name, "prog");
	assert_int_equal(r.rows[0].self, 10);
	report_release(&r);
	profile_release(&p);
}

static void test_report__hottest_line_survives_growth(void **state)
{
	struct strbuf text = STRBUF_INIT;
	struct profile p;
	struct report r;

	/* the hot function's lines are seen before and after the row table grows */
	strbuf_addstr(&text, "hot@h.c:5;main@m.c:1 1\n");
	for (int i = 0; i < 200; i++)
		strbuf_addf(&text, "f%d@f.c:%d;main@m.c:2 1\n", i, i + 1);
	strbuf_addstr(&text, "hot@h.c:9;main@m.c:1 50\n");
	build(&p, &r, text.buf, REPORT_BY_FUNCTION, REPORT_SORT_SELF);
	assert_string_equal(r.rows[0].name, "hot");
	assert_int_equal(r.rows[0].line, 9);
	assert_int_equal(find_row(&r, "f150")->line, 151);
	report_release(&r);
	profile_release(&p);
	strbuf_release(&text);
}

/* A stack 65536 deep of one function: its total counts each sample once. */
static void test_report__deep_recursion(void **state)
{
	static const struct { enum report_by by; const char *row; int64_t self, total; } rows[] = {
		{ REPORT_BY_FUNCTION, "walk", 3, 5 },
		{ REPORT_BY_FUNCTION, "helper", 2, 2 },
		{ REPORT_BY_FUNCTION, "main", 0, 5 },
		{ REPORT_BY_LINE, "walk", 3, 5 },
		{ REPORT_BY_FILE, "/proj/r.c", 5, 5 },
		{ REPORT_BY_FILE, "/proj/main.c", 0, 5 },
		{ REPORT_BY_DSO, "prog", 5, 5 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct report_row *row;
		struct profile p;
		struct report r;

		profile_init(&p);
		profile_add_sample_type(&p, "samples", "count");
		th_add_deep(&p, NULL, "walk@/proj/r.c:7", 65536, "main@/proj/main.c:3", 3);
		th_add_deep(&p, "helper@/proj/r.c:20", "walk@/proj/r.c:7", 32768, "main@/proj/main.c:3", 2);
		assert_int_equal(profile_validate(&p), 0);
		assert_int_equal(report_build(&r, &p, 0, rows[i].by), 0);
		report_sort(&r, REPORT_SORT_TOTAL);
		assert_int_equal(r.total, 5);
		row = find_row(&r, rows[i].row);
		if (!row || row->self != rows[i].self || row->total != rows[i].total)
			fail_msg("case %zu: %s: self %lld total %lld, expected %lld and %lld", i, rows[i].row,
				 row ? (long long)row->self : -1LL, row ? (long long)row->total : -1LL,
				 (long long)rows[i].self, (long long)rows[i].total);
		if (rows[i].by == REPORT_BY_FUNCTION)
			assert_int_equal(r.nr, 3);
		report_release(&r);
		profile_release(&p);
	}
}

static void test_report__empty_profile(void **state)
{
	struct profile p;
	struct report r;

	/* a run too short for one sample: no rows, no line table to sort */
	for (int by = REPORT_BY_FUNCTION; by <= REPORT_BY_DSO; by++) {
		profile_init(&p);
		profile_add_sample_type(&p, "samples", "count");
		assert_int_equal(report_build(&r, &p, 0, (enum report_by)by), 0);
		assert_int_equal(r.nr, 0);
		assert_int_equal(r.total, 0);
		report_sort(&r, REPORT_SORT_TOTAL);
		report_release(&r);
		profile_release(&p);
	}
}

/* Row i's 'key' in a report's JSON: a string, the bytes not UTF-8 as U+FFFD. */
static void check_json_row(json_t *doc, size_t i, const char *key, const char *want)
{
	json_t *row = json_array_get(json_object_get(doc, "rows"), i);

	assert_non_null(row);
	assert_true(json_is_string(json_object_get(row, key)));
	assert_string_equal(json_string_value(json_object_get(row, key)), want);
}

static void test_report__json_not_utf8(void **state)
{
	/* names and paths come from outside: a byte that is not UTF-8 must not lose the key */
	const char *text = "bad\xff\xfename@src/\xff.c:3;main@m.c:1!/lib/l\xfe.so 10\n";
	struct profile p;
	struct report r;
	json_t *doc;
	char *s;

	build(&p, &r, text, REPORT_BY_FUNCTION, REPORT_SORT_SELF);
	doc = report_to_json(&p, &r, 0, REPORT_SORT_SELF);
	check_json_row(doc, 0, "name", "bad\xef\xbf\xbd\xef\xbf\xbdname");
	check_json_row(doc, 0, "file", "src/\xef\xbf\xbd.c");
	check_json_row(doc, 0, "dso", "prog");
	check_json_row(doc, 1, "dso", "l\xef\xbf\xbd.so");
	assert_non_null(s = json_dumps(doc, JSON_COMPACT));
	free(s);
	json_decref(doc);
	report_release(&r);
	profile_release(&p);

	build(&p, &r, text, REPORT_BY_FILE, REPORT_SORT_SELF);
	doc = report_to_json(&p, &r, 0, REPORT_SORT_SELF);
	check_json_row(doc, 0, "name", "src/\xef\xbf\xbd.c");
	json_decref(doc);
	report_release(&r);
	profile_release(&p);

	build(&p, &r, text, REPORT_BY_DSO, REPORT_SORT_SELF);
	doc = report_to_json(&p, &r, 0, REPORT_SORT_SELF);
	check_json_row(doc, 1, "name", "l\xef\xbf\xbd.so");
	json_decref(doc);
	report_release(&r);
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report__self_and_total),
		cmocka_unit_test(test_report__recursion_counted_once),
		cmocka_unit_test(test_report__inlined_flag),
		cmocka_unit_test(test_report__by_line_file_dso),
		cmocka_unit_test(test_report__hottest_line_survives_growth),
		cmocka_unit_test(test_report__deep_recursion),
		cmocka_unit_test(test_report__empty_profile),
		cmocka_unit_test(test_report__json_not_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
