/*
 * catalog-brief.h: the catalog's findings in the code a brief quotes: for
 * each hotspot whose snippet the brief shows, the entries matching in those
 * lines, with their id, line, message and the good pattern in short, as a
 * Markdown section for the loop's prompt (bounded in size).
 */
#ifndef HOTLOOP_CATALOG_BRIEF_H
#define HOTLOOP_CATALOG_BRIEF_H

#include <stddef.h>

struct brief;
struct catalog;
struct strbuf;

/* At most this many findings per hotspot, and characters in all */
#define CAT_BRIEF_PER_HOTSPOT 3
#define CAT_BRIEF_MAX_CHARS 1600

/*
 * Append the section to 'out' (nothing when no finding is in the code
 * shown). Sources that cannot be read are passed over. Returns how many
 * findings it lists; -1 with an error when the catalog does not compile.
 */
int catalog_brief_matches(struct catalog *c, const struct brief *b, struct strbuf *out);

#endif
