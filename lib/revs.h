/*
 * revs.h: the git worktrees the gate measures and the loop's agents edit.
 * A revision is checked out with `git worktree add --detach` under
 * <git top>/.hotloop/worktrees/<role>-<12 hex digits> (same-length paths
 * for every side), used there and removed at the end; the user's working
 * tree, index and branch are never touched. A directory can stand in for a
 * revision as it is. Take PROJECT_LOCK_WORKTREES before adding any. A
 * struct revs_tree owns its strings until revs_tree_release().
 */
#ifndef HOTLOOP_REVS_H
#define HOTLOOP_REVS_H

#include <stdbool.h>

struct strbuf;

#define REVS_DIR ".hotloop/worktrees"

struct revs_tree {
	char *given;		/* the REV or DIR as given */
	char *sha;		/* full commit id; NULL for a directory */
	char *top;		/* the tree: the worktree, or DIR */
	char *dir;		/* where build, test and workloads run */
	bool added;		/* a worktree of ours: revs_remove() it */
};

/*
 * Remove worktrees a killed earlier run left under REVS_DIR, and prune
 * git's records of them. 0, or -1 with an error.
 */
int revs_clean_stale(const char *top);

/*
 * Check out 'rev' as a detached worktree for 'role' ("base", "cand", ...);
 * t->dir is the worktree plus 'subdir' (the project's directory relative
 * to the top, "" for the top). 0, or -1 with an error.
 */
int revs_add(const char *top, const char *role, const char *rev, const char *subdir,
	     struct revs_tree *t);

/* Use directory 'dir' as is. 0, or -1 with an error when it is not one. */
int revs_use_dir(const char *dir, struct revs_tree *t);

/* Remove t's worktree when revs_add() made it. 0, or -1 with an error. */
int revs_remove(const char *top, struct revs_tree *t);
void revs_tree_release(struct revs_tree *t);
/* {"given", "commit" (null for a directory), "dir"} (a new reference). */
struct json_t;
struct json_t *revs_tree_to_json(const struct revs_tree *t);

/*
 * The two trees `compare --base REV|DIR --cand REV|DIR` measures: a
 * directory is used as it is; a revision is checked out as a worktree,
 * under the worktrees' lock (taken here, with stale worktrees of a killed
 * run cleaned up first), and only in a git repository.
 */
struct project;
struct revs_pair {
	struct revs_tree base, cand;
	int lock;
};
#define REVS_PAIR_INIT { .lock = -1 }
int revs_pair_open(struct revs_pair *rp, const struct project *p, const char *base, const char *cand);
/* "base:      main (1a2b3c4d5e6f)\ncandidate: DIR (directory)\n" */
void revs_pair_describe(const struct revs_pair *rp, struct strbuf *sb);
/* Remove the worktrees, drop the lock; safe after a failed open. 0, or -1 with an error. */
int revs_pair_close(struct revs_pair *rp, const struct project *p);

#endif
