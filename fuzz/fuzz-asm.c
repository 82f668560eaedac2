/*
 * fuzz-asm.c: libFuzzer target for hotloop asm's ELF reader and analysis.
 * Each input is put in a memory file and read as `hotloop asm FILE --fn dot`
 * would: headers, symbol tables, sections, relocations, the code and its
 * DWARF all come from the hostile bytes. When the function is found, a
 * small profile with addresses taken from the input's last bytes is laid
 * over it, and the analysis and its JSON are built; likewise for the
 * copies of "dot_step" the DWARF says were inlined.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "util.h"
#include "asm.h"
#include "profile.h"

static void quiet(const char *prefix, const char *msg)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

/* Samples at function offsets read from the input's tail, in a mapping of this file. */
static void annotate(struct asm_function *f, const char *path, const uint8_t *data, size_t size)
{
	struct profile p;
	uint64_t mapping, start = 0x555500000000;
	int64_t one[1] = { 1 };

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	mapping = profile_add_mapping(&p, start, start + (1ull << 32), 0, path, "");
	for (size_t i = 0; i < 8 && i * 2 + 2 <= size; i++) {
		uint64_t off = data[size - 1 - 2 * i] | (uint64_t)data[size - 2 - 2 * i] << 8;
		uint64_t loc;

		if (f->nr_segments)
			off += f->segments[0].offset + (f->start - f->segments[0].vaddr);
		loc = profile_add_location(&p, mapping, start + off, NULL, 0);
		profile_add_sample(&p, &loc, 1, one, NULL, 0);
	}
	if (asm_annotate(f, &p, 0))
		abort();	/* index 0 always exists */
	profile_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct asm_function f;
	struct asm_load_options inlined = ASM_LOAD_OPTIONS_INIT;
	char path[64];
	int fd = memfd_create("fuzz-asm", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	inlined.inlined = true;
	if (!asm_load(path, "dot", false, &f)) {
		json_t *doc;

		if (!f.nr_insns || f.end <= f.start)
			abort();	/* a found function has code */
		annotate(&f, path, data, size);
		asm_analyze(&f);
		if (!f.verdict || !*f.verdict)
			abort();
		doc = asm_to_json(&f);
		if (!doc)
			abort();
		json_decref(doc);
	}
	asm_function_release(&f);

	/* an inlined function: its copies from the hostile DWARF */
	if (!asm_load_with(path, "dot_step", &inlined, &f)) {
		json_t *doc;

		if (!f.nr_insns || !f.nr_ranges || !*f.inlined_into || !f.nr_into)
			abort();	/* found copies lie in the symbol read */
		for (size_t i = 0; i < f.nr_ranges; i++)
			if (f.ranges[i].start < f.start || f.ranges[i].end > f.end ||
			    f.ranges[i].start >= f.ranges[i].end)
				abort();
		annotate(&f, path, data, size);
		asm_analyze(&f);
		doc = asm_to_json(&f);
		if (!doc)
			abort();
		json_decref(doc);
	}
	asm_function_release(&f);
	close(fd);
	return 0;
}
