/*
 * review-diff.c: git's unified diff read into the new side's added or
 * changed lines of each file (review-diff.h), for `catalog review`. Names
 * come C-quoted from git (core.quotePath) or bare with a trailing TAB.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "review-diff.h"
#include "strbuf.h"
#include "util.h"

/* A line of text: [p, p + len), without its '\n' */
struct line {
	const char *p;
	size_t len;
};

/* "--- /dev/null" or "+++ /dev/null": no file on that side */
static bool dev_null(const struct line *l)
{
	return l->len >= 13 && !memcmp(l->p + 4, "/dev/null", 9) && (l->len == 13 || l->p[13] == '\t');
}

static bool starts(const struct line *l, const char *s)
{
	size_t n = strlen(s);

	return l->len >= n && !memcmp(l->p, s, n);
}

/*
 * A path as git writes it: C-quoted ("a\tb", "\303\251") when it holds
 * odd bytes, else as it is (a trailing TAB, written after names with a
 * space, dropped). 'prefix' ("b/") is stripped when there. NULL when the
 * quoting is broken.
 */
static char *diff_path(const char *p, size_t len, const char *prefix)
{
	struct strbuf sb = STRBUF_INIT;
	size_t plen = prefix ? strlen(prefix) : 0;

	if (len && p[0] == '"') {
		size_t i = 1;

		for (; i < len && p[i] != '"'; i++) {
			unsigned char c = p[i];

			if (c == '\\') {
				static const char esc[] = "a\ab\bt\tn\nv\vf\fr\r\"\"\\\\";
				const char *e;

				if (++i >= len)
					goto bad;
				if (p[i] >= '0' && p[i] <= '3' && i + 2 < len &&
				    p[i + 1] >= '0' && p[i + 1] <= '7' && p[i + 2] >= '0' && p[i + 2] <= '7') {
					c = (p[i] - '0') << 6 | (p[i + 1] - '0') << 3 | (p[i + 2] - '0');
					i += 2;
				} else if ((e = memchr(esc, p[i], sizeof(esc) - 1)) && (e - esc) % 2 == 0) {
					c = e[1];
				} else {
					goto bad;
				}
			}
			strbuf_addch(&sb, c);
		}
		if (i >= len)
			goto bad;
	} else {
		if (len && p[len - 1] == '\t')
			len--;
		strbuf_add(&sb, p, len);
	}
	if (memchr(sb.buf, '\0', sb.len))
		goto bad;
	if (plen && sb.len > plen && !strncmp(sb.buf, prefix, plen)) {
		memmove(sb.buf, sb.buf + plen, sb.len - plen + 1);
		sb.len -= plen;
	}
	if (!sb.len)
		goto bad;
	return strbuf_detach(&sb, NULL);
bad:
	strbuf_release(&sb);
	return NULL;
}

/* "diff --git a/P b/P": P when both halves name the same path (the only case that reads unambiguously) */
static char *git_line_path(const struct line *l)
{
	const char *p = l->p + strlen("diff --git ");
	size_t len = l->len - strlen("diff --git "), n;

	if (len && p[0] == '"') {	/* "a/P" "b/P" */
		const char *end = memchr(p + 1, '"', len - 1);

		while (end && end[-1] == '\\')
			end = memchr(end + 1, '"', len - (end + 1 - p));
		return end ? diff_path(p, end + 1 - p, "a/") : NULL;
	}
	if (len < 7 || (len - 5) % 2 || strncmp(p, "a/", 2))
		return NULL;
	n = (len - 5) / 2;
	if (strncmp(p + 2 + n, " b/", 3) || memcmp(p + 2, p + 5 + n, n))
		return NULL;
	return xstrndup(p + 2, n);
}

/* A decimal number up to INT_MAX at *p (before end): 0, or -1 when there is none or it is larger */
static int hunk_number(const char **p, const char *end, unsigned long *out)
{
	unsigned long n = 0;

	if (*p >= end || **p < '0' || **p > '9')
		return -1;
	for (; *p < end && **p >= '0' && **p <= '9'; (*p)++) {
		n = n * 10 + (**p - '0');
		if (n > INT_MAX)
			return -1;
	}
	*out = n;
	return 0;
}

/* "N" or "N,M" at *p: 0, or -1 when it is not one */
static int hunk_numbers(const char **p, const char *end, unsigned long *start, unsigned long *count)
{
	*count = 1;
	if (hunk_number(p, end, start))
		return -1;
	if (*p < end && **p == ',') {
		(*p)++;
		if (hunk_number(p, end, count))
			return -1;
	}
	return 0;
}

static void set_path(struct review_file *f, char *path)
{
	if (!path)
		return;
	free(f->path);
	f->path = path;
}

static void add_range(struct review_file *f, unsigned lo, unsigned hi)
{
	if (f->nr && f->v[f->nr - 1].hi + 1 >= lo && f->v[f->nr - 1].lo <= lo) {
		if (hi > f->v[f->nr - 1].hi)
			f->v[f->nr - 1].hi = hi;
		return;
	}
	ALLOC_GROW(f->v, f->nr + 1, f->alloc);
	f->v[f->nr].lo = lo;
	f->v[f->nr++].hi = hi;
}

int review_parse_diff(const char *text, size_t len, struct review_diff *d, struct strbuf *why)
{
	const char *p = text, *end = text + len;
	struct review_file *f = NULL;
	unsigned long old_left = 0, new_left = 0, new_line = 0, lineno = 0, last_new = 0;
	struct line cur = { text, 0 };
	bool in_hunk = false;

	memset(d, 0, sizeof(*d));
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		struct line l = { p, (nl ? nl : end) - p };

		p = nl ? nl + 1 : end;
		cur = l;
		lineno++;
		if (in_hunk) {
			char c = l.len ? l.p[0] : ' ';	/* an empty line: context whose space was trimmed */

			if (c == '\\')
				continue;
			if ((c == '-' || c == ' ') && !old_left)
				goto short_hunk;
			if ((c == '+' || c == ' ') && !new_left)
				goto short_hunk;
			if (c == '-') {
				old_left--;
			} else if (c == '+' || c == ' ') {
				if (c == '+')
					add_range(f, new_line, new_line);
				new_left--;
				new_line++;
				if (c == ' ')
					old_left--;
			} else {
				goto short_hunk;
			}
			in_hunk = old_left || new_left;
			continue;
		}
		if (starts(&l, "diff --git ")) {
			ALLOC_GROW(d->files, d->nr + 1, d->alloc);
			f = &d->files[d->nr++];
			memset(f, 0, sizeof(*f));
			f->path = git_line_path(&l);
			last_new = 0;
			continue;
		}
		if (starts(&l, "diff --cc ") || starts(&l, "diff --combined ")) {
			f = NULL;	/* an unmerged path: reviewed once resolved */
			continue;
		}
		if (!f)
			continue;
		if (starts(&l, "new file mode")) {
			f->status = REVIEW_ADDED;
		} else if (starts(&l, "deleted file mode")) {
			f->status = REVIEW_DELETED;
		} else if (starts(&l, "rename to ") || starts(&l, "copy to ")) {
			size_t n = starts(&l, "rename to ") ? strlen("rename to ") : strlen("copy to ");

			set_path(f, diff_path(l.p + n, l.len - n, NULL));
			f->status = REVIEW_RENAMED;
		} else if (starts(&l, "Binary files ") || starts(&l, "GIT binary patch")) {
			f->status = REVIEW_BINARY;
		} else if (starts(&l, "--- ")) {
			if (f->status == REVIEW_DELETED && !dev_null(&l))
				set_path(f, diff_path(l.p + 4, l.len - 4, "a/"));
		} else if (starts(&l, "+++ ")) {
			if (!dev_null(&l)) {
				char *path = diff_path(l.p + 4, l.len - 4, "b/");

				if (!path) {
					strbuf_addf(why, "line %lu: a file name git does not write", lineno);
					goto fail;
				}
				set_path(f, path);
			}
		} else if (starts(&l, "@@ -")) {
			const char *q = l.p + 4, *lend = l.p + l.len;
			unsigned long os, oc, ns, nc;

			if (hunk_numbers(&q, lend, &os, &oc) || lend - q < 2 || strncmp(q, " +", 2))
				goto bad_header;
			q += 2;
			if (hunk_numbers(&q, lend, &ns, &nc) || lend - q < 3 || strncmp(q, " @@", 3))
				goto bad_header;
			if ((nc && !ns) || (nc && ns < last_new) || ns + nc > INT_MAX)
				goto bad_header;
			old_left = oc;
			new_left = nc;
			new_line = ns;
			last_new = ns + nc;
			in_hunk = oc || nc;
		}
	}
	if (in_hunk) {
		strbuf_addf(why, "the last hunk ends early (%lu old and %lu new lines missing)",
			    old_left, new_left);
		goto fail;
	}
	for (size_t i = 0; i < d->nr; i++)
		if (!d->files[i].path) {
			strbuf_addf(why, "file %zu of the diff has no name that reads", i + 1);
			goto fail;
		}
	return 0;
bad_header:
	strbuf_addf(why, "line %lu: a bad hunk header '", lineno);
	strbuf_add_printable(why, cur.p, cur.len, 80, false);
	strbuf_addch(why, '\'');
	goto fail;
short_hunk:
	strbuf_addf(why, "line %lu: the hunk ends early (%lu old and %lu new lines missing)",
		    lineno, old_left, new_left);
fail:
	review_diff_release(d);
	return -1;
}

void review_diff_release(struct review_diff *d)
{
	for (size_t i = 0; i < d->nr; i++) {
		free(d->files[i].path);
		free(d->files[i].v);
	}
	free(d->files);
	memset(d, 0, sizeof(*d));
}

bool review_file_touches(const struct review_file *f, unsigned lo, unsigned hi)
{
	size_t a = 0, b = f->nr;

	while (a < b) {		/* the first range ending at or after lo */
		size_t m = a + (b - a) / 2;

		if (f->v[m].hi < lo)
			a = m + 1;
		else
			b = m;
	}
	return a < f->nr && f->v[a].lo <= hi;
}

