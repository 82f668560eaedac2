/*
 * kb.h: the knowledge base, every attempt of the improve loop kept or not,
 * as plain Markdown under kb/: one directory per attempt holding report.md
 * (a front block of fields, then What / Hypothesis / Results / Verdict)
 * and diff.md, and kb/index.md listing them newest first. docs/kb.md
 * documents the format. A struct kb owns its entries and every string in
 * them; kb_release() frees them. A struct kb_attempt is the caller's.
 */
#ifndef HOTLOOP_KB_H
#define HOTLOOP_KB_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "verdict.h"

struct strbuf;
struct json_t;
struct config;

#define KB_SLUG_MAX	48		/* the "what was tried" part of a slug */
#define KB_REPORT_MAX	(1 << 20)	/* a bigger report.md is not one */
#define KB_DIFF_MAX	(16 << 20)

/* What the loop knows about one attempt; nothing here is kept by kb_add(). */
struct kb_attempt {
	const char *title;		/* short: "hash table for find_word" */
	const char *function, *hypothesis, *lens;
	const char *agent;		/* the command that proposed it, or NULL */
	double expected_gain_pct;	/* NAN when not said */
	int round;			/* 0: unknown */
	enum verdict_kind verdict;	/* anything but VERDICT_NONE */
	const char *const *reasons;
	size_t nr_reasons;
	const char *results;		/* Markdown: the numbers, vs expectation */
	const char *change;		/* one line, e.g. "-12.3% cpu on big [-13.1, -11.4]", or NULL */
	const char *diff;		/* unified diff text, or NULL */
	const char *commit;		/* NULL unless kept */
	time_t when;
};

/* One attempt read back. A string is NULL when its field or section is missing. */
struct kb_entry {
	char *slug;			/* the directory's name */
	char *dir;			/* the directory: <kb dir>/<slug> */
	char *title, *function, *lens, *agent, *change, *commit;
	enum verdict_kind verdict;	/* VERDICT_NONE when missing or not one hotloop knows */
	char *what, *hypothesis, *results;	/* section text, trimmed */
	char **reasons;			/* the Verdict section's list items */
	size_t nr_reasons, alloc_reasons;
	double expected_gain_pct;	/* NAN when missing */
	int round;			/* 0 when missing */
	time_t when;			/* 0 when missing (then from the slug's date) */
	int utc_offset;			/* seconds east of UTC the date was written in */
};

struct kb {
	char *dir;			/* as given to kb_load() */
	struct kb_entry *entries;	/* newest first */
	size_t nr, alloc;
};
#define KB_INIT { NULL, NULL, 0, 0 }

/*
 * Write one attempt into kb_dir (created when missing) as a new entry
 * directory, then regenerate kb_dir/index.md. The entry appears whole or
 * not at all: it is written under kb_dir/.tmp-<pid>-<n>/ and renamed into
 * place. Leftover .tmp-* directories of dead writers are removed first.
 * The slug (the directory's name) goes to *slug_out when it is not NULL
 * (caller frees). 0 once the entry is in place (an index that could not
 * be written is a warning), or -1 with an error and no entry.
 */
int kb_add(const char *kb_dir, const struct kb_attempt *a, char **slug_out);

/*
 * Read every entry of kb_dir, newest first. A missing kb_dir is an empty
 * knowledge base. A report.md that cannot be read or is not a report is
 * skipped with a warning naming it. 0, or -1 with an error when kb_dir
 * exists but cannot be listed. 'kb' is initialized here; release it
 * either way.
 */
int kb_load(const char *kb_dir, struct kb *kb);
void kb_release(struct kb *kb);

/*
 * The entries about 'function' (exact; NULL: any) whose title, function,
 * hypothesis or reasons contain every one of 'words' (case-insensitive;
 * none: all match), newest first: at most 'max' of them go to out[] (out
 * may be NULL when max is 0). Returns how many match in all.
 */
size_t kb_find(const struct kb *kb, const char *function, const char *const *words, size_t nr_words,
	       const struct kb_entry **out, size_t max);

/* The entry named 'slug' exactly, else the only one whose slug starts with "<slug>-"; NULL. */
const struct kb_entry *kb_lookup(const struct kb *kb, const char *slug);
/* The (at most 'max') slugs nearest to 'slug' by edit distance, for a hint; how many. */
size_t kb_suggest(const struct kb *kb, const char *slug, const struct kb_entry **out, size_t max);

/*
 * The index text: a title line, then three lines per entry, newest first
 * (slug, date, verdict, function and change; the hypothesis; the first
 * reason), at most 'max_entries' entries (0: all) and a line saying how
 * many more there are. kb/index.md holds it for every entry.
 */
void kb_index_text(const struct kb *kb, size_t max_entries, struct strbuf *out);

/* The diff the entry's diff.md holds (nothing appended when it has none). 0, or -1 with an error. */
int kb_read_diff(const struct kb_entry *e, struct strbuf *out);

/* Append s on one line (white space runs as one space), cut at 'max' characters with "...". */
void kb_one_line(struct strbuf *out, const char *s, size_t max);

/* Append the entry's day, YYYY-MM-DD in the offset it was written in; "-" when undated. */
void kb_entry_day(const struct kb_entry *e, struct strbuf *sb);

/* The entry as JSON (docs/kb.md), with "diff" when 'diff' is not NULL. */
struct json_t *kb_entry_to_json(const struct kb_entry *e, const char *diff);

/*
 * The "what was tried" part of a slug for a title: lowercase a-z, 0-9 and
 * '-', Latin letters with accents folded, at most KB_SLUG_MAX characters,
 * cut at a word; "attempt" when nothing is left. Caller frees.
 */
char *kb_slug(const char *title);

/*
 * report.md as text and back. kb_format_report() writes e's fields and
 * sections (slug, dir and the date's offset are not part of it; a NULL
 * field is left out). kb_parse_report() reads 'len' bytes of hostile text
 * into e (fields it does not find stay missing; e is initialized here,
 * release it either way): 0, or -1 with a warning naming 'name' when it is
 * not a report at all (NUL bytes, too big, no title, field or section).
 */
void kb_format_report(const struct kb_entry *e, struct strbuf *out);
int kb_parse_report(const char *buf, size_t len, const char *name, struct kb_entry *e);
void kb_entry_init(struct kb_entry *e);
void kb_entry_release(struct kb_entry *e);

/*
 * The knowledge base directory of a config read from 'conf_path': its
 * [project] kb, relative to the config's directory. Caller frees.
 */
char *kb_dir_of_config(const struct config *cf, const char *conf_path);

#endif
