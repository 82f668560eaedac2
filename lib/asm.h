/*
 * asm.h: one function's machine code, explained. asm_load() finds the
 * function in an ELF file (x86-64 or AArch64) and disassembles it with
 * capstone; asm_annotate() adds a profile's samples to its instructions;
 * asm_analyze() finds the loops and the hot instructions, counts the
 * instruction mix and gives the tags and the one-line verdict that
 * `hotloop asm` and the brief print (rules and thresholds: docs/asm.md).
 * A struct asm_function owns everything it points to, strings included.
 */
#ifndef HOTLOOP_ASM_H
#define HOTLOOP_ASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "intern.h"

struct profile;
struct json_t;
struct symbolizer;

enum asm_arch {
	ASM_ARCH_X86_64,
	ASM_ARCH_AARCH64,
};

/* What an instruction does: bits of asm_insn.classes. */
enum asm_class {
	ASM_C_LOAD = 1u << 0,		/* reads memory */
	ASM_C_STORE = 1u << 1,		/* writes memory */
	ASM_C_BRANCH = 1u << 2,		/* a jump, conditional or not (not call/ret) */
	ASM_C_COND = 1u << 3,		/* ... that is conditional */
	ASM_C_CALL = 1u << 4,
	ASM_C_RET = 1u << 5,
	ASM_C_INT_DIV = 1u << 6,	/* integer divide: div/idiv, sdiv/udiv */
	ASM_C_FP_SCALAR = 1u << 7,	/* scalar floating-point arithmetic (SSE/AVX scalar, x87, FP on s/d regs) */
	ASM_C_SIMD = 1u << 8,		/* packed SIMD, simd_width bits wide */
	ASM_C_FP_DIV = 1u << 9,		/* floating-point divide or square root, scalar or packed */
	ASM_C_INT_ALU = 1u << 10,	/* integer arithmetic or logic on general registers */
	ASM_C_FP_ARITH = 1u << 11,	/* floating-point arithmetic, scalar or packed */
	ASM_C_NOP = 1u << 12,		/* no operation (padding) */
	ASM_C_UNKNOWN = 1u << 13,	/* bytes capstone could not decode */
	ASM_C_INDIRECT = 1u << 14,	/* a branch through a register or memory (a jump table, a computed goto) */
};

/* The vector extension of a packed SIMD instruction. */
enum asm_isa {
	ASM_ISA_NONE,
	ASM_ISA_MMX,
	ASM_ISA_SSE,
	ASM_ISA_AVX,
	ASM_ISA_AVX2,
	ASM_ISA_AVX512,
	ASM_ISA_NEON,
	ASM_ISA_SVE,
};

/* Register families an instruction reads or writes (eax and rax are one). */
#define ASM_MAX_REGS 8

struct asm_insn {
	uint64_t addr;
	uint32_t size;
	uint32_t classes;		/* enum asm_class bits */
	uint16_t simd_width;		/* bits, for ASM_C_SIMD (0: scalable, SVE) */
	uint8_t isa;			/* enum asm_isa, for ASM_C_SIMD */
	uint8_t nr_reads, nr_writes;
	uint32_t reads[ASM_MAX_REGS];	/* register families: indexes in asm_function.strs */
	uint32_t writes[ASM_MAX_REGS];
	bool has_target;		/* a direct branch or call ... */
	uint64_t target;		/* ... to this address */
	const char *mnemonic;		/* in asm_function.strs */
	const char *operands;
	const char *file;		/* innermost source file, "" when unknown */
	int line;			/* its line, 0 when unknown */
	const char *inlined;		/* the function inlined here, "" when none */
	int64_t samples;		/* from asm_annotate() */
	bool outside;			/* not the inlined code analysed (asm_load_with() on an
					   inlined function): only in the loops, never hot, no samples */
	/* set by asm_analyze() */
	bool hot;			/* in the hot set */
	bool in_hot_loop;		/* in the hot loop */
	int loop;			/* innermost loop holding it (index in loops), -1 */
};

/*
 * A natural loop: a head that dominates the blocks branching back to it,
 * and every block that reaches those without passing the head.
 */
struct asm_loop {
	uint64_t head;			/* first instruction of the head block */
	uint64_t start, end;		/* lowest and highest instruction in it */
	bool innermost;			/* holds no other loop */
	int parent;			/* the loop around it (index in loops), -1 */
	int depth;			/* 1: outermost, 2: in one other loop, ... */
	int64_t samples;		/* on its instructions and its inner loops' */
};

/* Instruction counts by class (or sample sums, for the weighted mix). */
struct asm_mix {
	int64_t instructions;
	int64_t fp_scalar, fp_div, simd, simd64, simd128, simd256, simd512, simd_scalable;
	int64_t load, store, branch, cond_branch, int_div, call;
};

enum asm_tag {
	ASM_DIVISION = 1u << 0,
	ASM_SCALAR_FP = 1u << 1,
	ASM_NOT_VECTORIZED = 1u << 2,
	ASM_BRANCHY = 1u << 3,
	ASM_MEMORY_BOUND = 1u << 4,
	ASM_NESTED_LOOP = 1u << 5,
};
#define ASM_NR_TAGS 6

/* How the hot set was chosen. */
enum asm_hot_rule {
	ASM_HOT_SAMPLES,	/* the instructions holding 80% of the samples */
	ASM_HOT_LOOPS,		/* the innermost loops */
	ASM_HOT_FUNCTION,	/* no loop: the whole function */
};

struct asm_function {
	struct strtab strs;		/* every string below and in insns */
	const char *binary;		/* the path as given */
	const char *name;		/* demangled */
	const char *system_name;	/* as in the symbol table */
	enum asm_arch arch;
	uint64_t start, end;		/* [start, end): the symbol's range */
	bool relocatable;		/* an object file: addresses are section offsets */
	const char *build_id;		/* hex, "" when none */
	const char *realpath;		/* "" when it cannot be resolved */

	/*
	 * An inlined function (asm_load_with()): its copies in one symbol,
	 * whose code insns hold. "" and none for a function of its own.
	 */
	const char *inlined_into;	/* that symbol, demangled */
	const char *inlined_into_system;	/* ... as in the symbol table */
	struct asm_range { uint64_t start, end; } *ranges;	/* the copies' code: sorted, disjoint */
	size_t nr_ranges;
	size_t nr_copies;		/* copies inlined into that symbol */
	struct asm_into {
		const char *name;	/* demangled */
		size_t copies;
		int64_t samples;	/* in the copies' code, with a profile (else 0) */
		uint64_t bytes;
	} *into;			/* every symbol it was inlined into, the chosen one first */
	size_t nr_into;

	/* PT_LOAD segments, to turn file offsets into addresses */
	struct asm_segment { uint64_t vaddr, offset, filesz; } *segments;
	size_t nr_segments;

	struct asm_insn *insns;
	size_t nr_insns, alloc_insns;

	/* asm_annotate() */
	bool annotated;
	const char *sample_type;	/* e.g. "samples", "" before annotation */
	const char *sample_unit;
	int64_t samples;		/* in this function */
	int64_t profile_samples;	/* in the whole profile */

	/* asm_analyze() */
	struct asm_loop *loops;
	size_t nr_loops, alloc_loops;
	size_t nr_indirect;		/* indirect jumps: their targets are unknown */
	bool cycle;			/* the known control flow has a cycle, natural loop or not */
	bool loop_free;			/* no cycle and no indirect jump that could close one */
	enum asm_hot_rule hot_rule;
	size_t nr_hot;
	struct asm_mix mix, hot_mix, loop_mix;	/* whole function, hot set, hot loop */
	struct asm_mix sample_mix;		/* samples by class, whole function */
	unsigned tags;					/* enum asm_tag bits */
	const char *evidence[ASM_NR_TAGS];		/* per tag, NULL when unset */
	enum asm_isa vector_isa;			/* widest SIMD in the hot loop, when it is vectorized */
	unsigned vector_width;				/* its width in bits (0: none or scalable) */
	double simd_share;				/* of the hot loop's samples (instructions without a profile) on packed SIMD */
	const char *verdict;
};

#define ASM_FUNCTION_INIT { .strs = STRTAB_INIT, .binary = "", .name = "", \
	.system_name = "", .build_id = "", .realpath = "", .sample_type = "", \
	.sample_unit = "", .verdict = "", .inlined_into = "", .inlined_into_system = "" }

void asm_function_init(struct asm_function *f);
void asm_function_release(struct asm_function *f);

/*
 * Find the function 'query' in the ELF file 'binary' and disassemble it.
 * The query is a raw or demangled name, exact (also without the C++
 * parameter list) or, unless 'exact', a part of one; or an address "0x..."
 * inside the function. Errors name the candidates when several functions
 * match and the closest names when none does. *f is initialized here and
 * must be released with asm_function_release() whatever the result.
 */
int asm_load(const char *binary, const char *query, bool exact, struct asm_function *f);

struct asm_load_options {
	bool exact;		/* as asm_load()'s */
	bool inlined;		/* only the function's inlined copies, never a symbol */
	const struct profile *profile;	/* NULL, or a profile to choose the copies by */
	int sample_idx;		/* ... and its value */
	struct symbolizer *symbolizer;	/* NULL, or one to reuse: a binary's DWARF is then
					   read once for many functions */
};
#define ASM_LOAD_OPTIONS_INIT { .sample_idx = -1 }

/*
 * asm_load() that also finds inlined functions. When no symbol has the
 * exact name (or with o->inlined), the function's copies inlined into
 * other functions (DWARF) are looked up: the symbol holding the most of
 * the profile's samples in their code (without a profile, the most of
 * their code) is disassembled whole, and the instructions outside the
 * copies are marked 'outside', so that the analysis is the copies' (their
 * loops are still found in the whole symbol's control flow). f->name is
 * then the inlined function, f->inlined_into the symbol, f->into every
 * symbol it was inlined into. Without copies, as asm_load().
 */
int asm_load_with(const char *binary, const char *query, const struct asm_load_options *o,
		  struct asm_function *f);

/*
 * Decode 'len' bytes of machine code at address 'addr' into f's
 * instructions (what asm_load() does after finding the function). Bytes
 * capstone cannot decode become ASM_C_UNKNOWN pseudo-instructions.
 */
int asm_decode(struct asm_function *f, enum asm_arch arch, const uint8_t *code,
	       size_t len, uint64_t addr);

/*
 * Add the samples of 'p' (value 'sample_idx') whose leaf location is in
 * this binary's mapping (same path or build id) and inside the function to
 * the instruction holding the address. -1 after an error (a bad index).
 */
int asm_annotate(struct asm_function *f, const struct profile *p, int sample_idx);

/* Loops, hot set and hot loop, mix, tags with evidence, the verdict. */
void asm_analyze(struct asm_function *f);

/*
 * Keep only the samples of the instructions inlined from 'name' (the
 * innermost inlined function of their line), so that asm_analyze() judges
 * an inlined function's samples in the code of the function holding it.
 * Returns the samples kept.
 */
int64_t asm_focus_inlined(struct asm_function *f, const char *name);

/* The class bit named "load", "int-div", ... (as in the JSON), 0 when none is. */
unsigned asm_class_bit(const char *name);
const char *asm_class_name(unsigned bit);

/* The tags in the order the verdict weighs them (division first). */
extern const enum asm_tag asm_tag_order[ASM_NR_TAGS];
/* The evidence for a tag of f, "" when the tag is not set. */
const char *asm_evidence(const struct asm_function *f, enum asm_tag tag);

/* Names: "division", "scalar-fp", ...; "SSE", "AVX2", "NEON", ... */
const char *asm_tag_name(enum asm_tag tag);
const char *asm_isa_name(enum asm_isa isa);
const char *asm_arch_name(enum asm_arch arch);

/* The whole analysis as one JSON object (keys in docs/asm.md). */
struct json_t *asm_to_json(const struct asm_function *f);

#endif
