/*
 * target.h: which functions a candidate's diff changes, and how hot they
 * were: the loop's `target` stage. A unified diff is parsed into the old
 * side's changed lines of each file, each line is mapped to the function
 * holding it (the built binary's DWARF first, a C brace scanner of the
 * source where the binary does not cover the file), and each function gets
 * its share of the best's profile. Plain data and pure functions; the loop
 * decides (lib/loop.c). Every struct owns its strings until its _release().
 */
#ifndef HOTLOOP_TARGET_H
#define HOTLOOP_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* Old-side lines [lo, hi] changed; an insertion between lines lo and hi = lo + 1 when 'insert'. */
struct target_range {
	int64_t lo, hi;
	bool insert;
};

/* One file of a diff, by its old path (its new one when it is new). */
struct target_file {
	char *path;
	char status;			/* 'M', 'A' added, 'D' deleted, 'B' binary */
	struct target_range *v;
	size_t nr, alloc;
};

struct target_diff {
	struct target_file *files;
	size_t nr, alloc;
};

/*
 * Parse a unified diff (git's, any context) into d. Binary files, new and
 * deleted files, renames (their old path) are kept; a hunk whose lines do
 * not add up is an error. 0, or -1 with the reason in 'why'.
 */
int target_parse_diff(const char *text, size_t len, struct target_diff *d, struct strbuf *why);
void target_diff_release(struct target_diff *d);

/* A function's lines in one file: [lo, hi]. */
struct target_fn {
	char *name;
	int64_t lo, hi;
};

struct target_fns {
	struct target_fn *v;
	size_t nr, alloc;
};

/*
 * The top-level functions of C (or C-like) source, approximately: a '{'
 * at file scope (or in a namespace or extern "C" block) right after a
 * parenthesised list opens a function, named by the identifier before the
 * '(' and starting at the first line of its declaration; comments,
 * strings and preprocessor lines are skipped. Appended to out.
 */
void target_scan_source(const char *text, size_t len, struct target_fns *out);

/*
 * The functions DWARF of the ELF file 'binary' knows in each of the files
 * 'paths' (absolute, real paths): a function spans from its DW_AT_decl_line
 * to the last line of the line table in that file before the next
 * function's declaration. fns[i] gets those of paths[i]; *found[i] is set
 * when the binary covers the file at all. 0; 1 when it has no DWARF; -1
 * with an error when it cannot be opened.
 */
int target_dwarf_functions(const char *binary, const char *const *paths, size_t nr,
			   struct target_fns *fns, bool *found);
void target_fns_release(struct target_fns *f);
/* Sort by first line and drop duplicates (the same start line). */
void target_fns_sort(struct target_fns *f);

/* A function's share of the profile, by name. */
struct target_share {
	const char *name;
	double share;			/* fraction of the samples, attributed */
};

/* The share of function 'fn' (its name, else its last C++ component), or NULL. */
const struct target_share *target_share_find(const char *fn, const struct target_share *shares, size_t nr);

/* A changed function with its share. */
struct target_change {
	char *function, *file;
	double share;
	bool known;			/* in the share table (else 0: not among the hotspots) */
};

struct target_result {
	struct target_change *changed;	/* the largest share first */
	size_t nr, alloc;
	char **outside;			/* "spin.c:3-4", "data.bin (binary)", "new.c (new file)" */
	size_t nr_outside, alloc_outside;
};

/*
 * The functions of d's changed lines, given each file's functions (fns[i]
 * for d->files[i]; an empty list: none known), and their shares; lines in
 * no function go to 'outside'. Functions are matched to shares by name
 * (a C++ name also by its last component before the parameters).
 */
void target_classify(const struct target_diff *d, const struct target_fns *fns,
		     const struct target_share *shares, size_t nr_shares, struct target_result *out);
void target_result_release(struct target_result *r);

/* "parse_header (0.4%), main (0.0%)": the changed functions, at most 'max' named. */
void target_changed_text(const struct target_result *r, size_t max, struct strbuf *sb);

/*
 * Did the target get cheaper? Its attributed samples x of n in the best's
 * profile and in the candidate's, and the gate's change of the primary
 * (percent, with its interval): the target's cost in the candidate as a
 * ratio of the best's, (x2/n2) / (x1/n1) * (1 + change), with a 95%
 * interval (the share ratio's, by the log method, widened by the change's
 * interval). Cheaper when the interval's top is below 1.
 */
struct target_gain {
	double share_best, share_cand;	/* fractions */
	double ratio, ratio_low, ratio_high;
	bool cheaper;
};
void target_gain_estimate(double x1, double n1, double x2, double n2, double change_pct,
			  double change_low_pct, double change_high_pct, struct target_gain *g);

#endif
