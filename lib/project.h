/*
 * project.h: the project a command works on: its hotloop.conf (found from
 * the current directory up, or given), the directory it sits in (where
 * builds and workloads run), the git top level holding it, hotloop's state
 * under <top>/.hotloop/, the locks on that state, the workloads by name
 * and their command lines, and the directories runs and loops write into.
 * Every command that works on a project opens one struct project; the
 * engines (gate, run, scale, loop) take it as their context.
 * A struct project owns its config and every string in it until
 * project_release().
 */
#ifndef HOTLOOP_PROJECT_H
#define HOTLOOP_PROJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct project {
	struct config cf;
	char *conf_path;	/* the real path of hotloop.conf; NULL: none (PROJECT_CONFIG_OPTIONAL) */
	char *conf_rel;		/* its path from 'top' */
	char *dir;		/* its directory (without a config: the current one) */
	char *top;		/* the git top level holding 'dir'; 'dir' when it is in none */
	char *sub;		/* 'dir' from 'top': "" at the top */
	bool in_git;		/* 'top' is a git top level */
	char *git_dir;		/* its common git directory (PROJECT_NEED_GIT), else NULL */
};

#define PROJECT_INIT { .cf = { 0 } }

enum project_flags {
	PROJECT_CONFIG_OPTIONAL = 1,	/* no hotloop.conf found is not an error */
	PROJECT_NEED_GIT = 2,		/* it must be in git: git_dir is found */
};

/*
 * Open the project of 'conf_file' (NULL: the hotloop.conf found from the
 * current directory up to the git top level). 0, or -1 with an error: no
 * config (unless optional), one that does not parse or validate, no git
 * repository when PROJECT_NEED_GIT.
 */
int project_open(struct project *p, const char *conf_file, unsigned flags);
void project_release(struct project *p);
/* Find git_dir after all (what PROJECT_NEED_GIT does): 0, or -1 with an error. */
int project_find_git(struct project *p);

/*
 * The workload named 'name' (NULL: the primary), or NULL after an error
 * naming the configured ones: "unknown workload 'x' in 'hotloop.conf': the
 * configured ones are 'big', 'small'".
 */
const struct config_workload *project_workload(const struct project *p, const char *name);

/*
 * The /bin/sh line that runs workload w: its run line with every {n}
 * replaced by 'size' (NULL: the largest of its sizes), prefixed by exec
 * when it is one simple command, so the program is the shell's own process
 * (its signal is the run's, its mapping the profile's main one). NULL after
 * an error when it has {n} and no size to put there. Caller frees.
 */
char *project_command_line(const struct config_workload *w, const char *size);

/* 'tmpl' with every {n} replaced by n (caller frees). */
char *with_size(const char *tmpl, uint64_t n);

/* The project's directory in another tree of the repository (a worktree at 'tree_top'). */
char *project_dir_in(const struct project *p, const char *tree_top);

/*
 * <top>/.hotloop/<sub> (<top>/.hotloop for a NULL sub), created when
 * missing, with .hotloop/.gitignore ("*") so that hotloop's state stays out
 * of git status. The path (caller frees), or NULL with an error.
 */
char *state_dir(const char *top, const char *sub);
static inline char *project_state_dir(const struct project *p, const char *sub)
{
	return state_dir(p->top, sub);
}

/*
 * A new directory for one run or loop: <top>/.hotloop/<kind>/<stamp>[-<name>][-<k>]
 * (stamp: local YYYYmmdd-HHMMSS; k from 2 when the name is taken). 0 and
 * the path and its last component (caller frees both; id may be NULL), or
 * -1 with an error.
 */
int project_new_dir(const struct project *p, const char *kind, const char *name,
		    char **path, char **id);

/* The knowledge base directory: [project] kb from the config's directory. Caller frees. */
char *project_kb_dir(const struct project *p);
/*
 * A new directory for a scenario's run or runs:
 * <top>/.hotloop/scenarios/<scenario>/<stamp>[-<tag>][-<k>]. 0 and the
 * path (caller frees), or -1 with an error.
 */
int project_scenario_dir(const struct project *p, const char *scenario, const char *tag, char **path);
/* <top>/.hotloop/scale/<workload>.json, whether or not it exists. Caller frees. */
char *project_scale_path(const struct project *p, const char *workload);

/*
 * The locks on hotloop's state, each an flock on a file under .hotloop/
 * holding the owner's pid: a killed owner's lock goes with it.
 */
enum project_lock {
	PROJECT_LOCK_LOOP,		/* .hotloop/lock: one loop per repository */
	PROJECT_LOCK_WORKTREES,		/* .hotloop/worktrees.lock: one user of the worktrees */
};
/* The lock's fd, to close when done, or -1 with an error naming the pid that holds it. */
int project_lock(const struct project *p, enum project_lock which);

/*
 * Take an flock on 'path' (created when missing) and write our pid into
 * it. The fd, or -1: errno EWOULDBLOCK when another process holds it (its
 * pid, as written there, in 'holder' when not NULL; "" when unknown), or
 * another errno when it cannot be opened.
 */
int pid_lock(const char *path, char holder[32]);

#endif
