/*
 * t-brief.c: unit tests for brief.c on synthetic profiles: attribution to
 * the nearest owned frame, every tag rule with its evidence, the main
 * executable fallback, quality, the hot path, rollups, --focus, the budget
 * cutting snippets before hotspots, growth exponents from scale JSON, and
 * the knowledge base's attempts on each hotspot.
 */
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

#include <jansson.h>

#include "test-helpers.h"
#include "brief.h"
#include "kb.h"
#include "strbuf.h"

static char *roots[] = { "/proj" };
static char *excluded[] = { "/proj/tests" };
static const struct brief_owned proj = { roots, 1, excluded, 1, "test", 0, 0 };

static void build(struct profile *p, struct brief *b, const char *text, const struct brief_owned *o,
		  const char *focus)
{
	struct brief_opts opts = { 0 };

	opts.owned = o;
	opts.context = -1;
	opts.focus = focus;
	profile_init(p);
	profile_add_sample_type(p, "samples", "count");
	th_add_samples(p, text);
	assert_int_equal(profile_validate(p), 0);
	assert_int_equal(brief_build(b, p, 0, &opts), 0);
}

static const struct brief_hotspot *hotspot(const struct brief *b, const char *fn)
{
	for (size_t i = 0; i < b->nr_hotspots; i++)
		if (!strcmp(b->hotspots[i].function, fn))
			return &b->hotspots[i];
	return NULL;
}

/* The evidence of tag t on h, or NULL when h does not have it. */
static const char *tag(const struct brief_hotspot *h, enum brief_tag t)
{
	for (size_t i = 0; h && i < h->nr_tags; i++)
		if (h->tags[i].tag == t)
			return h->tags[i].evidence;
	return NULL;
}

static void done(struct profile *p, struct brief *b)
{
	brief_release(b);
	profile_release(p);
}

static void test_brief__attribution_and_allocation(void **state)
{
	struct profile p;
	struct brief b;
	const struct brief_hotspot *h;

	build(&p, &b,
	      "_int_malloc!/lib/libc.so.6;malloc!/lib/libc.so.6;tokenize@/proj/src/tok.c:12;main@/proj/src/main.c:5 40\n"
	      "__GI___libc_free!/lib/libc.so.6;tokenize@/proj/src/tok.c:14;main@/proj/src/main.c:5 20\n"
	      "tokenize@/proj/src/tok.c:13;main@/proj/src/main.c:5 10\n"
	      "hash@/proj/src/h.c:3;main@/proj/src/main.c:6 30\n",
	      &proj, NULL);
	assert_int_equal(b.nr_hotspots, 2);
	h = &b.hotspots[0];
	assert_string_equal(h->function, "tokenize");
	assert_int_equal(h->attributed, 70);
	assert_int_equal(h->self, 10);
	assert_int_equal(h->total, 70);
	assert_int_equal(h->line, 12);		/* the line calling malloc */
	assert_non_null(tag(h, BT_ALLOCATION));
	assert_non_null(strstr(tag(h, BT_ALLOCATION), "allocation = 86% of its attributed time"));
	assert_non_null(strstr(tag(h, BT_ALLOCATION), "malloc 57%"));
	assert_null(tag(h, BT_COMPUTE_LEAF));
	assert_string_equal(h->callees[0].name, "malloc");
	assert_string_equal(h->callers[0].name, "main");
	assert_true(h->callers[0].pct == 100.0);
	h = &b.hotspots[1];
	assert_string_equal(h->function, "hash");
	assert_non_null(tag(h, BT_COMPUTE_LEAF));
	assert_true(b.unattributed_pct == 0);
	/* main is owned but has no time of its own: below min share, not listed */
	assert_null(hotspot(&b, "main"));
	done(&p, &b);
}

/* One row per planted pattern: the stacks, the hotspot, the tag, words of the evidence. */
static const struct {
	const char *stacks, *function;
	enum brief_tag tag;
	const char *evidence;
} tag_cases[] = {
	{ "__strlen_avx2!/lib/libc.so.6;count_upper@/proj/a.c:4;main@/proj/a.c:9 80\n"
	  "count_upper@/proj/a.c:5;main@/proj/a.c:9 20\n",
	  "count_upper", BT_STRING, "__strlen_avx2 80%" },
	{ "__memmove_avx_unaligned_erms!/lib/libc.so.6;copy@/proj/a.c:4;main@/proj/a.c:9 50\n",
	  "copy", BT_STRING, "string functions = 100%" },
	{ "__printf_fp_l!/lib/libc.so.6;__vsnprintf_internal!/lib/libc.so.6;snprintf!/lib/libc.so.6;"
	  "compare_records@/proj/a.c:4;msort_with_tmp!/lib/libc.so.6;qsort!/lib/libc.so.6;"
	  "sort_all@/proj/a.c:20;main@/proj/a.c:30 90\n"
	  "compare_records@/proj/a.c:5;msort_with_tmp!/lib/libc.so.6;qsort!/lib/libc.so.6;"
	  "sort_all@/proj/a.c:20;main@/proj/a.c:30 10\n",
	  "compare_records", BT_FORMATTING, "snprintf 90%" },
	{ "__printf_fp_l!/lib/libc.so.6;snprintf!/lib/libc.so.6;"
	  "compare_records@/proj/a.c:4;msort_with_tmp!/lib/libc.so.6;qsort!/lib/libc.so.6;"
	  "sort_all@/proj/a.c:20;main@/proj/a.c:30 100\n",
	  "compare_records", BT_CALLBACK, "msort_with_tmp 100%" },
	{ "futex_wait![kernel.kallsyms];do_syscall_64![kernel.kallsyms];__lll_lock_wait!/lib/libc.so.6;"
	  "___pthread_mutex_lock!/lib/libc.so.6;record_event@/proj/a.c:4;worker@/proj/a.c:9;"
	  "start_thread!/lib/libc.so.6 70\n"
	  "record_event@/proj/a.c:5;worker@/proj/a.c:9;start_thread!/lib/libc.so.6 30\n",
	  "record_event", BT_LOCK, "locking = 70%" },
	{ "ksys_write![kernel.kallsyms];__GI___libc_write!/lib/libc.so.6;flush@/proj/a.c:4;main@/proj/a.c:9 60\n"
	  "flush@/proj/a.c:5;main@/proj/a.c:9 40\n",
	  "flush", BT_SYSCALL, "system calls = 60%" },
	{ "clear_page_erms![kernel.kallsyms];asm_exc_page_fault![kernel.kallsyms];touch@/proj/a.c:4;"
	  "main@/proj/a.c:9 50\n",
	  "touch", BT_SYSCALL, "asm_exc_page_fault 100%" },
	{ "__ieee754_pow_fma!/lib/libm.so.6;model@/proj/a.c:4;main@/proj/a.c:9 40\n"
	  "sin!/lib/libm.so.6;model@/proj/a.c:5;main@/proj/a.c:9 20\n"
	  "model@/proj/a.c:6;main@/proj/a.c:9 40\n",
	  "model", BT_MATH, "libm = 60%" },
	{ "std::_Rb_tree<std::string, int>::_M_lower_bound!/usr/lib/libstdc++.so.6;"
	  "count_words@/proj/a.cc:7;main@/proj/a.cc:20 50\n"
	  "count_words@/proj/a.cc:7+std::map<std::string, int>::find@/usr/include/bits/stl_map.h:100;"
	  "main@/proj/a.cc:20 30\n"
	  "count_words@/proj/a.cc:8;main@/proj/a.cc:20 20\n",
	  "count_words", BT_CONTAINER, "std:: container and string internals = 80%" },
	{ "operator new(unsigned long)!/usr/lib/libstdc++.so.6;grow@/proj/a.cc:7;main@/proj/a.cc:20 50\n",
	  "grow", BT_ALLOCATION, "operator new(unsigned long) 100%" },
	{ "fib@/proj/a.c:4;fib@/proj/a.c:5;fib@/proj/a.c:5;main@/proj/a.c:9 60\n"
	  "fib@/proj/a.c:4;main@/proj/a.c:9 40\n",
	  "fib", BT_RECURSION, "60% of its time, up to 3 deep" },
	{ "outer_loop@/proj/a.c:10+mix_step@/proj/a.c:4;main@/proj/a.c:20 90\n"
	  "outer_loop@/proj/a.c:11;main@/proj/a.c:20 10\n",
	  "mix_step", BT_INLINED, "100% of its attributed time" },
	{ "spin@/proj/a.c:4;main@/proj/a.c:9 95\n"
	  "__GI___clock_gettime!/lib/libc.so.6;spin@/proj/a.c:5;main@/proj/a.c:9 5\n",
	  "spin", BT_COMPUTE_LEAF, "self / total = 95%" },
};

static void test_brief__tags(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(tag_cases); i++) {
		struct profile p;
		struct brief b;
		const char *ev;

		build(&p, &b, tag_cases[i].stacks, &proj, NULL);
		if (!b.nr_hotspots || strcmp(b.hotspots[0].function, tag_cases[i].function))
			fail_msg("case %zu: hotspot 1 is %s, expected %s", i,
				 b.nr_hotspots ? b.hotspots[0].function : "(none)", tag_cases[i].function);
		ev = tag(&b.hotspots[0], tag_cases[i].tag);
		if (!ev || !strstr(ev, tag_cases[i].evidence))
			fail_msg("case %zu: tag %s evidence '%s', expected '%s'", i,
				 brief_tag_name(tag_cases[i].tag), ev ? ev : "(no tag)", tag_cases[i].evidence);
		done(&p, &b);
	}
}

/* Rules that must not fire. */
static void test_brief__no_false_tags(void **state)
{
	struct profile p;
	struct brief b;
	const struct brief_hotspot *h;

	/* the futex of a lock is locking, not a system call; 10% of strlen is under the bar */
	build(&p, &b,
	      "futex_wait![kernel.kallsyms];__lll_lock_wait!/lib/libc.so.6;pthread_mutex_lock!/lib/libc.so.6;"
	      "bump@/proj/a.c:4;main@/proj/a.c:9 60\n"
	      "strlen!/lib/libc.so.6;bump@/proj/a.c:5;main@/proj/a.c:9 10\n"
	      "bump@/proj/a.c:6;main@/proj/a.c:9 30\n",
	      &proj, NULL);
	h = &b.hotspots[0];
	assert_non_null(tag(h, BT_LOCK));
	assert_null(tag(h, BT_SYSCALL));
	assert_null(tag(h, BT_STRING));
	assert_null(tag(h, BT_RECURSION));
	assert_null(tag(h, BT_CALLBACK));	/* its caller is owned */
	done(&p, &b);

	/* a timer interrupt landing on user code is neither a call nor a system call */
	build(&p, &b,
	      "handle_softirqs![kernel.kallsyms];asm_sysvec_apic_timer_interrupt![kernel.kallsyms];"
	      "spin@/proj/a.c:4;main@/proj/a.c:9 40\n"
	      "spin@/proj/a.c:4;main@/proj/a.c:9 60\n",
	      &proj, NULL);
	h = &b.hotspots[0];
	assert_null(tag(h, BT_SYSCALL));
	assert_int_equal(h->nr_callees, 0);
	/* a thread's start routine is not a callback */
	done(&p, &b);
	build(&p, &b, "work@/proj/a.c:4;start_thread!/lib/libc.so.6;clone3!/lib/libc.so.6 10\n", &proj, NULL);
	assert_null(tag(&b.hotspots[0], BT_CALLBACK));
	assert_true(b.truncated_pct == 0);
	done(&p, &b);
}

static void test_brief__owned_paths(void **state)
{
	struct profile p;
	struct brief b;

	assert_true(brief_owns_path(&proj, "/proj/src/a.c"));
	assert_true(brief_owns_path(&proj, "/proj"));
	assert_false(brief_owns_path(&proj, "/project/a.c"));
	assert_false(brief_owns_path(&proj, "/proj/tests/t.c"));	/* excluded */
	assert_false(brief_owns_path(&proj, "src/a.c"));		/* relative: by its mapping */
	assert_false(brief_owns_path(&proj, ""));

	/*
	 * Relative file names are judged by their mapping: libc's own
	 * "../sysdeps/..." is foreign, the main executable's "src/b.c" ours.
	 * Test code under an excluded path is not ours either.
	 */
	build(&p, &b,
	      "memcpy@../sysdeps/x86_64/memcpy.S:10!/lib/libc.so.6;helper@src/b.c:3;"
	      "check@/proj/tests/t.c:5;main@/proj/a.c:1 10\n",
	      &proj, NULL);
	assert_string_equal(b.hotspots[0].function, "helper");
	assert_null(hotspot(&b, "check"));
	assert_null(hotspot(&b, "memcpy"));
	done(&p, &b);
}

static void test_brief__fallback_and_quality(void **state)
{
	static char *elsewhere[] = { "/elsewhere" };
	static const struct brief_owned other = { elsewhere, 1, NULL, 0, "test", 0, 0 };
	struct profile p;
	struct brief b;

	/* nothing under the root: the main executable's code counts, with a warning */
	build(&p, &b,
	      "strlen!/lib/libc.so.6;scan@/build/x/a.c:3;main@/build/x/a.c:9 30\n"
	      "inl@/usr/include/x.h:3;main@/build/x/a.c:9 10\n"
	      "?;main@/build/x/a.c:9 10\n"
	      "lost@/build/x/a.c:7 50\n",
	      &other, NULL);
	assert_true(b.owned_fallback);
	assert_int_equal(b.nr_warnings, 2);	/* and: few samples */
	assert_non_null(strstr(b.warnings[0], "--owned"));
	assert_string_equal(b.hotspots[0].function, "lost");
	assert_non_null(hotspot(&b, "scan"));
	assert_null(hotspot(&b, "inl"));	/* a system header is not ours */
	assert_true(b.truncated_pct == 50.0);	/* "lost" does not reach main */
	assert_true(b.unknown_pct == 10.0);
	done(&p, &b);

	/*
	 * A sample in the C runtime's code linked into the executable (the
	 * exit-time destructor walk, no line information) does not make that
	 * the only owned code: the fallback still finds the program's own.
	 */
	build(&p, &b,
	      "hot@/cache/wt/three.c:5;main@/cache/wt/three.c:20 99\n"
	      "__cxa_finalize!/lib/libc.so.6;__do_global_dtors_aux;"
	      "_dl_call_fini!/lib/ld-linux.so.2 1\n",
	      &other, NULL);
	assert_true(b.owned_fallback);
	assert_string_equal(b.hotspots[0].function, "hot");
	assert_null(hotspot(&b, "__do_global_dtors_aux"));
	done(&p, &b);
}

static void test_brief__hot_path_and_rollups(void **state)
{
	struct profile p;
	struct brief b;

	build(&p, &b,
	      "leaf@/proj/src/a.c:1;mid@/proj/src/a.c:2;main@/proj/main.c:3;__libc_start_call_main!/lib/libc.so.6 60\n"
	      "other@/proj/lib/b.c:1;mid@/proj/src/a.c:2;main@/proj/main.c:3;__libc_start_call_main!/lib/libc.so.6 30\n"
	      "memset!/lib/libc.so.6;side@/proj/lib/b.c:4;main@/proj/main.c:3;__libc_start_call_main!/lib/libc.so.6 10\n",
	      &proj, NULL);
	assert_int_equal(b.nr_hot_path, 4);
	assert_string_equal(b.hot_path[0].name, "__libc_start_call_main");
	assert_false(b.hot_path[0].owned);
	assert_string_equal(b.hot_path[2].name, "mid");
	assert_true(b.hot_path[2].owned && b.hot_path[2].pct == 90.0);
	assert_string_equal(b.hot_path[3].name, "leaf");
	assert_string_equal(b.by_dso[0].name, "prog");
	assert_true(b.by_dso[0].pct == 90.0);
	assert_string_equal(b.by_dso[1].name, "libc.so.6");
	assert_string_equal(b.by_dir[0].name, "src/");
	assert_true(b.by_dir[0].pct == 60.0);
	assert_string_equal(b.by_dir[1].name, "lib/");
	assert_true(b.by_dir[1].pct == 40.0);
	done(&p, &b);
}

/*
 * One function calling itself 65536 deep: self and total count each sample
 * once, the recursion is as deep as the stack, and the hot path stops at
 * its cap.
 */
static void test_brief__deep_recursion(void **state)
{
	struct brief_opts opts = { .owned = &proj, .context = -1, .no_asm = true };
	const struct brief_hotspot *walk, *helper;
	struct profile p;
	struct brief b;

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	th_add_deep(&p, NULL, "walk@/proj/src/r.c:7", 65536, "main@/proj/main.c:3", 3);
	th_add_deep(&p, "helper@/proj/src/r.c:20", "walk@/proj/src/r.c:7", 32768, "main@/proj/main.c:3", 2);
	assert_int_equal(profile_validate(&p), 0);
	assert_int_equal(brief_build(&b, &p, 0, &opts), 0);
	assert_int_equal(b.total, 5);
	assert_int_equal(b.nr_hotspots, 2);
	walk = hotspot(&b, "walk");
	helper = hotspot(&b, "helper");
	assert_non_null(walk);
	assert_non_null(helper);
	assert_int_equal(walk->self, 3);
	assert_int_equal(walk->total, 5);
	assert_int_equal(walk->attributed, 3);
	assert_int_equal(helper->self, 2);
	assert_int_equal(helper->total, 2);
	assert_int_equal(helper->attributed, 2);
	assert_non_null(tag(walk, BT_RECURSION));
	assert_non_null(strstr(tag(walk, BT_RECURSION), "100% of its time, up to 65536 deep"));
	assert_null(tag(helper, BT_RECURSION));
	assert_int_equal(walk->nr_callers, 1);
	assert_string_equal(walk->callers[0].name, "walk");
	assert_true(walk->callers[0].pct == 100.0);
	assert_int_equal(walk->nr_callees, 1);
	assert_string_equal(walk->callees[0].name, "helper");
	assert_true(walk->callees[0].pct == 40.0);
	assert_string_equal(helper->callers[0].name, "walk");
	assert_true(helper->callers[0].pct == 100.0);
	assert_true(b.unattributed_pct == 0 && b.truncated_pct == 0);
	assert_int_equal(b.nr_hot_path, 64);
	assert_string_equal(b.hot_path[0].name, "main");
	for (size_t i = 1; i < b.nr_hot_path; i++) {
		assert_string_equal(b.hot_path[i].name, "walk");
		assert_true(b.hot_path[i].owned && b.hot_path[i].pct == 100.0);
	}
	assert_int_equal(b.nr_by_dir, 1);
	assert_string_equal(b.by_dir[0].name, "src/");
	assert_true(b.by_dir[0].pct == 100.0);
	assert_string_equal(b.by_dso[0].name, "prog");
	done(&p, &b);
}

static void test_brief__focus(void **state)
{
	static const char stacks[] =
		"hot@/proj/a.c:1;main@/proj/a.c:9 90\n"
		"cool@/proj/a.c:5;main@/proj/a.c:9 10\n";
	struct brief_opts opts = { 0 };
	struct profile p;
	struct brief b;

	build(&p, &b, stacks, &proj, "cool");
	assert_int_equal(b.nr_hotspots, 1);
	assert_string_equal(b.hotspots[0].function, "cool");
	done(&p, &b);

	opts.owned = &proj;
	opts.focus = "nosuch";
	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	th_add_samples(&p, stacks);
	assert_int_equal(brief_build(&b, &p, 0, &opts), -1);
	brief_release(&b);
	profile_release(&p);
}

static void test_brief__categories(void **state)
{
	static const struct { const char *name, *dso; enum brief_tag want; } cases[] = {
		{ "malloc", "libc.so.6", BT_ALLOCATION },
		{ "__GI___libc_malloc", "libc.so.6", BT_ALLOCATION },
		{ "_int_free", "libc.so.6", BT_ALLOCATION },
		{ "operator delete(void*, unsigned long)", "libstdc++.so.6", BT_ALLOCATION },
		{ "__strlen_avx2", "libc.so.6", BT_STRING },
		{ "__memcmp_evex_movbe", "libc.so.6", BT_STRING },
		{ "strlen@plt", "prog", BT_STRING },
		{ "__vfprintf_internal", "libc.so.6", BT_FORMATTING },
		{ "____strtod_l_internal", "libc.so.6", BT_FORMATTING },
		{ "std::basic_ostream<char>& std::operator<<", "libstdc++.so.6", BT_FORMATTING },
		{ "__sin_fma", "libm.so.6", BT_MATH },
		{ "exp", "libm.so.6", BT_MATH },
		{ "sqrt", "prog", BT_MATH },
		{ "pthread_mutex_lock@@GLIBC_2.2.5", "libc.so.6", BT_LOCK },
		{ "__lll_lock_wait", "libc.so.6", BT_LOCK },
		{ "std::mutex::lock()", "prog", BT_LOCK },
		{ "__GI___libc_read", "libc.so.6", BT_SYSCALL },
		{ "std::_Hashtable<int, int>::find", "prog", BT_CONTAINER },
		{ "std::__cxx11::basic_string<char>::_M_construct", "libstdc++.so.6", BT_CONTAINER },
		{ "tokenize", "prog", BT_NR },
		{ "strlenx", "prog", BT_NR },
		{ "sinus", "prog", BT_NR },
		{ "[unknown]", "prog", BT_NR },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (brief_categorize(cases[i].name, cases[i].dso) != cases[i].want)
			fail_msg("%s: got %s, expected %s", cases[i].name,
				 brief_tag_name(brief_categorize(cases[i].name, cases[i].dso)),
				 brief_tag_name(cases[i].want));
}

/* A source file on disk for the snippets. */
static char *write_source(char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	char *path;

	assert_non_null(mkdtemp(dir));
	path = xstrfmt("%s/a.c", dir);
	for (int i = 1; i <= 40; i++)
		strbuf_addf(&sb, "\tline_%d(); /* some code on line %d of the file */\n", i, i);
	assert_int_equal(write_file_atomic(path, sb.buf, sb.len), 0);
	strbuf_release(&sb);
	return path;
}

/* Markdown code fences ("```" at the start of a line): two per snippet. */
static size_t count_fences(const char *md)
{
	size_t n = 0;

	for (const char *p = md; (p = strstr(p, "```")); p += 3)
		n += p == md || p[-1] == '\n';
	return n;
}

static void test_brief__snippet_and_budget(void **state)
{
	char dir[] = "/tmp/hotloop-t-brief.XXXXXX", *path = write_source(dir), *text;
	char *root[] = { dir };
	struct brief_owned o = { root, 1, NULL, 0, "test", 0, 0 };
	struct strbuf md = STRBUF_INIT, big = STRBUF_INIT;
	struct profile p;
	struct brief b;
	json_t *doc, *sn;
	int newlines = 0;

	text = xstrfmt("f1@%s:20;main@%s:40 50\nf1@%s:21;main@%s:40 10\n"
		       "f2@%s:5;main@%s:40 25\nf3@%s:30;main@%s:40 15\n",
		       path, path, path, path, path, path, path, path);
	build(&p, &b, text, &o, NULL);
	assert_int_equal(b.nr_hotspots, 3);
	assert_int_equal(b.hotspots[0].line, 20);
	assert_int_equal(b.hotspots[0].nr_lines, 13);	/* 14..26 */
	assert_int_equal(b.hotspots[0].lines[0].line, 14);
	assert_int_equal(b.hotspots[0].lines[6].value, 50);
	assert_int_equal(b.hotspots[0].lines[7].value, 10);
	assert_string_equal(b.hotspots[0].lines[6].text, "\tline_20(); /* some code on line 20 of the file */");
	assert_int_equal(b.hotspots[1].lines[0].line, 1);	/* clipped at the top */

	brief_format_md(&b, 0, &big);
	assert_false(b.truncated);
	assert_non_null(strstr(big.buf, ">   20  83.3% | \tline_20();"));
	assert_non_null(strstr(big.buf, "### 3. `f3` (a.c:30)"));

	/* a budget that fits the hotspots without their snippets */
	brief_format_md(&b, big.len / 4 / 2, &md);
	assert_true(b.truncated);
	assert_int_equal(b.show_hotspots, 3);
	assert_true(b.show_snippets < 3);
	assert_true(md.len / 4 <= big.len / 4 / 2);
	assert_non_null(strstr(md.buf, "## Cut to fit"));
	assert_non_null(strstr(md.buf, "### 3. `f3`"));

	/* a tiny budget: every snippet goes, then hotspots, down to one */
	strbuf_reset(&md);
	brief_format_md(&b, 10, &md);
	assert_int_equal(b.show_snippets, 0);
	assert_int_equal(b.show_hotspots, 1);
	assert_non_null(strstr(md.buf, "### 1. `f1`"));
	assert_null(strstr(md.buf, "### 2."));

	/* JSON carries the same cut */
	doc = brief_to_json(&b, 10);
	assert_int_equal(json_array_size(json_object_get(doc, "hotspots")), 1);
	assert_true(json_is_true(json_object_get(doc, "truncated")));
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(doc, "hotspots"), 0), "snippet")));
	json_decref(doc);
	doc = brief_to_json(&b, 0);
	assert_int_equal(json_array_size(json_object_get(doc, "hotspots")), 3);
	sn = json_object_get(json_array_get(json_object_get(doc, "hotspots"), 0), "snippet");
	assert_int_equal(json_integer_value(json_object_get(sn, "first_line")), 14);
	assert_int_equal(json_integer_value(json_object_get(sn, "hot_line")), 20);
	/* 13 lines: 12 newlines, none after the last */
	for (const char *t = json_string_value(json_object_get(sn, "text")); *t; t++)
		newlines += *t == '\n';
	assert_int_equal(newlines, 12);
	assert_true(json_real_value(json_object_get(json_object_get(sn, "pct"), "20")) == 83.3);
	assert_null(json_object_get(json_object_get(sn, "pct"), "14"));
	json_decref(doc);

	/* at any budget the JSON keeps the snippets the Markdown keeps */
	for (size_t budget = 10; budget < big.len / 4 + 50; budget += 25) {
		size_t kept = 0;

		strbuf_reset(&md);
		brief_format_md(&b, budget, &md);
		doc = brief_to_json(&b, budget);
		for (size_t i = 0; i < json_array_size(json_object_get(doc, "hotspots")); i++)
			kept += !json_is_null(json_object_get(json_array_get(json_object_get(doc, "hotspots"), i),
							      "snippet"));
		assert_int_equal(kept, b.show_snippets);
		assert_int_equal(count_fences(md.buf) / 2, kept);
		json_decref(doc);
	}

	done(&p, &b);
	strbuf_release(&md);
	strbuf_release(&big);
	unlink(path);
	rmdir(dir);
	free(path);
	free(text);
}

static void test_brief__scale(void **state)
{
	char path[] = "/tmp/hotloop-t-brief-scale.XXXXXX";
	static const char doc[] =
		"{\"workload\": \"cmd\", \"sizes\": [1000, 2000, 4000], \"functions\": ["
		"{\"function\": \"dedupe\", \"exponent\": 2.03, \"r2\": 0.99, \"fitted\": true},"
		"{\"function\": \"scan\", \"exponent\": 1.01, \"r2\": 0.98, \"fitted\": true},"
		"{\"function\": \"noisy\", \"exponent\": 1.9, \"r2\": 0.5, \"fitted\": true}]}";
	int fd = mkstemp(path);
	struct profile p;
	struct brief b;
	const struct brief_hotspot *h;

	assert_true(fd >= 0);
	assert_int_equal(write_full(fd, doc, sizeof(doc) - 1), 0);
	close(fd);
	build(&p, &b,
	      "dedupe@/proj/a.c:4;main@/proj/a.c:9 50\n"
	      "scan@/proj/a.c:14;main@/proj/a.c:9 30\n"
	      "noisy@/proj/a.c:24;main@/proj/a.c:9 20\n",
	      &proj, NULL);
	assert_int_equal(brief_add_scale(&b, path), 0);
	h = hotspot(&b, "dedupe");
	assert_true(h->have_scale && h->exponent == 2.03);
	assert_non_null(tag(h, BT_SUPERLINEAR));
	assert_null(tag(hotspot(&b, "scan"), BT_SUPERLINEAR));
	assert_null(tag(hotspot(&b, "noisy"), BT_SUPERLINEAR));	/* a poor fit says nothing */
	done(&p, &b);

	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write_full(fd, "[1, 2]", 6), 0);
	close(fd);
	build(&p, &b, "dedupe@/proj/a.c:4;main@/proj/a.c:9 50\n", &proj, NULL);
	assert_int_equal(brief_add_scale(&b, path), -1);
	done(&p, &b);
	unlink(path);
}

/* Five attempts: four on tokenize (newest first: reject, keep, inconclusive, reject), one elsewhere. */
static void kb_fixture(struct kb *kb, char *dir)
{
	static const char *const why[] = { "slower: +3.1% cpu on big" };
	static const struct { const char *title, *function, *verdict, *change, *hypothesis; } rows[] = {
		{ "arena for tokens", "tokenize", "reject", NULL, "oldest" },
		{ "reuse the token buffer", "tokenize", "inconclusive", "-0.4% cpu on big [-1.2, +0.5]", NULL },
		{ "intern tokens", "tokenize", "keep", "-12.3% cpu on big [-13.1, -11.4]", "fewer mallocs" },
		{ "hash the line once", "hash_line", "reject", NULL, "unrelated" },
		{ "one malloc per line", "tokenize", "reject", "+3.1% cpu on big [+2.0, +4.2]",
		  "tokenize calls malloc for every token;\n\none buffer per line would make it one call. "
		  "This hypothesis goes on well past the length that fits on one line of the brief, so it is cut." },
	};

	setenv("TZ", "UTC", 1);		/* the slugs' dates */
	tzset();
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct kb_attempt a = { 0 };

		a.title = rows[i].title;
		a.function = rows[i].function;
		a.verdict = verdict_kind_parse(rows[i].verdict);
		a.change = rows[i].change;
		a.hypothesis = rows[i].hypothesis;
		a.reasons = why;
		a.nr_reasons = 1;
		a.expected_gain_pct = NAN;
		a.when = 1795960992 + (time_t)i * 60;
		assert_int_equal(kb_add(dir, &a, NULL), 0);
	}
	assert_int_equal(kb_load(dir, kb), 0);
	assert_int_equal(kb->nr, 5);
	/* as if the knowledge base were the project's kb/ */
	free(kb->dir);
	kb->dir = xstrdup("/proj/kb/");
}

static void test_brief__kb(void **state)
{
	char dir[] = "/tmp/t-brief-kb.XXXXXX", *cmd;
	struct profile p;
	struct brief b;
	struct kb kb;
	struct strbuf md = STRBUF_INIT;
	const struct brief_hotspot *h;
	json_t *doc, *hs, *k;

	kb_fixture(&kb, dir);
	build(&p, &b,
	      "malloc!/lib/libc.so.6;tokenize@/proj/src/tok.c:12;main@/proj/src/main.c:5 70\n"
	      "hash@/proj/src/h.c:3;main@/proj/src/main.c:6 30\n",
	      &proj, NULL);

	/* without a knowledge base: nothing about one */
	brief_format_md(&b, 0, &md);
	assert_null(strstr(md.buf, "knowledge base"));
	assert_null(strstr(md.buf, "tried before"));
	doc = brief_to_json(&b, 0);
	assert_true(json_is_null(json_object_get(doc, "kb")));
	hs = json_object_get(doc, "hotspots");
	assert_int_equal(json_array_size(json_object_get(json_array_get(hs, 0), "kb")), 0);
	json_decref(doc);

	assert_int_equal(brief_add_kb(&b, &kb), 0);
	h = hotspot(&b, "tokenize");
	assert_int_equal(h->nr_kb, BRIEF_KB_MAX);
	assert_int_equal(h->kb_total, 4);
	assert_string_equal(h->kb[0].slug, "one-malloc-per-line-29112026");
	assert_string_equal(h->kb[1].slug, "intern-tokens-29112026");
	assert_string_equal(h->kb[2].slug, "reuse-the-token-buffer-29112026");
	assert_int_equal(h->kb[1].verdict, VERDICT_KEEP);
	assert_null(h->kb[2].hypothesis);
	assert_string_equal(h->kb[0].change, "+3.1% cpu on big [+2.0, +4.2]");
	assert_true(strlen(h->kb[0].hypothesis) <= 163);
	assert_non_null(strstr(h->kb[0].hypothesis, "for every token; one buffer per line"));
	assert_string_equal(h->kb[0].hypothesis + strlen(h->kb[0].hypothesis) - 3, "...");
	assert_int_equal(hotspot(&b, "hash")->nr_kb, 0);	/* hash_line is another function */

	strbuf_reset(&md);
	brief_format_md(&b, 0, &md);
	assert_non_null(strstr(md.buf, "- knowledge base: kb, 5 attempts (`hotloop kb search WORDS`)\n"));
	assert_non_null(strstr(md.buf, "- tried before: reject (+3.1% cpu on big [+2.0, +4.2]) "
				       "kb/one-malloc-per-line-29112026: tokenize calls malloc"));
	assert_non_null(strstr(md.buf, "- tried before: keep (-12.3% cpu on big [-13.1, -11.4]) "
				       "kb/intern-tokens-29112026: fewer mallocs\n"));
	assert_non_null(strstr(md.buf, "- tried before: inconclusive (-0.4% cpu on big [-1.2, +0.5]) "
				       "kb/reuse-the-token-buffer-29112026\n"));
	assert_null(strstr(md.buf, "arena-for-tokens"));	/* the fourth: not shown */
	assert_non_null(strstr(md.buf, "- tried before: 1 more (`hotloop kb search --function 'tokenize'`)\n"));
	assert_null(strstr(md.buf, "more (`hotloop kb search --function 'hash'"));
	assert_non_null(strstr(md.buf, "## Suggested questions\n\n- `tokenize` was tried before and rejected, "
				       "+3.1% cpu on big [+2.0, +4.2]: see kb/one-malloc-per-line-29112026 and "
				       "the 3 attempts before it. What would make another attempt different?\n"
				       "- Can `tokenize` reuse memory"));

	doc = brief_to_json(&b, 0);
	k = json_object_get(doc, "kb");
	assert_string_equal(json_string_value(json_object_get(k, "dir")), "kb");
	assert_int_equal(json_integer_value(json_object_get(k, "attempts")), 5);
	hs = json_object_get(doc, "hotspots");
	k = json_object_get(json_array_get(hs, 0), "kb");
	assert_int_equal(json_array_size(k), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(k, 0), "slug")),
			    "one-malloc-per-line-29112026");
	assert_string_equal(json_string_value(json_object_get(json_array_get(k, 0), "verdict")), "reject");
	assert_true(json_is_string(json_object_get(json_array_get(k, 0), "change")));
	assert_true(json_is_null(json_object_get(json_array_get(k, 2), "hypothesis")));
	k = json_array_get(json_object_get(doc, "questions"), 0);
	assert_non_null(strstr(json_string_value(json_object_get(k, "question")), "was tried before and rejected"));
	assert_int_equal(json_integer_value(json_array_get(json_object_get(k, "hotspots"), 0)), 1);
	assert_int_equal(json_array_size(json_object_get(json_array_get(hs, 1), "kb")), 0);
	json_decref(doc);

	/* a kept attempt asks what is left */
	kb.entries[0].verdict = VERDICT_KEEP;
	assert_int_equal(brief_add_kb(&b, &kb), 0);
	strbuf_reset(&md);
	brief_format_md(&b, 0, &md);
	assert_non_null(strstr(md.buf, "- `tokenize` was improved before (kept), +3.1% cpu on big [+2.0, +4.2]: "
				       "see kb/one-malloc-per-line-29112026 and the 3 attempts before it. "
				       "What is left to gain, and where?\n"));

	strbuf_release(&md);
	done(&p, &b);
	kb_release(&kb);
	cmd = xstrfmt("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* o's 'key': a string equal to want. */
static void check_json_text(json_t *o, const char *key, const char *want)
{
	assert_non_null(o);
	assert_true(json_is_string(json_object_get(o, key)));
	assert_string_equal(json_string_value(json_object_get(o, key)), want);
}

static void test_brief__json_not_utf8(void **state)
{
	/* names and paths come from outside: a byte that is not UTF-8 must not lose the key */
	struct profile p;
	struct brief b;
	json_t *doc, *h, *r;
	char *s;

	build(&p, &b,
	      "bad\xff\xfename@/proj/d\xff/a.c:4;cal\xfeler@/proj/m.c:9!/usr/lib/l\xff.so;"
	      "main@/proj/m.c:1 50\n"
	      "ok@/proj/m.c:14;main@/proj/m.c:1 10\n",
	      &proj, NULL);
	doc = brief_to_json(&b, 0);
	h = json_array_get(json_object_get(doc, "hotspots"), 0);
	check_json_text(h, "function", "bad\xef\xbf\xbd\xef\xbf\xbdname");
	check_json_text(h, "file", "d\xef\xbf\xbd/a.c");
	check_json_text(h, "dso", "prog");
	assert_int_equal(json_array_size(json_object_get(h, "callers")), 1);
	check_json_text(json_array_get(json_object_get(h, "callers"), 0), "function", "cal\xef\xbf\xbdler");
	/* one question per kind of tag, each naming its hotspots */
	assert_true(json_is_array(json_object_get(doc, "questions")));
	assert_true(json_array_size(json_object_get(doc, "questions")) >= 1);
	r = json_array_get(json_object_get(doc, "questions"), 0);
	assert_true(json_is_string(json_object_get(r, "question")));
	assert_true(json_is_array(json_object_get(r, "hotspots")));
	assert_true(json_is_array(json_object_get(doc, "folded_tags")));
	assert_int_equal(json_array_size(json_object_get(doc, "hot_path")), b.nr_hot_path);
	r = json_object_get(doc, "hot_path");
	check_json_text(json_array_get(r, 0), "function", "main");
	check_json_text(json_array_get(r, 1), "function", "cal\xef\xbf\xbdler");
	check_json_text(json_array_get(r, 2), "function", "bad\xef\xbf\xbd\xef\xbf\xbdname");
	r = json_object_get(doc, "rollup");
	assert_int_equal(json_array_size(json_object_get(r, "dir")), b.nr_by_dir);
	assert_int_equal(json_array_size(json_object_get(r, "dso")), b.nr_by_dso);
	assert_non_null(s = json_dumps(doc, JSON_COMPACT));
	free(s);
	json_decref(doc);
	done(&p, &b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_brief__attribution_and_allocation),
		cmocka_unit_test(test_brief__tags),
		cmocka_unit_test(test_brief__no_false_tags),
		cmocka_unit_test(test_brief__owned_paths),
		cmocka_unit_test(test_brief__fallback_and_quality),
		cmocka_unit_test(test_brief__hot_path_and_rollups),
		cmocka_unit_test(test_brief__deep_recursion),
		cmocka_unit_test(test_brief__focus),
		cmocka_unit_test(test_brief__categories),
		cmocka_unit_test(test_brief__snippet_and_budget),
		cmocka_unit_test(test_brief__scale),
		cmocka_unit_test(test_brief__kb),
		cmocka_unit_test(test_brief__json_not_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
