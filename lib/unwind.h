/*
 * unwind.h: DWARF unwinding of sampled user stacks with libdwfl, for
 * programs built without frame pointers; the hybrid of the kernel's frame
 * pointer chain and CFI unwinding of the frames in code that keeps none;
 * and the one step a frame pointer walk misses above a frameless leaf. A
 * sample brings the user registers and a copy of the top of the user
 * stack; the call frame information of the process's ELF files does the
 * rest.
 *
 * A struct unwinder owns one libdwfl session per process (its modules
 * reported at their runtime addresses), rebuilt when the caller says the
 * process's mappings changed. It borrows nothing after a call returns.
 */
#ifndef HOTLOOP_UNWIND_H
#define HOTLOOP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One executable file mapping of the process. */
struct unwind_map {
	uint64_t start, end, pgoff;
	const char *path;
};

/* A process's mappings as of one moment; gen changes when they do. */
struct unwind_target {
	pid_t pid, tid;
	uint64_t gen;
	const struct unwind_map *maps;
	size_t nr_maps;
};

/* The sample's machine state, as the sampler delivered it. */
struct unwind_state {
	const uint64_t *regs;		/* perf_regs values, in mask bit order */
	unsigned nr_regs;
	uint64_t regs_mask;
	const unsigned char *stack;	/* the user stack from sp upwards */
	uint64_t stack_size;
	bool stack_full;	/* the copy is as long as asked: the stack goes on */
};

struct unwind_frame {
	uint64_t pc;
	bool is_return;		/* pc is a return address: look up pc - 1 */
};

struct unwinder;

struct unwinder *unwinder_new(void);
void unwinder_free(struct unwinder *u);

/*
 * Unwind one sample into at most max frames, innermost first. Returns
 * the number of frames (at least the sampled pc when the registers are
 * usable, 0 when they are not).
 */
int unwinder_unwind(struct unwinder *u, const struct unwind_target *t,
		    const struct unwind_state *st, struct unwind_frame *frames, int max);

/*
 * For frame pointer call chains. A function sampled before it set up its
 * frame, or that never does (a leaf built without one, libc's string
 * functions), is not in the frame pointer chain: the kernel's walk goes
 * from it straight to its caller's caller. When the call frame
 * information at the sampled pc does not find the CFA from the frame
 * pointer, unwind one step from the sample's registers and stack copy.
 * 'leaf' is the pc the chain starts with. Returns 1 with the return
 * address into the leaf's caller in *ret; 0 when the frame pointer chain
 * is right (the frame is set up), when the registers' pc is not 'leaf',
 * or when there is no CFI for it or the stack copy is too short to tell.
 */
int unwinder_leaf_caller(struct unwinder *u, const struct unwind_target *t,
			 const struct unwind_state *st, uint64_t leaf, uint64_t *ret);

/*
 * The kernel's frame pointer chain of a sample (user entries, the pc
 * first) with, for each entry, whether its code keeps frame pointers.
 */
struct unwind_chain {
	const uint64_t *ips;
	const bool *keeps_fp;
	int n;
};

/* How a hybrid unwind ended. */
enum unwind_end {
	UNWIND_WHOLE,		/* the outermost frame, or the chain joined */
	UNWIND_SHORT_COPY,	/* cut: the stack copy ended in code without frame pointers */
	UNWIND_CHAIN,		/* no CFI for the pc: the kernel's chain as it is */
};

/*
 * The hybrid call graph: from the sample's registers, CFI unwinding
 * through the stack copy; as soon as a frame that sets up a frame pointer
 * is the one the kernel's walk went through, and the chain above it lies
 * in code that keeps frame pointers, the kernel's chain continues from
 * there (its later entries need no copy). When the copy ends first, the
 * chain is joined at the last frame if it can be, else the stack is cut
 * there and *end says why. Returns the number of frames, innermost first.
 */
int unwinder_hybrid(struct unwinder *u, const struct unwind_target *t,
		    const struct unwind_state *st, const struct unwind_chain *chain,
		    struct unwind_frame *frames, int max, enum unwind_end *end);

/*
 * Whether the code of the ELF file at 'path' keeps frame pointers: of its
 * functions whose prologue tells (doctor_classify_prologue()), at least
 * DOCTOR_FP_GOOD set one up (glibc, libstdc++ and code built with
 * -fomit-frame-pointer: a few percent; code built with
 * -fno-omit-frame-pointer: most), or all of them are leaves that need no
 * frame. Judged once per path and cached. "[vdso]" is the kernel's vdso.
 * A file that cannot be read or has no function symbols does not.
 */
bool unwinder_file_keeps_fp(struct unwinder *u, const char *path);

/* Forget a process (it exited): its session is closed. */
void unwinder_forget(struct unwinder *u, pid_t pid);

/*
 * The vdso is one image per kernel, mapped into every 64-bit process: our
 * own, copied to a temporary file, stands for a target's "[vdso]" mapping
 * when unwinding and symbolizing. Returns the file's path (the caller
 * unlinks and frees it) or NULL.
 */
char *vdso_copy(void);

#endif
