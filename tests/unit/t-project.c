/*
 * t-project.c: unit tests for project.c: finding hotloop.conf and the git
 * top from a subdirectory, no config at all, workloads by name and their
 * command lines, state and run directories, the two locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "test-helpers.h"
#include "test-project.h"
#include "project.h"
#include "strbuf.h"

static struct strbuf errors = STRBUF_INIT;

static void collect(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static void test_project__found_from_a_subdirectory(void **state)
{
	char *dir = tp_make(NULL), *sub = xstrfmt("%s/app", dir), *cwd = getcwd(NULL, 0);
	struct project p;

	tp_sh(dir, "mkdir -p app/deep && mv hotloop.conf app/");
	assert_int_equal(chdir(sub), 0);
	assert_int_equal(chdir("deep"), 0);
	assert_int_equal(project_open(&p, NULL, 0), 0);
	assert_string_equal(p.dir, sub);
	assert_string_equal(p.top, dir);
	assert_true(p.in_git);
	assert_string_equal(p.sub, "app");
	assert_string_equal(p.conf_rel, "app/hotloop.conf");
	assert_string_equal(p.cf.file, "../hotloop.conf");
	assert_string_equal(project_workload(&p, NULL)->name, "main");
	{
		char *in = project_dir_in(&p, "/tmp/wt");

		assert_string_equal(in, "/tmp/wt/app");
		free(in);
	}
	project_release(&p);
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
	free(sub);
	tp_remove(dir);
}

static void test_project__without_a_config(void **state)
{
	char *dir = tp_make(NULL), *cwd = getcwd(NULL, 0);
	report_fn old = set_error_routine(collect);
	struct project p;

	tp_sh(dir, "rm hotloop.conf && mkdir sub");
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(chdir("sub"), 0);
	strbuf_reset(&errors);
	assert_int_equal(project_open(&p, NULL, 0), -1);
	assert_non_null(strstr(errors.buf, "no hotloop.conf"));
	project_release(&p);
	assert_int_equal(project_open(&p, NULL, PROJECT_CONFIG_OPTIONAL), 0);
	assert_null(p.conf_path);
	assert_string_equal(p.top, dir);
	assert_string_equal(p.sub, "sub");
	project_release(&p);
	set_error_routine(old);
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
	tp_remove(dir);
}

static void test_project__workloads_and_command_lines(void **state)
{
	char *dir = tp_make("[workload \"sized\"]\n\trun = ./spin {n} && ./spin {n}\n\tsizes = 3 1 2\n"
			    "[workload \"nosizes\"]\n\trun = ./spin {n}\n");
	char *conf = xstrfmt("%s/hotloop.conf", dir), *line;
	report_fn old = set_error_routine(collect);
	struct project p;

	assert_int_equal(project_open(&p, conf, 0), 0);
	strbuf_reset(&errors);
	assert_null(project_workload(&p, "nosuch"));
	assert_non_null(strstr(errors.buf, "unknown workload 'nosuch' in '"));
	assert_non_null(strstr(errors.buf, "': the configured ones are 'main', 'sized', 'nosizes'"));
	/* one simple command: the shell steps aside */
	line = project_command_line(project_workload(&p, "main"), NULL);
	assert_string_equal(line, "exec ./spin 20");
	free(line);
	/* {n}: the largest size, or the one given; not one simple command */
	line = project_command_line(project_workload(&p, "sized"), NULL);
	assert_string_equal(line, "./spin 3 && ./spin 3");
	free(line);
	line = project_command_line(project_workload(&p, "sized"), "7");
	assert_string_equal(line, "./spin 7 && ./spin 7");
	free(line);
	strbuf_reset(&errors);
	assert_null(project_command_line(project_workload(&p, "nosizes"), NULL));
	assert_non_null(strstr(errors.buf, "give the value of {n} with --size N"));
	line = with_size("a{n}b{n}", 42);
	assert_string_equal(line, "a42b42");
	free(line);
	project_release(&p);
	set_error_routine(old);
	free(conf);
	tp_remove(dir);
}

static void test_project__state_and_run_dirs(void **state)
{
	char *dir = tp_make(NULL), *conf = xstrfmt("%s/hotloop.conf", dir), *a, *b, *ida, *idb, *ign;
	struct project p;
	struct stat st;

	assert_int_equal(project_open(&p, conf, 0), 0);
	assert_int_equal(project_new_dir(&p, "runs", "main", &a, &ida), 0);
	assert_int_equal(project_new_dir(&p, "runs", "main", &b, &idb), 0);
	assert_true(!stat(a, &st) && S_ISDIR(st.st_mode));
	assert_string_not_equal(a, b);
	/* the same second: the next one is numbered */
	if (!strncmp(ida, idb, 15))
		assert_non_null(strstr(idb, "-main-2"));
	assert_non_null(strstr(ida, "-main"));
	ign = xstrfmt("%s/.hotloop/.gitignore", dir);
	assert_int_equal(access(ign, F_OK), 0);
	{
		char *kb = project_kb_dir(&p), *scale = project_scale_path(&p, "main");
		char *want_kb = xstrfmt("%s/kb", dir), *want_scale = xstrfmt("%s/.hotloop/scale/main.json", dir);

		assert_string_equal(kb, want_kb);
		assert_string_equal(scale, want_scale);
		free(kb);
		free(scale);
		free(want_kb);
		free(want_scale);
	}
	/* git status does not see hotloop's state */
	tp_sh(dir, "test -z \"$(git status --porcelain)\"");
	project_release(&p);
	free(a);
	free(b);
	free(ida);
	free(idb);
	free(ign);
	free(conf);
	tp_remove(dir);
}

static void test_project__locks(void **state)
{
	char *dir = tp_make(NULL), *conf = xstrfmt("%s/hotloop.conf", dir);
	report_fn old = set_error_routine(collect);
	struct project p;
	char pid[32], holder[32];
	int a, b, w;

	assert_int_equal(project_open(&p, conf, 0), 0);
	a = project_lock(&p, PROJECT_LOCK_LOOP);
	assert_true(a >= 0);
	/* another open file description: refused, naming the pid that holds it */
	strbuf_reset(&errors);
	b = project_lock(&p, PROJECT_LOCK_LOOP);
	assert_int_equal(b, -1);
	snprintf(pid, sizeof(pid), "(pid %ld)", (long)getpid());
	assert_non_null(strstr(errors.buf, "another hotloop loop"));
	assert_non_null(strstr(errors.buf, pid));
	/* the worktrees' lock is another lock */
	w = project_lock(&p, PROJECT_LOCK_WORKTREES);
	assert_true(w >= 0);
	{
		char *path = xstrfmt("%s/.hotloop/worktrees.lock", dir);

		assert_int_equal(pid_lock(path, holder), -1);
		assert_int_equal(errno, EWOULDBLOCK);
		assert_int_equal(atol(holder), (long)getpid());
		close(w);
		w = pid_lock(path, holder);
		assert_true(w >= 0);
		close(w);
		free(path);
	}
	/* a lock goes with its holder */
	close(a);
	a = project_lock(&p, PROJECT_LOCK_LOOP);
	assert_true(a >= 0);
	close(a);
	project_release(&p);
	set_error_routine(old);
	free(conf);
	tp_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_project__found_from_a_subdirectory),
		cmocka_unit_test(test_project__without_a_config),
		cmocka_unit_test(test_project__workloads_and_command_lines),
		cmocka_unit_test(test_project__state_and_run_dirs),
		cmocka_unit_test(test_project__locks),
	};

	if (!tp_can_build()) {
		printf("skip t-project: needs cc and git\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
