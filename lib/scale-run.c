/*
 * scale-run.c: the driver of `hotloop scale` (see scale.h): each size
 * recorded (record.c), its profiles fed to the fit (scale.c), the result
 * saved under .hotloop/scale/ so that run, brief and the loop find it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "events.h"
#include "pprof.h"
#include "profile.h"
#include "project.h"
#include "record.h"
#include "scale.h"
#include "strbuf.h"
#include "util.h"

#define SCALE_DIR ".hotloop/scale"

/*
 * Put the new profiles in place of the old ones: a run that fails or is
 * killed leaves the last complete result as it was.
 */
static int replace_dir(const char *final, const char *fresh)
{
	char *old = xstrfmt("%s.old", final);
	int ret = -1;

	if (remove_tree(old))
		goto out;
	if (rename(final, old) && errno != ENOENT) {
		error("cannot rename '%s': %s", final, strerror(errno));
		goto out;
	}
	if (rename(fresh, final)) {
		error("cannot rename '%s' to '%s': %s", fresh, final, strerror(errno));
		goto out;
	}
	ret = remove_tree(old);
out:
	free(old);
	return ret;
}

/* Why a run of size n failed, or 0 when it did not. */
static int check_status(const struct scale_spec *j, uint64_t n, const struct record_result *res)
{
	int st = res->wait_status;

	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	if (j->timeout > 0 && res->duration_ns >= (uint64_t)(j->timeout * 1e9))
		return error("the workload timed out at size %llu after %g s (its 'timeout'): '%s'",
			     (unsigned long long)n, j->timeout, j->command);
	if (WIFSIGNALED(st))
		return error("the workload failed at size %llu: killed by signal %d (%s): '%s'",
			     (unsigned long long)n, WTERMSIG(st), strsignal(WTERMSIG(st)), j->command);
	return error("the workload failed at size %llu: exit status %d: '%s'",
		     (unsigned long long)n, WIFEXITED(st) ? WEXITSTATUS(st) : -1, j->command);
}

/*
 * Record size i (j->repeat times) into 'path' and add it to s, which says
 * the profile will be at 'final'. 0, or -1, or an exit status.
 */
static int run_size(const struct scale_spec *j, struct scale *s, size_t i, const char *path,
		    const char *final)
{
	uint64_t n = j->sizes[i];
	char *argv_sh[4] = { "/bin/sh", "-c", NULL, NULL };
	char **argv = NULL;
	struct record_options rec = { 0 };
	struct profile merged, one;
	struct record_result res;
	double wall = 0;
	size_t nargs = 0;
	int ret = -1;

	profile_init(&merged);
	if (j->argv) {
		while (j->argv[nargs])
			nargs++;
		argv = xcalloc(nargs + 1, sizeof(*argv));
		for (size_t k = 0; k < nargs; k++)
			argv[k] = with_size(j->argv[k], n);
	} else {
		argv_sh[2] = with_size(j->run, n);
		argv = argv_sh;
	}
	rec.sampler = j->sampler;
	rec.argv = argv;
	rec.dir = j->dir;
	rec.duration_ns = (uint64_t)(j->timeout * 1e9);
	rec.discard_stdout = true;
	for (long r = 0; r < j->repeat && !hl_cancelled(); r++) {
		char *tmp = j->repeat > 1 ? xstrfmt("%s.%ld.tmp", path, r) : NULL;
		int rc;

		if (j->repeat > 1)
			emit_progress(j->obs, "scale", i, j->nr_sizes, "n=%llu (%zu/%zu), run %ld/%ld",
				      (unsigned long long)n, i + 1, j->nr_sizes, r + 1, j->repeat);
		else
			emit_progress(j->obs, "scale", i, j->nr_sizes, "n=%llu (%zu/%zu)",
				      (unsigned long long)n, i + 1, j->nr_sizes);
		rec.output = tmp ? tmp : path;
		rc = record_run(&rec, &res);
		if (rc < 0) {
			ret = rc == -1 ? -1 : -rc;
			free(tmp);
			goto out;
		}
		wall += res.duration_ns / 1e9;
		if (res.stats.lost || res.stats.throttled)
			warning("size %llu: %llu samples lost, throttled %llu times: the costs are low by that much (lower -F)",
				(unsigned long long)n, (unsigned long long)res.stats.lost,
				(unsigned long long)res.stats.throttled);
		profile_init(&one);
		rc = check_status(j, n, &res);
		if (!rc)
			rc = pprof_read_file(&one, rec.output);
		if (!rc)
			rc = scale_add_profile(s, i, &one, 1.0 / j->sampler.freq);
		if (!rc && tmp)
			rc = profile_merge(&merged, &one);
		profile_release(&one);
		if (tmp) {
			unlink(tmp);
			free(tmp);
		}
		if (rc)
			goto out;
	}
	if (hl_cancelled()) {
		error("interrupted at size %llu", (unsigned long long)n);
		goto out;
	}
	if (j->repeat > 1 && pprof_write_file(&merged, path))
		goto out;
	scale_set_run(s, i, wall, final);
	ret = 0;
out:
	if (argv == argv_sh) {
		free(argv_sh[2]);
	} else {
		for (size_t k = 0; k < nargs; k++)
			free(argv[k]);
		free(argv);
	}
	profile_release(&merged);
	return ret;
}

int scale_run(const struct scale_spec *j, struct scale *s, json_t **doc)
{
	char *dir = NULL, *wdir = NULL, *fresh = NULL, *json_path = NULL, *text = NULL;
	int ret = -1;

	*doc = NULL;
	scale_init(s, j->sizes, j->nr_sizes);
	if (!(dir = state_dir(j->top, "scale")))
		return -1;
	wdir = xstrfmt("%s/%s", dir, j->workload);
	fresh = xstrfmt("%s/%s.new", dir, j->workload);
	/* what a killed run left */
	if (remove_tree(fresh))
		goto out;
	if (mkdir(fresh, 0777)) {
		error("cannot create '%s': %s", fresh, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < j->nr_sizes; i++) {
		char *name = xstrfmt("n%llu.pb.gz", (unsigned long long)j->sizes[i]);
		char *path = xstrfmt("%s/%s", fresh, name), *final = xstrfmt("%s/%s", wdir, name);

		ret = run_size(j, s, i, path, final);
		free(name);
		free(path);
		free(final);
		if (ret)
			goto out;
	}
	ret = -1;
	scale_fit_all(s, j->min_samples);
	*doc = scale_to_json(s, j->workload, j->command);
	text = json_dumps(*doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	if (!text) {
		error("cannot format the result as JSON");
		goto out;
	}
	if (replace_dir(wdir, fresh))
		goto out;
	json_path = j->output ? xstrdup(j->output) : xstrfmt("%s/%s.json", dir, j->workload);
	if (strcmp(json_path, "-")) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "%s\n", text);
		ret = write_file_atomic(json_path, sb.buf, sb.len);
		strbuf_release(&sb);
		if (ret)
			goto out;
		emit_note(j->obs, "scale", "wrote '%s' and %zu profiles in '%s'", json_path, j->nr_sizes, wdir);
	} else {
		emit_note(j->obs, "scale", "wrote %zu profiles in '%s'", j->nr_sizes, wdir);
	}
	ret = 0;
out:
	if (ret) {
		remove_tree(fresh);
		json_decref(*doc);
		*doc = NULL;
	}
	free(text);
	free(dir);
	free(wdir);
	free(fresh);
	free(json_path);
	return ret;
}
