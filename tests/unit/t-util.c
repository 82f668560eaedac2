/*
 * t-util.c: unit tests for util.c: the CPU list parser --pin and the
 * sampler share.
 */
#include "test-helpers.h"
#include "strbuf.h"

static int nr_errors;

static void quiet(const char *prefix, const char *msg)
{
	nr_errors++;
}

static int setup(void **state)
{
	set_error_routine(quiet);
	return 0;
}

static const struct cpu_case {
	const char *in;
	int max;
	const char *want;	/* the CPUs, comma-separated; NULL: an error */
} cpu_cases[] = {
	{ "1", CPU_LIST_MAX, "1" },
	{ "0,2", CPU_LIST_MAX, "0,2" },
	{ "0-3,6", CPU_LIST_MAX, "0,1,2,3,6" },
	{ "6,0-1", CPU_LIST_MAX, "6,0,1" },
	{ "2-2", CPU_LIST_MAX, "2" },
	{ "1023", CPU_LIST_MAX, "1023" },
	{ "0-3\n", CPU_LIST_MAX, "0,1,2,3" },	/* as /sys holds it */
	/* duplicates count once, in the place they first came */
	{ "1,1", CPU_LIST_MAX, "1" },
	{ "0-3,2,1-4", CPU_LIST_MAX, "0,1,2,3,4" },
	{ "1030-1031", 65535, "1030,1031" },
	{ "", CPU_LIST_MAX, NULL },
	{ "\n", CPU_LIST_MAX, NULL },
	{ "1,", CPU_LIST_MAX, NULL },
	{ ",1", CPU_LIST_MAX, NULL },
	{ "0,,1", CPU_LIST_MAX, NULL },
	{ "3-1", CPU_LIST_MAX, NULL },
	{ "1-", CPU_LIST_MAX, NULL },
	{ "-1", CPU_LIST_MAX, NULL },
	{ "1-2-3", CPU_LIST_MAX, NULL },
	{ "a", CPU_LIST_MAX, NULL },
	{ "1a", CPU_LIST_MAX, NULL },
	{ "1024", CPU_LIST_MAX, NULL },
	{ "0-1024", CPU_LIST_MAX, NULL },
	{ "99999999999999999999", 65535, NULL },
	{ "0-3\n\n", CPU_LIST_MAX, NULL },
};

static void test_util__cpu_list(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cpu_cases); i++) {
		const struct cpu_case *c = &cpu_cases[i];
		struct strbuf got = STRBUF_INIT;
		int dummy, *cpus = &dummy;	/* overwritten either way */
		size_t nr = 99;
		int ret = cpu_list_parse("--pin", c->in, c->max, &cpus, &nr);

		if (!c->want) {
			if (ret != -1 || cpus || nr)
				fail_msg("'%s': %d, not an error", c->in, ret);
			if (!strstr(last_error(), "for --pin: expected CPU numbers from 0 to"))
				fail_msg("'%s': the message is '%s'", c->in, last_error());
			continue;
		}
		if (ret)
			fail_msg("'%s': %s", c->in, last_error());
		for (size_t k = 0; k < nr; k++)
			strbuf_addf(&got, "%s%d", k ? "," : "", cpus[k]);
		if (strcmp(got.buf, c->want))
			fail_msg("'%s': %s, not %s", c->in, got.buf, c->want);
		strbuf_release(&got);
		free(cpus);
	}
}

static void test_util__cpu_list_quiet(void **state)
{
	int *cpus;
	size_t nr;

	nr_errors = 0;
	assert_int_equal(cpu_list_parse(NULL, "x", CPU_LIST_MAX, &cpus, &nr), -1);
	assert_null(cpus);
	assert_int_equal(nr, 0);
	assert_int_equal(nr_errors, 0);
	assert_int_equal(cpu_list_parse("--pin", "x", CPU_LIST_MAX, &cpus, &nr), -1);
	assert_int_equal(nr_errors, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_util__cpu_list),
		cmocka_unit_test(test_util__cpu_list_quiet),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
