/*
 * t-loop.c: unit tests for loop.c: the prompt template, the proposal, the
 * protected-path check, the commit message, NO CANDIDATE.
 */
#include <math.h>

#include "test-helpers.h"
#include "config.h"
#include "loop.h"
#include "strbuf.h"

static void test_loop__render(void **state)
{
	static const struct loop_var vars[] = { { "lens", "locality" }, { "round", "3" }, { "kb", NULL } };
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(loop_render("round {{round}}, lens {{lens}}{{kb}}; {{ no end", vars, 3, &sb), 0);
	assert_string_equal(sb.buf, "round 3, lens locality; {{ no end");
	strbuf_reset(&sb);
	assert_int_equal(loop_render("{{lens}}{{lense}}", vars, 3, &sb), -1);
	strbuf_reset(&sb);
	/* the built-in template uses only the placeholders the loop fills in */
	{
		static const struct loop_var all[] = {
			{ "round", "1" }, { "rounds", "5" }, { "min_share", "5%" }, { "targets", "f (50%)" },
			{ "protected", "tests" }, { "test", "make test" }, { "build", "make" },
			{ "workloads", "big (primary)" }, { "min_improvement", "3%" },
			{ "guard_regression", "2%" }, { "lens", "algorithmic" }, { "lens_hint", "" },
			{ "brief", "BRIEF" }, { "kb", "KB" },
		};

		assert_int_equal(loop_render(loop_default_prompt, all, ARRAY_SIZE(all), &sb), 0);
		assert_non_null(strstr(sb.buf, "Pick ONE owned hot function"));
		assert_non_null(strstr(sb.buf, "# Brief of the current best\n\nBRIEF"));
		assert_null(strstr(sb.buf, "{{"));
	}
	strbuf_release(&sb);
}

static void test_loop__proposal(void **state)
{
	static const struct { const char *text; int ret; const char *why; } cases[] = {
		{ "{\"function\": \"f\", \"hypothesis\": \"h\", \"expected_gain_pct\": 12.5}", 0, NULL },
		{ "{}", 0, NULL },
		{ "{\"function\": 3}", -1, "\"function\" is not a string" },
		{ "{\"expected_gain_pct\": \"lots\"}", -1, "\"expected_gain_pct\" is not a number" },
		{ "[1, 2]", -1, "not a JSON object" },
		{ "{\"function\": \"f\"", -1, "not JSON" },
		{ "", -1, "not JSON" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct loop_proposal p;
		struct strbuf why = STRBUF_INIT;
		int ret = loop_parse_proposal(cases[i].text, strlen(cases[i].text), &p, &why);

		if (ret != cases[i].ret || (cases[i].why && !strstr(why.buf, cases[i].why)))
			fail_msg("case %zu: %d '%s'", i, ret, why.buf);
		if (!ret && i == 0) {
			assert_string_equal(p.function, "f");
			assert_string_equal(p.hypothesis, "h");
			assert_true(p.expected_gain_pct == 12.5);
			assert_null(p.title);
		}
		if (!ret && i == 1)
			assert_true(isnan(p.expected_gain_pct));
		loop_proposal_release(&p);
		strbuf_release(&why);
	}
}

static void test_loop__protected(void **state)
{
	char *prot[] = { "tests", "./bench/", "hotloop.conf" };
	struct config_list list = { prot, 3, 3 };
	const char *at_top[] = { "src/a.c", "tests/run" };
	const char *none[] = { "src/a.c", "testsuite/x", "hotloop.conf.bak" };
	const char *in_sub[] = { "proj/src/a.c", "proj/bench/in.txt" };
	const char *outside[] = { "other/tests/x", "tests/y" };

	assert_string_equal(loop_protected_hit(at_top, 2, "", &list), "tests/run");
	assert_null(loop_protected_hit(none, 3, "", &list));
	assert_string_equal(loop_protected_hit(in_sub, 2, "proj", &list), "proj/bench/in.txt");
	/* the project is proj/: paths outside it are not judged by its rules */
	assert_null(loop_protected_hit(outside, 2, "proj/", &list));
	assert_null(loop_protected_hit(at_top, 0, "", &list));
}

static void test_loop__commit_message_and_no_candidate(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	loop_commit_message("find_word", "a hash table\nsecond line", "big", -87.25, &sb);
	assert_string_equal(sb.buf, "perf: find_word: a hash table (big -87.2%)");
	strbuf_reset(&sb);
	loop_commit_message(NULL, NULL, "big", -5, &sb);
	assert_string_equal(sb.buf, "perf: (unnamed): faster (big -5.0%)");
	strbuf_release(&sb);

	assert_true(loop_no_candidate("thinking...\n  NO CANDIDATE  \n"));
	assert_true(loop_no_candidate("NO CANDIDATE"));
	assert_true(loop_no_candidate("x\r\nNO CANDIDATE\r\n"));
	assert_false(loop_no_candidate("there is NO CANDIDATE here\n"));
	assert_false(loop_no_candidate("no candidate\n"));
	assert_false(loop_no_candidate(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop__render),
		cmocka_unit_test(test_loop__proposal),
		cmocka_unit_test(test_loop__protected),
		cmocka_unit_test(test_loop__commit_message_and_no_candidate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
