/*
 * t-perfscript.c: unit tests of lib/perfscript.c. Cases are tables of perf
 * script text and the folded stacks (or the error) it must give: header
 * and frame variants, source lines, inline frames, kernel and JIT frames,
 * hostile input; then sample types, labels, sniffing, the regression
 * inputs under tests/data/perfscript-bad/, and that reading in chunks of
 * any size (lines cut anywhere, longer than a chunk) or from a file gives
 * the same profile or the same error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "folded.h"
#include "perfscript.h"

static struct strbuf errmsg = STRBUF_INIT;

static void keep(const char *prefix, const char *msg)
{
	strbuf_reset(&errmsg);
	strbuf_addstr(&errmsg, msg);
}

static int setup(void **state)
{
	set_error_routine(keep);
	set_warn_routine(keep);
	return 0;
}

/* Folded stacks of 'text' weighted by sample type 'type', or "error: MSG". */
static char *folded_of(const char *text, const char *type)
{
	struct profile p;
	struct strbuf out = STRBUF_INIT;
	int idx;

	profile_init(&p);
	strbuf_reset(&errmsg);
	if (perfscript_parse(&p, text, strlen(text), "t")) {
		strbuf_addf(&out, "error: %s", errmsg.buf);
	} else {
		idx = profile_find_sample_type(&p, type);
		if (idx < 0)
			strbuf_addf(&out, "no type %s", type);
		else if (folded_write(&p, idx, &out))
			strbuf_addf(&out, "write error: %s", errmsg.buf);
	}
	profile_release(&p);
	return strbuf_detach(&out, NULL);
}

struct parse_case {
	const char *name, *text, *type, *want;
};

#define HDR "prog 123 [001] 10.000001:     250000 cpu-clock:ppp: \n"
#define F_HOT "\t    1214 hot+0x24 (/usr/bin/prog)\n"
#define F_MAIN "\t    10d7 main+0x57 (/usr/bin/prog)\n"

static const struct parse_case parse_cases[] = {
	/* headers */
	{ "full header", HDR F_HOT F_MAIN "\n", "samples", "main;hot 1\n" },
	{ "period", HDR F_HOT F_MAIN "\n" HDR F_HOT F_MAIN "\n", "cpu", "main;hot 500000\n" },
	{ "pid/tid", "prog 12/13 10.5: 7 cycles: \n" F_HOT "\n", "cycles", "hot 7\n" },
	{ "event with modifiers", "prog 12 10.5: 7 cycles:u: \n" F_HOT "\n", "cycles", "hot 7\n" },
	{ "task-clock is cpu", "prog 12 10.5: 9 task-clock: \n" F_HOT "\n", "cpu", "hot 9\n" },
	{ "no pid", "prog 10.000001: \n" F_HOT "\n", "samples", "hot 1\n" },
	{ "comm and tid only", "prog 123\n" F_HOT "\n", "samples", "hot 1\n" },
	{ "comm with spaces", "V8 Worker 2 25607 [000] 94564.109216: 100 cycles: \n" F_HOT "\n",
	  "cycles", "hot 100\n" },
	{ "one-character comm", "a 1 [000] 1.000001: 1 cpu-clock: \n" F_HOT "\n", "samples", "hot 1\n" },
	{ "hex-looking comm", "cafe 9 1.5: \n" F_HOT "\n", "samples", "hot 1\n" },
	{ "no period", "prog 123 [001] 10.000001: cpu-clock: \n" F_HOT "\n", "samples", "hot 1\n" },
	{ "comments and blanks", "# header\n#\n\n" HDR F_HOT "\n\n\n", "samples", "hot 1\n" },
	{ "crlf", "prog 1 1.5: \r\n\t 1214 hot (/usr/bin/prog)\r\n\r\n", "samples", "hot 1\n" },
	{ "no blank line between samples", HDR F_HOT HDR F_MAIN, "samples", "hot 1\nmain 1\n" },
	{ "two events, one column each",
	  "p 1 1.5: 3 cycles: \n" F_HOT "\np 1 1.6: 5 instructions: \n" F_HOT "\n",
	  "instructions", "hot 5\n" },
	{ "header without callchain",
	  "            prog 30385 20342.109407:     250000 cpu-clock:pppH:      7fa9255ce3e0 hot+0x270 (/usr/bin/prog)\n"
	  "               a 30385 20342.109408:     250000 cpu-clock:pppH:      7fa9255ce3e0 hot+0x270 (/usr/bin/prog)\n",
	  "samples", "hot 2\n" },
	{ "header without callchain or time",
	  "          prog 30385      7fa9255ce3e0 hot (/usr/bin/prog)\n", "samples", "hot 1\n" },
	{ "tracepoint payload", "prog 1 1.5: sched:sched_switch: prev_comm=x prev_pid=1\n" F_HOT "\n",
	  "samples", "hot 1\n" },
	{ "header only", "          prog 1 1.5: \n          prog 1 1.6: \n", "samples", "" },
	/* frames */
	{ "no offsets", "p 1 1.5: \n\t 1214 hot (/usr/bin/prog)\n\t 10d7 main (/usr/bin/prog)\n",
	  "samples", "main;hot 1\n" },
	{ "kernel", "p 1 1.5: \n\tffffffff81000000 do_syscall_64+0x5c ([kernel.kallsyms])\n" F_MAIN,
	  "samples", "main;do_syscall_64_[k] 1\n" },
	{ "kernel module", "p 1 1.5: \n\tffffffffc0a1b2c3 nf_hook_slow+0x40 ([nf_conntrack])\n"
	  "\tffffffff81000000 do_syscall_64+0x5c ([kernel.kallsyms])\n" F_MAIN,
	  "samples", "main;do_syscall_64_[k];nf_hook_slow_[k] 1\n" },
	{ "bracketed user dso", "p 1 1.5: \n\t7ffc1234 __vdso_clock_gettime+0x1 ([vdso])\n" F_MAIN,
	  "samples", "main;__vdso_clock_gettime 1\n" },
	{ "unknown symbol, known dso", "p 1 1.5: \n\t 7f00 [unknown] (/lib/libc.so.6)\n" F_MAIN,
	  "samples", "main;[libc.so.6] 1\n" },
	{ "unknown everything", "p 1 1.5: \n\t 7f00 [unknown] ([unknown])\n" F_MAIN,
	  "samples", "main;[unknown] 1\n" },
	{ "jit", "p 1 1.5: \n\t 7f722d142778 LazyCompile:~run /app/x.js:1 (/tmp/perf-19982.map)\n",
	  "samples", "LazyCompile:~run /app/x.js:1 1\n" },
	{ "c++ symbol", "p 1 1.5: \n\t 1a0 ns::M::multiply(int) const+0x10 (/usr/bin/prog)\n",
	  "samples", "ns::M::multiply(int) const 1\n" },
	{ "deleted dso", "p 1 1.5: \n\t 1a0 hot+0x10 (/usr/bin/prog (deleted))\n",
	  "samples", "hot 1\n" },
	{ "address only", "p 1 1.5: \n\t 1a0\n", "samples", "[unknown] 1\n" },
	{ "no header (-F ip,sym)", "\n\n\t 1214 hot\n\t 10d7 main\n\n\n\t 1214 hot\n\t 10d7 main\n",
	  "samples", "main;hot 2\n" },
	{ "identical samples merge", HDR F_HOT F_MAIN "\n" HDR F_HOT F_MAIN "\n" HDR F_MAIN "\n",
	  "samples", "main 1\nmain;hot 2\n" },
	/* source lines and inline frames */
	{ "srcline", HDR F_HOT "  prog.c:10\n" F_MAIN "  prog.c:36\n"
	  "\tffffffff81000000 irq+0x1 ([kernel.kallsyms])\n  [kernel.kallsyms][ffffffff81000000]\n"
	  "\t 2724a __libc_start_call_main+0x7a (/lib/libc.so.6)\n  libc.so.6[2724a]\n",
	  "samples", "__libc_start_call_main;irq_[k];main;hot 1\n" },
	{ "srcline without a file", HDR F_HOT "  :0\n", "samples", "hot 1\n" },
	{ "srcline with discriminator", HDR F_HOT "  prog.c:10 (discriminator 3)\n", "samples",
	  "hot 1\n" },
	{ "inline", HDR "\t 1275 mix_step (inlined)\n\t 1275 outer+0x35 (/usr/bin/prog)\n" F_MAIN,
	  "samples", "main;outer;mix_step_[i] 1\n" },
	{ "inline at the root", HDR "\t 1275 mix_step (inlined)\n", "samples", "mix_step 1\n" },
	/* errors */
	{ "garbage header", "%%% nothing here\n", "samples",
	  "error: cannot read 't': line 1: neither a sample header nor a frame: '%%% nothing here'" },
	{ "garbage frame", HDR F_HOT "\tzzz what\n", "samples",
	  "error: cannot read 't': line 3: neither a sample header nor a frame: 'zzz what'" },
	{ "srcline under a header", HDR "  prog.c:10\n", "samples",
	  "error: cannot read 't': line 2: a source line with no frame above it: 'prog.c:10'" },
	{ "address too long", HDR "\t 12345678901234567 hot (/usr/bin/prog)\n", "samples",
	  "error: cannot read 't': line 2: neither a sample header nor a frame: '12345678901234567 hot (/usr/bin/prog)'" },
};

static void test_perfscript__cases(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];
		char *got = folded_of(c->text, c->type);

		if (strcmp(got, c->want))
			fail_msg("case '%s':\nwant: %s\ngot:  %s", c->name, c->want, got);
		free(got);
	}
}

/* A NUL byte (the table's strings stop at one). */
static void test_perfscript__nul(void **state)
{
	static const char text[] = "p 1 1.5: \n\t 1214 h\0t (/x)\n";
	struct profile p;

	profile_init(&p);
	assert_int_equal(perfscript_parse(&p, text, sizeof(text) - 1, "t"), -1);
	assert_string_equal(errmsg.buf,
			    "cannot read 't': line 2: contains a NUL byte (is this a binary file?)");
	assert_int_equal(p.nr_samples, 0);
	profile_release(&p);
}

static void test_perfscript__hostile_sizes(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct profile p;

	/* a 4 MiB line */
	strbuf_addstr(&sb, "p 1 1.5: \n\t 1214 ");
	for (size_t i = 0; i < ((size_t)4 << 20); i++)
		strbuf_addch(&sb, 'x');
	strbuf_addch(&sb, '\n');
	profile_init(&p);
	assert_int_equal(perfscript_parse(&p, sb.buf, sb.len, "t"), -1);
	assert_non_null(strstr(errmsg.buf, "line 2: longer than"));
	profile_release(&p);

	/* a stack a million frames deep */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "p 1 1.5: \n");
	for (size_t i = 0; i < 1000000; i++)
		strbuf_addstr(&sb, "\t 1214 f (/x)\n");
	profile_init(&p);
	assert_int_equal(perfscript_parse(&p, sb.buf, sb.len, "t"), -1);
	assert_string_equal(errmsg.buf, "cannot read 't': line 65538: stack deeper than 65536 frames");
	profile_release(&p);
	strbuf_release(&sb);
}

static void test_perfscript__model(void **state)
{
	static const char text[] =
		"my prog 10/11 [000] 1.5: 250000 cpu-clock: \n"
		"\tffffffff81000000 do_syscall_64+0x5c ([kernel.kallsyms])\n"
		"\t 1214 hot+0x24 (/usr/lib/libx.so)\n"
		"  x.c:7\n"
		"\t 10d7 main+0x57 (/usr/bin/my prog)\n"
		"\n";
	struct profile p;
	const struct pf_sample *s;
	struct pf_frame *frames = NULL;
	size_t alloc = 0, n;

	profile_init(&p);
	assert_int_equal(perfscript_parse(&p, text, strlen(text), "t"), 0);
	assert_int_equal(p.nr_sample_type, 2);
	assert_string_equal(profile_string(&p, p.sample_type[0].type), "samples");
	assert_string_equal(profile_string(&p, p.sample_type[1].type), "cpu");
	assert_string_equal(profile_string(&p, p.sample_type[1].unit), "nanoseconds");
	assert_string_equal(profile_string(&p, p.default_sample_type), "cpu");
	/* the main binary is the first mapping, whatever the order seen */
	assert_string_equal(profile_string(&p, p.mappings[0].filename), "/usr/bin/my prog");
	assert_int_equal(p.nr_samples, 1);
	s = &p.samples[0];
	assert_string_equal(profile_sample_label(&p, s, "comm"), "my prog");
	assert_int_equal(s->nlabel, 3);
	assert_int_equal(profile_sample_values(&p, s)[1], 250000);
	n = profile_sample_frames(&p, s, &frames, &alloc);
	assert_int_equal(n, 3);
	assert_true(frame_is_kernel(&p, &frames[0]));
	assert_string_equal(frame_name(&p, &frames[1]), "hot");
	assert_string_equal(frame_file(&p, &frames[1]), "x.c");
	assert_int_equal(frames[1].line, 7);
	assert_int_equal(frames[1].loc->address, 0x1214);
	assert_string_equal(frame_dso(&p, &frames[1]), "libx.so");
	assert_false(frame_is_kernel(&p, &frames[2]));
	free(frames);
	profile_release(&p);
}

struct sniff_case {
	const char *text;
	bool want;
};

static const struct sniff_case sniff_cases[] = {
	{ HDR F_HOT, true },
	{ "# comment\n" HDR F_HOT, true },
	{ "          prog 1 1.5: 1 cpu-clock:      7f00 hot+0x1 (/x)\n", true },
	{ "\n\t 1214 hot\n", true },
	{ "main;hot 12\nmain;cold 3\n", false },
	{ "main;hot 12 14\n", false },
	{ "a 1\n  b 2\n", false },
	{ "\x0a\x04\x08\x01\x10\x02", false },
	{ "", false },
};

static void test_perfscript__sniff(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(sniff_cases); i++)
		if (perfscript_sniff(sniff_cases[i].text, strlen(sniff_cases[i].text)) !=
		    sniff_cases[i].want)
			fail_msg("sniff case %zu: want %d", i, sniff_cases[i].want);
}

static char *data_dir(const char *sub)
{
	const char *env = getenv("HOTLOOP_TEST_DATA");
	const char *file = __FILE__, *slash;

	if (env)
		return xstrfmt("%s/%s", env, sub);
	slash = strstr(file, "tests/unit/");
	if (!slash)
		return xstrfmt("tests/data/%s", sub);
	return xstrfmt("%.*stests/data/%s", (int)(slash - file), file, sub);
}

/*
 * Inputs that once crashed (found by fuzz/fuzz-perfscript): each parses
 * into a profile that validates and writes, or fails with an error.
 */
static void test_perfscript__regressions(void **state)
{
	char *dir = data_dir("perfscript-bad");
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t seen = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
		struct profile p;
		char *path;

		if (de->d_name[0] == '.')
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		assert_int_equal(read_file(&sb, path, 1 << 20), 0);
		profile_init(&p);
		if (!perfscript_parse(&p, sb.buf, sb.len, path)) {
			assert_int_equal(profile_validate(&p), 0);
			for (size_t i = 0; i < p.nr_sample_type; i++)
				assert_int_equal(folded_write(&p, (int)i, &out), 0);
		} else {
			assert_non_null(strstr(errmsg.buf, path));
		}
		seen++;
		profile_release(&p);
		strbuf_release(&out);
		strbuf_release(&sb);
		free(path);
	}
	closedir(d);
	free(dir);
	assert_true(seen > 0);
}

/* Every sample type's folded stacks of what ret and p hold, or the error. */
static char *outcome(int ret, struct profile *p)
{
	struct strbuf out = STRBUF_INIT;

	if (ret) {
		strbuf_addf(&out, "error: %s", errmsg.buf);
		return strbuf_detach(&out, NULL);
	}
	for (size_t i = 0; i < p->nr_sample_type; i++) {
		strbuf_addf(&out, "[%s]\n", profile_string(p, p->sample_type[i].type));
		assert_int_equal(folded_write(p, (int)i, &out), 0);
	}
	return strbuf_detach(&out, NULL);
}

static char *chunked(const char *text, size_t len, size_t chunk)
{
	struct profile p;
	char *o;

	profile_init(&p);
	strbuf_reset(&errmsg);
	o = outcome(perfscript_parse_chunked(&p, text, len, "t", chunk), &p);
	profile_release(&p);
	return o;
}

static void same_in_chunks(const char *name, const char *text, size_t len)
{
	static const size_t chunks[] = { 1, 2, 3, 7, 8, 9, 31, 64 };
	char *want = chunked(text, len, 0);

	for (size_t i = 0; i < ARRAY_SIZE(chunks); i++) {
		char *got = chunked(text, len, chunks[i]);

		if (strcmp(got, want))
			fail_msg("case '%s', chunks of %zu:\nwant: %s\ngot:  %s",
				 name, chunks[i], want, got);
		free(got);
	}
	free(want);
}

/* Each case, read a byte at a time and in chunks that cut lines anywhere. */
static void test_perfscript__chunks(void **state)
{
	static const char nul[] = "p 1 1.5: \n\t 1214 h\0t (/x)\n";

	for (size_t i = 0; i < ARRAY_SIZE(parse_cases); i++)
		same_in_chunks(parse_cases[i].name, parse_cases[i].text,
			       strlen(parse_cases[i].text));
	same_in_chunks("nul", nul, sizeof(nul) - 1);
}

/* Cut short at every byte: whole or in chunks, the same profile or error. */
static void test_perfscript__truncated_in_chunks(void **state)
{
	static const char text[] =
		"my prog 10/11 [000] 1.5: 250000 cpu-clock: \n"
		"\tffffffff81000000 do_syscall_64+0x5c ([kernel.kallsyms])\n"
		"\t 1214 hot+0x24 (/usr/lib/libx.so)\n"
		"  x.c:7\n"
		"\t 10d7 main+0x57 (/usr/bin/my prog)\n"
		"\n"
		"my prog 10/11 [000] 1.6: 250000 cpu-clock: \n"
		"\t 1214 hot+0x24 (/usr/lib/libx.so)  \n"
		"\t 10d7 main+0x57 (/usr/bin/my prog)\n";

	for (size_t n = 0; n <= sizeof(text) - 1; n++) {
		char *name = xstrfmt("cut at %zu", n);

		same_in_chunks(name, text, n);
		free(name);
	}
}

/* A frame line far longer than a chunk, and one line over the limit. */
static void test_perfscript__long_lines(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct profile p;
	char *o;

	strbuf_addstr(&sb, "p 1 1.5: \n\t 1214 ");
	strbuf_addchars(&sb, 'f', 300000);
	strbuf_addstr(&sb, " (/x)\n\n");
	o = chunked(sb.buf, sb.len, 4096);
	assert_non_null(strstr(o, "[samples]\nfff"));
	free(o);
	same_in_chunks("long frame", sb.buf, sb.len);

	strbuf_reset(&sb);
	strbuf_addstr(&sb, "p 1 1.5: \n\t 1214 ");
	strbuf_addchars(&sb, 'f', PERFSCRIPT_MAX_LINE);
	profile_init(&p);
	assert_int_equal(perfscript_parse_chunked(&p, sb.buf, sb.len, "t", 1000), -1);
	assert_string_equal(errmsg.buf, "cannot read 't': line 2: longer than 1048576 bytes");
	profile_release(&p);
	strbuf_release(&sb);
}

/* From a file: the head already read, then the rest from the descriptor. */
static void test_perfscript__read_fd(void **state)
{
	static const char text[] = HDR F_HOT F_MAIN "\n" HDR F_HOT "\n";
	char path[] = "/tmp/t-perfscript.XXXXXX";
	int fd = mkstemp(path);
	struct profile p;
	char *want = chunked(text, sizeof(text) - 1, 0), *got;

	assert_true(fd >= 0);
	assert_int_equal(write_full(fd, text, sizeof(text) - 1), 0);
	for (size_t head = 0; head < sizeof(text); head += 13) {
		assert_int_equal(lseek(fd, (off_t)head, SEEK_SET), (off_t)head);
		profile_init(&p);
		strbuf_reset(&errmsg);
		got = outcome(perfscript_read_fd(&p, fd, text, head, "t"), &p);
		assert_string_equal(got, want);
		free(got);
		profile_release(&p);
	}
	close(fd);
	unlink(path);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfscript__cases),
		cmocka_unit_test(test_perfscript__nul),
		cmocka_unit_test(test_perfscript__hostile_sizes),
		cmocka_unit_test(test_perfscript__model),
		cmocka_unit_test(test_perfscript__sniff),
		cmocka_unit_test(test_perfscript__regressions),
		cmocka_unit_test(test_perfscript__chunks),
		cmocka_unit_test(test_perfscript__truncated_in_chunks),
		cmocka_unit_test(test_perfscript__long_lines),
		cmocka_unit_test(test_perfscript__read_fd),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
