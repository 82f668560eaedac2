/*
 * kb.c: the knowledge base of attempts (see kb.h, docs/kb.md): writing an
 * entry whole or not at all, reading report.md back from hand-edited or
 * damaged files, the index, search, and the slugs that name entries.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"
#include "json.h"
#include "kb.h"
#include "strbuf.h"
#include "util.h"

#define TMP_PREFIX ".tmp-"
#define TMP_STALE_S 3600		/* a live writer's temp dir older than this is left behind */
#define ONE_LINE_MAX 200		/* characters of a hypothesis or reason in the index */

/* ---- small text helpers --------------------------------------------------- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* A copy of s[0..len) without leading and trailing white space; NULL when nothing is left. */
static char *trimmed(const char *s, size_t len)
{
	while (len && is_space(*s))
		s++, len--;
	while (len && is_space(s[len - 1]))
		len--;
	return len ? xstrndup(s, len) : NULL;
}

/* One line: newlines become spaces, the ends trimmed; NULL for NULL or nothing. */
static char *one_line(const char *s)
{
	char *r;

	if (!s || !(r = trimmed(s, strlen(s))))
		return NULL;
	for (char *p = r; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return r;
}

/*
 * Append 'len' bytes of outside text as valid UTF-8 without control
 * characters: CR LF and lone CRs become LF, invalid bytes U+FFFD, other
 * control characters (NUL included) '?'; tabs and newlines stay.
 */
static void add_clean(struct strbuf *out, const char *buf, size_t len)
{
	strbuf_grow(out, len);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)buf[i], tmp[5] = { 0 };
		size_t n;

		if (c == '\r') {
			strbuf_addch(out, '\n');
			i += i + 1 < len && buf[i + 1] == '\n' ? 2 : 1;
			continue;
		}
		if (c < 0x80) {
			strbuf_addch(out, (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : c);
			i++;
			continue;
		}
		memcpy(tmp, buf + i, len - i < 4 ? len - i : 4);
		if (utf8_decode(tmp, &n) < 0) {
			strbuf_addstr(out, "\xef\xbf\xbd");
			i++;
			continue;
		}
		strbuf_add(out, buf + i, n);
		i += n;
	}
}

void kb_one_line(struct strbuf *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	bool space = false;
	size_t n = 0, len;

	while (is_space((char)*p))
		p++;
	for (; *p; p += len) {
		if (is_space((char)*p) || *p == '\r') {
			space = true;
			len = 1;
			continue;
		}
		if (n >= max) {
			strbuf_addstr(out, "...");
			return;
		}
		if (space) {
			strbuf_addch(out, ' ');
			n++;
			space = false;
		}
		utf8_decode(p, &len);
		strbuf_add(out, p, len);
		n++;
	}
}

/* The shortest text that reads back as v. */
static void add_double(struct strbuf *sb, double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	strbuf_addstr(sb, buf);
}

/* ---- dates ----------------------------------------------------------------- */

static bool digits(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return false;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return true;
}

/* Y-M-D h:m:s of UTC as time_t; -1 when not a real date from 1971 to 9999. */
static time_t make_time(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = { 0 };
	time_t t;

	if (y < 1971 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	t = timegm(&tm);
	if (t == (time_t)-1 || tm.tm_mday != d || tm.tm_mon != mo - 1)
		return -1;		/* Feb 30 */
	return t;
}

/*
 * "YYYY-MM-DD[( |T)hh:mm[:ss]][ ](Z|+hhmm|+hh:mm|-hhmm)": the time and the
 * offset it was written in (none: UTC). -1 when it is not one.
 */
static int parse_date(const char *s, time_t *when, int *offset)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, oh = 0, om = 0, sign = 0;
	const char *p = s, *q;
	time_t t;

	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d))
		return -1;
	q = p + 1;
	if ((*p == 'T' || *p == ' ') && digits(&q, 2, &h) && *q == ':') {
		p = q + 1;
		if (!digits(&p, 2, &mi))
			return -1;
		if (*p == ':' && (p++, !digits(&p, 2, &sec)))
			return -1;
	}
	while (*p == ' ')
		p++;
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if (!digits(&p, 2, &oh) || (*p == ':' && !*++p) || !digits(&p, 2, &om) || oh > 23 || om > 59)
			return -1;
	}
	if (*p || (t = make_time(y, mo, d, h, mi, sec)) < 0)
		return -1;
	*offset = sign * (oh * 3600 + om * 60);
	*when = t - *offset;
	return 0;
}

/* "2026-11-29 14:03:12 +0100" (iso: "2026-11-29T14:03:12+01:00"), in the entry's own offset. */
static void add_date(struct strbuf *sb, time_t when, int offset, bool iso)
{
	time_t local = when + offset;
	int a = offset < 0 ? -offset : offset;
	struct tm tm;

	if (!gmtime_r(&local, &tm)) {
		strbuf_addstr(sb, "?");
		return;
	}
	strbuf_addf(sb, "%04d-%02d-%02d%c%02d:%02d:%02d%s%c%02d%s%02d", tm.tm_year + 1900, tm.tm_mon + 1,
		    tm.tm_mday, iso ? 'T' : ' ', tm.tm_hour, tm.tm_min, tm.tm_sec, iso ? "" : " ",
		    offset < 0 ? '-' : '+', a / 3600, iso ? ":" : "", a / 60 % 60);
}

void kb_entry_day(const struct kb_entry *e, struct strbuf *sb)
{
	time_t local = e->when + e->utc_offset;
	struct tm tm;

	if (!e->when || !gmtime_r(&local, &tm))
		strbuf_addstr(sb, "-");
	else
		strbuf_addf(sb, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

/*
 * Where the date a slug ends with ("-DDMMYYYY" or "-DDMMYYYY-N") starts,
 * its '-' included, with the date (midnight UTC) in *when; NULL when none.
 */
static const char *slug_date_at(const char *slug, time_t *when)
{
	const char *p = slug + strlen(slug), *end = p, *d;
	int dd, mm, yyyy;
	time_t t;

	while (p > slug && isdigit((unsigned char)p[-1]))
		p--;
	if (end - p != 8 && p > slug + 1 && p[-1] == '-' && p < end) {
		end = p - 1;	/* a -N suffix */
		for (p = end; p > slug && isdigit((unsigned char)p[-1]); p--)
			;
	}
	if (end - p != 8 || p == slug || p[-1] != '-')
		return NULL;
	d = p;
	if (!digits(&d, 2, &dd) || !digits(&d, 2, &mm) || !digits(&d, 4, &yyyy) ||
	    (t = make_time(yyyy, mm, dd, 0, 0, 0)) < 0)
		return NULL;
	*when = t;
	return p - 1;
}

static time_t slug_date(const char *slug)
{
	time_t t = 0;

	slug_date_at(slug, &t);
	return t;
}

/* ---- slugs ----------------------------------------------------------------- */

/* Latin-1 letters U+00C0-U+00FF folded to ASCII; NULL: a separator (× ÷). */
static const char *const latin1_fold[64] = {
	"a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
	"d", "n", "o", "o", "o", "o", "o", NULL, "o", "u", "u", "u", "u", "y", "th", "ss",
	"a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
	"d", "n", "o", "o", "o", "o", "o", NULL, "o", "u", "u", "u", "u", "y", "th", "y",
};

char *kb_slug(const char *title)
{
	struct strbuf sb = STRBUF_INIT;
	const unsigned char *p = (const unsigned char *)(title ? title : "");
	bool sep = false;
	size_t len;

	for (; *p && sb.len <= 2 * KB_SLUG_MAX; p += len) {
		int32_t cp = utf8_decode(p, &len);
		char one[2] = { 0 };
		const char *fold = NULL;

		if (cp == '\'' || cp == 0x2019)		/* don't -> dont */
			continue;
		if (cp >= 0 && cp < 0x80 && isalnum(cp)) {
			one[0] = (char)tolower(cp);
			fold = one;
		} else if (cp >= 0xc0 && cp <= 0xff) {
			fold = latin1_fold[cp - 0xc0];
		}
		if (!fold) {
			sep = true;
			continue;
		}
		if (sep && sb.len)
			strbuf_addch(&sb, '-');
		sep = false;
		strbuf_addstr(&sb, fold);
	}
	if (sb.len > KB_SLUG_MAX) {
		size_t cut = KB_SLUG_MAX;

		if (sb.buf[cut] != '-') {
			char *dash = memrchr(sb.buf, '-', cut);

			if (dash && (size_t)(dash - sb.buf) >= KB_SLUG_MAX / 2)
				cut = (size_t)(dash - sb.buf);
		}
		strbuf_setlen(&sb, cut);
		while (sb.len && sb.buf[sb.len - 1] == '-')
			strbuf_setlen(&sb, sb.len - 1);
	}
	if (!sb.len)
		strbuf_addstr(&sb, "attempt");
	return strbuf_detach(&sb, NULL);
}

/* ---- report.md out --------------------------------------------------------- */

void kb_entry_init(struct kb_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->expected_gain_pct = NAN;
}

void kb_entry_release(struct kb_entry *e)
{
	free(e->slug);
	free(e->dir);
	free(e->title);
	free(e->function);
	free(e->lens);
	free(e->agent);
	free(e->change);
	free(e->commit);
	free(e->what);
	free(e->hypothesis);
	free(e->results);
	for (size_t i = 0; i < e->nr_reasons; i++)
		free(e->reasons[i]);
	free(e->reasons);
	kb_entry_init(e);
}

static void add_field(struct strbuf *sb, const char *key, const char *v)
{
	if (!v)
		return;
	strbuf_addf(sb, "- %s: ", key);
	for (; *v; v++)
		strbuf_addch(sb, *v == '\n' ? ' ' : *v);
	strbuf_addch(sb, '\n');
}

/*
 * A section's text. A line starting with '#' (after any backslashes)
 * gets one more backslash, so no text can start a section of its own;
 * the reader takes one away. Markdown shows "\#" as "#".
 */
static void add_section(struct strbuf *sb, const char *name, const char *text)
{
	const char *p = text;

	strbuf_addf(sb, "\n## %s\n\n", name);
	while (p && *p) {
		const char *nl = strchrnul(p, '\n');
		size_t bs = strspn(p, "\\");

		if (p[bs] == '#')
			strbuf_addch(sb, '\\');
		strbuf_add(sb, p, (size_t)(nl - p));
		strbuf_addch(sb, '\n');
		p = *nl ? nl + 1 : nl;
	}
}

/* A reason as a list item: its further lines indented by two spaces. */
static void add_reason(struct strbuf *sb, const char *r)
{
	const char *nl;

	strbuf_addstr(sb, "- ");
	for (;;) {
		nl = strchrnul(r, '\n');
		strbuf_add(sb, r, (size_t)(nl - r));
		strbuf_addch(sb, '\n');
		if (!*nl)
			break;
		r = nl + 1;
		if (*r && *r != '\n')
			strbuf_addstr(sb, "  ");
	}
}

void kb_format_report(const struct kb_entry *e, struct strbuf *out)
{
	if (e->title) {
		strbuf_addstr(out, "# ");
		for (const char *p = e->title; *p; p++)
			strbuf_addch(out, *p == '\n' ? ' ' : *p);
		strbuf_addstr(out, "\n\n");
	}
	add_field(out, "function", e->function);
	if (e->verdict)
		add_field(out, "verdict", verdict_kind_name(e->verdict));
	if (e->when) {
		strbuf_addstr(out, "- date: ");
		add_date(out, e->when, e->utc_offset, false);
		strbuf_addch(out, '\n');
	}
	if (e->round > 0)
		strbuf_addf(out, "- round: %d\n", e->round);
	add_field(out, "lens", e->lens);
	add_field(out, "agent", e->agent);
	if (!isnan(e->expected_gain_pct)) {
		strbuf_addstr(out, "- expected gain: ");
		add_double(out, e->expected_gain_pct);
		strbuf_addstr(out, "%\n");
	}
	add_field(out, "change", e->change);
	add_field(out, "commit", e->commit ? e->commit : "none");
	add_section(out, "What", e->what);
	add_section(out, "Hypothesis", e->hypothesis);
	add_section(out, "Results", e->results);
	strbuf_addstr(out, "\n## Verdict\n\n");
	if (e->verdict)
		strbuf_addf(out, "**%s**\n\n", verdict_kind_name(e->verdict));
	for (size_t i = 0; i < e->nr_reasons; i++)
		add_reason(out, e->reasons[i]);
}

/* ---- report.md in ---------------------------------------------------------- */

enum section { SEC_PRE, SEC_WHAT, SEC_HYPOTHESIS, SEC_RESULTS, SEC_VERDICT, SEC_OTHER };

struct parser {
	const char *name;
	struct kb_entry *e;
	struct strbuf text[SEC_VERDICT + 1];	/* indexed by section */
	bool seen;				/* a title, a known field or a known section */
	int line;
};

static void set_once(char **field, const char *v)
{
	if (!*field && *v)
		*field = xstrdup(v);
}

/* The first verdict given counts; words hotloop does not know are none. */
static void set_verdict(struct kb_entry *e, const char *v)
{
	int k = verdict_kind_parse(v);

	if (!e->verdict && k > 0)
		e->verdict = (enum verdict_kind)k;
}

static void field(struct parser *ps, const char *key, const char *v)
{
	struct kb_entry *e = ps->e;
	char *end;

	if (!strcmp(key, "function")) {
		set_once(&e->function, v);
	} else if (!strcmp(key, "verdict")) {
		set_verdict(e, v);
	} else if (!strcmp(key, "lens")) {
		set_once(&e->lens, v);
	} else if (!strcmp(key, "agent")) {
		set_once(&e->agent, v);
	} else if (!strcmp(key, "change")) {
		set_once(&e->change, v);
	} else if (!strcmp(key, "commit")) {
		if (strcasecmp(v, "none") && strcmp(v, "-"))
			set_once(&e->commit, v);
	} else if (!strcmp(key, "date")) {
		if (*v && !e->when && parse_date(v, &e->when, &e->utc_offset))
			warning("%s:%d: cannot read the date '%s' (expected YYYY-MM-DD [hh:mm:ss +hhmm]): ignored",
				ps->name, ps->line, v);
	} else if (!strcmp(key, "round")) {
		long r;

		errno = 0;
		r = strtol(v, &end, 10);
		if (*v && !e->round && (errno || end == v || *end || r < 1 || r > 1000000))
			warning("%s:%d: round '%s' is not a whole number from 1: ignored", ps->name, ps->line, v);
		else if (*v && !e->round)
			e->round = (int)r;
	} else if (!strcmp(key, "expected-gain") || !strcmp(key, "expected")) {
		double g;

		if (!*v || !strcasecmp(v, "none") || !strcmp(v, "-") || !isnan(e->expected_gain_pct))
			goto seen;
		errno = 0;
		g = strtod(v, &end);
		while (*end == ' ')
			end++;
		if (*end == '%')
			end++;
		if (errno || end == v || *end || !isfinite(g) || fabs(g) > 1e6)
			warning("%s:%d: expected gain '%s' is not a percentage: ignored", ps->name, ps->line, v);
		else
			e->expected_gain_pct = g;
	} else {
		return;
	}
seen:
	ps->seen = true;
}

/* "- key: value" (or "* key: value") before the first section: 0, else -1. */
static int front_field(struct parser *ps, char *l)
{
	char key[32], *colon;
	size_t n = 0, k;

	l += strspn(l, " ");
	if ((*l != '-' && *l != '*') || l[1] != ' ')
		return -1;
	l += 1 + strspn(l + 1, " ");
	colon = strchr(l, ':');
	if (!colon)
		return -1;
	k = (size_t)(colon - l);
	while (k && l[k - 1] == ' ')
		k--;
	if (!k || k >= sizeof(key))
		return -1;
	for (size_t i = 0; i < k; i++) {
		char c = l[i];

		if (!isalnum((unsigned char)c) && c != ' ' && c != '_' && c != '-')
			return -1;
		key[n++] = c == ' ' || c == '_' ? '-' : (char)tolower((unsigned char)c);
	}
	key[n] = '\0';
	colon++;
	colon += strspn(colon, " \t");
	k = strlen(colon);
	while (k && (colon[k - 1] == ' ' || colon[k - 1] == '\t'))
		colon[--k] = '\0';
	field(ps, key, colon);
	return 0;
}

static enum section section_of(const char *name)
{
	static const struct { const char *name; enum section s; } names[] = {
		{ "what", SEC_WHAT }, { "hypothesis", SEC_HYPOTHESIS }, { "results", SEC_RESULTS },
		{ "result", SEC_RESULTS }, { "verdict", SEC_VERDICT },
	};
	char buf[32];
	size_t n;

	while (is_space(*name))
		name++;
	n = strlen(name);
	while (n && is_space(name[n - 1]))
		n--;
	if (n >= sizeof(buf))
		return SEC_OTHER;
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)name[i]);
	buf[n] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(buf, names[i].name))
			return names[i].s;
	return SEC_OTHER;
}

static void end_reason(struct kb_entry *e, struct strbuf *r)
{
	size_t start = strspn(r->buf, " \t");

	strbuf_rtrim(r);
	ALLOC_GROW(e->reasons, e->nr_reasons + 1, e->alloc_reasons);
	e->reasons[e->nr_reasons++] = xstrdup(r->buf + (start < r->len ? start : r->len));
	strbuf_reset(r);
}

/*
 * The Verdict section: list items are reasons (lines indented by two
 * spaces or a tab continue one, blank lines inside kept); the first other
 * line is the verdict when the front block has none.
 */
static void verdict_section(struct kb_entry *e, const char *text)
{
	struct strbuf r = STRBUF_INIT;
	const char *p = text;
	bool item = false, have_line = false;
	size_t blanks = 0;

	while (*p) {
		const char *nl = strchrnul(p, '\n');
		size_t len = (size_t)(nl - p);

		if (((*p == '-' || *p == '*') && (len == 1 ? *p == '-' : p[1] == ' '))) {
			if (item)
				end_reason(e, &r);
			item = true;
			blanks = 0;
			if (len > 1)
				strbuf_add(&r, p + 2, len - 2);
		} else if (item && !len) {
			blanks++;
		} else if (item && (*p == '\t' || (len >= 2 && p[0] == ' ' && p[1] == ' '))) {
			size_t skip = *p == '\t' ? 1 : 2;

			strbuf_addchars(&r, '\n', blanks + 1);
			blanks = 0;
			strbuf_add(&r, p + skip, len - skip);
		} else {
			if (item)
				end_reason(e, &r);
			item = false;
			if (!have_line && len && !is_space(*p)) {
				char *v = xstrndup(p, len);
				size_t a = strspn(v, "*`_ \t"), b = strlen(v);

				while (b > a && strchr("*`_ \t", v[b - 1]))
					b--;
				if (b > a) {
					v[b] = '\0';
					set_verdict(e, v + a);
					have_line = true;
				}
				free(v);
			}
		}
		p = *nl ? nl + 1 : nl;
	}
	if (item)
		end_reason(e, &r);
	strbuf_release(&r);
}

int kb_parse_report(const char *buf, size_t len, const char *name, struct kb_entry *e)
{
	struct strbuf clean = STRBUF_INIT, l = STRBUF_INIT;
	struct parser ps = { name, e, { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT },
			     false, 0 };
	enum section sec = SEC_PRE;
	char **texts[] = { NULL, &e->what, &e->hypothesis, &e->results };
	const char *p;
	int ret = -1;

	kb_entry_init(e);
	if (len > KB_REPORT_MAX) {
		warning("'%s' is larger than %d bytes, not a report: skipped", name, KB_REPORT_MAX);
		goto out;
	}
	if (memchr(buf, '\0', len)) {
		warning("'%s' holds NUL bytes, not a report: skipped", name);
		goto out;
	}
	add_clean(&clean, buf, len);
	for (p = clean.buf; *p;) {
		const char *nl = strchrnul(p, '\n');
		size_t bs;

		ps.line++;
		strbuf_reset(&l);
		strbuf_add(&l, p, (size_t)(nl - p));
		p = *nl ? nl + 1 : nl;
		if (!strncmp(l.buf, "## ", 3) || !strcmp(l.buf, "##")) {
			sec = section_of(l.buf + 2 + (l.len > 2));
			ps.seen |= sec != SEC_OTHER;
			continue;
		}
		if (sec == SEC_PRE) {
			if (!strncmp(l.buf, "# ", 2) && !e->title && (e->title = trimmed(l.buf + 2, l.len - 2)))
				ps.seen = true;
			else
				front_field(&ps, l.buf);
			continue;
		}
		if (sec == SEC_OTHER)
			continue;
		bs = strspn(l.buf, "\\");
		strbuf_add(&ps.text[sec], l.buf + (bs && l.buf[bs] == '#'), l.len - (bs && l.buf[bs] == '#'));
		strbuf_addch(&ps.text[sec], '\n');
	}
	for (int s = SEC_WHAT; s <= SEC_RESULTS; s++)
		*texts[s] = trimmed(ps.text[s].buf, ps.text[s].len);
	verdict_section(e, ps.text[SEC_VERDICT].buf);
	if (!ps.seen) {
		warning("'%s' has no title, field or section of a report: skipped", name);
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < ARRAY_SIZE(ps.text); i++)
		strbuf_release(&ps.text[i]);
	strbuf_release(&clean);
	strbuf_release(&l);
	return ret;
}

/* ---- files on disk --------------------------------------------------------- */

/* Read at most 'cap' bytes of 'path' quietly: 0, 1 when it does not exist, -1 (errno, or EFBIG). */
static int read_capped(struct strbuf *sb, const char *path, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret, saved;

	if (fd < 0)
		return errno == ENOENT ? 1 : -1;
	ret = strbuf_read_fd(sb, fd, cap);
	saved = errno;
	close(fd);
	errno = saved;
	return ret;
}

static int fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (fsync(fd) < 0 && errno != EINVAL)
		ret = error("cannot sync '%s': %s", path, strerror(errno));
	close(fd);
	return ret;
}

/* The knowledge base's directory, made when missing. */
static int make_kb_dir(const char *dir)
{
	struct stat st;

	if (!*dir)
		return error("the knowledge base directory is empty");
	if (mkdir_p(dir))
		return -1;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return error("cannot use '%s' as the knowledge base: not a directory", dir);
	return 0;
}

/* kb/.gitignore, when there is none: a killed writer's leftovers are never committed. */
static int keep_tmp_out_of_git(const char *kb_dir)
{
	static const char text[] = TMP_PREFIX "*\n*.tmp.*\n";
	char *path = xstrfmt("%s/.gitignore", kb_dir);
	int ret = 0;

	if (access(path, F_OK) && errno == ENOENT)
		ret = write_file_atomic(path, text, sizeof(text) - 1);
	free(path);
	return ret;
}

/* Remove the temp dirs of writers that died (or started long ago); problems are warnings. */
static void clean_tmp(const char *kb_dir)
{
	DIR *d = opendir(kb_dir);
	struct dirent *de;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *num = de->d_name + strlen(TMP_PREFIX);
		char *end, *path;
		struct stat st;
		long pid;

		if (strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)))
			continue;
		path = xstrfmt("%s/%s", kb_dir, de->d_name);
		errno = 0;
		pid = strtol(num, &end, 10);
		if (!errno && end != num && *end == '-' && pid > 0 && pid <= 0x7fffffff &&
		    (!kill((pid_t)pid, 0) || errno == EPERM) &&
		    !lstat(path, &st) && st.st_mtime > now - TMP_STALE_S) {
			free(path);
			continue;	/* its writer may still be at work */
		}
		if (remove_tree(path))
			warning("cannot remove the leftover '%s'", path);
		free(path);
	}
	closedir(d);
}

/* ---- diffs ----------------------------------------------------------------- */

struct diff_file {
	char *path;
	unsigned long added, removed;
};

static void diff_file_add(struct diff_file **files, size_t *nr, size_t *alloc, const char *p, size_t len)
{
	if (len >= 2 && (p[0] == 'a' || p[0] == 'b') && p[1] == '/')
		p += 2, len -= 2;
	for (size_t i = 0; i < *nr; i++)
		if (strlen((*files)[i].path) == len && !memcmp((*files)[i].path, p, len))
			return;
	ALLOC_GROW(*files, *nr + 1, *alloc);
	(*files)[*nr].path = xstrndup(p, len);
	(*files)[*nr].added = (*files)[*nr].removed = 0;
	(*nr)++;
}

/* Hunk counts "@@ -a,b +c,d @@": the line counts b and d (1 when left out). */
static bool hunk_counts(const char *l, unsigned long *old, unsigned long *new)
{
	unsigned long o, n;
	char *end;

	if (strncmp(l, "@@ -", 4))
		return false;
	strtoul(l + 4, &end, 10);
	o = *end == ',' ? strtoul(end + 1, &end, 10) : 1;
	if (strncmp(end, " +", 2))
		return false;
	strtoul(end + 2, &end, 10);
	n = *end == ',' ? strtoul(end + 1, &end, 10) : 1;
	if (strncmp(end, " @@", 3))
		return false;
	*old = o;
	*new = n;
	return true;
}

/* The files a unified diff touches, with lines added and removed. */
static size_t diff_files(const char *diff, struct diff_file **files)
{
	size_t nr = 0, alloc = 0;
	unsigned long old = 0, new = 0;
	const char *p = diff, *minus = NULL;

	*files = NULL;
	while (p && *p) {
		const char *nl = strchrnul(p, '\n');
		size_t len = (size_t)(nl - p);
		struct diff_file *cur = nr ? &(*files)[nr - 1] : NULL;

		if (old || new) {
			if (*p == '-' && old) {
				old--;
				if (cur)
					cur->removed++;
			} else if (*p == '+' && new) {
				new--;
				if (cur)
					cur->added++;
			} else if (*p == ' ' || !len) {
				old -= old > 0;
				new -= new > 0;
			} else if (*p != '\\') {
				old = new = 0;
			}
		} else if (!strncmp(p, "--- ", 4)) {
			minus = p + 4;
		} else if (!strncmp(p, "+++ ", 4)) {
			const char *name = p + 4;
			size_t n = strcspn(name, "\t\n");

			if (n == 9 && !strncmp(name, "/dev/null", 9) && minus) {
				name = minus;
				n = strcspn(name, "\t\n");
			}
			diff_file_add(files, &nr, &alloc, name, n);
		} else {
			hunk_counts(p, &old, &new);
		}
		p = *nl ? nl + 1 : NULL;
	}
	return nr;
}

static void add_files(struct strbuf *sb, const struct diff_file *f, size_t nr)
{
	if (!nr) {
		strbuf_addstr(sb, "No files changed.");
		return;
	}
	strbuf_addstr(sb, "Files changed: ");
	for (size_t i = 0; i < nr; i++)
		strbuf_addf(sb, "%s`%s` (+%lu -%lu)", i ? ", " : "", f[i].path, f[i].added, f[i].removed);
	strbuf_addch(sb, '.');
}

/* The longest run of backticks starting a line, so a fence can be longer. */
static size_t longest_fence(const char *s)
{
	size_t best = 0;

	for (const char *p = s; p && *p;) {
		size_t n = strspn(p, "`");
		const char *nl = strchr(p, '\n');

		if (n > best)
			best = n;
		p = nl ? nl + 1 : NULL;
	}
	return best;
}

static void format_diff(struct strbuf *sb, const char *title, const char *diff,
			const struct diff_file *files, size_t nr)
{
	size_t fence = longest_fence(diff ? diff : "") + 1;

	strbuf_addf(sb, "# Diff: %s\n\n", title ? title : "attempt");
	add_files(sb, files, nr);
	strbuf_addstr(sb, "\n");
	if (!diff || !*diff)
		return;
	if (fence < 3)
		fence = 3;
	strbuf_addch(sb, '\n');
	strbuf_addchars(sb, '`', fence);
	strbuf_addstr(sb, "diff\n");
	strbuf_addstr(sb, diff);
	if (diff[strlen(diff) - 1] != '\n')
		strbuf_addch(sb, '\n');
	strbuf_addchars(sb, '`', fence);
	strbuf_addch(sb, '\n');
}

int kb_read_diff(const struct kb_entry *e, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT, clean = STRBUF_INIT;
	char *path = xstrfmt("%s/diff.md", e->dir);
	const char *p;
	size_t fence = 0;
	int r = read_capped(&sb, path, KB_DIFF_MAX), ret = 0;

	if (r < 0) {
		ret = error("cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	add_clean(&clean, sb.buf, sb.len);
	for (p = clean.buf; *p;) {
		const char *nl = strchrnul(p, '\n');
		size_t n = strspn(p, "`"), len = (size_t)(nl - p);

		if (!fence) {
			if (n >= 3 && len - n >= 4 && !strncmp(p + n, "diff", 4) &&
			    strspn(p + n + 4, " \t") == len - n - 4)
				fence = n;
		} else if (n >= fence && strspn(p + n, " \t") == len - n) {
			break;
		} else {
			strbuf_add(out, p, len);
			strbuf_addch(out, '\n');
		}
		p = *nl ? nl + 1 : nl;
	}
out:
	strbuf_release(&sb);
	strbuf_release(&clean);
	free(path);
	return ret;
}

/* ---- loading --------------------------------------------------------------- */

static int cmp_entries(const void *a, const void *b)
{
	const struct kb_entry *x = a, *y = b;

	if (x->when != y->when)
		return x->when < y->when ? 1 : -1;
	if (x->round != y->round)
		return x->round < y->round ? 1 : -1;
	return -strcmp(x->slug, y->slug);
}

static void load_entry(struct kb *kb, const char *name)
{
	char *dir = xstrfmt("%s/%s", kb->dir, name), *path = xstrfmt("%s/report.md", dir);
	struct strbuf sb = STRBUF_INIT;
	struct kb_entry e;
	struct stat st;
	int r;

	kb_entry_init(&e);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		goto out;
	r = read_capped(&sb, path, KB_REPORT_MAX);
	if (r > 0) {
		warning("'%s' has no report.md: skipped", dir);
		goto out;
	}
	if (r < 0) {
		warning("cannot read '%s': %s: skipped", path,
			errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
		goto out;
	}
	if (kb_parse_report(sb.buf, sb.len, path, &e))
		goto out;
	e.slug = xstrdup(name);
	e.dir = dir;
	dir = NULL;
	if (!e.when)
		e.when = slug_date(name);
	ALLOC_GROW(kb->entries, kb->nr + 1, kb->alloc);
	kb->entries[kb->nr++] = e;
	kb_entry_init(&e);
out:
	kb_entry_release(&e);
	strbuf_release(&sb);
	free(path);
	free(dir);
}

int kb_load(const char *kb_dir, struct kb *kb)
{
	DIR *d;
	struct dirent *de;

	memset(kb, 0, sizeof(*kb));
	kb->dir = xstrdup(kb_dir);
	d = opendir(kb_dir);
	if (!d)
		return errno == ENOENT ? 0 : error("cannot open the knowledge base '%s': %s", kb_dir,
						   strerror(errno));
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			load_entry(kb, de->d_name);
	closedir(d);
	if (kb->nr)
		qsort(kb->entries, kb->nr, sizeof(*kb->entries), cmp_entries);
	return 0;
}

void kb_release(struct kb *kb)
{
	for (size_t i = 0; i < kb->nr; i++)
		kb_entry_release(&kb->entries[i]);
	free(kb->entries);
	free(kb->dir);
	memset(kb, 0, sizeof(*kb));
}

/* ---- the index ------------------------------------------------------------- */

void kb_index_text(const struct kb *kb, size_t max_entries, struct strbuf *out)
{
	size_t kept = 0, rejected = 0, shown = kb->nr;

	strbuf_addstr(out, "# Knowledge base: what was tried\n\n");
	if (!kb->nr) {
		strbuf_addstr(out, "No attempts yet.\n");
		return;
	}
	for (size_t i = 0; i < kb->nr; i++) {
		kept += kb->entries[i].verdict == VERDICT_KEEP;
		rejected += kb->entries[i].verdict == VERDICT_REJECT;
	}
	strbuf_addf(out, "%zu attempt%s, newest first: %zu kept, %zu rejected, %zu other.\n\n", kb->nr,
		    kb->nr == 1 ? "" : "s", kept, rejected, kb->nr - kept - rejected);
	if (max_entries && max_entries < shown)
		shown = max_entries;
	for (size_t i = 0; i < shown; i++) {
		const struct kb_entry *e = &kb->entries[i];

		strbuf_addf(out, "- **%s** (", e->slug);
		kb_entry_day(e, out);
		if (e->round > 0)
			strbuf_addf(out, ", round %d", e->round);
		strbuf_addf(out, "): %s", e->verdict ? verdict_kind_name(e->verdict) : "no verdict");
		if (e->function)
			strbuf_addf(out, " `%s`", e->function);
		if (e->change)
			strbuf_addf(out, " %s", e->change);
		strbuf_addch(out, '\n');
		if (e->hypothesis) {
			strbuf_addstr(out, "  hypothesis: ");
			kb_one_line(out, e->hypothesis, ONE_LINE_MAX);
			strbuf_addch(out, '\n');
		}
		if (e->nr_reasons && *e->reasons[0]) {
			strbuf_addstr(out, "  reason: ");
			kb_one_line(out, e->reasons[0], ONE_LINE_MAX);
			strbuf_addch(out, '\n');
		}
	}
	if (shown < kb->nr)
		strbuf_addf(out, "\n%zu older attempt%s not shown (`hotloop kb list`).\n", kb->nr - shown,
			    kb->nr - shown == 1 ? " is" : "s are");
}

static int write_index(const char *kb_dir)
{
	struct strbuf sb = STRBUF_INIT;
	struct kb kb;
	char *path = xstrfmt("%s/index.md", kb_dir);
	int ret = kb_load(kb_dir, &kb);

	if (!ret) {
		kb_index_text(&kb, 0, &sb);
		ret = write_file_atomic(path, sb.buf, sb.len);
	}
	kb_release(&kb);
	strbuf_release(&sb);
	free(path);
	return ret;
}

/* ---- adding ---------------------------------------------------------------- */

static int rename_noreplace(const char *from, const char *to)
{
	struct stat st;

	if (!renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (!lstat(to, &st)) {		/* a file system without RENAME_NOREPLACE */
		errno = EEXIST;
		return -1;
	}
	return rename(from, to);
}

static void entry_from_attempt(struct kb_entry *e, const struct kb_attempt *a,
			       const struct diff_file *files, size_t nr_files)
{
	struct strbuf what = STRBUF_INIT;
	struct tm tm;

	kb_entry_init(e);
	e->title = one_line(a->title);
	e->function = one_line(a->function);
	e->lens = one_line(a->lens);
	e->agent = one_line(a->agent);
	e->verdict = a->verdict;
	e->change = one_line(a->change);
	e->commit = one_line(a->commit);
	e->hypothesis = a->hypothesis ? trimmed(a->hypothesis, strlen(a->hypothesis)) : NULL;
	e->results = a->results ? trimmed(a->results, strlen(a->results)) : NULL;
	for (size_t i = 0; i < a->nr_reasons; i++) {
		char *r = a->reasons[i] ? trimmed(a->reasons[i], strlen(a->reasons[i])) : NULL;

		ALLOC_GROW(e->reasons, e->nr_reasons + 1, e->alloc_reasons);
		e->reasons[e->nr_reasons++] = r ? r : xstrdup("");
	}
	e->expected_gain_pct = isfinite(a->expected_gain_pct) ? a->expected_gain_pct : NAN;
	e->round = a->round > 0 ? a->round : 0;
	e->when = a->when;
	if (localtime_r(&a->when, &tm))
		e->utc_offset = (int)tm.tm_gmtoff;
	if (e->title)
		strbuf_addf(&what, "%s", e->title);
	if (e->function)
		strbuf_addf(&what, "%sin `%s`", e->title ? ", " : "A change ", e->function);
	if (e->lens)
		strbuf_addf(&what, "%s(lens: %s)", what.len ? " " : "", e->lens);
	strbuf_addstr(&what, what.len ? ".\n\n" : "");
	add_files(&what, files, nr_files);
	e->what = strbuf_detach(&what, NULL);
}

int kb_add(const char *kb_dir, const struct kb_attempt *a, char **slug_out)
{
	static unsigned counter;
	struct strbuf report = STRBUF_INIT, diff = STRBUF_INIT, name = STRBUF_INIT;
	struct diff_file *files = NULL;
	size_t nr_files = a->diff ? diff_files(a->diff, &files) : 0;
	struct kb_entry e;
	char *tmp = NULL, *rp = NULL, *dp = NULL, *slug = NULL, *dst = NULL;
	struct tm tm;
	int ret = -1;

	kb_entry_init(&e);
	if (a->verdict <= VERDICT_NONE || a->verdict >= VERDICT_NR) {
		error("an attempt without a verdict cannot go into the knowledge base");
		goto out;
	}
	if (!localtime_r(&a->when, &tm)) {
		error("invalid time of an attempt: %lld", (long long)a->when);
		goto out;
	}
	if (make_kb_dir(kb_dir) || keep_tmp_out_of_git(kb_dir))
		goto out;
	clean_tmp(kb_dir);
	entry_from_attempt(&e, a, files, nr_files);
	kb_format_report(&e, &report);
	format_diff(&diff, e.title, a->diff, files, nr_files);
	for (;;) {
		free(tmp);
		tmp = xstrfmt("%s/%s%ld-%u", kb_dir, TMP_PREFIX, (long)getpid(),
			      __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
		if (!mkdir(tmp, 0777))
			break;
		if (errno != EEXIST) {
			error("cannot create '%s': %s", tmp, strerror(errno));
			free(tmp);
			tmp = NULL;
			goto out;
		}
	}
	rp = xstrfmt("%s/report.md", tmp);
	dp = xstrfmt("%s/diff.md", tmp);
	if (write_file_atomic(rp, report.buf, report.len) || write_file_atomic(dp, diff.buf, diff.len) ||
	    fsync_dir(tmp))
		goto out;
	slug = kb_slug(e.title ? e.title : e.function);
	for (unsigned n = 1; ; n++) {
		strbuf_reset(&name);
		strbuf_addf(&name, "%s-%02d%02d%04d", slug, tm.tm_mday, tm.tm_mon + 1, tm.tm_year + 1900);
		if (n > 1)
			strbuf_addf(&name, "-%u", n);
		free(dst);
		dst = xstrfmt("%s/%s", kb_dir, name.buf);
		if (!rename_noreplace(tmp, dst))
			break;
		if ((errno != EEXIST && errno != ENOTEMPTY && errno != ENOTDIR) || n >= 10000) {
			error("cannot rename '%s' to '%s': %s", tmp, dst, strerror(errno));
			goto out;
		}
	}
	free(tmp);
	tmp = NULL;			/* in place: nothing to clean up */
	/* the entry is in place: the index is only derived from the entries */
	if (fsync_dir(kb_dir) || write_index(kb_dir))
		warning("'%s/index.md' is not up to date; the next attempt added writes it again", kb_dir);
	if (slug_out)
		*slug_out = strbuf_detach(&name, NULL);
	ret = 0;
out:
	if (tmp)
		remove_tree(tmp);
	for (size_t i = 0; i < nr_files; i++)
		free(files[i].path);
	free(files);
	kb_entry_release(&e);
	strbuf_release(&report);
	strbuf_release(&diff);
	strbuf_release(&name);
	free(tmp);
	free(rp);
	free(dp);
	free(slug);
	free(dst);
	return ret;
}

/* ---- finding --------------------------------------------------------------- */

static bool has_word(const struct kb_entry *e, const char *w)
{
	if ((e->title && strcasestr(e->title, w)) || (e->function && strcasestr(e->function, w)) ||
	    (e->hypothesis && strcasestr(e->hypothesis, w)) || strcasestr(e->slug ? e->slug : "", w))
		return true;
	for (size_t i = 0; i < e->nr_reasons; i++)
		if (strcasestr(e->reasons[i], w))
			return true;
	return false;
}

size_t kb_find(const struct kb *kb, const char *function, const char *const *words, size_t nr_words,
	       const struct kb_entry **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < kb->nr; i++) {
		const struct kb_entry *e = &kb->entries[i];
		bool all = true;

		if (function && (!e->function || strcmp(e->function, function)))
			continue;
		for (size_t w = 0; w < nr_words && all; w++)
			all = has_word(e, words[w]);
		if (!all)
			continue;
		if (n < max)
			out[n] = e;
		n++;
	}
	return n;
}

const struct kb_entry *kb_lookup(const struct kb *kb, const char *slug)
{
	const struct kb_entry *found = NULL;
	size_t len = strlen(slug), nr = 0;

	for (size_t i = 0; i < kb->nr; i++)
		if (!strcmp(kb->entries[i].slug, slug))
			return &kb->entries[i];
	for (size_t i = 0; i < kb->nr; i++) {
		const char *s = kb->entries[i].slug;

		if (len && !strncmp(s, slug, len) && s[len] == '-') {
			found = &kb->entries[i];
			nr++;
		}
	}
	return nr == 1 ? found : NULL;
}

size_t kb_suggest(const struct kb *kb, const char *slug, const struct kb_entry **out, size_t max)
{
	size_t len = strlen(slug), limit = len / 3 > 2 ? len / 3 : 2, n = 0;
	size_t *dist = xcalloc(kb->nr ? kb->nr : 1, sizeof(*dist));

	for (size_t i = 0; i < kb->nr; i++) {
		const char *s = kb->entries[i].slug;
		time_t t;
		const char *date = slug_date_at(s, &t);
		char *base = date ? xstrndup(s, (size_t)(date - s)) : xstrdup(s);
		size_t d;

		/* also against the slug without its date, the part people type */
		d = edit_distance(slug, s);
		if (edit_distance(slug, base) < d)
			d = edit_distance(slug, base);
		if (len && strstr(s, slug))
			d = 1;
		dist[i] = d;
		free(base);
	}
	for (size_t pick = 0; pick < max; pick++) {
		size_t best = SIZE_MAX;

		for (size_t i = 0; i < kb->nr; i++)
			if (dist[i] <= limit && (best == SIZE_MAX || dist[i] < dist[best]))
				best = i;
		if (best == SIZE_MAX)
			break;
		out[n++] = &kb->entries[best];
		dist[best] = SIZE_MAX;
	}
	free(dist);
	return n;
}

/* ---- JSON and config ------------------------------------------------------- */

json_t *kb_entry_to_json(const struct kb_entry *e, const char *diff)
{
	json_t *o = json_object(), *r = json_array();
	struct strbuf date = STRBUF_INIT;

	json_object_set_new(o, "slug", json_text(e->slug));
	json_object_set_new(o, "dir", json_text(e->dir));
	json_object_set_new(o, "title", json_text(e->title));
	json_object_set_new(o, "function", json_text(e->function));
	json_object_set_new(o, "verdict", json_text(verdict_kind_names[e->verdict]));
	if (e->when)
		add_date(&date, e->when, e->utc_offset, true);
	json_object_set_new(o, "date", e->when ? json_string(date.buf) : json_null());
	json_object_set_new(o, "round", e->round ? json_integer(e->round) : json_null());
	json_object_set_new(o, "lens", json_text(e->lens));
	json_object_set_new(o, "agent", json_text(e->agent));
	json_object_set_new(o, "expected_gain_pct",
			    isnan(e->expected_gain_pct) ? json_null() : json_real(e->expected_gain_pct));
	json_object_set_new(o, "change", json_text(e->change));
	json_object_set_new(o, "commit", json_text(e->commit));
	json_object_set_new(o, "what", json_text(e->what));
	json_object_set_new(o, "hypothesis", json_text(e->hypothesis));
	json_object_set_new(o, "results", json_text(e->results));
	for (size_t i = 0; i < e->nr_reasons; i++)
		json_array_append_new(r, json_text(e->reasons[i]));
	json_object_set_new(o, "reasons", r);
	if (diff)
		json_object_set_new(o, "diff", json_text(diff));
	strbuf_release(&date);
	return o;
}

char *kb_dir_of_config(const struct config *cf, const char *conf_path)
{
	const char *slash = strrchr(conf_path, '/');

	if (cf->kb[0] == '/')
		return xstrdup(cf->kb);
	if (!slash)
		return xstrdup(cf->kb);
	return xstrfmt("%.*s/%s", (int)(slash == conf_path ? 0 : slash - conf_path), conf_path, cf->kb);
}
