/*
 * t-scale.c: unit tests for scale.c: the log-log fit on exact power laws
 * and on noisy data (the interval's coverage over many seeded data sets),
 * the t table, the verdict words, merging functions across profiles of
 * several sizes (repeats summed, thresholds applied) and the JSON shape.
 */
#include <math.h>

#include <jansson.h>

#include "test-helpers.h"
#include "scale.h"
#include "strbuf.h"

#define EPS 1e-9

static const double xs[] = { 1000, 2000, 4000, 8000, 16000 };

static void test_scale__exact_power_laws(void **state)
{
	static const struct {
		const char *what;
		double k, c;
		size_t n;
	} cases[] = {
		{ "linear", 1, 3e-6, 3 },
		{ "quadratic", 2, 1e-9, 4 },
		{ "square root", 0.5, 2e-4, 5 },
		{ "constant", 0, 0.25, 3 },
		{ "constant, five sizes", 0, 1.0 / 3, 5 },
		{ "cubic", 3, 1e-13, 4 },
		{ "decreasing", -1, 40, 4 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		double y[ARRAY_SIZE(xs)];
		struct scale_fit f;

		for (size_t j = 0; j < cases[i].n; j++)
			y[j] = cases[i].c * pow(xs[j], cases[i].k);
		scale_fit_power(xs, y, cases[i].n, &f);
		if (!f.fitted || fabs(f.exponent - cases[i].k) > EPS || f.r2 != 1 ||
		    fabs(f.ci_low - cases[i].k) > EPS || fabs(f.ci_high - cases[i].k) > EPS ||
		    fabs(exp(f.intercept) - cases[i].c) > EPS * cases[i].c || f.points != cases[i].n)
			fail_msg("%s: fitted %d k %.15g r2 %.17g interval [%.15g, %.15g] a %.15g",
				 cases[i].what, f.fitted, f.exponent, f.r2, f.ci_low, f.ci_high,
				 f.intercept);
	}
}

/* A seeded generator: the same data sets on every run. */
static uint64_t rng_state;

static double uniform(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return ((rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static double gaussian(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static void test_scale__noisy_interval(void **state)
{
	/* one data set, 5% noise: the truth lies inside, the fit is good */
	double y[5] = { 0.0101, 0.0396, 0.1630, 0.6350, 2.5800 };
	struct scale_fit f;
	size_t covered = 0, trials = 2000;

	scale_fit_power(xs, y, 5, &f);
	assert_true(f.fitted);
	assert_true(f.ci_low < 2 && 2 < f.ci_high);
	assert_true(f.ci_low < f.exponent && f.exponent < f.ci_high);
	assert_true(f.r2 > 0.99 && f.r2 < 1);

	/*
	 * The 95% interval must cover the true exponent in about 95% of data
	 * sets with normal noise on log(cost): with 3 sizes (t with 1 degree of
	 * freedom) and with 5. 2000 seeded sets: 0.95 +- 0.015 is 3 standard errors.
	 */
	for (size_t n = 3; n <= 5; n += 2) {
		covered = 0;
		rng_state = 42 + n;
		for (size_t t = 0; t < trials; t++) {
			for (size_t j = 0; j < n; j++)
				y[j] = 1e-8 * pow(xs[j], 1.5) * exp(0.1 * gaussian());
			scale_fit_power(xs, y, n, &f);
			assert_true(f.fitted);
			covered += f.ci_low <= 1.5 && 1.5 <= f.ci_high;
		}
		if (fabs((double)covered / trials - 0.95) > 0.015)
			fail_msg("%zu sizes: the interval covered the truth %zu times in %zu", n, covered, trials);
	}
}

static void test_scale__not_fitted(void **state)
{
	static const struct {
		const char *what;
		double x[4], y[4];
		size_t n;
		const char *reason;
	} cases[] = {
		{ "two sizes", { 1, 2 }, { 1, 4 }, 2, "too few sizes" },
		{ "no sizes", { 0 }, { 0 }, 0, "too few sizes" },
		{ "a zero cost", { 1, 2, 4 }, { 1, 0, 4 }, 3, "a size or cost is not above 0" },
		{ "a negative size", { -1, 2, 4 }, { 1, 2, 4 }, 3, "a size or cost is not above 0" },
		{ "not a number", { 1, 2, 4 }, { 1, NAN, 4 }, 3, "a size or cost is not above 0" },
		{ "one size three times", { 5, 5, 5 }, { 1, 2, 3 }, 3, "every size is the same" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct scale_fit f;

		scale_fit_power(cases[i].x, cases[i].y, cases[i].n, &f);
		if (f.fitted || strcmp(f.reason, cases[i].reason))
			fail_msg("%s: fitted %d reason '%s'", cases[i].what, f.fitted, f.reason);
	}
}

static void test_scale__t_table(void **state)
{
	assert_true(fabs(scale_t975(1) - 12.706204736) < EPS);
	assert_true(fabs(scale_t975(2) - 4.302652730) < EPS);
	assert_true(fabs(scale_t975(30) - 2.042272456) < EPS);
	assert_true(fabs(scale_t975(60) - 2.000297822) < EPS);
	/* t(0.975, 45) = 2.014103389; interpolated in 1/df */
	assert_true(fabs(scale_t975(45) - 2.014103389) < 1e-3);
	assert_true(fabs(scale_t975(1000000) - 1.959963985) < 1e-5);
	for (size_t df = 1; df < 300; df++)
		assert_true(scale_t975(df + 1) < scale_t975(df));
}

static void test_scale__verdict_words(void **state)
{
	static const struct {
		double k, r2, lo, hi;
		bool fitted;
		const char *words;
		bool superlinear;
	} cases[] = {
		{ 2.03, 0.999, 1.9, 2.1, true, "~n^2.0 superlinear", true },
		{ 1.31, 0.95, 1.0, 1.6, true, "~n^1.3 superlinear", true },
		{ 1.3, 0.95, 1.0, 1.6, true, "~n^1.3 linear", false },
		{ 2.5, 0.89, 1.0, 4.0, true, "poor fit", false },
		{ 0.98, 0.99, 0.9, 1.1, true, "~n^1.0 linear", false },
		{ 0.5, 0.97, 0.4, 0.6, true, "~n^0.5 sublinear", false },
		{ 0.01, 0.02, -0.2, 0.2, true, "~const", false },
		{ -0.1, 0.95, -0.9, 0.7, true, "~const", false },
		{ 0.1, 0.3, -1.5, 1.7, true, "poor fit", false },
		{ -0.6, 0.98, -0.7, -0.5, true, "~n^-0.6 decreasing", false },
		{ 0, 0, 0, 0, false, "too few samples", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct scale_fit f = { .fitted = cases[i].fitted, .exponent = cases[i].k,
				       .r2 = cases[i].r2, .ci_low = cases[i].lo, .ci_high = cases[i].hi };
		struct strbuf sb = STRBUF_INIT;

		scale_describe(&f, &sb);
		if (strcmp(sb.buf, cases[i].words) || scale_is_superlinear(&f) != cases[i].superlinear)
			fail_msg("k %g r2 %g: '%s' superlinear %d", cases[i].k, cases[i].r2, sb.buf,
				 scale_is_superlinear(&f));
		strbuf_release(&sb);
	}
}

/* A profile from text: samples/count, with time as count * 1 ms (the period). */
static void make_profile(struct profile *p, const char *text)
{
	profile_init(p);
	profile_add_sample_type(p, "samples", "count");
	p->period_type.type = profile_str(p, "cpu");
	p->period_type.unit = profile_str(p, "nanoseconds");
	p->period = 1000000;
	th_add_samples(p, text);
	assert_int_equal(profile_validate(p), 0);
}

static const struct scale_fn *find_fn(const struct scale *s, const char *name, const char *file)
{
	for (size_t i = 0; i < s->nr_fns; i++)
		if (!strcmp(s->fns[i].function, name) && !strcmp(s->fns[i].file, file))
			return &s->fns[i];
	return NULL;
}

/*
 * Three sizes: pairs grows as n^2, sum as n, rare shows up at the largest
 * size only, and a second "sum" in another file stays its own row.
 */
static const char *const size_profiles[] = {
	"pairs@s.c:10;main@s.c:1 100\n"
	"sum@s.c:20;main@s.c:1 50\n"
	"sum@t.c:5;main@s.c:1 30\n",

	"pairs@s.c:10;main@s.c:1 400\n"
	"sum@s.c:20;main@s.c:1 100\n"
	"sum@t.c:5;main@s.c:1 30\n",

	"pairs@s.c:11;main@s.c:1 1200\n"
	"pairs@s.c:12;pairs@s.c:12;main@s.c:1 400\n"	/* recursion counts once */
	"sum@s.c:20;main@s.c:1 200\n"
	"sum@t.c:5;main@s.c:1 30\n"
	"rare@s.c:30;main@s.c:1 25\n",
};

static void build_scale(struct scale *s, uint64_t min_samples)
{
	static const uint64_t sizes[] = { 1000, 2000, 4000 };

	scale_init(s, sizes, 3);
	for (size_t i = 0; i < 3; i++) {
		struct profile p;

		make_profile(&p, size_profiles[i]);
		assert_int_equal(scale_add_profile(s, i, &p, 0), 0);
		profile_release(&p);
	}
	scale_fit_all(s, min_samples);
}

static void test_scale__merge_across_sizes(void **state)
{
	struct scale s;
	const struct scale_fn *f;

	build_scale(&s, SCALE_MIN_SAMPLES);
	assert_int_equal(s.nr_fns, 5);
	/* sorted by cost at the largest size */
	assert_string_equal(s.fns[0].function, "main");
	assert_string_equal(s.fns[1].function, "pairs");
	assert_string_equal(s.fns[2].function, "sum");
	assert_string_equal(s.fns[2].file, "s.c");

	f = find_fn(&s, "pairs", "s.c");
	assert_true(f->fit.fitted);
	assert_true(fabs(f->fit.exponent - 2) < EPS);
	assert_true(f->fit.r2 == 1);
	assert_true(f->superlinear);
	assert_true(fabs(f->cost[2] - 1.6) < EPS);	/* 1600 samples of 1 ms */
	assert_true(fabs(f->self[2] - 1.6) < EPS);
	assert_int_equal(f->samples[0], 100);

	f = find_fn(&s, "sum", "s.c");
	assert_true(fabs(f->fit.exponent - 1) < EPS);
	assert_false(f->superlinear);

	f = find_fn(&s, "sum", "t.c");
	assert_true(fabs(f->fit.exponent) < EPS);
	assert_true(fabs(f->cost[1] - 0.03) < EPS);

	f = find_fn(&s, "rare", "s.c");
	assert_false(f->fit.fitted);
	assert_non_null(strstr(f->fit.reason, "too few samples: 1 of 3 sizes have 20 or more"));
	assert_true(f->cost[0] == 0 && f->samples[2] == 25);

	f = find_fn(&s, "main", "s.c");
	assert_true(fabs(f->self[2]) < EPS);
	assert_true(fabs(f->cost[0] - 0.18) < EPS);
	/* the program: every sample; main is on every stack */
	assert_true(s.program.fitted);
	assert_true(fabs(s.seconds[2] - 1.855) < EPS);
	assert_int_equal(s.samples[2], 1855);
	assert_true(fabs(s.program.exponent - f->fit.exponent) < EPS);
	assert_true(s.program.exponent > 1.2 && s.program.exponent < 1.75);
	scale_release(&s);
}

static void test_scale__min_samples(void **state)
{
	struct scale s;

	/* "sum" in t.c has 30 samples per size: out below 31 */
	build_scale(&s, 31);
	assert_false(find_fn(&s, "sum", "t.c")->fit.fitted);
	assert_int_equal(find_fn(&s, "sum", "t.c")->fit.points, 0);
	assert_true(find_fn(&s, "sum", "s.c")->fit.fitted);
	scale_release(&s);

	/* below 25 samples "rare" counts at its one size: still too few */
	build_scale(&s, 1);
	assert_false(find_fn(&s, "rare", "s.c")->fit.fitted);
	assert_int_equal(find_fn(&s, "rare", "s.c")->fit.points, 1);
	scale_release(&s);

	/* 101 samples: pairs keeps its two larger sizes only */
	build_scale(&s, 101);
	assert_false(find_fn(&s, "pairs", "s.c")->fit.fitted);
	assert_int_equal(find_fn(&s, "pairs", "s.c")->fit.points, 2);
	scale_release(&s);
}

static void test_scale__repeats_add_up(void **state)
{
	static const uint64_t sizes[] = { 10, 20, 40 };
	struct scale s;
	struct profile p, merged;

	scale_init(&s, sizes, 3);
	profile_init(&merged);
	for (size_t i = 0; i < 3; i++) {
		/* two repeats of each size, the second a little different */
		for (int r = 0; r < 2; r++) {
			make_profile(&p, size_profiles[i]);
			assert_int_equal(scale_add_profile(&s, i, &p, 0), 0);
			if (i == 2)
				assert_int_equal(profile_merge(&merged, &p), 0);
			profile_release(&p);
		}
	}
	scale_fit_all(&s, SCALE_MIN_SAMPLES);
	assert_int_equal(find_fn(&s, "pairs", "s.c")->samples[0], 200);
	assert_true(fabs(find_fn(&s, "pairs", "s.c")->fit.exponent - 2) < EPS);
	assert_int_equal(s.samples[2], 2 * 1855);

	/* the merged profile of the two repeats holds both */
	assert_int_equal(profile_validate(&merged), 0);
	assert_int_equal(profile_total(&merged, 0), 2 * 1855);
	assert_int_equal(merged.period, 1000000);
	{
		struct scale one;
		static const uint64_t n[] = { 1 };

		scale_init(&one, n, 1);
		assert_int_equal(scale_add_profile(&one, 0, &merged, 0), 0);
		assert_true(fabs(s.fns[0].cost[2] - 2 * 1.855) < EPS);
		assert_true(fabs(one.seconds[0] - s.seconds[2]) < EPS);
		scale_release(&one);
	}
	profile_release(&merged);
	scale_release(&s);
}

static void test_scale__time_from_the_profile(void **state)
{
	static const uint64_t sizes[] = { 1, 2, 3 };
	struct scale s;
	struct profile p;

	/* a cpu/nanoseconds sample type wins over the period */
	scale_init(&s, sizes, 3);
	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	profile_add_sample_type(&p, "cpu", "nanoseconds");
	th_add_samples(&p, "f@a.c:1 500000000\n");	/* both types get the number */
	assert_int_equal(scale_add_profile(&s, 0, &p, 0), 0);
	assert_true(fabs(s.seconds[0] - 0.5) < EPS);
	profile_release(&p);

	/* no time at all: the frequency given */
	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	th_add_samples(&p, "f@a.c:1 999\n");
	assert_int_equal(scale_add_profile(&s, 1, &p, 1.0 / 999), 0);
	assert_true(fabs(s.seconds[1] - 1) < EPS);
	assert_int_equal(scale_add_profile(&s, 1, &p, 0), -1);
	profile_release(&p);

	/* no count: refused */
	profile_init(&p);
	profile_add_sample_type(&p, "alloc_space", "bytes");
	th_add_samples(&p, "f@a.c:1 10\n");
	assert_int_equal(scale_add_profile(&s, 2, &p, 1), -1);
	profile_release(&p);
	scale_release(&s);
}

static void test_scale__empty_size(void **state)
{
	static const uint64_t sizes[] = { 1, 2, 3 };
	struct scale s;
	struct profile p;

	/* the smallest size ran too fast for a sample: the others still fit */
	scale_init(&s, sizes, 3);
	for (size_t i = 0; i < 3; i++) {
		make_profile(&p, i == 0 ? "" : i == 1 ? "f@a.c:1 20\n" : "f@a.c:1 30\n");
		assert_int_equal(scale_add_profile(&s, i, &p, 0), 0);
		profile_release(&p);
	}
	scale_fit_all(&s, 1);
	assert_int_equal(s.samples[0], 0);
	assert_int_equal(s.nr_fns, 1);
	assert_false(s.fns[0].fit.fitted);
	assert_int_equal(s.fns[0].fit.points, 2);
	assert_false(s.program.fitted);
	scale_release(&s);
}

static void test_scale__merge_refuses_other_types(void **state)
{
	struct profile a, b;

	make_profile(&a, "f@a.c:1 3\n");
	profile_init(&b);
	profile_add_sample_type(&b, "alloc_space", "bytes");
	th_add_samples(&b, "f@a.c:1 3\n");
	assert_int_equal(profile_merge(&a, &b), -1);
	assert_int_equal(a.nr_samples, 1);
	profile_release(&a);
	profile_release(&b);
}

static void test_scale__json_shape(void **state)
{
	struct scale s;
	json_t *doc, *fn, *rare = NULL, *pairs = NULL, *v;
	size_t i;
	static const char *const keys[] = {
		"function", "file", "exponent", "ci_low", "ci_high", "r2", "superlinear",
		"fitted", "reason", "cost_seconds", "self_seconds", "samples",
	};

	build_scale(&s, SCALE_MIN_SAMPLES);
	scale_set_run(&s, 0, 0.25, "/p/.hotloop/scale/cmd/n1000.pb.gz");
	doc = scale_to_json(&s, "cmd", "./prog {n}");
	assert_string_equal(json_string_value(json_object_get(doc, "workload")), "cmd");
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "./prog {n}");
	assert_int_equal(json_array_size(json_object_get(doc, "sizes")), 3);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(doc, "sizes"), 2)), 4000);
	v = json_array_get(json_object_get(doc, "runs"), 0);
	assert_int_equal(json_integer_value(json_object_get(v, "n")), 1000);
	assert_int_equal(json_integer_value(json_object_get(v, "samples")), 180);
	assert_true(json_is_real(json_object_get(v, "seconds")));
	assert_true(json_real_value(json_object_get(v, "wall_seconds")) == 0.25);
	assert_string_equal(json_string_value(json_object_get(v, "profile")),
			    "/p/.hotloop/scale/cmd/n1000.pb.gz");
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(doc, "runs"), 1),
						 "profile")));
	v = json_object_get(doc, "program");
	assert_true(json_is_real(json_object_get(v, "exponent")));
	assert_true(json_is_real(json_object_get(v, "r2")));
	assert_true(json_is_real(json_object_get(v, "ci_low")));
	assert_true(json_is_real(json_object_get(v, "ci_high")));

	json_array_foreach(json_object_get(doc, "functions"), i, fn) {
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
			if (!json_object_get(fn, keys[k]))
				fail_msg("function %zu lacks '%s'", i, keys[k]);
		assert_int_equal(json_array_size(json_object_get(fn, "cost_seconds")), 3);
		if (!strcmp(json_string_value(json_object_get(fn, "function")), "rare"))
			rare = fn;
		if (!strcmp(json_string_value(json_object_get(fn, "function")), "pairs"))
			pairs = fn;
	}
	assert_non_null(rare);
	assert_true(json_is_null(json_object_get(rare, "exponent")));
	assert_true(json_is_false(json_object_get(rare, "fitted")));
	assert_true(json_is_string(json_object_get(rare, "reason")));
	assert_true(json_is_false(json_object_get(rare, "superlinear")));
	assert_non_null(pairs);
	assert_true(json_is_true(json_object_get(pairs, "superlinear")));
	assert_true(json_is_null(json_object_get(pairs, "reason")));
	assert_true(fabs(json_real_value(json_object_get(pairs, "exponent")) - 2) < EPS);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(pairs, "samples"), 1)), 400);
	json_decref(doc);
	scale_release(&s);
}

static void test_scale__json_names_not_utf8(void **state)
{
	static const uint64_t sizes[] = { 1, 2, 3 };
	struct scale s;
	struct profile p;
	json_t *doc;

	scale_init(&s, sizes, 3);
	make_profile(&p, "bad\xff\xfename@a.c:1 5\n");
	assert_int_equal(scale_add_profile(&s, 0, &p, 0), 0);
	scale_fit_all(&s, 1);
	doc = scale_to_json(&s, "cmd", "./x \xff {n}");
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "./x \xef\xbf\xbd {n}");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(doc, "functions"), 0), "function")), "bad\xef\xbf\xbd\xef\xbf\xbdname");
	json_decref(doc);
	profile_release(&p);
	scale_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale__exact_power_laws),
		cmocka_unit_test(test_scale__noisy_interval),
		cmocka_unit_test(test_scale__not_fitted),
		cmocka_unit_test(test_scale__t_table),
		cmocka_unit_test(test_scale__verdict_words),
		cmocka_unit_test(test_scale__merge_across_sizes),
		cmocka_unit_test(test_scale__min_samples),
		cmocka_unit_test(test_scale__repeats_add_up),
		cmocka_unit_test(test_scale__time_from_the_profile),
		cmocka_unit_test(test_scale__empty_size),
		cmocka_unit_test(test_scale__merge_refuses_other_types),
		cmocka_unit_test(test_scale__json_shape),
		cmocka_unit_test(test_scale__json_names_not_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
