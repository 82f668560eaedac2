/*
 * integrity.h: proof that the user's repository is as it was. The loop
 * records it once before the first agent runs and checks it after every
 * agent, every candidate's build, tests and runs, and at its end, so an
 * agent (or what it wrote) that reaches past its sandbox, or one run
 * with --no-sandbox, is caught, named and stops the loop.
 *
 * What is recorded: HEAD as written (a symbolic ref or a commit id), every
 * ref (the stash too) but the loop's own branch, the stash's reflog, the
 * index (its bytes; when they differ, its entries with their
 * skip-worktree and assume-unchanged bits, so a `git status` that only
 * refreshed stat data is no change), the git directory's own files
 * (config, hooks, info, ...), the object store (append only: hotloop
 * adds the commits it makes, nothing may go), and every file of the work
 * tree, tracked, untracked or ignored, but hotloop's state and
 * knowledge-base directories. Files are compared cheaply: stat data
 * first, a SHA-256 of the content of what differs (the record hashes
 * every file once).
 */
#ifndef HOTLOOP_INTEGRITY_H
#define HOTLOOP_INTEGRITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

struct project;

struct integrity_file {
	char *path;		/* from the top of what was walked */
	uint32_t mode;
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	unsigned char sha[32];	/* content (a symlink's target); set for regular files and symlinks */
};

struct integrity_files {
	struct integrity_file *v;
	size_t nr, alloc;
};

struct integrity {
	char *top, *git_dir, *common_dir;
	char **skip;			/* absolute directories not recorded */
	char *skip_ref;			/* the loop's branch: the caller checks it */
	struct strbuf head, refs, entries, stash_log;
	unsigned char index_sha[32];
	bool has_index;
	struct integrity_files tree;	/* the work tree, from top */
	struct integrity_files git;	/* the git directory's own files, from common_dir */
	struct integrity_files objects;	/* from common_dir/objects: append only */
};
#define INTEGRITY_INIT { .head = STRBUF_INIT, .refs = STRBUF_INIT, .entries = STRBUF_INIT, \
			 .stash_log = STRBUF_INIT }

/*
 * Record the repository of project p (opened with PROJECT_NEED_GIT). The
 * directories in 'skip' (NULL-terminated, absolute; may be NULL) are left
 * out, and so is ref 'skip_ref' (may be NULL). 0, or -1 with an error.
 */
int integrity_record(struct integrity *in, const struct project *p, const char *const *skip,
		     const char *skip_ref);

/*
 * Is the repository as recorded? 0 yes; 1 no, with what changed appended
 * to 'what' (one thing a line, at most 'max' lines of files); -1 with an
 * error when it cannot be read.
 */
int integrity_check(const struct integrity *in, struct strbuf *what, size_t max);

void integrity_release(struct integrity *in);

#endif
