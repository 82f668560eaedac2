/*
 * catalog-brief.c: catalog findings inside a brief's hotspot snippets
 * (catalog-brief.h), so the agent the loop runs sees a known anti-pattern
 * in the code it is asked to speed up, and the usual fix, at a glance.
 */
#include <string.h>

#include "brief.h"
#include "catalog-brief.h"
#include "catalog-match.h"
#include "catalog-rule.h"
#include "kb.h"
#include "strbuf.h"
#include "util.h"

static const struct cat_entry *entry_of(const struct catalog *c, const char *id)
{
	for (size_t i = 0; i < c->nr; i++)
		if (!strcmp(c->entries[i].id, id))
			return &c->entries[i];
	return NULL;
}

/* The first line of code that is not blank nor a comment, on one line, cut */
static void first_code_line(const char *code, struct strbuf *out)
{
	const char *p = code;

	while (p && *p) {
		const char *nl = strchr(p, '\n'), *a = p;
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		while (a < p + len && (*a == ' ' || *a == '\t'))
			a++;
		if (a < p + len && strncmp(a, "//", 2) && strncmp(a, "/*", 2)) {
			struct strbuf line = STRBUF_INIT;

			strbuf_add(&line, a, len - (a - p));
			kb_one_line(out, line.buf, 80);
			strbuf_release(&line);
			return;
		}
		p = nl ? nl + 1 : NULL;
	}
}

int catalog_brief_matches(struct catalog *c, const struct brief *b, struct strbuf *out)
{
	struct strbuf sec = STRBUF_INIT;
	size_t shown = b->show_snippets < b->nr_hotspots ? b->show_snippets : b->nr_hotspots;
	int listed = 0;

	if (catalog_compile(c))
		return -1;
	for (size_t i = 0; i < shown; i++) {
		const struct brief_hotspot *h = &b->hotspots[i];
		struct cat_check res = CAT_CHECK_INIT;
		struct strbuf src = STRBUF_INIT;
		int lang = h->file ? cat_lang_of_path(h->file) : -1, n = 0;
		int64_t lo, hi;

		if (!h->nr_lines || lang < 0)
			continue;
		lo = h->lines[0].line;
		hi = h->lines[h->nr_lines - 1].line;
		if (read_file(&src, h->file, CAT_MAX_SOURCE) || memchr(src.buf, '\0', src.len)) {
			clear_last_error();
			strbuf_release(&src);
			continue;
		}
		if (cat_match_source(c, lang, h->file, src.buf, src.len, &res) >= 0) {
			for (size_t k = 0; k < res.nr && n < CAT_BRIEF_PER_HOTSPOT; k++) {
				const struct cat_finding *f = &res.findings[k];
				const struct cat_entry *e = entry_of(c, f->rule_id);
				struct strbuf line = STRBUF_INIT;

				if ((int64_t)f->end_line < lo || (int64_t)f->line > hi)
					continue;
				strbuf_addf(&line, "- `%s`, line %u: `%s`: ", h->function, f->line, f->rule_id);
				kb_one_line(&line, f->message, 160);
				if (e && e->good_pattern) {
					strbuf_addstr(&line, "; instead: `");
					first_code_line(e->good_pattern, &line);
					strbuf_addch(&line, '`');
				}
				strbuf_addch(&line, '\n');
				if (sec.len + line.len > CAT_BRIEF_MAX_CHARS) {
					strbuf_release(&line);
					break;
				}
				strbuf_addstr(&sec, line.buf);
				strbuf_release(&line);
				n++;
			}
		}
		listed += n;
		cat_check_release(&res);
		strbuf_release(&src);
	}
	if (listed) {
		strbuf_addstr(out, "\n## Catalog matches in the code shown\n\n"
			      "Known CPU anti-patterns (hotloop's catalog) in the hotspots' code above:\n\n");
		strbuf_addstr(out, sec.buf);
	}
	strbuf_release(&sec);
	return listed;
}
