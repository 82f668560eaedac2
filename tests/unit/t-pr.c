/*
 * t-pr.c: unit tests for pr.c's texts: a [pr] command filled in (every
 * value single-quoted, so titles with quotes, $(...) and backquotes stay
 * one word that runs nothing, checked by running the line through
 * /bin/sh), placeholders inside quotes refused, and the body's parts.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "test-helpers.h"
#include "pr.h"
#include "strbuf.h"

static struct strbuf errors = STRBUF_INIT;

static void keep_error(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static void test_pr__fill(void **state)
{
	static const struct { const char *tmpl, *want, *err; } cases[] = {
		{ "gh pr create --title {title} --head {branch}", "gh pr create --title 'T' --head 'hotloop-pr/x/1'", NULL },
		{ "x {base}{commit}", "x 'main''abc'", NULL },
		{ "x {unknown} ${HOME} {a,b} {", "x {unknown} ${HOME} {a,b} {", NULL },
		{ "x '{title}' y", NULL, "inside quotes" },
		{ "x \"{title}\"", NULL, "inside quotes" },
		{ "x \\{title}", "x \\{title}", NULL },	/* an escaped brace is a brace */
		{ "x 'it''s' {title}", "x 'it''s' 'T'", NULL },
		{ "x \"a\\\"b\" {title}", "x \"a\\\"b\" 'T'", NULL },
		{ "x 'open", NULL, "unterminated" },
	};
	const struct pr_var vars[] = {
		{ "title", "T" }, { "body", "/b.md" }, { "branch", "hotloop-pr/x/1" }, { "base", "main" },
		{ "commit", "abc" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf out = STRBUF_INIT;
		int ret;

		strbuf_setlen(&errors, 0);
		ret = pr_fill_command(cases[i].tmpl, vars, ARRAY_SIZE(vars), &out);
		if (cases[i].err) {
			assert_int_equal(ret, -1);
			if (!strstr(errors.buf, cases[i].err))
				fail_msg("'%s': '%s'", cases[i].tmpl, errors.buf);
		} else {
			if (ret)
				fail_msg("'%s': %s", cases[i].tmpl, errors.buf);
			assert_string_equal(out.buf, cases[i].want);
		}
		strbuf_release(&out);
	}
}

/* Hostile titles reach the command as one word, unchanged, and run nothing. */
static void test_pr__no_injection(void **state)
{
	static const char *titles[] = {
		"perf: a \"quoted\" title", "it's $(touch /nonexistent/pwned) `id` $HOME", "'; exit 7; '",
		"back\\slash \\' and \\\" end", "", "new\nline",
	};

	for (size_t i = 0; i < ARRAY_SIZE(titles); i++) {
		const struct pr_var vars[] = { { "title", titles[i] } };
		struct strbuf line = STRBUF_INIT, got = STRBUF_INIT;
		char buf[256];
		FILE *f;
		size_t n;

		assert_int_equal(pr_fill_command("printf '%s|%s' {title} \"$#\"", vars, 1, &line), 0);
		f = popen(line.buf, "r");
		assert_non_null(f);
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			strbuf_add(&got, buf, n);
		assert_int_equal(WEXITSTATUS(pclose(f)), 0);
		strbuf_addch(&line, '\0');
		{
			char *want = xstrfmt("%s|0", titles[i]);

			assert_string_equal(got.buf, want);
			free(want);
		}
		strbuf_release(&line);
		strbuf_release(&got);
	}
}

static void test_pr__body(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	pr_body("# half the loop\n\n- verdict: keep\n- change: -49.3% cpu on main [-49.9, -47.8]\n\n", NULL,
		" spin.c | 2 +-\n 1 file changed\n", "hotloop/2026-12-03", "4f2437921a7b0000", 2, 3,
		"hotloop-pr/2026-12-03/1", &sb);
	assert_string_equal(sb.buf,
		"# half the loop\n\n- verdict: keep\n- change: -49.3% cpu on main [-49.9, -47.8]\n\n"
		"## Diff stat\n\n```\n spin.c | 2 +-\n 1 file changed\n```\n\n"
		"Kept by `hotloop loop` on `hotloop/2026-12-03` as 4f2437921a7b, measured against its parent. "
		"Change 2 of 3, stacked: it goes into `hotloop-pr/2026-12-03/1` (the change before it).\n");
	strbuf_setlen(&sb, 0);
	pr_body(NULL, "perf: spin: x\n\nbody\n", "", "hotloop/d", "abc", 1, 1, "main", &sb);
	assert_non_null(strstr(sb.buf, "perf: spin: x\n\nbody\n\n(no knowledge base entry holds this commit)"));
	assert_null(strstr(sb.buf, "stacked"));
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pr__fill),
		cmocka_unit_test(test_pr__no_injection),
		cmocka_unit_test(test_pr__body),
	};
	int ret;

	set_error_routine(keep_error);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	strbuf_release(&errors);
	return ret;
}
