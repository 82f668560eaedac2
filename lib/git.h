/*
 * git.h: git as hotloop uses it, through run-command.c. Every command on
 * the user's repository or a tree of it names the repository, the work
 * tree and the index it works on (struct git_repo: GIT_DIR, GIT_WORK_TREE,
 * GIT_INDEX_FILE, GIT_CEILING_DIRECTORIES), so nothing an agent does to a
 * tree (deleting its .git, say) can make git find another repository, and
 * hotloop's own index of a tree is one the agent never sees. A failure says
 * what could not be done and quotes git's last lines. Strings returned are
 * the caller's to free.
 */
#ifndef HOTLOOP_GIT_H
#define HOTLOOP_GIT_H

struct strbuf;

struct git_repo {
	const char *git_dir;	/* the repository's (common) git directory */
	const char *work_tree;	/* NULL: none, for plumbing */
	const char *index;	/* an index file of hotloop's; NULL: none given */
};

/*
 * git ARGS... (NULL-terminated) on repository g; its output (stdout and
 * stderr) in 'out' (may be NULL). 0 when it exited 0, else -1 with an error
 * saying it could not 'what' (no message when 'what' is NULL: a question
 * whose answer may be no).
 */
int git_exec(const struct git_repo *g, struct strbuf *out, const char *what, ...)
	__attribute__((sentinel));

/* The full commit id 'rev' names in repository g, or NULL (quietly). */
char *git_resolve(const struct git_repo *g, const char *rev);

/*
 * git -C dir ARGS...: the same, with the repository found from 'dir' the
 * way git finds it. Only for questions about where a repository is.
 */
int git_run(const char *dir, struct strbuf *out, const char *what, ...)
	__attribute__((sentinel));

/* The full commit id 'rev' names in the repository at 'dir', or NULL (quietly). */
char *git_rev_parse(const char *dir, const char *rev);

/* The top level of the git repository holding 'dir'; 0, or -1 with an error. */
int git_top(const char *dir, char **top);

/* The common git directory of the repository holding 'dir' (a real path); NULL with an error. */
char *git_common_dir(const char *dir);

/*
 * The same found quietly, without running git: the nearest directory at or
 * above 'dir' holding .git (a directory, or a worktree's file), as a real
 * path; NULL when there is none.
 */
char *git_find_top(const char *dir);

#endif
