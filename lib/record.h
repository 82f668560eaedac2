/*
 * record.h: `hotloop record` as a library. record_run() starts a command
 * (or attaches to a process), samples it with the sampler, follows every
 * process and thread it creates and every file they map, and writes the
 * profile. The pieces are exposed for tests: a struct recording is the
 * timeline (processes, threads, mappings, aggregated stacks) fed with
 * sampler events, and recording_build() turns it into a struct profile.
 *
 * A struct recording owns everything it holds; the caller owns the
 * struct profile it builds into.
 */
#ifndef HOTLOOP_RECORD_H
#define HOTLOOP_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler.h"

struct profile;
struct symbolizer;

struct record_options {
	struct sampler_config sampler;
	char **argv;		/* the command to run, or NULL to attach */
	pid_t pid;		/* the process to attach to (argv NULL) */
	uint64_t duration_ns;	/* stop after this long; 0: when the target ends */
	const char *output;	/* the profile to write */
	const char *dir;	/* run the command here (NULL: where we are) */
	bool discard_stdout;	/* the command's stdout goes to /dev/null */
	const char *stdout_file;	/* ... or to this file (truncated); NULL: ours */
	const char *stderr_file;	/* the command's stderr is appended to this file; NULL: ours */
};

struct record_result {
	struct sampler_stats stats;
	uint64_t cut_samples;	/* stacks cut where the stack copy ended */
	unsigned stack_size;	/* bytes of user stack copied per sample (0: none) */
	uint64_t duration_ns;
	int wait_status;	/* the command's, as from waitpid(); 0 when attached */
	bool interrupted;	/* SIGINT/SIGTERM/SIGHUP ended an attached recording */
};

/*
 * Record and write o->output. Returns 0 when a profile was written, -1
 * on failure, -HL_EXIT_NOT_PERMITTED when perf events are refused, and
 * -HL_EXIT_NOT_FOUND / -HL_EXIT_NOT_EXECUTABLE when the command cannot
 * be run (the message says which, like a shell). SIGINT or SIGTERM while
 * it records is passed to the command and calls hl_cancel(), so a caller
 * in the middle of longer work stops too.
 */
int record_run(const struct record_options *o, struct record_result *res);
/* 0 when a file can be made where the profile goes: a failure before the command runs, not after. */
int record_check_output(const char *path);

/*
 * The line `hotloop record` ends with: "hotloop record: N samples, N lost,
 * S s, wrote 'FILE'" with what went wrong, and a newline.
 */
struct strbuf;
void record_summary(const struct record_result *res, const char *output, struct strbuf *sb);

/* ---- the timeline, for record_run() and tests ---- */

struct recording;

/* regs_mask: the sampler's (the user registers samples carry; 0: none). */
struct recording *recording_new(enum sampler_callgraph cg, uint64_t regs_mask);
void recording_free(struct recording *r);

/* Feed one sampler event (events must come in time order). A sampler_fn. */
int recording_event(const struct sampler_event *ev, void *recording);

/*
 * Seed the timeline with a running process: its executable mappings from
 * /proc/PID/maps and the names of its threads.
 */
int recording_add_process(struct recording *r, pid_t pid);

/*
 * The process whose executable is the profile's first mapping (pprof's
 * convention: the main binary), listed even when no sample landed in it:
 * the command started (its last exec), or the process attached to.
 */
void recording_set_main(struct recording *r, pid_t pid);
/*
 * Symbolize with 'sym' (the caller's, kept open: it may have opened the
 * DSOs already, while the program ran) instead of a symbolizer of its own.
 */
void recording_use_symbolizer(struct recording *r, struct symbolizer *sym);

/*
 * The build id (hex) of the kernel the samples were taken on, when they
 * come from a file: kernel frames are symbolized with this machine's
 * kallsyms only when its kernel has that build id, else they stay
 * addresses (with a warning). NULL or "": this machine's kernel.
 */
void recording_set_kernel_build_id(struct recording *r, const char *hex);

/* What the profile says about how it was recorded. */
struct recording_info {
	const char *event;		/* "cpu-clock" or "cycles" */
	bool period_is_time;		/* sample periods are nanoseconds */
	unsigned freq;
	int64_t time_nanos;		/* wall clock at the start */
	int64_t duration_nanos;
	const char *command;		/* what was recorded, for a "command: " comment; may be NULL */
};

/*
 * Build the profile into p (freshly initialized): sample types
 * samples/count and cpu/nanoseconds (cycles/count for the cycles event),
 * pid/tid/comm labels, one mapping per mapped file range (the main
 * executable's first), one location per distinct (mapping, address).
 */
int recording_build(struct recording *r, struct profile *p,
		    const struct recording_info *info);

/* Samples aggregated so far (distinct stacks) and their total count. */
uint64_t recording_samples(const struct recording *r);

/*
 * Samples whose stack was cut where the stack copy ended, in code that
 * keeps no frame pointers (--call-graph auto). They carry the label
 * RECORD_LABEL_UNWIND = RECORD_UNWIND_SHORT in the profile.
 */
uint64_t recording_cut_samples(const struct recording *r);
#define RECORD_LABEL_UNWIND "unwind"
/* With off-CPU intervals: the sample types for the time blocked, and both. */
#define RECORD_OFF_CPU "off-cpu"
#define RECORD_WALL "wall"

/*
 * Record where threads leave their CPU (SAMPLER_OFF_CPU) and for how long
 * (until SAMPLER_SWITCH_IN): the profile gains off-cpu/nanoseconds and
 * wall/nanoseconds (on-CPU time plus off-CPU time).
 */
void recording_set_off_cpu(struct recording *r, bool on);
#define RECORD_UNWIND_SHORT "cut: stack copy too short"
/*
 * A heap site whose stack the recorder cut to the allocator's caller, or
 * kept none of, past --heap-max-stacks distinct stacks: the label
 * RECORD_LABEL_UNWIND = RECORD_UNWIND_STACK_LIMIT.
 */
#define RECORD_UNWIND_STACK_LIMIT "cut: too many distinct stacks"

/* ---- heap recordings (lib/heap-record.c) ---- */

/*
 * The executable mappings of 'maps' (the text of /proc/PID/maps, cut into
 * lines in place) become pid's; its first file is the executable.
 */
void recording_add_maps(struct recording *r, pid_t pid, char *maps);
/*
 * Samples are allocation sites: recording_build() gives the profile the
 * heap sample types (heap-profile.h, with period info->freq) and labels
 * pid and op, and no CPU sample types.
 */
void recording_set_heap(struct recording *r);
/*
 * Add HEAP_NR_SAMPLE_TYPES values to the site of pid at the return
 * addresses pcs[0..n) (the allocator's caller first), allocated by 'op';
 * 'cut': the recorder kept no more of the stack than that (the label
 * RECORD_UNWIND_STACK_LIMIT).
 */
void recording_add_heap(struct recording *r, pid_t pid, const uint64_t *pcs, uint32_t n, bool cut,
			const char *op, const int64_t *values);


#endif
