/*
 * catalog-draft.c: drafting a catalog entry from a kept attempt, and
 * confirming one (catalog-draft.h). The rule is tried before it is
 * written: a pattern made from a removed line must parse, find the code
 * before the change and not the code after it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog-draft.h"
#include "catalog-match.h"
#include "catalog-rule.h"
#include "json.h"
#include "kb.h"
#include "strbuf.h"
#include "util.h"

/* At most this many lines of code before and after go in the entry */
#define DRAFT_MAX_LINES 40

/* Does slug[0..len) end with -DDMMYYYY (after at least one character)? */
static bool ends_with_day(const char *slug, size_t len)
{
	if (len < 10 || slug[len - 9] != '-')
		return false;
	for (size_t i = len - 8; i < len; i++)
		if (!isdigit((unsigned char)slug[i]))
			return false;
	return true;
}

char *cat_draft_id(const char *slug)
{
	size_t len = strlen(slug), n = len;

	while (n && isdigit((unsigned char)slug[n - 1]))	/* -N of another attempt that day */
		n--;
	if (n < len && len - n < 8 && n && slug[n - 1] == '-' && ends_with_day(slug, n - 1))
		len = n - 1;
	if (ends_with_day(slug, len))
		len -= 9;
	return xstrndup(slug, len);
}

/* One hunk of a C or C++ file: the code before and after, the removed lines */
struct hunk {
	char *path;
	struct strbuf before, after, removed, header;
	size_t nr_before, nr_after;
};

static void hunk_release(struct hunk *h)
{
	free(h->path);
	strbuf_release(&h->before);
	strbuf_release(&h->after);
	strbuf_release(&h->removed);
	strbuf_release(&h->header);
}

/*
 * The hunk of the diff in 'function' (named in its header or its lines),
 * else the first of a C or C++ file: 0, or -1 when there is none.
 */
static int pick_hunk(const char *diff, const char *function, struct hunk *out)
{
	const char *p = diff;
	char *path = NULL;
	struct hunk cur = { NULL, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, 0, 0 };
	bool have = false, in_hunk = false, found = false;

	while (*p && !found) {
		const char *nl = strchrnul(p, '\n');
		size_t len = nl - p;
		bool last = !*nl;

		if (in_hunk && len && (*p == ' ' || *p == '-' || *p == '+')) {
			if (*p != '+') {
				strbuf_add(&cur.before, p + 1, len - 1);
				strbuf_addch(&cur.before, '\n');
				cur.nr_before++;
			}
			if (*p != '-') {
				strbuf_add(&cur.after, p + 1, len - 1);
				strbuf_addch(&cur.after, '\n');
				cur.nr_after++;
			}
			if (*p == '-') {
				strbuf_add(&cur.removed, p + 1, len - 1);
				strbuf_addch(&cur.removed, '\n');
			}
		} else if (in_hunk && len && *p == '\\') {
			;	/* no newline at the end */
		} else {
			if (in_hunk) {	/* a hunk ends */
				bool in_fn = function && *function &&
					(strstr(cur.header.buf, function) || strstr(cur.before.buf, function));

				if (in_fn || !have) {
					hunk_release(out);
					*out = cur;
					out->path = xstrdup(path);
					strbuf_init(&cur.before, 0);
					strbuf_init(&cur.after, 0);
					strbuf_init(&cur.removed, 0);
					strbuf_init(&cur.header, 0);
					have = true;
					found = in_fn;
				}
				strbuf_reset(&cur.before);
				strbuf_reset(&cur.after);
				strbuf_reset(&cur.removed);
				strbuf_reset(&cur.header);
				cur.nr_before = cur.nr_after = 0;
				in_hunk = false;
			}
			if (len > 4 && !strncmp(p, "+++ ", 4)) {
				const char *s = p + 4;
				size_t n = len - 4;

				if (n && s[n - 1] == '\t')
					n--;
				if (n && *s == '"') {
					s++;
					n -= n > 1 ? 2 : 1;
				}
				if (n > 2 && !strncmp(s, "b/", 2)) {
					s += 2;
					n -= 2;
				}
				free(path);
				path = xstrndup(s, n);
			} else if (len > 3 && !strncmp(p, "@@ ", 3) && path && cat_lang_of_path(path) >= 0) {
				const char *h = memmem(p + 3, len - 3, "@@", 2);

				if (h)
					strbuf_add(&cur.header, h + 2, len - (h + 2 - p));
				in_hunk = true;
			}
		}
		if (last && in_hunk) {	/* the diff ends inside a hunk: end it */
			p = "";
			continue;
		}
		p = last ? nl : nl + 1;
	}
	if (in_hunk && !found) {
		bool in_fn = function && *function &&
			(strstr(cur.header.buf, function) || strstr(cur.before.buf, function));

		if (in_fn || !have) {
			hunk_release(out);
			*out = cur;
			out->path = xstrdup(path);
			have = true;
			cur.path = NULL;
			strbuf_init(&cur.before, 0);
			strbuf_init(&cur.after, 0);
			strbuf_init(&cur.removed, 0);
			strbuf_init(&cur.header, 0);
		}
	}
	hunk_release(&cur);
	free(path);
	return have ? 0 : -1;
}

/* The text inside the first (...) of s, and for a for loop its condition (between the ';') */
static void add_condition(char ***v, size_t *nr, size_t *alloc, const char *s)
{
	const char *open = strchr(s, '('), *q;
	int depth = 0;
	bool is_for = !strncmp(s, "for", 3) && !isalnum((unsigned char)s[3]) && s[3] != '_';
	const char *part = NULL, *semi1 = NULL, *semi2 = NULL;

	if (!open || !(is_for || !strncmp(s, "while", 5) || !strncmp(s, "if", 2)))
		return;
	for (q = open; *q; q++) {
		if (*q == '(')
			depth++;
		else if (*q == ')' && !--depth)
			break;
		else if (*q == ';' && depth == 1)
			*(semi1 ? &semi2 : &semi1) = q;
	}
	if (!*q)
		return;
	if (is_for && semi1 && semi2)
		part = semi1 + 1;
	else if (!is_for)
		part = open + 1;
	if (!part)
		return;
	{
		const char *end = is_for ? semi2 : q;

		while (part < end && isspace((unsigned char)*part))
			part++;
		while (end > part && isspace((unsigned char)end[-1]))
			end--;
		if (end > part) {
			ALLOC_GROW(*v, *nr + 1, *alloc);
			(*v)[(*nr)++] = xstrndup(part, end - part);
		}
	}
}

/* Patterns to try, from the removed lines: each line, then a loop's or if's condition */
static size_t candidates(const char *removed, char ***out)
{
	char **v = NULL;
	size_t nr = 0, alloc = 0;
	const char *p = removed;

	while (*p) {
		const char *nl = strchrnul(p, '\n'), *a = p, *b = nl;

		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && (isspace((unsigned char)b[-1]) || b[-1] == '{'))
			b--;
		if (b > a && strncmp(a, "//", 2) && strncmp(a, "/*", 2) && *a != '#') {
			char *line = xstrndup(a, b - a);

			ALLOC_GROW(v, nr + 2, alloc);
			v[nr++] = line;
			add_condition(&v, &nr, &alloc, line);
		}
		p = *nl ? nl + 1 : nl;
	}
	*out = v;
	return nr;
}

static void quiet(const char *prefix, const char *msg)
{
}

/* Does the entry text parse, its pattern compile, find 'bad' and not 'good'? */
static bool rule_works(const char *text, enum cat_lang lang, const char *bad, const char *good)
{
	struct catalog cat = CATALOG_INIT;
	struct cat_check rb = CAT_CHECK_INIT, rg = CAT_CHECK_INIT;
	report_fn old = set_error_routine(quiet);
	bool ok = false;

	ALLOC_GROW(cat.entries, 1, cat.alloc);
	if (cat_entry_parse(&cat.entries[0], "draft", text, strlen(text)))
		goto out;
	cat.nr = 1;
	if (catalog_compile(&cat))
		goto out;
	ok = cat_match_source(&cat, lang, "before", bad, strlen(bad), &rb) >= 0 && rb.nr &&
	     cat_match_source(&cat, lang, "after", good, strlen(good), &rg) >= 0 && !rg.nr;
out:
	set_error_routine(old);
	clear_last_error();
	cat_check_release(&rb);
	cat_check_release(&rg);
	catalog_release(&cat);
	return ok;
}

/* The code as a list of lines, at most DRAFT_MAX_LINES */
static json_t *code_lines(const char *code)
{
	json_t *a = json_array();
	const char *p = code;

	while (*p && json_array_size(a) < DRAFT_MAX_LINES) {
		const char *nl = strchrnul(p, '\n');
		char *line = xstrndup(p, nl - p);

		json_array_append_new(a, json_text(line));
		free(line);
		p = *nl ? nl + 1 : nl;
	}
	return a;
}

int cat_draft_from_kb(const struct kb_entry *e, const char *diff, const char *repo,
		      struct strbuf *out, struct strbuf *rule_out)
{
	struct hunk h = { NULL, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, 0, 0 };
	struct strbuf hint = STRBUF_INIT, msg = STRBUF_INIT;
	char **cands = NULL, *id = cat_draft_id(e->slug);
	size_t nr = 0;
	json_t *doc = NULL;
	int ret = -1, lang;

	if (e->verdict != VERDICT_KEEP) {
		error("attempt '%s' was not kept (%s): an entry is drafted from a kept attempt only",
		      e->slug, e->verdict == VERDICT_NONE ? "no verdict" : verdict_kind_name(e->verdict));
		goto out;
	}
	if (!diff || pick_hunk(diff, e->function, &h)) {
		error("attempt '%s' has no change to a C or C++ file in its diff.md", e->slug);
		goto out;
	}
	lang = cat_lang_of_path(h.path);
	if (!h.removed.len) {
		error("attempt '%s': its hunk in %s removes no line to make a rule of: write the entry by hand",
		      e->slug, h.path);
		goto out;
	}
	kb_one_line(&hint, e->title && *e->title ? e->title : e->slug, 200);
	if (e->hypothesis && *e->hypothesis) {
		strbuf_addstr(&hint, ": ");
		kb_one_line(&hint, e->hypothesis, 300);
	}
	strbuf_addf(&msg, "draft from kb %s (refine the rule, then raise the severity): ", e->slug);
	kb_one_line(&msg, e->title && *e->title ? e->title : e->slug, 200);
	if (e->function && *e->function)
		strbuf_addf(&msg, ", as in %s", e->function);
	nr = candidates(h.removed.buf, &cands);
	for (size_t i = 0; i < nr && ret; i++) {
		char *text;

		json_decref(doc);
		doc = json_pack("{s:o, s:o, s:[s], s:s, s:f, s:o, s:[], s:{s:[o], s:[o]}, s:{s:o}, s:o, s:o}",
			"id", json_text(id), "hint", json_text(hint.buf), "languages", cat_lang_name(lang),
			"severity", "hint", "confidence", CAT_DRAFT_CONFIDENCE, "message", json_text(msg.buf),
			"symbols", "confirmed", "kb", json_text(e->slug), "repositories", json_text(repo),
			"rule", "pattern", json_text(cands[i]),
			"anti_pattern", code_lines(h.before.buf), "good_pattern", code_lines(h.after.buf));
		if (!doc)
			break;
		if (e->function && *e->function)
			json_array_append_new(json_object_get(doc, "symbols"), json_text(e->function));
		text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
		if (text && rule_works(text, lang, h.before.buf, h.after.buf)) {
			strbuf_addstr(out, text);
			strbuf_addch(out, '\n');
			strbuf_addstr(rule_out, cands[i]);
			ret = 0;
		}
		free(text);
	}
	if (ret)
		error("attempt '%s': no removed line of its hunk in %s makes a pattern that finds the code "
		      "before the change and not the code after: write the entry's rule by hand", e->slug, h.path);
out:
	json_decref(doc);
	for (size_t i = 0; i < nr; i++)
		free(cands[i]);
	free(cands);
	free(id);
	hunk_release(&h);
	strbuf_release(&hint);
	strbuf_release(&msg);
	return ret;
}

static bool list_has(json_t *list, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return true;
	return false;
}

int cat_draft_confirm(const char *path, const char *old, const char *slug, const char *repo,
		      struct strbuf *out, bool *added, double *confidence)
{
	struct cat_entry e;
	json_error_t jerr;
	json_t *doc, *conf, *kb, *repos, *c;
	char *text;
	double v;

	if (cat_entry_parse(&e, path, old, strlen(old)))
		return -1;
	v = e.confidence;
	cat_entry_release(&e);
	if (!(doc = json_loads(old, JSON_REJECT_DUPLICATES, &jerr)))
		return error("%s: %s", path, jerr.text);
	if (!(conf = json_object_get(doc, "confirmed"))) {
		conf = json_object();
		json_object_set_new(doc, "confirmed", conf);
	}
	if (!(kb = json_object_get(conf, "kb"))) {
		kb = json_array();
		json_object_set_new(conf, "kb", kb);
	}
	if (!(repos = json_object_get(conf, "repositories"))) {
		repos = json_array();
		json_object_set_new(conf, "repositories", repos);
	}
	*added = !list_has(kb, slug);
	if (*added) {
		json_array_append_new(kb, json_text(slug));
		if (repo && !list_has(repos, repo))
			json_array_append_new(repos, json_text(repo));
		v = v + (1 - v) * CAT_CONFIRM_STEP;
		if (v > CAT_CONFIRM_MAX)
			v = CAT_CONFIRM_MAX;
		v = round(v * 100) / 100;
		c = json_real(v);
		json_object_set_new(doc, "confidence", c);
	}
	*confidence = v;
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(doc);
	if (!text)
		return error("%s: cannot write the entry", path);
	strbuf_addstr(out, text);
	strbuf_addch(out, '\n');
	free(text);
	return 0;
}
