/*
 * t-lines.c: unit tests for lines.h, what the text parsers share: lines
 * with or without a final newline, trimming, and line_error()'s message.
 */
#include "test-helpers.h"
#include "lines.h"

static void quiet(const char *prefix, const char *msg)
{
}

static void test_lines__next_line(void **state)
{
	static const char buf[] = "one\n\n  two \r\nlast";
	const char *want[] = { "one", "", "  two \r", "last" };
	size_t pos = 0, n, i = 0;
	const char *s;

	while (next_line(buf, sizeof(buf) - 1, &pos, &s, &n)) {
		assert_true(i < ARRAY_SIZE(want));
		assert_int_equal(n, strlen(want[i]));
		assert_memory_equal(s, want[i], n);
		i++;
	}
	assert_int_equal(i, ARRAY_SIZE(want));
	pos = 0;
	assert_true(next_line("x\n", 2, &pos, &s, &n));
	assert_false(next_line("x\n", 2, &pos, &s, &n));
}

static void test_lines__trim(void **state)
{
	const char *s = " \t a b \r\v\f";
	size_t n = strlen(s);

	trim(&s, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(s, "a b", 3);
	s = " \t";
	n = 2;
	trim(&s, &n);
	assert_int_equal(n, 0);
	assert_false(is_space('\n'));
}

static void test_lines__line_error(void **state)
{
	struct input_pos at = { "in.txt", 12 };
	report_fn old = set_error_routine(quiet);

	assert_int_equal(line_error(&at, "bad %s '%.*s'", "count", 2, "xyz"), -1);
	assert_string_equal(last_error(), "cannot read 'in.txt': line 12: bad count 'xy'");
	set_error_routine(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines__next_line),
		cmocka_unit_test(test_lines__trim),
		cmocka_unit_test(test_lines__line_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
