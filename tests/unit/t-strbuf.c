/*
 * t-strbuf.c: unit tests for strbuf.c and intern.c, the two containers
 * everything else is built on.
 */
#include "test-helpers.h"
#include "strbuf.h"
#include "intern.h"

static void test_strbuf__init_is_empty_string(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
	assert_string_equal(sb.buf, "");
}

static void test_strbuf__add_and_format(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;
	size_t len;

	strbuf_addstr(&sb, "abc");
	strbuf_addch(&sb, '-');
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_memory_equal(sb.buf, "abc-0,1,2,", 10);
	assert_string_equal(sb.buf + sb.len - 4, "999,");
	strbuf_setlen(&sb, 3);
	assert_string_equal(sb.buf, "abc");
	s = strbuf_detach(&sb, &len);
	assert_int_equal(len, 3);
	assert_string_equal(s, "abc");
	assert_string_equal(sb.buf, "");
	free(s);
}

static void test_strbuf__xml_escape(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr_xml(&sb, "a<b>&\"c'\x01");
	assert_string_equal(sb.buf, "a&lt;b&gt;&amp;&quot;c&#39;?");
	strbuf_release(&sb);
}

static void test_strbuf__printable(void **state)
{
	static const struct { const char *in; size_t max; bool lines; const char *want; } cases[] = {
		{ "plain text", SIZE_MAX, false, "plain text" },
		{ "esc\x1b[31mred", SIZE_MAX, false, "esc?[31mred" },
		{ "a\nb\tc", SIZE_MAX, false, "a?b?c" },
		{ "a\nb\tc", SIZE_MAX, true, "a\nb\tc" },
		{ "c1 \xc2\x9b csi", SIZE_MAX, false, "c1 ? csi" },
		{ "bad \xff byte", SIZE_MAX, false, "bad \xef\xbf\xbd byte" },
		{ "del\x7f", SIZE_MAX, false, "del?" },
		/* cut at a character, never inside one */
		{ "\xc3\xa9\xc3\xa9\xc3\xa9", 5, false, "\xc3\xa9\xc3\xa9" },
		{ "abc", 2, false, "ab" },
		{ "", SIZE_MAX, false, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_add_printable(&sb, cases[i].in, strlen(cases[i].in), cases[i].max, cases[i].lines);
		if (strcmp(sb.buf, cases[i].want))
			fail_msg("case %zu: '%s'", i, sb.buf);
		strbuf_release(&sb);
	}
}

/* A character cut by the end of the buffer: U+FFFD, and no byte past the end read. */
static void test_strbuf__printable_cut_at_end(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *buf = xmalloc(3);

	memcpy(buf, "a\xe2\x82", 3);	/* the first two bytes of a three-byte character */
	strbuf_add_printable(&sb, buf, 3, SIZE_MAX, false);
	assert_string_equal(sb.buf, "a\xef\xbf\xbd\xef\xbf\xbd");
	free(buf);
	strbuf_release(&sb);
}

static void test_intern__dedup_and_zero(void **state)
{
	struct strtab t;
	char big[100000];
	int64_t a, b, c;

	strtab_init(&t);
	assert_string_equal(strtab_get(&t, 0), "");
	a = strtab_intern_str(&t, "main");
	b = strtab_intern_str(&t, "hot_spin");
	assert_int_equal(strtab_intern_str(&t, "main"), a);
	assert_int_not_equal(a, b);
	for (int i = 0; i < 50000; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%d", i);
		strtab_intern_str(&t, name);
	}
	assert_int_equal(strtab_intern_str(&t, "hot_spin"), b);
	assert_string_equal(strtab_get(&t, b), "hot_spin");
	assert_string_equal(strtab_get(&t, -1), "");
	assert_string_equal(strtab_get(&t, 1 << 30), "");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	c = strtab_intern_str(&t, big);
	assert_int_equal(strlen(strtab_get(&t, c)), sizeof(big) - 1);
	strtab_release(&t);
}

static void test_profile__dedup_ids_dense(void **state)
{
	struct profile p;
	struct pf_line l1 = { 0 }, l2 = { 0 };
	uint64_t f1, f2, m, loc1, loc2;
	int64_t v = 1;

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	f1 = profile_add_function(&p, "a", "_Z1av", "a.c", 1);
	f2 = profile_add_function(&p, "b", NULL, "a.c", 5);
	assert_int_equal(f1, 1);
	assert_int_equal(f2, 2);
	assert_int_equal(profile_add_function(&p, "a", "_Z1av", "a.c", 1), f1);
	m = profile_add_mapping(&p, 0x400000, 0x500000, 0, "/bin/x", "");
	assert_int_equal(profile_add_mapping(&p, 0x400000, 0x500000, 0, "/bin/x", ""), m);
	l1.function_id = f1; l1.line = 3;
	l2.function_id = f2; l2.line = 6;
	loc1 = profile_add_location(&p, m, 0x401000, &l1, 1);
	loc2 = profile_add_location(&p, m, 0x401010, &l2, 1);
	assert_int_equal(profile_add_location(&p, m, 0x401000, &l1, 1), loc1);
	assert_int_not_equal(loc1, loc2);
	profile_add_sample(&p, (uint64_t[]){ loc2, loc1 }, 2, &v, NULL, 0);
	assert_int_equal(profile_validate(&p), 0);
	assert_int_equal(profile_total(&p, 0), 1);
	assert_string_equal(profile_string(&p, profile_function(&p, f2)->system_name), "b");
	assert_null(profile_function(&p, 0));
	assert_null(profile_location(&p, 99));
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strbuf__init_is_empty_string),
		cmocka_unit_test(test_strbuf__add_and_format),
		cmocka_unit_test(test_strbuf__xml_escape),
		cmocka_unit_test(test_strbuf__printable),
		cmocka_unit_test(test_strbuf__printable_cut_at_end),
		cmocka_unit_test(test_intern__dedup_and_zero),
		cmocka_unit_test(test_profile__dedup_ids_dense),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
