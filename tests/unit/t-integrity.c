/*
 * t-integrity: a record of a repository with staged, unstaged, untracked
 * and stashed work matches it until something of the user's changes; what
 * git and hotloop do beside it (refreshing the index, writing objects
 * again, moving the loop's branch, writing its state) is no change.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "integrity.h"
#include "project.h"
#include "strbuf.h"
#include "test-project.h"
#include "util.h"

struct fixture {
	char *dir, *state;
	struct project p;
	struct integrity in;
};

#define GIT "git -c user.name=t -c user.email=t@t "

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	const char *skip[2];
	char *conf;

	f->dir = tp_make(NULL);
	tp_sh(f->dir, "echo stash >>Makefile && " GIT "stash -q && echo staged >>spin.c && git add spin.c && "
		      "echo unstaged >>spin.c && echo untracked >notes.txt && mkdir -p .hotloop/runs && "
		      GIT "branch hotloop/t && ln -s spin.c link");
	conf = xstrfmt("%s/hotloop.conf", f->dir);
	if (project_open(&f->p, conf, PROJECT_NEED_GIT))
		fail_msg("cannot open the project");
	free(conf);
	f->state = xstrfmt("%s/.hotloop", f->dir);
	skip[0] = f->state;
	skip[1] = NULL;
	f->in = (struct integrity)INTEGRITY_INIT;
	if (integrity_record(&f->in, &f->p, skip, "refs/heads/hotloop/t"))
		fail_msg("cannot record: %s", last_error());
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	integrity_release(&f->in);
	project_release(&f->p);
	free(f->state);
	tp_remove(f->dir);
	free(f);
	return 0;
}

/* Check f's record after 'cmd'; 'expect' NULL: no change, else a line of what changed. */
static void expect_after(struct fixture *f, const char *cmd, const char *expect)
{
	struct strbuf what = STRBUF_INIT;
	int ret;

	if (cmd)
		tp_sh(f->dir, "%s", cmd);
	ret = integrity_check(&f->in, &what, 20);
	if (!expect) {
		if (ret)
			fail_msg("after '%s': %d, %s%s", cmd ? cmd : "", ret, what.buf, ret < 0 ? last_error() : "");
	} else {
		assert_int_equal(ret, 1);
		if (!strstr(what.buf, expect))
			fail_msg("after '%s': '%s' not in:\n%s", cmd, expect, what.buf);
	}
	strbuf_release(&what);
}

static void test_integrity__unchanged(void **state)
{
	struct fixture *f = *state;

	expect_after(f, NULL, NULL);
	/* what git and hotloop do beside the user's work */
	expect_after(f, "git status >/dev/null && touch notes.txt && git hash-object -w spin.c && git show :spin.c | git hash-object -w --stdin && "
			"echo x >.hotloop/runs/log && git update-ref refs/heads/hotloop/t HEAD && "
			"chmod 644 notes.txt", NULL);
}

static void test_integrity__files(void **state)
{
	struct fixture *f = *state;

	expect_after(f, "echo more >>notes.txt", "notes.txt: modified");
	expect_after(f, "echo x >new.c", "new.c: added");
	expect_after(f, "rm Makefile", "Makefile: deleted");
	expect_after(f, "chmod +x spin.c", "spin.c: changed mode");
	expect_after(f, "ln -sf Makefile link", "link: modified");
	expect_after(f, "mkdir emptydir", "emptydir: added");
	/* the same size and times put back: the content decides */
	expect_after(f, "cp -p spin.c /tmp/spin.$$ && sed -i 's/return 0/return 1/' spin.c && "
			"touch -r /tmp/spin.$$ spin.c && rm /tmp/spin.$$", "spin.c: modified");
}

static void test_integrity__git_state(void **state)
{
	struct fixture *f = *state;

	expect_after(f, GIT "branch other", "ref now: refs/heads/other");
	expect_after(f, "git symbolic-ref HEAD refs/heads/unborn", "HEAD was 'ref: refs/heads/");
	expect_after(f, "git update-index --skip-worktree tests/run", "index entry now: S ");
	expect_after(f, "git update-index --assume-unchanged hotloop.conf", "index entry now: h ");
	expect_after(f, "git reset -q", "index entry was:");
	expect_after(f, "git stash drop -q", "the stash changed");
	expect_after(f, "echo '#!/bin/sh' >.git/hooks/pre-commit", "git directory: hooks/pre-commit: added");
	expect_after(f, "git config x.y z", "git directory: config: modified");
	expect_after(f, "rm -rf .git/objects/??", "object store: ");
}

/* A skipped directory that does not exist yet, named through a symlink: still skipped once made. */
static void test_integrity__skip_to_be(void **state)
{
	struct fixture *f = *state;
	struct integrity in = INTEGRITY_INIT;
	struct strbuf what = STRBUF_INIT;
	char *kb = xstrfmt("%s/self/kb", f->dir);
	const char *skip[] = { kb, NULL };

	tp_sh(f->dir, "ln -s . self");
	assert_int_equal(integrity_record(&in, &f->p, skip, NULL), 0);
	tp_sh(f->dir, "mkdir kb && echo report >kb/a.md");
	assert_int_equal(integrity_check(&in, &what, 20), 0);
	tp_sh(f->dir, "echo more >>notes.txt");
	assert_int_equal(integrity_check(&in, &what, 20), 1);
	assert_non_null(strstr(what.buf, "notes.txt: modified"));
	assert_null(strstr(what.buf, "kb"));
	strbuf_release(&what);
	integrity_release(&in);
	free(kb);
}

static void test_integrity__deleted_git(void **state)
{
	struct fixture *f = *state;
	struct strbuf what = STRBUF_INIT;

	tp_sh(f->dir, "rm -rf .git");
	/* what cannot be read is an error, never "unchanged" */
	assert_int_equal(integrity_check(&f->in, &what, 20), -1);
	strbuf_release(&what);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_integrity__unchanged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_integrity__files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_integrity__git_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_integrity__skip_to_be, setup, teardown),
		cmocka_unit_test_setup_teardown(test_integrity__deleted_git, setup, teardown),
	};

	if (!tp_can_build()) {
		printf("skip t-integrity: needs git\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
