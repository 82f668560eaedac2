/*
 * report.h: the ranked table behind `hotloop report`: self and total cost
 * per function, source line, file or DSO. A struct report owns its rows; the
 * strings in them belong to the profile it was built from, which must
 * outlive it.
 */
#ifndef HOTLOOP_REPORT_H
#define HOTLOOP_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "hindex.h"

struct profile;

enum report_by { REPORT_BY_FUNCTION, REPORT_BY_LINE, REPORT_BY_FILE, REPORT_BY_DSO };
enum report_sort { REPORT_SORT_SELF, REPORT_SORT_TOTAL };

struct report_row {
	const char *name;	/* function; for --by file/dso the file or DSO */
	const char *file;	/* source file, "" when unknown */
	int64_t line;		/* hottest line (function), the line (line), else 0 */
	const char *dso;	/* basename of the mapped file */
	int64_t self, total;	/* in the report's sample type; total counts a
				   row once per stack, however deep the recursion */
	bool inlined;		/* the function appears as an inlined frame */
	bool kernel;
	/* private */
	int64_t key[4];
	size_t stamp;
	int64_t best_line_self;
};

struct report {
	struct report_row *rows;
	size_t nr, alloc;
	int64_t total;		/* sum of the sample type over all samples */
	size_t samples;		/* number of samples (distinct stacks, in our profiles) */
	int sample_index;	/* which of the profile's sample types */
	enum report_by by;
	bool no_inline;		/* inlined frames folded into the function holding them */
	struct hindex index;	/* private: key -> row, until report_sort() */
};

#define REPORT_INIT { 0 }

int report_build(struct report *r, const struct profile *p, int sample_index,
		 enum report_by by);

/* Flags of report_build_flags(). */
enum report_flag {
	/*
	 * Fold inlined frames into the function they were inlined into: a
	 * stack holds only the functions of the symbol table, as perf report
	 * --no-inline (with --by line, the lines are the call sites).
	 */
	REPORT_NO_INLINE = 1u << 0,
};
int report_build_flags(struct report *r, const struct profile *p, int sample_index,
		       enum report_by by, unsigned flags);
void report_sort(struct report *r, enum report_sort sort);
void report_release(struct report *r);

/* "function", "line", "file", "dso" -> enum; -1 when unknown. */
int report_parse_by(const char *s);

/*
 * The table of `hotloop report` (the first 'top' rows, 0: all), and its
 * JSON document (docs/report.md). The report must be sorted by 'sort'.
 */
struct strbuf;
struct json_t;
void report_format_text(const struct profile *p, const struct report *r, size_t top,
			enum report_sort sort, struct strbuf *out);
struct json_t *report_to_json(const struct profile *p, const struct report *r, size_t top,
			      enum report_sort sort);

#endif
