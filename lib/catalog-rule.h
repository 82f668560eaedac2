/*
 * catalog-rule.h: one entry of the pattern catalog (catalog/<id>.json): what
 * it says to a reader (hint, message, code before and after) and its match
 * rule, a tree in a subset of ast-grep's rule language (docs/catalog.md).
 * An entry owns all its strings and its rule tree; cat_entry_release() frees
 * them. The reader checks every field and names the file and the field.
 */
#ifndef HOTLOOP_CATALOG_RULE_H
#define HOTLOOP_CATALOG_RULE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

enum cat_lang { CAT_LANG_C, CAT_LANG_CPP, CAT_LANG_NR };

enum cat_severity { CAT_SEV_HINT, CAT_SEV_INFO, CAT_SEV_WARNING, CAT_SEV_ERROR };

enum cat_rel { CAT_REL_HAS, CAT_REL_INSIDE, CAT_REL_FOLLOWS, CAT_REL_PRECEDES, CAT_REL_NR };

struct cat_rule;

/* has / inside / follows / precedes: a rule for the other node, how far to look */
struct cat_relation {
	struct cat_rule *rule;
	bool stop_end;		/* stopBy: end (else neighbor) */
	char *field;		/* has / inside: through this field of the parent */
};

/* A rule object: every part it has must hold of a node (an implicit all). */
struct cat_rule {
	char *kind;
	char *pattern;
	char *pattern_field;	/* its field path, for the matcher's errors */
	char *regex_src;
	regex_t regex;		/* compiled when regex_src */
	struct cat_relation rel[CAT_REL_NR];	/* .rule NULL when absent */
	struct cat_rule *all, *any;
	size_t nr_all, nr_any;
	struct cat_rule *not;
	void *compiled[CAT_LANG_NR];	/* the matcher's parsed pattern, per language, */
	void (*compiled_free)(void *);	/* and how to free it */
};

struct cat_entry {
	char *path;		/* the file it was read from */
	char *id, *hint, *message;
	bool lang[CAT_LANG_NR];
	enum cat_severity severity;
	double confidence;	/* 0 to 1 */
	char **symbols;
	size_t nr_symbols;
	char **kb, **repos;	/* confirmed: kb slugs, repositories */
	size_t nr_kb, nr_repos;
	char *anti_pattern, *good_pattern;
	struct cat_rule rule;
};

struct catalog {
	struct cat_entry *entries;
	size_t nr, alloc;
};
#define CATALOG_INIT { NULL, 0, 0 }

/* Read one entry from JSON text; 'path' names it in errors. 0 or -1. */
int cat_entry_parse(struct cat_entry *e, const char *path, const char *text, size_t len);
int cat_entry_read(struct cat_entry *e, const char *path);
void cat_entry_release(struct cat_entry *e);

/*
 * Add every *.json entry of 'dir' (sorted by name); an id already in the
 * catalog is replaced (a project's catalog overrides the shipped one).
 * 0, or -1 after an error naming the bad file and field.
 */
int catalog_load_dir(struct catalog *c, const char *dir);
void catalog_release(struct catalog *c);

const char *cat_severity_name(enum cat_severity s);
int cat_severity_parse(const char *s, enum cat_severity *out);
const char *cat_lang_name(enum cat_lang l);
/* The language of a file from its name (.c .h: C; .cc .cpp .cxx .hh .hpp .hxx: C++); -1 else. */
int cat_lang_of_path(const char *path);

#endif
