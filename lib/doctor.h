/*
 * doctor.h: what this machine and a target program allow hotloop to do:
 * perf events and their limits, kernel symbols, helper tools, and for a
 * target its architecture, symbols, debug info, build id and frame pointers.
 * The checks only gather findings; `hotloop doctor` formats them.
 * A struct doctor owns every string and array it holds.
 */
#ifndef HOTLOOP_DOCTOR_H
#define HOTLOOP_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum doctor_status {
	DOCTOR_OK,
	DOCTOR_WARN,
	DOCTOR_FAIL,
};

/* One finding: a stable name, a status, what was seen, and what to do. */
struct doctor_check {
	const char *name;	/* e.g. "perf_events", "frame_pointers" */
	enum doctor_status status;
	char *message;
	char *remedy;		/* NULL when there is nothing to do */
};

/* Frame pointer share at or above which a binary counts as built with them. */
#define DOCTOR_FP_GOOD 0.8

struct doctor_target {
	char *path;		/* as resolved (PATH search or the path given) */
	bool is_elf;
	char *error;		/* why an ELF file could not be read, or NULL */
	const char *arch;	/* "x86-64", "aarch64", ...; NULL when not ELF */
	bool arch_matches;	/* the machine can run it */
	const char *type;	/* "executable", "pie", "shared-library", ... */
	bool pie;
	bool has_symtab;	/* false: stripped */
	size_t nr_func_symbols;	/* FUNC symbols in .symtab (or the debug file's) */
	bool debug_info;	/* .debug_info here or in a separate debug file */
	char *debug_file;	/* the separate debug file, or NULL */
	char *build_id;		/* lowercase hex, or NULL */
	/*
	 * Frame pointers, from the prologues of the functions in the symbol
	 * table: fp_with set one up, fp_without use the stack or call without
	 * one, fp_neutral show neither (leaves that need no frame).
	 * fp_checked = fp_with + fp_without.
	 */
	size_t fp_with, fp_without, fp_neutral, fp_checked;
	int frame_pointers;	/* 1 yes, 0 no, -1 cannot tell */
	char **needed;		/* DT_NEEDED entries */
	size_t nr_needed, alloc_needed;
};

struct doctor {
	int paranoid;		/* kernel.perf_event_paranoid, INT_MIN if unreadable */
	bool root;
	bool cap_perfmon, cap_sys_admin;
	bool perf_events;	/* a cpu-clock counting event opened on ourselves */
	int perf_errno;		/* why it did not, 0 when it did */
	bool kernel_samples;	/* the same event opened with kernel samples */
	bool hardware_events;	/* instructions or cycles opened */
	bool mmap_ok;		/* a sampling event's ring buffer could be mapped */
	int64_t mlock_kb;	/* kernel.perf_event_mlock_kb, -1 if unreadable */
	int64_t mlock_rlimit_kb;	/* RLIMIT_MEMLOCK, -1 when unlimited */
	int64_t max_sample_rate;	/* kernel.perf_event_max_sample_rate, -1 */
	int kptr_restrict;	/* INT_MIN if unreadable */
	bool kernel_symbols;	/* /proc/kallsyms readable with real addresses */
	char *valgrind, *git, *perf;	/* full paths, NULL when not on PATH */
	struct doctor_target *target;	/* NULL without a target */

	struct doctor_check *checks;
	size_t nr_checks, alloc_checks;
};

void doctor_init(struct doctor *d);
void doctor_release(struct doctor *d);

/* Probe the machine: perf events, limits, kernel symbols, tools. */
void doctor_check_machine(struct doctor *d);

/*
 * Inspect the program at 'path' (already resolved, see
 * doctor_resolve_command()). Problems reading it become findings.
 */
void doctor_check_target(struct doctor *d, const char *path);

/*
 * Find 'cmd' as a shell would: a name with a slash is used as is, any other
 * name is searched on $PATH. Returns 0 and sets *path (caller frees), or
 * -ENOENT (not found) or a negative errno for a file that cannot be run
 * (-EACCES, -EISDIR), with *path the file found when there is one.
 */
int doctor_resolve_command(const char *cmd, char **path);

/* The full path of 'name' on $PATH if an executable is found, else NULL. */
char *doctor_which(const char *name);

enum doctor_prologue {
	DOCTOR_PROLOGUE_NEUTRAL,	/* no evidence either way */
	DOCTOR_PROLOGUE_FP,		/* sets up a frame pointer */
	DOCTOR_PROLOGUE_NO_FP,		/* uses the stack or calls without one */
};

/*
 * Classify the first instructions of a function (x86-64, i386, arm64; any
 * other machine is neutral). 'len' bounds what may be read.
 */
enum doctor_prologue doctor_classify_prologue(unsigned machine, bool big_endian,
					      const unsigned char *code, size_t len);

/* The worst status among the checks. */
enum doctor_status doctor_worst(const struct doctor *d);

const char *doctor_status_name(enum doctor_status s);

#endif
