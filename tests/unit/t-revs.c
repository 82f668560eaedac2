/*
 * t-revs.c: unit tests for revs.c: the tail of a build's output that an
 * error quotes, and running a shell command in a directory with a timeout.
 */
#include <sys/wait.h>

#include "test-helpers.h"
#include "revs.h"

static void test_revs__tail(void **state)
{
	static const struct {
		const char *out;
		int n;
		const char *want;
	} cases[] = {
		{ "", 3, "" },
		{ "one\n", 3, "\n    one" },
		{ "one\ntwo\nthree\n", 2, "\n    two\n    three" },
		{ "one\ntwo\nthree", 2, "\n    two\n    three" },
		{ "one\ntwo\n\n\n", 5, "\n    one\n    two" },
		{ "a\n\nb\n", 2, "\n    \n    b" },
		{ "x\ny\n", 0, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf out = STRBUF_INIT, sb = STRBUF_INIT;

		strbuf_addstr(&out, cases[i].out);
		revs_tail(&out, cases[i].n, &sb);
		assert_string_equal(sb.buf, cases[i].want);
		strbuf_release(&out);
		strbuf_release(&sb);
	}
}

static void test_revs__shell(void **state)
{
	struct strbuf out = STRBUF_INIT;
	int status;
	bool timed_out;

	assert_int_equal(revs_shell("pwd; echo err >&2; exit 3", "/", 0, &out, &status, &timed_out), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	assert_false(timed_out);
	assert_string_equal(out.buf, "/\nerr\n");
	strbuf_reset(&out);
	assert_int_equal(revs_shell("sleep 5", NULL, 0.2, &out, &status, &timed_out), 0);
	assert_true(timed_out);
	assert_true(WIFSIGNALED(status));
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_revs__tail),
		cmocka_unit_test(test_revs__shell),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
