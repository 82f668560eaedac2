/*
 * git.h: git as hotloop uses it, through run-command.c: one runner whose
 * failure says what could not be done and quotes git's last lines,
 * rev-parse, and the top level of a repository. Strings returned are the
 * caller's to free.
 */
#ifndef HOTLOOP_GIT_H
#define HOTLOOP_GIT_H

struct strbuf;

/*
 * git -C dir ARGS... (NULL-terminated); its output (stdout and stderr) in
 * 'out' (may be NULL). 0 when it exited 0, else -1 with an error saying it
 * could not 'what' (no message when 'what' is NULL: a question whose
 * answer may be no).
 */
int git_run(const char *dir, struct strbuf *out, const char *what, ...)
	__attribute__((sentinel));

/* The full commit id 'rev' names in the repository at 'dir', or NULL (quietly). */
char *git_rev_parse(const char *dir, const char *rev);

/* The top level of the git repository holding 'dir'; 0, or -1 with an error. */
int git_top(const char *dir, char **top);

/*
 * The same found quietly, without running git: the nearest directory at or
 * above 'dir' holding .git (a directory, or a worktree's file), as a real
 * path; NULL when there is none.
 */
char *git_find_top(const char *dir);

#endif
