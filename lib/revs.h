/*
 * revs.h: the two builds `hotloop compare --base REV --cand REV|DIR`
 * measures. Each revision is checked out with `git worktree add --detach`
 * under <git top>/.hotloop/worktrees/<role>-<12 hex digits> (same-length
 * paths for both sides), built there and removed at the end; the user's
 * working tree, index and branch are never touched. A struct revs_tree
 * owns its strings until revs_tree_release().
 */
#ifndef HOTLOOP_REVS_H
#define HOTLOOP_REVS_H

#include <signal.h>
#include <stdbool.h>

#include "strbuf.h"

#define REVS_DIR ".hotloop/worktrees"

struct revs_tree {
	char *given;		/* the REV or DIR as given */
	char *sha;		/* full commit id; NULL for a directory */
	char *top;		/* the tree: the worktree, or DIR */
	char *dir;		/* where build, test and workloads run */
	bool added;		/* a worktree of ours: revs_remove() it */
};

/*
 * <top>/.hotloop/<sub> (<top>/.hotloop for a NULL sub), created when
 * missing, with .hotloop/.gitignore ("*") so that hotloop's state stays out
 * of git status. The path (caller frees), or NULL with an error.
 */
char *revs_state_dir(const char *top, const char *sub);

/* The top level of the git repository holding 'dir' (caller frees). */
int revs_git_top(const char *dir, char **top);
/*
 * The same found quietly, without running git: the nearest directory at
 * or above 'dir' holding .git (a directory, or a worktree's file), as a
 * real path the caller frees; NULL when there is none.
 */
char *revs_find_top(const char *dir);

/*
 * Take the lock on REVS_DIR (an flock on .hotloop/worktrees.lock, which
 * holds the owner's pid): one user of the worktrees at a time, and a
 * killed owner's lock goes with it. The fd, to close when done, or -1
 * with an error naming the pid that holds it.
 */
int revs_lock(const char *top);

/*
 * Remove worktrees a killed earlier run left under REVS_DIR, and prune
 * git's records of them. 0, or -1 with an error.
 */
int revs_clean_stale(const char *top);

/*
 * Check out 'rev' as a detached worktree for 'role' ("base" or "cand");
 * t->dir is the worktree plus 'subdir' (the config's directory relative
 * to the top, "" for the top). 0, or -1 with an error.
 */
int revs_add(const char *top, const char *role, const char *rev, const char *subdir,
	     struct revs_tree *t);

/* Use directory 'dir' as is. 0, or -1 with an error when it is not one. */
int revs_use_dir(const char *dir, struct revs_tree *t);

/* Remove t's worktree when revs_add() made it. 0, or -1 with an error. */
int revs_remove(const char *top, struct revs_tree *t);
void revs_tree_release(struct revs_tree *t);

/*
 * Run 'cmd' with /bin/sh -c in 'dir', stdin from /dev/null, stdout and
 * stderr kept in 'out' (its last 64 KiB); kill it after 'timeout' seconds
 * (0: never). *status is as from waitpid(), *timed_out says whether it was
 * killed for time. 0, or -1 with an error when it could not be run.
 */
int revs_shell(const char *cmd, const char *dir, double timeout, struct strbuf *out,
	       int *status, bool *timed_out);

/*
 * The same with standard input from the file 'input' (NULL: /dev/null) and
 * 'env' (NAME=VALUE strings, NULL-terminated; may be NULL) added to the
 * environment.
 */
int revs_run(const char *cmd, const char *dir, double timeout, const char *input,
	     const char *const *env, struct strbuf *out, int *status, bool *timed_out);

/*
 * While *flag is set (by a signal handler), a running revs_shell() or
 * revs_run() kills its command's process group and returns as if it timed
 * out. NULL turns it off.
 */
void revs_set_cancel(volatile sig_atomic_t *flag);

/*
 * git -C top ARGS... (NULL-terminated); its output in 'out' (may be NULL).
 * 0 when it exited 0, else -1 with an error saying it could not 'what'
 * (no message when 'what' is NULL: a question whose answer may be no).
 */
int revs_git(const char *top, struct strbuf *out, const char *what, ...);

/* Append the last 'n' lines of 'out' to 'sb', each indented. */
void revs_tail(const struct strbuf *out, int n, struct strbuf *sb);

#endif
