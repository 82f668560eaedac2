/*
 * revs.h: the trees the gate measures and the loop's agents edit. A
 * revision is checked out, outside the user's tree, into a fresh directory
 * under the user's cache (<cache>/hotloop/<repo>-<hash>/<16 hex>/tree,
 * never reused, every path the same length), with an index of hotloop's
 * own beside it, out of an agent's reach. Nothing is registered in the
 * user's repository: no worktree, no ref, no index of theirs is touched.
 * Every git command names the repository, the tree and the index
 * (git.h), so a tree whose .git an agent deleted or rewrote cannot lead
 * git anywhere else. After an agent, revs_changes() says what it changed,
 * and revs_commit() makes a commit object of exactly the tree's files; the
 * gate then measures a fresh checkout of that commit.
 *
 * Take PROJECT_LOCK_WORKTREES before making any. A struct revs_tree owns
 * its strings until revs_tree_release(); so does a struct revs_changes.
 */
#ifndef HOTLOOP_REVS_H
#define HOTLOOP_REVS_H

#include <stdbool.h>
#include <stdint.h>

struct project;
struct strbuf;

struct revs_tree {
	char *given;		/* the REV or DIR as given */
	char *sha;		/* full commit id; NULL for a directory */
	char *top;		/* the tree: the checkout, or DIR */
	char *dir;		/* where build, test and workloads run: top plus the project's sub */
	char *home;		/* the checkout's directory (tree and index); NULL for a DIR */
	char *index;		/* hotloop's index of the tree; NULL for a DIR */
	char *tmp;		/* beside the tree: temporary files of what runs in it; NULL for a DIR */
};

/*
 * The directory of this repository's checkouts, made when missing:
 * $XDG_CACHE_HOME/hotloop/<name>-<hash> (else ~/.cache/...), the hash of
 * the repository's git directory. Caller frees; NULL with an error.
 */
char *revs_cache_dir(const struct project *p);

/*
 * Remove every checkout a killed earlier run left in the cache (and the
 * worktrees earlier versions kept under .hotloop/worktrees). 0, or -1.
 */
int revs_clean_stale(const struct project *p);

/*
 * Check out 'rev' (of project p, opened with PROJECT_NEED_GIT) into a fresh
 * checkout; t->dir is it plus the project's sub, t->tmp an empty directory
 * beside it. 0, or -1 with an error.
 */
int revs_checkout(const struct project *p, const char *rev, struct revs_tree *t);

/*
 * Give checkout t a repository of its own for the agent: t->top/.git, with
 * HEAD at t->sha, an index matching the files, and the user's objects as
 * alternates (read through; what the agent commits stays there). hotloop
 * never runs git on it. 0, or -1 with an error.
 */
int revs_agent_repo(const struct project *p, const struct revs_tree *t);
/* Did the agent move the HEAD of its repository (commit by itself)? */
bool revs_agent_committed(const struct revs_tree *t);

/* Use directory 'dir' as is. 0, or -1 with an error when it is not one. */
int revs_use_dir(const char *dir, struct revs_tree *t);

/* Remove a checkout (not a directory used as is). 0, or -1 with an error. */
int revs_remove(struct revs_tree *t);
void revs_tree_release(struct revs_tree *t);
/* {"given", "commit" (null for a directory), "dir"} (a new reference). */
struct json_t;
struct json_t *revs_tree_to_json(const struct revs_tree *t);

/* One path a checkout's files differ in from its commit, relative to the tree's top. */
struct revs_change {
	char *path;
	char status;		/* 'A' added, 'M' modified, 'D' deleted, 'T' type changed */
	bool nested_repo;	/* a directory holding a repository of its own */
	bool symlink;
	uint64_t size;		/* bytes, for what is there now */
	bool binary;		/* a NUL byte in its first 8 KiB */
};

struct revs_changes {
	struct revs_change *v;
	size_t nr, alloc;
};

/*
 * What the files of checkout t differ in from its commit, with hotloop's
 * own index: no bit an agent sets (skip-worktree, assume-unchanged) can
 * hide a change. Nothing is written to the repository. 0, or -1.
 */
int revs_changes(const struct project *p, const struct revs_tree *t, struct revs_changes *out);
void revs_changes_release(struct revs_changes *c);

/*
 * The commit of exactly t's files (as revs_changes() saw them), with
 * 'parent' and 'message', by the repository's user or else hotloop; its id
 * in *commit. 0, or -1 with an error.
 */
int revs_commit(const struct project *p, const struct revs_tree *t, const char *parent,
		const char *message, char **commit);

/* The same tree as 'commit', with another message: what a keep puts on the branch. */
int revs_recommit(const struct project *p, const char *commit, const char *parent,
		  const char *message, char **out);

/* The unified diff from 'from' to 'to', and the paths it changes (one a line). */
int revs_diff(const struct project *p, const char *from, const char *to, struct strbuf *diff,
	      struct strbuf *names);

/*
 * The two trees `compare --base REV|DIR --cand REV|DIR` measures: a
 * directory is used as it is; a revision is checked out, under the
 * worktrees' lock (taken here, stale checkouts of a killed run removed
 * first), and only in a git repository.
 */
struct revs_pair {
	struct revs_tree base, cand;
	int lock;
};
#define REVS_PAIR_INIT { .lock = -1 }
int revs_pair_open(struct revs_pair *rp, const struct project *p, const char *base, const char *cand);
/* "base:      main (1a2b3c4d5e6f)\ncandidate: DIR (directory)\n" */
void revs_pair_describe(const struct revs_pair *rp, struct strbuf *sb);
/* Remove the checkouts, drop the lock; safe after a failed open. 0, or -1 with an error. */
int revs_pair_close(struct revs_pair *rp);

/*
 * A revision's files, for the snippets of a brief of a profile that came
 * from that commit (brief --rev): a profile's source path is the file of
 * the revision it names from the repository's top, else the longest tail
 * of it that names one (a path of the machine it was built on).
 */
struct revs_source {
	char *git_dir, *top, *sha, *rev;
	char **paths;			/* the revision's files, sorted */
	size_t nr;
};

/* 0, or -1 with an error (no such commit). */
int revs_source_open(struct revs_source *s, const struct project *p, const char *rev);
/* The file 'path' of the revision into out (at most 16 MiB); 0, or -1 with the reason in 'why'. */
int revs_source_read(void *data, const char *path, struct strbuf *out, struct strbuf *why);
void revs_source_release(struct revs_source *s);

#endif
