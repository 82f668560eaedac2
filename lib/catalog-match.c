/*
 * catalog-match.c: hotloop's matcher for catalog rules on tree-sitter's
 * C API (libtree-sitter 0.20, grammars tree-sitter-c and -cpp 0.23, ABI
 * 14). Patterns are parsed as code; metavariables, regexes and the
 * relational and composite operators are evaluated here, node by node.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <tree_sitter/api.h>

#include "catalog-match.h"
#include "json.h"
#include "strbuf.h"
#include "util.h"

const TSLanguage *tree_sitter_c(void);
const TSLanguage *tree_sitter_cpp(void);

/* $NAME and $$$ in a pattern become identifiers the grammars accept */
#define MV "zzhlmv_"
#define MV_MULTI "zzhlmvs_"

static const TSLanguage *language(enum cat_lang l)
{
	return l == CAT_LANG_C ? tree_sitter_c() : tree_sitter_cpp();
}

static TSParser *new_parser(enum cat_lang l)
{
	TSParser *p = ts_parser_new();

	if (ts_language_version(language(l)) != TREE_SITTER_LANGUAGE_VERSION ||
	    !ts_parser_set_language(p, language(l))) {
		ts_parser_delete(p);
		error("the tree-sitter %s grammar is ABI %u, libtree-sitter loads %d: rebuild after make deps",
		      cat_lang_name(l), ts_language_version(language(l)), TREE_SITTER_LANGUAGE_VERSION);
		return NULL;
	}
	return p;
}

struct cat_pattern {
	TSTree *tree;
	char *src;
	TSNode root;
};

static void pattern_free(void *v)
{
	struct cat_pattern *p = v;

	ts_tree_delete(p->tree);
	free(p->src);
	free(p);
}

static int compile_pattern(struct cat_entry *e, struct cat_rule *r, enum cat_lang l, TSParser *parser)
{
	struct strbuf sb = STRBUF_INIT;
	struct cat_pattern *p;
	const char *s = r->pattern;
	bool expr = false;
	TSNode n;

	while (*s) {
		if (s[0] == '$' && s[1] == '$' && s[2] == '$') {
			strbuf_addstr(&sb, MV_MULTI);
			s += 3;
		} else if (s[0] == '$' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'))) {
			strbuf_addstr(&sb, MV);
			s++;
		} else {
			strbuf_addch(&sb, *s++);
		}
	}
	p = xcalloc(1, sizeof(*p));
	r->compiled[l] = p;
	r->compiled_free = pattern_free;
	/*
	 * Tried in turn: as written at the top level (a declaration), then
	 * with a ';' (an expression), then both inside a function's body (a
	 * statement, or an expression C allows only there).
	 */
	for (int way = 0; way < 4; way++) {
		struct strbuf t = STRBUF_INIT;

		if (way >= 2)
			strbuf_addstr(&t, "void " MV "F(void) {\n");
		strbuf_add(&t, sb.buf, sb.len);
		if (way & 1)
			strbuf_addch(&t, ';');
		if (way >= 2)
			strbuf_addstr(&t, "\n}");
		if (p->tree)
			ts_tree_delete(p->tree);
		free(p->src);
		p->tree = ts_parser_parse_string(parser, NULL, t.buf, t.len);
		p->src = strbuf_detach(&t, NULL);
		n = ts_tree_root_node(p->tree);
		if (!ts_node_has_error(n)) {
			expr = way & 1;
			if (way >= 2 && ts_node_named_child_count(n) == 1)
				n = ts_node_child_by_field_name(ts_node_named_child(n, 0), "body", 4);
			break;
		}
	}
	strbuf_release(&sb);
	if (ts_node_is_null(n) || ts_node_has_error(n))
		return error("%s: field '%s': the pattern does not parse as %s code", e->path,
			     r->pattern_field, l == CAT_LANG_C ? "C" : "C++");
	if (ts_node_named_child_count(n) != 1)
		return error("%s: field '%s': a pattern must be one expression, statement or declaration",
			     e->path, r->pattern_field);
	n = ts_node_named_child(n, 0);
	if (expr && !strcmp(ts_node_type(n), "expression_statement") && ts_node_named_child_count(n) == 1)
		n = ts_node_named_child(n, 0);
	p->root = n;
	return 0;
}

static int compile_rule(struct cat_entry *e, struct cat_rule *r, enum cat_lang l, TSParser *parser)
{
	if (r->pattern && !r->compiled[l] && compile_pattern(e, r, l, parser))
		return -1;
	for (int i = 0; i < CAT_REL_NR; i++)
		if (r->rel[i].rule && compile_rule(e, r->rel[i].rule, l, parser))
			return -1;
	for (size_t i = 0; i < r->nr_all; i++)
		if (compile_rule(e, &r->all[i], l, parser))
			return -1;
	for (size_t i = 0; i < r->nr_any; i++)
		if (compile_rule(e, &r->any[i], l, parser))
			return -1;
	if (r->not && compile_rule(e, r->not, l, parser))
		return -1;
	return 0;
}

int catalog_compile(struct catalog *c)
{
	for (int l = 0; l < CAT_LANG_NR; l++) {
		TSParser *parser = new_parser(l);

		if (!parser)
			return -1;
		for (size_t i = 0; i < c->nr; i++) {
			if (c->entries[i].lang[l] && compile_rule(&c->entries[i], &c->entries[i].rule, l, parser)) {
				ts_parser_delete(parser);
				return -1;
			}
		}
		ts_parser_delete(parser);
	}
	return 0;
}

/* ---- matching ---- */

struct binding {
	const char *name;	/* into the pattern's source, after the prefix */
	size_t name_len;
	uint32_t start, end;	/* bytes of the target */
};

struct ctx {
	const char *src;	/* the target's */
	enum cat_lang lang;
	TSNode top;		/* the node the walk is at, and its ancestors (root first) */
	TSNode *anc;
	size_t nr_anc;
	struct binding *env;
	size_t nr, alloc;
	struct strbuf text;
};

static void note(struct cat_check *r, const char *fmt, ...) ATTR_PRINTF(2, 3);

static bool node_text_is(const char *src, TSNode n, const char *s, size_t len)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);

	return b - a == len && !memcmp(src + a, s, len);
}

/*
 * Is pattern node 'n' a metavariable ($X, $_, $$$, $$$X)? Its text, but
 * for a statement's ';', is the placeholder alone.
 */
static bool metavar(const struct cat_pattern *p, TSNode n, bool *multi, const char **name, size_t *name_len)
{
	const char *s = p->src + ts_node_start_byte(n);
	size_t len = ts_node_end_byte(n) - ts_node_start_byte(n), pre;

	if (len && s[len - 1] == ';')
		len--;
	if (len > strlen(MV_MULTI) && !strncmp(s, MV_MULTI, strlen(MV_MULTI)) ) {
		*multi = true;
		pre = strlen(MV_MULTI);
	} else if (len == strlen(MV_MULTI) && !strncmp(s, MV_MULTI, len)) {
		*multi = true;
		pre = len;
	} else if (len > strlen(MV) && !strncmp(s, MV, strlen(MV))) {
		*multi = false;
		pre = strlen(MV);
	} else {
		return false;
	}
	for (size_t i = pre; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	*name = s + pre;
	*name_len = len - pre;
	return true;
}

/* Bind or compare; "_" and "" never bind */
static bool bind(struct ctx *x, const char *name, size_t name_len, uint32_t start, uint32_t end)
{
	if (!name_len || (name_len == 1 && name[0] == '_'))
		return true;
	for (size_t i = 0; i < x->nr; i++) {
		struct binding *b = &x->env[i];

		if (b->name_len == name_len && !memcmp(b->name, name, name_len))
			return b->end - b->start == end - start &&
			       !memcmp(x->src + b->start, x->src + start, end - start);
	}
	ALLOC_GROW(x->env, x->nr + 1, x->alloc);
	x->env[x->nr++] = (struct binding){ name, name_len, start, end };
	return true;
}

static bool match_node(struct ctx *x, const struct cat_pattern *p, TSNode pn, TSNode tn);

/* The children a pattern compares: not comments, not a parser's MISSING tokens */
static size_t kids(TSNode n, TSNode **out, bool pattern)
{
	uint32_t nr = ts_node_child_count(n), k = 0;

	*out = xcalloc(nr + 1, sizeof(TSNode));
	for (uint32_t i = 0; i < nr; i++) {
		TSNode c = ts_node_child(n, i);

		if (ts_node_is_extra(c) || (pattern && ts_node_is_missing(c)))
			continue;
		(*out)[k++] = c;
	}
	return k;
}

static bool match_seq(struct ctx *x, const struct cat_pattern *p, TSNode *pk, size_t np,
		      TSNode *tk, size_t nt)
{
	bool multi;
	const char *name;
	size_t name_len, saved = x->nr;

	if (!np) {
		for (size_t j = 0; j < nt; j++)
			if (ts_node_is_named(tk[j]))
				return false;
		return true;
	}
	if (metavar(p, pk[0], &multi, &name, &name_len) && multi) {
		for (size_t k = 0; k <= nt; k++) {
			uint32_t a = k ? ts_node_start_byte(tk[0]) : 0, b = k ? ts_node_end_byte(tk[k - 1]) : 0;

			if (bind(x, name, name_len, a, b) && match_seq(x, p, pk + 1, np - 1, tk + k, nt - k))
				return true;
			x->nr = saved;
		}
		return false;
	}
	if (!nt)
		return false;
	if (match_node(x, p, pk[0], tk[0]) && match_seq(x, p, pk + 1, np - 1, tk + 1, nt - 1))
		return true;
	x->nr = saved;
	/* punctuation the pattern leaves out (a statement's ';') */
	if (!ts_node_is_named(tk[0]) && ts_node_is_named(pk[0]))
		return match_seq(x, p, pk, np, tk + 1, nt - 1);
	return false;
}

static bool match_node(struct ctx *x, const struct cat_pattern *p, TSNode pn, TSNode tn)
{
	bool multi, ok;
	const char *name;
	size_t name_len;
	TSNode *pk, *tk;
	size_t np, nt;

	if (metavar(p, pn, &multi, &name, &name_len))
		return ts_node_is_named(tn) &&
		       bind(x, name, name_len, ts_node_start_byte(tn), ts_node_end_byte(tn));
	if (strcmp(ts_node_type(pn), ts_node_type(tn)))
		return false;
	if (!ts_node_child_count(pn))
		return node_text_is(x->src, tn, p->src + ts_node_start_byte(pn),
				    ts_node_end_byte(pn) - ts_node_start_byte(pn));
	np = kids(pn, &pk, true);
	nt = kids(tn, &tk, false);
	ok = match_seq(x, p, pk, np, tk, nt);
	free(pk);
	free(tk);
	return ok;
}

static bool eval(struct ctx *x, const struct cat_rule *r, TSNode n);

/* Any named node below n: a cursor's walk, not recursion (a file may nest deeply) */
static bool descendants(struct ctx *x, const struct cat_rule *r, TSNode n)
{
	TSTreeCursor cur = ts_tree_cursor_new(n);
	bool hit = false;
	unsigned depth = 0;

	if (!ts_tree_cursor_goto_first_child(&cur))
		goto out;
	depth = 1;
	for (;;) {
		TSNode c = ts_tree_cursor_current_node(&cur);

		if (ts_node_is_named(c) && eval(x, r, c)) {
			hit = true;
			break;
		}
		if (ts_tree_cursor_goto_first_child(&cur)) {
			depth++;
			continue;
		}
		while (!ts_tree_cursor_goto_next_sibling(&cur)) {
			if (--depth == 0 || !ts_tree_cursor_goto_parent(&cur))
				goto out;
		}
	}
out:
	ts_tree_cursor_delete(&cur);
	return hit;
}

static bool relation(struct ctx *x, enum cat_rel kind, const struct cat_relation *rel, TSNode n)
{
	TSNode c, p;

	switch (kind) {
	case CAT_REL_HAS:
		if (rel->field) {
			c = ts_node_child_by_field_name(n, rel->field, strlen(rel->field));
			return !ts_node_is_null(c) && (eval(x, rel->rule, c) || (rel->stop_end && descendants(x, rel->rule, c)));
		}
		if (rel->stop_end)
			return descendants(x, rel->rule, n);
		for (uint32_t i = 0; i < ts_node_named_child_count(n); i++)
			if (eval(x, rel->rule, ts_node_named_child(n, i)))
				return true;
		return false;
	case CAT_REL_INSIDE:
		if (ts_node_eq(n, x->top)) {	/* the walk's ancestors: no ts_node_parent() search */
			for (size_t i = x->nr_anc; i-- > 0; ) {
				p = x->anc[i];
				c = i + 1 < x->nr_anc ? x->anc[i + 1] : n;
				if ((!rel->field ||
				     ts_node_eq(ts_node_child_by_field_name(p, rel->field, strlen(rel->field)), c)) &&
				    eval(x, rel->rule, p))
					return true;
				if (!rel->stop_end)
					break;
			}
			return false;
		}
		for (c = n, p = ts_node_parent(n); !ts_node_is_null(p); c = p, p = ts_node_parent(p)) {
			if ((!rel->field ||
			     ts_node_eq(ts_node_child_by_field_name(p, rel->field, strlen(rel->field)), c)) &&
			    eval(x, rel->rule, p))
				return true;
			if (!rel->stop_end)
				break;
		}
		return false;
	case CAT_REL_FOLLOWS:
		for (c = ts_node_prev_named_sibling(n); !ts_node_is_null(c); c = ts_node_prev_named_sibling(c)) {
			if (eval(x, rel->rule, c))
				return true;
			if (!rel->stop_end)
				break;
		}
		return false;
	case CAT_REL_PRECEDES:
		for (c = ts_node_next_named_sibling(n); !ts_node_is_null(c); c = ts_node_next_named_sibling(c)) {
			if (eval(x, rel->rule, c))
				return true;
			if (!rel->stop_end)
				break;
		}
		return false;
	default:
		return false;
	}
}

static bool eval(struct ctx *x, const struct cat_rule *r, TSNode n)
{
	size_t saved = x->nr;

	if (r->kind && strcmp(ts_node_type(n), r->kind))
		return false;
	if (r->pattern) {
		const struct cat_pattern *p = r->compiled[x->lang];

		if (!p || !match_node(x, p, p->root, n))
			goto fail;
	}
	if (r->regex_src) {
		uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);

		strbuf_setlen(&x->text, 0);
		strbuf_add(&x->text, x->src + a, b - a);
		if (regexec(&r->regex, x->text.buf, 0, NULL, 0))
			goto fail;
	}
	for (size_t i = 0; i < r->nr_all; i++)
		if (!eval(x, &r->all[i], n))
			goto fail;
	if (r->nr_any) {
		size_t i;

		for (i = 0; i < r->nr_any; i++)
			if (eval(x, &r->any[i], n))
				break;
		if (i == r->nr_any)
			goto fail;
	}
	if (r->not) {
		size_t before = x->nr;
		bool hit = eval(x, r->not, n);

		x->nr = before;		/* what a not matched binds nothing */
		if (hit)
			goto fail;
	}
	for (int i = 0; i < CAT_REL_NR; i++)
		if (r->rel[i].rule && !relation(x, i, &r->rel[i], n))
			goto fail;
	return true;
fail:
	x->nr = saved;
	return false;
}

static char *capture_text(struct ctx *x, const struct binding *b)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_printable(&sb, x->src + b->start, b->end - b->start, 80, false);
	return strbuf_detach(&sb, NULL);
}

/* The name of the innermost function definition among the walk's ancestors, or NULL */
static char *enclosing_function(struct ctx *x, TSNode n)
{
	for (size_t i = x->nr_anc + 1; i-- > 0; ) {
		TSNode d = i == x->nr_anc ? n : x->anc[i];

		if (strcmp(ts_node_type(d), "function_definition"))
			continue;
		d = ts_node_child_by_field_name(d, "declarator", 10);
		/* through pointer, reference and parenthesized declarators to the name */
		for (int k = 0; k < 16 && !ts_node_is_null(d); k++) {
			const char *t = ts_node_type(d);
			TSNode inner = ts_node_child_by_field_name(d, "declarator", 10);

			if (ts_node_is_null(inner) && ts_node_named_child_count(d) &&
			    strcmp(t, "identifier") && strcmp(t, "field_identifier") &&
			    strcmp(t, "qualified_identifier") && strcmp(t, "destructor_name") &&
			    strcmp(t, "operator_name"))
				inner = ts_node_named_child(d, 0);
			if (ts_node_is_null(inner) || !strcmp(t, "qualified_identifier") ||
			    !strcmp(t, "identifier") || !strcmp(t, "field_identifier"))
				return xstrndup(x->src + ts_node_start_byte(d),
						ts_node_end_byte(d) - ts_node_start_byte(d));
			d = inner;
		}
		return NULL;
	}
	return NULL;
}

static void add_finding(struct ctx *x, const struct cat_entry *e, const char *path, TSNode n,
			struct cat_check *out)
{
	struct cat_finding *f;
	struct strbuf msg = STRBUF_INIT;
	TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);

	ALLOC_GROW(out->findings, out->nr + 1, out->alloc);
	f = &out->findings[out->nr++];
	memset(f, 0, sizeof(*f));
	f->file = xstrdup(path);
	f->rule_id = xstrdup(e->id);
	f->severity = e->severity;
	f->confidence = e->confidence;
	f->line = a.row + 1;
	f->column = a.column + 1;
	f->end_line = b.row + 1;
	f->end_column = b.column + 1;
	f->caps = xcalloc(x->nr + 1, sizeof(*f->caps));
	for (size_t i = 0; i < x->nr; i++) {
		f->caps[i].name = xstrndup(x->env[i].name, x->env[i].name_len);
		f->caps[i].text = capture_text(x, &x->env[i]);
	}
	f->nr_caps = x->nr;
	f->function = enclosing_function(x, n);
	/* the message with $NAME replaced by what it captured */
	for (const char *s = e->message; *s; ) {
		size_t len = 0, i;

		if (*s == '$')
			while (s[1 + len] == '_' || (s[1 + len] >= 'A' && s[1 + len] <= 'Z') ||
			       (len && s[1 + len] >= '0' && s[1 + len] <= '9'))
				len++;
		for (i = 0; len && i < f->nr_caps; i++)
			if (strlen(f->caps[i].name) == len && !memcmp(f->caps[i].name, s + 1, len))
				break;
		if (len && i < f->nr_caps) {
			strbuf_addstr(&msg, f->caps[i].text);
			s += 1 + len;
		} else {
			strbuf_addch(&msg, *s++);
		}
	}
	f->message = strbuf_detach(&msg, NULL);
}

int cat_match_source(struct catalog *c, enum cat_lang lang, const char *path,
		     const char *src, size_t len, struct cat_check *out)
{
	struct ctx x = { .src = src, .lang = lang, .text = STRBUF_INIT };
	TSParser *parser = new_parser(lang);
	TSTreeCursor cur;
	TSTree *tree;
	size_t alloc_anc = 0;
	bool too_deep = false;
	int ret;

	if (!parser)
		return -1;
	if (len > UINT32_MAX / 2) {
		ts_parser_delete(parser);
		return error("%s: too large to parse", path);
	}
	tree = ts_parser_parse_string(parser, NULL, src, (uint32_t)len);
	if (!tree) {
		ts_parser_delete(parser);
		return error("%s: tree-sitter could not parse it", path);
	}
	ret = ts_node_has_error(ts_tree_root_node(tree)) ? 1 : 0;
	cur = ts_tree_cursor_new(ts_tree_root_node(tree));
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&cur);

		if (ts_node_is_named(n) && !ts_node_is_missing(n)) {
			x.top = n;
			for (size_t i = 0; i < c->nr; i++) {
				const struct cat_entry *e = &c->entries[i];

				if (!e->lang[lang])
					continue;
				x.nr = 0;
				if (eval(&x, &e->rule, n))
					add_finding(&x, e, path, n, out);
			}
		}
		/* below CAT_MAX_NESTING the cost per node grows with the depth: not entered */
		if (x.nr_anc >= CAT_MAX_NESTING && ts_node_child_count(n)) {
			too_deep = true;
		} else if (ts_tree_cursor_goto_first_child(&cur)) {
			ALLOC_GROW(x.anc, x.nr_anc + 1, alloc_anc);
			x.anc[x.nr_anc++] = n;
			continue;
		}
		while (!ts_tree_cursor_goto_next_sibling(&cur)) {
			if (!ts_tree_cursor_goto_parent(&cur))
				goto done;
			x.nr_anc--;
		}
	}
done:
	if (too_deep)
		note(out, "%s: nests deeper than %d levels: matched down to that depth", path, CAT_MAX_NESTING);
	free(x.anc);
	ts_tree_cursor_delete(&cur);
	ts_tree_delete(tree);
	ts_parser_delete(parser);
	free(x.env);
	strbuf_release(&x.text);
	return ret;
}

/* ---- files ---- */

static void note(struct cat_check *r, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(r->notes, r->nr_notes + 1, r->alloc_notes);
	r->notes[r->nr_notes++] = strbuf_detach(&sb, NULL);
}

static int check_one(struct catalog *c, const char *path, struct cat_check *out)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int lang = cat_lang_of_path(path), fd, rc;

	if (lang < 0) {
		out->skipped++;
		note(out, "%s: skipped: not C or C++ by its name (.c .h .cc .cpp .cxx .hh .hpp .hxx)", path);
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		out->skipped++;
		note(out, "%s: skipped: %s", path,
		     errno == ELOOP ? "a loop of symbolic links" : strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		out->skipped++;
		note(out, "%s: skipped: %s", path, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		close(fd);
		return 0;
	}
	if (st.st_size > (off_t)CAT_MAX_SOURCE) {
		out->skipped++;
		note(out, "%s: skipped: %lld bytes, more than the %u MiB a source file may have",
		     path, (long long)st.st_size, CAT_MAX_SOURCE >> 20);
		close(fd);
		return 0;
	}
	rc = strbuf_read_fd(&sb, fd, CAT_MAX_SOURCE + 1);
	close(fd);
	if (rc < 0 || sb.len > CAT_MAX_SOURCE) {
		out->skipped++;
		note(out, "%s: skipped: cannot read it", path);
		strbuf_release(&sb);
		return 0;
	}
	if (memchr(sb.buf, '\0', sb.len)) {
		out->skipped++;
		note(out, "%s: skipped: a binary file (it holds NUL bytes)", path);
		strbuf_release(&sb);
		return 0;
	}
	rc = cat_match_source(c, lang, path, sb.buf, sb.len, out);
	if (rc >= 0) {
		out->files++;
		for (size_t i = 0; i < sb.len; i++)
			out->lines += sb.buf[i] == '\n';
		if (sb.len && sb.buf[sb.len - 1] != '\n')
			out->lines++;
	}
	if (rc == 1) {
		out->syntax_errors++;
		note(out, "%s: syntax errors: matched where it parsed", path);
	}
	strbuf_release(&sb);
	return rc < 0 ? -1 : 0;
}

/* ---- many files at once: a queue of files, one result per file, merged in order ---- */

struct queue {
	struct catalog *c;
	char *const *paths;
	size_t nr;
	struct cat_check *res;	/* one per file */
	int *rc;
	size_t next;		/* the next file to take */
	pthread_mutex_t lock;
};

static void *worker(void *v)
{
	struct queue *q = v;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&q->lock);
		i = q->next < q->nr && !hl_cancelled() ? q->next++ : q->nr;
		pthread_mutex_unlock(&q->lock);
		if (i >= q->nr)
			return NULL;
		q->rc[i] = check_one(q->c, q->paths[i], &q->res[i]);
	}
}

static void merge(struct cat_check *out, struct cat_check *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		ALLOC_GROW(out->findings, out->nr + 1, out->alloc);
		out->findings[out->nr++] = r->findings[i];
	}
	for (size_t i = 0; i < r->nr_notes; i++) {
		ALLOC_GROW(out->notes, out->nr_notes + 1, out->alloc_notes);
		out->notes[out->nr_notes++] = r->notes[i];
	}
	out->files += r->files;
	out->lines += r->lines;
	out->skipped += r->skipped;
	out->syntax_errors += r->syntax_errors;
	free(r->findings);
	free(r->notes);
	memset(r, 0, sizeof(*r));
}

unsigned cat_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 256 ? 256 : (unsigned)n;
}

/* Check the files on 'jobs' threads; the results are in the files' order whatever the number */
static int check_many(struct catalog *c, char *const *paths, size_t nr, unsigned jobs, struct cat_check *out)
{
	struct queue q = { c, paths, nr, NULL, NULL, 0, PTHREAD_MUTEX_INITIALIZER };
	pthread_t *tids;
	size_t started = 0;
	int ret = 0;

	if (!jobs)
		jobs = cat_default_jobs();
	if (jobs > nr)
		jobs = nr ? (unsigned)nr : 1;
	q.res = xcalloc(nr + 1, sizeof(*q.res));
	q.rc = xcalloc(nr + 1, sizeof(*q.rc));
	tids = xcalloc(jobs, sizeof(*tids));
	for (unsigned i = 1; i < jobs; i++)	/* this thread is one of them */
		if (!pthread_create(&tids[started], NULL, worker, &q))
			started++;
	worker(&q);
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	for (size_t i = 0; i < nr; i++) {
		if (q.rc[i])
			ret = -1;
		merge(out, &q.res[i]);
	}
	free(tids);
	free(q.res);
	free(q.rc);
	return ret;
}

int cat_check_files_jobs(struct catalog *c, char *const *paths, size_t nr, unsigned jobs,
			 struct cat_check *out)
{
	if (catalog_compile(c))
		return -1;
	return check_many(c, paths, nr, jobs, out);
}

int cat_check_files(struct catalog *c, char *const *paths, size_t nr, struct cat_check *out)
{
	return cat_check_files_jobs(c, paths, nr, 1, out);
}

struct walk {
	struct cat_check *out;	/* the walk's notes */
	char **files;		/* what it found to check, in order */
	size_t nr_files, alloc_files;
	dev_t *devs;
	ino_t *inos;
	size_t nr, alloc, alloc_ino;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(struct walk *w, const char *dir, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	if (stat(dir, &st)) {
		w->out->skipped++;
		note(w->out, "%s: skipped: %s", dir, errno == ELOOP ? "a loop of symbolic links" : strerror(errno));
		return 0;
	}
	for (size_t i = 0; i < w->nr; i++) {
		if (w->devs[i] == st.st_dev && w->inos[i] == st.st_ino) {
			note(w->out, "%s: not entered: a directory already scanned (a loop of symbolic links?)", dir);
			return 0;
		}
	}
	if (depth > 256) {
		note(w->out, "%s: not entered: more than 256 directories deep", dir);
		return 0;
	}
	ALLOC_GROW(w->devs, w->nr + 1, w->alloc);
	ALLOC_GROW(w->inos, w->nr + 1, w->alloc_ino);
	w->devs[w->nr] = st.st_dev;
	w->inos[w->nr++] = st.st_ino;
	if (!(d = opendir(dir))) {
		w->out->skipped++;
		note(w->out, "%s: skipped: %s", dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = xstrfmt("%s/%s", dir, de->d_name);
	}
	closedir(d);
	qsort(names, nr, sizeof(*names), by_name);
	for (size_t i = 0; i < nr && !ret; i++) {
		struct stat sub;

		if (hl_cancelled())
			break;
		if (!stat(names[i], &sub) && S_ISDIR(sub.st_mode))
			ret = walk_dir(w, names[i], depth + 1);
		else if (cat_lang_of_path(names[i]) >= 0) {
			ALLOC_GROW(w->files, w->nr_files + 1, w->alloc_files);
			w->files[w->nr_files++] = names[i];
			names[i] = NULL;
		}
	}
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	return ret;
}

int cat_scan_paths_jobs(struct catalog *c, char *const *paths, size_t nr, unsigned jobs,
			struct cat_check *out)
{
	struct walk w = { .out = out };
	struct cat_check walked = CAT_CHECK_INIT;
	int ret = 0;

	if (catalog_compile(c))
		return -1;
	/*
	 * The walk first (its notes go before the files' notes), then the
	 * files on threads: a walk's notes and the checks' are kept apart so
	 * that the output does not depend on which thread finished first.
	 */
	w.out = &walked;
	for (size_t i = 0; i < nr && !ret; i++) {
		struct stat st;

		if (!stat(paths[i], &st) && S_ISDIR(st.st_mode)) {
			ret = walk_dir(&w, paths[i], 0);
		} else {
			ALLOC_GROW(w.files, w.nr_files + 1, w.alloc_files);
			w.files[w.nr_files++] = xstrdup(paths[i]);
		}
	}
	merge(out, &walked);
	if (!ret)
		ret = check_many(c, w.files, w.nr_files, jobs, out);
	for (size_t i = 0; i < w.nr_files; i++)
		free(w.files[i]);
	free(w.files);
	free(w.devs);
	free(w.inos);
	return ret;
}

int cat_scan_paths(struct catalog *c, char *const *paths, size_t nr, struct cat_check *out)
{
	return cat_scan_paths_jobs(c, paths, nr, 0, out);
}

void cat_check_release(struct cat_check *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		struct cat_finding *f = &r->findings[i];

		free(f->file);
		free(f->rule_id);
		free(f->message);
		for (size_t j = 0; j < f->nr_caps; j++) {
			free(f->caps[j].name);
			free(f->caps[j].text);
		}
		free(f->caps);
		free(f->function);
	}
	free(r->findings);
	for (size_t i = 0; i < r->nr_notes; i++)
		free(r->notes[i]);
	free(r->notes);
	memset(r, 0, sizeof(*r));
}

size_t cat_check_count(const struct cat_check *r, enum cat_severity min)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr; i++)
		n += r->findings[i].severity >= min;
	return n;
}

json_t *cat_check_to_json(const struct cat_check *r)
{
	json_t *doc = json_object(), *list = json_array(), *notes = json_array();

	for (size_t i = 0; i < r->nr; i++) {
		const struct cat_finding *f = &r->findings[i];
		json_t *caps = json_object();

		for (size_t j = 0; j < f->nr_caps; j++)
			json_object_set_new(caps, f->caps[j].name, json_text(f->caps[j].text));
		json_array_append_new(list, json_pack("{s:o, s:I, s:I, s:I, s:I, s:o, s:s, s:f, s:o, s:o}",
			"file", json_text(f->file), "line", (json_int_t)f->line,
			"column", (json_int_t)f->column, "end_line", (json_int_t)f->end_line,
			"end_column", (json_int_t)f->end_column, "rule", json_text(f->rule_id),
			"severity", cat_severity_name(f->severity), "confidence", f->confidence,
			"message", json_text(f->message), "captures", caps));
	}
	for (size_t i = 0; i < r->nr_notes; i++)
		json_array_append_new(notes, json_text(r->notes[i]));
	json_object_set_new(doc, "findings", list);
	json_object_set_new(doc, "files", json_integer(r->files));
	json_object_set_new(doc, "lines", json_integer(r->lines));
	json_object_set_new(doc, "skipped", json_integer(r->skipped));
	json_object_set_new(doc, "syntax_errors", json_integer(r->syntax_errors));
	json_object_set_new(doc, "notes", notes);
	return doc;
}

void cat_check_format_text(const struct cat_check *r, struct strbuf *out)
{
	for (size_t i = 0; i < r->nr; i++) {
		const struct cat_finding *f = &r->findings[i];

		strbuf_addf(out, "%s:%u:%u: %s: %s [%s]\n", f->file, f->line, f->column,
			    cat_severity_name(f->severity), f->message, f->rule_id);
	}
}
