/*
 * catalog-match.h: the catalog's matcher on tree-sitter (C and C++): each
 * entry's rule tried on every node of a parsed file, patterns parsed as
 * code with $X / $$$ metavariables. Findings own their strings; check
 * results own their findings and notes (cat_check_release()).
 */
#ifndef HOTLOOP_CATALOG_MATCH_H
#define HOTLOOP_CATALOG_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog-rule.h"

struct cat_capture {
	char *name;		/* without the '$' ("S", or "ARGS" of $$$ARGS) */
	char *text;
};

struct cat_finding {
	char *file, *rule_id, *message;	/* message: $X replaced by the captures */
	enum cat_severity severity;
	double confidence;
	unsigned line, column, end_line, end_column;	/* 1-based; columns in bytes */
	struct cat_capture *caps;
	size_t nr_caps;
	char *function;		/* the function definition it is in (its name), or NULL */
	/* with a profile (cat_check_rank()): its function's share of the samples */
	bool sampled;
	double self_share, total_share;	/* 0 to 1 */
};

struct cat_check {
	struct cat_finding *findings;
	size_t nr, alloc;
	size_t files, lines;		/* files matched, their lines */
	size_t skipped, syntax_errors;	/* files not read; files parsed with errors */
	char **notes;			/* one line per file skipped or partly parsed */
	size_t nr_notes, alloc_notes;
};
#define CAT_CHECK_INIT { 0 }

/* Files larger than this are skipped (with a note) */
#define CAT_MAX_SOURCE (16u << 20)
/* Nodes nested deeper are not tried (a note says so) */
#define CAT_MAX_NESTING 1000

/*
 * Parse every pattern of the catalog in each of its languages: 0, or -1
 * with an error naming the entry's file and the pattern's field.
 */
int catalog_compile(struct catalog *c);

/*
 * Match the catalog against one source text; findings are added to 'out'
 * (file named 'path'). Returns 1 when the text has syntax errors (matched
 * anyway, where it parsed), 0 when clean, -1 on failure.
 */
int cat_match_source(struct catalog *c, enum cat_lang lang, const char *path,
		     const char *src, size_t len, struct cat_check *out);

/*
 * Check files: each read (not when huge, binary, of an unknown language or
 * unreadable: a note, counted), parsed and matched. Fails only when the
 * catalog does not compile.
 */
int cat_check_files(struct catalog *c, char *const *paths, size_t nr, struct cat_check *out);

/*
 * The same on 'jobs' threads (0: one per CPU), each file taken from a
 * queue and parsed with its thread's own parser; the findings and notes
 * are in the files' order whatever the number of threads.
 */
int cat_check_files_jobs(struct catalog *c, char *const *paths, size_t nr, unsigned jobs,
			 struct cat_check *out);

/*
 * Scan trees: every C or C++ file (by its name) under each directory (or
 * each file given), in name order; dot-directories are not entered, and a
 * directory reached again (a loop of symbolic links) is noted, not
 * entered. Fails only when the catalog does not compile.
 */
int cat_scan_paths(struct catalog *c, char *const *paths, size_t nr, struct cat_check *out);
/* On 'jobs' threads (0: one per CPU; cat_scan_paths() is 0), as cat_check_files_jobs() */
int cat_scan_paths_jobs(struct catalog *c, char *const *paths, size_t nr, unsigned jobs,
			struct cat_check *out);
/* The CPUs online (1 to 256) */
unsigned cat_default_jobs(void);

void cat_check_release(struct cat_check *r);
/* Findings at or above 'min' */
size_t cat_check_count(const struct cat_check *r, enum cat_severity min);

struct json_t *cat_check_to_json(const struct cat_check *r);
struct strbuf;
void cat_check_format_text(const struct cat_check *r, struct strbuf *out);

#endif
