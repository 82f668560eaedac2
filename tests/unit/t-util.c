/*
 * t-util.c: unit tests for util.c: the CPU list parser --pin and the
 * sampler share, out of memory (a message and exit status 1), and the
 * joining and normalizing of source paths.
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

static void test_util__path_join_normalize(void **state)
{
	static const struct {
		const char *dir, *name, *want;
	} cases[] = {
		/* what DWARF has: a compilation directory and a relative name */
		{ "/work/src/zstd/programs", "../lib/compress/zstd_cwksp.h", "/work/src/zstd/lib/compress/zstd_cwksp.h" },
		{ "/work/src/zstd/programs", "../lib/compress/../common/bitstream.h", "/work/src/zstd/lib/common/bitstream.h" },
		{ "/src", "./a//b/./c.c", "/src/a/b/c.c" },
		{ "/src/", "a.c", "/src/a.c" },
		{ "//src//x/", "..//a.c", "/src/a.c" },
		/* an absolute name ignores the directory */
		{ "/work/build", "/usr/include/stdio.h", "/usr/include/stdio.h" },
		{ "/work/build", "/usr/include/../lib/gcc/x.h", "/usr/lib/gcc/x.h" },
		/* no directory: the name alone, normalized */
		{ NULL, "a/../b.c", "b.c" },
		{ "", "../a/./b.c", "../a/b.c" },
		{ "", "/a/b/", "/a/b" },
		/* more ".." than components: the root stays the root */
		{ "/a", "../../../../x.c", "/x.c" },
		{ "/", "..", "/" },
		{ "/..", "../..", "/" },
		/* a relative directory keeps the ".."s nothing can take away */
		{ "build", "../../src/a.c", "../src/a.c" },
		{ "..", "../a/../../b", "../../../b" },
		{ "../x", "..", ".." },
		{ "a", "..", "." },
		{ ".", ".", "." },
		/* empty stays empty */
		{ "", "", "" },
		{ NULL, "", "" },
		{ "/src", "", "/src" },
		{ "/", "", "/" },
		/* names that only look like "." or ".." */
		{ "/src", "...", "/src/..." },
		{ "/src", "..a/.b/..", "/src/..a" },
	};
	struct strbuf sb = STRBUF_INIT, name = STRBUF_INIT, want = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		strbuf_addstr(&sb, "junk from before");
		path_join_normalize(&sb, cases[i].dir, cases[i].name);
		if (strcmp(sb.buf, cases[i].want))
			fail_msg("case %zu: ('%s', '%s') gives '%s', not '%s'", i,
				 cases[i].dir ? cases[i].dir : "(null)", cases[i].name, sb.buf, cases[i].want);
	}

	/* very long: 100,000 components, each taken away again, then far past the root */
	for (int i = 0; i < 100000; i++)
		strbuf_addstr(&name, "component/");
	strbuf_addstr(&name, "kept.h");
	path_join_normalize(&sb, "/base", name.buf);
	assert_int_equal(sb.len, strlen("/base") + 100000 * strlen("/component") + strlen("/kept.h"));
	for (int i = 0; i < 100001; i++)
		strbuf_addstr(&name, "/..");
	strbuf_addstr(&name, "/x.c");
	path_join_normalize(&sb, "/base", name.buf);
	assert_string_equal(sb.buf, "/base/x.c");
	for (int i = 0; i < 200000; i++)
		strbuf_addstr(&name, "/..");
	path_join_normalize(&sb, "/base", name.buf);
	assert_string_equal(sb.buf, "/");
	/* relative: the ".."s past the start are all kept (one took x.c away) */
	path_join_normalize(&sb, "", name.buf);
	strbuf_addstr(&want, "..");
	for (int i = 1; i < 199999; i++)
		strbuf_addstr(&want, "/..");
	assert_string_equal(sb.buf, want.buf);
	strbuf_release(&sb);
	strbuf_release(&name);
	strbuf_release(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_util__path_join_normalize),
		cmocka_unit_test(test_util__cpu_list),
		cmocka_unit_test(test_util__cpu_list_quiet),
		cmocka_unit_test(test_util__out_of_memory),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
