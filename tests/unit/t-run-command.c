/*
 * t-run-command.c: unit tests for run-command.c and git.c: output and its
 * tail, exit status, working directory, input, environment, a file for the
 * output, timeouts and cancellation killing the whole process group, a
 * grandchild holding the pipe, several children at once, what cannot be
 * started, a guard that ends as its command did and kills what it leaves,
 * even when hotloop is killed with SIGKILL.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-helpers.h"
#include "git.h"
#include "run-command.h"
#include "sandbox.h"
#include "test-process.h"
#include "strbuf.h"

static void tp_sh_rm(const char *dir)
{
	char *cmd = xstrfmt("rm -rf '%s'", dir);

	if (system(cmd))
		fail_msg("cannot remove %s", dir);
	free(cmd);
}

static void test_run_command__tail(void **state)
{
	static const struct {
		const char *out;
		int n;
		const char *want;
	} cases[] = {
		{ "", 3, "" },
		{ "one\n", 3, "\n    one" },
		{ "one\ntwo\nthree\n", 2, "\n    two\n    three" },
		{ "one\ntwo\nthree", 2, "\n    two\n    three" },
		{ "one\ntwo\n\n\n", 5, "\n    one\n    two" },
		{ "a\n\nb\n", 2, "\n    \n    b" },
		{ "x\ny\n", 0, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf out = STRBUF_INIT, sb = STRBUF_INIT;

		strbuf_addstr(&out, cases[i].out);
		output_tail(&out, cases[i].n, &sb);
		assert_string_equal(sb.buf, cases[i].want);
		strbuf_release(&out);
		strbuf_release(&sb);
	}
}

static void test_run_command__shell_status_dir_output(void **state)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	struct strbuf sb = STRBUF_INIT;

	cp.shell = "pwd; echo err >&2; exit 3";
	cp.dir = "/";
	assert_int_equal(run_command(&cp), 0);
	assert_true(WIFEXITED(cp.status));
	assert_int_equal(WEXITSTATUS(cp.status), 3);
	assert_false(cp.timed_out);
	assert_false(child_succeeded(&cp));
	assert_string_equal(cp.out.buf, "/\nerr\n");
	child_describe(&cp, &sb);
	assert_string_equal(sb.buf, "exit status 3");
	child_process_release(&cp);
	strbuf_release(&sb);
}

static void test_run_command__argv_env_input(void **state)
{
	static const char *argv[] = { "sh", "-c", "cat; echo \"$HL_TEST_VAR\"", NULL };
	static const char *env[] = { "HL_TEST_VAR=from env", NULL };
	char in[] = "/tmp/t-run-command-in.XXXXXX";
	struct child_process cp = CHILD_PROCESS_INIT;
	int fd = mkstemp(in);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "input\n", 6), 6);
	close(fd);
	cp.argv = argv;
	cp.env = env;
	cp.in = in;
	assert_int_equal(run_command(&cp), 0);
	assert_true(child_succeeded(&cp));
	assert_string_equal(cp.out.buf, "input\nfrom env\n");
	assert_null(getenv("HL_TEST_VAR"));
	child_process_release(&cp);
	unlink(in);
}

static void test_run_command__out_file(void **state)
{
	char path[] = "/tmp/t-run-command-out.XXXXXX";
	struct child_process cp = CHILD_PROCESS_INIT;
	struct strbuf sb = STRBUF_INIT;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	cp.shell = "echo to the file; echo and its errors >&2";
	cp.out_file = path;
	assert_int_equal(run_command(&cp), 0);
	assert_true(child_succeeded(&cp));
	assert_int_equal(cp.out.len, 0);
	assert_true(read_file(&sb, path, 4096) >= 0);
	assert_string_equal(sb.buf, "to the file\nand its errors\n");
	child_process_release(&cp);
	strbuf_release(&sb);
	unlink(path);
}

/* Is the process whose pid 'file' holds still running (not gone, not a zombie)? */
static bool pid_in_file_alive(const char *file)
{
	struct strbuf sb = STRBUF_INIT;
	char path[64], stat[512], *p;
	long pid = 0;

	if (read_file(&sb, file, 64) >= 0)
		pid = atol(sb.buf);
	strbuf_release(&sb);
	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (read_small_file(path, stat, sizeof(stat)) < 0)
		return false;
	p = strrchr(stat, ')');
	return p && p[1] && p[2] != 'Z' && p[2] != 'X';
}

static void test_run_command__timeout_kills_the_group(void **state)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	struct strbuf sb = STRBUF_INIT;
	char *pidfile = xstrfmt("/tmp/t-run-command-pid.%ld", (long)getpid());
	char *cmd = xstrfmt("sleep 30 & echo $! >%s; wait", pidfile);
	uint64_t t0 = now_ns();

	cp.shell = cmd;
	cp.timeout = 0.3;
	assert_int_equal(run_command(&cp), 0);
	assert_true(cp.timed_out);
	assert_true(WIFSIGNALED(cp.status));
	assert_true(now_ns() - t0 < 10000000000ull);
	child_describe(&cp, &sb);
	assert_string_equal(sb.buf, "timed out after 0.3 s");
	/* the grandchild went with its group */
	for (int i = 0; i < 100 && pid_in_file_alive(pidfile); i++)
		usleep(10000);
	assert_false(pid_in_file_alive(pidfile));
	child_process_release(&cp);
	strbuf_release(&sb);
	unlink(pidfile);
	free(pidfile);
	free(cmd);
}

static void test_run_command__grandchild_holding_the_pipe(void **state)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	uint64_t t0 = now_ns();

	/* a daemon in a session of its own keeps stdout open long after the child */
	cp.shell = "echo started; setsid sleep 30 & exit 0";
	assert_int_equal(run_command(&cp), 0);
	assert_true(child_succeeded(&cp));
	assert_string_equal(cp.out.buf, "started\n");
	assert_true(now_ns() - t0 < 10000000000ull);
	child_process_release(&cp);
}

static void test_run_command__kill_leftovers(void **state)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	char *pidfile = xstrfmt("/tmp/t-run-command-left.%ld", (long)getpid());
	char *cmd = xstrfmt("sleep 30 >/dev/null 2>&1 & echo $! >%s", pidfile);

	cp.shell = cmd;
	cp.kill_leftovers = true;
	assert_int_equal(run_command(&cp), 0);
	assert_true(child_succeeded(&cp));
	for (int i = 0; i < 100 && pid_in_file_alive(pidfile); i++)
		usleep(10000);
	assert_false(pid_in_file_alive(pidfile));
	child_process_release(&cp);
	unlink(pidfile);
	free(pidfile);
	free(cmd);
}

static void test_run_command__cancel(void **state)
{
	struct child_process cp = CHILD_PROCESS_INIT, git = CHILD_PROCESS_INIT;
	struct strbuf sb = STRBUF_INIT;

	cp.shell = "sleep 30";
	cp.cancellable = true;
	hl_cancel();
	assert_int_equal(run_command(&cp), 0);
	assert_true(cp.cancelled);
	assert_false(child_succeeded(&cp));
	child_describe(&cp, &sb);
	assert_string_equal(sb.buf, "interrupted");
	/* what is not cancellable runs to its end */
	git.shell = "exit 0";
	assert_int_equal(run_command(&git), 0);
	assert_true(child_succeeded(&git));
	hl_cancel_reset();
	child_process_release(&cp);
	child_process_release(&git);
	strbuf_release(&sb);
}

static void test_run_command__several_at_once(void **state)
{
	struct child_process a = CHILD_PROCESS_INIT, b = CHILD_PROCESS_INIT, c = CHILD_PROCESS_INIT;
	struct child_process *all[] = { &a, &b, &c };

	a.shell = "sleep 0.2; echo a";
	b.shell = "sleep 30";
	b.timeout = 0.3;
	/* more output than a pipe holds: read while waiting for the others */
	c.shell = "i=0; while [ $i -lt 3000 ]; do echo 0123456789012345678901234567890123456789; i=$((i+1)); done; echo c";
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		assert_int_equal(start_command(all[i]), 0);
	assert_int_equal(finish_commands(all, ARRAY_SIZE(all)), 0);
	assert_true(child_succeeded(&a));
	assert_string_equal(a.out.buf, "a\n");
	assert_true(b.timed_out);
	assert_true(child_succeeded(&c));
	assert_int_equal(c.out.len, 3000 * 41 + 2);
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		child_process_release(all[i]);
}

static void test_run_command__cannot_start(void **state)
{
	static const char *missing[] = { "hotloop-no-such-program", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;

	cp.shell = "true";
	cp.dir = "/nonexistent/dir";
	assert_int_equal(run_command(&cp), -1);
	assert_non_null(strstr(last_error(), "cannot enter '/nonexistent/dir'"));
	cp.dir = NULL;
	cp.in = "/nonexistent/input";
	assert_int_equal(run_command(&cp), -1);
	assert_non_null(strstr(last_error(), "cannot open '/nonexistent/input'"));
	cp.in = NULL;
	cp.shell = NULL;
	cp.argv = missing;
	assert_int_equal(run_command(&cp), -1);
	assert_non_null(strstr(last_error(), "cannot run 'hotloop-no-such-program'"));
	child_process_release(&cp);
}

/* Is a process whose command line holds 'marker' running (not a zombie)? */
static void test_run_command__sandbox(void **state)
{
	char dir[] = "/tmp/t-run-command-sb.XXXXXX", tmp[] = "/tmp/t-run-command-sbtmp.XXXXXX";
	struct child_process cp = CHILD_PROCESS_INIT;
	char *inside, *outside, *cmd, *marker = xstrfmt("sleep 30.%ld", (long)getpid());
	const char *writable[] = { dir, NULL };
	struct sandbox sb = { .writable = writable, .tmp = tmp };
	struct strbuf sbuf = STRBUF_INIT;

	if (sandbox_unavailable()) {
		print_message("skip sandbox: %s\n", sandbox_unavailable());
		free(marker);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(tmp));
	inside = xstrfmt("%s/in", dir);
	outside = xstrfmt("%s-outside", dir);
	/* it writes where it may, not elsewhere; its temporary files go to its own directory */
	cmd = xstrfmt("echo ok >%s && echo $TMPDIR && touch /tmp/mine && { echo no >%s; } 2>/dev/null; "
		      "setsid %s >/dev/null 2>&1 & exit 0", inside, outside, marker);
	cp.shell = cmd;
	cp.dir = dir;
	cp.sandbox = &sb;
	assert_int_equal(run_command(&cp), 0);
	assert_true(child_succeeded(&cp));
	assert_non_null(strstr(cp.out.buf, tmp));
	assert_true(read_file(&sbuf, inside, 64) >= 0);
	assert_string_equal(sbuf.buf, "ok\n");
	assert_int_equal(access(outside, F_OK), -1);
	/* a daemon of its own session went with the sandbox */
	for (int i = 0; i < 100 && marker_running(marker); i++)
		usleep(20000);
	assert_false(marker_running(marker));
	child_process_release(&cp);
	strbuf_release(&sbuf);
	tp_sh_rm(dir);
	tp_sh_rm(tmp);
	free(inside);
	free(outside);
	free(cmd);
	free(marker);
}

/* A subreaper's orphans: a daemon of its own session is ours to kill, and is killed. */
static void test_run_command__orphans_adopted_and_killed(void **state)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	char *marker = xstrfmt("sleep 31.%ld", (long)getpid()), *cmd;

	assert_int_equal(adopt_orphans(), 0);
	assert_int_equal(kill_adopted(), 0);
	cmd = xstrfmt("setsid sh -c '%s; true' </dev/null >/dev/null 2>&1 & exit 0", marker);
	cp.shell = cmd;
	assert_int_equal(run_command(&cp), 0);
	for (int i = 0; i < 100 && !marker_running(marker); i++)
		usleep(20000);
	assert_true(marker_running(marker));
	/* the shell and its sleep: the second comes to us when the first dies */
	assert_true(kill_adopted() >= 1);
	assert_false(marker_running(marker));
	assert_int_equal(kill_adopted(), 0);
	child_process_release(&cp);
	free(cmd);
	free(marker);
}

/* A guarded command ends as it would alone; signals to its group reach it, not the guard. */
static void test_run_command__guard_status_and_signals(void **state)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	char *marker = xstrfmt("sleep 34.%ld", (long)getpid()), *cmd;

	cp.guard = true;
	cp.shell = "echo out; exit 3";
	assert_int_equal(run_command(&cp), 0);
	assert_true(WIFEXITED(cp.status));
	assert_int_equal(WEXITSTATUS(cp.status), 3);
	assert_string_equal(cp.out.buf, "out\n");

	cp.shell = "kill -TERM $$; sleep 5";
	assert_int_equal(run_command(&cp), 0);
	assert_true(WIFSIGNALED(cp.status));
	assert_int_equal(WTERMSIG(cp.status), SIGTERM);

	/* a TERM to the group: the command traps it; its leftover dies with the guard */
	cmd = xstrfmt("trap 'exit 7' TERM; setsid %s & echo up; while :; do sleep 0.05; done", marker);
	cp.shell = cmd;
	assert_int_equal(start_command(&cp), 0);
	for (int i = 0; i < 200 && !marker_running(marker); i++)
		usleep(20000);
	assert_true(marker_running(marker));
	assert_int_equal(check_command(&cp), 0);
	signal_command(&cp, SIGTERM);
	for (int i = 0; i < 200 && !check_command(&cp); i++)
		usleep(20000);
	assert_false(cp.running);
	assert_true(WIFEXITED(cp.status));
	assert_int_equal(WEXITSTATUS(cp.status), 7);
	assert_false(marker_running(marker));
	child_process_release(&cp);
	free(cmd);
	free(marker);
}

/* kill_command(): a guarded command that ignores TERM, and its daemon, go at once; the status says SIGKILL. */
static void test_run_command__guard_kill_command(void **state)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	char *marker = xstrfmt("sleep 37.%ld", (long)getpid()), *cmd;

	cmd = xstrfmt("trap '' TERM; setsid %s & while :; do sleep 0.05; done", marker);
	cp.guard = true;
	cp.shell = cmd;
	assert_int_equal(start_command(&cp), 0);
	for (int i = 0; i < 200 && !marker_running(marker); i++)
		usleep(20000);
	assert_true(marker_running(marker));
	signal_command(&cp, SIGTERM);
	usleep(200000);
	assert_int_equal(check_command(&cp), 0);	/* TERM is ignored */
	kill_command(&cp);
	for (int i = 0; i < 200 && !check_command(&cp); i++)
		usleep(20000);
	assert_false(cp.running);
	assert_true(WIFSIGNALED(cp.status));
	assert_int_equal(WTERMSIG(cp.status), SIGKILL);
	assert_false(marker_running(marker));
	child_process_release(&cp);
	free(cmd);
	free(marker);
}

/* hotloop killed with SIGKILL: what it started under a guard goes too, daemons included. */
static void test_run_command__guard_outlives_no_sigkilled_parent(void **state)
{
	char *in_group = xstrfmt("sleep 35.%ld", (long)getpid());
	char *own_session = xstrfmt("sleep 36.%ld", (long)getpid());
	char *cmd = xstrfmt("setsid %s & %s", own_session, in_group);
	pid_t parent;
	int status;

	parent = fork();
	assert_true(parent >= 0);
	if (!parent) {
		struct child_process cp = CHILD_PROCESS_INIT;

		cp.guard = true;
		cp.shell = cmd;
		if (start_command(&cp))
			_exit(1);
		pause();
		_exit(0);
	}
	for (int i = 0; i < 200 && !(marker_running(in_group) && marker_running(own_session)); i++)
		usleep(20000);
	assert_true(marker_running(in_group));
	assert_true(marker_running(own_session));
	kill(parent, SIGKILL);
	assert_int_equal(waitpid(parent, &status, 0), parent);
	for (int i = 0; i < 250 && (marker_running(in_group) || marker_running(own_session)); i++)
		usleep(20000);
	assert_false(marker_running(in_group));
	assert_false(marker_running(own_session));
	kill_adopted();		/* the guard, if it came to us to be reaped */
	free(cmd);
	free(in_group);
	free(own_session);
}

static void test_git__run_and_rev_parse(void **state)
{
	char dir[] = "/tmp/t-git.XXXXXX";
	struct strbuf out = STRBUF_INIT;
	char *top = NULL, *head, *sub;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(git_run(dir, NULL, "create a repository", "init", "-q", NULL), 0);
	assert_int_equal(git_run(dir, NULL, "commit", "-c", "user.name=t", "-c", "user.email=t@t",
				 "commit", "-q", "--allow-empty", "-m", "one", NULL), 0);
	head = git_rev_parse(dir, "HEAD");
	assert_non_null(head);
	assert_int_equal(strlen(head), 40);
	assert_null(git_rev_parse(dir, "no-such-branch"));
	assert_int_equal(git_run(dir, &out, "list a missing ref", "show-ref", "refs/heads/nope", NULL), -1);
	assert_non_null(strstr(last_error(), "cannot list a missing ref: git show-ref failed"));
	sub = xstrfmt("%s/sub", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(git_top(sub, &top), 0);
	{
		char *real = realpath(dir, NULL), *found = git_find_top(sub);

		assert_string_equal(top, real);
		assert_string_equal(found, real);
		free(real);
		free(found);
	}
	assert_null(git_find_top("/"));
	rmdir(sub);
	{
		struct child_process cp = CHILD_PROCESS_INIT;
		char *rm = xstrfmt("rm -rf '%s'", dir);

		cp.shell = rm;
		assert_int_equal(run_command(&cp), 0);
		child_process_release(&cp);
		free(rm);
	}
	free(sub);
	free(top);
	free(head);
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_command__tail),
		cmocka_unit_test(test_run_command__shell_status_dir_output),
		cmocka_unit_test(test_run_command__argv_env_input),
		cmocka_unit_test(test_run_command__out_file),
		cmocka_unit_test(test_run_command__timeout_kills_the_group),
		cmocka_unit_test(test_run_command__grandchild_holding_the_pipe),
		cmocka_unit_test(test_run_command__kill_leftovers),
		cmocka_unit_test(test_run_command__cancel),
		cmocka_unit_test(test_run_command__several_at_once),
		cmocka_unit_test(test_run_command__cannot_start),
		cmocka_unit_test(test_run_command__sandbox),
		cmocka_unit_test(test_run_command__orphans_adopted_and_killed),
		cmocka_unit_test(test_run_command__guard_status_and_signals),
		cmocka_unit_test(test_run_command__guard_outlives_no_sigkilled_parent),
		cmocka_unit_test(test_run_command__guard_kill_command),
		cmocka_unit_test(test_git__run_and_rev_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
