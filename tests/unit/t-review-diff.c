/*
 * t-review-diff.c: unit tests for review-diff.c, the diff parser of
 * `catalog review`: the new side's changed lines of each file, from git
 * diff -U0 and with context; C-quoted and spaced names, renames, new,
 * deleted and binary files; hunks that do not add up, bad headers.
 */
#include "test-helpers.h"
#include "review-diff.h"
#include "strbuf.h"

static int parse(const char *text, struct review_diff *d, struct strbuf *why)
{
	return review_parse_diff(text, strlen(text), d, why);
}

static void test_review_diff__lines(void **state)
{
	struct review_diff d;
	struct strbuf why = STRBUF_INIT;
	const char *text =
		"diff --git a/a b.c b/a b.c\n"
		"index 1..2 100644\n"
		"--- a/a b.c\t\n"
		"+++ b/a b.c\t\n"
		"@@ -2 +2,2 @@ int f(void)\n"
		"-old\n"
		"++++ b/not-a-header\n"
		"+two\n"
		"@@ -9,0 +11 @@\n"
		"+ins\n"
		"@@ -20,2 +22,0 @@\n"
		"-gone\n"
		"-gone\n"
		"diff --git \"a/q\\\"t\\n.c\" \"b/q\\\"t\\n.c\"\n"
		"new file mode 100644\n"
		"--- /dev/null\n"
		"+++ \"b/q\\\"t\\n.c\"\n"
		"@@ -0,0 +1,3 @@\n"
		"+a\n+b\n+c\n"
		"diff --git a/old.c b/new.c\n"
		"similarity index 90%\n"
		"rename from old.c\n"
		"rename to new.c\n"
		"--- a/old.c\n"
		"+++ b/new.c\n"
		"@@ -3,3 +3,3 @@\n"
		" ctx\n"
		"-x\n"
		"+y\n"
		"\\ No newline at end of file\n"
		" ctx\n"
		"diff --git a/gone.c b/gone.c\n"
		"deleted file mode 100644\n"
		"--- a/gone.c\n"
		"+++ /dev/null\n"
		"@@ -1 +0,0 @@\n"
		"-x\n"
		"diff --git a/b.bin b/b.bin\n"
		"Binary files a/b.bin and b/b.bin differ\n";

	assert_int_equal(parse(text, &d, &why), 0);
	assert_int_equal(d.nr, 5);
	assert_string_equal(d.files[0].path, "a b.c");
	assert_int_equal(d.files[0].nr, 2);
	assert_int_equal(d.files[0].v[0].lo, 2);
	assert_int_equal(d.files[0].v[0].hi, 3);
	assert_int_equal(d.files[0].v[1].lo, 11);
	assert_true(review_file_touches(&d.files[0], 1, 2));
	assert_false(review_file_touches(&d.files[0], 4, 10));
	assert_true(review_file_touches(&d.files[0], 4, 11));
	assert_string_equal(d.files[1].path, "q\"t\n.c");
	assert_int_equal(d.files[1].status, REVIEW_ADDED);
	assert_int_equal(d.files[1].v[0].hi, 3);
	assert_string_equal(d.files[2].path, "new.c");
	assert_int_equal(d.files[2].status, REVIEW_RENAMED);
	assert_int_equal(d.files[2].nr, 1);
	assert_int_equal(d.files[2].v[0].lo, 4);
	assert_int_equal(d.files[2].v[0].hi, 4);
	assert_string_equal(d.files[3].path, "gone.c");
	assert_int_equal(d.files[3].status, REVIEW_DELETED);
	assert_int_equal(d.files[3].nr, 0);
	assert_string_equal(d.files[4].path, "b.bin");
	assert_int_equal(d.files[4].status, REVIEW_BINARY);
	review_diff_release(&d);
	strbuf_release(&why);
}

static void test_review_diff__bad(void **state)
{
	static const char *const bad[] = {
		"diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +1,2 @@\n-a\n+b\n",	/* short */
		"diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n+b\n+c\n",	/* no '-' */
		"diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -a +1 @@\n",
		"diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +99999999999 @@\n",
		"diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +0,1 @@\n+x\n",
		"diff --git a/x.c b/x.c\n--- a/x.c\n+++ \"b/x\\q.c\"\n",
		"diff --git a/x.c b/x.c\n--- a/x.c\n+++ \"b/x\\000.c\"\n",
		"diff --git x y z\nBinary files x and y differ\n",	/* no name */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct review_diff d;
		struct strbuf why = STRBUF_INIT;

		assert_int_equal(parse(bad[i], &d, &why), -1);
		assert_true(why.len > 0);
		assert_int_equal(d.nr, 0);
		strbuf_release(&why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_review_diff__lines),
		cmocka_unit_test(test_review_diff__bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
