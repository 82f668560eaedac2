/*
 * unwind.c: DWARF unwinding of copied user stacks (see unwind.h). Each
 * process gets a libdwfl session with its ELF files reported at their
 * runtime load bias; our own Dwfl_Thread_Callbacks hand libdwfl the
 * sample's registers, its stack copy, and for any other address the bytes
 * of the ELF file mapped there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif

#include "doctor.h"
#include "util.h"
#include "unwind.h"

/*
 * DWARF register number -> perf_regs number, for the registers the CFI
 * of user code refers to. The program counter is passed separately; on
 * x86-64 it is also DWARF register 16, which the CFI of PLT entries reads.
 */
#if defined(__x86_64__)
static const int dwarf_to_perf[] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	PERF_REG_X86_IP,
};
#define PERF_REG_PC PERF_REG_X86_IP
#define PERF_REG_STACK PERF_REG_X86_SP
#define PERF_REG_FP PERF_REG_X86_BP
#define DWARF_REG_FP 6		/* rbp */
#define DWARF_REG_SP 7
#define HAVE_UNWIND 1
#elif defined(__aarch64__)
static const int dwarf_to_perf[] = {
	 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
	PERF_REG_ARM64_SP,
};
#define PERF_REG_PC PERF_REG_ARM64_PC
#define PERF_REG_STACK PERF_REG_ARM64_SP
#define PERF_REG_FP PERF_REG_ARM64_X29
#define DWARF_REG_FP 29		/* x29 */
#define DWARF_REG_SP 31
#define HAVE_UNWIND 1
#else
static const int dwarf_to_perf[] = { 0 };
#define PERF_REG_PC 0
#define PERF_REG_STACK 0
#define PERF_REG_FP 0
#define DWARF_REG_FP 0
#define DWARF_REG_SP 0
#define HAVE_UNWIND 0
#endif

/* One process's session. */
struct session {
	pid_t pid;
	uint64_t gen;
	Dwfl *dwfl;
	bool attached;
};

/* A file judged by unwinder_file_keeps_fp(). */
struct fp_verdict {
	char *path;
	bool keeps_fp;
};

/*
 * A hybrid walk in progress (see unwinder_hybrid()). kfp[i] is the frame
 * pointer the kernel's walk read chain entry i + 1 from, for the ones it
 * can be known (the first is the sample's, each next one read from the
 * copy); 'join' is i when the latest frame is the one at kfp[i].
 */
struct hybrid {
	const struct unwind_chain *chain;
	struct session *ss;
	uint64_t *kfp;
	int nr_kfp;
	int join;
	bool joined;		/* stopped early: the chain continues from 'join' */
};

struct unwinder {
	struct session *sessions;
	size_t nr, alloc;
	char *vdso_path;	/* our vdso as a file, made on first need */
	bool vdso_tried;
	struct fp_verdict *verdicts;
	size_t nr_verdicts, alloc_verdicts;
	struct hybrid *hy;	/* the hybrid walk, during unwinder_hybrid() */
	uint64_t *kfp;		/* its kernel frame pointers, kept between samples */
	size_t alloc_kfp;
	bool short_read;	/* the walk read the stack past the copy's end */

	/* the sample being unwound, for the callbacks */
	pid_t tid;
	const struct unwind_state *st;
	uint64_t sp;
	struct unwind_frame *frames;
	int nframes, max;
};

/*
 * Unwinding needs call frame information, which .eh_frame in the loaded
 * file has; separate debug files are not looked for: inflating their
 * compressed sections costs as much as unwinding hundreds of samples.
 */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = no_debuginfo,
};

struct unwinder *unwinder_new(void)
{
	elf_version(EV_CURRENT);
	return xcalloc(1, sizeof(struct unwinder));
}

static void session_release(struct session *ss)
{
	if (ss->dwfl)
		dwfl_end(ss->dwfl);
	ss->dwfl = NULL;
	ss->attached = false;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr; i++)
		session_release(&u->sessions[i]);
	free(u->sessions);
	for (size_t i = 0; i < u->nr_verdicts; i++)
		free(u->verdicts[i].path);
	free(u->verdicts);
	free(u->kfp);
	if (u->vdso_path) {
		unlink(u->vdso_path);
		free(u->vdso_path);
	}
	free(u);
}

void unwinder_forget(struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < u->nr; i++)
		if (u->sessions[i].pid == pid) {
			session_release(&u->sessions[i]);
			u->sessions[i] = u->sessions[--u->nr];
			return;
		}
}

/* The value of perf register 'reg' in the sample, if it was recorded. */
static bool perf_reg(const struct unwind_state *st, int reg, uint64_t *val)
{
	unsigned idx;

	if (reg < 0 || reg > 63 || !(st->regs_mask & (1ull << reg)))
		return false;
	idx = (unsigned)__builtin_popcountll(st->regs_mask & ((1ull << reg) - 1));
	if (idx >= st->nr_regs)
		return false;
	*val = st->regs[idx];
	return true;
}

/* ---- libdwfl callbacks ------------------------------------------------- */

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	*thread_argp = u;
	return tid == u->tid;
}

/* Read a word from the ELF file that backs 'addr' in the process. */
static bool read_from_elf(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	GElf_Addr bias;
	Elf *elf;
	size_t phnum, size;
	const char *raw;

	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)) || elf_getphdrnum(elf, &phnum))
		return false;
	raw = elf_rawfile(elf, &size);
	if (!raw)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);
		uint64_t vaddr = addr - bias, off;

		if (!ph || ph->p_type != PT_LOAD || vaddr < ph->p_vaddr ||
		    vaddr - ph->p_vaddr >= ph->p_filesz || vaddr - ph->p_vaddr > ph->p_filesz - 8)
			continue;
		off = ph->p_offset + (vaddr - ph->p_vaddr);
		if (off > size || size - off < 8)
			return false;
		memcpy(result, raw + off, 8);
		return true;
	}
	return false;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;
	const struct unwind_state *st = u->st;

	if (addr >= u->sp && st->stack_size >= 8 && addr - u->sp <= st->stack_size - 8) {
		memcpy(result, st->stack + (addr - u->sp), 8);
		return true;
	}
	if (read_from_elf(dwfl, addr, result))
		return true;
	if (addr >= u->sp && st->stack_full)
		u->short_read = true;
	return false;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Word regs[ARRAY_SIZE(dwarf_to_perf)];
	uint64_t pc;

	for (size_t i = 0; i < ARRAY_SIZE(dwarf_to_perf); i++) {
		uint64_t v = 0;
		perf_reg(u->st, dwarf_to_perf[i], &v);
		regs[i] = v;
	}
	if (!dwfl_thread_state_registers(thread, 0, ARRAY_SIZE(regs), regs))
		return false;
	if (perf_reg(u->st, PERF_REG_PC, &pc))
		dwfl_thread_state_register_pc(thread, pc);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* ---- sessions ----------------------------------------------------------- */

/*
 * The load bias of the file mapped at m: the runtime address minus the
 * ELF virtual address. The mapping's file offset picks the segment.
 */
static bool map_bias(const struct unwind_map *m, int fd, uint64_t *bias)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t phnum;
	bool found = false;

	if (!elf)
		return false;
	if (elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &phnum)) {
		for (size_t i = 0; i < phnum && !found; i++) {
			GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);
			uint64_t seg_page;

			if (!ph || ph->p_type != PT_LOAD)
				continue;
			seg_page = ph->p_offset & ~(page - 1);
			if (m->pgoff < seg_page || m->pgoff >= ph->p_offset + ph->p_filesz)
				continue;
			*bias = m->start - (ph->p_vaddr - (ph->p_offset - m->pgoff));
			found = true;
		}
	}
	elf_end(elf);
	return found;
}

static void report_maps(struct unwinder *u, Dwfl *dwfl, const struct unwind_target *t)
{
	for (size_t i = 0; i < t->nr_maps; i++) {
		const struct unwind_map *m = &t->maps[i];
		const char *name, *path = m->path;
		uint64_t bias;
		bool seen = false;
		struct stat st;
		int fd;

		if (!strcmp(path, "[vdso]")) {
			if (!u->vdso_tried) {
				u->vdso_path = vdso_copy();
				u->vdso_tried = true;
			}
			if (!u->vdso_path)
				continue;
			path = u->vdso_path;
		} else if (path[0] != '/') {
			continue;	/* anonymous code */
		}
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(t->maps[j].path, m->path);
		if (seen)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !map_bias(m, fd, &bias)) {
			close(fd);
			continue;
		}
		name = path == m->path ? strrchr(path, '/') + 1 : m->path;
		/* consumes fd on success */
		if (!dwfl_report_elf(dwfl, name, path, fd, bias, true))
			close(fd);
	}
}

static struct session *get_session(struct unwinder *u, const struct unwind_target *t)
{
	struct session *ss = NULL;

	for (size_t i = 0; i < u->nr; i++)
		if (u->sessions[i].pid == t->pid) {
			ss = &u->sessions[i];
			break;
		}
	if (!ss) {
		ALLOC_GROW(u->sessions, u->nr + 1, u->alloc);
		ss = &u->sessions[u->nr++];
		memset(ss, 0, sizeof(*ss));
		ss->pid = t->pid;
		ss->gen = t->gen + 1;
	}
	if (ss->dwfl && ss->gen == t->gen)
		return ss->attached ? ss : NULL;

	session_release(ss);
	ss->gen = t->gen;
	ss->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!ss->dwfl)
		return NULL;
	dwfl_report_begin(ss->dwfl);
	report_maps(u, ss->dwfl, t);
	if (dwfl_report_end(ss->dwfl, NULL, NULL))
		return NULL;
	ss->attached = dwfl_attach_state(ss->dwfl, NULL, t->pid, &thread_callbacks, u);
	return ss->attached ? ss : NULL;
}

char *vdso_copy(void)
{
	char line[512], *path;
	unsigned long long start = 0, end = 0;
	FILE *maps = fopen("/proc/self/maps", "re");
	const char *tmpdir = getenv("TMPDIR");
	int fd;

	if (!maps)
		return NULL;
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2)
			break;
	fclose(maps);
	if (!start || end <= start || end - start > (16u << 20) ||
	    getauxval(AT_SYSINFO_EHDR) != start)
		return NULL;
	path = xstrfmt("%s/hotloop-vdso.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	if (write(fd, (const void *)(uintptr_t)start, end - start) != (ssize_t)(end - start)) {
		close(fd);
		unlink(path);
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

static bool hybrid_frame(struct unwinder *u, Dwfl_Frame *state, Dwarf_Addr pc, bool activation);

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (!pc)
		return DWARF_CB_ABORT;
	u->frames[u->nframes].pc = pc;
	u->frames[u->nframes].is_return = !activation;
	u->nframes++;
	if (u->hy && hybrid_frame(u, state, pc, activation))
		return DWARF_CB_ABORT;
	return u->nframes < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Unwind up to max frames of the sample in session ss; returns how many. */
static int walk(struct unwinder *u, struct session *ss, const struct unwind_target *t,
		const struct unwind_state *st, uint64_t sp,
		struct unwind_frame *frames, int max)
{
	u->tid = t->tid;
	u->st = st;
	u->sp = sp;
	u->frames = frames;
	u->nframes = 0;
	u->max = max;
	dwfl_getthread_frames(ss->dwfl, t->tid, frame_cb, u);
	u->st = NULL;
	u->frames = NULL;
	return u->nframes;
}

int unwinder_unwind(struct unwinder *u, const struct unwind_target *t,
		    const struct unwind_state *st, struct unwind_frame *frames, int max)
{
	struct session *ss;
	uint64_t pc, sp;
	int n = 0;

	if (!HAVE_UNWIND || max < 1 || !st->regs ||
	    !perf_reg(st, PERF_REG_PC, &pc) || !perf_reg(st, PERF_REG_STACK, &sp))
		return 0;
	ss = get_session(u, t);
	if (ss)
		n = walk(u, ss, t, st, sp, frames, max);
	if (!n) {
		/* no module or no CFI for the pc: the pc alone is still true */
		frames[0].pc = pc;
		frames[0].is_return = false;
		n = 1;
	}
	return n;
}

/* The CFI row for pc: from .eh_frame, else .debug_frame; NULL when none has one. */
static Dwarf_Frame *cfi_row(Dwfl_Module *mod, Dwarf_Addr pc)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;

	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, pc - bias, &frame))
		return frame;
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, pc - bias, &frame))
		return frame;
	return NULL;
}

/* Whether a CFA rule reads the frame pointer register. */
static bool reads_fp(const Dwarf_Op *ops, size_t nops)
{
	for (size_t i = 0; i < nops; i++) {
		unsigned atom = ops[i].atom;

		if ((atom == DW_OP_bregx || atom == DW_OP_regx) && ops[i].number == DWARF_REG_FP)
			return true;
		if (atom == DW_OP_breg0 + DWARF_REG_FP || atom == DW_OP_reg0 + DWARF_REG_FP)
			return true;
	}
	return false;
}

/* ---- the hybrid call graph ------------------------------------------------ */

/* The value of a DWARF expression "register + offset" (a CFA rule). */
static bool breg_value(Dwfl_Frame *state, const Dwarf_Op *ops, size_t nops, uint64_t *val)
{
	Dwarf_Word reg;
	unsigned regno;
	int64_t off;

	if (nops != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		regno = (unsigned)ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		regno = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return false;
	}
	if (dwfl_frame_reg(state, regno, &reg))
		return false;
	*val = reg + (uint64_t)off;
	return true;
}

/* The offset N of a register saved at CFA + N; false for any other rule. */
static bool saved_at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (!ops || !nops || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (nops == 3 && (ops[1].atom == DW_OP_consts || ops[1].atom == DW_OP_constu) &&
	    (ops[2].atom == DW_OP_plus || ops[2].atom == DW_OP_minus)) {
		*off = ops[2].atom == DW_OP_plus ? (int64_t)ops[1].number : -(int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * Whether the frame at 'state' has set up its own frame pointer: its CFI
 * saves the caller's frame pointer at CFA + N, and the frame pointer
 * register holds that address (a frame record the kernel's walk reads).
 * 'fp' is the register's value in this frame.
 */
static bool frame_is_set_up(struct session *ss, Dwfl_Frame *state, Dwarf_Addr pc,
			    bool activation, uint64_t fp)
{
	Dwarf_Addr at = activation ? pc : pc - 1;
	Dwfl_Module *mod = dwfl_addrmodule(ss->dwfl, at);
	Dwarf_Op mem[3], *ops;
	Dwarf_Frame *row;
	size_t nops;
	uint64_t cfa;
	int64_t off;
	bool set_up = false;

	if (!mod || !(row = cfi_row(mod, at)))
		return false;
	if (!dwarf_frame_cfa(row, &ops, &nops) && breg_value(state, ops, nops, &cfa) &&
	    !dwarf_frame_register(row, DWARF_REG_FP, mem, &ops, &nops) &&
	    saved_at_cfa(ops, nops, &off))
		set_up = cfa + (uint64_t)off == fp;
	free(row);
	return set_up;
}

/* Whether the chain's entries after i keep frame pointers. */
static bool chain_keeps_fp_after(const struct unwind_chain *c, int i)
{
	for (int j = i + 1; j < c->n; j++)
		if (!c->keeps_fp[j])
			return false;
	return true;
}

/*
 * A frame of a hybrid walk was just added: note whether it is where the
 * kernel's walk went, and whether the chain can take over from here.
 * Returns true to stop the walk.
 */
static bool hybrid_frame(struct unwinder *u, Dwfl_Frame *state, Dwarf_Addr pc, bool activation)
{
	struct hybrid *hy = u->hy;
	Dwarf_Word fp;

	hy->join = -1;
	if (dwfl_frame_reg(state, DWARF_REG_FP, &fp))
		return false;
	for (int i = 0; i < hy->nr_kfp; i++) {
		if (hy->kfp[i] != fp)
			continue;
		if (i + 1 >= hy->chain->n || !frame_is_set_up(hy->ss, state, pc, activation, fp))
			return false;
		hy->join = i;
		hy->joined = chain_keeps_fp_after(hy->chain, i);
		return hy->joined;
	}
	return false;
}

/*
 * The frame pointers the kernel's walk went through, as far as the copy
 * tells: the sample's, then each one read from the frame record at the
 * previous, while that record is in the copy and its return address is
 * the chain's next entry.
 */
static int kernel_fps(const struct unwind_state *st, uint64_t sp, const struct unwind_chain *c,
		      uint64_t *kfp)
{
	uint64_t fp, next, ret;
	int n = 0;

	if (!perf_reg(st, PERF_REG_FP, &fp))
		return 0;
	kfp[n++] = fp;
	while (n < c->n && fp >= sp && st->stack_size >= 16 && fp - sp <= st->stack_size - 16) {
		memcpy(&next, st->stack + (fp - sp), 8);
		memcpy(&ret, st->stack + (fp - sp) + 8, 8);
		if (ret != c->ips[n] || next <= fp)
			break;
		kfp[n++] = fp = next;
	}
	return n;
}

int unwinder_hybrid(struct unwinder *u, const struct unwind_target *t,
		    const struct unwind_state *st, const struct unwind_chain *chain,
		    struct unwind_frame *frames, int max, enum unwind_end *end)
{
	struct hybrid hy = { chain, NULL, NULL, 0, -1, false };
	uint64_t pc, sp;
	int n = 0;

	*end = UNWIND_CHAIN;
	if (max < 1)
		return 0;
	if (HAVE_UNWIND && st->regs && perf_reg(st, PERF_REG_PC, &pc) &&
	    perf_reg(st, PERF_REG_STACK, &sp) && (hy.ss = get_session(u, t))) {
		ALLOC_GROW(u->kfp, (size_t)chain->n + 1, u->alloc_kfp);
		hy.kfp = u->kfp;
		hy.nr_kfp = kernel_fps(st, sp, chain, hy.kfp);
		u->hy = &hy;
		u->short_read = false;
		n = walk(u, hy.ss, t, st, sp, frames, max);
		u->hy = NULL;
		/*
		 * libdwfl ends a walk it cannot continue as it ends one at the
		 * outermost frame: a read past the copy's end tells them apart.
		 */
		if (n > 1 || (n == 1 && hy.join >= 0))
			*end = u->short_read && n < max ? UNWIND_SHORT_COPY : UNWIND_WHOLE;
		else
			n = 0;	/* no CFI for the pc: the chain is all there is */
		if (!n && u->short_read)
			*end = UNWIND_SHORT_COPY;
	}
	if (hy.join >= 0 && n) {
		/* the chain continues from the last frame, up to code without frame pointers */
		int j = hy.join + 1;

		*end = UNWIND_WHOLE;
		for (; j < chain->n && n < max; j++) {
			frames[n].pc = chain->ips[j];
			frames[n++].is_return = true;
			if (!chain->keeps_fp[j] && j < chain->n - 1) {
				*end = UNWIND_SHORT_COPY;
				break;
			}
		}
	} else if (!n) {
		for (; n < chain->n && n < max; n++) {
			frames[n].pc = chain->ips[n];
			frames[n].is_return = n > 0;
		}
	}
	return n;
}

/* ---- frame pointers, judged per file --------------------------------------- */

#define FP_PROLOGUE_BYTES 128
#define FP_MIN_SHARE DOCTOR_FP_GOOD

/* The judgement of unwinder_file_keeps_fp() on an open ELF file. */
static bool elf_keeps_fp(Elf *elf)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	size_t size, with = 0, without = 0, neutral = 0;
	const unsigned char *raw = (const unsigned char *)elf_rawfile(elf, &size);
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Data *data;

	if (!raw || !gelf_getehdr(elf, &eh))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh)) {
			if (sh.sh_type == SHT_SYMTAB)
				symtab = scn;
			else if (sh.sh_type == SHT_DYNSYM)
				dynsym = scn;
		}
	scn = symtab ? symtab : dynsym;
	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return false;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		GElf_Shdr text;
		Elf_Scn *ts;
		uint64_t off, len;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || !sym.st_size ||
		    !(ts = elf_getscn(elf, sym.st_shndx)) || !gelf_getshdr(ts, &text) ||
		    text.sh_type != SHT_PROGBITS || !(text.sh_flags & SHF_EXECINSTR) ||
		    sym.st_value < text.sh_addr || sym.st_value - text.sh_addr >= text.sh_size)
			continue;
		off = text.sh_offset + (sym.st_value - text.sh_addr);
		len = sym.st_size < FP_PROLOGUE_BYTES ? sym.st_size : FP_PROLOGUE_BYTES;
		if (off > size || size - off < len)
			continue;
		switch (doctor_classify_prologue(eh.e_machine, eh.e_ident[EI_DATA] == ELFDATA2MSB,
						 raw + off, len)) {
		case DOCTOR_PROLOGUE_FP:
			with++;
			break;
		case DOCTOR_PROLOGUE_NO_FP:
			without++;
			break;
		case DOCTOR_PROLOGUE_NEUTRAL:
			neutral++;
			break;
		}
	}
	/* only leaves that need no frame: the kernel's walk is right but for them */
	if (!with && !without)
		return neutral > 0;
	return (double)with >= FP_MIN_SHARE * (double)(with + without);
}

bool unwinder_file_keeps_fp(struct unwinder *u, const char *path)
{
	const char *file = path;
	bool keeps = false;
	struct stat st;
	Elf *elf;
	int fd;

	for (size_t i = 0; i < u->nr_verdicts; i++)
		if (!strcmp(u->verdicts[i].path, path))
			return u->verdicts[i].keeps_fp;
	if (!strcmp(path, "[vdso]")) {
		if (!u->vdso_tried) {
			u->vdso_path = vdso_copy();
			u->vdso_tried = true;
		}
		file = u->vdso_path;
	}
	if (file && *file == '/' && (fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) >= 0) {
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    (elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
			keeps = elf_kind(elf) == ELF_K_ELF && elf_keeps_fp(elf);
			elf_end(elf);
		}
		close(fd);
	}
	ALLOC_GROW(u->verdicts, u->nr_verdicts + 1, u->alloc_verdicts);
	u->verdicts[u->nr_verdicts++] = (struct fp_verdict){ xstrdup(path), keeps };
	return keeps;
}

int unwinder_leaf_caller(struct unwinder *u, const struct unwind_target *t,
			 const struct unwind_state *st, uint64_t leaf, uint64_t *ret)
{
	struct unwind_frame frames[2];
	struct session *ss;
	Dwfl_Module *mod;
	Dwarf_Frame *row;
	Dwarf_Op *ops;
	size_t nops;
	uint64_t pc, sp;
	bool framed;

	if (!HAVE_UNWIND || !st->regs ||
	    !perf_reg(st, PERF_REG_PC, &pc) || !perf_reg(st, PERF_REG_STACK, &sp) || pc != leaf)
		return 0;
	ss = get_session(u, t);
	if (!ss || !(mod = dwfl_addrmodule(ss->dwfl, pc)) || !(row = cfi_row(mod, pc)))
		return 0;
	/* the frame is set up when the CFA is found from the frame pointer */
	framed = dwarf_frame_cfa(row, &ops, &nops) || reads_fp(ops, nops);
	free(row);
	if (framed || walk(u, ss, t, st, sp, frames, 2) < 2 || !frames[1].is_return)
		return 0;
	*ret = frames[1].pc;
	return 1;
}
