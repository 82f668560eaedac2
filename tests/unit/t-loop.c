/*
 * t-loop.c: unit tests for loop.c and prompt.c: the prompt template, the
 * proposal, the protected-path check, the commit message, NO CANDIDATE;
 * then the engine itself, in-process, with scripted agents on a throwaway
 * project: typed attempts at each stage, the events in order, a keep
 * committed on the branch, the scale results in the prompt, the user's
 * tree as it was.
 */
#include <math.h>
#include <sys/stat.h>

#include <jansson.h>

#include "test-helpers.h"
#include "test-project.h"
#include "config.h"
#include "events.h"
#include "git.h"
#include "loop.h"
#include "project.h"
#include "record.h"
#include "strbuf.h"

static void test_loop__render(void **state)
{
	static const struct loop_var vars[] = { { "lens", "locality" }, { "round", "3" }, { "kb", NULL } };
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(loop_render("round {{round}}, lens {{lens}}{{kb}}; {{ no end", vars, 3, &sb), 0);
	assert_string_equal(sb.buf, "round 3, lens locality; {{ no end");
	strbuf_reset(&sb);
	assert_int_equal(loop_render("{{lens}}{{lense}}", vars, 3, &sb), -1);
	strbuf_reset(&sb);
	/* the built-in template uses only the placeholders the loop fills in */
	{
		static const struct loop_var all[] = {
			{ "round", "1" }, { "rounds", "5" }, { "min_share", "5%" }, { "targets", "f (50%)" },
			{ "protected", "tests" }, { "test", "make test" }, { "build", "make" },
			{ "workloads", "big (primary)" }, { "min_improvement", "3%" },
			{ "guard_regression", "2%" }, { "lens", "algorithmic" }, { "lens_hint", "" },
			{ "brief", "BRIEF" }, { "kb", "KB" },
		};

		assert_int_equal(loop_render(loop_default_prompt, all, ARRAY_SIZE(all), &sb), 0);
		assert_non_null(strstr(sb.buf, "Pick ONE owned hot function"));
		assert_non_null(strstr(sb.buf, "# Brief of the current best\n\nBRIEF"));
		assert_null(strstr(sb.buf, "{{"));
	}
	strbuf_release(&sb);
	assert_non_null(strstr(loop_lens_hint("locality"), "memory"));
	assert_string_equal(loop_lens_hint("no-such-lens"), "");
}

static void test_loop__proposal(void **state)
{
	static const struct { const char *text; int ret; const char *why; } cases[] = {
		{ "{\"function\": \"f\", \"hypothesis\": \"h\", \"expected_gain_pct\": 12.5}", 0, NULL },
		{ "{}", 0, NULL },
		{ "{\"function\": 3}", -1, "\"function\" is not a string" },
		{ "{\"expected_gain_pct\": \"lots\"}", -1, "\"expected_gain_pct\" is not a number" },
		{ "[1, 2]", -1, "not a JSON object" },
		{ "{\"function\": \"f\"", -1, "not JSON" },
		{ "", -1, "not JSON" },
		/* the bytes jansson quotes come from the agent: no escape reaches a terminal */
		{ "\x1b]0;x\x07{}", -1, "not JSON: '[' or '{' expected near '?' (line 1)" },
		{ "\xc2\x9b" "2J{}", -1, "not JSON: '[' or '{' expected near '?' (line 1)" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct loop_proposal p;
		struct strbuf why = STRBUF_INIT;
		int ret = loop_parse_proposal(cases[i].text, strlen(cases[i].text), &p, &why);

		if (ret != cases[i].ret || (cases[i].why && !strstr(why.buf, cases[i].why)))
			fail_msg("case %zu: %d '%s'", i, ret, why.buf);
		if (!ret && i == 0) {
			assert_string_equal(p.function, "f");
			assert_string_equal(p.hypothesis, "h");
			assert_true(p.expected_gain_pct == 12.5);
			assert_null(p.title);
		}
		if (!ret && i == 1)
			assert_true(isnan(p.expected_gain_pct));
		loop_proposal_release(&p);
		strbuf_release(&why);
	}
	/* strings the agent wrote are printed and committed: no escape, no stray line */
	{
		static const char text[] = "{\"title\": \"fast\\u001b[2J\\nnow\", "
					   "\"hypothesis\": \"one\\ntwo\\u0007\", \"function\": \"f\\u0001g\"}";
		struct loop_proposal p;
		struct strbuf why = STRBUF_INIT;

		assert_int_equal(loop_parse_proposal(text, strlen(text), &p, &why), 0);
		assert_string_equal(p.title, "fast?[2J?now");
		assert_string_equal(p.hypothesis, "one\ntwo?");
		assert_string_equal(p.function, "f?g");
		loop_proposal_release(&p);
		strbuf_release(&why);
	}
}

static void test_loop__protected(void **state)
{
	char *prot[] = { "tests", "./bench/", "hotloop.conf" };
	struct config_list list = { prot, 3, 3 };
	const char *at_top[] = { "src/a.c", "tests/run" };
	const char *none[] = { "src/a.c", "testsuite/x", "hotloop.conf.bak" };
	const char *in_sub[] = { "proj/src/a.c", "proj/bench/in.txt" };
	const char *outside[] = { "other/tests/x", "tests/y" };

	assert_string_equal(loop_protected_hit(at_top, 2, "", &list), "tests/run");
	assert_null(loop_protected_hit(none, 3, "", &list));
	assert_string_equal(loop_protected_hit(in_sub, 2, "proj", &list), "proj/bench/in.txt");
	/* the project is proj/: paths outside it are not judged by its rules */
	assert_null(loop_protected_hit(outside, 2, "proj/", &list));
	assert_null(loop_protected_hit(at_top, 0, "", &list));
}

static void test_loop__commit_message_and_no_candidate(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	loop_commit_message("find_word", "a hash table\nsecond line", "big", -87.25, &sb);
	assert_string_equal(sb.buf, "perf: find_word: a hash table (big -87.2%)");
	strbuf_reset(&sb);
	loop_commit_message(NULL, NULL, "big", -5, &sb);
	assert_string_equal(sb.buf, "perf: (unnamed): faster (big -5.0%)");
	strbuf_release(&sb);

	assert_true(loop_no_candidate("thinking...\n  NO CANDIDATE  \n"));
	assert_true(loop_no_candidate("NO CANDIDATE"));
	assert_true(loop_no_candidate("x\r\nNO CANDIDATE\r\n"));
	assert_false(loop_no_candidate("there is NO CANDIDATE here\n"));
	assert_false(loop_no_candidate("no candidate\n"));
	assert_false(loop_no_candidate(""));
}

/* ---- the engine ---------------------------------------------------------- */

struct seen {
	size_t kinds[EV_PROFILED + 1];
	enum event_kind order[64];
	size_t nr;
};

static void count(const struct event *ev, void *data)
{
	struct seen *s = data;

	s->kinds[ev->kind]++;
	if (ev->kind != EV_NOTE && ev->kind != EV_PROGRESS && ev->kind != EV_PAIR &&
	    ev->kind != EV_STAGE && s->nr < ARRAY_SIZE(s->order))
		s->order[s->nr++] = ev->kind;
}

struct fixture {
	char *dir, *agents;
	struct project p;
	char *head, *status;	/* the user's HEAD and git status before */
};

/* The user's tree as git sees it, kb/ aside (the one place the loop writes in it). */
static char *user_status(const char *dir)
{
	struct strbuf out = STRBUF_INIT;

	if (git_run(dir, &out, "read the status", "status", "--porcelain", "--", ".", ":!kb", NULL))
		fail_msg("git status failed");
	return strbuf_detach(&out, NULL);
}

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	char *conf;

	f->dir = tp_make(NULL);
	/* the user's work in progress, which the loop must leave alone */
	tp_sh(f->dir, "echo 'work in progress' >notes.txt && echo '// local edit' >>spin.c");
	conf = xstrfmt("%s/hotloop.conf", f->dir);
	if (project_open(&f->p, conf, PROJECT_NEED_GIT))
		fail_msg("cannot open the project");
	free(conf);
	f->head = git_rev_parse(f->dir, "HEAD");
	f->status = user_status(f->dir);
	{
		char tmpl[] = "/tmp/hotloop-t-loop-agents-XXXXXX";

		if (!mkdtemp(tmpl))
			fail_msg("cannot make a directory");
		f->agents = xstrdup(tmpl);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char *head = git_rev_parse(f->dir, "HEAD"), *status = user_status(f->dir);

	/* whatever the loop did, the user's HEAD, index and files are as they were */
	assert_string_equal(head, f->head);
	assert_string_equal(status, f->status);
	free(head);
	free(status);
	project_release(&f->p);
	free(f->head);
	free(f->status);
	tp_remove(f->dir);
	tp_remove(f->agents);
	free(f);
	return 0;
}

/* An agent: a shell script in the fixture, reading its prompt first. */
static char *agent(struct fixture *f, const char *name, const char *body)
{
	char *file = xstrfmt("agent-%s", name), *text = xstrfmt("#!/bin/sh\ncat >/dev/null\n%s\n", body);

	tp_write(f->agents, file, text);
	tp_sh(f->agents, "chmod +x %s", file);
	free(text);
	free(file);
	return xstrfmt("%s/agent-%s", f->agents, name);
}

static void run_loop(struct fixture *f, const char *cmd, long rounds, struct loop_result *r,
		     struct seen *seen)
{
	struct observer o = { count, seen, NULL };
	struct loop_spec s = { .project = &f->p, .agent = cmd, .rounds = rounds, .parallel = 1 };

	s.sampler.freq = SAMPLER_DEFAULT_FREQ;
	s.obs = &o;
	memset(seen, 0, sizeof(*seen));
	loop_result_init(r);
	if (loop_run(&s, r))
		fail_msg("loop_run: %s", last_error());
}

static void test_loop__rejects_at_each_stage(void **state)
{
	static const struct {
		const char *name, *body;
		enum gate_stage stage;
		enum verdict_kind verdict;
		const char *reason;
	} cases[] = {
		{ "idle", "true", GATE_STAGE_DIFF, VERDICT_REJECT, "the agent changed nothing" },
		{ "protected", "echo '# cheat' >>tests/run", GATE_STAGE_PROTECTED, VERDICT_REJECT,
		  "protected path 'tests/run'" },
		{ "fails", "exit 3", GATE_STAGE_AGENT, VERDICT_ERROR, "exit status 3" },
		{ "cold", "sed -i 's/done %lu/done %lu!/' spin.c", GATE_STAGE_TARGET, VERDICT_REJECT,
		  "target: changed only main" },
		{ "breaks", "sed -i -e 's/done %lu/done %lu!/' -e 's/x = 1;/x = 1; \\/\\* seed \\*\\//' spin.c",
		  GATE_STAGE_TEST, VERDICT_REJECT, "tests failed" },
		{ "slower", "sed -i 's/i < n;/i < 3 * n;/' spin.c", GATE_STAGE_COMPARE, VERDICT_REJECT,
		  "primary 'main' regressed" },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *cmd = agent(f, cases[i].name, cases[i].body);
		struct loop_result r;
		struct seen seen;
		const struct attempt *a;

		run_loop(f, cmd, 1, &r, &seen);
		assert_int_equal(r.nr_attempts, 1);
		a = &r.attempts[0];
		if (a->stage != cases[i].stage || a->verdict != cases[i].verdict)
			fail_msg("%s: decided at %s as %s", cases[i].name, gate_stage_name(a->stage),
				 verdict_kind_name(a->verdict));
		assert_true(a->nr_reasons >= 1);
		if (!strstr(a->reasons[0], cases[i].reason))
			fail_msg("%s: reason '%s'", cases[i].name, a->reasons[0]);
		assert_int_equal(r.kept, 0);
		assert_null(a->commit);
		assert_non_null(a->kb_slug);
		assert_int_equal(r.rejected_by[cases[i].stage], 1);
		assert_true(r.finished);
		assert_string_equal(r.stop_reason, "all rounds done");
		assert_string_equal(r.start, r.best);
		assert_false(r.have_total);
		assert_int_equal(a->measured, cases[i].stage == GATE_STAGE_COMPARE);
		/* the events of one round, in order */
		assert_int_equal(seen.nr, 7);
		assert_int_equal(seen.order[0], EV_LOOP_STARTED);
		assert_int_equal(seen.order[1], EV_PROFILED);
		assert_int_equal(seen.order[2], EV_ROUND_STARTED);
		assert_int_equal(seen.order[3], EV_AGENT_FINISHED);
		assert_int_equal(seen.order[4], EV_VERDICT);
		assert_int_equal(seen.order[5], EV_ATTEMPT);
		assert_int_equal(seen.order[6], EV_LOOP_ENDED);
		assert_int_equal(seen.kinds[EV_KEPT], 0);
		loop_result_release(&r);
		free(cmd);
	}
}

static void test_loop__no_candidate_stops(void **state)
{
	struct fixture *f = *state;
	char *cmd = agent(f, "nothing", "echo NO CANDIDATE");
	struct loop_result r;
	struct seen seen;

	run_loop(f, cmd, 3, &r, &seen);
	assert_int_equal(r.rounds, 1);
	assert_string_equal(r.stop_reason, "the agent said NO CANDIDATE");
	assert_false(r.finished);
	assert_int_equal(r.attempts[0].verdict, VERDICT_NO_CANDIDATE);
	assert_int_equal(r.attempts[0].stage, GATE_STAGE_AGENT);
	loop_result_release(&r);
	free(cmd);
}

static void test_loop__a_keep_is_committed_and_the_prompt_has_the_growth(void **state)
{
	struct fixture *f = *state;
	char *cmd = agent(f, "good",
			  "sed -i 's/i < n;/i < n \\/ 3;/' spin.c\n"
			  "echo '{\"function\": \"spin\", \"title\": \"a third of the loop\", "
			  "\"expected_gain_pct\": 66}' >\"$HOTLOOP_PROPOSAL\"");
	char *scale = xstrfmt("%s/.hotloop/scale", f->dir), *tip, *prompt;
	struct strbuf sb = STRBUF_INIT;
	struct loop_result r;
	struct seen seen;
	const struct attempt *a;
	json_t *doc;

	/* what `hotloop scale main` would have saved */
	tp_sh(f->dir, "mkdir -p %s", scale);
	tp_write(scale, "main.json", "{\"functions\": [{\"function\": \"spin\", \"fitted\": true, "
		 "\"exponent\": 2.0, \"r2\": 0.99}]}\n");
	run_loop(f, cmd, 1, &r, &seen);
	assert_int_equal(r.kept, 1);
	a = &r.attempts[0];
	assert_int_equal(a->verdict, VERDICT_KEEP);
	assert_int_equal(a->stage, GATE_STAGE_COMPARE);
	assert_true(a->have_change && a->change_pct < -30);
	assert_true(a->have_prop);
	assert_string_equal(a->prop.function, "spin");
	assert_non_null(a->commit);
	assert_string_equal(r.best, a->commit);
	assert_string_not_equal(r.start, r.best);
	/* on the branch, with its message */
	tip = git_rev_parse(f->dir, r.branch);
	assert_string_equal(tip, a->commit);
	{
		struct strbuf out = STRBUF_INIT;

		assert_int_equal(git_run(f->dir, &out, "read the commit", "log", "-1", "--format=%s", r.branch, NULL), 0);
		assert_non_null(strstr(out.buf, "perf: spin: a third of the loop (main -"));
		strbuf_release(&out);
	}
	assert_int_equal(seen.kinds[EV_KEPT], 1);
	/* the whole gain, measured afresh */
	assert_true(r.have_total);
	assert_true(r.total.v.primary.change_pct < -30);
	/* the prompt carried the growth the scale run saved */
	prompt = xstrfmt("%s/prompt.md", a->dir);
	assert_true(read_file(&sb, prompt, 1 << 20) >= 0);
	assert_non_null(strstr(sb.buf, "growth: ~n^2.00"));
	assert_non_null(strstr(sb.buf, "superlinear"));
	/* the summary document */
	doc = loop_result_to_json(&r);
	assert_int_equal(json_integer_value(json_object_get(doc, "kept")), 1);
	assert_string_equal(json_string_value(json_object_get(doc, "best_commit")), a->commit);
	assert_true(json_number_value(json_object_get(json_object_get(doc, "total"), "change_pct")) < -30);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "attempts"), 0),
							       "verdict")), "keep");
	json_decref(doc);
	strbuf_release(&sb);
	free(prompt);
	free(tip);
	free(scale);
	loop_result_release(&r);
	free(cmd);
}

static bool perf_events_allowed(void)
{
	char *argv[] = { "true", NULL };
	char path[] = "/tmp/t-loop-probe.XXXXXX";
	struct record_options o = { .argv = argv, .output = path, .discard_stdout = true };
	struct record_result res;
	report_fn old = set_error_routine(NULL);
	int fd = mkstemp(path), ret;

	if (fd >= 0)
		close(fd);
	o.sampler.freq = SAMPLER_DEFAULT_FREQ;
	ret = record_run(&o, &res);
	set_error_routine(old);
	unlink(path);
	return ret != -HL_EXIT_NOT_PERMITTED;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop__render),
		cmocka_unit_test(test_loop__proposal),
		cmocka_unit_test(test_loop__protected),
		cmocka_unit_test(test_loop__commit_message_and_no_candidate),
	};
	const struct CMUnitTest engine[] = {
		cmocka_unit_test_setup_teardown(test_loop__rejects_at_each_stage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop__no_candidate_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop__a_keep_is_committed_and_the_prompt_has_the_growth,
						setup, teardown),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	if (!tp_can_build())
		printf("skip t-loop: the engine tests need cc and git\n");
	else if (!perf_events_allowed())
		printf("skip t-loop: the engine tests profile each round: perf events are not permitted here\n");
	else
		ret |= cmocka_run_group_tests(engine, NULL, NULL);
	return ret;
}
