/*
 * test-project.h: a throwaway git project for the engine tests: spin.c
 * (N million rounds of an LCG, then "done N"; the agents edit its loop
 * bound), a Makefile, tests/run (which the project protects), and a
 * hotloop.conf with one workload, "main" = ./spin 20. tp_sh() runs a
 * shell line there and fails the test when it does not exit 0.
 */
#ifndef TEST_PROJECT_H
#define TEST_PROJECT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char tp_spin_c[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"__attribute__((noinline)) unsigned long spin(unsigned long n)\n"
	"{\n"
	"	unsigned long x = 1;\n"
	"	for (unsigned long i = 0; i < n; i++)\n"
	"		x = x * 6364136223846793005ul + 1442695040888963407ul;\n"
	"	return x;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;\n"
	"	volatile unsigned long sink = spin(n * 1000000ul);\n"
	"	(void)sink;\n"
	"	printf(\"done %lu\\n\", n);\n"
	"	return 0;\n"
	"}\n";

static void tp_sh(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tp_sh(const char *dir, const char *fmt, ...)
{
	char cmd[8192], line[8400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "cd '%s' && { %s; } >/dev/null 2>&1", dir, cmd);
	if (system(line))
		fail_msg("failed in %s: %s", dir, cmd);
}

static void tp_write(const char *dir, const char *name, const char *text)
{
	char *path = xstrfmt("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	if (!f)
		fail_msg("cannot write %s", path);
	fputs(text, f);
	fclose(f);
	free(path);
}

/* Is there a C compiler and git? The engine tests need both. */
static bool tp_can_build(void)
{
	return !system("command -v cc >/dev/null 2>&1 && command -v git >/dev/null 2>&1");
}

/* A new project under a fresh directory (returned, caller frees); 'conf_extra' ends hotloop.conf. */
static char *tp_make(const char *conf_extra)
{
	char tmpl[] = "/tmp/hotloop-t-project-XXXXXX", *dir, *conf;

	if (!mkdtemp(tmpl))
		fail_msg("cannot make a directory");
	dir = realpath(tmpl, NULL);
	tp_write(dir, "spin.c", tp_spin_c);
	tp_write(dir, "Makefile", "spin: spin.c\n\tcc -O1 -g -fno-omit-frame-pointer -o spin spin.c\n");
	tp_sh(dir, "mkdir tests && printf '#!/bin/sh\\n./spin 1 | grep -q \"^done 1$\"\\n' >tests/run && "
		   "chmod +x tests/run && printf 'spin\\n' >.gitignore");
	conf = xstrfmt("[project]\n\tbuild = make -s\n\towned = .\n\tprotected = tests hotloop.conf Makefile\n"
		       "[gate]\n\ttest = tests/run\n[improve]\n\tmin-improvement = 10%%\n"
		       "\tmax-rejects-in-a-row = 50\n\trounds = 1\n[agent]\n\ttimeout = 10s\n"
		       "[workload \"main\"]\n\trun = ./spin 20\n\tprimary = yes\n%s", conf_extra ? conf_extra : "");
	tp_write(dir, "hotloop.conf", conf);
	free(conf);
	tp_sh(dir, "git init -q . && git add . && git -c user.name=t -c user.email=t@t commit -q -m base");
	return dir;
}

static void tp_remove(char *dir)
{
	tp_sh("/", "rm -rf '%s'", dir);
	free(dir);
}

#endif
