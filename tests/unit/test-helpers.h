/*
 * test-helpers.h: building small profiles for unit tests from a compact
 * text: one sample per line, "leaf;caller;...;root weight", where a frame
 * "f@file:line" gives a file and line and "f+g" puts g inlined into f at
 * one location ("g" innermost). Frames are in /bin/prog, the first mapping
 * (the main executable), unless "!dso" ends them: "malloc!/lib/libc.so.6",
 * "do_syscall_64![kernel.kallsyms]". A frame "?" is an address without a
 * symbol.
 */
#ifndef TEST_HELPERS_H
#define TEST_HELPERS_H

#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util.h"
#include "profile.h"

static uint64_t th_function(struct profile *p, const char *spec, int64_t *line)
{
	char name[256], file[256] = "";
	const char *at = strchr(spec, '@');

	*line = 0;
	if (at) {
		const char *colon = strrchr(at, ':');
		snprintf(name, sizeof(name), "%.*s", (int)(at - spec), spec);
		snprintf(file, sizeof(file), "%.*s", (int)(colon ? colon - at - 1 : (long)strlen(at + 1)), at + 1);
		if (colon)
			*line = atoll(colon + 1);
	} else {
		snprintf(name, sizeof(name), "%s", spec);
	}
	return profile_add_function(p, name, name, file, 0);
}

/* The mapping of a frame spec: its "!dso" (cut off), else 'main'. */
static uint64_t th_mapping(struct profile *p, char *frame, uint64_t main)
{
	char *bang = strchr(frame, '!');
	uint64_t base;

	if (!bang)
		return main;
	*bang = '\0';
	for (size_t i = 0; i < p->nr_mappings; i++)
		if (!strcmp(profile_string(p, p->mappings[i].filename), bang + 1))
			return p->mappings[i].id;
	base = 0x100000 * (p->nr_mappings + 1);
	return profile_add_mapping(p, base, base + 0x80000, 0, bang + 1, "");
}

/* Add the samples described by 'text' to p (sample types set by the caller). */
static inline void th_add_samples(struct profile *p, const char *text)
{
	uint64_t mapping = profile_add_mapping(p, 0x1000, 0x9000, 0, "/bin/prog", "abcd");
	char *copy = xstrdup(text), *line, *save = NULL;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *space = strrchr(line, ' '), *frame, *fsave = NULL;
		uint64_t locs[64];
		size_t nloc = 0;
		int64_t values[4] = { 0 };

		if (!space)
			continue;
		*space = '\0';
		for (size_t i = 0; i < p->nr_sample_type; i++)
			values[i] = atoll(space + 1);
		for (frame = strtok_r(line, ";", &fsave); frame && nloc < 64;
		     frame = strtok_r(NULL, ";", &fsave)) {
			struct pf_line lines[8];
			size_t nl = 0;
			char *part, *psave = NULL;
			/* "f+g": g inlined into f; pprof wants innermost first */
			char *parts[8];
			size_t np = 0;
			uint64_t map = th_mapping(p, frame, mapping);
			const struct pf_mapping *m = profile_mapping(p, map);

			if (!strcmp(frame, "?")) {
				locs[nloc++] = profile_add_location(p, map, m->start + 16 * (p->nr_locations + 1),
								    NULL, 0);
				continue;
			}
			for (part = strtok_r(frame, "+", &psave); part && np < 8;
			     part = strtok_r(NULL, "+", &psave))
				parts[np++] = part;
			for (size_t k = np; k-- > 0;) {
				int64_t ln;
				uint64_t fid = th_function(p, parts[k], &ln);
				lines[nl++] = (struct pf_line){ fid, ln, 0 };
			}
			locs[nloc] = profile_add_location(p, map, m->start + 16 * (p->nr_locations + 1),
							  lines, nl);
			nloc++;
		}
		profile_add_sample(p, locs, nloc, values, NULL, 0);
	}
	free(copy);
}

/*
 * Add one sample of 'depth' frames of the function 'fn' calling itself,
 * all one location as a recursion through one call site records it, under
 * 'root' and over 'leaf' (frame specs "f@file:line" in /bin/prog; 'leaf'
 * may be NULL): stacks far deeper than th_add_samples() takes.
 */
static inline void th_add_deep(struct profile *p, const char *leaf, const char *fn, size_t depth,
			       const char *root, int64_t weight)
{
	uint64_t mapping = profile_add_mapping(p, 0x1000, 0x9000, 0, "/bin/prog", "abcd");
	const struct pf_mapping *m = profile_mapping(p, mapping);
	uint64_t *locs = xcalloc(depth + 2, sizeof(*locs)), rec = 0;
	int64_t values[4] = { weight, weight, weight, weight };
	const char *specs[] = { leaf, fn, root };
	size_t nloc = 0;

	for (size_t k = 0; k < ARRAY_SIZE(specs); k++) {
		struct pf_line line = { 0 };
		uint64_t loc;

		if (!specs[k])
			continue;
		line.function_id = th_function(p, specs[k], &line.line);
		loc = profile_add_location(p, mapping, m->start + 16 * (p->nr_locations + 1), &line, 1);
		if (k != 1) {
			locs[nloc++] = loc;
			continue;
		}
		rec = loc;
		for (size_t d = 0; d < depth; d++)
			locs[nloc++] = rec;
	}
	profile_add_sample(p, locs, nloc, values, NULL, 0);
	free(locs);
}

#endif
