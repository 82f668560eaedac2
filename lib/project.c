/*
 * project.c: a project's context (see project.h): where its config, its
 * tree and hotloop's state are, its workloads, its locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "git.h"
#include "kb.h"
#include "project.h"
#include "runner.h"
#include "strbuf.h"
#include "util.h"

static void find_top(struct project *p)
{
	p->top = git_find_top(p->dir);
	p->in_git = p->top != NULL;
	if (!p->top)
		p->top = xstrdup(p->dir);
}

/* 'path' from 'top' ("" when it is the top, the whole path when outside it) */
static char *relative_to(const char *top, const char *path)
{
	size_t n = strlen(top);

	if (!strcmp(path, top))
		return xstrdup("");
	if (!strncmp(path, top, n) && path[n] == '/')
		return xstrdup(path + n + 1);
	if (!strcmp(top, "/"))
		return xstrdup(path + 1);
	return xstrdup(path);
}

int project_open(struct project *p, const char *conf_file, unsigned flags)
{
	char *found = NULL, *slash;
	int r;

	memset(p, 0, sizeof(*p));
	config_init(&p->cf);
	if (!conf_file) {
		r = (flags & PROJECT_CONFIG_OPTIONAL) ? config_locate(".", &found) : config_find(".", &found);
		if (r < 0)
			return -1;
		if (r > 0) {
			if (!(p->dir = realpath(".", NULL)))
				return error("cannot resolve the current directory: %s", strerror(errno));
			find_top(p);
			p->sub = relative_to(p->top, p->dir);
			return 0;
		}
		conf_file = found;
	}
	p->conf_path = realpath(conf_file, NULL);
	if (!p->conf_path) {
		error("cannot open '%s': %s", conf_file, strerror(errno));
		free(found);
		return -1;
	}
	/* messages name the file as the user would: hotloop.conf:12: ... */
	config_release(&p->cf);
	r = config_parse_file(&p->cf, conf_file);
	free(found);
	if (r)
		return -1;
	p->dir = xstrdup(p->conf_path);
	slash = strrchr(p->dir, '/');
	slash[slash == p->dir] = '\0';
	find_top(p);
	p->sub = relative_to(p->top, p->dir);
	p->conf_rel = relative_to(p->top, p->conf_path);
	return (flags & PROJECT_NEED_GIT) ? project_find_git(p) : 0;
}

int project_find_git(struct project *p)
{
	if (p->git_dir)
		return 0;
	if (!p->in_git)
		return error("'%s' is not in a git repository", p->dir);
	return (p->git_dir = git_common_dir(p->top)) ? 0 : -1;
}

void project_release(struct project *p)
{
	config_release(&p->cf);
	free(p->conf_path);
	free(p->conf_rel);
	free(p->dir);
	free(p->top);
	free(p->sub);
	free(p->git_dir);
	memset(p, 0, sizeof(*p));
}

const struct config_workload *project_workload(const struct project *p, const char *name)
{
	const struct config *cf = &p->cf;
	struct strbuf names = STRBUF_INIT;

	if (!cf->nr_workloads) {
		error("no [workload] in '%s': add one (docs/config.md)",
		      p->conf_path ? p->conf_path : CONFIG_FILE);
		return NULL;
	}
	if (!name)
		return &cf->workloads[cf->primary];
	for (size_t i = 0; i < cf->nr_workloads; i++)
		if (!strcmp(cf->workloads[i].name, name))
			return &cf->workloads[i];
	for (size_t i = 0; i < cf->nr_workloads; i++)
		strbuf_addf(&names, "%s'%s'", i ? ", " : "", cf->workloads[i].name);
	error("unknown workload '%s' in '%s': the configured ones are %s", name, p->conf_path, names.buf);
	strbuf_release(&names);
	return NULL;
}

char *with_size(const char *tmpl, uint64_t n)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	while ((p = strstr(tmpl, "{n}"))) {
		strbuf_add(&sb, tmpl, (size_t)(p - tmpl));
		strbuf_addf(&sb, "%llu", (unsigned long long)n);
		tmpl = p + 3;
	}
	strbuf_addstr(&sb, tmpl);
	return strbuf_detach(&sb, NULL);
}

char *project_command_line(const struct config_workload *w, const char *size)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = w->run, *n;
	char largest[32], *line;

	if (!p) {
		error("workload '%s' is judged by scenario '%s': it has no command to run", w->name,
		      w->scenario ? w->scenario : "");
		return NULL;
	}
	if (!strstr(p, "{n}") && size)
		warning("workload '%s' has no {n} in its command: the size %s is not used", w->name, size);
	if (strstr(p, "{n}") && !size && w->nr_sizes) {
		snprintf(largest, sizeof(largest), "%llu", (unsigned long long)w->sizes[w->nr_sizes - 1]);
		size = largest;
	}
	if (strstr(p, "{n}") && !size) {
		error("workload '%s' runs '%s': give the value of {n} with --size N, or "
		      "sizes = ... in its section", w->name, w->run);
		return NULL;
	}
	while ((n = strstr(p, "{n}"))) {
		strbuf_add(&sb, p, (size_t)(n - p));
		strbuf_addstr(&sb, size);
		p = n + 3;
	}
	strbuf_addstr(&sb, p);
	line = runner_exec_line(sb.buf);
	strbuf_release(&sb);
	return line;
}

char *project_dir_in(const struct project *p, const char *tree_top)
{
	return *p->sub ? xstrfmt("%s/%s", tree_top, p->sub) : xstrdup(tree_top);
}

char *state_dir(const char *top, const char *sub)
{
	char *h = xstrfmt("%s/.hotloop", top);
	char *w = sub ? xstrfmt("%s/%s", h, sub) : xstrdup(h);
	char *ign = xstrfmt("%s/.gitignore", h);

	if ((mkdir(h, 0777) && errno != EEXIST) || (mkdir(w, 0777) && errno != EEXIST)) {
		error("cannot create '%s': %s", w, strerror(errno));
		free(w);
		w = NULL;
	} else if (access(ign, F_OK) && write_file_atomic(ign, "*\n", 2)) {
		free(w);
		w = NULL;
	}
	free(h);
	free(ign);
	return w;
}

int project_scenario_dir(const struct project *p, const char *scenario, const char *tag, char **path)
{
	char *parent = project_state_dir(p, "scenarios"), *kind;
	int ret;

	*path = NULL;
	if (!parent)
		return -1;
	free(parent);
	kind = xstrfmt("scenarios/%s", scenario);
	ret = project_new_dir(p, kind, tag, path, NULL);
	free(kind);
	return ret;
}

int project_new_dir(const struct project *p, const char *kind, const char *name,
		    char **path, char **id)
{
	char *parent = project_state_dir(p, kind), stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int ret = -1;

	*path = NULL;
	if (id)
		*id = NULL;
	if (!parent)
		return -1;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (int k = 1; ret && k <= 100; k++) {
		struct strbuf sb = STRBUF_INIT;
		char *full;

		strbuf_addstr(&sb, stamp);
		if (name)
			strbuf_addf(&sb, "-%s", name);
		if (k > 1)
			strbuf_addf(&sb, "-%d", k);
		full = xstrfmt("%s/%s", parent, sb.buf);
		if (!mkdir(full, 0777)) {
			*path = full;
			if (id)
				*id = strbuf_detach(&sb, NULL);
			ret = 0;
		} else {
			int e = errno;

			if (e != EEXIST || k == 100) {
				error("cannot create '%s': %s", full, strerror(e));
				k = 100;
			}
			free(full);
		}
		strbuf_release(&sb);
	}
	free(parent);
	return ret;
}

char *project_kb_dir(const struct project *p)
{
	return kb_dir_of_config(&p->cf, p->conf_path ? p->conf_path : CONFIG_FILE);
}

char *project_scale_path(const struct project *p, const char *workload)
{
	return xstrfmt("%s/.hotloop/scale/%s.json", p->top, workload);
}

int pid_lock(const char *path, char holder[32])
{
	char pid[32];
	ssize_t n;
	int fd, e;

	if (holder)
		holder[0] = '\0';
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		e = errno;
		if (holder && e == EWOULDBLOCK) {
			n = pread(fd, holder, 31, 0);
			holder[n > 0 ? n : 0] = '\0';
			holder[strcspn(holder, "\n")] = '\0';
		}
		close(fd);
		errno = e;
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n)
		warning("cannot write the pid to '%s': %s", path, strerror(errno));
	return fd;
}

int project_lock(const struct project *p, enum project_lock which)
{
	const char *name = which == PROJECT_LOCK_LOOP ? "lock" : "worktrees.lock";
	char *dir = project_state_dir(p, which == PROJECT_LOCK_LOOP ? NULL : "worktrees");
	char *path = xstrfmt("%s/.hotloop/%s", p->top, name), holder[32];
	int fd = -1;

	if (!dir)
		goto out;
	fd = pid_lock(path, holder);
	if (fd >= 0)
		goto out;
	if (errno != EWOULDBLOCK)
		error("cannot lock '%s': %s", path, strerror(errno));
	else if (which == PROJECT_LOCK_LOOP)
		error("another hotloop loop (pid %s) is running on '%s'", *holder ? holder : "unknown", p->top);
	else
		error("another hotloop (pid %s) is using the checkouts of '%s'; wait for it to finish",
		      *holder ? holder : "unknown", p->top);
out:
	free(dir);
	free(path);
	return fd;
}
