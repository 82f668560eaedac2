/*
 * cmd-init.c: `hotloop init [--force]`: write a commented starter
 * hotloop.conf in the current directory, filled in with what can be guessed
 * from the project (a Makefile and its test/check/bench targets, the usual
 * source and test directories). The file it writes is always valid.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "config.h"
#include "strbuf.h"

const char usage_init[] =
"usage: hotloop init [--force]\n"
"\n"
"Write a commented starter hotloop.conf in the current directory. With a\n"
"Makefile, the build is 'make -j2' and its test or check target becomes the\n"
"correctness gate; src, lib and include become the owned code and tests and\n"
"bench the protected paths, when they exist. Edit the [workload] it writes:\n"
"its command is the one whose speed matters. See docs/config.md.\n"
"\n"
"    --force    overwrite an existing hotloop.conf\n"
"\n"
"Exit status: 0 when written, 1 when hotloop.conf exists (without --force)\n"
"or cannot be written, 2 on a usage error.\n";

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static const char *find_makefile(void)
{
	static const char *names[] = { "GNUmakefile", "makefile", "Makefile" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!access(names[i], R_OK))
			return names[i];
	return NULL;
}

/* Does the makefile define target 'name' ("name:" at the start of a line)? */
static bool has_target(const struct strbuf *mk, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = mk->buf; p && *p; ) {
		if (!strncmp(p, name, n)) {
			const char *q = p + n;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == ':' && q[1] != '=')
				return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static void add_words(struct strbuf *sb, const char *key, const char **dirs, size_t n,
		      const char *extra)
{
	bool any = false;

	strbuf_addf(sb, "\t%s =", key);
	for (size_t i = 0; i < n; i++) {
		if (is_dir(dirs[i])) {
			strbuf_addf(sb, " %s", dirs[i]);
			any = true;
		}
	}
	if (extra)
		strbuf_addf(sb, " %s", extra);
	else if (!any)
		strbuf_addstr(sb, " .");
	strbuf_addch(sb, '\n');
}

static void starter(struct strbuf *sb)
{
	static const char *owned[] = { "src", "lib", "include" };
	static const char *protected_dirs[] = { "tests", "test", "bench", "benchmarks" };
	struct strbuf mk = STRBUF_INIT;
	const char *makefile = find_makefile();
	const char *test = NULL, *run = NULL;

	if (makefile && read_file(&mk, makefile, 4 << 20) < 0)
		strbuf_reset(&mk);
	if (makefile)
		test = has_target(&mk, "test") ? "make test" :
		       has_target(&mk, "check") ? "make check" : NULL;
	if (makefile)
		run = has_target(&mk, "bench") ? "make bench" :
		      has_target(&mk, "benchmark") ? "make benchmark" : NULL;

	strbuf_addstr(sb,
"# hotloop.conf: what to build, how to check it, what to make faster.\n"
"# Format and every key: docs/config.md. `hotloop config` validates it.\n"
"\n"
"[project]\n"
"\t# run in each build's directory before testing and measuring\n");
	if (makefile)
		strbuf_addstr(sb, "\tbuild = make -j2\n");
	else
		strbuf_addstr(sb, "\t# build = make -j2\n");
	strbuf_addstr(sb, "\t# our code: where changes may be made (. = everything not protected)\n");
	for (size_t i = 0; i < ARRAY_SIZE(owned); i++) {
		if (is_dir(owned[i])) {
			add_words(sb, "owned", owned, ARRAY_SIZE(owned), NULL);
			break;
		}
	}
	strbuf_addstr(sb, "\t# a change touching these is rejected before it is built\n");
	add_words(sb, "protected", protected_dirs, ARRAY_SIZE(protected_dirs), CONFIG_FILE);
	strbuf_addstr(sb,
"\t# brief-budget = 4000\t# tokens of the brief that run, loop and brief write\n"
"\n[gate]\n"
"\t# must pass for a change to be kept\n");
	if (test)
		strbuf_addf(sb, "\ttest = %s\n", test);
	else
		strbuf_addstr(sb, "\t# test = make test\n");
	strbuf_addstr(sb,
"\tfingerprint = yes\t# every workload's output must match the baseline\n"
"\ttimeout = 60s\t\t# per run\n"
"\t# heap = yes\t\t# measure heap-peak, allocs, alloc-bytes of every run\n"
"\n[improve]\n"
"\tmetric = cpu\t\t# cpu | wall | instructions\n"
"\tmin-improvement = 3%\t# the primary workload must gain this much\n"
"\tguard-regression = 2%\t# the other workloads may lose this much\n"
"\tguard-floor = 5ms\t# ... or this much, whichever is larger\n"
"\t# ram-budget = 2G\t# peak RSS a candidate may use\n"
"\t# ram-budget-on = heap\t# ... or its heap peak (rss by default)\n"
"\trounds = 10\n"
"\tmax-rejects-in-a-row = 3\n"
"\n[agent]\n"
"\t# the coding agent's command; the brief arrives on its standard input\n"
"\t# command = claude -p\n"
"\ttimeout = 20m\n"
"\n# A workload is a command whose cost is measured. The first one (or the\n"
"# one with primary = yes) is optimized; the others guard against slowdowns.\n"
"[workload \"main\"]\n");
	if (run) {
		strbuf_addstr(sb, "\trun = ");
		config_add_value(sb, run);
		strbuf_addch(sb, '\n');
	} else {
		strbuf_addstr(sb,
"\t# replace with the command whose speed matters, e.g. ./prog data/big.txt\n"
"\trun = true\n");
	}
	strbuf_addstr(sb,
"\n# [metric \"requests_per_second\"]\t# printed as HOTLOOP_METRIC name=value\n"
"#\tbetter = higher\n"
"#\ttolerance = 2%\n");
	strbuf_release(&mk);
}

int cmd_init(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf sb = STRBUF_INIT;
	bool force = false;
	int opt, ret = HL_EXIT_FAILURE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'F':
			force = true;
			break;
		default:
			return usage_error("init", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("init", "unexpected argument '%s'", argv[optind]);
	if (!force && !access(CONFIG_FILE, F_OK)) {
		error("%s already exists: pass --force to overwrite it", CONFIG_FILE);
		return HL_EXIT_FAILURE;
	}
	starter(&sb);
	if (write_file_atomic(CONFIG_FILE, sb.buf, sb.len) < 0)
		goto out;
	printf("wrote %s: edit its [workload \"main\"], then run 'hotloop config'\n", CONFIG_FILE);
	ret = HL_EXIT_OK;
out:
	strbuf_release(&sb);
	return ret;
}
