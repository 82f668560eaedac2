/*
 * t-gate.c: unit tests for gate.c on two copies of a small project: a
 * candidate three times faster is kept at the compare stage with every run
 * kept; one that does not build, fails its tests or changes its output is
 * rejected at that stage and nothing after it runs; a baseline that does
 * not build is an error; the events say what happened. The effects are 3x,
 * far above any machine's noise.
 */
#include <jansson.h>

#include "test-helpers.h"
#include "test-project.h"
#include "events.h"
#include "gate.h"
#include "project.h"
#include "strbuf.h"

static struct strbuf errors = STRBUF_INIT;

static void collect(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

struct seen {
	size_t kinds[EV_LOOP_ENDED + 1];
	size_t builds_passed, builds_failed, pairs;
};

static void count(const struct event *ev, void *data)
{
	struct seen *s = data;

	s->kinds[ev->kind]++;
	if (ev->kind == EV_STAGE && ev->stage == GATE_STAGE_BUILD)
		*(ev->passed ? &s->builds_passed : &s->builds_failed) += 1;
	if (ev->kind == EV_PAIR && ev->base > 0 && ev->cand > 0)
		s->pairs++;
}

struct fixture {
	char *dir, *base, *cand;
	struct project p;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	char *conf;

	f->dir = tp_make(NULL);
	f->base = xstrfmt("%s/base", f->dir);
	f->cand = xstrfmt("%s/cand", f->dir);
	tp_sh(f->dir, "mkdir base cand && cp -r spin.c Makefile tests base/ && cp -r spin.c Makefile tests cand/");
	conf = xstrfmt("%s/hotloop.conf", f->dir);
	if (project_open(&f->p, conf, 0))
		fail_msg("cannot open the project");
	free(conf);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	project_release(&f->p);
	free(f->base);
	free(f->cand);
	tp_remove(f->dir);
	free(f);
	return 0;
}

static void spec_for(struct fixture *f, struct gate_spec *s, struct observer *o)
{
	if (gate_spec_from_project(s, &f->p, f->base, f->cand))
		fail_msg("gate_spec_from_project: %s", last_error());
	s->source = "test";
	s->obs = o;
	s->opts.quiesce.max_wait = 0;
}

static void test_gate__faster_is_kept(void **state)
{
	struct fixture *f = *state;
	struct gate_spec s = GATE_SPEC_INIT;
	struct gate_result r;
	struct seen seen = { 0 };
	struct observer o = { count, &seen, NULL };
	const struct verdict_estimate *e;
	size_t runs = 0;

	tp_sh(f->cand, "sed -i 's/i < n;/i < n \\/ 3;/' spin.c");
	spec_for(f, &s, &o);
	gate_result_init(&r);
	assert_int_equal(gate_run(&s, &r), 0);
	assert_int_equal(r.verdict, VERDICT_KEEP);
	assert_int_equal(r.stage, GATE_STAGE_COMPARE);
	assert_true(r.measured);
	assert_int_equal(r.test, VD_TEST_PASSED);
	assert_int_equal(gate_primary(&r, &e), 0);
	assert_true(e->change_pct < -30 && e->ci_high_pct < 0);
	assert_true(r.nr_reasons >= 1);
	assert_non_null(strstr(r.reasons[0], "primary 'main' improved"));
	/* every run is in the result, and every pair was told */
	for (size_t i = 0; i < r.compare.nr_results; i++)
		runs += r.compare.results[i].base.nr_runs + r.compare.results[i].cand.nr_runs;
	assert_true(runs >= 2 * 12);
	assert_int_equal(seen.pairs, r.compare.results[r.compare.primary].nr_pairs);
	assert_int_equal(seen.builds_passed, 1);
	assert_true(seen.kinds[EV_PROGRESS] >= runs);
	assert_false(gate_output_changed(&r));
	/* the result lives on without the spec */
	gate_spec_release(&s);
	{
		json_t *doc = gate_result_to_json(&r);

		assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "keep");
		assert_int_equal(json_array_size(json_object_get(doc, "runs")), runs);
		assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "runs"), 0),
								       "workload")), "main");
		json_decref(doc);
	}
	assert_int_equal(gate_exit_status(&r), HL_EXIT_OK);
	gate_result_release(&r);
}

static void test_gate__a_broken_build_stops_at_build(void **state)
{
	struct fixture *f = *state;
	struct gate_spec s = GATE_SPEC_INIT;
	struct gate_result r;
	struct seen seen = { 0 };
	struct observer o = { count, &seen, NULL };

	tp_sh(f->cand, "echo 'syntax error' >>spin.c");
	spec_for(f, &s, &o);
	s.log_dir = f->dir;
	gate_result_init(&r);
	assert_int_equal(gate_run(&s, &r), 0);
	assert_int_equal(r.verdict, VERDICT_REJECT);
	assert_int_equal(r.stage, GATE_STAGE_BUILD);
	assert_false(r.measured);
	assert_int_equal(r.test, VD_TEST_NOT_RUN);
	assert_non_null(strstr(r.reasons[0], "the candidate's build failed ('make -s' in"));
	assert_non_null(strstr(r.detail.buf, "syntax"));
	assert_int_equal(seen.builds_failed, 1);
	assert_int_equal(seen.kinds[EV_PAIR], 0);
	tp_sh(f->dir, "grep -q syntax build.log && test -e base-build.log");
	gate_result_release(&r);
	gate_spec_release(&s);
}

static void test_gate__failing_tests_stop_at_test(void **state)
{
	struct fixture *f = *state;
	struct gate_spec s = GATE_SPEC_INIT;
	struct gate_result r;

	tp_sh(f->cand, "sed -i 's/done %%lu/done %%lu!/' spin.c");
	spec_for(f, &s, NULL);
	gate_result_init(&r);
	assert_int_equal(gate_run(&s, &r), 0);
	assert_int_equal(r.verdict, VERDICT_REJECT);
	assert_int_equal(r.stage, GATE_STAGE_TEST);
	assert_int_equal(r.test, VD_TEST_FAILED);
	assert_false(r.measured);
	assert_non_null(strstr(r.reasons[0], "tests failed"));
	assert_int_equal(gate_exit_status(&r), HL_EXIT_REJECT);
	gate_result_release(&r);
	gate_spec_release(&s);
}

static void test_gate__other_output_stops_at_fingerprint(void **state)
{
	struct fixture *f = *state;
	struct gate_spec s = GATE_SPEC_INIT;
	struct gate_result r;

	/* the test still passes: it runs ./spin 1 */
	tp_sh(f->cand, "sed -i 's/printf(\"done %%lu\\\\n\", n);/printf(n > 1 ? \"Done %%lu\\\\n\" : \"done %%lu\\\\n\", n);/' spin.c");
	spec_for(f, &s, NULL);
	s.build_base = true;
	gate_result_init(&r);
	assert_int_equal(gate_run(&s, &r), 0);
	assert_int_equal(r.verdict, VERDICT_REJECT);
	assert_int_equal(r.stage, GATE_STAGE_FINGERPRINT);
	assert_true(gate_output_changed(&r));
	gate_result_release(&r);
	gate_spec_release(&s);
}

static void test_gate__a_broken_baseline_is_an_error(void **state)
{
	struct fixture *f = *state;
	struct gate_spec s = GATE_SPEC_INIT;
	struct gate_result r;
	report_fn old = set_error_routine(collect);

	tp_sh(f->base, "echo 'syntax error' >>spin.c");
	spec_for(f, &s, NULL);
	gate_result_init(&r);
	strbuf_reset(&errors);
	assert_int_equal(gate_run(&s, &r), -1);
	assert_non_null(strstr(errors.buf, "the baseline's build failed"));
	set_error_routine(old);
	gate_result_release(&r);
	gate_spec_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gate__faster_is_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate__a_broken_build_stops_at_build, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate__failing_tests_stop_at_test, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate__other_output_stops_at_fingerprint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate__a_broken_baseline_is_an_error, setup, teardown),
	};

	if (!tp_can_build()) {
		printf("skip t-gate: needs cc and git\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
