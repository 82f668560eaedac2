/*
 * t-catalog-draft.c: unit tests for catalog-draft.c: an attempt's slug
 * made an entry id (its day and its -N dropped), and a confirmation's rule
 * (the confidence raised once per kb slug, up to the cap).
 */
#include <jansson.h>

#include "test-helpers.h"
#include "catalog-draft.h"
#include "strbuf.h"

static void test_catalog_draft__id(void **state)
{
	static const char *const cases[][2] = {
		{ "strlen-out-of-the-loop-03122026", "strlen-out-of-the-loop" },
		{ "strlen-out-of-the-loop-03122026-2", "strlen-out-of-the-loop" },
		{ "hash-2-for-x-03122026-12", "hash-2-for-x" },
		{ "no-day", "no-day" },
		{ "a-2", "a-2" },
		{ "03122026", "03122026" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *id = cat_draft_id(cases[i][0]);

		assert_string_equal(id, cases[i][1]);
		free(id);
	}
}

static void test_catalog_draft__confirm(void **state)
{
	const char *entry = "{ \"id\": \"t\", \"languages\": [\"c\"], \"message\": \"m\", \"confidence\": 0.3,"
			    " \"confirmed\": { \"kb\": [\"a-01012026\"], \"repositories\": [\"r\"] },"
			    " \"rule\": { \"pattern\": \"f($X)\" } }";
	struct strbuf out = STRBUF_INIT, again = STRBUF_INIT;
	bool added;
	double c;
	json_t *doc;

	assert_int_equal(cat_draft_confirm("t.json", entry, "b-02012026", "r2", &out, &added, &c), 0);
	assert_true(added);
	assert_true(c > 0.47 && c < 0.49);	/* 0.3 + 0.7 / 4, to two places */
	doc = json_loads(out.buf, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(json_object_get(doc, "confirmed"), "kb")), 2);
	assert_int_equal(json_array_size(json_object_get(json_object_get(doc, "confirmed"), "repositories")), 2);
	json_decref(doc);
	assert_int_equal(cat_draft_confirm("t.json", out.buf, "b-02012026", "r2", &again, &added, &c), 0);
	assert_false(added);
	assert_true(c > 0.47 && c < 0.49);
	strbuf_release(&out);
	strbuf_release(&again);
	assert_int_equal(cat_draft_confirm("t.json", "{ \"id\": 1 }", "b", "r", &out, &added, &c), -1);
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_draft__id),
		cmocka_unit_test(test_catalog_draft__confirm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
