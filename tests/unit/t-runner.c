/*
 * t-runner.c: unit tests for runner.c (stdout hashing and parsing, the run
 * environment, quoting, callgrind totals, real runs through the launcher,
 * including peak RSS measured from a large parent), summary.c and the
 * quiesce parsers.
 */
#include "test-helpers.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "strbuf.h"
#include "intern.h"
#include "runner.h"
#include "sandbox.h"
#include "test-process.h"
#include "quiesce.h"

static char self_exe[4096];

static void test_runner__parse_fingerprints_and_metrics(void **state)
{
	static const char out[] =
		"hello\n"
		"FINGERPRINT=abc 123\n"
		"HOTLOOP_METRIC events_per_s=1.5e3\n"
		"HOTLOOP_METRIC  latency.p99 = 12 \n"
		"HOTLOOP_METRIC bad\n"
		"HOTLOOP_METRIC x=12abc\n"
		"HOTLOOP_METRIC =3\n"
		"HOTLOOP_METRIC y=nan\n"
		"not FINGERPRINT=x\n"
		"FINGERPRINT=\r\n"
		"FINGERPRINT=last";
	struct run_result r;

	run_result_init(&r);
	/* byte by byte: lines split across reads must parse the same */
	for (size_t i = 0; i < sizeof(out) - 1; i++)
		run_result_feed(&r, out + i, 1);
	run_result_feed_end(&r);
	assert_int_equal(r.nr_fingerprints, 3);
	assert_string_equal(r.fingerprints[0], "abc 123");
	assert_string_equal(r.fingerprints[1], "");
	assert_string_equal(r.fingerprints[2], "last");
	assert_int_equal(r.nr_metrics, 1);
	assert_string_equal(r.metrics[0].name, "events_per_s");
	assert_true(r.metrics[0].value == 1500.0);
	assert_int_equal(r.bad_lines, 5);
	assert_int_equal(r.stdout_bytes, sizeof(out) - 1);
	assert_int_equal(r.stdout_hash, hash_bytes(HASH_SEED, out, sizeof(out) - 1));
	run_result_release(&r);
}

static void test_runner__hash_whole_stdout_keep_cap(void **state)
{
	struct run_result r;
	char *big = xmalloc(RUNNER_STDOUT_CAP * 3);
	uint64_t h;

	memset(big, 'x', RUNNER_STDOUT_CAP * 3);
	big[RUNNER_STDOUT_CAP * 3 - 1] = 'y';
	h = hash_bytes(HASH_SEED, big, RUNNER_STDOUT_CAP * 3);
	run_result_init(&r);
	run_result_feed(&r, big, RUNNER_STDOUT_CAP * 2);
	run_result_feed(&r, big + RUNNER_STDOUT_CAP * 2, RUNNER_STDOUT_CAP);
	/* a long line without FINGERPRINT= after it still parses the next line */
	run_result_feed(&r, "\nFINGERPRINT=ok\n", 16);
	run_result_feed_end(&r);
	assert_int_equal(r.out.len, RUNNER_STDOUT_CAP);
	assert_int_equal(r.stdout_bytes, RUNNER_STDOUT_CAP * 3 + 16);
	assert_int_not_equal(r.stdout_hash, h);
	assert_int_equal(r.stdout_hash, hash_bytes(h, "\nFINGERPRINT=ok\n", 16));
	assert_int_equal(r.nr_fingerprints, 1);
	assert_string_equal(r.fingerprints[0], "ok");
	run_result_release(&r);
	free(big);
}

static void test_runner__env_is_fixed(void **state)
{
	const char *extra[] = { "FOO=1", "LANG=en_US.UTF-8", "bad", "=x", "FOO=2", NULL };
	char **env;
	size_t n;

	setenv("SECRET_FROM_PARENT", "1", 1);
	setenv("PATH", "/a:/b", 1);
	env = runner_build_env(extra);
	for (n = 0; env[n]; n++)
		assert_null(strstr(env[n], "SECRET_FROM_PARENT"));
	assert_string_equal(env[0], "PATH=/a:/b");
	assert_string_equal(env[n - 1], "FOO=2");
	for (size_t i = 0; env[i]; i++)
		if (!strncmp(env[i], "LANG=", 5))
			assert_string_equal(env[i], "LANG=en_US.UTF-8");
	runner_free_env(env);
	unsetenv("SECRET_FROM_PARENT");
	env = runner_build_env(NULL);
	assert_string_equal(env[0], "PATH=/a:/b");
	assert_string_equal(env[getenv("HOME") ? 2 : 1], "LANG=C");
	runner_free_env(env);
	setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
}

static void test_runner__quote_argv(void **state)
{
	const char *argv[] = { "/bin/echo", "a b", "it's", "", "x=1,y", "{n}" };
	struct strbuf sb = STRBUF_INIT;

	runner_quote_argv(&sb, argv, ARRAY_SIZE(argv));
	assert_string_equal(sb.buf, "/bin/echo 'a b' 'it'\\''s' '' x=1,y {n}");
	strbuf_release(&sb);
}

static void test_runner__callgrind_totals(void **state)
{
	int64_t v = 0;

	assert_int_equal(runner_parse_callgrind("events: Ir\nfn=main\n3 4\nsummary: 123456\ntotals: 1\n", &v), 0);
	assert_int_equal(v, 123456);
	assert_int_equal(runner_parse_callgrind("events: Ir\ntotals: 77\n", &v), 0);
	assert_int_equal(v, 77);
	assert_int_equal(runner_parse_callgrind("events: Ir\n", &v), -1);
	assert_int_equal(runner_parse_callgrind("summary: -5\n", &v), -1);
	assert_int_equal(runner_parse_callgrind("summary: x\n", &v), -1);
}

static void test_quiesce__parsers(void **state)
{
	static const char stat[] =
		"cpu  10 0 20 60 5 0 1 4 0 0\n"
		"cpu0 1 0 1 3 1 0 1 1 0 0\n"
		"cpu1 20 0 5 5 3 0 0 3 0 0\n"
		"intr 1 2 3\n";
	double d;
	struct quiesce_times t;

	assert_int_equal(quiesce_parse_loadavg("0.17 0.75 1.26 1/85 2362\n", &d), 0);
	assert_true(d == 0.17);
	assert_int_equal(quiesce_parse_loadavg("x", &d), -1);
	assert_int_equal(quiesce_parse_psi("some avg10=12.50 avg60=0.59 avg300=1.40 total=8\n"
					   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &d), 0);
	assert_true(d == 12.5);
	assert_int_equal(quiesce_parse_psi("full avg10=1\n", &d), -1);
	assert_int_equal(quiesce_parse_stat(stat, -1, &t), 0);
	assert_int_equal(t.total, 100);
	assert_int_equal(t.idle, 65);
	assert_int_equal(t.steal, 4);
	assert_int_equal(quiesce_parse_stat(stat, 1, &t), 0);
	assert_int_equal(t.total, 36);
	assert_int_equal(t.idle, 8);
	assert_int_equal(t.steal, 3);
	assert_int_equal(quiesce_parse_stat(stat, 0, &t), 0);
	assert_int_equal(t.total, 8);
	assert_int_equal(quiesce_parse_stat(stat, 2, &t), -1);
	assert_int_equal(quiesce_parse_stat(stat, 11, &t), -1);
	assert_int_equal(quiesce_parse_stat("cpu  1 2\n", -1, &t), -1);
	assert_int_equal(quiesce_parse_stat("cpu0 1 2 3 4 5 6 7 8x\n", 0, &t), -1);
	assert_int_equal(quiesce_parse_stat("intr 1 2 3 4 5 6 7 8\n", -1, &t), -1);
}

static int run_once(const char *cmd, double timeout, struct run_result *r)
{
	struct runner rn;
	struct run_spec spec = { 0 };
	int ret;

	spec.command = cmd;
	spec.timeout = timeout;
	if (runner_start(&rn, NULL))
		return -1;
	ret = runner_run(&rn, &spec, r);
	runner_stop(&rn);
	return ret;
}

static void test_runner__run_status_and_output(void **state)
{
	struct run_result r;
	const char *env[] = { "HL_TEST=7", NULL };
	struct runner rn;
	struct run_spec spec = { 0 };

	run_result_init(&r);
	assert_int_equal(run_once("echo FINGERPRINT=$LANG; exit 3", 0, &r), 0);
	assert_int_equal(r.exit_status, 3);
	assert_int_equal(r.signal, 0);
	assert_int_equal(r.nr_fingerprints, 1);
	assert_string_equal(r.fingerprints[0], "C");
	assert_false(r.timed_out);

	assert_int_equal(run_once("kill -SEGV $$", 0, &r), 0);
	assert_int_equal(r.signal, SIGSEGV);
	assert_int_equal(r.exit_status, 128 + SIGSEGV);

	/* the timeout kills the whole process group, background jobs too */
	assert_int_equal(run_once("sleep 30 & exec sleep 30", 0.2, &r), 0);
	assert_true(r.timed_out);
	assert_int_equal(r.signal, SIGKILL);

	/* one launcher, several runs, an extra variable, a directory */
	assert_int_equal(runner_start(&rn, NULL), 0);
	spec.command = "echo \"FINGERPRINT=$HL_TEST $(pwd)\"";
	spec.env = env;
	spec.dir = "/";
	for (int i = 0; i < 3; i++) {
		assert_int_equal(runner_run(&rn, &spec, &r), 0);
		assert_int_equal(r.exit_status, 0);
		assert_string_equal(r.fingerprints[0], "7 /");
	}
	spec.dir = "/nonexistent-dir";
	assert_int_equal(runner_run(&rn, &spec, &r), -1);
	runner_stop(&rn);
	run_result_release(&r);
}

/*
 * The point of the launcher: a parent that touched 200 MiB measures a run
 * that touches 10 MiB as ~10 MiB, not 200.
 */
static void test_runner__peak_rss_not_inherited(void **state)
{
	size_t big = 200u << 20;
	char *p = xmalloc(big), *cmd;
	struct run_result r;
	struct runner rn;
	struct run_spec spec = { 0 };

	memset(p, 1, big);
	assert_int_equal(runner_start(&rn, NULL), 0);
	cmd = xstrfmt("exec '%s' --alloc-mib 10", self_exe);
	spec.command = cmd;
	run_result_init(&r);
	assert_int_equal(runner_run(&rn, &spec, &r), 0);
	assert_int_equal(r.exit_status, 0);
	assert_true(r.max_rss_kib > 10 * 1024);
	assert_true(r.max_rss_kib < 40 * 1024);
	run_result_release(&r);
	runner_stop(&rn);
	free(cmd);
	assert_int_equal(p[big - 1], 1);
	free(p);
}

/*
 * In a sandbox: a run writes only where it may, its temporary files go to
 * the sandbox's own directory, and what it leaves running, even in a
 * session of its own, is gone when its result comes back.
 */
static void test_runner__sandboxed(void **state)
{
	char dir[] = "/tmp/t-runner-sb.XXXXXX", tmp[] = "/tmp/t-runner-sbtmp.XXXXXX";
	const char *writable[] = { dir, NULL };
	struct sandbox sb = { .writable = writable, .tmp = tmp };
	char *cmd, *outside, *inside, *marker = xstrfmt("sleep 30.%ld", (long)getpid());
	struct runner rn = RUNNER_INIT;
	struct run_spec spec = { 0 };
	struct run_result r;

	if (sandbox_unavailable()) {
		print_message("skip sandboxed runs: %s\n", sandbox_unavailable());
		free(marker);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(tmp));
	outside = xstrfmt("%s-outside", dir);
	inside = xstrfmt("%s/in", dir);
	cmd = xstrfmt("echo ok >in && echo FINGERPRINT=$TMPDIR; { echo no >%s; } 2>/dev/null; "
		      "setsid %s </dev/null >/dev/null 2>&1 & exit 0", outside, marker);
	run_result_init(&r);
	assert_int_equal(runner_start(&rn, &sb), 0);
	spec.command = cmd;
	spec.dir = dir;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(runner_run(&rn, &spec, &r), 0);
		assert_int_equal(r.exit_status, 0);
		assert_string_equal(r.fingerprints[0], tmp);
		assert_int_equal(access(inside, F_OK), 0);
		assert_int_equal(access(outside, F_OK), -1);
		assert_false(marker_running(marker));
	}
	/* the timeout still kills the run */
	spec.command = "exec sleep 30";
	spec.timeout = 0.2;
	assert_int_equal(runner_run(&rn, &spec, &r), 0);
	assert_true(r.timed_out);
	runner_stop(&rn);
	run_result_release(&r);
	unlink(inside);
	rmdir(dir);
	rmdir(tmp);
	free(inside);
	free(outside);
	free(cmd);
	free(marker);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runner__parse_fingerprints_and_metrics),
		cmocka_unit_test(test_runner__hash_whole_stdout_keep_cap),
		cmocka_unit_test(test_runner__env_is_fixed),
		cmocka_unit_test(test_runner__quote_argv),
		cmocka_unit_test(test_runner__callgrind_totals),
		cmocka_unit_test(test_quiesce__parsers),
		cmocka_unit_test(test_runner__run_status_and_output),
		cmocka_unit_test(test_runner__peak_rss_not_inherited),
		cmocka_unit_test(test_runner__sandboxed),
	};
	ssize_t n;

	/* the workload of the peak RSS test: touch N MiB and exit */
	if (argc == 3 && !strcmp(argv[1], "--alloc-mib")) {
		size_t sz = (size_t)atol(argv[2]) << 20;
		volatile char *q = malloc(sz);

		int ret = q ? 0 : 1;

		for (size_t i = 0; q && i < sz; i += 4096)
			q[i] = 1;
		free((void *)q);
		return ret;
	}
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n < 0)
		return 1;
	self_exe[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
