/*
 * brief.h: where the time goes in code the user owns, and why; the
 * evidence an agent (or a person) reads before changing anything. Samples
 * in foreign code (libc, libstdc++, libm, the kernel) are attributed to the
 * nearest owned caller in the same stack; each owned hotspot gets its
 * lines, callers, callees and tags (why it is hot) with the numbers behind
 * them. docs/brief.md documents the rules and thresholds.
 *
 * A struct brief owns everything it holds, except strings that point into
 * the profile it was built from, which must outlive it.
 */
#ifndef HOTLOOP_BRIEF_H
#define HOTLOOP_BRIEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verdict.h"

struct profile;
struct strbuf;
struct json_t;
struct heap_brief;

/* The vocabulary of tags, in the order they are listed. */
enum brief_tag {
	BT_ALLOCATION, BT_STRING, BT_FORMATTING, BT_MATH, BT_LOCK, BT_SYSCALL,
	BT_CONTAINER, BT_CALLBACK, BT_RECURSION, BT_INLINED, BT_COMPUTE_LEAF,
	BT_DIVISION, BT_SCALAR_FP, BT_NOT_VECTORIZED, BT_BRANCHY, BT_MEMORY_BOUND,
	BT_NESTED_LOOP, BT_SUPERLINEAR, BT_BLOCKED, BT_SLEEP,
	BT_NR
};
const char *brief_tag_name(enum brief_tag t);

/* Thresholds of the tag rules (docs/brief.md). */
#define BRIEF_CATEGORY_SHARE	0.20	/* allocation ... container: of its attributed time */
#define BRIEF_CALLBACK_SHARE	0.50	/* of its attributed time, under a foreign caller */
#define BRIEF_RECURSION_SHARE	0.20	/* of its total time, twice or more in the stack */
#define BRIEF_INLINED_SHARE	0.50	/* of its attributed time, as an inlined frame */
#define BRIEF_LEAF_SHARE	0.80	/* self / total */
#define BRIEF_SUPERLINEAR_EXP	1.3	/* growth exponent, with a fit of R^2 >= 0.9 */
#define BRIEF_QUALITY_WARN	0.10	/* unknown frames or truncated stacks */
#define BRIEF_FOLD_MIN		3	/* hotspots with `inlined` before it is one line for all */

/*
 * Which code is ours: sources under a root (not under an excluded path).
 * Filled by the functions below, it owns its strings.
 */
struct brief_owned {
	char **roots;			/* absolute directories */
	size_t nr_roots;
	char **excluded;		/* absolute paths under a root that are not ours */
	size_t nr_excluded;
	char *how;			/* where the roots came from, for the header */
	size_t alloc_roots, alloc_excluded;
};

/*
 * Add a root (or an excluded path) by its real path. A missing one is an
 * error when 'must_exist', else skipped. 0, or -1 with an error.
 */
int brief_owned_add(struct brief_owned *o, const char *dir, bool excluded, bool must_exist);
/*
 * The roots a hotloop.conf at 'path' declares: [project] owned relative to
 * its directory, or, when that is empty, its directory less [project]
 * protected. 0, or -1 with an error.
 */
struct config;
int brief_owned_from_config(struct brief_owned *o, const struct config *cf, const char *path);
void brief_owned_release(struct brief_owned *o);

struct brief_opts {
	const struct brief_owned *owned;
	size_t top;			/* hotspots at most; 0: 10 */
	int context;			/* snippet lines either side of the hottest; <0: 6 */
	double min_share;		/* a hotspot's least attributed share; 0.005 */
	const char *focus;		/* only this function (exact, else substring) */
	const char *workload;		/* for the header; NULL: the profile's "command: " */
	bool no_asm;			/* do not read the hotspots' instructions */
	/* reads a source for the snippets (a revision's: brief --rev); NULL: the file system */
	int (*read_source)(void *data, const char *path, struct strbuf *out, struct strbuf *why);
	void *source_data;
};

struct brief_share {
	const char *name;
	double pct;			/* of the whole (hot path, rollups) or of the hotspot */
	bool owned;
};

struct brief_line {
	int64_t line;
	int64_t value;			/* attributed to this line of the function */
	char *text;			/* the source line, NULL when unread */
};

struct brief_tag_hit {
	enum brief_tag tag;
	char *evidence;
};

/* An attempt of the knowledge base on a hotspot's function (copied: the kb may go). */
#define BRIEF_KB_MAX	3	/* attempts shown per hotspot, newest first */
struct brief_kb_hit {
	char *slug;
	enum verdict_kind verdict;	/* VERDICT_NONE when the entry has none */
	char *change;			/* NULL when the entry has none */
	char *hypothesis;		/* on one line, cut; NULL when none */
};

struct brief_hotspot {
	const char *function, *file, *dso;
	const char *binary;		/* the mapped file holding it, for asm */
	const char *system_name;	/* the symbol, for asm */
	int64_t line;			/* the hottest line, 0 when unknown */
	int64_t self, total, attributed;
	bool inlined_only;		/* never seen as a frame of its own */
	struct brief_share callers[3], callees[3];
	size_t nr_callers, nr_callees;
	struct brief_line *lines;	/* the snippet, in line order; NULL when none */
	size_t nr_lines;
	char *snippet_note;		/* why there is no snippet, or NULL */
	struct brief_tag_hit *tags;
	size_t nr_tags;
	char *asm_verdict;		/* NULL when not analyzed */
	char *asm_container;		/* an inlined function: the symbol whose code was analyzed */
	char *asm_note;			/* why the instructions could not be read, or NULL */
	char *asm_into;			/* an inlined function's: the function whose copies of it
					   asm_verdict is about, or NULL */
	double inlined_pct;		/* of its attributed time, in inlined copies */
	bool have_scale;
	double exponent, r2;
	struct brief_kb_hit *kb;	/* from brief_add_kb(), newest first */
	size_t nr_kb;
	size_t kb_total;		/* attempts on it in the knowledge base, shown or not */
};

struct brief {
	const char *workload;
	const char *sample_type;	/* "samples/count" ... */
	const char *event;		/* the first comment, e.g. "cpu-clock" */
	int64_t total;			/* of the sample type */
	uint64_t samples;		/* samples taken (samples/count when present) */
	double duration_s;		/* 0 when unknown */
	double unknown_pct, truncated_pct, unattributed_pct;
	double short_copy_pct;	/* stacks record cut where the stack copy ended */
	char **warnings;
	size_t nr_warnings;
	const struct brief_owned *owned;
	bool owned_fallback;		/* nothing under the roots: the main executable counted */
	char *main_tree;		/* ... and the files of the tree it was built in; NULL: none */
	struct brief_hotspot *hotspots;
	size_t nr_hotspots;
	struct brief_share *hot_path;
	size_t nr_hot_path;
	struct brief_share *by_dso, *by_dir;
	size_t nr_by_dso, nr_by_dir;
	char **dir_names;		/* the strings by_dir points to */
	size_t nr_dir_names;
	char **real_paths;		/* sources shown by their real path, hotspots point to */
	size_t nr_real_paths;
	char *kb_dir;			/* the knowledge base as shown; NULL: none added */
	/* a tag most hotspots carry, said once (`inlined`): which hotspots */
	enum brief_tag folded;		/* BT_NR: none */
	size_t *folded_ranks;		/* indexes in hotspots */
	size_t nr_folded;
	size_t kb_attempts;		/* how many attempts it holds */
	/* what the last format call kept within its budget */
	size_t show_hotspots, show_snippets;
	bool truncated;
	size_t budget;			/* tokens, 0: none */
	struct heap_brief *heap;	/* a heap profile's allocation sites; NULL: not one */
};

/*
 * Build the brief of sample type 'idx' of p. 0, or -1 with an error (no
 * samples, --focus matching nothing).
 */
int brief_build(struct brief *b, const struct profile *p, int idx, const struct brief_opts *o);

/*
 * Read the JSON that `hotloop scale` wrote and set each hotspot's growth
 * exponent (and the superlinear tag). 0, or -1 with an error.
 */
int brief_add_scale(struct brief *b, const char *path);

/*
 * Give each hotspot the (at most BRIEF_KB_MAX) newest attempts of the
 * knowledge base on its function, for the Markdown, the JSON and the
 * questions. 0.
 */
struct kb;
int brief_add_kb(struct brief *b, const struct kb *kb);

/*
 * The Markdown, at most 'budget' tokens (chars / 4; 0: no limit), or the
 * JSON with what the Markdown keeps at that budget (so the JSON text is
 * longer: its keys and indentation are not counted).
 */
void brief_format_md(struct brief *b, size_t budget, struct strbuf *out);
struct json_t *brief_to_json(struct brief *b, size_t budget);

void brief_release(struct brief *b);

/*
 * The tags a hotspot has from its own numbers: inlined (inlined_attr of
 * its attributed time in inlined copies) and compute-leaf (self / total).
 */
void brief_own_tags(struct brief_hotspot *h, int64_t inlined_attr);

/*
 * The tags a hotspot's instructions give it: those of f (analyzed by
 * asm_analyze()); and compute-leaf (from brief_own_tags()) goes when the
 * samples sit after memory accesses (memory-bound: a load's stall seen
 * through skid is no computation). Also the verdict. The tag decisions on
 * real code in tests/data/tags run through here.
 */
struct asm_function;
void brief_code_tags(struct brief_hotspot *h, const struct asm_function *f);

/* Free what a hotspot owns (tags, snippet, asm, kb hits). */
void brief_hotspot_release(struct brief_hotspot *h);

/* Is an absolute source (or mapped) file under a root and not excluded? */
bool brief_owns_path(const struct brief_owned *o, const char *path);

/* The category of a foreign function by name and DSO: BT_ALLOCATION ...
 * BT_CONTAINER, or BT_NR when it has none. */
enum brief_tag brief_categorize(const char *name, const char *dso);

#endif
