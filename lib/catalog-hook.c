/*
 * catalog-hook.c: installing and removing the catalog's pre-commit hook
 * (catalog-hook.h). The hook is a short sh script naming the hotloop
 * binary and the hook it chains by absolute, single-quoted paths.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog-hook.h"
#include "git.h"
#include "strbuf.h"
#include "util.h"

/* s as one sh word: in single quotes, each ' as '\'' */
static void add_sh_quoted(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\'');
	for (; *s; s++)
		if (*s == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_addch(sb, *s);
	strbuf_addch(sb, '\'');
}

static bool is_ours(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	bool ours;

	if (read_file(&sb, path, 1 << 20)) {
		clear_last_error();
		return false;
	}
	ours = strstr(sb.buf, "\n" CAT_HOOK_MARKER "\n") != NULL;
	strbuf_release(&sb);
	return ours;
}

int cat_hook_status(const char *dir, struct cat_hook_status *st)
{
	struct strbuf out = STRBUF_INIT;
	struct stat sb;
	char *chained;

	if (git_run(dir, &out, NULL, "rev-parse", "--path-format=absolute", "--git-path", "hooks", NULL)) {
		strbuf_release(&out);
		return error("catalog hook needs a git repository: '%s' is not in one", dir);
	}
	strbuf_rtrim(&out);
	st->hooks_dir = strbuf_detach(&out, NULL);
	st->path = xstrfmt("%s/pre-commit", st->hooks_dir);
	st->state = CAT_HOOK_NONE;
	if (!lstat(st->path, &sb))
		st->state = S_ISREG(sb.st_mode) && is_ours(st->path) ? CAT_HOOK_OURS : CAT_HOOK_FOREIGN;
	chained = xstrfmt("%s/" CAT_HOOK_CHAINED, st->hooks_dir);
	st->chained = !lstat(chained, &sb);
	free(chained);
	return 0;
}

static char *hook_script(const char *hotloop, const char *chained, enum cat_severity min)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "#!/bin/sh\n"
		      "# A commit that adds a finding of hotloop's pattern catalog at or above\n"
		      "# the severity below is stopped (git commit --no-verify skips this).\n"
		      "# `hotloop catalog hook remove` takes this hook out and puts back the\n"
		      "# one it chains.\n"
		      CAT_HOOK_MARKER "\n"
		      "chained=");
	add_sh_quoted(&sb, chained);
	strbuf_addstr(&sb, "\nif [ -e \"$chained\" ]; then\n"
		      "\t\"$chained\" \"$@\" || exit $?\n"
		      "fi\n"
		      "hotloop=");
	add_sh_quoted(&sb, hotloop);
	strbuf_addf(&sb, "\nif [ ! -x \"$hotloop\" ]; then\n"
		    "\techo \"hotloop catalog hook: $hotloop is not there: install the hook again, or remove it\" >&2\n"
		    "\texit 1\n"
		    "fi\n"
		    "exec \"$hotloop\" catalog review --cached --severity %s\n", cat_severity_name(min));
	return strbuf_detach(&sb, NULL);
}

int cat_hook_install(const char *dir, const char *hotloop, enum cat_severity min,
		     struct cat_hook_status *st)
{
	char *chained = NULL, *script = NULL;
	bool moved = false;
	int ret = -1;

	if (cat_hook_status(dir, st))
		return -1;
	chained = xstrfmt("%s/" CAT_HOOK_CHAINED, st->hooks_dir);
	if (st->state == CAT_HOOK_FOREIGN) {
		if (st->chained) {
			error("'%s' is not hotloop's hook, and '%s' is taken: chain them by hand, "
			      "or move one away and install again", st->path, chained);
			goto out;
		}
		if (rename(st->path, chained)) {
			error("cannot move '%s' aside to '%s': %s", st->path, chained, strerror(errno));
			goto out;
		}
		moved = true;
	}
	if (mkdir_p(st->hooks_dir))
		goto undo;
	script = hook_script(hotloop, chained, min);
	if (write_file_atomic(st->path, script, strlen(script)))
		goto undo;
	if (chmod(st->path, 0755)) {
		error("cannot make '%s' executable: %s", st->path, strerror(errno));
		unlink(st->path);
		goto undo;
	}
	st->chained = st->chained || moved;
	st->state = CAT_HOOK_OURS;
	ret = 0;
	goto out;
undo:
	if (moved && rename(chained, st->path))
		error("cannot put '%s' back to '%s': %s", chained, st->path, strerror(errno));
out:
	free(script);
	free(chained);
	return ret;
}

int cat_hook_remove(const char *dir, struct cat_hook_status *st)
{
	char *chained;
	int ret = 0;

	if (cat_hook_status(dir, st))
		return -1;
	if (st->state == CAT_HOOK_FOREIGN)
		return error("'%s' is not hotloop's hook: left as it is", st->path);
	if (st->state == CAT_HOOK_NONE)
		return 0;
	chained = xstrfmt("%s/" CAT_HOOK_CHAINED, st->hooks_dir);
	if (st->chained)
		ret = rename(chained, st->path) ?
			error("cannot put '%s' back to '%s': %s", chained, st->path, strerror(errno)) : 0;
	else if (unlink(st->path))
		ret = error("cannot remove '%s': %s", st->path, strerror(errno));
	if (!ret) {
		st->state = st->chained ? CAT_HOOK_FOREIGN : CAT_HOOK_NONE;
		st->chained = false;
	}
	free(chained);
	return ret;
}

void cat_hook_status_release(struct cat_hook_status *st)
{
	free(st->hooks_dir);
	free(st->path);
	memset(st, 0, sizeof(*st));
}
