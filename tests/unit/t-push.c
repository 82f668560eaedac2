/*
 * t-push.c: unit tests of lib/push.c without a network: which application
 * names and headers are refused (and why), the ingest URL built from a
 * base URL, and the default time range, units and sample rate taken from
 * a profile. Cases are tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "push.h"

static void quiet(const char *prefix, const char *msg)
{
}

static int setup(void **state)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

static void test_push__names(void **state)
{
	static const struct {
		const char *name;
		const char *error;	/* NULL: accepted; else a part of the message */
	} cases[] = {
		{ "app", NULL },
		{ "app{}", NULL },
		{ "my.app.cpu{env=ci,region=eu-west-1}", NULL },
		{ "app{_a=1,B2=x y}", NULL },
		{ "", "is empty" },
		{ "{a=b}", "is empty" },
		{ "a,b", "invalid character ','" },
		{ "a b", "invalid character ' '" },
		{ "a\tb", "control character" },
		{ "app{1a=b}", "invalid label name '1a'" },
		{ "app{a-b=c}", "invalid label name 'a-b'" },
		{ "app{=b}", "invalid label name ''" },
		{ "app{a=}", "empty value" },
		{ "app{a}", "has no value" },
		{ "app{a=b", "no closing '}'" },
		{ "app{a=b,}", "an empty label" },
		{ "app{a=b,,c=d}", "an empty label" },
		{ "app{a=b=c}", "invalid value 'b=c'" },
		{ "app{a=b{c}", "invalid value 'b{c'" },
		{ "app{a=b,a=c}", "label 'a' appears twice" },
		{ "app{a=b}x", "unexpected 'x'" },
		{ "app{}{}", "unexpected '{}'" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int ret = push_check_name(cases[i].name);

		if (!cases[i].error) {
			if (ret)
				fail_msg("'%s' refused: %s", cases[i].name, last_error());
			continue;
		}
		if (!ret)
			fail_msg("'%s' accepted", cases[i].name);
		if (!strstr(last_error(), cases[i].error))
			fail_msg("'%s': '%s' lacks '%s'", cases[i].name, last_error(), cases[i].error);
	}
}

static void test_push__headers(void **state)
{
	assert_int_equal(push_check_header("X-Scope-OrgID: team-a"), 0);
	assert_int_equal(push_check_header("Authorization: Bearer a:b"), 0);
	assert_int_equal(push_check_header("Bearer"), -1);
	assert_int_equal(push_check_header(": v"), -1);
	assert_int_equal(push_check_header("Bad Name: v"), -1);
	assert_int_equal(push_check_header("A: b\r\nX-Evil: 1"), -1);
}

static void test_push__urls(void **state)
{
	static const struct {
		const char *base, *name, *want;	/* want NULL: refused */
	} cases[] = {
		{ "http://h:4040", "app",
		  "http://h:4040/ingest?name=app&from=10&until=20&format=pprof&spyName=hotloop&sampleRate=99&units=samples&aggregationType=sum" },
		{ "http://h:4040/", "app{a=b,c=d e}",
		  "http://h:4040/ingest?name=app%7Ba%3Db%2Cc%3Dd%20e%7D&from=10&until=20&format=pprof&spyName=hotloop&sampleRate=99&units=samples&aggregationType=sum" },
		{ "HTTPS://h/pyroscope//", "a.b_c~d",
		  "HTTPS://h/pyroscope/ingest?name=a.b_c~d&from=10&until=20&format=pprof&spyName=hotloop&sampleRate=99&units=samples&aggregationType=sum" },
		{ "h:4040", "app", NULL },
		{ "ftp://h", "app", NULL },
		{ "http://", "app", NULL },
		{ "http:///x", "app", NULL },
		{ "http://h/?a=b", "app", NULL },
		{ "http://h/#x", "app", NULL },
		{ "http://h /", "app", NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct push_request r = { .base = cases[i].base, .name = cases[i].name,
					  .from = 10, .until = 20, .units = "samples",
					  .sample_rate = 99 };
		struct strbuf sb = STRBUF_INIT;
		int ret = push_ingest_url(&r, &sb);

		if (cases[i].want) {
			if (ret)
				fail_msg("'%s' refused: %s", cases[i].base, last_error());
			assert_string_equal(sb.buf, cases[i].want);
		} else if (!ret) {
			fail_msg("'%s' accepted as %s", cases[i].base, sb.buf);
		}
		strbuf_release(&sb);
	}
}

static void test_push__default_range(void **state)
{
	static const struct {
		int64_t time_nanos, duration_nanos, now, from, until;
	} cases[] = {
		{ 1700000000500000000, 300000000, 0, 1700000000, 1700000001 },
		{ 1700000000500000000, 600000000, 0, 1700000000, 1700000002 },
		{ 1700000000000000000, 0, 0, 1700000000, 1700000001 },
		{ 1700000000000000000, 2000000000, 0, 1700000000, 1700000002 },
		{ 0, 0, 1800000000, 1799999999, 1800000000 },
		{ 0, 2500000000, 1800000000, 1799999997, 1800000000 },
		{ 0, -5, 1800000000, 1799999999, 1800000000 },
		{ 1, INT64_MAX, 0, 0, 9223372037 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct profile p;
		int64_t from, until;

		profile_init(&p);
		p.time_nanos = cases[i].time_nanos;
		p.duration_nanos = cases[i].duration_nanos;
		push_default_range(&p, cases[i].now, &from, &until);
		assert_int_equal(from, cases[i].from);
		assert_int_equal(until, cases[i].until);
		profile_release(&p);
	}
}

static void test_push__units_and_rate(void **state)
{
	struct profile p;

	profile_init(&p);
	assert_string_equal(push_units(&p), "samples");
	assert_int_equal(push_sample_rate(&p), 100);
	profile_add_sample_type(&p, "samples", "count");
	profile_add_sample_type(&p, "cpu", "nanoseconds");
	p.period_type = p.sample_type[1];
	p.period = 1001001;	/* -F 999 */
	assert_string_equal(push_units(&p), "samples");
	assert_int_equal(push_sample_rate(&p), 999);
	profile_release(&p);

	profile_init(&p);
	profile_add_sample_type(&p, "alloc_space", "bytes");
	assert_string_equal(push_units(&p), "bytes");
	profile_release(&p);

	profile_init(&p);
	profile_add_sample_type(&p, "inuse_objects", "count");
	assert_string_equal(push_units(&p), "objects");
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push__names),
		cmocka_unit_test(test_push__headers),
		cmocka_unit_test(test_push__urls),
		cmocka_unit_test(test_push__default_range),
		cmocka_unit_test(test_push__units_and_rate),
	};

	return cmocka_run_group_tests_name("push", tests, setup, NULL);
}
