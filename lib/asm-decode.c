/*
 * asm-decode.c: machine code to classified instructions (asm.h) with
 * capstone. What an instruction does comes from capstone's groups,
 * instruction ids and operand details; the mnemonic is read only where
 * capstone has no answer (scalar or packed SSE/AVX, which FP operation).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

#include "util.h"
#include "asm.h"

/* Register names to families: eax, ax and al are rax; w3 is x3; s1, d1, q1 are v1. */
static void x86_family(const char *name, char *out, size_t size)
{
	static const char *const ptr[] = { "si", "di", "bp", "sp" };
	size_t len = strlen(name);

	for (const char *abcd = "abcd"; *abcd; abcd++) {
		char c = *abcd;
		/* rax eax ax al ah */
		if ((len == 3 && (name[0] == 'r' || name[0] == 'e') && name[1] == c && name[2] == 'x') ||
		    (len == 2 && name[0] == c && (name[1] == 'x' || name[1] == 'l' || name[1] == 'h'))) {
			snprintf(out, size, "r%cx", c);
			return;
		}
	}
	if (name[0] == 'r' && name[1] >= '0' && name[1] <= '9') {	/* r8 r8d r8w r8b */
		size_t n = 1;
		while (name[n] >= '0' && name[n] <= '9')
			n++;
		snprintf(out, size, "%.*s", (int)n, name);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(ptr); i++) {
		const char *p = ptr[i];
		/* rsi esi si sil */
		if ((len == 3 && (name[0] == 'r' || name[0] == 'e') && !strcmp(name + 1, p)) ||
		    !strcmp(name, p) || (len == 3 && !strncmp(name, p, 2) && name[2] == 'l')) {
			snprintf(out, size, "r%s", p);
			return;
		}
	}
	if ((name[0] == 'x' || name[0] == 'y' || name[0] == 'z') && !strncmp(name + 1, "mm", 2)) {
		snprintf(out, size, "v%s", name + 3);
		return;
	}
	snprintf(out, size, "%s", name);
}

static void arm64_family(const char *name, char *out, size_t size)
{
	if (!strcmp(name, "wzr") || !strcmp(name, "xzr")) {
		snprintf(out, size, "xzr");
	} else if (!strcmp(name, "wsp") || !strcmp(name, "sp")) {
		snprintf(out, size, "sp");
	} else if ((name[0] == 'w' || name[0] == 'x') && name[1] >= '0' && name[1] <= '9') {
		snprintf(out, size, "x%s", name + 1);
	} else if (strchr("bhsdqv", name[0]) && name[0] && name[1] >= '0' && name[1] <= '9') {
		snprintf(out, size, "v%s", name + 1);
	} else {
		snprintf(out, size, "%s", name);
	}
}

static void add_reg(struct asm_function *f, csh h, enum asm_arch arch, uint16_t reg,
		    uint32_t *set, uint8_t *nr)
{
	const char *name = cs_reg_name(h, reg);
	char fam[32];
	uint32_t idx;

	if (!name || *nr >= ASM_MAX_REGS)
		return;
	if (arch == ASM_ARCH_X86_64)
		x86_family(name, fam, sizeof(fam));
	else
		arm64_family(name, fam, sizeof(fam));
	idx = (uint32_t)strtab_intern_str(&f->strs, fam);
	for (uint8_t i = 0; i < *nr; i++)
		if (set[i] == idx)
			return;
	set[(*nr)++] = idx;
}

static void read_regs(struct asm_function *f, csh h, enum asm_arch arch, const cs_insn *ci,
		      struct asm_insn *in)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;

	if (cs_regs_access(h, ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return;
	for (uint8_t i = 0; i < nrd; i++)
		add_reg(f, h, arch, rd[i], in->reads, &in->nr_reads);
	for (uint8_t i = 0; i < nwr; i++)
		add_reg(f, h, arch, wr[i], in->writes, &in->nr_writes);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !memcmp(s + ls - lx, suffix, lx);
}

/*
 * SSE/AVX floating point by name: capstone has no "scalar" or "arithmetic"
 * attribute. 'base' is the mnemonic without a leading 'v'.
 */
static bool x86_fp_arith_name(const char *base, bool *is_div)
{
	static const char *const ops[] = {
		"add", "sub", "mul", "div", "sqrt", "min", "max", "rcp", "rsqrt",
		"rcp14", "rsqrt14", "hadd", "hsub", "addsub", "dp", "round",
		"rndscale", "scalef", "getexp", "getmant",
	};
	static const char *const fma[] = { "fmadd", "fmsub", "fnmadd", "fnmsub", "fmaddsub", "fmsubadd" };
	size_t len = strlen(base), stem;
	char op[32];

	*is_div = false;
	if (len < 3 || len >= sizeof(op) ||
	    !(ends_with(base, "ss") || ends_with(base, "sd") || ends_with(base, "ps") || ends_with(base, "pd")))
		return false;
	stem = len - 2;
	memcpy(op, base, stem);
	op[stem] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		if (!strcmp(op, ops[i])) {
			*is_div = !strcmp(op, "div") || !strcmp(op, "sqrt");
			return true;
		}
	}
	while (stem && op[stem - 1] >= '0' && op[stem - 1] <= '9')	/* vfmadd231ss */
		op[--stem] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(fma); i++)
		if (!strcmp(op, fma[i]))
			return true;
	return false;
}

static bool x86_is_scalar_name(const char *base)
{
	return base[0] != 'p' &&
	       (ends_with(base, "ss") || ends_with(base, "sd") ||
		strstr(base, "ss2") || strstr(base, "sd2"));
}

static enum asm_isa max_isa(enum asm_isa a, enum asm_isa b)
{
	return a > b ? a : b;
}

static bool x86_in(unsigned id, const unsigned *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static const unsigned x87_arith[] = {
	X86_INS_FADD, X86_INS_FADDP, X86_INS_FIADD, X86_INS_FSUB, X86_INS_FSUBP,
	X86_INS_FSUBR, X86_INS_FSUBRP, X86_INS_FISUB, X86_INS_FISUBR, X86_INS_FMUL,
	X86_INS_FMULP, X86_INS_FIMUL, X86_INS_FDIV, X86_INS_FDIVP, X86_INS_FDIVR,
	X86_INS_FDIVRP, X86_INS_FIDIV, X86_INS_FIDIVR, X86_INS_FSQRT, X86_INS_FPREM,
	X86_INS_FPREM1, X86_INS_FSIN, X86_INS_FCOS, X86_INS_FSINCOS, X86_INS_FPTAN,
	X86_INS_FPATAN, X86_INS_FYL2X, X86_INS_FYL2XP1, X86_INS_F2XM1, X86_INS_FSCALE,
	X86_INS_FRNDINT, X86_INS_FABS, X86_INS_FCHS,
};
static const unsigned x87_div[] = {
	X86_INS_FDIV, X86_INS_FDIVP, X86_INS_FDIVR, X86_INS_FDIVRP, X86_INS_FIDIV,
	X86_INS_FIDIVR, X86_INS_FSQRT,
};
/* x87 stores: capstone 4 marks their memory operand as read. */
static const unsigned x87_store[] = {
	X86_INS_FST, X86_INS_FSTP, X86_INS_FIST, X86_INS_FISTP, X86_INS_FISTTP,
	X86_INS_FBSTP, X86_INS_FNSTCW, X86_INS_FNSTSW, X86_INS_FNSTENV, X86_INS_FNSAVE,
};
static const unsigned x86_no_access[] = {
	X86_INS_LEA, X86_INS_NOP, X86_INS_PREFETCH, X86_INS_PREFETCHW, X86_INS_PREFETCHT0,
	X86_INS_PREFETCHT1, X86_INS_PREFETCHT2, X86_INS_PREFETCHNTA,
};
static const unsigned x86_int_alu[] = {
	X86_INS_ADD, X86_INS_SUB, X86_INS_ADC, X86_INS_SBB, X86_INS_IMUL, X86_INS_MUL,
	X86_INS_AND, X86_INS_OR, X86_INS_XOR, X86_INS_SHL, X86_INS_SHR, X86_INS_SAR,
	X86_INS_SAL, X86_INS_ROL, X86_INS_ROR, X86_INS_NEG, X86_INS_NOT, X86_INS_INC,
	X86_INS_DEC, X86_INS_POPCNT, X86_INS_LZCNT, X86_INS_TZCNT, X86_INS_ANDN,
	X86_INS_SHLX, X86_INS_SHRX, X86_INS_SARX, X86_INS_RORX, X86_INS_BSF, X86_INS_BSR,
	X86_INS_ADCX, X86_INS_ADOX, X86_INS_BLSI, X86_INS_BLSR, X86_INS_BLSMSK,
	X86_INS_BZHI, X86_INS_PDEP, X86_INS_PEXT, X86_INS_LEA,
};
static const unsigned x86_zero_idiom[] = {
	X86_INS_XORPS, X86_INS_XORPD, X86_INS_PXOR, X86_INS_VXORPS, X86_INS_VXORPD,
	X86_INS_VPXOR, X86_INS_VPXORD, X86_INS_VPXORQ,
};

static void classify_x86(const cs_insn *ci, struct asm_insn *in)
{
	const cs_detail *d = ci->detail;
	const cs_x86 *x = &d->x86;
	unsigned id = ci->id;
	enum asm_isa isa = ASM_ISA_NONE;
	bool simd = false, fpu = false, has_gpr = false, has_mem = false, same_regs = true;
	unsigned width = 0, first_reg = 0;

	for (uint8_t i = 0; i < d->groups_count; i++) {
		switch (d->groups[i]) {
		case X86_GRP_JUMP:
			in->classes |= ASM_C_BRANCH;
			break;
		case X86_GRP_CALL:
			in->classes |= ASM_C_CALL;
			break;
		case X86_GRP_RET:
		case X86_GRP_IRET:
			in->classes |= ASM_C_RET;
			break;
		case X86_GRP_FPU:
			fpu = true;
			break;
		case X86_GRP_MMX:
		case X86_GRP_3DNOW:
			simd = true;
			isa = max_isa(isa, ASM_ISA_MMX);
			break;
		case X86_GRP_SSE1: case X86_GRP_SSE2: case X86_GRP_SSE3: case X86_GRP_SSSE3:
		case X86_GRP_SSE41: case X86_GRP_SSE42: case X86_GRP_SSE4A: case X86_GRP_AES:
		case X86_GRP_PCLMUL: case X86_GRP_SHA:
			simd = true;
			isa = max_isa(isa, ASM_ISA_SSE);
			break;
		case X86_GRP_AVX: case X86_GRP_FMA: case X86_GRP_FMA4: case X86_GRP_F16C:
		case X86_GRP_XOP:
			simd = true;
			isa = max_isa(isa, ASM_ISA_AVX);
			break;
		case X86_GRP_AVX2:
			simd = true;
			isa = max_isa(isa, ASM_ISA_AVX2);
			break;
		case X86_GRP_AVX512: case X86_GRP_CDI: case X86_GRP_ERI: case X86_GRP_PFI:
		case X86_GRP_DQI: case X86_GRP_BWI: case X86_GRP_VLX:
			simd = true;
			isa = max_isa(isa, ASM_ISA_AVX512);
			break;
		default:
			break;
		}
	}
	if (id == X86_INS_NOP || id == X86_INS_FNOP || id == X86_INS_ENDBR64 || id == X86_INS_ENDBR32)
		in->classes |= ASM_C_NOP;
	if (in->classes & ASM_C_BRANCH) {
		if (id != X86_INS_JMP && id != X86_INS_LJMP)
			in->classes |= ASM_C_COND;
	}
	if ((in->classes & (ASM_C_BRANCH | ASM_C_CALL)) && x->op_count >= 1 &&
	    x->operands[0].type == X86_OP_IMM) {
		in->has_target = true;
		in->target = (uint64_t)x->operands[0].imm;
	} else if ((in->classes & ASM_C_BRANCH) && x->op_count >= 1) {
		in->classes |= ASM_C_INDIRECT;
	}
	if (id == X86_INS_DIV || id == X86_INS_IDIV)
		in->classes |= ASM_C_INT_DIV;

	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM) {
			has_mem = true;
			if (simd && op->size >= 16 && op->size * 8u > width)
				width = op->size * 8u;
			if (x86_in(id, x86_no_access, ARRAY_SIZE(x86_no_access)))
				continue;
			/* capstone 4 marks many SSE/AVX and x87 stores as reads */
			if ((simd && i == 0 && x->op_count >= 2) ||
			    (fpu && x86_in(id, x87_store, ARRAY_SIZE(x87_store)))) {
				in->classes |= ASM_C_STORE;
				continue;
			}
			if (op->access & CS_AC_READ)
				in->classes |= ASM_C_LOAD;
			if (op->access & CS_AC_WRITE)
				in->classes |= ASM_C_STORE;
		} else if (op->type == X86_OP_REG) {
			unsigned r = op->reg;

			if (r >= X86_REG_XMM0 && r <= X86_REG_XMM31) {
				width = width > 128 ? width : 128;
			} else if (r >= X86_REG_YMM0 && r <= X86_REG_YMM31) {
				width = width > 256 ? width : 256;
			} else if (r >= X86_REG_ZMM0 && r <= X86_REG_ZMM31) {
				width = 512;
			} else if (r >= X86_REG_MM0 && r <= X86_REG_MM7) {
				width = width > 64 ? width : 64;
			} else if (!(r >= X86_REG_K0 && r <= X86_REG_K7) &&
				   !(r >= X86_REG_ST0 && r <= X86_REG_ST7)) {
				has_gpr = true;
			}
			if (!first_reg)
				first_reg = r;
			else if (r != first_reg)
				same_regs = false;
		}
	}

	if (fpu) {
		if (x86_in(id, x87_arith, ARRAY_SIZE(x87_arith)))
			in->classes |= ASM_C_FP_SCALAR | ASM_C_FP_ARITH;
		if (x86_in(id, x87_div, ARRAY_SIZE(x87_div)))
			in->classes |= ASM_C_FP_DIV;
	}
	if (simd) {
		const char *base = ci->mnemonic[0] == 'v' && isa >= ASM_ISA_AVX ? ci->mnemonic + 1 : ci->mnemonic;
		bool is_div = false, arith = x86_fp_arith_name(base, &is_div);
		bool scalar = x86_is_scalar_name(base) &&
			      id != X86_INS_VBROADCASTSS && id != X86_INS_VBROADCASTSD;
		bool zero = x86_in(id, x86_zero_idiom, ARRAY_SIZE(x86_zero_idiom)) &&
			    !has_mem && same_regs && first_reg;
		bool reg_move = !has_mem && !strncmp(base, "mov", 3);
		/* and/or/xor on xmm registers: fabs, negation and masks in scalar code */
		bool fp_logic = width == 128 && base[0] != 'p' &&
				(!strncmp(base, "and", 3) || !strncmp(base, "or", 2) ||
				 !strncmp(base, "xor", 3)) &&
				(ends_with(base, "ps") || ends_with(base, "pd"));

		if (arith) {
			in->classes |= ASM_C_FP_ARITH;
			if (scalar)
				in->classes |= ASM_C_FP_SCALAR;
			if (is_div)
				in->classes |= ASM_C_FP_DIV;
		}
		if (!scalar && !has_gpr && !zero && !reg_move && !fp_logic && width >= 64) {
			in->classes |= ASM_C_SIMD;
			in->simd_width = (uint16_t)width;
			in->isa = (uint8_t)(width == 64 ? ASM_ISA_MMX : isa);
		}
	} else if (!fpu && x86_in(id, x86_int_alu, ARRAY_SIZE(x86_int_alu))) {
		in->classes |= ASM_C_INT_ALU;
	}
}

static bool arm64_in(unsigned id, const unsigned *ids, size_t n)
{
	return x86_in(id, ids, n);
}

static const unsigned a64_fp_arith[] = {
	ARM64_INS_FADD, ARM64_INS_FSUB, ARM64_INS_FMUL, ARM64_INS_FDIV, ARM64_INS_FSQRT,
	ARM64_INS_FMADD, ARM64_INS_FMSUB, ARM64_INS_FNMADD, ARM64_INS_FNMSUB,
	ARM64_INS_FNMUL, ARM64_INS_FMLA, ARM64_INS_FMLS, ARM64_INS_FMAX, ARM64_INS_FMIN,
	ARM64_INS_FMAXNM, ARM64_INS_FMINNM, ARM64_INS_FABD, ARM64_INS_FABS, ARM64_INS_FNEG,
	ARM64_INS_FRECPE, ARM64_INS_FRSQRTE, ARM64_INS_FRECPS, ARM64_INS_FRSQRTS,
	ARM64_INS_FADDP, ARM64_INS_FMULX, ARM64_INS_FRINTA, ARM64_INS_FRINTI,
	ARM64_INS_FRINTM, ARM64_INS_FRINTN, ARM64_INS_FRINTP, ARM64_INS_FRINTX,
	ARM64_INS_FRINTZ,
};
static const unsigned a64_int_alu[] = {
	ARM64_INS_ADD, ARM64_INS_SUB, ARM64_INS_MUL, ARM64_INS_MADD, ARM64_INS_MSUB,
	ARM64_INS_MNEG, ARM64_INS_SMULL, ARM64_INS_UMULL, ARM64_INS_SMADDL, ARM64_INS_UMADDL,
	ARM64_INS_SMSUBL, ARM64_INS_UMSUBL, ARM64_INS_SMULH, ARM64_INS_UMULH, ARM64_INS_AND,
	ARM64_INS_ORR, ARM64_INS_EOR, ARM64_INS_BIC, ARM64_INS_ORN, ARM64_INS_EON,
	ARM64_INS_LSL, ARM64_INS_LSR, ARM64_INS_ASR, ARM64_INS_ROR, ARM64_INS_NEG,
	ARM64_INS_NEGS, ARM64_INS_MVN, ARM64_INS_CLZ,
};
/* exclusive stores write a status register, which looks like a load */
static const unsigned a64_excl_store[] = {
	ARM64_INS_STXR, ARM64_INS_STLXR, ARM64_INS_STXP, ARM64_INS_STLXP,
	ARM64_INS_STXRB, ARM64_INS_STXRH, ARM64_INS_STLXRB, ARM64_INS_STLXRH,
};

static unsigned a64_vas_bits(arm64_vas vas)
{
	switch (vas) {
	case ARM64_VAS_8B: case ARM64_VAS_4H: case ARM64_VAS_2S: case ARM64_VAS_1D:
		return 64;
	case ARM64_VAS_16B: case ARM64_VAS_8H: case ARM64_VAS_4S: case ARM64_VAS_2D:
	case ARM64_VAS_1Q:
		return 128;
	default:
		return 0;
	}
}

static bool a64_fp_scalar_reg(unsigned r)
{
	return (r >= ARM64_REG_S0 && r <= ARM64_REG_S31) ||
	       (r >= ARM64_REG_D0 && r <= ARM64_REG_D31) ||
	       (r >= ARM64_REG_H0 && r <= ARM64_REG_H31);
}

static void classify_arm64(const cs_insn *ci, struct asm_insn *in)
{
	const cs_detail *d = ci->detail;
	const cs_arm64 *a = &d->arm64;
	unsigned id = ci->id, width = 0;
	bool jump = false, fp_reg = false, gpr_dest = false, mem_read_only = false;
	bool writes_data_reg = false, has_mem = false, q_reg = false;

	for (uint8_t i = 0; i < d->groups_count; i++)
		if (d->groups[i] == ARM64_GRP_JUMP)
			jump = true;
		else if (d->groups[i] == ARM64_GRP_RET)
			in->classes |= ASM_C_RET;
	/* capstone 4 puts bl and blr in the jump group */
	if (id == ARM64_INS_BL || id == ARM64_INS_BLR) {
		in->classes |= ASM_C_CALL;
	} else if (jump && !(in->classes & ASM_C_RET)) {
		in->classes |= ASM_C_BRANCH;
		if (id == ARM64_INS_CBZ || id == ARM64_INS_CBNZ || id == ARM64_INS_TBZ ||
		    id == ARM64_INS_TBNZ ||
		    (id == ARM64_INS_B && a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL &&
		     a->cc != ARM64_CC_NV))
			in->classes |= ASM_C_COND;
	}
	if ((in->classes & (ASM_C_BRANCH | ASM_C_CALL)) && a->op_count >= 1 &&
	    a->operands[a->op_count - 1].type == ARM64_OP_IMM) {
		in->has_target = true;
		in->target = (uint64_t)a->operands[a->op_count - 1].imm;
	} else if ((in->classes & ASM_C_BRANCH) && id == ARM64_INS_BR) {
		in->classes |= ASM_C_INDIRECT;
	}
	if (id == ARM64_INS_SDIV || id == ARM64_INS_UDIV)
		in->classes |= ASM_C_INT_DIV;
	if (id == ARM64_INS_NOP)
		in->classes |= ASM_C_NOP;

	for (uint8_t i = 0; i < a->op_count; i++) {
		const cs_arm64_op *op = &a->operands[i];
		unsigned w = a64_vas_bits(op->vas);

		if (w > width)
			width = w;
		if (op->type == ARM64_OP_MEM) {
			has_mem = true;
			mem_read_only = op->access == CS_AC_READ;
		} else if (op->type == ARM64_OP_REG) {
			unsigned r = op->reg;

			if (a64_fp_scalar_reg(r))
				fp_reg = true;
			if (r >= ARM64_REG_Q0 && r <= ARM64_REG_Q31)
				q_reg = true;
			if (i == 0 && ((r >= ARM64_REG_W0 && r <= ARM64_REG_W30) ||
				       (r >= ARM64_REG_X0 && r <= ARM64_REG_X28) ||
				       r == ARM64_REG_X29 || r == ARM64_REG_X30))
				gpr_dest = true;
			if (op->access & CS_AC_WRITE)
				writes_data_reg = true;
		}
	}
	if (has_mem && id != ARM64_INS_PRFM && id != ARM64_INS_PRFUM) {
		/*
		 * capstone 4 marks the memory operand of stores, and of loads
		 * with writeback, as read and written: a load writes a data
		 * register, a store does not.
		 */
		if (arm64_in(id, a64_excl_store, ARRAY_SIZE(a64_excl_store)))
			in->classes |= ASM_C_STORE;
		else if (mem_read_only || writes_data_reg)
			in->classes |= ASM_C_LOAD;
		else
			in->classes |= ASM_C_STORE;
		if (q_reg && width < 128)
			width = 128;
	}
	if (arm64_in(id, a64_fp_arith, ARRAY_SIZE(a64_fp_arith))) {
		in->classes |= ASM_C_FP_ARITH;
		if (!width && fp_reg)
			in->classes |= ASM_C_FP_SCALAR;
		if (id == ARM64_INS_FDIV || id == ARM64_INS_FSQRT)
			in->classes |= ASM_C_FP_DIV;
	}
	if (width && id != ARM64_INS_MOV && id != ARM64_INS_MOVI) {
		in->classes |= ASM_C_SIMD;
		in->simd_width = (uint16_t)width;
		in->isa = ASM_ISA_NEON;
	}
	if (!width && gpr_dest && arm64_in(id, a64_int_alu, ARRAY_SIZE(a64_int_alu)))
		in->classes |= ASM_C_INT_ALU;
}

static struct asm_insn *new_insn(struct asm_function *f, uint64_t addr, uint32_t size)
{
	struct asm_insn *in;

	ALLOC_GROW(f->insns, f->nr_insns + 1, f->alloc_insns);
	in = &f->insns[f->nr_insns++];
	memset(in, 0, sizeof(*in));
	in->addr = addr;
	in->size = size;
	in->loop = -1;
	in->file = in->inlined = "";
	return in;
}

/* Bytes capstone cannot decode: one pseudo-instruction per byte (x86) or word (arm64). */
static void add_unknown(struct asm_function *f, enum asm_arch arch, const uint8_t *code,
			size_t n, uint64_t addr)
{
	struct asm_insn *in = new_insn(f, addr, (uint32_t)n);
	char ops[64];

	in->classes = ASM_C_UNKNOWN;
	if (arch == ASM_ARCH_AARCH64 && n == 4) {
		uint32_t word = (uint32_t)code[0] | (uint32_t)code[1] << 8 |
				(uint32_t)code[2] << 16 | (uint32_t)code[3] << 24;

		/* op0 == 0b0010: the SVE encoding space (Arm ARM, C4.1) */
		if (((word >> 25) & 0xf) == 0x2) {
			in->classes |= ASM_C_SIMD;
			in->isa = ASM_ISA_SVE;
			in->simd_width = 0;
			snprintf(ops, sizeof(ops), "0x%08" PRIx32 " (SVE)", word);
		} else {
			snprintf(ops, sizeof(ops), "0x%08" PRIx32, word);
		}
		in->mnemonic = strtab_get(&f->strs, strtab_intern_str(&f->strs, ".inst"));
	} else {
		size_t len = 0;

		for (size_t i = 0; i < n && len + 6 < sizeof(ops); i++)
			len += (size_t)snprintf(ops + len, sizeof(ops) - len, "%s0x%02x",
						i ? ", " : "", code[i]);
		in->mnemonic = strtab_get(&f->strs, strtab_intern_str(&f->strs, ".byte"));
	}
	in->operands = strtab_get(&f->strs, strtab_intern_str(&f->strs, ops));
}

int asm_decode(struct asm_function *f, enum asm_arch arch, const uint8_t *code,
	       size_t len, uint64_t addr)
{
	csh h;
	cs_insn *ci;
	cs_err err;

	if (arch == ASM_ARCH_X86_64)
		err = cs_open(CS_ARCH_X86, CS_MODE_64, &h);
	else
		err = cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &h);
	if (err != CS_ERR_OK)
		return error("cannot start the disassembler: capstone: %s", cs_strerror(err));
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	ci = cs_malloc(h);
	while (len) {
		struct asm_insn *in;
		size_t step;

		if (!cs_disasm_iter(h, &code, &len, &addr, ci)) {
			step = arch == ASM_ARCH_AARCH64 ? 4 : 1;
			if (step > len)
				step = len;
			add_unknown(f, arch, code, step, addr);
			code += step;
			len -= step;
			addr += step;
			continue;
		}
		in = new_insn(f, ci->address, ci->size);
		in->mnemonic = strtab_get(&f->strs, strtab_intern_str(&f->strs, ci->mnemonic));
		in->operands = strtab_get(&f->strs, strtab_intern_str(&f->strs, ci->op_str));
		if (arch == ASM_ARCH_X86_64)
			classify_x86(ci, in);
		else
			classify_arm64(ci, in);
		read_regs(f, h, arch, ci, in);
	}
	cs_free(ci, 1);
	cs_close(&h);
	return 0;
}
