/*
 * rules.c: reading evd's rule file and matching events against it. The file
 * is checked whole when it is loaded, so a typo stops evd at start (exit 2)
 * rather than silently never matching; the rules are kept as written.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The next space-separated word of *P, NUL-terminated in place; NULL at the end. */
static char *next_word(char **p)
{
	char *s = *p, *word;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	word = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return word;
}

int rule_parse(const char *text, struct rule *r, char *err, size_t errlen)
{
	char buf[RULE_TEXT_MAX + 1], *p = buf, *word;
	size_t len = strlen(text);
	int seen_kind = 0, seen_uid = 0, seen_path = 0;

	if (len > RULE_TEXT_MAX)
		return fail(err, errlen, "rule longer than %d characters", RULE_TEXT_MAX);
	memcpy(buf, text, len + 1);
	r->kind = -1;
	r->uid = -1;
	r->path[0] = '\0';

	word = next_word(&p);
	if (!word)
		return fail(err, errlen, "empty rule");
	if (!strcmp(word, "allow"))
		r->action = RULE_ALLOW;
	else if (!strcmp(word, "deny"))
		r->action = RULE_DENY;
	else if (!strcmp(word, "audit"))
		r->action = RULE_AUDIT;
	else
		return fail(err, errlen, "unknown action '%s' (expected allow, deny or audit)", word);

	while ((word = next_word(&p))) {
		char *val = strchr(word, '='), *end;

		if (!val || val == word)
			return fail(err, errlen, "expected KEY=VALUE, not '%s'", word);
		*val++ = '\0';
		if (!strcmp(word, "kind")) {
			if (seen_kind++)
				return fail(err, errlen, "'kind' given twice");
			if (strcmp(val, "*")) {
				r->kind = kind_parse(val, strlen(val));
				if (r->kind < 0)
					return fail(err, errlen, "unknown kind '%s' (expected exec, open, connect, unlink, chmod, rename or *)", val);
			}
		} else if (!strcmp(word, "uid")) {
			unsigned long v;

			if (seen_uid++)
				return fail(err, errlen, "'uid' given twice");
			if (strcmp(val, "*")) {
				errno = 0;
				v = strtoul(val, &end, 10);
				if (!*val || *end || errno || *val == '-' || v > UINT32_MAX)
					return fail(err, errlen, "bad uid '%s' (expected a number or *)", val);
				r->uid = (int64_t)v;
			}
		} else if (!strcmp(word, "path")) {
			size_t i;

			if (seen_path++)
				return fail(err, errlen, "'path' given twice");
			if (*val != '/' && *val != '*')
				return fail(err, errlen, "bad path '%s' (expected a glob starting with / or *)", val);
			for (i = 0; val[i]; i++)
				r->path[i] = (char)tolower((unsigned char)val[i]);
			r->path[i] = '\0';
		} else {
			return fail(err, errlen, "unknown key '%s' (expected kind, uid or path)", word);
		}
	}
	return 0;
}

int glob_match(const char *p, const char *s)
{
	const char *star = NULL, *retry = NULL;

	while (*s) {
		if (*p == '*') {
			star = ++p;
			retry = s;
		} else if (*p == '?' || *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++retry;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

int rule_test(const struct rule *r, const struct event *ev)
{
	char path[EV_PATH_MAX];
	size_t i;

	/* paths match without regard to case: /TMP/X.SH is /tmp/x.sh */
	for (i = 0; ev->path[i] && i < sizeof(path) - 1; i++)
		path[i] = (char)tolower((unsigned char)ev->path[i]);
	path[i] = '\0';

	if (r->kind >= 0 && (uint32_t)r->kind != ev->kind)
		return 0;
	if (r->uid >= 0 && (uint32_t)r->uid != ev->uid)
		return 0;
	return !r->path[0] || glob_match(r->path, path);
}

int ruleset_match(const struct ruleset *rs, const struct event *ev, enum rule_action *action)
{
	for (size_t i = 0; i < rs->nr; i++) {
		struct rule r;

		if (rule_parse(rs->text[i], &r, NULL, 0))
			continue;
		if (rule_test(&r, ev)) {
			*action = r.action;
			return (int)i;
		}
	}
	return -1;
}

static int ruleset_add(struct ruleset *rs, const char *text, int line)
{
	if (rs->nr == rs->alloc) {
		size_t alloc = rs->alloc ? 2 * rs->alloc : 64;
		char **t = realloc(rs->text, alloc * sizeof(*t));
		int *l;

		if (!t)
			return -1;
		rs->text = t;
		l = realloc(rs->line, alloc * sizeof(*l));
		if (!l)
			return -1;
		rs->line = l;
		rs->alloc = alloc;
	}
	rs->text[rs->nr] = strdup(text);
	if (!rs->text[rs->nr])
		return -1;
	rs->line[rs->nr++] = line;
	return 0;
}

int ruleset_load(struct ruleset *rs, const char *file, char *err, size_t errlen)
{
	char buf[1024], msg[256];
	FILE *f = fopen(file, "r");
	int line = 0, ret = -1;

	if (!f)
		return fail(err, errlen, "cannot open '%s': %s", file, strerror(errno));
	while (fgets(buf, sizeof(buf), f)) {
		size_t len = strlen(buf);
		char *s = buf, *hash;
		struct rule r;

		line++;
		if (len == sizeof(buf) - 1 && buf[len - 1] != '\n') {
			fail(err, errlen, "%s:%d: line too long", file, line);
			goto out;
		}
		hash = strchr(s, '#');
		if (hash)
			*hash = '\0';
		len = strlen(s);
		while (len && strchr(" \t\r\n", s[len - 1]))
			s[--len] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			continue;
		if (rule_parse(s, &r, msg, sizeof(msg))) {
			fail(err, errlen, "%s:%d: %s", file, line, msg);
			goto out;
		}
		if (ruleset_add(rs, s, line)) {
			fail(err, errlen, "out of memory");
			goto out;
		}
	}
	if (ferror(f)) {
		fail(err, errlen, "cannot read '%s': %s", file, strerror(errno));
		goto out;
	}
	if (!rs->nr) {
		fail(err, errlen, "%s: no rules", file);
		goto out;
	}
	ret = 0;
out:
	fclose(f);
	if (ret)
		ruleset_release(rs);
	return ret;
}

void ruleset_release(struct ruleset *rs)
{
	for (size_t i = 0; i < rs->nr; i++)
		free(rs->text[i]);
	free(rs->text);
	free(rs->line);
	rs->text = NULL;
	rs->line = NULL;
	rs->nr = rs->alloc = 0;
}
