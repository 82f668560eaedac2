/*
 * deep-stacks: writes the profiles of bench/deep-stacks, shaped like what a
 * real recording of deep recursion or of a large program gives: functions in
 * source files under SRC (so `hotloop brief --owned SRC` owns them) in the
 * main executable, and foreign leaves in libc. The profile is pprof, or
 * folded stacks when OUT ends in .folded.
 *
 * usage: deep-stacks recursive DEPTH OUT   one stack: main, then one function
 *                                          calling itself, DEPTH frames in all
 *        deep-stacks distinct DEPTH OUT    one stack of DEPTH distinct functions
 *        deep-stacks many N OUT            N distinct stacks 20 to 30 deep over
 *                                          a few thousand functions, shaped as
 *                                          a call tree (shared prefixes)
 * SRC is the environment's DEEP_SRC, else /src/deep; DEEP_FUNCTIONS (4096)
 * sets how many functions the many stacks are made of.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"

#define FILES 64		/* source files the functions are spread over */

static const char *src_dir;
static size_t pool = 4096;	/* functions of the many-stacks program */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

struct gen {
	struct profile p;
	uint64_t exe, libc;
	uint64_t *fn;		/* fn[i]: function i of the program, id */
	size_t nfn;
	uint64_t *locs;
	size_t nloc, alloc_locs;
};

static uint64_t function(struct gen *g, size_t i, const char *name)
{
	char file[4096], fname[64];

	if (i < g->nfn && g->fn[i])
		return g->fn[i];
	snprintf(file, sizeof(file), "%s/mod%02zu/part%zu.c", src_dir, i % FILES, (i / FILES) % 4);
	if (!name) {
		snprintf(fname, sizeof(fname), "fn_%05zu", i);
		name = fname;
	}
	if (i >= g->nfn) {
		size_t n = g->nfn ? g->nfn : 64;

		while (n <= i)
			n *= 2;
		g->fn = xrealloc(g->fn, n * sizeof(*g->fn));
		memset(g->fn + g->nfn, 0, (n - g->nfn) * sizeof(*g->fn));
		g->nfn = n;
	}
	return g->fn[i] = profile_add_function(&g->p, name, name, file, (int64_t)(10 + 40 * (i / FILES)));
}

/* A call site in function i (its 'site'th), at a line and address of its own. */
static void push(struct gen *g, size_t i, const char *name, unsigned site)
{
	uint64_t fid = function(g, i, name);
	struct pf_line ln = { fid, (int64_t)(12 + 40 * (i / FILES) + 3 * site), 0 };

	ALLOC_GROW(g->locs, g->nloc + 1, g->alloc_locs);
	g->locs[g->nloc++] = profile_add_location(&g->p, g->exe, 0x401000 + 0x100 * i + 8 * site, &ln, 1);
}

static void push_foreign(struct gen *g, const char *name, uint64_t addr)
{
	uint64_t fid = profile_add_function(&g->p, name, name, "", 0);
	struct pf_line ln = { fid, 0, 0 };

	ALLOC_GROW(g->locs, g->nloc + 1, g->alloc_locs);
	g->locs[g->nloc++] = profile_add_location(&g->p, g->libc, addr, &ln, 1);
}

/* The stack in g->locs was pushed root first; samples want the leaf first. */
static void sample(struct gen *g, int64_t count)
{
	int64_t v[2] = { count, count * 1000000 };

	for (size_t a = 0, b = g->nloc; b-- > a + 1; a++) {
		uint64_t t = g->locs[a];

		g->locs[a] = g->locs[b];
		g->locs[b] = t;
	}
	profile_add_sample(&g->p, g->locs, g->nloc, v, NULL, 0);
	g->nloc = 0;
}

static void one_stack(struct gen *g, size_t depth, bool recursive)
{
	push(g, 0, "main", 0);
	for (size_t d = 1; d < depth; d++)
		push(g, recursive ? 1 : d, recursive ? "walk" : NULL, 0);
	sample(g, 1000);
}

/*
 * Stack k: a walk down a call tree whose first levels branch four ways
 * (stacks share prefixes as real ones do), then a tail of its own; one in
 * four ends in malloc or memcpy.
 */
static void many_stacks(struct gen *g, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t h = mix(k + 1);
		size_t depth = 20 + h % 11, tree = 10;

		push(g, 0, "main", 0);
		for (size_t d = 1; d < depth; d++) {
			uint64_t node = d < tree ? mix((k >> (2 * (tree - d))) * 64 + d)
						 : mix(h + d * 0x9e3779b97f4a7c15ull);

			push(g, 1 + node % (pool - 1), NULL, (unsigned)(node >> 40) % 4);
		}
		if (h % 4 == 0)
			push_foreign(g, h & 8 ? "malloc" : "__memcpy_avx_unaligned_erms", h & 8 ? 0x7f001000 : 0x7f002000);
		sample(g, 1 + (int64_t)(h >> 58));
	}
}

/* Folded stacks: one line per sample, root first. */
static int write_folded(const struct profile *p, const char *path)
{
	struct pf_frame *frames = NULL;
	size_t alloc = 0;
	FILE *f = fopen(path, "w");

	if (!f)
		return error("cannot write '%s'", path);
	for (size_t i = 0; i < p->nr_samples; i++) {
		size_t n = profile_sample_frames(p, &p->samples[i], &frames, &alloc);

		for (size_t k = n; k-- > 0;)
			fprintf(f, "%s%s", frame_name(p, &frames[k]), k ? ";" : "");
		fprintf(f, " %lld\n", (long long)profile_sample_values(p, &p->samples[i])[0]);
	}
	free(frames);
	return fclose(f) ? error("cannot write '%s'", path) : 0;
}

int main(int argc, char **argv)
{
	struct gen g = { 0 };
	size_t n, len;
	char *command;
	int ret;

	if (argc != 4 || (strcmp(argv[1], "recursive") && strcmp(argv[1], "distinct") &&
			  strcmp(argv[1], "many")) || !(n = strtoull(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: deep-stacks recursive|distinct DEPTH OUT\n"
				"       deep-stacks many N OUT\n");
		return 2;
	}
	src_dir = getenv("DEEP_SRC") ? getenv("DEEP_SRC") : "/src/deep";
	if (getenv("DEEP_FUNCTIONS") && strtoull(getenv("DEEP_FUNCTIONS"), NULL, 10) > 1)
		pool = strtoull(getenv("DEEP_FUNCTIONS"), NULL, 10);
	profile_init(&g.p);
	profile_add_sample_type(&g.p, "samples", "count");
	profile_add_sample_type(&g.p, "cpu", "nanoseconds");
	g.p.default_sample_type = profile_str(&g.p, "samples");
	g.exe = profile_add_mapping(&g.p, 0x400000, 0x4000000, 0, "/usr/local/bin/deep", "");
	g.libc = profile_add_mapping(&g.p, 0x7f000000, 0x7f200000, 0, "/usr/lib/x86_64-linux-gnu/libc.so.6", "");
	profile_add_comment(&g.p, "cpu-clock");
	command = xstrfmt("command: deep-stacks %s %zu", argv[1], n);
	profile_add_comment(&g.p, command);
	free(command);
	if (!strcmp(argv[1], "many"))
		many_stacks(&g, n);
	else
		one_stack(&g, n, !strcmp(argv[1], "recursive"));
	len = strlen(argv[3]);
	if (len > 7 && !strcmp(argv[3] + len - 7, ".folded"))
		ret = write_folded(&g.p, argv[3]);
	else
		ret = pprof_write_file(&g.p, argv[3]);
	profile_release(&g.p);
	free(g.fn);
	free(g.locs);
	return ret ? 1 : 0;
}
