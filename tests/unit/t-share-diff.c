/*
 * t-share-diff.c: unit tests for the per-function comparison of two
 * profiles: Wilson's and Newcombe's intervals against published values,
 * and the classes on profiles made from folded stacks.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile.h"
#include "profile-io.h"
#include "share-diff.h"
#include "strbuf.h"
#include "util.h"

static void test_share__intervals(void **state)
{
	double lo, hi;

	(void)state;
	/* Newcombe (1998), table I: 0/10 and 5/10 at 95% */
	share_wilson(0, 10, 1.959964, &lo, &hi);
	assert_true(lo == 0 && fabs(hi - 0.2775) < 1e-4);
	share_wilson(5, 10, 1.959964, &lo, &hi);
	assert_true(fabs(lo - 0.2366) < 1e-4 && fabs(hi - 0.7634) < 1e-4);
	/* his table II, example (a): 56/70 against 48/80, method 10: 0.0524 to 0.3339 */
	share_newcombe(48, 80, 56, 70, 1.959964, &lo, &hi);
	assert_true(fabs(lo - 0.0524) < 1e-4 && fabs(hi - 0.3339) < 1e-4);
	share_newcombe(56, 70, 48, 80, 1.959964, &lo, &hi);
	assert_true(fabs(lo + 0.3339) < 1e-4 && fabs(hi + 0.0524) < 1e-4);
}

static void folded(struct profile *p, const char *text)
{
	profile_init(p);
	assert_int_equal(profile_decode_any(p, text, strlen(text), "test", NULL), 0);
}

static const struct share_row *row(const struct share_diff *d, const char *name)
{
	for (size_t i = 0; i < d->nr; i++)
		if (!strcmp(d->rows[i].name, name))
			return &d->rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

static void test_share__classes(void **state)
{
	struct profile base, cand, same;
	struct share_diff d;
	struct share_diff_spec spec = { 0 };
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	folded(&base, "main;run;hot 9000\nmain;run;cold 1000\nmain;run;mid 500\nmain;tiny 10\n");
	folded(&same, "main;run;hot 9010\nmain;run;cold 995\nmain;run;mid 502\nmain;tiny 9\n");
	folded(&cand, "main;run;hot 5000\nmain;run;cold 1000\nmain;run;mid 505\nmain;tiny 12\nmain;newfn 300\n");

	spec.base = &base;
	spec.cand = &same;
	assert_int_equal(share_diff_build(&spec, &d), 0);
	assert_true(d.base_samples == 10510 && d.cand_samples == 10516);
	assert_int_equal(d.dearer + d.cheaper, 0);
	assert_int_equal(row(&d, "tiny")->cls, SHARE_UNTESTED);
	assert_int_equal(row(&d, "hot")->cls, SHARE_SAME);
	/* main and run have no samples of their own: tested is hot, cold, mid */
	assert_int_equal(d.tested, 3);
	assert_true(fabs(d.confidence_each - (1 - 0.05 / 3)) < 1e-12);
	share_diff_format_text(&d, 0, &sb);
	assert_non_null(strstr(sb.buf, "no function's share changed"));
	share_diff_release(&d);

	spec.cand = &cand;
	assert_int_equal(share_diff_build(&spec, &d), 0);
	assert_int_equal(row(&d, "hot")->cls, SHARE_CHEAPER);
	assert_int_equal(row(&d, "cold")->cls, SHARE_DEARER);	/* its share, not its count */
	assert_int_equal(row(&d, "newfn")->cls, SHARE_DEARER);
	assert_true(isnan(row(&d, "newfn")->rel));
	assert_true(row(&d, "hot")->low < row(&d, "hot")->delta && row(&d, "hot")->delta < row(&d, "hot")->high);
	/* dearer rows first */
	assert_int_equal(d.rows[0].cls, SHARE_DEARER);
	share_diff_release(&d);

	/* with callees: run holds everything but tiny and newfn */
	spec.by_total = true;
	assert_int_equal(share_diff_build(&spec, &d), 0);
	assert_true(row(&d, "main")->cls == SHARE_SAME && row(&d, "main")->base_share == 1);
	assert_int_equal(row(&d, "run")->cls, SHARE_SAME);	/* 99.9% -> 95.4%: within 5% */
	share_diff_release(&d);
	/* no tolerance: any change the counts can tell */
	spec.tolerance = -1;
	assert_int_equal(share_diff_build(&spec, &d), 0);
	assert_int_equal(row(&d, "run")->cls, SHARE_CHEAPER);
	share_diff_release(&d);
	spec.by_total = false;

	/* the same work in both: hot is cheaper, cold the same (its count did not change) */
	spec.base_work = spec.cand_work = 10;
	assert_int_equal(share_diff_build(&spec, &d), 0);
	assert_true(d.per_work);
	assert_int_equal(row(&d, "hot")->cls, SHARE_CHEAPER);
	assert_true(fabs(row(&d, "hot")->delta - (500 - 900)) < 1e-9);
	assert_int_equal(row(&d, "cold")->cls, SHARE_SAME);
	assert_true(row(&d, "cold")->rel == 0);
	assert_int_equal(row(&d, "newfn")->cls, SHARE_DEARER);
	share_diff_release(&d);
	/* the candidate did half the work: cold's rate doubled */
	spec.cand_work = 5;
	assert_int_equal(share_diff_build(&spec, &d), 0);
	assert_int_equal(row(&d, "cold")->cls, SHARE_DEARER);
	assert_true(fabs(row(&d, "cold")->rel - 1) < 1e-9);
	share_diff_release(&d);
	spec.cand_work = 0;
	assert_int_equal(share_diff_build(&spec, &d), -1);
	spec.base_work = 0;

	spec.sample_type = "nope";
	assert_int_equal(share_diff_build(&spec, &d), -1);
	spec.sample_type = NULL;
	spec.confidence = 2;
	assert_int_equal(share_diff_build(&spec, &d), -1);
	strbuf_release(&sb);
	profile_release(&base);
	profile_release(&same);
	profile_release(&cand);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share__intervals),
		cmocka_unit_test(test_share__classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
