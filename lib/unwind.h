/*
 * unwind.h: DWARF unwinding of sampled user stacks with libdwfl, for
 * programs built without frame pointers, and the one step a frame
 * pointer walk misses above a frameless leaf. A sample brings the user
 * registers and a copy of the top of the user stack; the call frame
 * information of the process's ELF files does the rest.
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
