/*
 * t-schedule.c: unit tests for schedule.c: periods parsed and printed, the
 * systemd units and the crontab line of a job (calendar or monotonic
 * timers, quoting for systemd and for cron's '%'), periods cron cannot
 * run, and telling the job's crontab line from the user's others.
 */
#include <string.h>

#include "test-helpers.h"
#include "schedule.h"
#include "strbuf.h"

static struct strbuf errors = STRBUF_INIT;

static void keep_error(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static void test_schedule__periods(void **state)
{
	static const struct { const char *in; long want; const char *err; } cases[] = {
		{ "30s", 30, NULL }, { "10m", 600, NULL }, { "24h", 86400, NULL }, { "1d", 86400, NULL },
		{ "366d", 366L * 86400, NULL }, { "1s", 1, NULL }, { "90m", 5400, NULL },
		{ "", 0, "expected a whole number and a unit" }, { "10", 0, "expected a whole number and a unit" },
		{ "m", 0, "expected a whole number and a unit" }, { "0s", 0, "from 1s to 366d" },
		{ "367d", 0, "from 1s to 366d" }, { "99999999999999999999s", 0, "from 1s to 366d" },
		{ "5x", 0, "the unit is s, m, h or d" }, { "1.5h", 0, "expected a whole number" },
		{ "-1h", 0, "expected a whole number" }, { "1hh", 0, "expected a whole number" },
		{ " 1h", 0, "expected a whole number" }, { "1 h", 0, "expected a whole number" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		long v = -1;
		int ret;

		strbuf_setlen(&errors, 0);
		ret = schedule_parse_period(cases[i].in, &v);
		if (cases[i].err) {
			assert_int_equal(ret, -1);
			if (!strstr(errors.buf, cases[i].err))
				fail_msg("'%s': got '%s'", cases[i].in, errors.buf);
		} else {
			assert_int_equal(ret, 0);
			assert_int_equal(v, cases[i].want);
		}
	}
}

static void test_schedule__format(void **state)
{
	static const struct { long s; const char *want; } cases[] = {
		{ 86400, "1d" }, { 172800, "2d" }, { 3600, "1h" }, { 5400, "90m" }, { 90, "90s" }, { 600, "10m" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;

		schedule_format_period(cases[i].s, &sb);
		assert_string_equal(sb.buf, cases[i].want);
		strbuf_release(&sb);
	}
}

static const struct schedule_job job = {
	.id = "hotloop-wf-0123abcd", .hotloop = "/usr/bin/hotloop", .conf = "/home/me/w f/hotloop.conf",
	.dir = "/home/me/w f", .agent = "claude -p \"$X 100%\"", .rounds = 3, .path_env = "/usr/bin:/bin",
	.log = "/home/me/w f/.hotloop/schedule.log", .period_s = 86400,
};

static void test_schedule__systemd(void **state)
{
	static const struct { long period; const char *want, *not; } cases[] = {
		{ 86400, "OnCalendar=*-*-* 00:00:00\nPersistent=true\n", "OnUnitActiveSec" },
		{ 6 * 3600, "OnCalendar=*-*-* 0/6:00:00\nPersistent=true\n", "AccuracySec" },
		{ 600, "OnCalendar=*:0/10:00\nPersistent=true\n", "AccuracySec" },
		{ 30, "OnCalendar=*:*:0/30\nPersistent=true\nAccuracySec=1s\n", "OnUnitActiveSec" },
		{ 420, "OnActiveSec=420\nOnUnitActiveSec=420\nAccuracySec=1s\n", "Persistent" },
		{ 2 * 86400, "OnActiveSec=172800\nOnUnitActiveSec=172800\n", "OnCalendar" },
		{ 7 * 3600, "OnActiveSec=25200\n", "OnCalendar" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf service = STRBUF_INIT, timer = STRBUF_INIT;
		struct schedule_job j = job;

		j.period_s = cases[i].period;
		schedule_systemd_units(&j, &service, &timer);
		if (!strstr(timer.buf, cases[i].want) || strstr(timer.buf, cases[i].not))
			fail_msg("period %ld: timer\n%s", cases[i].period, timer.buf);
		assert_non_null(strstr(timer.buf, "Unit=hotloop-wf-0123abcd.service\n"));
		assert_non_null(strstr(timer.buf, "[Install]\nWantedBy=timers.target\n"));
		/* one batch: the timer does the waiting */
		assert_non_null(strstr(service.buf, "Type=oneshot\nWorkingDirectory=/home/me/w f\n"));
		assert_non_null(strstr(service.buf, "Environment=\"PATH=/usr/bin:/bin\"\n"));
		assert_non_null(strstr(service.buf,
			"ExecStart=\"/usr/bin/hotloop\" \"loop\" \"-f\" \"/home/me/w f/hotloop.conf\" \"--agent\" "
			"\"claude -p \\\"$$X 100%%\\\"\" \"--rounds\" \"3\"\n"));
		assert_null(strstr(service.buf, "--every"));
		strbuf_release(&service);
		strbuf_release(&timer);
	}
}

static void test_schedule__cron(void **state)
{
	static const struct { long period; const char *want; } cases[] = {
		{ 60, "* * * * * " }, { 300, "*/5 * * * * " }, { 1800, "*/30 * * * * " }, { 3600, "0 * * * * " },
		{ 6 * 3600, "0 */6 * * * " }, { 86400, "0 0 * * * " }, { 2 * 86400, "0 0 */2 * * " },
		{ 30, NULL }, { 90, NULL }, { 420, NULL }, { 7 * 3600, NULL }, { 32 * 86400, NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf line = STRBUF_INIT;
		struct schedule_job j = job;
		int ret;

		j.period_s = cases[i].period;
		strbuf_setlen(&errors, 0);
		ret = schedule_cron_line(&j, &line);
		if (!cases[i].want) {
			assert_int_equal(ret, -1);
			assert_non_null(strstr(errors.buf, "cron cannot run every"));
			strbuf_release(&line);
			continue;
		}
		assert_int_equal(ret, 0);
		if (strncmp(line.buf, cases[i].want, strlen(cases[i].want)))
			fail_msg("period %ld: '%s'", cases[i].period, line.buf);
		assert_null(strchr(line.buf, '\n'));
		assert_true(schedule_cron_line_is(line.buf, j.id));
		assert_false(schedule_cron_line_is(line.buf, "hotloop-wf-0123abc"));
		strbuf_release(&line);
	}
}

static void test_schedule__cron_quoting(void **state)
{
	struct strbuf line = STRBUF_INIT;

	assert_int_equal(schedule_cron_line(&job, &line), 0);
	assert_string_equal(line.buf,
		"0 0 * * * cd '/home/me/w f' && PATH=/usr/bin:/bin /usr/bin/hotloop loop -f '/home/me/w f/hotloop.conf' "
		"--agent 'claude -p \"$X 100\\%\"' --rounds 3 >>'/home/me/w f/.hotloop/schedule.log' 2>&1 "
		"# hotloop-wf-0123abcd every 1d");
	strbuf_release(&line);
}

static void test_schedule__cron_line_is(void **state)
{
	static const struct { const char *line; bool want; } cases[] = {
		{ "0 0 * * * x # hotloop-a-1 every 1d", true },
		{ "0 0 * * * x # hotloop-a-1 every 5m", true },
		{ "0 0 * * * x # hotloop-a-12 every 1d", false },
		{ "0 0 * * * x # hotloop-a-1", false },
		{ "# hotloop-a-1 every 1d", false },
		{ "0 5 * * * echo hi", false },
		{ "", false },
		/* a mark in the agent's own text is not the last one */
		{ "0 0 * * * x --agent 'a # hotloop-a-1 every 1d' # hotloop-b-2 every 1d", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (schedule_cron_line_is(cases[i].line, "hotloop-a-1") != cases[i].want)
			fail_msg("'%s'", cases[i].line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule__periods),
		cmocka_unit_test(test_schedule__format),
		cmocka_unit_test(test_schedule__systemd),
		cmocka_unit_test(test_schedule__cron),
		cmocka_unit_test(test_schedule__cron_quoting),
		cmocka_unit_test(test_schedule__cron_line_is),
	};
	int ret;

	set_error_routine(keep_error);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	strbuf_release(&errors);
	return ret;
}
