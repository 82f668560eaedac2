/*
 * t-doctor.c: unit tests for the doctor's pure parts: the frame pointer
 * prologue classifier (as a table of instruction bytes per architecture)
 * and command resolution on $PATH, which must behave like a shell's.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util.h"
#include "doctor.h"

#define FP DOCTOR_PROLOGUE_FP
#define NOFP DOCTOR_PROLOGUE_NO_FP
#define NEUTRAL DOCTOR_PROLOGUE_NEUTRAL

static const struct prologue_case {
	const char *what;
	unsigned machine;
	bool big_endian;
	unsigned char code[24];
	size_t len;
	enum doctor_prologue want;
} cases[] = {
	{ "push rbp; mov rsp,rbp", EM_X86_64, false,
	  { 0x55, 0x48, 0x89, 0xe5, 0x53 }, 5, FP },
	{ "endbr64 then the frame", EM_X86_64, false,
	  { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5 }, 8, FP },
	{ "mov rbp,rsp in its 8b form", EM_X86_64, false,
	  { 0x55, 0x48, 0x8b, 0xec }, 4, FP },
	{ "gcc schedules a mov $imm between push and mov", EM_X86_64, false,
	  { 0x55, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x48, 0x89, 0xe5, 0x41, 0x56 }, 11, FP },
	{ "a register move before the frame", EM_X86_64, false,
	  { 0x49, 0x89, 0xf4, 0x55, 0x48, 0x89, 0xe5 }, 7, FP },
	{ "push r12 first: no frame pointer", EM_X86_64, false,
	  { 0x41, 0x54, 0x49, 0x89, 0xf4, 0x55, 0x89, 0xfd }, 8, NOFP },
	{ "sub $0x18,%rsp first", EM_X86_64, false,
	  { 0x48, 0x83, 0xec, 0x18, 0xc3 }, 5, NOFP },
	{ "call before any frame", EM_X86_64, false,
	  { 0xe8, 0xcb, 0xff, 0xff, 0xff, 0x48, 0x35, 0x55, 0x55, 0x00, 0x00 }, 11, NOFP },
	{ "push rbp used as a register (mov %edi,%ebp)", EM_X86_64, false,
	  { 0x55, 0x89, 0xfd, 0x53 }, 4, NOFP },
	{ "push rbp then push rbx before the mov", EM_X86_64, false,
	  { 0x55, 0x53, 0x48, 0x89, 0xe5 }, 5, NOFP },
	{ "a leaf: movabs, mov, nop", EM_X86_64, false,
	  { 0x48, 0xb9, 0x2d, 0x7f, 0x95, 0x4c, 0x2d, 0xf4, 0x51, 0x58, 0x48, 0x89, 0xf8,
	    0x31, 0xd2, 0x90 }, 16, NEUTRAL },
	{ "a leaf: test, jle", EM_X86_64, false,
	  { 0x85, 0xf6, 0x7e, 0x59 }, 4, NEUTRAL },
	{ "push rbp cut off before the mov", EM_X86_64, false,
	  { 0x55, 0x48, 0x89 }, 3, NEUTRAL },
	{ "nothing to read", EM_X86_64, false, { 0 }, 0, NEUTRAL },
	{ "rip-relative lea, then the frame", EM_X86_64, false,
	  { 0x48, 0x8d, 0x05, 0x10, 0x20, 0x00, 0x00, 0x55, 0x48, 0x89, 0xe5 }, 11, FP },
	{ "i386: push ebp; mov esp,ebp", EM_386, false,
	  { 0x55, 0x89, 0xe5 }, 3, FP },
	{ "i386: push ebx first", EM_386, false,
	  { 0x53, 0x83, 0xec, 0x08 }, 4, NOFP },
	/* arm64, little endian: stp x29, x30, [sp, #-32]!; mov x29, sp */
	{ "arm64: stp x29,x30 pre-index; mov x29,sp", EM_AARCH64, false,
	  { 0xfd, 0x7b, 0xbe, 0xa9, 0xfd, 0x03, 0x00, 0x91 }, 8, FP },
	{ "arm64: paciasp first", EM_AARCH64, false,
	  { 0x3f, 0x23, 0x03, 0xd5, 0xfd, 0x7b, 0xbf, 0xa9, 0xfd, 0x03, 0x00, 0x91 }, 12, FP },
	{ "arm64: sub sp; stp x29,x30,[sp,#16]; add x29,sp,#16", EM_AARCH64, false,
	  { 0xff, 0xc3, 0x00, 0xd1, 0xfd, 0x7b, 0x01, 0xa9, 0xfd, 0x43, 0x00, 0x91 }, 12, FP },
	{ "arm64: str x30,[sp,#-16]! without x29", EM_AARCH64, false,
	  { 0xfe, 0x0f, 0x1f, 0xf8, 0x00, 0x00, 0x00, 0x94 }, 8, NOFP },
	{ "arm64: bl before any frame", EM_AARCH64, false,
	  { 0x00, 0x00, 0x00, 0x94, 0xc0, 0x03, 0x5f, 0xd6 }, 8, NOFP },
	{ "arm64: a leaf that returns", EM_AARCH64, false,
	  { 0x00, 0x04, 0x00, 0x91, 0xc0, 0x03, 0x5f, 0xd6 }, 8, NEUTRAL },
	{ "arm64 big endian: stp; mov", EM_AARCH64, true,
	  { 0xa9, 0xbe, 0x7b, 0xfd, 0x91, 0x00, 0x03, 0xfd }, 8, FP },
	{ "another architecture proves nothing", EM_RISCV, false,
	  { 0x55, 0x48, 0x89, 0xe5 }, 4, NEUTRAL },
};

static void test_doctor__prologues(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct prologue_case *c = &cases[i];
		enum doctor_prologue got;

		/* a copy of exactly len bytes, so reading past it is caught by ASan */
		unsigned char *code = xmalloc(c->len ? c->len : 1);

		memcpy(code, c->code, c->len);
		got = doctor_classify_prologue(c->machine, c->big_endian, code, c->len);
		free(code);
		if (got != c->want)
			fail_msg("%s: got %d, want %d", c->what, got, c->want);
	}
}

struct fixture {
	char dir[32];
	char *old_path;
};

static int setup_path(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	const char *path = getenv("PATH");
	char *p;

	snprintf(f->dir, sizeof(f->dir), "/tmp/t-doctor.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->old_path = path ? xstrdup(path) : NULL;
	p = xstrfmt("%s/a", f->dir);
	mkdir(p, 0755);
	free(p);
	p = xstrfmt("%s/b", f->dir);
	mkdir(p, 0755);
	free(p);
	*state = f;
	return 0;
}

static int teardown_path(void **state)
{
	struct fixture *f = *state;
	char *cmd = xstrfmt("rm -rf '%s'", f->dir);

	if (f->old_path)
		setenv("PATH", f->old_path, 1);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", f->dir);
	free(cmd);
	free(f->old_path);
	free(f);
	return 0;
}

static void make_file(const char *dir, const char *sub, const char *name, mode_t mode)
{
	char *p = xstrfmt("%s/%s/%s", dir, sub, name);
	FILE *fp = fopen(p, "w");

	assert_non_null(fp);
	fputs("#!/bin/sh\n", fp);
	fclose(fp);
	assert_int_equal(chmod(p, mode), 0);
	free(p);
}

static void test_doctor__resolve(void **state)
{
	struct fixture *f = *state;
	char *path, *want, *search = xstrfmt("%s/a:%s/b", f->dir, f->dir);

	make_file(f->dir, "a", "tool", 0644);	/* found first, cannot run */
	make_file(f->dir, "b", "tool", 0755);
	make_file(f->dir, "a", "plain", 0644);
	setenv("PATH", search, 1);

	/* a non-executable match is passed over for a later executable one */
	assert_int_equal(doctor_resolve_command("tool", &path), 0);
	want = xstrfmt("%s/b/tool", f->dir);
	assert_string_equal(path, want);
	free(want);
	free(path);

	/* only a match without any x bit (even root cannot run it): EACCES */
	assert_int_equal(doctor_resolve_command("plain", &path), -EACCES);
	want = xstrfmt("%s/a/plain", f->dir);
	assert_string_equal(path, want);
	free(want);
	free(path);

	assert_int_equal(doctor_resolve_command("no-such-tool-anywhere", &path), -ENOENT);
	assert_null(path);
	assert_int_equal(doctor_resolve_command("", &path), -ENOENT);
	assert_null(path);

	/* a name with a slash is never searched */
	assert_int_equal(doctor_resolve_command("b/tool", &path), -ENOENT);
	assert_null(path);
	want = xstrfmt("%s/b", f->dir);
	assert_int_equal(doctor_resolve_command(want, &path), -EISDIR);
	free(path);
	free(want);

	want = xstrfmt("%s/b/tool", f->dir);
	path = doctor_which(want);
	assert_non_null(path);
	assert_string_equal(path, want);
	free(path);
	free(want);
	assert_null(doctor_which("no-such-tool-anywhere"));
	free(search);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doctor__prologues),
		cmocka_unit_test_setup_teardown(test_doctor__resolve, setup_path, teardown_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
