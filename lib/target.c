/*
 * target.c: a candidate's diff as changed functions with their shares
 * (see target.h): the diff parser, the C brace scanner, the functions of
 * DWARF's subprograms and line table (libdw), the mapping, and the test of
 * whether the targeted function got cheaper.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "strbuf.h"
#include "target.h"
#include "util.h"

/* ---- the diff ------------------------------------------------------------ */

static struct target_file *new_file(struct target_diff *d)
{
	struct target_file *f;

	ALLOC_GROW(d->files, d->nr + 1, d->alloc);
	f = &d->files[d->nr++];
	memset(f, 0, sizeof(*f));
	f->status = 'M';
	return f;
}

/* A path of a header line, "a/" or "b/" dropped, a C-quoted one unquoted; NULL for /dev/null. */
static char *header_path(const char *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	while (n && (s[n - 1] == '\r' || s[n - 1] == '\t' || s[n - 1] == ' '))
		n--;
	if (n && *s == '"') {
		for (size_t i = 1; i < n && s[i] != '"'; i++) {
			char c = s[i];

			if (c == '\\' && i + 1 < n) {
				c = s[++i];
				if (i + 2 < n && c >= '0' && c <= '3' && s[i + 1] >= '0' && s[i + 1] <= '7' &&
				    s[i + 2] >= '0' && s[i + 2] <= '7') {
					c = (char)(((s[i] - '0') << 6) | ((s[i + 1] - '0') << 3) | (s[i + 2] - '0'));
					i += 2;
				} else if (c == 'n') {
					c = '\n';
				} else if (c == 't') {
					c = '\t';
				}
			}
			strbuf_addch(&sb, c);
		}
	} else {
		strbuf_add(&sb, s, n);
	}
	if (!strcmp(sb.buf, "/dev/null")) {
		strbuf_release(&sb);
		return NULL;
	}
	if ((sb.buf[0] == 'a' || sb.buf[0] == 'b') && sb.buf[1] == '/') {
		char *rest = xstrdup(sb.buf + 2);

		strbuf_release(&sb);
		return rest;
	}
	return strbuf_detach(&sb, NULL);
}

static bool prefix(const char *line, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !memcmp(line, p, k);
}

/* "a[,b]" of a hunk header; the end of it, or NULL. */
static const char *hunk_num(const char *s, const char *end, int64_t *start, int64_t *count)
{
	int64_t v = 0;

	if (s >= end || !isdigit((unsigned char)*s))
		return NULL;
	for (; s < end && isdigit((unsigned char)*s); s++) {
		if (v > (INT64_MAX - 9) / 10)
			return NULL;
		v = v * 10 + (*s - '0');
	}
	*start = v;
	*count = 1;
	if (s < end && *s == ',') {
		v = 0;
		if (++s >= end || !isdigit((unsigned char)*s))
			return NULL;
		for (; s < end && isdigit((unsigned char)*s); s++) {
			if (v > (INT64_MAX - 9) / 10)
				return NULL;
			v = v * 10 + (*s - '0');
		}
		*count = v;
	}
	return s;
}

static void add_range(struct target_file *f, int64_t lo, int64_t hi, bool insert)
{
	struct target_range *last = f->nr ? &f->v[f->nr - 1] : NULL;

	if (last && !insert && !last->insert && last->hi + 1 >= lo && lo >= last->lo) {
		if (hi > last->hi)
			last->hi = hi;
		return;
	}
	ALLOC_GROW(f->v, f->nr + 1, f->alloc);
	f->v[f->nr++] = (struct target_range){ lo, hi, insert };
}

int target_parse_diff(const char *text, size_t len, struct target_diff *d, struct strbuf *why)
{
	const char *p = text, *end = text + len;
	struct target_file *f = NULL;
	int64_t old = 0, left_old = 0, left_new = 0;
	bool minus_run = false, plus_done = false, after_hunk = false;
	size_t lineno = 0;

	memset(d, 0, sizeof(*d));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line = p;

		p += n + (nl != NULL);
		lineno++;
		if (left_old > 0 || left_new > 0) {
			char c = n ? line[0] : ' ';	/* an empty line: a context line whose blank was cut */

			if (c == ' ') {
				if (left_old-- <= 0 || left_new-- <= 0)
					goto bad_hunk;
				old++;
				minus_run = plus_done = false;
			} else if (c == '-') {
				if (left_old-- <= 0)
					goto bad_hunk;
				add_range(f, old, old, false);
				old++;
				minus_run = true;
			} else if (c == '+') {
				if (left_new-- <= 0)
					goto bad_hunk;
				if (!minus_run && !plus_done)
					add_range(f, old - 1, old, true);
				plus_done = true;
			} else if (c != '\\') {
				goto bad_hunk;
			}
			continue;
		}
		if (after_hunk && !prefix(line, n, "diff --git ") && !prefix(line, n, "@@ -") &&
		    !prefix(line, n, "\\")) {
			strbuf_addf(why, "line %zu: '%s' has more lines than its hunk says", lineno, f->path);
			goto fail;
		}
		if (prefix(line, n, "diff --git ")) {
			after_hunk = false;
			const char *a = line + 11, *b = NULL;

			/* "a/X b/X": the old path up to " b/" (the ---/+++ lines, when there, say it exactly) */
			for (const char *q = a; q + 3 <= line + n; q++)
				if (!memcmp(q, " b/", 3))
					b = q;
			f = new_file(d);
			f->path = header_path(a, b ? (size_t)(b - a) : (size_t)(line + n - a));
			if (!f->path)
				f->path = xstrdup("");
		} else if (!f) {
			continue;	/* text before the first file */
		} else if (prefix(line, n, "new file mode")) {
			f->status = 'A';
		} else if (prefix(line, n, "deleted file mode")) {
			f->status = 'D';
		} else if (prefix(line, n, "rename from ")) {
			free(f->path);
			f->path = header_path(line + 12, n - 12);
			if (!f->path)
				f->path = xstrdup("");
		} else if (prefix(line, n, "Binary files ") || prefix(line, n, "GIT binary patch")) {
			f->status = 'B';
		} else if (prefix(line, n, "--- ")) {
			char *path = header_path(line + 4, n - 4);

			if (path) {
				free(f->path);
				f->path = path;
			} else {
				f->status = 'A';
			}
		} else if (prefix(line, n, "+++ ")) {
			char *path = header_path(line + 4, n - 4);

			if (path && f->status == 'A') {
				free(f->path);
				f->path = path;
			} else {
				free(path);
				if (!path)
					f->status = 'D';
			}
		} else if (prefix(line, n, "@@ -")) {
			const char *q = line + 4, *e = line + n;
			int64_t ns, nc;

			if (!(q = hunk_num(q, e, &old, &left_old)) || q + 2 > e || memcmp(q, " +", 2) ||
			    !(q = hunk_num(q + 2, e, &ns, &nc)) || q + 3 > e || memcmp(q, " @@", 3)) {
				strbuf_addf(why, "line %zu: a hunk header that does not parse", lineno);
				goto fail;
			}
			left_new = nc;
			after_hunk = true;
			if (!left_old)
				old++;	/* "-5,0": the lines go after line 5 */
			minus_run = plus_done = false;
		}
	}
	if (left_old > 0 || left_new > 0) {
		strbuf_addf(why, "the diff ends inside a hunk of '%s'", f->path);
		goto fail;
	}
	return 0;
bad_hunk:
	strbuf_addf(why, "line %zu: the hunk of '%s' does not add up to its header", lineno, f->path);
fail:
	target_diff_release(d);
	return -1;
}

void target_diff_release(struct target_diff *d)
{
	for (size_t i = 0; i < d->nr; i++) {
		free(d->files[i].path);
		free(d->files[i].v);
	}
	free(d->files);
	memset(d, 0, sizeof(*d));
}

/* ---- functions ------------------------------------------------------------- */

static void add_fn(struct target_fns *f, const char *name, size_t nlen, int64_t lo, int64_t hi)
{
	ALLOC_GROW(f->v, f->nr + 1, f->alloc);
	f->v[f->nr++] = (struct target_fn){ xstrndup(name, nlen), lo, hi };
}

void target_fns_release(struct target_fns *f)
{
	for (size_t i = 0; i < f->nr; i++)
		free(f->v[i].name);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static int fn_cmp(const void *a, const void *b)
{
	const struct target_fn *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : strcmp(x->name, y->name);
}

void target_fns_sort(struct target_fns *f)
{
	size_t k = 0;

	if (f->nr > 1)
		qsort(f->v, f->nr, sizeof(*f->v), fn_cmp);
	for (size_t i = 0; i < f->nr; i++) {
		if (k && f->v[k - 1].lo == f->v[i].lo) {
			if (f->v[i].hi > f->v[k - 1].hi)
				f->v[k - 1].hi = f->v[i].hi;
			free(f->v[i].name);
			continue;
		}
		f->v[k++] = f->v[i];
	}
	f->nr = k;
}

#define SCAN_MAX_DEPTH 256

void target_scan_source(const char *s, size_t len, struct target_fns *out)
{
	size_t depth = 0, fn_index = 0;
	int64_t line = 1, decl_line = 0, name_line = 0;
	const char *ident = NULL, *name = NULL;
	size_t ident_len = 0, name_len = 0;
	bool after_paren = false, at_line_start = true, scope_word = false, in_fn = false;
	int paren = 0;
	size_t fn_depth = 0;
	size_t i = 0;

	while (i < len) {
		char c = s[i];

		if (c == '\n') {
			line++;
			at_line_start = true;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			i++;
			continue;
		}
		if (c == '/' && i + 1 < len && s[i + 1] == '/') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '/' && i + 1 < len && s[i + 1] == '*') {
			for (i += 2; i < len && !(s[i] == '*' && i + 1 < len && s[i + 1] == '/'); i++)
				if (s[i] == '\n')
					line++;
			i += 2;
			continue;
		}
		if (c == '#' && at_line_start) {
			/* a preprocessor line, with its continuations */
			for (; i < len && s[i] != '\n'; i++)
				if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n') {
					i++;
					line++;
				}
			continue;
		}
		at_line_start = false;
		if (c == '"' || c == '\'') {
			for (i++; i < len && s[i] != c && s[i] != '\n'; i++)
				if (s[i] == '\\' && i + 1 < len) {
					if (s[i + 1] == '\n')
						line++;
					i++;
				}
			i++;
			continue;
		}
		if (in_fn) {
			/* inside a function: only its braces matter */
			if (c == '{') {
				depth++;
			} else if (c == '}') {
				if (--depth == fn_depth) {
					out->v[fn_index].hi = line;
					in_fn = false;
					decl_line = 0;
					name = ident = NULL;
					after_paren = false;
				}
			}
			i++;
			continue;
		}
		if (isalpha((unsigned char)c) || c == '_' || c == '~') {
			size_t st = i;

			while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':' || s[i] == '~'))
				i++;
			if (!paren) {
				if (!decl_line)
					decl_line = line;
				ident = s + st;
				ident_len = i - st;
				if ((ident_len == 9 && !memcmp(ident, "namespace", 9)) ||
				    (ident_len == 6 && !memcmp(ident, "extern", 6)))
					scope_word = true;
			}
			continue;
		}
		if (c == '(') {
			if (!paren++ && ident) {
				name = ident;
				name_len = ident_len;
				name_line = line;
				after_paren = false;
			}
		} else if (c == ')') {
			if (paren > 0 && !--paren)
				after_paren = name != NULL;
		} else if (!paren && (c == ';' || c == '=' || c == ',')) {
			if (c == ';' || c == '=') {
				decl_line = 0;
				scope_word = false;
			}
			name = ident = NULL;
			after_paren = false;
		} else if (!paren && c == '{') {
			if (depth >= SCAN_MAX_DEPTH)
				return;
			if (after_paren && name) {
				fn_index = out->nr;
				add_fn(out, name, name_len, decl_line ? decl_line : name_line, line);
				fn_depth = depth++;
				in_fn = true;
			} else if (scope_word) {
				depth++;	/* a namespace or extern "C": functions inside */
			} else {
				/* a struct, an initializer, a class body: skip to its end */
				int d = 1;

				for (i++; i < len && d; i++) {
					if (s[i] == '\n')
						line++;
					else if (s[i] == '{')
						d++;
					else if (s[i] == '}')
						d--;
				}
				decl_line = 0;
				name = ident = NULL;
				after_paren = scope_word = false;
				continue;
			}
			decl_line = 0;
			name = ident = NULL;
			after_paren = scope_word = false;
		} else if (!paren && c == '}') {
			if (depth)
				depth--;
			decl_line = 0;
			name = ident = NULL;
			after_paren = scope_word = false;
		}
		i++;
	}
	if (in_fn)
		out->v[fn_index].hi = line;	/* unterminated: to the end */
}

/* ---- DWARF ------------------------------------------------------------------- */

struct dw_file {
	struct target_fns decls;	/* hi unset */
	int64_t *rows;
	size_t nr_rows, alloc_rows;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Which of 'paths' a DWARF file name (relative to comp_dir) is; -1 for none. */
static ssize_t which_path(const char *name, const char *comp_dir, const char *const *paths, size_t nr)
{
	const char *bn;
	char *abs, *real;
	ssize_t hit = -1;

	if (!name)
		return -1;
	bn = base_name(name);
	for (size_t k = 0; k < nr; k++)
		if (!strcmp(bn, base_name(paths[k])))
			goto look;
	return -1;
look:
	abs = *name == '/' || !comp_dir ? xstrdup(name) : xstrfmt("%s/%s", comp_dir, name);
	real = realpath(abs, NULL);
	for (size_t k = 0; k < nr && hit < 0; k++)
		if (!strcmp(abs, paths[k]) || (real && !strcmp(real, paths[k])))
			hit = (ssize_t)k;
	free(real);
	free(abs);
	return hit;
}

static void walk_dies(Dwarf_Die *parent, const char *comp_dir, const char *const *paths, size_t nr,
		      struct dw_file *files, bool *found, int level)
{
	Dwarf_Die die;

	if (level > 16 || dwarf_child(parent, &die))
		return;
	do {
		int tag = dwarf_tag(&die);

		if (tag == DW_TAG_namespace) {
			walk_dies(&die, comp_dir, paths, nr, files, found, level + 1);
		} else if (tag == DW_TAG_subprogram && !dwarf_hasattr(&die, DW_AT_declaration)) {
			const char *name = dwarf_diename(&die), *file = dwarf_decl_file(&die);
			int line = 0;
			ssize_t k;

			if (!name || !file || dwarf_decl_line(&die, &line) || line <= 0)
				continue;
			if ((k = which_path(file, comp_dir, paths, nr)) < 0)
				continue;
			found[k] = true;
			add_fn(&files[k].decls, name, strlen(name), line, line);
		}
	} while (!dwarf_siblingof(&die, &die));
}

static int row_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int target_dwarf_functions(const char *binary, const char *const *paths, size_t nr,
			   struct target_fns *fns, bool *found)
{
	struct dw_file *files = xcalloc(nr ? nr : 1, sizeof(*files));
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf *dw;
	int fd = open(binary, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		free(files);
		return error("cannot open '%s': %s", binary, strerror(errno));
	}
	if (!(dw = dwarf_begin(fd, DWARF_C_READ))) {
		close(fd);
		free(files);
		return 1;	/* no DWARF: nothing to read, not an error */
	}
	while (!dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		Dwarf_Attribute at;
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_offdie(dw, off + hsize, &cu)) {
			const char *comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at));
			const char *last = NULL;
			ssize_t k = -1;

			if (!dwarf_getsrclines(&cu, &lines, &n)) {
				for (size_t i = 0; i < n; i++) {
					Dwarf_Line *ln = dwarf_onesrcline(lines, i);
					const char *f = ln ? dwarf_linesrc(ln, NULL, NULL) : NULL;
					int lineno = 0;

					if (!f || dwarf_lineno(ln, &lineno) || lineno <= 0)
						continue;
					if (f != last) {
						last = f;
						k = which_path(f, comp_dir, paths, nr);
					}
					if (k < 0)
						continue;
					found[k] = true;
					ALLOC_GROW(files[k].rows, files[k].nr_rows + 1, files[k].alloc_rows);
					files[k].rows[files[k].nr_rows++] = lineno;
				}
			}
			walk_dies(&cu, comp_dir, paths, nr, files, found, 0);
		}
		off = next;
	}
	for (size_t k = 0; k < nr; k++) {
		struct dw_file *df = &files[k];

		target_fns_sort(&df->decls);
		if (df->nr_rows > 1)
			qsort(df->rows, df->nr_rows, sizeof(*df->rows), row_cmp);
		for (size_t i = 0, r = 0; i < df->decls.nr; i++) {
			struct target_fn *fn = &df->decls.v[i];
			int64_t next_lo = i + 1 < df->decls.nr ? df->decls.v[i + 1].lo : INT64_MAX;

			while (r < df->nr_rows && df->rows[r] < fn->lo)
				r++;
			while (r < df->nr_rows && df->rows[r] < next_lo) {
				fn->hi = df->rows[r];
				r++;
			}
			add_fn(&fns[k], fn->name, strlen(fn->name), fn->lo, fn->hi);
		}
		target_fns_release(&df->decls);
		free(df->rows);
	}
	free(files);
	dwarf_end(dw);
	close(fd);
	return 0;
}

/* ---- the mapping -------------------------------------------------------------- */

/* "ns::Foo::bar(int) const" -> "bar"; "spin" -> "spin". */
static void last_component(const char *s, const char **out, size_t *len)
{
	const char *paren = strchr(s, '('), *end = paren ? paren : s + strlen(s), *start = s;

	for (const char *q = s; q + 1 < end; q++)
		if (q[0] == ':' && q[1] == ':')
			start = q + 2;
	*out = start;
	*len = (size_t)(end - start);
}

const struct target_share *target_share_find(const char *fn, const struct target_share *shares, size_t nr)
{
	const char *a, *b;
	size_t alen, blen;

	for (size_t i = 0; i < nr; i++)
		if (shares[i].name && !strcmp(shares[i].name, fn))
			return &shares[i];
	last_component(fn, &a, &alen);
	for (size_t i = 0; i < nr; i++) {
		if (!shares[i].name)
			continue;
		last_component(shares[i].name, &b, &blen);
		if (alen == blen && !memcmp(a, b, alen))
			return &shares[i];
	}
	return NULL;
}

static void add_change(struct target_result *r, const char *fn, const char *file,
		       const struct target_share *shares, size_t nr_shares)
{
	const struct target_share *s;

	for (size_t i = 0; i < r->nr; i++)
		if (!strcmp(r->changed[i].function, fn))
			return;
	s = target_share_find(fn, shares, nr_shares);
	ALLOC_GROW(r->changed, r->nr + 1, r->alloc);
	r->changed[r->nr++] = (struct target_change){ xstrdup(fn), xstrdup(file), s ? s->share : 0, s != NULL };
}

static void add_outside(struct target_result *r, char *what)
{
	ALLOC_GROW(r->outside, r->nr_outside + 1, r->alloc_outside);
	r->outside[r->nr_outside++] = what;
}

static int change_cmp(const void *a, const void *b)
{
	const struct target_change *x = a, *y = b;

	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	return strcmp(x->function, y->function);
}

void target_classify(const struct target_diff *d, const struct target_fns *fns,
		     const struct target_share *shares, size_t nr_shares, struct target_result *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < d->nr; i++) {
		const struct target_file *f = &d->files[i];
		const struct target_fns *fs = &fns[i];

		if (f->status == 'B') {
			add_outside(out, xstrfmt("%s (binary)", f->path));
			continue;
		}
		if (f->status == 'A') {
			add_outside(out, xstrfmt("%s (new file)", f->path));
			continue;
		}
		for (size_t k = 0; k < f->nr; k++) {
			const struct target_range *rg = &f->v[k];
			bool hit = false;

			for (size_t j = 0; j < fs->nr; j++) {
				const struct target_fn *fn = &fs->v[j];
				bool in = rg->insert ? fn->lo <= rg->lo && rg->hi <= fn->hi
						     : fn->lo <= rg->hi && rg->lo <= fn->hi;

				if (in) {
					add_change(out, fn->name, f->path, shares, nr_shares);
					hit = true;
				}
			}
			if (hit)
				continue;
			if (rg->insert)
				add_outside(out, xstrfmt("%s:%lld (added after it)", f->path, (long long)rg->lo));
			else if (rg->lo == rg->hi)
				add_outside(out, xstrfmt("%s:%lld", f->path, (long long)rg->lo));
			else
				add_outside(out, xstrfmt("%s:%lld-%lld", f->path, (long long)rg->lo,
							 (long long)rg->hi));
		}
		if (!f->nr && f->status == 'M')
			add_outside(out, xstrfmt("%s (mode only)", f->path));
	}
	if (out->nr > 1)
		qsort(out->changed, out->nr, sizeof(*out->changed), change_cmp);
}

void target_result_release(struct target_result *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		free(r->changed[i].function);
		free(r->changed[i].file);
	}
	free(r->changed);
	for (size_t i = 0; i < r->nr_outside; i++)
		free(r->outside[i]);
	free(r->outside);
	memset(r, 0, sizeof(*r));
}

void target_changed_text(const struct target_result *r, size_t max, struct strbuf *sb)
{
	for (size_t i = 0; i < r->nr && i < max; i++) {
		const struct target_change *c = &r->changed[i];

		if (c->known)
			strbuf_addf(sb, "%s%s (%.1f%%)", i ? ", " : "", c->function, 100 * c->share);
		else
			strbuf_addf(sb, "%s%s (not a hotspot)", i ? ", " : "", c->function);
	}
	if (r->nr > max)
		strbuf_addf(sb, " and %zu more", r->nr - max);
}

/* ---- did it get cheaper ---------------------------------------------------------- */

void target_gain_estimate(double x1, double n1, double x2, double n2, double change_pct,
			  double change_low_pct, double change_high_pct, struct target_gain *g)
{
	double lr, se;

	memset(g, 0, sizeof(*g));
	g->share_best = n1 > 0 ? x1 / n1 : 0;
	g->share_cand = n2 > 0 ? x2 / n2 : 0;
	g->ratio = g->ratio_low = g->ratio_high = NAN;
	if (x1 <= 0 || n1 <= 0 || n2 <= 0)
		return;
	if (x2 < 0.5)
		x2 = 0.5;	/* not seen: half a sample, not nothing */
	lr = log((x2 / n2) / (x1 / n1));
	se = 1 / x1 - 1 / n1 + 1 / x2 - 1 / n2;
	se = se > 0 ? sqrt(se) : 0;
	g->ratio = exp(lr) * (1 + change_pct / 100);
	g->ratio_low = exp(lr - 1.96 * se) * (1 + change_low_pct / 100);
	g->ratio_high = exp(lr + 1.96 * se) * (1 + change_high_pct / 100);
	g->cheaper = g->ratio_high < 1;
}
