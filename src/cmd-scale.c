/*
 * cmd-scale.c: `hotloop scale [WORKLOAD] [--sizes A,B,C] [-- CMD {n}]`: run
 * a workload at several input sizes, record each run (lib/record.c), save
 * the profiles and the result under .hotloop/scale/, and print each
 * function's growth exponent, fitted by lib/scale.c.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "builtin.h"
#include "config.h"
#include "pprof.h"
#include "profile.h"
#include "record.h"
#include "scale.h"
#include "strbuf.h"

const char usage_scale[] =
"usage: hotloop scale [WORKLOAD] [--sizes A,B,C...] [-F HZ] [--call-graph fp|dwarf]\n"
"                     [--repeat R] [--min-samples N] [--top N] [-o FILE] [--json]\n"
"                     [-f CONFIG]\n"
"   or: hotloop scale --sizes A,B,C... [options] -- CMD ARGS... (with {n})\n"
"\n"
"Run a workload at several input sizes, profile each run, and fit each\n"
"function's total (inclusive) time against the size on a log-log scale:\n"
"cost ~ n^k. Prints k with its 95% interval, R^2 and a verdict per function\n"
"(superlinear: k above 1.3 with R^2 at least 0.9), then the program's k.\n"
"\n"
"With a command after --, every {n} in its arguments is replaced by the\n"
"size. With WORKLOAD (or neither: the primary workload), its 'run' line in\n"
"hotloop.conf, which holds {n}, runs with /bin/sh -c in the config's\n"
"directory, at the sizes of its 'sizes' key or --sizes. The command's\n"
"standard output is discarded; a run that fails stops everything.\n"
"\n"
"The result (JSON, docs/scale.md) is saved to .hotloop/scale/WORKLOAD.json\n"
"under the git top level (\"cmd\" for a command), each size's profile to\n"
".hotloop/scale/WORKLOAD/nSIZE.pb.gz.\n"
"\n"
"  -s, --sizes A,B,C        at least 3 different sizes; they should span 4x\n"
"  -F, --freq HZ            samples per second (default 999)\n"
"  -g, --call-graph MODE    fp (default) or dwarf[,SIZE], as for record\n"
"  -r, --repeat R           record each size R times and add them up (default 1)\n"
"      --min-samples N      fit a function over the sizes where it has at least\n"
"                           N samples (default 20); fewer than 3: not fitted\n"
"  -n, --top N              functions in the table (default 25, 0: all)\n"
"  -o, --output FILE        write the JSON here instead of .hotloop/scale/\n"
"      --json               print the JSON document instead of the table\n"
"  -f, --config FILE        hotloop.conf to use (default: found from here up)\n"
"\n"
"Exit status: 0 done, 1 a run failed or another error, 2 usage, 3 perf\n"
"events not permitted, 126/127 when the command cannot be run.\n";

#define SCALE_DIR ".hotloop/scale"
#define SPAN_WANTED 4

struct scale_job {
	const char *workload;	/* "cmd" for a command */
	char *command;		/* as the user gave it, {n} included */
	char **argv;		/* a command's arguments; NULL for a workload */
	char *run;		/* a workload's run line */
	char *dir;		/* where a workload runs; NULL: here */
	double timeout_s;	/* a workload's; 0: none */
	uint64_t *sizes;
	size_t nr_sizes;
	struct record_options rec;
	long repeat;
	uint64_t min_samples;
	long top;
	const char *output;
	bool json;
};

/* 'tmpl' with every {n} replaced by n. */
static char *with_size(const char *tmpl, uint64_t n)
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

/* argv as a shell would read it back, for messages and the JSON. */
static char *join_argv(char **argv)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];

		if (i)
			strbuf_addch(&sb, ' ');
		if (*a && !a[strcspn(a, " \t\n'\"\\$`;&|<>()*?[]#~!")]) {
			strbuf_addstr(&sb, a);
			continue;
		}
		strbuf_addch(&sb, '\'');
		for (; *a; a++) {
			if (*a == '\'')
				strbuf_addstr(&sb, "'\\''");
			else
				strbuf_addch(&sb, *a);
		}
		strbuf_addch(&sb, '\'');
	}
	return strbuf_detach(&sb, NULL);
}

/* The directory of the first .git up from the current one, else the current one. */
static char *project_top(void)
{
	char *cwd = getcwd(NULL, 0), *dir;
	struct strbuf path = STRBUF_INIT;

	if (!cwd) {
		error("cannot get the current directory: %s", strerror(errno));
		return NULL;
	}
	dir = xstrdup(cwd);
	for (;;) {
		char *slash;

		strbuf_reset(&path);
		strbuf_addf(&path, "%s/.git", strcmp(dir, "/") ? dir : "");
		if (!access(path.buf, F_OK))
			break;
		slash = strrchr(dir, '/');
		if (!slash || !strcmp(dir, "/")) {
			free(dir);
			dir = xstrdup(cwd);	/* not in git */
			break;
		}
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	strbuf_release(&path);
	free(cwd);
	return dir;
}

static int make_dir(const char *path)
{
	if (mkdir(path, 0777) && errno != EEXIST)
		return error("cannot create '%s': %s", path, strerror(errno));
	return 0;
}

/* Remove directory 'path' and the files in it (scale makes no subdirectories). */
static int remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : error("cannot open '%s': %s", path, strerror(errno));
	while ((e = readdir(d))) {
		char *f;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		f = xstrfmt("%s/%s", path, e->d_name);
		if (unlink(f) && errno != ENOENT)
			ret = error("cannot remove '%s': %s", f, strerror(errno));
		free(f);
	}
	closedir(d);
	if (!ret && rmdir(path) && errno != ENOENT)
		ret = error("cannot remove '%s': %s", path, strerror(errno));
	return ret;
}

/*
 * Where the results go: <top>/.hotloop/scale/<workload>/ for the profiles
 * (made as needed; .hotloop/.gitignore keeps all of it out of git status)
 * and, while the sizes run, <workload>.new/ next to it, empty.
 */
static int make_dirs(const char *top, const char *workload, char **final, char **fresh)
{
	char *h = xstrfmt("%s/.hotloop", top), *ign = xstrfmt("%s/.gitignore", h);
	char *s = xstrfmt("%s/%s", top, SCALE_DIR);
	int ret = -1;

	*final = xstrfmt("%s/%s", s, workload);
	*fresh = xstrfmt("%s/%s.new", s, workload);
	if (make_dir(h) || make_dir(s))
		goto out;
	if (access(ign, F_OK) && write_file_atomic(ign, "*\n", 2))
		goto out;
	/* what a killed run left */
	if (remove_dir(*fresh) || make_dir(*fresh))
		goto out;
	ret = 0;
out:
	free(h);
	free(ign);
	free(s);
	return ret;
}

/*
 * Put the new profiles in place of the old ones: a run that fails or is
 * killed leaves the last complete result as it was.
 */
static int replace_dir(const char *final, const char *fresh)
{
	char *old = xstrfmt("%s.old", final);
	int ret = -1;

	if (remove_dir(old))
		goto out;
	if (rename(final, old) && errno != ENOENT) {
		error("cannot rename '%s': %s", final, strerror(errno));
		goto out;
	}
	if (rename(fresh, final)) {
		error("cannot rename '%s' to '%s': %s", fresh, final, strerror(errno));
		goto out;
	}
	ret = remove_dir(old);
out:
	free(old);
	return ret;
}

static void progress(const struct scale_job *j, size_t i, long r)
{
	if (!isatty(2))
		return;
	fprintf(stderr, "\r\033[Kscale: n=%llu (%zu/%zu)", (unsigned long long)j->sizes[i],
		i + 1, j->nr_sizes);
	if (j->repeat > 1)
		fprintf(stderr, ", run %ld/%ld", r + 1, j->repeat);
}

/* Why a run of size n failed, or 0 when it did not. */
static int check_status(const struct scale_job *j, uint64_t n, const struct record_result *res)
{
	int st = res->wait_status;

	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	if (j->timeout_s > 0 && res->duration_ns >= (uint64_t)(j->timeout_s * 1e9))
		return error("the workload timed out at size %llu after %g s (its 'timeout'): '%s'",
			     (unsigned long long)n, j->timeout_s, j->command);
	if (WIFSIGNALED(st))
		return error("the workload failed at size %llu: killed by signal %d (%s): '%s'",
			     (unsigned long long)n, WTERMSIG(st), strsignal(WTERMSIG(st)), j->command);
	return error("the workload failed at size %llu: exit status %d: '%s'",
		     (unsigned long long)n, WIFEXITED(st) ? WEXITSTATUS(st) : -1, j->command);
}

/*
 * Record size i (j->repeat times) into 'path' and add it to s, which says
 * the profile will be at 'final'. 0, or an exit status.
 */
static int run_size(struct scale_job *j, struct scale *s, size_t i, const char *path,
		    const char *final)
{
	uint64_t n = j->sizes[i];
	char *argv_sh[4] = { "/bin/sh", "-c", NULL, NULL };
	char **argv = NULL;
	struct profile merged, one;
	struct record_result res;
	double wall = 0;
	size_t nargs = 0;
	int ret = HL_EXIT_FAILURE;

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
	j->rec.argv = argv;
	for (long r = 0; r < j->repeat; r++) {
		char *tmp = j->repeat > 1 ? xstrfmt("%s.%ld.tmp", path, r) : NULL;
		int rc;

		progress(j, i, r);
		j->rec.output = tmp ? tmp : path;
		rc = record_run(&j->rec, &res);
		if (isatty(2))
			fprintf(stderr, "\r\033[K");
		if (rc < 0) {
			ret = rc == -1 ? HL_EXIT_FAILURE : -rc;
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
			rc = pprof_read_file(&one, j->rec.output);
		if (!rc)
			rc = scale_add_profile(s, i, &one, 1.0 / j->rec.sampler.freq);
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
	if (j->repeat > 1 && pprof_write_file(&merged, path))
		goto out;
	scale_set_run(s, i, wall, final);
	ret = 0;
out:
	j->rec.argv = NULL;
	j->rec.output = NULL;
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

/* The functions the table shows: --min-samples at one size at least, --top of them. */
static size_t pick_rows(const struct scale_job *j, const struct scale *s, size_t *rows)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_fns && (j->top <= 0 || n < (size_t)j->top); i++)
		if (s->fns[i].fit.points)
			rows[n++] = i;
	return n;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void print_row(const char *name, const char *file, int wname, int wfile,
		      const struct scale_fit *fit, const double *cost, size_t nr_sizes)
{
	struct strbuf verdict = STRBUF_INIT;
	char expo[64] = "-", r2[16] = "-";

	if (fit->fitted) {
		snprintf(expo, sizeof(expo), "%.2f [%.2f, %.2f]", fit->exponent, fit->ci_low, fit->ci_high);
		snprintf(r2, sizeof(r2), "%.3f", fit->r2);
	}
	scale_describe(fit, &verdict);
	printf("%-*.*s  %-*.*s  %-22s  %5s  %-20s", wname, wname, name, wfile, wfile,
	       base_name(file), expo, r2, verdict.buf);
	for (size_t k = 0; k < nr_sizes; k++)
		printf("  %9.3fs", cost[k]);
	printf("\n");
	strbuf_release(&verdict);
}

static void print_table(const struct scale_job *j, const struct scale *s)
{
	size_t *rows = xcalloc(s->nr_fns + 1, sizeof(*rows)), shown = pick_rows(j, s, rows);
	size_t wname = strlen("(program)"), wfile = 4;

	for (size_t i = 0; i < shown; i++) {
		const struct scale_fn *f = &s->fns[rows[i]];
		size_t n = strlen(f->function), b = strlen(base_name(f->file));

		wname = n > wname ? n : wname;
		wfile = b > wfile ? b : wfile;
	}
	wname = wname > 40 ? 40 : wname;
	wfile = wfile > 24 ? 24 : wfile;
	printf("# '%s' at %zu sizes, %llu to %llu; cost: total (inclusive) CPU seconds\n",
	       j->workload, s->nr_sizes, (unsigned long long)s->sizes[0],
	       (unsigned long long)s->sizes[s->nr_sizes - 1]);
	printf("%-*s  %-*s  %-22s  %5s  %-20s", (int)wname, "function", (int)wfile, "file",
	       "exponent [95%]", "R^2", "verdict");
	for (size_t k = 0; k < s->nr_sizes; k++) {
		char head[32];

		snprintf(head, sizeof(head), "n=%llu", (unsigned long long)s->sizes[k]);
		printf("  %10s", head);
	}
	printf("\n");
	for (size_t i = 0; i < shown; i++) {
		const struct scale_fn *f = &s->fns[rows[i]];

		print_row(f->function, f->file, (int)wname, (int)wfile, &f->fit, f->cost, s->nr_sizes);
	}
	if (shown < s->nr_fns)
		printf("# %zu more functions: fewer than %llu samples at every size, or past --top\n",
		       s->nr_fns - shown, (unsigned long long)j->min_samples);
	print_row("(program)", "", (int)wname, (int)wfile, &s->program, s->seconds, s->nr_sizes);
	free(rows);
}

static int run_scale(struct scale_job *j)
{
	struct scale s;
	char *top = NULL, *wdir = NULL, *fresh = NULL, *json_path = NULL, *text = NULL;
	json_t *doc = NULL;
	int ret = HL_EXIT_FAILURE;

	if (j->sizes[j->nr_sizes - 1] < SPAN_WANTED * j->sizes[0])
		warning("the sizes span only %.2fx (%llu to %llu): below %dx the exponent is poorly determined",
			(double)j->sizes[j->nr_sizes - 1] / (double)j->sizes[0],
			(unsigned long long)j->sizes[0], (unsigned long long)j->sizes[j->nr_sizes - 1],
			SPAN_WANTED);
	scale_init(&s, j->sizes, j->nr_sizes);
	if (!(top = project_top()) || make_dirs(top, j->workload, &wdir, &fresh))
		goto out;
	json_path = j->output ? xstrdup(j->output) : xstrfmt("%s/%s/%s.json", top, SCALE_DIR, j->workload);
	for (size_t i = 0; i < j->nr_sizes; i++) {
		char *name = xstrfmt("n%llu.pb.gz", (unsigned long long)j->sizes[i]);
		char *path = xstrfmt("%s/%s", fresh, name), *final = xstrfmt("%s/%s", wdir, name);

		ret = run_size(j, &s, i, path, final);
		free(name);
		free(path);
		free(final);
		if (ret)
			goto out;
	}
	scale_fit_all(&s, j->min_samples);
	doc = scale_to_json(&s, j->workload, j->command);
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	if (!text) {
		error("cannot format the result as JSON");
		ret = HL_EXIT_FAILURE;
		goto out;
	}
	if (replace_dir(wdir, fresh)) {
		ret = HL_EXIT_FAILURE;
		goto out;
	}
	if (!strcmp(json_path, "-")) {
		j->json = true;	/* -o -: the document once, on stdout */
	} else {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, text);
		strbuf_addch(&sb, '\n');
		ret = write_output(json_path, &sb) ? HL_EXIT_FAILURE : HL_EXIT_OK;
		strbuf_release(&sb);
		if (ret)
			goto out;
	}
	if (j->json) {
		print_json(doc);
		doc = NULL;
	} else {
		print_table(j, &s);
	}
	ret = HL_EXIT_OK;
	if (strcmp(json_path, "-"))
		fprintf(stderr, "hotloop scale: wrote '%s' and %zu profiles in '%s'\n",
			json_path, j->nr_sizes, wdir);
	else
		fprintf(stderr, "hotloop scale: wrote %zu profiles in '%s'\n", j->nr_sizes, wdir);
out:
	if (ret && fresh)
		remove_dir(fresh);
	json_decref(doc);
	free(text);
	scale_release(&s);
	free(top);
	free(wdir);
	free(fresh);
	free(json_path);
	return ret;
}

/* The workload named 'name', or NULL after an error listing the workloads there are. */
static const struct config_workload *find_workload(const struct config *cf, const char *name)
{
	struct strbuf names = STRBUF_INIT;

	for (size_t i = 0; i < cf->nr_workloads; i++)
		if (!strcmp(cf->workloads[i].name, name))
			return &cf->workloads[i];
	for (size_t i = 0; i < cf->nr_workloads; i++)
		strbuf_addf(&names, "%s'%s'", i ? ", " : "", cf->workloads[i].name);
	error("no workload '%s' in '%s': it has %s", name, cf->file, names.buf);
	strbuf_release(&names);
	return NULL;
}

/* Check workload w for scale and fill j from it: 0, or -1 with an error. */
static int use_workload(struct scale_job *j, const struct config_workload *w,
			const char *conf_file, bool have_sizes)
{
	char *slash;

	if (!strstr(w->run, "{n}"))
		return error("[workload \"%s\"] runs '%s', which has no {n}: add {n} to its 'run' "
			     "line where the size goes, e.g. run = ./prog {n}", w->name, w->run);
	if (!strcmp(w->name, ".") || !strcmp(w->name, ".."))
		return error("cannot save results under the workload name '%s': rename it", w->name);
	if (!have_sizes) {
		if (!w->nr_sizes)
			return error("[workload \"%s\"] has no sizes: add 'sizes = 1000 2000 4000' to it "
				     "in '%s' or pass --sizes", w->name, conf_file);
		j->sizes = xcalloc(w->nr_sizes, sizeof(*j->sizes));
		memcpy(j->sizes, w->sizes, w->nr_sizes * sizeof(*j->sizes));
		j->nr_sizes = w->nr_sizes;
	}
	j->dir = realpath(conf_file, NULL);
	if (!j->dir)
		return error("cannot resolve '%s': %s", conf_file, strerror(errno));
	slash = strrchr(j->dir, '/');
	slash[slash == j->dir] = '\0';
	j->workload = w->name;
	j->run = xstrdup(w->run);
	j->command = xstrdup(w->run);
	j->timeout_s = w->timeout_s;
	j->rec.dir = j->dir;
	j->rec.duration_ns = (uint64_t)(j->timeout_s * 1e9);
	return 0;
}

/* Fill j from workload 'name' (NULL: the primary) of the config: 0 or -1. */
static int from_config(struct scale_job *j, const char *name, const char *conf_file,
		       bool have_sizes, struct config *cf, char **found)
{
	const struct config_workload *w;

	if (!conf_file) {
		if (config_find(".", found))
			return -1;
		conf_file = *found;
	}
	config_release(cf);
	if (config_parse_file(cf, conf_file))
		return -1;
	w = name ? find_workload(cf, name) : &cf->workloads[cf->primary];
	if (!w)
		return -1;
	return use_workload(j, w, conf_file, have_sizes);
}

enum { OPT_MIN_SAMPLES = 256, OPT_JSON };

int cmd_scale(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "freq", required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "min-samples", required_argument, NULL, OPT_MIN_SAMPLES },
		{ "top", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "config", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct scale_job j = { .repeat = 1, .min_samples = SCALE_MIN_SAMPLES, .top = 25 };
	struct config cf;
	const char *sizes_arg = NULL, *conf_file = NULL, *workload = NULL;
	char *found = NULL;
	bool have_cmd = false;
	long v;
	int c, ret = HL_EXIT_USAGE;

	config_init(&cf);
	j.rec.sampler.freq = SAMPLER_DEFAULT_FREQ;
	j.rec.discard_stdout = true;
	optind = 1;
	opterr = 0;
	for (;;) {
		while ((c = getopt_long(argc, argv, "+s:F:g:r:n:o:f:", opts, NULL)) != -1) {
			switch (c) {
			case 's':
				sizes_arg = optarg;
				break;
			case 'F':
				if ((v = parse_count("-F", optarg, 1, 1000000)) < 0)
					goto out;
				j.rec.sampler.freq = (unsigned)v;
				break;
			case 'g':
				if (parse_call_graph("scale", optarg, &j.rec.sampler))
					goto out;
				break;
			case 'r':
				if ((j.repeat = parse_count("--repeat", optarg, 1, 1000)) < 0)
					goto out;
				break;
			case OPT_MIN_SAMPLES:
				if ((v = parse_count("--min-samples", optarg, 1, 1000000000)) < 0)
					goto out;
				j.min_samples = (uint64_t)v;
				break;
			case 'n':
				if ((j.top = parse_count("--top", optarg, 0, 1000000)) < 0)
					goto out;
				break;
			case 'o':
				if (!*optarg) {
					ret = usage_error("scale", "-o needs a file name");
					goto out;
				}
				j.output = optarg;
				break;
			case OPT_JSON:
				j.json = true;
				break;
			case 'f':
				conf_file = optarg;
				break;
			default:
				ret = usage_error("scale", "unknown option '%s'", argv[optind - 1]);
				goto out;
			}
		}
		if (optind >= argc)
			break;
		if (!strcmp(argv[optind - 1], "--")) {
			have_cmd = true;
			break;
		}
		if (workload) {
			ret = usage_error("scale", "unexpected argument '%s': a command goes after --",
					  argv[optind]);
			goto out;
		}
		workload = argv[optind++];
	}
	if (have_cmd && (workload || conf_file)) {
		ret = usage_error("scale", "give a workload or a command after --, not both");
		goto out;
	}
	if (sizes_arg) {
		struct strbuf why = STRBUF_INIT;

		if (config_parse_sizes(sizes_arg, &j.sizes, &j.nr_sizes, &why)) {
			ret = usage_error("scale", "invalid value '%s' for --sizes: %s; expected at least %d "
					  "different whole numbers above 0, like 1000,2000,4000",
					  sizes_arg, why.buf, CONFIG_MIN_SIZES);
			strbuf_release(&why);
			goto out;
		}
		strbuf_release(&why);
	}
	if (have_cmd) {
		bool has_n = false;

		for (int i = optind; i < argc; i++)
			has_n |= strstr(argv[i], "{n}") != NULL;
		if (!has_n) {
			ret = usage_error("scale", "the command has no {n}: write {n} where the size goes, "
					  "e.g. hotloop scale --sizes 1000,2000,4000 -- ./prog {n}");
			goto out;
		}
		if (!sizes_arg) {
			ret = usage_error("scale", "a command needs --sizes, e.g. --sizes 1000,2000,4000");
			goto out;
		}
		j.workload = "cmd";
		j.argv = argv + optind;
		j.command = join_argv(j.argv);
	} else if (from_config(&j, workload, conf_file, sizes_arg != NULL, &cf, &found)) {
		ret = HL_EXIT_FAILURE;
		goto out;
	}
	ret = run_scale(&j);
out:
	free(j.sizes);
	free(j.command);
	free(j.run);
	free(j.dir);
	free(found);
	config_release(&cf);
	return ret;
}
