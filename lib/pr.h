/*
 * pr.h: the kept changes of a loop's branch as pull requests. pr_run()
 * finds the branch's kept commits (those its base does not have), writes
 * each one's body (its kb report.md, the diff stat, where it stacks), and
 * either runs the configured [pr] command once per commit, on a local head
 * branch per commit (each stacked on the one before), or writes `git
 * format-patch` files beside the bodies. Nothing is pushed but by that
 * command. A struct pr_result owns every string in it until
 * pr_result_release(); the spec stays the caller's.
 */
#ifndef HOTLOOP_PR_H
#define HOTLOOP_PR_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct project;
struct kb_entry;
struct json_t;

struct pr_spec {
	const struct project *project;	/* opened with PROJECT_NEED_GIT */
	const char *branch;		/* the loop's branch; NULL: the newest hotloop/ branch */
	const char *base;		/* what the first PR goes into; NULL: the branch HEAD is on */
	const char *command;		/* NULL: [pr] command; "": format-patch */
	const char *out_dir;		/* NULL: .hotloop/pr/<branch> */
	bool dry_run;			/* write the bodies (and patches); run nothing, make no branch */
};

/* One kept commit, as a pull request. */
struct pr_item {
	char *commit, *title;
	char *kb_slug;			/* its kb entry, or NULL when the kb has none */
	char *body;			/* the body's file */
	char *patch;			/* format-patch: the patch's file */
	char *head, *base;		/* command: the head branch made for it, and what it goes into */
	char *command;			/* command: the line run (or, dry, to run) */
	char *output;			/* command: what it printed (the PR's address, often) */
	bool skipped;			/* command: sent by an earlier `hotloop pr` */
};

struct pr_result {
	char *branch, *base, *dir;
	bool command;			/* a [pr] command ran (or would, dry) */
	bool dry_run;
	struct pr_item *items;		/* oldest first: the stack's order */
	size_t nr, alloc;
	size_t sent;			/* commands that ran and succeeded */
};

void pr_result_init(struct pr_result *r);
void pr_result_release(struct pr_result *r);

/*
 * 0, or -1 with an error: no such branch, no kept commit on it, a body or
 * patch that cannot be written (then none is left: they are written aside
 * and moved into place together), or a command that fails (the commits
 * before it were sent and stay so; the head branch made for the failing
 * one is removed; a later `hotloop pr` goes on from it).
 */
int pr_run(const struct pr_spec *s, struct pr_result *r);

/* The body of a kept commit: its kb entry's report.md (or its message), the diff stat, the stack. */
void pr_body(const char *report, const char *message, const char *diffstat, const char *branch,
	     const char *commit, size_t nr, size_t of, const char *base, struct strbuf *out);

/* One placeholder of a [pr] command: {name} becomes value, shell-quoted. */
struct pr_var {
	const char *name, *value;
};
/*
 * The command with every {name} of vars replaced by its value in single
 * quotes (so no title can run code); other braces, and one after a
 * backslash, stay. A placeholder inside quotes is an error: 0, or -1 with it.
 */
int pr_fill_command(const char *tmpl, const struct pr_var *vars, size_t nr, struct strbuf *out);

struct json_t *pr_result_to_json(const struct pr_result *r);

#endif
