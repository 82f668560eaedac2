/*
 * t-json.c: unit tests for json.c, the helpers lib/ adds to jansson:
 * text from outside always becomes a JSON string.
 */
#include <jansson.h>

#include "test-helpers.h"
#include "json.h"

static void check_text(const char *in, const char *want)
{
	json_t *j = json_text(in);

	assert_true(json_is_string(j));
	assert_string_equal(json_string_value(j), want);
	json_decref(j);
}

static void test_json__text(void **state)
{
	check_text("", "");
	check_text("plain \t\"text\"\n", "plain \t\"text\"\n");
	check_text("caf\xc3\xa9 \xe2\x86\x92", "caf\xc3\xa9 \xe2\x86\x92");
	/* each byte that is not UTF-8 becomes U+FFFD, the rest stays */
	check_text("a\xff" "b", "a\xef\xbf\xbd" "b");
	check_text("\xc3(", "\xef\xbf\xbd(");
	check_text("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	check_text("\xe2\x86", "\xef\xbf\xbd\xef\xbf\xbd");
	assert_true(json_is_null(json_text(NULL)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json__text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
