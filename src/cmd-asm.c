/*
 * cmd-asm.c: `hotloop asm BINARY --fn NAME [--profile FILE]`: one
 * function's instructions with their share of the samples, grouped by
 * source line, the instruction mix and the one-line verdict. The work is
 * lib/asm.c's; this file parses arguments and formats text or JSON.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "asm.h"
#include "profile.h"
#include "profile-io.h"

const char usage_asm[] =
"usage: hotloop asm BINARY --fn NAME [--profile FILE] [--sample-type NAME]\n"
"                   [--all] [--json]\n"
"\n"
"Disassemble one function of an ELF executable, shared library or object\n"
"file (x86-64, AArch64): each instruction with its share of the samples,\n"
"grouped by source line, the hot instructions marked, the instruction mix\n"
"of the function and of its hot instructions, and a one-line verdict\n"
"(division, scalar FP, not vectorized, branch-heavy, memory-bound or\n"
"vectorized) with the evidence for each finding.\n"
"\n"
"  --fn NAME            the function: its name, raw or demangled, or a unique\n"
"                       part of it, or an address 0x... inside it; a function\n"
"                       inlined everywhere is read in the function holding\n"
"                       its copies (with --profile: the most samples)\n"
"  --profile FILE       a profile of the program (any report reads: pprof,\n"
"                       perf.data, perf script text...; - reads standard\n"
"                       input): hot instructions are those holding 80% of\n"
"                       the function's samples; without one, the innermost\n"
"                       loops\n"
"  --sample-type NAME   the profile's value to use (default: its default,\n"
"                       else samples)\n"
"  --all                list every instruction (a long function otherwise\n"
"                       shows only its hot instructions, with context)\n"
"  --json               one JSON document on stdout (docs/asm.md)\n"
"\n"
"Exit status: 0, 1 when the file, the function or the profile cannot be\n"
"read (no such function, several, a stripped or damaged file), 2 for a\n"
"usage error.\n";

/* Longer functions are listed around their hot instructions only. */
#define LONG_FUNCTION 200
#define CONTEXT 6

static double pct(int64_t v, int64_t total)
{
	return total > 0 && v > 0 ? 100.0 * (double)v / (double)total : 0.0;
}


static void print_header(const struct asm_function *f)
{
	size_t n = 0;

	uint64_t bytes = 0;
	const char *where = *f->inlined_into ? "its inlined code" : "this function";

	for (size_t i = 0; i < f->nr_insns; i++)
		n += !(f->insns[i].classes & ASM_C_NOP) && !f->insns[i].outside;
	printf("function  %s", f->name);
	if (strcmp(f->name, f->system_name))
		printf(" (%s)", f->system_name);
	if (*f->inlined_into) {
		for (size_t i = 0; i < f->nr_ranges; i++)
			bytes += f->ranges[i].end - f->ranges[i].start;
		printf("\ninlined   into %s", f->inlined_into);
		if (strcmp(f->inlined_into, f->inlined_into_system))
			printf(" (%s)", f->inlined_into_system);
		printf(" at 0x%" PRIx64 "-0x%" PRIx64 ": %zu cop%s, %" PRIu64 " bytes in %zu range%s, %zu instructions\n",
		       f->start, f->end, f->nr_copies, f->nr_copies == 1 ? "y" : "ies", bytes,
		       f->nr_ranges, f->nr_ranges == 1 ? "" : "s", n);
		if (f->nr_into > 1) {
			printf("also      inlined into");
			for (size_t i = 1; i < f->nr_into && i <= 5; i++)
				printf("%s %s (%zu)", i > 1 ? "," : "", f->into[i].name, f->into[i].copies);
			if (f->nr_into > 6)
				printf(" and %zu more", f->nr_into - 6);
			printf("\n");
		}
	} else {
		printf("\naddress   0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes, %zu instructions)%s\n",
		       f->start, f->end, f->end - f->start, n,
		       f->relocatable ? ", offsets in its section (an object file)" : "");
	}
	printf("binary    %s (%s)\n", f->binary, asm_arch_name(f->arch));
	if (f->annotated && f->samples > 0)
		printf("samples   %" PRId64 " %s in %s: %.1f%% of the profile's %" PRId64 "\n",
		       f->samples, f->sample_type, where, pct(f->samples, f->profile_samples),
		       f->profile_samples);
	else if (f->annotated)
		printf("samples   none of the profile's %" PRId64 " %s are in %s (is it a profile of this build?)\n",
		       f->profile_samples, f->sample_type, where);
	switch (f->hot_rule) {
	case ASM_HOT_SAMPLES:
		printf("hot       * the %zu instruction%s holding 80%% of the function's samples; | the rest of their loops\n",
		       f->nr_hot, f->nr_hot == 1 ? "" : "s");
		break;
	case ASM_HOT_LOOPS:
		printf("hot       * the %zu instructions of the innermost loops\n", f->nr_hot);
		break;
	case ASM_HOT_FUNCTION:
		printf("hot       * the whole function: it has no loop\n");
		break;
	}
}

/* Which instructions to list: all, or the hot ones and their neighbours. */
static void pick_shown(const struct asm_function *f, bool all, bool *shown)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nr_insns; i++)
		n += !f->insns[i].outside;
	if (all || n <= LONG_FUNCTION) {
		for (size_t i = 0; i < f->nr_insns; i++)
			shown[i] = !f->insns[i].outside;
		return;
	}
	for (size_t i = 0; i < f->nr_insns; i++) {
		if (!f->insns[i].hot && !f->insns[i].in_hot_loop)
			continue;
		for (size_t k = i >= CONTEXT ? i - CONTEXT : 0; k < f->nr_insns && k <= i + CONTEXT; k++)
			shown[k] = !f->insns[k].outside;
	}
}

static void print_skipped(const struct asm_function *f, size_t skipped, size_t outside)
{
	printf("          ... %zu instruction%s", skipped, skipped == 1 ? "" : "s");
	if (outside == skipped)
		printf(" of %s, not inlined %s", f->inlined_into, f->name);
	else if (outside)
		printf(" (%zu of them of %s, not inlined %s)", outside, f->inlined_into, f->name);
	printf("\n");
}

static void print_listing(const struct asm_function *f, bool all)
{
	bool *shown = xcalloc(f->nr_insns + 1, sizeof(*shown));
	const char *file = NULL, *inlined = "";
	int line = -1;
	size_t skipped = 0, outside = 0;

	pick_shown(f, all, shown);
	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];
		char share[16] = "";

		if (!shown[i]) {
			skipped++;
			outside += in->outside;
			continue;
		}
		if (skipped) {
			print_skipped(f, skipped, outside);
			skipped = outside = 0;
		}
		if (*in->file && (!file || strcmp(file, in->file) || line != in->line ||
				  strcmp(inlined, in->inlined))) {
			printf("%s%s:%d", file ? "" : "\n", short_path(in->file), in->line);
			if (*in->inlined)
				printf(" (inlined %s)", in->inlined);
			printf("\n");
			file = in->file;
			line = in->line;
			inlined = in->inlined;
		}
		if (f->annotated && in->samples > 0)
			snprintf(share, sizeof(share), "%5.1f%%", pct(in->samples, f->samples));
		printf("%c %10" PRIx64 " %6s  %-8s %s\n",
		       in->hot ? '*' : in->in_hot_loop ? '|' : ' ', in->addr, share,
		       in->mnemonic, in->operands);
	}
	if (skipped)
		print_skipped(f, skipped, outside);
	free(shown);
}

static void mix_row(const struct asm_function *f, const char *name, size_t off, bool always)
{
	int64_t all = *(const int64_t *)((const char *)&f->mix + off);
	int64_t hot = *(const int64_t *)((const char *)&f->hot_mix + off);
	int64_t loop = *(const int64_t *)((const char *)&f->loop_mix + off);
	int64_t samples = *(const int64_t *)((const char *)&f->sample_mix + off);

	if (!always && !all)
		return;
	printf("  %-18s %9" PRId64 " %9" PRId64 " %9" PRId64, name, all, hot, loop);
	if (f->annotated && f->samples > 0)
		printf(" %8.1f%%", pct(samples, f->samples));
	printf("\n");
}

static void print_mix(const struct asm_function *f)
{
#define ROW(name, field, always) mix_row(f, name, offsetof(struct asm_mix, field), always)
	printf("\n%-20s %9s %9s %9s%s\n", "mix", "function", "hot", "hot loop",
	       f->annotated && f->samples > 0 ? "   samples" : "");
	ROW("instructions", instructions, true);
	ROW("loads", load, true);
	ROW("stores", store, true);
	ROW("branches", branch, true);
	ROW("  conditional", cond_branch, false);
	ROW("calls", call, false);
	ROW("integer divides", int_div, false);
	ROW("scalar FP", fp_scalar, true);
	ROW("FP divide/sqrt", fp_div, false);
	ROW("packed SIMD", simd, true);
	ROW("  64-bit", simd64, false);
	ROW("  128-bit", simd128, false);
	ROW("  256-bit", simd256, false);
	ROW("  512-bit", simd512, false);
	ROW("  scalable (SVE)", simd_scalable, false);
#undef ROW
}

static void print_verdict(const struct asm_function *f)
{
	printf("\nverdict   %s\n", f->verdict);
	for (int i = 0; i < ASM_NR_TAGS; i++)
		if (f->tags & asm_tag_order[i])
			printf("  %-15s %s\n", asm_tag_name(asm_tag_order[i]),
			       asm_evidence(f, asm_tag_order[i]));
}

int cmd_asm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fn", required_argument, NULL, 'f' },
		{ "profile", required_argument, NULL, 'p' },
		{ "sample-type", required_argument, NULL, 'T' },
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	const char *binary = NULL, *fn = NULL, *profile_path = NULL, *type = NULL;
	struct asm_function f = ASM_FUNCTION_INIT;
	struct asm_load_options lo = ASM_LOAD_OPTIONS_INIT;
	struct profile prof;
	bool json = false, all = false;
	int c, idx, ret = HL_EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fn = optarg;
			break;
		case 'p':
			profile_path = optarg;
			break;
		case 'T':
			type = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'j':
			json = true;
			break;
		default:
			return usage_error("asm", "invalid option");
		}
	}
	if (optind < argc)
		binary = argv[optind++];
	if (optind < argc)
		return usage_error("asm", "unexpected argument '%s'", argv[optind]);
	if (!binary)
		return usage_error("asm", "no binary given");
	if (!fn || !*fn)
		return usage_error("asm", "no function given: name one with --fn");
	if (type && !profile_path)
		return usage_error("asm", "--sample-type needs --profile");

	profile_init(&prof);
	if (profile_path) {
		if (profile_read_any(&prof, profile_path))
			goto out;
		if ((idx = profile_pick_sample_type(&prof, type)) < 0)
			goto out;
		/* an inlined function: the copies holding the samples */
		lo.profile = &prof;
		lo.sample_idx = idx;
	}
	if (asm_load_with(binary, fn, &lo, &f))
		goto out;
	if (profile_path && asm_annotate(&f, &prof, lo.sample_idx))
		goto out;
	asm_analyze(&f);
	if (json) {
		print_json(asm_to_json(&f));
	} else {
		print_header(&f);
		print_listing(&f, all);
		print_mix(&f);
		print_verdict(&f);
	}
	ret = HL_EXIT_OK;
out:
	profile_release(&prof);
	asm_function_release(&f);
	return ret;
}
