/*
 * sampler.h: CPU sampling with perf_event_open(2). A sampler opens one
 * sampling event per CPU and task, maps one ring buffer per CPU, and hands
 * the kernel's records back parsed and in time order. It knows nothing of
 * profiles: record.c turns its events into one.
 *
 * A struct sampler owns its event file descriptors, its ring buffers and
 * the copies of records it queues; an event passed to a callback points
 * into those copies and is valid only during the call.
 */
#ifndef HOTLOOP_SAMPLER_H
#define HOTLOOP_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum sampler_callgraph {
	SAMPLER_CALLGRAPH_AUTO,		/* both: CFI where the code keeps no frame pointers */
	SAMPLER_CALLGRAPH_FP,		/* the kernel walks frame pointers */
	SAMPLER_CALLGRAPH_DWARF,	/* user registers + a copy of the user stack */
};

struct sampler_config {
	unsigned freq;			/* samples per second per thread */
	enum sampler_callgraph callgraph;
	unsigned stack_size;		/* bytes of user stack per sample (0: default) */
	unsigned mmap_pages;		/* data pages per ring buffer, a power of two */
	bool off_cpu;			/* also where threads block: SAMPLER_OFF_CPU, SWITCH_IN */
};

#define SAMPLER_DEFAULT_FREQ 999
#define SAMPLER_DEFAULT_STACK 16384
/*
 * With frame pointers a sample also brings the user ip, sp and frame
 * pointer (x86-64; pc, sp, x29, lr on arm64) and this much of the user
 * stack: enough for the call frame information to find the caller of a
 * leaf that has no frame of its own (record.c), which the kernel's walk
 * skips. 512 bytes hold the return address of ~98% of the code locations
 * of libc, libm, libz and libstdc++ that have no frame pointer frame.
 */
#define SAMPLER_FP_STACK 512
/*
 * The hybrid call graph's copy: the CFI frames of glibc's printf, qsort
 * and malloc paths under the owned code that calls them, and the frame
 * record of the first caller that keeps a frame pointer (docs/record.md
 * has the measurement).
 */
#define SAMPLER_AUTO_STACK 8192
#define SAMPLER_MAX_STACK 65528		/* the kernel's limit, 8-byte aligned */
#define SAMPLER_FP_PAGES 128
#define SAMPLER_DWARF_PAGES 256

/* Frames kept per callchain, like the kernel's default perf_event_max_stack. */
#define SAMPLER_MAX_FRAMES 127

enum sampler_event_type {
	SAMPLER_SAMPLE,
	SAMPLER_MMAP,		/* an executable mapping appeared */
	SAMPLER_COMM,		/* a thread was named, or a process exec'd */
	SAMPLER_FORK,		/* a process or thread was created */
	SAMPLER_EXIT,
	SAMPLER_OFF_CPU,	/* a thread leaves its CPU: .sample holds its stack */
	SAMPLER_SWITCH_IN,	/* a thread is back on a CPU */
};

/* User registers of a sample, in the kernel's perf_regs order, 64-bit only. */
struct sampler_regs {
	const uint64_t *regs;	/* nr values, for the bits of the requested mask */
	unsigned nr;
	bool valid;		/* the thread was a 64-bit user task */
};

struct sampler_event {
	enum sampler_event_type type;
	uint32_t pid, tid;
	uint64_t time;			/* CLOCK_MONOTONIC, nanoseconds */
	union {
		struct {
			uint64_t period;	/* ns for cpu-clock, events for cycles */
			uint32_t cpu;
			/*
			 * The callchain, leaf first, context markers removed:
			 * the first nr_kernel entries are kernel addresses,
			 * the rest user addresses, the first of them the
			 * user pc. With dwarf call graphs there are no user
			 * entries but ip (when the sample hit user code); the
			 * user stack follows in stack. With frame pointers
			 * regs and a little stack come too (sampler_regs_mask).
			 */
			const uint64_t *ips;
			uint32_t nr_ips, nr_kernel;
			uint64_t ip;
			bool kernel_ip;		/* ip is a kernel address */
			struct sampler_regs regs;
			const unsigned char *stack;	/* copied user stack, from regs' sp up */
			uint64_t stack_size;
			bool stack_full;	/* as much as asked for: the stack goes on */
		} sample;
		struct {
			uint64_t start, len, pgoff;
			uint32_t prot, flags;
			const char *filename;
			const unsigned char *build_id;	/* NULL when the kernel gave none */
			unsigned build_id_size;
		} mmap;
		struct {
			const char *comm;
			bool exec;
		} comm;
		struct {
			uint32_t ppid, ptid;	/* FORK and EXIT */
		} task;
	};
};

typedef int (*sampler_fn)(const struct sampler_event *ev, void *data);

struct sampler_stats {
	uint64_t samples;	/* sample records delivered */
	uint64_t switches;	/* with off_cpu: switch-out samples delivered */
	uint64_t lost;		/* samples the kernel dropped (LOST, LOST_SAMPLES) */
	uint64_t throttled;	/* times the kernel throttled an event */
	uint64_t corrupt;	/* ring buffers abandoned as corrupt */
};

struct sampler;

/* Flags for sampler_add_task(). */
#define SAMPLER_ENABLE_ON_EXEC	0x1	/* start counting at the task's next exec */

struct sampler *sampler_new(const struct sampler_config *cfg);
void sampler_free(struct sampler *s);

/*
 * Sample task 'tid' (and, through inherit, the threads and processes it
 * creates later) on every online CPU. The first task creates the ring
 * buffers; later ones write into them. Returns 0, 1 when the task is
 * already gone, -1 on error, or -HL_EXIT_NOT_PERMITTED when the kernel
 * refuses perf events (the message says why and what to do).
 */
int sampler_add_task(struct sampler *s, pid_t tid, unsigned flags);

/* Stop and restart all events (ioctl DISABLE/ENABLE). */
void sampler_disable(struct sampler *s);

/*
 * The event descriptors, to poll for POLLIN (data waiting in the buffer
 * the event writes to); returns how many. POLLHUP on one means its task
 * exited: stop polling that one.
 */
size_t sampler_fds(const struct sampler *s, const int **fds);

/*
 * Copy every new record out of the ring buffers and pass to fn, in time
 * order, those that no later read can precede. A negative return from fn
 * stops delivery and is returned.
 */
int sampler_read(struct sampler *s, sampler_fn fn, void *data);
/* Read once more and deliver everything queued: call after the last read. */
int sampler_drain(struct sampler *s, sampler_fn fn, void *data);

const struct sampler_stats *sampler_stats(const struct sampler *s);
/* "cpu-clock" or "cycles": the event the kernel accepted. */
const char *sampler_event_name(const struct sampler *s);
/* True when sample periods are nanoseconds (cpu-clock). */
bool sampler_period_is_time(const struct sampler *s);
/*
 * The perf_regs mask of the user registers samples carry: all that DWARF
 * unwinding needs for dwarf call graphs, ip, sp and the frame pointer for
 * fp; 0 when samples carry none (the kernel refused them, or another
 * architecture).
 */
uint64_t sampler_regs_mask(const struct sampler *s);
/* Bytes of user stack each sample copies (0 when samples carry none). */
unsigned sampler_stack_size(const struct sampler *s);

/*
 * Read records from a caller-owned memory area laid out like a perf ring
 * buffer (the header page's data_offset and data_size say where the data
 * is), as if it were one more CPU's buffer. For tests of the reader; the
 * memory must outlive the sampler.
 */
int sampler_attach_memory(struct sampler *s, void *mem, size_t len);

/*
 * Parse one raw record (as the kernel wrote it) into ev. Exposed for
 * tests: the record is treated as hostile. Returns 1 when ev is filled,
 * 0 for a record that carries no event (after counting it, e.g. LOST),
 * -1 when the record is malformed.
 */
/*
 * --call-graph auto|fp|dwarf[,SIZE] into cfg (SIZE: bytes of user stack
 * copied per sample, 8 to SAMPLER_MAX_STACK, for auto and dwarf). 0, or
 * -1 with an error.
 */
int sampler_parse_call_graph(const char *arg, struct sampler_config *cfg);

int sampler_parse(struct sampler *s, const void *rec, size_t len,
		  struct sampler_event *ev);

/*
 * Split a kernel callchain record's 'nr' entries at 'chain' (8 bytes each,
 * unaligned, byte-swapped when 'swap') by their PERF_CONTEXT_* markers:
 * kernel addresses first, then user ones, into ips (room for
 * 2 * SAMPLER_MAX_FRAMES), and set ev->sample's ips, nr_kernel and nr_ips.
 * 'misc' is the record's, whose CPU mode is the context before any marker.
 * Hypervisor and guest frames are dropped. The sampler and the perf.data
 * reader share it.
 */
void sampler_split_callchain(const unsigned char *chain, uint64_t nr, bool swap,
			     uint16_t misc, uint64_t *ips, struct sampler_event *ev);

#endif
