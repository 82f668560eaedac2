/*
 * t-asm.c: unit tests for lib/asm: the instruction classifier on real
 * machine code (a table of x86-64 and AArch64 encodings, each with the
 * classes it must get), and the loops, hot set, tags and verdict on
 * synthetic instruction tables, with and without samples.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util.h"
#include "asm.h"
#include "profile.h"

#define L ASM_C_LOAD
#define S ASM_C_STORE
#define BR ASM_C_BRANCH
#define CC (ASM_C_BRANCH | ASM_C_COND)
#define CALL ASM_C_CALL
#define RET ASM_C_RET
#define IDIV ASM_C_INT_DIV
#define FPS (ASM_C_FP_SCALAR | ASM_C_FP_ARITH)
#define FPA ASM_C_FP_ARITH
#define FDIV ASM_C_FP_DIV
#define SIMD ASM_C_SIMD
#define ALU ASM_C_INT_ALU
#define NOP ASM_C_NOP
#define UNK ASM_C_UNKNOWN
#define IND ASM_C_INDIRECT

/* ---- the classifier ---- */

struct dcase {
	enum asm_arch arch;
	const char *hex;	/* the encoding, bytes in file order */
	const char *what;	/* for failure messages */
	unsigned classes;	/* exactly these */
	unsigned width;		/* SIMD width, when SIMD */
	enum asm_isa isa;
	int target;		/* 1: a direct target at this offset, 0: none */
	uint64_t target_off;
};

#define X86 ASM_ARCH_X86_64
#define A64 ASM_ARCH_AARCH64
/* plain, packed SIMD (width, isa), a direct branch or call (target offset) */
#define C(arch, hex, what, cls) { arch, hex, what, cls, 0, ASM_ISA_NONE, 0, 0 }
#define V(arch, hex, what, cls, w, isa) { arch, hex, what, cls, w, isa, 0, 0 }
#define T(arch, hex, what, cls, off) { arch, hex, what, cls, 0, ASM_ISA_NONE, 1, off }

static const struct dcase dcases[] = {
	C(X86, "f30f1007", "movss xmm0, [rdi]", L),
	C(X86, "f30f5906", "mulss xmm0, [rsi]", L | FPS),
	V(X86, "c5dc5909", "vmulps ymm1, ymm4, [rcx]", L | SIMD | FPA, 256, ASM_ISA_AVX),
	V(X86, "62f1744858c2", "vaddps zmm0, zmm1, zmm2", SIMD | FPA, 512, ASM_ISA_AVX512),
	V(X86, "660ffec1", "paddd xmm0, xmm1", SIMD, 128, ASM_ISA_SSE),
	V(X86, "c5f5fec2", "vpaddd ymm0, ymm1, ymm2", SIMD, 256, ASM_ISA_AVX2),
	C(X86, "f7f9", "idiv ecx", IDIV),
	C(X86, "48f7f1", "div rcx", IDIV),
	C(X86, "f20f5ec1", "divsd xmm0, xmm1", FPS | FDIV),
	V(X86, "c5fd51c1", "vsqrtpd ymm0, ymm1", SIMD | FPA | FDIV, 256, ASM_ISA_AVX),
	V(X86, "0f1107", "movups [rdi], xmm0 (capstone 4 calls it a read)", S | SIMD, 128, ASM_ISA_SSE),
	C(X86, "8907", "mov [rdi], eax", S),
	C(X86, "0107", "add [rdi], eax", L | S | ALU),
	C(X86, "488d0437", "lea rax, [rdi + rsi]: no memory access", ALU),
	C(X86, "0f1f00", "nop dword ptr [rax]: no memory access", NOP),
	C(X86, "660fefc0", "pxor xmm0, xmm0: a zeroing idiom", 0),
	C(X86, "0f28c8", "movaps xmm1, xmm0: a register copy", 0),
	C(X86, "0f540510000000", "andps xmm0, [rip + 0x10]: fabs in scalar code", L),
	C(X86, "d8c1", "fadd st, st(1)", FPS),
	C(X86, "def9", "fdivp st(1), st", FPS | FDIV),
	C(X86, "d91f", "fstp dword ptr [rdi]", S),
	V(X86, "c4e275b8c2", "vfmadd231ps ymm0, ymm1, ymm2", SIMD | FPA, 256, ASM_ISA_AVX),
	C(X86, "c4e271b9c2", "vfmadd231ss xmm0, xmm1, xmm2", FPS),
	C(X86, "f20f2ac0", "cvtsi2sd xmm0, eax", 0),
	V(X86, "c4e27d1800", "vbroadcastss ymm0, [rax]", L | SIMD, 256, ASM_ISA_AVX),
	C(X86, "0f1808", "prefetcht0 [rax]", 0),
	C(X86, "ffe0", "jmp rax", BR | IND),
	C(X86, "ff24c5a0000000", "jmp [rax*8 + 0xa0]: a jump table", BR | IND | L),
	C(X86, "c3", "ret", RET),
	T(X86, "75fe", "jne to itself", CC, 0),
	T(X86, "eb00", "jmp to the next instruction", BR, 2),
	T(X86, "e800000000", "call the next instruction", CALL, 5),
	C(X86, "06", "push es: invalid in 64-bit mode", UNK),

	C(A64, "6a4540b8", "ldr w10, [x11], #4", L),
	C(A64, "414500bc", "str s1, [x10], #4 (capstone 4 marks it read and written)", S),
	V(A64, "63913fad", "stp q3, q4, [x11, #-16]", S | SIMD, 128, ASM_ISA_NEON),
	V(A64, "03917fad", "ldp q3, q4, [x8, #-16]", L | SIMD, 128, ASM_ISA_NEON),
	C(A64, "cf0dc21a", "sdiv w15, w14, w2", IDIV),
	C(A64, "2008c29a", "udiv x0, x1, x2", IDIV),
	C(A64, "0028211e", "fadd s0, s0, s1", FPS),
	V(A64, "00d4214e", "fadd v0.4s, v0.4s, v1.4s", SIMD | FPA, 128, ASM_ISA_NEON),
	V(A64, "00fc616e", "fdiv v0.2d, v0.2d, v1.2d", SIMD | FPA | FDIV, 128, ASM_ISA_NEON),
	C(A64, "00c0611e", "fsqrt d0, d0", FPS | FDIV),
	V(A64, "6094a14e", "mla v0.4s, v3.4s, v1.4s", SIMD, 128, ASM_ISA_NEON),
	T(A64, "00000094", "bl to itself (capstone 4: a jump)", CALL, 0),
	C(A64, "c0035fd6", "ret", RET),
	C(A64, "80001fd6", "br x4", BR | IND),
	C(A64, "017c09c8", "stxr w9, x1, [x0]: writes a status register", S),
	V(A64, "00a8df4c", "ld1 {v0.4s, v1.4s}, [x0], #32", L | SIMD, 128, ASM_ISA_NEON),
	C(A64, "2040601e", "fmov d0, d1", 0),
	C(A64, "4801080b", "add w8, w10, w8", ALU),
	T(A64, "01000054", "b.ne to itself", CC, 0),
	T(A64, "e0ffffb4", "cbz x0, back one instruction", CC, (uint64_t)-4),
	V(A64, "0000a004", "SVE add z0.s: capstone 4 cannot decode it", UNK | SIMD, 0, ASM_ISA_SVE),
};

static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;

	for (; hex[0] && hex[1] && n < max; hex += 2) {
		unsigned v;
		sscanf(hex, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static void test_asm__classifier_table(void **state)
{
	const uint64_t base = 0x10000;
	int failures = 0;

	for (size_t i = 0; i < ARRAY_SIZE(dcases); i++) {
		const struct dcase *c = &dcases[i];
		struct asm_function f;
		const struct asm_insn *in;
		uint8_t code[16];
		size_t n = unhex(c->hex, code, sizeof(code));

		asm_function_init(&f);
		assert_int_equal(asm_decode(&f, c->arch, code, n, base), 0);
		assert_true(f.nr_insns >= 1);
		in = &f.insns[0];
		if (in->classes != c->classes) {
			fprintf(stderr, "%s: classes 0x%x, want 0x%x\n", c->what, in->classes, c->classes);
			failures++;
		}
		if ((c->classes & SIMD) && (in->simd_width != c->width || in->isa != c->isa)) {
			fprintf(stderr, "%s: SIMD width %u isa %s, want %u %s\n", c->what,
				in->simd_width, asm_isa_name(in->isa), c->width, asm_isa_name(c->isa));
			failures++;
		}
		if (in->has_target != (c->target == 1) ||
		    (c->target && in->target != base + c->target_off)) {
			fprintf(stderr, "%s: target %d 0x%llx, want %d 0x%llx\n", c->what,
				in->has_target, (unsigned long long)in->target, c->target,
				(unsigned long long)(base + c->target_off));
			failures++;
		}
		asm_function_release(&f);
	}
	assert_int_equal(failures, 0);
}

static void test_asm__register_families(void **state)
{
	/* mov eax, [rdi]; add rcx, rax: the load writes what the add reads */
	static const uint8_t code[] = { 0x8b, 0x07, 0x48, 0x01, 0xc1 };
	struct asm_function f;
	bool shared = false;

	asm_function_init(&f);
	assert_int_equal(asm_decode(&f, X86, code, sizeof(code), 0x1000), 0);
	assert_int_equal(f.nr_insns, 2);
	for (int i = 0; i < f.insns[0].nr_writes; i++)
		for (int j = 0; j < f.insns[1].nr_reads; j++)
			shared |= f.insns[0].writes[i] == f.insns[1].reads[j];
	assert_true(shared);
	assert_string_equal(strtab_get(&f.strs, f.insns[0].writes[0]), "rax");
	asm_function_release(&f);
}

static void test_asm__undecodable_bytes_continue(void **state)
{
	/* an invalid byte, then ret: decoding goes on after it */
	static const uint8_t code[] = { 0x06, 0xc3 };
	struct asm_function f;

	asm_function_init(&f);
	assert_int_equal(asm_decode(&f, X86, code, sizeof(code), 0x1000), 0);
	assert_int_equal(f.nr_insns, 2);
	assert_string_equal(f.insns[0].mnemonic, ".byte");
	assert_int_equal(f.insns[1].classes, RET);
	assert_int_equal(f.insns[1].addr, 0x1001);
	asm_function_release(&f);
}

/* ---- synthetic tables ---- */

#define BASE 0x1000

struct row {
	const char *mnemonic;
	unsigned classes;
	int target;		/* index of the target instruction, -1: none */
	int64_t samples;
	uint32_t reads, writes;	/* one register family each, 0: none */
	uint16_t width;
	enum asm_isa isa;
};

#define END_ROWS { NULL, 0, 0, 0, 0, 0, 0, 0 }

static void build(struct asm_function *f, const struct row *rows, bool annotated)
{
	asm_function_init(f);
	f->start = BASE;
	for (size_t i = 0; rows[i].mnemonic; i++) {
		const struct row *r = &rows[i];
		struct asm_insn *in;

		ALLOC_GROW(f->insns, f->nr_insns + 1, f->alloc_insns);
		in = &f->insns[f->nr_insns++];
		memset(in, 0, sizeof(*in));
		in->addr = BASE + 4 * i;
		in->size = 4;
		in->classes = r->classes;
		in->mnemonic = r->mnemonic;
		in->operands = "";
		in->file = in->inlined = "";
		in->loop = -1;
		in->samples = r->samples;
		in->simd_width = r->width;
		in->isa = (uint8_t)r->isa;
		if (r->target >= 0 && (r->classes & (BR | CALL))) {
			in->has_target = true;
			in->target = BASE + 4 * (uint64_t)r->target;
		}
		if (r->reads)
			in->reads[in->nr_reads++] = r->reads;
		if (r->writes)
			in->writes[in->nr_writes++] = r->writes;
		f->samples += r->samples;
	}
	f->end = BASE + 4 * f->nr_insns;
	f->annotated = annotated;
	asm_analyze(f);
}

static void assert_hot(const struct asm_function *f, const char *want)
{
	char got[64];
	size_t i;

	for (i = 0; i < f->nr_insns && i + 1 < sizeof(got); i++)
		got[i] = f->insns[i].hot ? 'h' : '.';
	got[i] = '\0';
	assert_string_equal(got, want);
}

/* for (i...) s += a[i] * b[i], scalar */
static const struct row scalar_dot[] = {
	{ "pxor", 0, -1, 0, 0, 0, 0, 0 },
	{ "movss", L, -1, 0, 0, 1, 0, 0 },
	{ "mulss", L | FPS, -1, 0, 1, 1, 0, 0 },
	{ "add", ALU, -1, 0, 2, 2, 0, 0 },
	{ "addss", FPS, -1, 0, 1, 3, 0, 0 },
	{ "cmp", 0, -1, 0, 2, 0, 0, 0 },
	{ "jne", CC, 1, 0, 0, 0, 0, 0 },
	{ "ret", RET, -1, 0, 0, 0, 0, 0 },
	END_ROWS
};

static void test_asm__scalar_fp_loop(void **state)
{
	struct asm_function f;

	build(&f, scalar_dot, false);
	assert_int_equal(f.nr_loops, 1);
	assert_int_equal(f.loops[0].head, BASE + 4);
	assert_int_equal(f.loops[0].end, BASE + 24);
	assert_int_equal(f.hot_rule, ASM_HOT_LOOPS);
	assert_hot(&f, ".hhhhhh.");
	assert_int_equal(f.tags, ASM_SCALAR_FP | ASM_NOT_VECTORIZED);
	assert_string_equal(f.verdict, "hot loop is scalar FP, not vectorized");
	assert_non_null(strstr(asm_evidence(&f, ASM_SCALAR_FP), "mulss, addss"));
	assert_int_equal(f.hot_mix.fp_scalar, 2);
	assert_int_equal(f.hot_mix.load, 2);
	assert_int_equal(f.mix.instructions, 8);
	asm_function_release(&f);
}

static void test_asm__vectorized_loop(void **state)
{
	static const struct row rows[] = {
		{ "vmovups", L | SIMD, -1, 0, 0, 1, 256, ASM_ISA_AVX },
		{ "vpaddd", SIMD, -1, 0, 1, 2, 256, ASM_ISA_AVX2 },
		{ "paddd", SIMD, -1, 0, 1, 2, 128, ASM_ISA_SSE },
		{ "add", ALU, -1, 0, 3, 3, 0, 0 },
		{ "cmp", 0, -1, 0, 3, 0, 0, 0 },
		{ "jne", CC, 0, 0, 0, 0, 0, 0 },
		{ "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_int_equal(f.tags, 0);
	assert_int_equal(f.vector_isa, ASM_ISA_AVX2);
	assert_int_equal(f.vector_width, 256);
	assert_string_equal(f.verdict, "vectorized (AVX2, 256-bit)");
	assert_int_equal(f.hot_mix.simd256, 2);
	assert_int_equal(f.hot_mix.simd128, 1);
	asm_function_release(&f);
}

static void test_asm__division_without_profile(void **state)
{
	static const struct row rows[] = {
		{ "mov", L, -1, 0, 0, 1, 0, 0 },
		{ "cdq", 0, -1, 0, 1, 2, 0, 0 },
		{ "idiv", IDIV, -1, 0, 1, 2, 0, 0 },
		{ "add", ALU, -1, 0, 2, 3, 0, 0 },
		{ "jne", CC, 0, 0, 0, 0, 0, 0 },
		{ "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_true(f.tags & ASM_DIVISION);
	assert_string_equal(f.verdict, "integer division in the hot loop");
	assert_non_null(strstr(asm_evidence(&f, ASM_DIVISION), "idiv at 0x1008"));
	asm_function_release(&f);
}

/* The division rule with samples: the divide and the two instructions after it, 5%. */
static void test_asm__division_threshold(void **state)
{
	static const struct { int64_t on_div, after, second, rest; bool tag; } cases[] = {
		{ 0, 6, 0, 94, true },	/* skid: the samples land after the divide */
		{ 0, 0, 6, 94, true },	/* or one further (AMD) */
		{ 3, 2, 0, 95, true },	/* exactly 5% */
		{ 2, 1, 1, 96, false },
		{ 0, 0, 0, 100, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct row rows[] = {
			{ "mov", L, -1, 0, 0, 1, 0, 0 },
			{ "idiv", IDIV, -1, cases[i].on_div, 1, 2, 0, 0 },
			{ "add", ALU, -1, cases[i].after, 2, 3, 0, 0 },
			{ "xor", ALU, -1, cases[i].second, 3, 3, 0, 0 },
			{ "imul", ALU, -1, cases[i].rest, 3, 3, 0, 0 },
			{ "jne", CC, 0, 0, 0, 0, 0, 0 },
			END_ROWS
		};
		struct asm_function f;

		build(&f, rows, true);
		assert_int_equal(f.hot_rule, ASM_HOT_SAMPLES);
		assert_int_equal(!!(f.tags & ASM_DIVISION), cases[i].tag);
		asm_function_release(&f);
	}
}

/* Memory-bound with samples: 70% on the instruction right after a load. */
static void test_asm__memory_bound_threshold(void **state)
{
	static const struct { int64_t after_load, other; bool tag; } cases[] = {
		{ 95, 5, true },
		{ 70, 30, true },
		{ 69, 31, false },
		{ 54, 46, false },	/* a row-wise sum, as measured */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct row rows[] = {
			{ "movsxd", L, -1, 0, 0, 1, 0, 0 },
			{ "add", ALU, -1, cases[i].after_load, 2, 2, 0, 0 },	/* does not use the load */
			{ "add", ALU, -1, 0, 1, 3, 0, 0 },
			{ "cmp", 0, -1, cases[i].other, 2, 0, 0, 0 },
			{ "jne", CC, 0, 0, 0, 0, 0, 0 },
			END_ROWS
		};
		struct asm_function f;

		build(&f, rows, true);
		assert_int_equal(!!(f.tags & ASM_MEMORY_BOUND), cases[i].tag);
		if (cases[i].tag) {
			char want[64];
			snprintf(want, sizeof(want), "memory-bound: %d%% of hot samples on loads",
				 (int)cases[i].after_load);
			assert_string_equal(f.verdict, want);
		}
		asm_function_release(&f);
	}
}

static void test_asm__memory_bound_without_profile(void **state)
{
	/* three loads of five instructions: pointer chasing, unrolled */
	static const struct row rows[] = {
		{ "mov", L, -1, 0, 1, 1, 0, 0 },
		{ "mov", L, -1, 0, 1, 1, 0, 0 },
		{ "mov", L, -1, 0, 1, 1, 0, 0 },
		{ "test", 0, -1, 0, 1, 0, 0, 0 },
		{ "jne", CC, 0, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_int_equal(f.tags, ASM_MEMORY_BOUND);
	assert_string_equal(f.verdict, "memory-bound: 60% of the hot loop's instructions are loads");
	asm_function_release(&f);
}

static void test_asm__branchy(void **state)
{
	static const struct row rows[] = {
		/* 0 */ { "movzx", L, -1, 0, 0, 1, 0, 0 },
		/* 1 */ { "test", 0, -1, 0, 1, 0, 0, 0 },
		/* 2 */ { "je", CC, 4, 0, 0, 0, 0, 0 },
		/* 3 */ { "inc", L | S | ALU, -1, 0, 0, 0, 0, 0 },
		/* 4 */ { "test", 0, -1, 0, 1, 0, 0, 0 },
		/* 5 */ { "je", CC, 7, 0, 0, 0, 0, 0 },
		/* 6 */ { "inc", L | S | ALU, -1, 0, 0, 0, 0, 0 },
		/* 7 */ { "add", ALU, -1, 0, 2, 2, 0, 0 },
		/* 8 */ { "cmp", 0, -1, 0, 2, 0, 0, 0 },
		/* 9 */ { "jne", CC, 0, 0, 0, 0, 0, 0 },
		/* 10 */ { "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	/* two of ten loop instructions branch (the back-edge does not count) */
	build(&f, rows, false);
	assert_true(f.tags & ASM_BRANCHY);
	assert_string_equal(f.verdict, "branch-heavy: 20% of the hot loop's instructions are conditional branches");
	assert_non_null(strstr(asm_evidence(&f, ASM_BRANCHY), "2 of the 10 instructions"));
	asm_function_release(&f);
}

static void test_asm__one_branch_is_not_branchy(void **state)
{
	static const struct row rows[] = {
		{ "mov", L, -1, 0, 0, 1, 0, 0 },
		{ "test", 0, -1, 0, 1, 0, 0, 0 },
		{ "je", CC, 4, 0, 0, 0, 0, 0 },
		{ "add", ALU, -1, 0, 1, 2, 0, 0 },
		{ "jne", CC, 0, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_false(f.tags & ASM_BRANCHY);
	assert_true(f.tags & ASM_NOT_VECTORIZED);	/* add uses the loaded value */
	assert_string_equal(f.verdict, "hot loop is scalar integer code, not vectorized");
	asm_function_release(&f);
}

static void test_asm__integer_not_on_loaded_data(void **state)
{
	/* an LCG: integer arithmetic, but on nothing loaded */
	static const struct row rows[] = {
		{ "imul", ALU, -1, 0, 1, 1, 0, 0 },
		{ "add", ALU, -1, 0, 1, 1, 0, 0 },
		{ "sub", ALU, -1, 0, 2, 2, 0, 0 },
		{ "jne", CC, 0, 0, 0, 0, 0, 0 },
		{ "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_int_equal(f.tags, 0);
	assert_string_equal(f.verdict, "no problem found in the hot instructions");
	asm_function_release(&f);
}

static void test_asm__no_loop_whole_function(void **state)
{
	static const struct row rows[] = {
		{ "divsd", FPS | FDIV, -1, 0, 0, 0, 0, 0 },
		{ "sqrtsd", FPS | FDIV, -1, 0, 0, 0, 0, 0 },
		{ "nop", NOP, -1, 0, 0, 0, 0, 0 },
		{ "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_int_equal(f.hot_rule, ASM_HOT_FUNCTION);
	assert_hot(&f, "hh.h");	/* padding is never hot */
	assert_int_equal(f.tags, ASM_SCALAR_FP);
	assert_string_equal(f.verdict, "scalar FP code, no loop in the hot code");
	asm_function_release(&f);
}

static void test_asm__nested_loops(void **state)
{
	static const struct row rows[] = {
		/* 0 */ { "mov", 0, -1, 0, 0, 0, 0, 0 },
		/* 1 */ { "mov", 0, -1, 0, 0, 0, 0, 0 },	/* outer head */
		/* 2 */ { "movsxd", L, -1, 50, 0, 1, 0, 0 },	/* inner head */
		/* 3 */ { "add", ALU, -1, 30, 1, 2, 0, 0 },
		/* 4 */ { "cmp", 0, -1, 10, 0, 0, 0, 0 },
		/* 5 */ { "jne", CC, 2, 10, 0, 0, 0, 0 },
		/* 6 */ { "add", ALU, -1, 0, 0, 0, 0, 0 },
		/* 7 */ { "jne", CC, 1, 0, 0, 0, 0, 0 },
		/* 8 */ { "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;
	size_t inner, outer;

	build(&f, rows, false);
	assert_int_equal(f.nr_loops, 2);
	outer = f.loops[0].head == BASE + 4 ? 0 : 1;
	inner = 1 - outer;
	assert_int_equal(f.loops[inner].head, BASE + 8);
	assert_true(f.loops[inner].innermost);
	assert_false(f.loops[outer].innermost);
	assert_int_equal(f.loops[inner].parent, (int)outer);
	assert_int_equal(f.loops[outer].start, BASE + 4);
	assert_int_equal(f.loops[outer].end, BASE + 28);
	assert_hot(&f, "..hhhh...");
	asm_function_release(&f);

	/* with samples: the fewest instructions that hold 80% */
	build(&f, rows, true);
	assert_int_equal(f.hot_rule, ASM_HOT_SAMPLES);
	assert_hot(&f, "..hh.....");
	assert_int_equal(f.nr_hot, 2);
	assert_true(f.insns[4].in_hot_loop && f.insns[5].in_hot_loop);
	assert_false(f.insns[6].in_hot_loop);
	asm_function_release(&f);
}

/*
 * An inlined function's copy inside the function it was inlined into: the
 * loops come from the whole function, the hot set and the mix from the
 * copy's instructions only.
 */
static void test_asm__inlined_copy(void **state)
{
	static const struct row rows[] = {
		/* 0 */ { "mov", 0, -1, 0, 0, 0, 0, 0 },
		/* 1 */ { "mov", 0, -1, 0, 0, 0, 0, 0 },	/* outer head */
		/* 2 */ { "movsxd", L, -1, 0, 0, 1, 0, 0 },	/* inner head: the copy */
		/* 3 */ { "add", ALU, -1, 0, 1, 2, 0, 0 },
		/* 4 */ { "cmp", 0, -1, 0, 0, 0, 0, 0 },
		/* 5 */ { "jne", CC, 2, 0, 0, 0, 0, 0 },
		/* 6 */ { "add", ALU, -1, 0, 0, 0, 0, 0 },
		/* 7 */ { "jne", CC, 1, 0, 0, 0, 0, 0 },
		/* 8 */ { "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	/* the copy is the inner loop */
	build(&f, rows, false);
	for (size_t i = 0; i < f.nr_insns; i++)
		f.insns[i].outside = i < 2 || i > 5;
	asm_analyze(&f);
	assert_int_equal(f.nr_loops, 2);
	assert_int_equal(f.hot_rule, ASM_HOT_LOOPS);
	assert_hot(&f, "..hhhh...");
	assert_int_equal(f.mix.instructions, 4);
	assert_int_equal(f.mix.load, 1);
	asm_function_release(&f);

	/* the copy is the outer loop's own code: no innermost loop of its own */
	build(&f, rows, false);
	for (size_t i = 0; i < f.nr_insns; i++)
		f.insns[i].outside = !(i == 1 || i == 6 || i == 7);
	asm_analyze(&f);
	assert_int_equal(f.nr_loops, 2);
	assert_int_equal(f.hot_rule, ASM_HOT_FUNCTION);
	assert_hot(&f, ".h....hh.");
	assert_int_equal(f.mix.instructions, 3);
	for (size_t i = 0; i < f.nr_insns; i++)
		assert_false(f.insns[i].outside && f.insns[i].in_hot_loop);
	asm_function_release(&f);
}

/*
 * A loop laid out in pieces (as GCC does): a block placed before the head
 * jumps back to it. One loop, and the branch into that block is not a
 * back-edge.
 */
static void test_asm__loop_in_pieces(void **state)
{
	static const struct row rows[] = {
		/* 0 */ { "test", 0, -1, 0, 0, 0, 0, 0 },
		/* 1 */ { "jmp", BR, 4, 0, 0, 0, 0, 0 },
		/* 2 */ { "add", L | S | ALU, -1, 0, 0, 0, 0, 0 },
		/* 3 */ { "jmp", BR, 4, 0, 0, 0, 0, 0 },
		/* 4 */ { "movzx", L, -1, 0, 0, 1, 0, 0 },	/* head */
		/* 5 */ { "cmp", 0, -1, 0, 1, 0, 0, 0 },
		/* 6 */ { "jbe", CC, 2, 0, 0, 0, 0, 0 },
		/* 7 */ { "add", ALU, -1, 0, 1, 2, 0, 0 },
		/* 8 */ { "jne", CC, 4, 0, 0, 0, 0, 0 },
		/* 9 */ { "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_int_equal(f.nr_loops, 1);
	assert_int_equal(f.loops[0].head, BASE + 16);
	assert_int_equal(f.loops[0].start, BASE + 8);
	assert_int_equal(f.loops[0].end, BASE + 32);
	assert_hot(&f, "..hhhhhhh.");
	/* the jbe to the block before the head counts, the jne back does not */
	assert_int_equal(f.loop_mix.cond_branch, 2);
	assert_false(f.tags & ASM_BRANCHY);	/* one branch is not enough */
	asm_function_release(&f);
}

/* A jump back into shared exit code is no loop: its target does not come back. */
static void test_asm__backward_jump_without_cycle(void **state)
{
	static const struct row rows[] = {
		/* 0 */ { "cmp", 0, -1, 0, 0, 0, 0, 0 },
		/* 1 */ { "je", CC, 4, 0, 0, 0, 0, 0 },
		/* 2 */ { "addss", FPS, -1, 0, 0, 0, 0, 0 },
		/* 3 */ { "ret", RET, -1, 0, 0, 0, 0, 0 },
		/* 4 */ { "xor", 0, -1, 0, 0, 0, 0, 0 },
		/* 5 */ { "jmp", BR, 2, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_int_equal(f.nr_loops, 0);
	assert_int_equal(f.hot_rule, ASM_HOT_FUNCTION);
	assert_false(f.tags & ASM_NOT_VECTORIZED);
	asm_function_release(&f);
}

/* A divide that holds no samples is no finding, loop or not. */
static void test_asm__division_needs_samples(void **state)
{
	static const struct row rows[] = {
		{ "mov", L, -1, 50, 0, 1, 0, 0 },
		{ "idiv", IDIV, -1, 0, 1, 2, 0, 0 },
		{ "add", ALU, -1, 0, 2, 3, 0, 0 },
		{ "xor", ALU, -1, 0, 3, 3, 0, 0 },
		{ "imul", ALU, -1, 50, 3, 3, 0, 0 },
		{ "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, true);
	assert_true(f.loop_free);
	assert_false(f.tags & ASM_DIVISION);
	asm_function_release(&f);
}

/* An indirect jump may close a cycle: no natural loop, yet not loop-free. */
static void test_asm__indirect_jump_not_loop_free(void **state)
{
	static const struct row rows[] = {
		{ "movzx", L, -1, 0, 0, 1, 0, 0 },
		{ "add", ALU, -1, 0, 1, 1, 0, 0 },
		{ "jmp", BR | ASM_C_INDIRECT | L, -1, 0, 1, 0, 0, 0 },
		{ "add", ALU, -1, 0, 1, 1, 0, 0 },
		{ "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, false);
	assert_int_equal(f.nr_loops, 0);
	assert_int_equal(f.nr_indirect, 1);
	assert_false(f.loop_free);
	asm_function_release(&f);
	build(&f, scalar_dot, false);
	assert_false(f.loop_free);	/* a natural loop */
	asm_function_release(&f);
}

/* A few packed instructions in a scalar loop do not make it vectorized. */
static void test_asm__simd_share(void **state)
{
	struct row rows[] = {
		{ "movdqu", L | SIMD, -1, 1, 0, 1, 128, ASM_ISA_SSE },
		{ "mov", L, -1, 0, 0, 1, 0, 0 },
		{ "add", ALU, -1, 40, 1, 2, 0, 0 },
		{ "xor", ALU, -1, 30, 2, 2, 0, 0 },
		{ "cmp", 0, -1, 29, 2, 0, 0, 0 },
		{ "jne", CC, 0, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, true);
	assert_int_equal(f.vector_isa, ASM_ISA_NONE);
	assert_null(strstr(f.verdict, "vectorized"));
	asm_function_release(&f);
	/* the samples on and right after the packed instructions: vectorized */
	rows[0].samples = 30;
	rows[1].samples = 40;
	build(&f, rows, true);
	assert_int_equal(f.vector_isa, ASM_ISA_SSE);
	asm_function_release(&f);
}

/* Samples right after stores count for memory-bound, and the evidence says so. */
static void test_asm__memory_bound_stores(void **state)
{
	static const struct row rows[] = {
		{ "mov", L, -1, 0, 0, 1, 0, 0 },
		{ "add", ALU, -1, 40, 1, 2, 0, 0 },
		{ "mov", S, -1, 0, 2, 0, 0, 0 },
		{ "add", ALU, -1, 40, 3, 3, 0, 0 },
		{ "cmp", 0, -1, 20, 3, 0, 0, 0 },
		{ "jne", CC, 0, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, true);
	assert_true(f.tags & ASM_MEMORY_BOUND);
	assert_string_equal(f.verdict, "memory-bound: 80% of hot samples on loads and stores");
	assert_non_null(strstr(asm_evidence(&f, ASM_MEMORY_BOUND), "40% after loads, 40% after stores"));
	asm_function_release(&f);
}

/* Most samples in a loop inside a loop: nested-loop, with both loops. */
static void test_asm__nested_loop_tag(void **state)
{
	struct row rows[] = {
		/* 0 */ { "mov", 0, -1, 0, 0, 0, 0, 0 },
		/* 1 */ { "mov", 0, -1, 0, 0, 0, 0, 0 },	/* outer head */
		/* 2 */ { "imul", ALU, -1, 50, 1, 1, 0, 0 },	/* inner head */
		/* 3 */ { "add", ALU, -1, 30, 1, 2, 0, 0 },
		/* 4 */ { "cmp", 0, -1, 10, 0, 0, 0, 0 },
		/* 5 */ { "jne", CC, 2, 0, 0, 0, 0, 0 },
		/* 6 */ { "add", ALU, -1, 10, 0, 0, 0, 0 },
		/* 7 */ { "jne", CC, 1, 0, 0, 0, 0, 0 },
		/* 8 */ { "ret", RET, -1, 0, 0, 0, 0, 0 },
		END_ROWS
	};
	struct asm_function f;

	build(&f, rows, true);
	assert_true(f.tags & ASM_NESTED_LOOP);
	assert_non_null(strstr(asm_evidence(&f, ASM_NESTED_LOOP), "90% of the function's samples are in the loop 0x1008-0x1014"));
	assert_non_null(strstr(asm_evidence(&f, ASM_NESTED_LOOP), "at loop depth 2: inside the loop 0x1004-0x101c"));
	asm_function_release(&f);
	/* most samples outside the inner loop: no tag */
	rows[2].samples = 5;
	rows[3].samples = 5;
	rows[6].samples = 90;
	build(&f, rows, true);
	assert_false(f.tags & ASM_NESTED_LOOP);
	asm_function_release(&f);
	/* without a profile: no tag */
	build(&f, rows, false);
	assert_false(f.tags & ASM_NESTED_LOOP);
	asm_function_release(&f);
}

static void test_asm__annotate(void **state)
{
	struct asm_function f;
	struct profile p;
	uint64_t self, other, stale, locs[4];
	int64_t one[1] = { 1 }, ten[1] = { 10 };

	build(&f, scalar_dot, false);
	f.binary = "/bin/prog";
	f.realpath = "/bin/prog";
	f.build_id = "abcd";
	f.segments = xmalloc(sizeof(*f.segments));
	f.segments[0] = (struct asm_segment){ 0x0, 0x0, 0x10000 };
	f.nr_segments = 1;

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	self = profile_add_mapping(&p, 0x555500000000, 0x555500010000, 0, "/bin/prog", "abcd");
	other = profile_add_mapping(&p, 0x7f0000000000, 0x7f0000010000, 0, "/lib/libc.so.6", "ef01");
	stale = profile_add_mapping(&p, 0x666600000000, 0x666600010000, 0, "/bin/prog", "9999");
	/* the mulss at 0x1008, hit in its middle byte */
	locs[0] = profile_add_location(&p, self, 0x555500001009, NULL, 0);
	/* the addss at 0x1010 */
	locs[1] = profile_add_location(&p, self, 0x555500001010, NULL, 0);
	/* outside the function, in libc, and in another build of the file */
	locs[2] = profile_add_location(&p, self, 0x555500002000, NULL, 0);
	locs[3] = profile_add_location(&p, other, 0x7f0000001008, NULL, 0);
	profile_add_sample(&p, &locs[0], 1, ten, NULL, 0);
	profile_add_sample(&p, &locs[1], 1, one, NULL, 0);
	profile_add_sample(&p, &locs[2], 1, ten, NULL, 0);
	profile_add_sample(&p, &locs[3], 1, ten, NULL, 0);
	locs[0] = profile_add_location(&p, stale, 0x666600001008, NULL, 0);
	profile_add_sample(&p, &locs[0], 1, ten, NULL, 0);

	assert_int_equal(asm_annotate(&f, &p, 0), 0);
	assert_int_equal(f.samples, 11);
	assert_int_equal(f.profile_samples, 41);
	assert_int_equal(f.insns[2].samples, 10);
	assert_int_equal(f.insns[4].samples, 1);
	assert_string_equal(f.sample_type, "samples");
	asm_analyze(&f);
	assert_int_equal(f.hot_rule, ASM_HOT_SAMPLES);
	assert_hot(&f, "..h.....");	/* 10 of 11 samples: more than 80% */
	assert_int_equal(asm_annotate(&f, &p, 1), -1);
	profile_release(&p);
	asm_function_release(&f);
}

static void test_asm__json_shape(void **state)
{
	struct asm_function f;
	json_t *doc, *in;

	build(&f, scalar_dot, false);
	doc = asm_to_json(&f);
	assert_string_equal(json_string_value(json_object_get(doc, "verdict")),
			    "hot loop is scalar FP, not vectorized");
	assert_true(json_is_null(json_object_get(doc, "samples")));
	assert_int_equal(json_array_size(json_object_get(doc, "instructions")), 8);
	in = json_array_get(json_object_get(doc, "instructions"), 2);
	assert_int_equal(json_integer_value(json_object_get(in, "address")), BASE + 8);
	assert_true(json_is_true(json_object_get(in, "hot")));
	assert_int_equal(json_array_size(json_object_get(doc, "tags")), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "tags"), 0), "name")),
			    "scalar-fp");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(doc, "mix"), "hot"), "fp_scalar")), 2);
	assert_true(json_is_null(json_object_get(doc, "vector")));
	json_decref(doc);
	asm_function_release(&f);
}

static void test_asm__json_not_utf8(void **state)
{
	/* symbol names and paths come from the binary: a byte that is not UTF-8 must not lose the key */
	static const char *const keys[] = { "binary", "function", "system_name", "sample_type" };
	struct asm_function f;
	json_t *doc, *in;

	build(&f, scalar_dot, true);
	f.binary = "/bin/p\xff";
	f.name = "bad\xff\xfename";
	f.system_name = "_Z3bad\xfe";
	f.sample_type = "cpu\xff";
	f.insns[2].file = "/src/\xff.c";
	f.insns[2].line = 3;
	f.insns[2].inlined = "inl\xfe";
	doc = asm_to_json(&f);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		assert_true(json_is_string(json_object_get(doc, keys[i])));
		assert_non_null(strstr(json_string_value(json_object_get(doc, keys[i])), "\xef\xbf\xbd"));
	}
	assert_string_equal(json_string_value(json_object_get(doc, "function")), "bad\xef\xbf\xbd\xef\xbf\xbdname");
	in = json_array_get(json_object_get(doc, "instructions"), 2);
	assert_string_equal(json_string_value(json_object_get(in, "file")), "/src/\xef\xbf\xbd.c");
	assert_string_equal(json_string_value(json_object_get(in, "inlined")), "inl\xef\xbf\xbd");
	json_decref(doc);
	asm_function_release(&f);
}

/* ---- asm_load on a library compiled here ---- */

static const char lib_c[] =
	"int mod_sum(const int *x, int n, int d)\n"
	"{ int s = 0; for (int i = 0; i < n; i++) s += x[i] % d; return s; }\n"
	"int mod_max(const int *x, int n, int d)\n"
	"{ int m = 0; for (int i = 0; i < n; i++) if (x[i] % d > m) m = x[i] % d; return m; }\n"
	"int lone(int x) { return x * 3; }\n";

static void test_asm__load_by_name(void **state)
{
	char dir[] = "/tmp/hotloop-t-asm-XXXXXX", *lib, *cmd;
	struct asm_function f;
	FILE *src;

	if (system("command -v cc >/dev/null 2>&1"))
		skip();
	assert_non_null(mkdtemp(dir));
	lib = xstrfmt("%s/lib.c", dir);
	src = fopen(lib, "w");
	assert_non_null(src);
	fputs(lib_c, src);
	fclose(src);
	cmd = xstrfmt("cd %s && cc -O2 -g -fPIC -shared -o lib.so lib.c", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(lib);
	lib = xstrfmt("%s/lib.so", dir);

	/* exact names only when asked */
	assert_int_equal(asm_load(lib, "mod_sum", true, &f), 0);
	assert_string_equal(f.name, "mod_sum");
	assert_true(f.nr_insns > 3 && f.end > f.start);
	assert_int_equal(f.arch, ASM_ARCH_X86_64);
	asm_analyze(&f);
	assert_true(f.tags & ASM_DIVISION);
	asm_function_release(&f);
	assert_int_equal(asm_load(lib, "lon", true, &f), -1);
	asm_function_release(&f);
	/* a unique part of a name, or several */
	assert_int_equal(asm_load(lib, "lon", false, &f), 0);
	assert_string_equal(f.name, "lone");
	asm_function_release(&f);
	assert_int_equal(asm_load(lib, "mod_", false, &f), -1);
	assert_non_null(strstr(last_error(), "'mod_' matches 2 functions"));
	asm_function_release(&f);
	assert_int_equal(asm_load(lib, "", false, &f), -1);
	asm_function_release(&f);

	cmd = xstrfmt("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_asm__classifier_table),
		cmocka_unit_test(test_asm__register_families),
		cmocka_unit_test(test_asm__undecodable_bytes_continue),
		cmocka_unit_test(test_asm__scalar_fp_loop),
		cmocka_unit_test(test_asm__vectorized_loop),
		cmocka_unit_test(test_asm__division_without_profile),
		cmocka_unit_test(test_asm__division_threshold),
		cmocka_unit_test(test_asm__division_needs_samples),
		cmocka_unit_test(test_asm__indirect_jump_not_loop_free),
		cmocka_unit_test(test_asm__simd_share),
		cmocka_unit_test(test_asm__memory_bound_stores),
		cmocka_unit_test(test_asm__nested_loop_tag),
		cmocka_unit_test(test_asm__memory_bound_threshold),
		cmocka_unit_test(test_asm__memory_bound_without_profile),
		cmocka_unit_test(test_asm__branchy),
		cmocka_unit_test(test_asm__one_branch_is_not_branchy),
		cmocka_unit_test(test_asm__integer_not_on_loaded_data),
		cmocka_unit_test(test_asm__no_loop_whole_function),
		cmocka_unit_test(test_asm__nested_loops),
		cmocka_unit_test(test_asm__inlined_copy),
		cmocka_unit_test(test_asm__loop_in_pieces),
		cmocka_unit_test(test_asm__backward_jump_without_cycle),
		cmocka_unit_test(test_asm__annotate),
		cmocka_unit_test(test_asm__json_shape),
		cmocka_unit_test(test_asm__json_not_utf8),
		cmocka_unit_test(test_asm__load_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
