/*
 * t-catalog.c: unit tests for catalog-rule.c and catalog-match.c: an
 * entry read field by field, every malformed field named in its error,
 * and the matcher's operators (pattern, $X equality, $$$, kind, regex,
 * has / inside / follows / precedes with stopBy, all / any / not).
 */
#include <jansson.h>

#include "test-helpers.h"
#include "catalog-match.h"
#include "catalog-rule.h"
#include "strbuf.h"

static struct strbuf errors = STRBUF_INIT;

static void keep_error(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

#define HEAD "\"id\": \"t\", \"languages\": [\"c\", \"cpp\"], \"message\": \"m $X\""
#define HEAD_CPP "\"id\": \"t\", \"languages\": [\"cpp\"], \"message\": \"m $X\""

/* A one-entry catalog with 'rule' (a JSON rule object), for C and C++ or C++ alone */
static int one_rule_in(struct catalog *c, const char *rule, bool cpp_only)
{
	char *text = xstrfmt("{ %s, \"rule\": %s }", cpp_only ? HEAD_CPP : HEAD, rule);
	struct cat_entry e;
	int ret = cat_entry_parse(&e, "t.json", text, strlen(text));

	free(text);
	if (ret)
		return ret;
	ALLOC_GROW(c->entries, c->nr + 1, c->alloc);
	c->entries[c->nr++] = e;
	return catalog_compile(c);
}

static int one_rule(struct catalog *c, const char *rule)
{
	return one_rule_in(c, rule, false);
}

/* How many nodes of C (or C++) 'src' the rule matches; -1 if it does not read */
static int count(const char *rule, enum cat_lang lang, const char *src)
{
	struct catalog c = CATALOG_INIT;
	struct cat_check r = CAT_CHECK_INIT;
	int n;

	if (one_rule_in(&c, rule, lang == CAT_LANG_CPP)) {
		catalog_release(&c);
		return -1;
	}
	assert_true(cat_match_source(&c, lang, "x.c", src, strlen(src), &r) >= 0);
	n = (int)r.nr;
	cat_check_release(&r);
	catalog_release(&c);
	return n;
}

static void test_catalog__entry(void **state)
{
	const char *text =
		"{ \"id\": \"strlen-loop\", \"hint\": \"hoist it\", \"languages\": [\"c\"],"
		"  \"severity\": \"error\", \"confidence\": 0.75, \"message\": \"m\","
		"  \"symbols\": [\"strlen\"], \"confirmed\": { \"kb\": [\"a-1\"], \"repositories\": [\"r1\", \"r2\"] },"
		"  \"anti_pattern\": [\"a\", \"b\"], \"good_pattern\": \"c\","
		"  \"rule\": { \"pattern\": \"strlen($S)\", \"inside\": { \"kind\": \"for_statement\", \"stopBy\": \"end\", \"field\": \"condition\" } } }";
	struct cat_entry e;

	assert_int_equal(cat_entry_parse(&e, "e.json", text, strlen(text)), 0);
	assert_string_equal(e.id, "strlen-loop");
	assert_string_equal(e.hint, "hoist it");
	assert_true(e.lang[CAT_LANG_C] && !e.lang[CAT_LANG_CPP]);
	assert_int_equal(e.severity, CAT_SEV_ERROR);
	assert_true(e.confidence == 0.75);
	assert_int_equal(e.nr_symbols, 1);
	assert_int_equal(e.nr_kb, 1);
	assert_int_equal(e.nr_repos, 2);
	assert_string_equal(e.repos[1], "r2");
	assert_string_equal(e.anti_pattern, "a\nb\n");
	assert_string_equal(e.good_pattern, "c");
	assert_string_equal(e.rule.pattern, "strlen($S)");
	assert_non_null(e.rule.rel[CAT_REL_INSIDE].rule);
	assert_true(e.rule.rel[CAT_REL_INSIDE].stop_end);
	assert_string_equal(e.rule.rel[CAT_REL_INSIDE].field, "condition");
	assert_string_equal(e.rule.rel[CAT_REL_INSIDE].rule->kind, "for_statement");
	cat_entry_release(&e);
}

static void test_catalog__malformed(void **state)
{
	static const struct { const char *json, *field; } cases[] = {
		{ "[]", "one JSON object" },
		{ "{ \"id\": ", "not valid JSON" },
		{ "{ \"languages\": [\"c\"], \"message\": \"m\", \"rule\": {\"kind\": \"a\"} }", "'id' is missing" },
		{ "{ " HEAD ", \"rule\": {\"kind\": \"a\"}, \"id2\": 1 }", "field 'id2': unknown key" },
		{ "{ \"id\": \"A\", \"languages\": [\"c\"], \"message\": \"m\", \"rule\": {\"kind\": \"a\"} }", "field 'id'" },
		{ "{ \"id\": \"a\", \"languages\": [], \"message\": \"m\", \"rule\": {\"kind\": \"a\"} }", "field 'languages'" },
		{ "{ \"id\": \"a\", \"languages\": [\"c\", 1], \"message\": \"m\", \"rule\": {\"kind\": \"a\"} }", "field 'languages[1]'" },
		{ "{ \"id\": \"a\", \"languages\": [\"c\"], \"message\": \"\", \"rule\": {\"kind\": \"a\"} }", "field 'message': must not be empty" },
		{ "{ " HEAD ", \"hint\": 1, \"rule\": {\"kind\": \"a\"} }", "field 'hint'" },
		{ "{ " HEAD ", \"severity\": \"x\", \"rule\": {\"kind\": \"a\"} }", "field 'severity'" },
		{ "{ " HEAD ", \"confidence\": -1, \"rule\": {\"kind\": \"a\"} }", "field 'confidence'" },
		{ "{ " HEAD ", \"symbols\": [\"\"], \"rule\": {\"kind\": \"a\"} }", "field 'symbols[0]'" },
		{ "{ " HEAD ", \"confirmed\": [], \"rule\": {\"kind\": \"a\"} }", "field 'confirmed'" },
		{ "{ " HEAD ", \"confirmed\": {\"repositories\": [2]}, \"rule\": {\"kind\": \"a\"} }", "field 'confirmed.repositories[0]'" },
		{ "{ " HEAD ", \"confirmed\": {\"who\": []}, \"rule\": {\"kind\": \"a\"} }", "field 'confirmed.who'" },
		{ "{ " HEAD ", \"anti_pattern\": [1], \"rule\": {\"kind\": \"a\"} }", "field 'anti_pattern[0]'" },
		{ "{ " HEAD ", \"good_pattern\": {}, \"rule\": {\"kind\": \"a\"} }", "field 'good_pattern'" },
		{ "{ " HEAD ", \"rule\": [] }", "field 'rule': must be a rule object" },
		{ "{ " HEAD ", \"rule\": {} }", "field 'rule': an empty rule" },
		{ "{ " HEAD ", \"rule\": {\"kind\": \"A-b\"} }", "field 'rule.kind'" },
		{ "{ " HEAD ", \"rule\": {\"pattern\": 1} }", "field 'rule.pattern'" },
		{ "{ " HEAD ", \"rule\": {\"regex\": \"a[\"} }", "field 'rule.regex'" },
		{ "{ " HEAD ", \"rule\": {\"has\": 1} }", "field 'rule.has'" },
		{ "{ " HEAD ", \"rule\": {\"inside\": {\"stopBy\": \"end\"}} }", "field 'rule.inside': an empty rule" },
		{ "{ " HEAD ", \"rule\": {\"precedes\": {\"kind\": \"a\", \"stopBy\": 1}} }", "field 'rule.precedes.stopBy'" },
		{ "{ " HEAD ", \"rule\": {\"follows\": {\"kind\": \"a\", \"field\": \"x\"}} }", "field 'rule.follows.field'" },
		{ "{ " HEAD ", \"rule\": {\"has\": {\"kind\": \"a\", \"field\": \"\"}} }", "field 'rule.has.field'" },
		{ "{ " HEAD ", \"rule\": {\"all\": {}} }", "field 'rule.all'" },
		{ "{ " HEAD ", \"rule\": {\"any\": [{\"kind\": \"a\"}, {\"kind\": 1}]} }", "field 'rule.any[1].kind'" },
		{ "{ " HEAD ", \"rule\": {\"not\": {\"nope\": 1}} }", "field 'rule.not.nope'" },
		{ "{ " HEAD ", \"id\": \"u\", \"rule\": {\"kind\": \"a\"} }", "not valid JSON" },	/* a duplicate key */
	};

	set_error_routine(keep_error);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct cat_entry e;

		strbuf_setlen(&errors, 0);
		if (cat_entry_parse(&e, "bad.json", cases[i].json, strlen(cases[i].json)) != -1 ||
		    !strstr(errors.buf, "bad.json") || !strstr(errors.buf, cases[i].field))
			fail_msg("case %zu: %s: got '%s'", i, cases[i].json, errors.buf);
	}
	/* a pattern that does not parse: named at compile time */
	strbuf_setlen(&errors, 0);
	assert_int_equal(count("{ \"all\": [ { \"kind\": \"a\" }, { \"pattern\": \"for (((\" } ] }", CAT_LANG_C, ""), -1);
	assert_non_null(strstr(errors.buf, "t.json: field 'rule.all[1].pattern': the pattern does not parse"));
	set_error_routine(NULL);
}

static void test_catalog__pattern(void **state)
{
	const char *src = "void f(int a, int b) { g(a, a); g(a, b); g(b, b, b); h(a); g(); }\n";

	assert_int_equal(count("{ \"pattern\": \"g($X, $Y)\" }", CAT_LANG_C, src), 2);
	/* the same metavariable twice: equal text */
	assert_int_equal(count("{ \"pattern\": \"g($X, $X)\" }", CAT_LANG_C, src), 1);
	/* $_ binds nothing: any two */
	assert_int_equal(count("{ \"pattern\": \"g($_, $_)\" }", CAT_LANG_C, src), 2);
	/* $$$ any sequence, also none */
	assert_int_equal(count("{ \"pattern\": \"g($$$)\" }", CAT_LANG_C, src), 4);
	assert_int_equal(count("{ \"pattern\": \"g($$$, b)\" }", CAT_LANG_C, src), 2);
	assert_int_equal(count("{ \"pattern\": \"g(a, $$$)\" }", CAT_LANG_C, src), 2);
	/* text of leaves must be equal */
	assert_int_equal(count("{ \"pattern\": \"h(b)\" }", CAT_LANG_C, src), 0);
	assert_int_equal(count("{ \"pattern\": \"h(a)\" }", CAT_LANG_C, src), 1);
	/* a statement pattern, a C++ one */
	assert_int_equal(count("{ \"pattern\": \"$V.reserve($N);\" }", CAT_LANG_CPP, "void f() { v.reserve(3); v.size(); }"), 1);
	assert_int_equal(count("{ \"pattern\": \"std::endl\" }", CAT_LANG_CPP, "void f() { std::cout << std::endl; }"), 1);
}

static void test_catalog__captures(void **state)
{
	struct catalog c = CATALOG_INIT;
	struct cat_check r = CAT_CHECK_INIT;
	const char *src = "int f(void)\n{\n\treturn g(1 + 2);\n}\n";

	assert_int_equal(one_rule(&c, "{ \"pattern\": \"g($X)\" }"), 0);
	assert_int_equal(cat_match_source(&c, CAT_LANG_C, "x.c", src, strlen(src), &r), 0);
	assert_int_equal(r.nr, 1);
	assert_string_equal(r.findings[0].file, "x.c");
	assert_string_equal(r.findings[0].rule_id, "t");
	assert_int_equal(r.findings[0].line, 3);
	assert_int_equal(r.findings[0].column, 9);
	assert_int_equal(r.findings[0].end_line, 3);
	assert_int_equal(r.findings[0].end_column, 17);
	assert_int_equal(r.findings[0].nr_caps, 1);
	assert_string_equal(r.findings[0].caps[0].name, "X");
	assert_string_equal(r.findings[0].caps[0].text, "1 + 2");
	assert_string_equal(r.findings[0].message, "m 1 + 2");
	cat_check_release(&r);
	catalog_release(&c);
}

static void test_catalog__operators(void **state)
{
	const char *src =
		"void f(int n)\n{\n"
		"\tint x = 0;\n"
		"\tfor (int i = 0; i < n; i++) {\n"
		"\t\tif (i) { x += k(i); }\n"
		"\t\tk(0);\n"
		"\t}\n"
		"\tk(1);\n"
		"\tx++;\n"
		"}\n";

	assert_int_equal(count("{ \"kind\": \"call_expression\" }", CAT_LANG_C, src), 3);
	assert_int_equal(count("{ \"kind\": \"call_expression\", \"regex\": \"^k\\\\([01]\\\\)$\" }", CAT_LANG_C, src), 2);
	/* inside: neighbor is the parent, end any ancestor, field the way in */
	assert_int_equal(count("{ \"pattern\": \"k($X)\", \"inside\": { \"kind\": \"for_statement\", \"stopBy\": \"end\" } }", CAT_LANG_C, src), 2);
	assert_int_equal(count("{ \"pattern\": \"k($X)\", \"inside\": { \"kind\": \"expression_statement\" } }", CAT_LANG_C, src), 2);
	assert_int_equal(count("{ \"pattern\": \"k($X)\", \"inside\": { \"kind\": \"for_statement\" } }", CAT_LANG_C, src), 0);
	assert_int_equal(count("{ \"kind\": \"identifier\", \"regex\": \"^n$\", \"inside\": { \"kind\": \"for_statement\", \"field\": \"condition\", \"stopBy\": \"end\" } }", CAT_LANG_C, src), 1);
	/* has: neighbor a child, end any descendant, field one child */
	assert_int_equal(count("{ \"kind\": \"for_statement\", \"has\": { \"pattern\": \"k(0)\" } }", CAT_LANG_C, src), 0);
	assert_int_equal(count("{ \"kind\": \"for_statement\", \"has\": { \"pattern\": \"k(0)\", \"stopBy\": \"end\" } }", CAT_LANG_C, src), 1);
	assert_int_equal(count("{ \"kind\": \"for_statement\", \"has\": { \"field\": \"body\", \"kind\": \"compound_statement\" } }", CAT_LANG_C, src), 1);
	assert_int_equal(count("{ \"kind\": \"for_statement\", \"has\": { \"field\": \"update\", \"kind\": \"compound_statement\" } }", CAT_LANG_C, src), 0);
	/* follows / precedes: siblings, next or any */
	assert_int_equal(count("{ \"kind\": \"expression_statement\", \"follows\": { \"kind\": \"for_statement\" } }", CAT_LANG_C, src), 1);
	assert_int_equal(count("{ \"kind\": \"expression_statement\", \"follows\": { \"kind\": \"declaration\" } }", CAT_LANG_C, src), 0);
	assert_int_equal(count("{ \"kind\": \"expression_statement\", \"follows\": { \"kind\": \"declaration\", \"stopBy\": \"end\" } }", CAT_LANG_C, src), 2);
	assert_int_equal(count("{ \"kind\": \"declaration\", \"precedes\": { \"pattern\": \"x++;\", \"stopBy\": \"end\" } }", CAT_LANG_C, src), 1);
	assert_int_equal(count("{ \"kind\": \"declaration\", \"precedes\": { \"pattern\": \"x++;\" } }", CAT_LANG_C, src), 0);
	/* all / any / not */
	assert_int_equal(count("{ \"all\": [ { \"pattern\": \"k($X)\" }, { \"regex\": \"0\" } ] }", CAT_LANG_C, src), 1);
	assert_int_equal(count("{ \"any\": [ { \"pattern\": \"k(0)\" }, { \"pattern\": \"k(1)\" } ] }", CAT_LANG_C, src), 2);
	assert_int_equal(count("{ \"pattern\": \"k($X)\", \"not\": { \"pattern\": \"k(1)\" } }", CAT_LANG_C, src), 2);
	/* a metavariable bound by the pattern, compared inside a relation */
	assert_int_equal(count("{ \"pattern\": \"$V++\", \"follows\": { \"stopBy\": \"end\", \"has\": { \"pattern\": \"$V = $_\", \"stopBy\": \"end\" } } }", CAT_LANG_C, src), 0);
	assert_int_equal(count("{ \"kind\": \"expression_statement\", \"has\": { \"pattern\": \"$V++\" }, \"follows\": { \"stopBy\": \"end\", \"kind\": \"declaration\", \"has\": { \"stopBy\": \"end\", \"kind\": \"identifier\", \"pattern\": \"$V\" } } }", CAT_LANG_C, src), 1);
}

static void test_catalog__syntax_errors(void **state)
{
	struct catalog c = CATALOG_INIT;
	struct cat_check r = CAT_CHECK_INIT;
	const char *src = "void f( { k(1); \n";

	assert_int_equal(one_rule(&c, "{ \"pattern\": \"k($X)\" }"), 0);
	assert_int_equal(cat_match_source(&c, CAT_LANG_C, "x.c", src, strlen(src), &r), 1);
	cat_check_release(&r);
	catalog_release(&c);
}

static void test_catalog__lang_of_path(void **state)
{
	assert_int_equal(cat_lang_of_path("a/b.c"), CAT_LANG_C);
	assert_int_equal(cat_lang_of_path("b.h"), CAT_LANG_C);
	assert_int_equal(cat_lang_of_path("b.cc"), CAT_LANG_CPP);
	assert_int_equal(cat_lang_of_path("b.hpp"), CAT_LANG_CPP);
	assert_int_equal(cat_lang_of_path("b.py"), -1);
	assert_int_equal(cat_lang_of_path("a.d/b"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog__entry),
		cmocka_unit_test(test_catalog__malformed),
		cmocka_unit_test(test_catalog__pattern),
		cmocka_unit_test(test_catalog__captures),
		cmocka_unit_test(test_catalog__operators),
		cmocka_unit_test(test_catalog__syntax_errors),
		cmocka_unit_test(test_catalog__lang_of_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
