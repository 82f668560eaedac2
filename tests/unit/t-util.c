/*
 * t-util.c: unit tests for util.c: the CPU list parser --pin and the
 * sampler share, and out of memory: a message and exit status 1.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "test-helpers.h"
#include "strbuf.h"

#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

#ifdef T_ASAN
/* ASan's malloc reports a request it cannot serve and aborts; libc's returns NULL */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

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

/* More than any address space: malloc fails whatever the machine. */
#define HUGE ((size_t)1 << 62)

enum oom_how { OOM_MALLOC, OOM_CALLOC, OOM_CALLOC_OVERFLOW, OOM_REALLOC };

/* Run one allocation that fails in a child; its wait status, its stdout and stderr. */
static int run_oom(enum oom_how how, struct strbuf *out, struct strbuf *err)
{
	int o[2], e[2], status;
	pid_t pid;

	assert_int_equal(pipe(o), 0);
	assert_int_equal(pipe(e), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		close(o[0]), close(o[1]), close(e[0]), close(e[1]);
		printf("half a document\n");	/* a pipe: buffered, not written yet */
		switch (how) {
		case OOM_MALLOC: xmalloc(HUGE); break;
		case OOM_CALLOC: xcalloc(HUGE / 8, 8); break;
		case OOM_CALLOC_OVERFLOW: xcalloc(SIZE_MAX / 2, 4); break;
		case OOM_REALLOC: xrealloc(xmalloc(16), HUGE); break;
		}
		_exit(42);
	}
	close(o[1]);
	close(e[1]);
	assert_int_equal(strbuf_read_fd(out, o[0], 1 << 16), 0);
	assert_int_equal(strbuf_read_fd(err, e[0], 1 << 16), 0);
	close(o[0]);
	close(e[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void test_util__out_of_memory(void **state)
{
	static const struct {
		enum oom_how how;
		const char *want;
	} cases[] = {
		{ OOM_MALLOC, "hotloop: out of memory (allocating 4611686018427387904 bytes)\n" },
		{ OOM_CALLOC, "hotloop: out of memory (allocating 576460752303423488 x 8 bytes)\n" },
		{ OOM_CALLOC_OVERFLOW, "hotloop: out of memory (allocating 9223372036854775807 x 4 bytes)\n" },
		{ OOM_REALLOC, "hotloop: out of memory (allocating 4611686018427387904 bytes)\n" },
	};
	const char *opts = getenv("ASAN_OPTIONS");

#ifdef T_ASAN
	if (opts && strstr(opts, "allocator_may_return_null=0")) {
		printf("skip t-util: out of memory: ASAN_OPTIONS has allocator_may_return_null=0, "
		       "ASan aborts before xmalloc() sees NULL\n");
		return;
	}
#endif
	(void)opts;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
		int status = run_oom(cases[i].how, &out, &err);

		if (!WIFEXITED(status) || WEXITSTATUS(status) != HL_EXIT_FAILURE)
			fail_msg("case %zu: %s %d, not exit status 1; stderr: %s", i,
				 WIFSIGNALED(status) ? "signal" : "exit status",
				 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), err.buf);
		/* the message is the last line; ASan may warn before it */
		if (err.len < strlen(cases[i].want) ||
		    strcmp(err.buf + err.len - strlen(cases[i].want), cases[i].want))
			fail_msg("case %zu: stderr is '%s', not '%s'", i, err.buf, cases[i].want);
		/* nothing buffered is written: not half a document, not a forked child's copy */
		assert_string_equal(out.buf, "");
		strbuf_release(&out);
		strbuf_release(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_util__cpu_list),
		cmocka_unit_test(test_util__cpu_list_quiet),
		cmocka_unit_test(test_util__out_of_memory),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
