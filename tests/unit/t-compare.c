/*
 * t-compare.c: unit tests for the parts of the compare engine that need no
 * processes: the looks a pair budget gets, the ABBA and coin-flip orders,
 * and the measurements of a comparison that measured nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util.h"
#include "compare.h"

static void test_compare__default_looks_table(void **state)
{
	static const struct {
		size_t pairs;
		size_t looks[4];
		size_t nr;
	} cases[] = {
		{ 0, { 12, 24, 36 }, 3 },
		{ 36, { 12, 24, 36 }, 3 },
		{ 12, { 12 }, 1 },
		{ 5, { 5 }, 1 },
		{ 20, { 12, 20 }, 2 },
		{ 100, { 12, 24, 36, 100 }, 4 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct stats_schedule s;

		assert_int_equal(compare_default_looks(cases[i].pairs, &s), 0);
		assert_int_equal(s.nr_looks, cases[i].nr);
		for (size_t k = 0; k < s.nr_looks; k++)
			assert_int_equal(s.looks[k], cases[i].looks[k]);
		assert_int_equal(stats_schedule_check(&s), 0);
	}
	{
		struct stats_schedule s;

		assert_int_equal(compare_default_looks(STATS_MAX_PAIRS + 1, &s), -1);
	}
}

static void test_compare__abba_alternates(void **state)
{
	uint64_t rng = 1;

	(void)state;
	for (size_t k = 0; k < 10; k++)
		assert_true(compare_base_first(COMPARE_ORDER_ABBA, k, &rng) == (k % 2 == 0));
}

static void test_compare__coin_flip_takes_both_sides(void **state)
{
	uint64_t rng = 12345;
	int first = 0, n = 1000;

	(void)state;
	for (int k = 0; k < n; k++)
		first += compare_base_first(COMPARE_ORDER_RANDOM, (size_t)k, &rng);
	/* a fair coin: 1000 flips land in 400..600 with overwhelming probability */
	assert_true(first > 400 && first < 600);
}

static void test_compare__nothing_measured(void **state)
{
	struct compare_opts o = { 0 };
	struct compare_workload_spec w[2] = {
		{ .name = "small", .base_cmd = "true", .cand_cmd = "true", .primary = false },
		{ .name = "big", .base_cmd = "true", .cand_cmd = "true", .primary = true },
	};
	struct compare c;
	struct vd_measurements m;

	(void)state;
	o.fingerprint = true;
	compare_init(&c, &o, w, 2);
	assert_int_equal(c.primary, 1);
	compare_measurements(&c, &m);
	assert_int_equal(m.nr_workloads, 2);
	assert_string_equal(m.workloads[0].name, "small");
	assert_false(m.workloads[0].primary);
	assert_true(m.workloads[1].primary);
	assert_int_equal(m.workloads[1].nr_pairs, 0);
	assert_int_equal(m.workloads[1].nr_cand_runs, 0);
	assert_int_equal(m.workloads[1].fingerprint, VD_FINGERPRINT_NONE);
	assert_int_equal(m.test, VD_TEST_NOT_RUN);
	compare_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare__default_looks_table),
		cmocka_unit_test(test_compare__abba_alternates),
		cmocka_unit_test(test_compare__coin_flip_takes_both_sides),
		cmocka_unit_test(test_compare__nothing_measured),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
