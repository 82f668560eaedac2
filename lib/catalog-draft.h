/*
 * catalog-draft.h: a catalog entry drafted from a kept attempt of the
 * knowledge base (`catalog add --from-kb`): the code before and after from
 * the hunk of its diff in the hot function, the hint from its report, a
 * rule from the removed lines checked to find the old code and not the new,
 * and a low confidence; or a confirmation added to an entry with the same id.
 */
#ifndef HOTLOOP_CATALOG_DRAFT_H
#define HOTLOOP_CATALOG_DRAFT_H

#include <stdbool.h>

struct kb_entry;
struct strbuf;

/* A new draft's confidence, and a confirmation's step: c + (1 - c) * STEP, at most MAX */
#define CAT_DRAFT_CONFIDENCE 0.3
#define CAT_CONFIRM_STEP 0.25
#define CAT_CONFIRM_MAX 0.95

/* The id an attempt's entry gets: its slug without the day (and the -N of a second one) */
char *cat_draft_id(const char *slug);

/*
 * Draft the entry for kept attempt e with diff text 'diff', confirmed in
 * repository 'repo' (a name): its JSON text (an entry the rule reader
 * accepts) in 'out', what the rule is in 'rule_out' (the pattern). 0, or
 * -1 with an error (not kept, no C or C++ hunk, no removed line that makes
 * a pattern finding the old code but not the new).
 */
int cat_draft_from_kb(const struct kb_entry *e, const char *diff, const char *repo,
		      struct strbuf *out, struct strbuf *rule_out);

/*
 * Add the confirmation (slug, repo) to the entry text 'old' (read from
 * 'path'): confidence raised by the rule above; nothing changes when the
 * slug is there already (*added false). The new text in 'out'. 0, or -1
 * with an error (the entry does not read).
 */
int cat_draft_confirm(const char *path, const char *old, const char *slug, const char *repo,
		      struct strbuf *out, bool *added, double *confidence);

#endif
