/*
 * rules.h: evd's rules, loaded from its config file, and their evaluation.
 * A rule is "ACTION [kind=KIND|*] [uid=UID|*] [path=GLOB]"; the first rule
 * that matches an event decides what happens to it. The ruleset owns the
 * rule texts it loaded.
 */
#ifndef RULES_H
#define RULES_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

enum rule_action { RULE_ALLOW, RULE_DENY, RULE_AUDIT };

#define RULE_TEXT_MAX 200	/* characters of one rule, as written */

struct rule {
	enum rule_action action;
	int kind;			/* enum ev_kind, or -1: any */
	int64_t uid;			/* or -1: any */
	char path[RULE_TEXT_MAX + 1];	/* lowercase glob; "" matches any path */
};

struct ruleset {
	char **text;			/* each rule as written, comments and blanks trimmed */
	int *line;			/* its line in the file */
	size_t nr, alloc;
};

#define RULESET_INIT { NULL, NULL, 0, 0 }

/*
 * Parse one rule's TEXT into R: 0, or -1 with a message in ERR (which may be
 * NULL when the text is known to be good).
 */
int rule_parse(const char *text, struct rule *r, char *err, size_t errlen);

/* Does R match EV? */
int rule_test(const struct rule *r, const struct event *ev);

/* Does PATTERN ('*' any run of characters, '?' one) match all of S? */
int glob_match(const char *pattern, const char *s);

/*
 * Load the rules of FILE into RS: 0, or -1 with "FILE:LINE: what is wrong"
 * in ERR (and RS left empty).
 */
int ruleset_load(struct ruleset *rs, const char *file, char *err, size_t errlen);
void ruleset_release(struct ruleset *rs);

/*
 * The index of the first rule that matches EV, its action in *ACTION; or -1
 * when none does.
 */
int ruleset_match(const struct ruleset *rs, const struct event *ev, enum rule_action *action);

#endif
