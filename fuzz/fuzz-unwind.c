/*
 * fuzz-unwind.c: libFuzzer target for the hybrid unwinder's CFI steps on
 * hostile registers, stack copies and kernel chains. The target process is
 * the fuzzer itself (its own executable mappings, real CFI); the input
 * gives the registers, the chain and the stack copy. A stack or chain word
 * whose top 16 bits are 0xc0de stands for an address in the fuzzer's own
 * code (its low 24 bits an offset), so inputs can hold return addresses
 * that CFI can follow. unwinder_hybrid() must stop, keep what it has and
 * return at most 'max' frames; a crash, a sanitizer report, a leak or a
 * hang is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif

#include "unwind.h"
#include "util.h"

#define MAX_FRAMES 127
#define STACK_BASE 0x7ffd00000000ull

static struct unwinder *u;
static struct unwind_map maps[64];
static size_t nr_maps;
static uint64_t code_base;

static void load_maps(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (nr_maps < 64 && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], *path = strchr(line, '/');

		if (sscanf(line, "%llx-%llx %7s %llx", &start, &end, perms, &off) != 4 ||
		    perms[2] != 'x' || !path)
			continue;
		path[strcspn(path, "\n")] = 0;
		maps[nr_maps++] = (struct unwind_map){ start, end, off, xstrdup(path) };
		if (!code_base)
			code_base = start;
	}
	fclose(f);
}

static uint64_t word(uint64_t w)
{
	return (w >> 48) == 0xc0de ? code_base + (w & 0xffffff) : w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if defined(__x86_64__) || defined(__aarch64__)
	uint64_t regs[64], ips[64], mask = 0;
	bool keeps[64];
	unsigned char *stack;
	struct unwind_frame frames[MAX_FRAMES];
	struct unwind_target t = { getpid(), getpid(), 1, maps, 0 };
	struct unwind_state st = { 0 };
	struct unwind_chain chain = { ips, keeps, 0 };
	enum unwind_end end;
	unsigned nr = 0;
	size_t at = 0;
	int n;

	if (!u) {
		u = unwinder_new();
		load_maps();
	}
	t.nr_maps = nr_maps;
	if (size < 4 + 8 * 3)
		return 0;
	/* byte 0: how many chain entries; byte 1: their keeps_fp bits */
	chain.n = data[0] % 64;
	for (int i = 0; i < chain.n; i++)
		keeps[i] = (data[1] >> (i % 8)) & 1;
	at = 4;
	/* the registers: every one the unwinder may ask for, from the input */
#if defined(__x86_64__)
	for (int r = PERF_REG_X86_AX; r <= PERF_REG_X86_R15; r++)
		if (r <= PERF_REG_X86_IP || r >= PERF_REG_X86_R8)
			mask |= 1ull << r;
#else
	mask = (1ull << PERF_REG_ARM64_MAX) - 1;
#endif
	for (int r = 0; r < 64; r++) {
		uint64_t w = 0;

		if (!(mask & (1ull << r)))
			continue;
		if (at + 8 <= size) {
			memcpy(&w, data + at, 8);
			at += 8;
		}
		regs[nr++] = word(w);
	}
#if defined(__x86_64__)
	regs[__builtin_popcountll(mask & ((1ull << PERF_REG_X86_SP) - 1))] = STACK_BASE;
#else
	regs[__builtin_popcountll(mask & ((1ull << PERF_REG_ARM64_SP) - 1))] = STACK_BASE;
#endif
	for (int i = 0; i < chain.n; i++) {
		uint64_t w = 0;

		if (at + 8 <= size) {
			memcpy(&w, data + at, 8);
			at += 8;
		}
		ips[i] = word(w);
	}
	/* the rest is the stack copy, its code-address words resolved */
	st.stack_size = size - at;
	stack = malloc(st.stack_size ? st.stack_size : 1);
	memcpy(stack, data + at, st.stack_size);
	for (size_t i = 0; i + 8 <= st.stack_size; i += 8) {
		uint64_t w;

		memcpy(&w, stack + i, 8);
		w = word(w);
		memcpy(stack + i, &w, 8);
	}
	st.regs = regs;
	st.nr_regs = nr;
	st.regs_mask = mask;
	st.stack = stack;
	st.stack_full = data[2] & 1;
	n = unwinder_hybrid(u, &t, &st, &chain, frames, 1 + data[3] % MAX_FRAMES, &end);
	if (n < 0 || n > 1 + data[3] % MAX_FRAMES)
		BUG("unwinder_hybrid returned %d frames", n);
	free(stack);
#endif
	return 0;
}
