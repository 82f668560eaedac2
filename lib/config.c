/*
 * config.c: hotloop.conf (see config.h, docs/config.md). libinih splits the
 * text into sections and key = value pairs; the line reader we hand it strips
 * comments (quote-aware), checks each line's shape and parses section headers
 * with their quoted names; the handler checks each key against one table and
 * parses its value. Every error is reported, then the parse fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>
#include <jansson.h>

#include "util.h"
#include "json.h"
#include "strbuf.h"
#include "config.h"
#include "judge.h"

#define CONFIG_MAX_BYTES (1 << 20)
#define CONFIG_MAX_NAME 64

enum sect { S_NONE, S_PROJECT, S_GATE, S_IMPROVE, S_AGENT, S_PR,
	    S_WORKLOAD, S_METRIC, S_SCENARIO, S_CANARY, S_BAD };

static const char *sect_names[] = {
	[S_PROJECT] = "project", [S_GATE] = "gate", [S_IMPROVE] = "improve",
	[S_AGENT] = "agent", [S_PR] = "pr", [S_WORKLOAD] = "workload", [S_METRIC] = "metric",
	[S_SCENARIO] = "scenario", [S_CANARY] = "canary",
};

enum kind { K_STRING, K_LIST, K_WORDS, K_BOOL, K_TIMEOUT, K_DURATION,
	    K_PERCENT, K_SIZE, K_COUNT, K_FACTOR, K_METRIC, K_BETTER, K_SIZES, K_RAM_ON };

struct key_spec {
	enum sect sect;
	const char *key;
	enum kind kind;
	size_t offset;		/* into struct config, config_workload or metric_rule */
	long max;		/* K_COUNT: 1..max */
};

#define C(f) offsetof(struct config, f)
#define W(f) offsetof(struct config_workload, f)
#define M(f) offsetof(struct metric_rule, f)

static const struct key_spec keys[] = {
	{ S_PROJECT, "build", K_STRING, C(build), 0 },
	{ S_PROJECT, "build-timeout", K_TIMEOUT, C(build_timeout_s), 0 },
	{ S_PROJECT, "owned", K_LIST, C(owned), 0 },
	{ S_PROJECT, "protected", K_LIST, C(protected_paths), 0 },
	{ S_PROJECT, "kb", K_STRING, C(kb), 0 },
	{ S_PROJECT, "brief-budget", K_COUNT, C(brief_budget), 10000000 },
	{ S_GATE, "test", K_STRING, C(test), 0 },
	{ S_GATE, "fingerprint", K_BOOL, C(fingerprint), 0 },
	{ S_GATE, "heap", K_BOOL, C(heap), 0 },
	{ S_GATE, "canary", K_STRING, C(gate_canary), 0 },
	{ S_GATE, "timeout", K_TIMEOUT, C(gate_timeout_s), 0 },
	{ S_GATE, "writable", K_LIST, C(gate_writable), 0 },
	{ S_IMPROVE, "metric", K_METRIC, C(rules.metric), 0 },
	{ S_IMPROVE, "min-improvement", K_PERCENT, C(rules.min_improvement), 0 },
	{ S_IMPROVE, "guard-regression", K_PERCENT, C(rules.guard_regression), 0 },
	{ S_IMPROVE, "guard-floor", K_DURATION, C(rules.guard_floor_s), 0 },
	{ S_IMPROVE, "ram-budget", K_SIZE, C(rules.ram_budget), 0 },
	{ S_IMPROVE, "ram-budget-on", K_RAM_ON, C(rules.ram_on), 0 },
	{ S_IMPROVE, "suspicious-speedup", K_FACTOR, C(rules.suspicious_speedup), 0 },
	{ S_IMPROVE, "rounds", K_COUNT, C(rounds), 10000 },
	{ S_IMPROVE, "max-rejects-in-a-row", K_COUNT, C(max_rejects_in_a_row), 10000 },
	{ S_IMPROVE, "min-share", K_PERCENT, C(min_share), 0 },
	{ S_IMPROVE, "max-file-size", K_SIZE, C(max_file_size), 0 },
	{ S_IMPROVE, "allow-binary", K_BOOL, C(allow_binary), 0 },
	{ S_IMPROVE, "require-target-gain", K_BOOL, C(require_target_gain), 0 },
	{ S_IMPROVE, "lenses", K_WORDS, C(lenses), 0 },
	{ S_AGENT, "command", K_STRING, C(agent_command), 0 },
	{ S_AGENT, "timeout", K_TIMEOUT, C(agent_timeout_s), 0 },
	{ S_AGENT, "prompt", K_STRING, C(agent_prompt), 0 },
	{ S_AGENT, "writable", K_LIST, C(agent_writable), 0 },
	{ S_PR, "command", K_STRING, C(pr_command), 0 },
	{ S_WORKLOAD, "run", K_STRING, W(run), 0 },
	{ S_WORKLOAD, "primary", K_BOOL, W(primary), 0 },
	{ S_WORKLOAD, "timeout", K_TIMEOUT, W(timeout_s), 0 },
	{ S_WORKLOAD, "sizes", K_SIZES, W(sizes), 0 },
	{ S_WORKLOAD, "scenario", K_STRING, W(scenario), 0 },
	{ S_METRIC, "better", K_BETTER, M(higher_is_better), 0 },
	{ S_METRIC, "tolerance", K_PERCENT, M(tolerance), 0 },
};

/* A key seen in one section instance (spec -1: the section header). */
struct seen {
	enum sect sect;
	size_t idx;
	int spec;
	int line;
};

struct parse_ctx {
	struct config *c;
	const char *buf;
	size_t len, pos;
	int lineno;
	enum sect sect;		/* the section the reader is in */
	size_t idx;		/* which workload, metric or scenario */
	int nr_errors;
	struct seen *seen;
	size_t nr_seen, alloc_seen;
};

static void list_clear(struct config_list *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->nr = l->alloc = 0;
}

static void list_add(struct config_list *l, const char *s, size_t n)
{
	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	l->v[l->nr++] = xstrndup(s, n);
}

static void list_split(struct config_list *l, const char *s, const char *seps)
{
	list_clear(l);
	while (*s) {
		size_t n;

		s += strspn(s, seps);
		n = strcspn(s, seps);
		if (n)
			list_add(l, s, n);
		s += n;
	}
}

void config_init(struct config *c)
{
	struct gate_rules rules = GATE_RULES_DEFAULT;

	memset(c, 0, sizeof(*c));
	c->file = xstrdup(CONFIG_FILE);
	c->build = xstrdup("");
	c->build_timeout_s = 30 * 60;
	list_add(&c->protected_paths, CONFIG_FILE, strlen(CONFIG_FILE));
	c->kb = xstrdup("kb");
	c->brief_budget = CONFIG_BRIEF_BUDGET;
	c->test = xstrdup("");
	c->gate_canary = xstrdup("");
	c->fingerprint = true;
	c->gate_timeout_s = 60;
	c->rules = rules;
	c->rounds = 10;
	c->max_rejects_in_a_row = 3;
	c->min_share = 0.05;
	c->max_file_size = 1 << 20;
	list_add(&c->lenses, "algorithmic", strlen("algorithmic"));
	c->agent_command = xstrdup("");
	c->agent_prompt = xstrdup("");
	c->agent_timeout_s = 20 * 60;
	c->pr_command = xstrdup("");
}

void config_release(struct config *c)
{
	free(c->file);
	free(c->build);
	list_clear(&c->owned);
	list_clear(&c->gate_writable);
	list_clear(&c->agent_writable);
	list_clear(&c->protected_paths);
	free(c->kb);
	free(c->test);
	free(c->gate_canary);
	list_clear(&c->lenses);
	free(c->agent_command);
	free(c->agent_prompt);
	free(c->pr_command);
	for (size_t i = 0; i < c->nr_workloads; i++) {
		free(c->workloads[i].name);
		free(c->workloads[i].run);
		free(c->workloads[i].scenario);
		free(c->workloads[i].sizes);
	}
	free(c->workloads);
	gate_rules_release(&c->rules);
	for (size_t i = 0; i < c->nr_scenarios; i++) {
		struct config_scenario *s = &c->scenarios[i];

		for (size_t j = 0; j < s->nr_phases; j++) {
			free(s->phases[j].name);
			free(s->phases[j].kind);
			free(s->phases[j].load);
		}
		free(s->phases);
		free(s->name);
		free(s->start);
		free(s->ready_arg);
		free(s->metrics_arg);
		free(s->judge_name);
	}
	free(c->scenarios);
	for (size_t i = 0; i < c->nr_canaries; i++) {
		struct config_canary *k = &c->canaries[i];

		free(k->name);
		free(k->svc.start);
		free(k->svc.ready_arg);
		free(k->path);
		free(k->method);
		free(k->body);
		free(k->request_file);
		free(k->line_text);
		list_clear(&k->headers);
		free(k->load);
	}
	free(c->canaries);
	memset(c, 0, sizeof(*c));
}

static void conf_error(struct parse_ctx *ctx, int line, const char *fmt, ...) ATTR_PRINTF(3, 4);
static void conf_error(struct parse_ctx *ctx, int line, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (line > 0)
		strbuf_addf(&sb, "%s:%d: ", ctx->c->file, line);
	else
		strbuf_addf(&sb, "%s: ", ctx->c->file);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	error("%s", sb.buf);
	strbuf_release(&sb);
	ctx->nr_errors++;
}

/* " (did you mean 'x'?)", or [x] for a section, for the nearest of 'names' within two edits. */
static void add_suggestion(struct strbuf *sb, const char *word, const char **names, size_t n,
			   bool section)
{
	const char *best = NULL;
	size_t best_d = 3;

	for (size_t i = 0; i < n; i++) {
		size_t d;

		if (!names[i])
			continue;
		d = edit_distance(word, names[i]);
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	if (best)
		strbuf_addf(sb, section ? " (did you mean [%s]?)" : " (did you mean '%s'?)", best);
}

/* --- value parsers --------------------------------------------------- */

/* A plain decimal: digits, optionally '.' and digits. The rest in *end. */
static int parse_decimal(const char *s, double *out, const char **end)
{
	const char *p = s;
	size_t digits = 0;
	char tmp[64];

	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++, digits++;
	}
	if (!digits || (size_t)(p - s) >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, p - s);
	tmp[p - s] = '\0';
	*out = strtod(tmp, NULL);
	*end = p;
	return 0;
}

int config_parse_percent(const char *s, double *out)
{
	const char *end;
	double v;

	if (parse_decimal(s, &v, &end) || strcmp(end, "%") || v > 100)
		return -1;
	*out = v / 100;
	return 0;
}

int config_parse_duration(const char *s, double *out)
{
	/* divide for ms: 5 / 1000.0 is the double nearest 0.005, 5 * 0.001 is not */
	static const struct { const char *unit; double mul, div; } units[] = {
		{ "ms", 1, 1000 }, { "s", 1, 1 }, { "m", 60, 1 }, { "h", 3600, 1 },
	};
	const char *end;
	double v;

	if (parse_decimal(s, &v, &end))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].unit)) {
			v = v * units[i].mul / units[i].div;
			if (v > 366.0 * 24 * 3600)
				return -1;
			*out = v;
			return 0;
		}
	}
	return -1;
}

int config_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	uint64_t v = 0, mul = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return -1;
	if (*p && strchr(units, *p)) {
		for (const char *u = units; *u; u++) {
			mul *= 1024;
			if (*u == *p)
				break;
		}
		p++;
		if (!strcmp(p, "iB") || !strcmp(p, "B"))
			p += strlen(p);
	} else if (!strcmp(p, "B")) {
		p++;
	}
	if (*p || __builtin_mul_overflow(v, mul, &v) || v > INT64_MAX)
		return -1;
	*out = v;
	return 0;
}

int config_parse_bool(const char *s, bool *out)
{
	static const char *yes[] = { "yes", "true", "on", "1" };
	static const char *no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int config_parse_sizes(const char *s, uint64_t **sizes, size_t *nr, struct strbuf *why)
{
	uint64_t *v = NULL;
	size_t n = 0, alloc = 0;

	*sizes = NULL;
	*nr = 0;
	while (*s) {
		size_t len;
		uint64_t x = 0;

		s += strspn(s, " \t,");
		len = strcspn(s, " \t,");
		if (!len)
			break;
		for (size_t i = 0; i < len; i++) {
			if (s[i] < '0' || s[i] > '9' || x > CONFIG_MAX_SIZE / 10) {
				x = 0;
				break;
			}
			x = x * 10 + (uint64_t)(s[i] - '0');
		}
		if (!x || x > CONFIG_MAX_SIZE) {
			strbuf_addf(why, "'%.*s' is not a whole number from 1 to %llu", (int)len, s,
				    (unsigned long long)CONFIG_MAX_SIZE);
			goto fail;
		}
		if (n == CONFIG_MAX_SIZES) {
			strbuf_addf(why, "more than %d sizes", CONFIG_MAX_SIZES);
			goto fail;
		}
		ALLOC_GROW(v, n + 1, alloc);
		v[n++] = x;
		s += len;
	}
	if (n < CONFIG_MIN_SIZES) {
		if (n)
			strbuf_addf(why, "only %zu size%s", n, n == 1 ? "" : "s");
		else
			strbuf_addstr(why, "no sizes");
		goto fail;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 1; i < n; i++) {
		if (v[i] == v[i - 1]) {
			strbuf_addf(why, "%llu appears twice", (unsigned long long)v[i]);
			goto fail;
		}
	}
	*sizes = v;
	*nr = n;
	return 0;
fail:
	free(v);
	return -1;
}

static int parse_count_value(const char *s, long max, long *out)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	if (v < 1)
		return -1;
	*out = v;
	return 0;
}

static int parse_factor(const char *s, double *out)
{
	const char *end;
	double v;

	if (parse_decimal(s, &v, &end) || (*end && strcmp(end, "x")) || v <= 1 || v > 1e6)
		return -1;
	*out = v;
	return 0;
}

static bool is_word_char(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
}

/* Section and key names: a lowercase letter, then letters, digits and '-'. */
static bool valid_key(const char *s, size_t n)
{
	if (!n || n > CONFIG_MAX_NAME || s[0] < 'a' || s[0] > 'z')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_word_char(s[i]))
			return false;
	return true;
}

/* Workload, metric and scenario names. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > CONFIG_MAX_NAME)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
			return false;
	}
	return true;
}

/* The quote that closes the one at s[0], past backslash escapes; NULL when none does. */
static const char *closing_quote(const char *s)
{
	for (s++; *s && *s != '"'; s++)
		if (*s == '\\' && s[1])
			s++;
	return *s ? s : NULL;
}

/*
 * A value wrapped whole in "..." loses its quotes, and a backslash inside
 * escapes one of " \ # ;. Any other value is kept as written, quotes and
 * backslashes included, for the shell that runs it (the reader has already
 * kept a '#' or ';' inside its quotes from starting a comment). NULL with
 * *why when the quoting is broken.
 */
static char *unquote(const char *s, const char **why)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(s);
	const char *p;

	if (!n || s[0] != '"')
		return xstrdup(s);
	p = closing_quote(s);
	if (!p) {
		*why = "unterminated quote";
		return NULL;
	}
	if (p != s + n - 1)
		return xstrdup(s);	/* "a" b: quotes inside a value */
	for (p = s + 1; p < s + n - 1; p++) {
		if (*p == '\\') {
			if (!strchr("\"\\#;", p[1])) {
				*why = "unknown escape: inside quotes write \\\", \\\\, \\# or \\;";
				strbuf_release(&sb);
				return NULL;
			}
			p++;
		}
		strbuf_addch(&sb, *p);
	}
	return strbuf_detach(&sb, NULL);
}

/* --- sections -------------------------------------------------------- */

static const struct seen *find_seen(struct parse_ctx *ctx, enum sect sect, size_t idx, int spec)
{
	for (size_t i = 0; i < ctx->nr_seen; i++)
		if (ctx->seen[i].sect == sect && ctx->seen[i].idx == idx && ctx->seen[i].spec == spec)
			return &ctx->seen[i];
	return NULL;
}

static void add_seen(struct parse_ctx *ctx, enum sect sect, size_t idx, int spec, int line)
{
	ALLOC_GROW(ctx->seen, ctx->nr_seen + 1, ctx->alloc_seen);
	ctx->seen[ctx->nr_seen++] = (struct seen){ sect, idx, spec, line };
}

/* Index of named section 'name' of kind 'sect', or SIZE_MAX. */
static size_t find_named(const struct config *c, enum sect sect, const char *name)
{
	size_t n = sect == S_WORKLOAD ? c->nr_workloads :
		   sect == S_METRIC ? c->rules.nr_metrics :
		   sect == S_CANARY ? c->nr_canaries : c->nr_scenarios;

	for (size_t i = 0; i < n; i++) {
		const char *have = sect == S_WORKLOAD ? c->workloads[i].name :
				   sect == S_METRIC ? c->rules.metrics[i].name :
				   sect == S_CANARY ? c->canaries[i].name :
				   c->scenarios[i].name;
		if (!strcmp(have, name))
			return i;
	}
	return SIZE_MAX;
}

static void canary_defaults(struct config_canary *k, char *name, int line);

static void new_named(struct parse_ctx *ctx, enum sect sect, char *name)
{
	struct config *c = ctx->c;
	size_t dup = find_named(c, sect, name);

	if (dup != SIZE_MAX) {
		const struct seen *first = find_seen(ctx, sect, dup, -1);
		conf_error(ctx, ctx->lineno, "duplicate [%s \"%s\"] (first on line %d)",
			   sect_names[sect], name, first ? first->line : 0);
		free(name);
		ctx->sect = S_BAD;
		return;
	}
	if (sect == S_WORKLOAD) {
		ALLOC_GROW(c->workloads, c->nr_workloads + 1, c->alloc_workloads);
		c->workloads[c->nr_workloads] = (struct config_workload){
			.name = name, .line = ctx->lineno };
		ctx->idx = c->nr_workloads++;
	} else if (sect == S_METRIC) {
		ALLOC_GROW(c->rules.metrics, c->rules.nr_metrics + 1, c->alloc_metrics);
		c->rules.metrics[c->rules.nr_metrics] = (struct metric_rule){
			.name = name, .higher_is_better = true, .tolerance = 0.02 };
		ctx->idx = c->rules.nr_metrics++;
	} else if (sect == S_CANARY) {
		ALLOC_GROW(c->canaries, c->nr_canaries + 1, c->alloc_canaries);
		canary_defaults(&c->canaries[c->nr_canaries], name, ctx->lineno);
		ctx->idx = c->nr_canaries++;
	} else {
		ALLOC_GROW(c->scenarios, c->nr_scenarios + 1, c->alloc_scenarios);
		c->scenarios[c->nr_scenarios] = (struct config_scenario){
			.name = name, .line = ctx->lineno, .ready_timeout_s = 10, .interval_s = 0.1,
			.stop_signal = SIGTERM, .stop_grace_s = 10, .leak_tolerance = 0.1, .runs = 6 };
		ctx->idx = c->nr_scenarios++;
	}
	add_seen(ctx, sect, ctx->idx, -1, ctx->lineno);
}

/* A header, comments removed: [name] or [name "sub"]. */
static void parse_section(struct parse_ctx *ctx, const char *s, size_t n)
{
	char name[CONFIG_MAX_NAME + 1];
	const char *p = s + 1, *end = s + n - 1, *why = NULL;
	size_t nlen;
	char *sub = NULL;
	int found = -1;

	ctx->sect = S_BAD;
	if (n < 2 || *end != ']')
		goto malformed;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	nlen = 0;
	while (p + nlen < end && is_word_char(p[nlen]))
		nlen++;
	if (!valid_key(p, nlen))
		goto malformed;
	memcpy(name, p, nlen);
	name[nlen] = '\0';
	p += nlen;
	if (p < end && (*p == ' ' || *p == '\t')) {
		const char *q;
		char *raw;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			goto named;
		if (*p != '"')
			goto malformed;
		/* the closing quote, skipping escapes */
		for (q = p + 1; q < end && *q != '"'; q++)
			if (*q == '\\' && q + 1 < end)
				q++;
		if (q >= end)
			goto malformed;
		raw = xstrndup(p, q - p + 1);
		sub = unquote(raw, &why);
		free(raw);
		if (!sub)
			goto malformed;
		for (p = q + 1; p < end && (*p == ' ' || *p == '\t'); p++)
			;
		if (p != end)
			goto malformed;
	} else if (p != end) {
		goto malformed;
	}
named:
	for (size_t i = 0; i < ARRAY_SIZE(sect_names); i++)
		if (sect_names[i] && !strcmp(sect_names[i], name))
			found = (int)i;
	if (found < 0) {
		struct strbuf sb = STRBUF_INIT;

		add_suggestion(&sb, name, sect_names, ARRAY_SIZE(sect_names), true);
		conf_error(ctx, ctx->lineno, "unknown section [%s]%s", name, sb.buf);
		strbuf_release(&sb);
		goto out;
	}
	if (found >= S_WORKLOAD) {
		if (!sub) {
			conf_error(ctx, ctx->lineno, "[%s] needs a name: [%s \"NAME\"]", name, name);
			goto out;
		}
		if (!valid_name(sub)) {
			conf_error(ctx, ctx->lineno, "invalid %s name \"%s\": use 1 to %d letters, digits, '_', '-' or '.'",
				   name, sub, CONFIG_MAX_NAME);
			goto out;
		}
		ctx->sect = found;
		new_named(ctx, found, sub);
		return;
	}
	if (sub) {
		conf_error(ctx, ctx->lineno, "[%s] takes no name: write [%s]", name, name);
		goto out;
	}
	ctx->sect = found;
	ctx->idx = 0;
	goto out;
malformed:
	conf_error(ctx, ctx->lineno, "malformed section header%s%s: write [name] or [name \"NAME\"]",
		   why ? ": " : "", why ? why : "");
out:
	free(sub);
}

/* --- the line reader libinih pulls from ---------------------------- */

static char *config_reader(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;

	while (ctx->pos < ctx->len) {
		const char *line = ctx->buf + ctx->pos, *nl;
		size_t n, i, cut;
		bool inq = false;

		nl = memchr(line, '\n', ctx->len - ctx->pos);
		n = nl ? (size_t)(nl - line) : ctx->len - ctx->pos;
		ctx->pos += n + !!nl;
		ctx->lineno++;
		if (ctx->lineno == 1 && n >= 3 && !memcmp(line, "\xef\xbb\xbf", 3))
			line += 3, n -= 3;
		if (memchr(line, '\0', n)) {
			conf_error(ctx, ctx->lineno, "NUL byte in line");
			ctx->sect = line[0] == '[' ? S_BAD : ctx->sect;
			continue;
		}
		for (i = 0; i < n; ) {
			size_t clen;

			if (utf8_decode((const unsigned char *)line + i, &clen) < 0)
				break;
			i += clen;
		}
		if (i < n) {
			conf_error(ctx, ctx->lineno, "invalid UTF-8");
			ctx->sect = line[0] == '[' ? S_BAD : ctx->sect;
			continue;
		}
		while (n && (line[0] == ' ' || line[0] == '\t'))
			line++, n--;
		for (cut = n, i = 0; i < n; i++) {
			if (line[i] == '\\' && i + 1 < n) {
				i++;
			} else if (line[i] == '"') {
				inq = !inq;
			} else if (!inq && (line[i] == '#' || line[i] == ';')) {
				cut = i;
				break;
			}
		}
		n = cut;
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
			n--;
		if (!n)
			continue;
		if (inq) {
			conf_error(ctx, ctx->lineno, "unterminated quote");
			if (line[0] == '[')
				ctx->sect = S_BAD;
			continue;
		}
		if (num < 3 || n > (size_t)num - 2) {
			conf_error(ctx, ctx->lineno, "line too long: at most %d characters besides indentation and comments",
				   num - 2);
			if (line[0] == '[')
				ctx->sect = S_BAD;
			continue;
		}
		if (line[0] == '[') {
			parse_section(ctx, line, n);
		} else {
			const char *eq = memchr(line, '=', n);
			size_t klen;

			if (!eq) {
				conf_error(ctx, ctx->lineno, "expected 'key = value' or a [section]");
				continue;
			}
			for (klen = eq - line; klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t'); klen--)
				;
			if (!valid_key(line, klen)) {
				conf_error(ctx, ctx->lineno, "invalid key '%.*s': use lowercase letters, digits and '-'",
					   (int)klen, line);
				continue;
			}
			if (ctx->sect == S_NONE) {
				conf_error(ctx, ctx->lineno, "'%.*s' is outside any section", (int)klen, line);
				continue;
			}
			/* libinih ends a value at a ';' after a space, even inside quotes */
			for (i = eq - line + 1; i + 1 < n; i++) {
				if ((line[i] == ' ' || line[i] == '\t') && line[i + 1] == ';') {
					conf_error(ctx, ctx->lineno, "write a ';' after a space as '\\;'");
					break;
				}
			}
			if (i + 1 < n)
				continue;
		}
		memcpy(str, line, n);
		str[n] = '\n';
		str[n + 1] = '\0';
		return str;
	}
	return NULL;
}

/* --- the key handler ----------------------------------------------- */

static void set_value(struct parse_ctx *ctx, const struct key_spec *k, void *base,
		      const char *key, const char *v)
{
	void *field = (char *)base + k->offset;
	const char *expect = NULL;

	switch (k->kind) {
	case K_STRING:
		free(*(char **)field);
		*(char **)field = xstrdup(v);
		break;
	case K_LIST:
		list_split(field, v, " \t");
		break;
	case K_WORDS: {
		struct config_list *l = field;

		list_split(l, v, ", \t");
		for (size_t i = 0; i < l->nr; i++)
			if (!valid_key(l->v[i], strlen(l->v[i])))
				expect = "names of lowercase letters, digits and '-', separated by commas";
		if (!l->nr)
			expect = "at least one lens";
		break;
	}
	case K_BOOL:
		if (config_parse_bool(v, field))
			expect = "yes or no";
		break;
	case K_TIMEOUT:
		if (config_parse_duration(v, field) || *(double *)field <= 0)
			expect = "a duration above zero with a unit: ms, s, m or h (30s)";
		break;
	case K_DURATION:
		if (config_parse_duration(v, field))
			expect = "a duration with a unit: ms, s, m or h (5ms)";
		break;
	case K_PERCENT:
		if (config_parse_percent(v, field))
			expect = "a percentage from 0% to 100% (3%)";
		break;
	case K_SIZE:
		if (config_parse_size(v, field))
			expect = "a size in bytes, with K, M, G or T (2G)";
		break;
	case K_COUNT:
		if (parse_count_value(v, k->max, field))
			expect = k->max == 10000 ? "a whole number from 1 to 10000" : "a whole number";
		break;
	case K_FACTOR:
		if (parse_factor(v, field))
			expect = "a factor above 1 (20x)";
		break;
	case K_METRIC: {
		int m = gate_metric_parse(v);

		if (m < 0)
			expect = "cpu, wall or instructions";
		else
			*(enum gate_metric *)field = m;
		break;
	}
	case K_RAM_ON: {
		int r = gate_ram_parse(v);

		if (r < 0)
			expect = "rss or heap";
		else
			*(enum gate_ram *)field = r;
		break;
	}
	case K_SIZES: {
		struct config_workload *w = base;
		struct strbuf why = STRBUF_INIT;

		free(w->sizes);
		if (config_parse_sizes(v, &w->sizes, &w->nr_sizes, &why))
			conf_error(ctx, ctx->lineno, "bad value '%s' for '%s': %s; expected at least %d different whole numbers above 0 (1000 2000 4000)",
				   v, key, why.buf, CONFIG_MIN_SIZES);
		strbuf_release(&why);
		break;
	}
	case K_BETTER:
		if (!strcmp(v, "higher"))
			*(bool *)field = true;
		else if (!strcmp(v, "lower"))
			*(bool *)field = false;
		else
			expect = "higher or lower";
		break;
	}
	if (expect && k->kind == K_PERCENT) {
		char *hint = xstrfmt("%s%%", v);
		double tmp;

		if (!config_parse_percent(hint, &tmp))
			conf_error(ctx, ctx->lineno, "bad value '%s' for '%s': expected %s (did you mean '%s'?)",
				   v, key, expect, hint);
		else
			conf_error(ctx, ctx->lineno, "bad value '%s' for '%s': expected %s", v, key, expect);
		free(hint);
	} else if (expect) {
		conf_error(ctx, ctx->lineno, "bad value '%s' for '%s': expected %s", v, key, expect);
	}
}

static void section_label(struct parse_ctx *ctx, struct strbuf *sb)
{
	const struct config *c = ctx->c;

	if (ctx->sect == S_WORKLOAD)
		strbuf_addf(sb, "[workload \"%s\"]", c->workloads[ctx->idx].name);
	else if (ctx->sect == S_METRIC)
		strbuf_addf(sb, "[metric \"%s\"]", c->rules.metrics[ctx->idx].name);
	else
		strbuf_addf(sb, "[%s]", sect_names[ctx->sect]);
}

/* ---- [scenario "NAME"] ---------------------------------------------------- */

/* Each key once, but 'phase': the phases in order. */
static const char *const scenario_keys[] = {
	"start", "ready", "ready-timeout", "phase", "metrics", "interval", "stop", "profile",
	"judge", "port", "leak-tolerance", "runs",
};
enum { SK_PHASE = 3 };

static const struct { const char *name; int sig; } scenario_signals[] = {
	{ "TERM", SIGTERM }, { "INT", SIGINT }, { "HUP", SIGHUP }, { "QUIT", SIGQUIT },
	{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
};

const struct config_scenario *config_workload_scenario(const struct config *c, const struct config_workload *w)
{
	for (size_t i = 0; w->scenario && i < c->nr_scenarios; i++)
		if (!strcmp(c->scenarios[i].name, w->scenario))
			return &c->scenarios[i];
	return NULL;
}

const struct config_canary *config_find_canary(const struct config *c, const char *name)
{
	for (size_t i = 0; name && i < c->nr_canaries; i++)
		if (!strcmp(c->canaries[i].name, name))
			return &c->canaries[i];
	return NULL;
}

const char *config_signal_name(int sig)
{
	for (size_t i = 0; i < ARRAY_SIZE(scenario_signals); i++)
		if (scenario_signals[i].sig == sig)
			return scenario_signals[i].name;
	return NULL;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* The first word of s into *word (allocated); the rest, blanks skipped. */
static const char *first_word(const char *s, char **word)
{
	const char *e;

	s = skip_blanks(s);
	for (e = s; *e && *e != ' ' && *e != '\t'; e++)
		;
	*word = xstrndup(s, (size_t)(e - s));
	return skip_blanks(e);
}

static bool phase_kind_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 32 || s[0] < 'a' || s[0] > 'z')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* A port: "auto" (0) or 1..65535; -1 when not. */
static int parse_port(const char *s)
{
	char *e;
	long v;

	if (!strcmp(s, "auto"))
		return 0;
	errno = 0;
	v = strtol(s, &e, 10);
	return *s >= '0' && *s <= '9' && !*e && !errno && v >= 1 && v <= 65535 ? (int)v : -1;
}

/* "KIND DURATION[: LOAD]" or "KIND until-exit: LOAD"; NULL, or what was expected. */
static const char *parse_phase(const char *v, struct config_phase *ph)
{
	const char *colon = strchr(v, ':'), *rest;
	char *head = xstrndup(v, colon ? (size_t)(colon - v) : strlen(v)), *when = NULL;
	const char *expect = NULL;

	memset(ph, 0, sizeof(*ph));
	rest = first_word(head, &ph->kind);
	rest = first_word(rest, &when);
	if (!phase_kind_ok(ph->kind))
		expect = "a phase kind of lowercase letters, digits and '-' first (idle 30s)";
	else if (*rest)
		expect = "KIND DURATION, then ': COMMAND' for a load (pressure 120s: ./load)";
	else if (!strcmp(when, "until-exit"))
		ph->until_exit = true;
	else if (config_parse_duration(when, &ph->seconds) || ph->seconds <= 0)
		expect = "a duration above zero with a unit (30s), or until-exit with a load";
	if (!expect && colon) {
		const char *load = skip_blanks(colon + 1);

		if (!*load)
			expect = "a command after ':'";
		else
			ph->load = xstrdup(load);
	}
	if (!expect && ph->until_exit && !ph->load)
		expect = "a load command for an until-exit phase (pressure until-exit: ./load)";
	free(head);
	free(when);
	return expect;
}

static void scenario_key(struct parse_ctx *ctx, struct config_scenario *s, const char *sect,
			 const char *key, const char *v)
{
	const char *expect = NULL;
	char *word = NULL;
	const char *rest;
	int k = name_index(scenario_keys, ARRAY_SIZE(scenario_keys), key);

	if (k < 0) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "unknown key '%s' in [%s \"%s\"]", key, sect, s->name);
		add_suggestion(&sb, key, (const char **)scenario_keys, ARRAY_SIZE(scenario_keys), false);
		conf_error(ctx, ctx->lineno, "%s", sb.buf);
		strbuf_release(&sb);
		return;
	}
	if (k != SK_PHASE && (s->set & (1u << k))) {
		conf_error(ctx, ctx->lineno, "'%s' set twice in [%s \"%s\"]", key, sect, s->name);
		return;
	}
	s->set |= 1u << k;
	switch (k) {
	case 0:	/* start */
		if (!*skip_blanks(v))
			expect = "the service's command";
		else
			s->start = xstrdup(v);
		break;
	case 1:	/* ready */
		rest = first_word(v, &word);
		if (!strcmp(word, "none") && !*rest) {
			s->ready = SCENARIO_READY_NONE;
		} else if (!strcmp(word, "tcp") && (!strcmp(rest, "{port}") || parse_port(rest) > 0)) {
			s->ready = SCENARIO_READY_TCP;
		} else if (!strcmp(word, "log") && *rest) {
			regex_t re;

			if (regcomp(&re, rest, REG_EXTENDED | REG_NOSUB))
				expect = "log and an extended regular expression that compiles";
			else
				regfree(&re);
			s->ready = SCENARIO_READY_LOG;
		} else if (!strcmp(word, "file") && *rest) {
			s->ready = SCENARIO_READY_FILE;
		} else if (!strcmp(word, "cmd") && *rest) {
			s->ready = SCENARIO_READY_CMD;
		} else {
			expect = "tcp {port}, tcp PORT, log REGEX, file PATH, cmd COMMAND or none";
		}
		if (!expect && s->ready != SCENARIO_READY_NONE)
			s->ready_arg = xstrdup(rest);
		break;
	case 2:	/* ready-timeout */
		if (config_parse_duration(v, &s->ready_timeout_s) || s->ready_timeout_s <= 0)
			expect = "a duration above zero with a unit (10s)";
		break;
	case SK_PHASE: {
		struct config_phase ph;

		if ((expect = parse_phase(v, &ph))) {
			free(ph.kind);
			free(ph.load);
			break;
		}
		ph.line = ctx->lineno;
		ALLOC_GROW(s->phases, s->nr_phases + 1, s->alloc_phases);
		s->phases[s->nr_phases++] = ph;
		break;
	}
	case 4:	/* metrics */
		rest = first_word(v, &word);
		if (!strcmp(word, "output") && !*rest)
			s->metrics = SCENARIO_METRICS_OUTPUT;
		else if (!strcmp(word, "cmd") && *rest)
			s->metrics = SCENARIO_METRICS_CMD;
		else if (!strcmp(word, "http") && !strncmp(rest, "http://", 7) && !strpbrk(rest, " \t"))
			s->metrics = SCENARIO_METRICS_HTTP;
		else
			expect = "output, cmd COMMAND or http http://HOST:PORT/PATH";
		if (!expect && s->metrics != SCENARIO_METRICS_OUTPUT)
			s->metrics_arg = xstrdup(rest);
		break;
	case 5:	/* interval */
		if (config_parse_duration(v, &s->interval_s) || s->interval_s < 0.01 || s->interval_s > 10)
			expect = "a duration from 10ms to 10s (100ms)";
		break;
	case 6: {	/* stop */
		size_t i;

		rest = first_word(v, &word);
		for (i = 0; i < ARRAY_SIZE(scenario_signals) && strcmp(word, scenario_signals[i].name); i++)
			;
		if (i == ARRAY_SIZE(scenario_signals))
			expect = "a signal (TERM, INT, HUP, QUIT, KILL, USR1, USR2) and a grace time (TERM 10s)";
		else if (*rest && (config_parse_duration(rest, &s->stop_grace_s) || s->stop_grace_s < 0))
			expect = "a grace time after the signal (TERM 10s)";
		else
			s->stop_signal = scenario_signals[i].sig;
		break;
	}
	case 7:	/* profile */
		if (!strcmp(v, "none"))
			s->profile = SCENARIO_PROFILE_NONE;
		else if (!strcmp(v, "cpu"))
			s->profile = SCENARIO_PROFILE_CPU;
		else
			expect = "none or cpu";
		break;
	case 8:	/* judge */
		if (!phase_kind_ok(v))
			expect = "the name of a phase (pressure)";
		else
			s->judge_name = xstrdup(v);
		break;
	case 9:	/* port */
		if ((s->port = parse_port(v)) < 0) {
			s->port = 0;
			expect = "auto or a port from 1 to 65535";
		}
		break;
	case 10:	/* leak-tolerance */
		if (config_parse_percent(v, &s->leak_tolerance))
			expect = "a percentage from 0% to 100% (10%)";
		break;
	case 11: {	/* runs */
		char *e;

		errno = 0;
		s->runs = strtol(v, &e, 10);
		if (*v < '1' || *v > '9' || *e || errno || s->runs > 1000) {
			s->runs = 6;
			expect = "a number of runs from 1 to 1000 (6)";
		}
		break;
	}
	}
	if (expect)
		conf_error(ctx, ctx->lineno, "bad value for '%s' in [%s \"%s\"]: expected %s", key,
			   sect, s->name, expect);
	free(word);
}

/* After the whole file: start and phases there, phases named, the judge found. */
static void check_scenario(struct parse_ctx *ctx, struct config_scenario *s)
{
	if (!s->start)
		conf_error(ctx, s->line, "[scenario \"%s\"] has no 'start' command", s->name);
	if (!s->nr_phases)
		conf_error(ctx, s->line, "[scenario \"%s\"] has no phase: add 'phase = idle 30s' and others",
			   s->name);
	for (size_t i = 0; i < s->nr_phases; i++) {
		size_t same = 1;

		for (size_t j = 0; j < i; j++)
			same += !strcmp(s->phases[j].kind, s->phases[i].kind);
		s->phases[i].name = same > 1 ? xstrfmt("%s-%zu", s->phases[i].kind, same) :
					       xstrdup(s->phases[i].kind);
	}
	if (s->judge_name) {
		size_t i;

		for (i = 0; i < s->nr_phases && strcmp(s->phases[i].name, s->judge_name); i++)
			;
		if (i == s->nr_phases && s->nr_phases) {
			struct strbuf sb = STRBUF_INIT;

			for (size_t j = 0; j < s->nr_phases; j++)
				strbuf_addf(&sb, "%s'%s'", j ? ", " : "", s->phases[j].name);
			conf_error(ctx, s->line, "[scenario \"%s\"]: 'judge = %s' names no phase: the phases are %s",
				   s->name, s->judge_name, sb.buf);
			strbuf_release(&sb);
		}
		s->judge = i < s->nr_phases ? i : 0;
		return;
	}
	/* the first pressure phase, else the first with a load, else the first */
	s->judge = SIZE_MAX;
	for (size_t i = 0; i < s->nr_phases && s->judge == SIZE_MAX; i++)
		if (!strcmp(s->phases[i].kind, "pressure"))
			s->judge = i;
	for (size_t i = 0; i < s->nr_phases && s->judge == SIZE_MAX; i++)
		if (s->phases[i].load)
			s->judge = i;
	if (s->judge == SIZE_MAX)
		s->judge = 0;
}

/* ---- [canary "NAME"] ------------------------------------------------------ */

const char *const canary_metric_names[] = {
	"throughput", "p50", "p90", "p99", "p99.9", "errors", "cpu-per-request", "rss",
};

/* The service's keys: a scenario's, parsed by scenario_key(). */
static const char *const canary_service_keys[] = { "start", "ready", "ready-timeout", "stop", "port" };
static const char *const canary_keys[] = {
	"start", "ready", "ready-timeout", "stop", "port",
	"protocol", "path", "method", "header", "body", "request", "line", "rate", "schedule",
	"seed", "connections", "timeout", "load", "duration", "warmup", "window", "metric",
	"confidence", "pass-score", "marginal-score",
};
enum { CK_HEADER = 8, CK_METRIC = 21 };

static void canary_defaults(struct config_canary *k, char *name, int line)
{
	static const struct config_canary_metric defaults[CANARY__NR_METRICS] = {
		[CANARY_THROUGHPUT] = { JUDGE_DECREASE_BAD, 0.05, 0, 1, false, false },
		[CANARY_P50] = { JUDGE_INCREASE_BAD, 0.10, 0.0002, 1, false, false },
		[CANARY_P90] = { JUDGE_INCREASE_BAD, 0.10, 0.0002, 1, false, false },
		[CANARY_P99] = { JUDGE_INCREASE_BAD, 0.10, 0.0002, 1, false, true },
		[CANARY_P999] = { JUDGE_INCREASE_BAD, 0.20, 0.0005, 1, false, false },
		[CANARY_ERRORS] = { JUDGE_INCREASE_BAD, 0, 0.001, 1, true, false },
		[CANARY_CPU_PER_REQUEST] = { JUDGE_INCREASE_BAD, 0.05, 0, 3, false, false },
		[CANARY_RSS] = { JUDGE_INCREASE_BAD, 0.10, 1024, 1, false, false },
	};

	memset(k, 0, sizeof(*k));
	k->name = name;
	k->line = line;
	k->svc = (struct config_scenario){ .name = name, .line = line, .ready = SCENARIO_READY_NONE,
					   .ready_timeout_s = 10, .interval_s = 0.1,
					   .stop_signal = SIGTERM, .stop_grace_s = 10, .runs = 1 };
	k->proto = CANARY_HTTP;
	k->seed = 1;
	k->connections = 4;
	k->timeout_s = 2;
	k->duration_s = 10;
	k->warmup_s = 2;
	k->window_s = 1;
	memcpy(k->metrics, defaults, sizeof(defaults));
	k->confidence = 0.99;
	k->pass_score = 95;
	k->marginal_score = 75;
}

/* "NAME [increase-bad|decrease-bad|either] [tolerance PCT] [abs-tolerance X] [weight W] [critical] [spread]" */
static const char *parse_canary_metric(struct config_canary *k, const char *v)
{
	char *word = NULL;
	const char *rest = first_word(v, &word), *expect = NULL;
	struct config_canary_metric m;
	size_t i;

	for (i = 0; i < CANARY__NR_METRICS && strcmp(word, canary_metric_names[i]); i++)
		;
	if (i == CANARY__NR_METRICS) {
		free(word);
		return "a metric (throughput, p50, p90, p99, p99.9, errors, cpu-per-request, rss), "
		       "then increase-bad, decrease-bad or either, tolerance PCT, abs-tolerance X, weight W, "
		       "critical, not-critical, spread or off";
	}
	m = k->metrics[i];
	while (!expect && *rest) {
		char *w = NULL, *arg = NULL, *e;

		rest = first_word(rest, &w);
		if (!strcmp(w, "increase-bad"))
			m.direction = JUDGE_INCREASE_BAD;
		else if (!strcmp(w, "decrease-bad"))
			m.direction = JUDGE_DECREASE_BAD;
		else if (!strcmp(w, "either"))
			m.direction = JUDGE_EITHER_BAD;
		else if (!strcmp(w, "critical"))
			m.critical = true;
		else if (!strcmp(w, "not-critical"))
			m.critical = false;
		else if (!strcmp(w, "spread"))
			m.spread = true;
		else if (!strcmp(w, "off"))
			m.weight = 0;
		else if (!strcmp(w, "tolerance") || !strcmp(w, "abs-tolerance") || !strcmp(w, "weight")) {
			double x;

			rest = first_word(rest, &arg);
			if (!strcmp(w, "tolerance")) {
				if (config_parse_percent(arg, &m.tolerance))
					expect = "tolerance and a percentage (10%)";
			} else {
				errno = 0;
				x = strtod(arg, &e);
				if (!*arg || *e || errno || !isfinite(x) || x < 0 || (!strcmp(w, "weight") && x > 1000))
					expect = !strcmp(w, "weight") ? "weight and a number from 0 to 1000" :
									"abs-tolerance and a number of the metric's unit (0.001)";
				else if (!strcmp(w, "weight"))
					m.weight = x;
				else
					m.abs_tolerance = x;
			}
		} else {
			expect = "increase-bad, decrease-bad, either, tolerance PCT, abs-tolerance X, weight W, "
				 "critical, not-critical, spread or off after the metric's name";
		}
		free(w);
		free(arg);
	}
	if (!expect)
		k->metrics[i] = m;
	free(word);
	return expect;
}

static void canary_key(struct parse_ctx *ctx, struct config_canary *k, const char *key, const char *v)
{
	const char *expect = NULL;
	int n = name_index(canary_keys, ARRAY_SIZE(canary_keys), key);
	char *e;

	for (size_t i = 0; i < ARRAY_SIZE(canary_service_keys); i++)
		if (!strcmp(key, canary_service_keys[i])) {
			scenario_key(ctx, &k->svc, "canary", key, v);
			return;
		}
	if (n < 0) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "unknown key '%s' in [canary \"%s\"]", key, k->name);
		add_suggestion(&sb, key, (const char **)canary_keys, ARRAY_SIZE(canary_keys), false);
		conf_error(ctx, ctx->lineno, "%s", sb.buf);
		strbuf_release(&sb);
		return;
	}
	if (n != CK_HEADER && n != CK_METRIC && (k->set & (1u << n))) {
		conf_error(ctx, ctx->lineno, "'%s' set twice in [canary \"%s\"]", key, k->name);
		return;
	}
	k->set |= 1u << n;
	errno = 0;
	if (!strcmp(key, "protocol")) {
		if (!strcmp(v, "http"))
			k->proto = CANARY_HTTP;
		else if (!strcmp(v, "line"))
			k->proto = CANARY_LINE;
		else
			expect = "http or line";
	} else if (!strcmp(key, "path")) {
		if (v[0] != '/' || strpbrk(v, " \t\r\n"))
			expect = "a path from '/' without blanks (/check)";
		else
			k->path = xstrdup(v);
	} else if (!strcmp(key, "method")) {
		if (!*v || strpbrk(v, " \t\r\n"))
			expect = "a method (GET, POST)";
		else
			k->method = xstrdup(v);
	} else if (!strcmp(key, "header")) {
		const char *colon = strchr(v, ':');

		if (!colon || colon == v || strpbrk(v, "\r\n"))
			expect = "'Name: value'";
		else
			list_add(&k->headers, v, strlen(v));
	} else if (!strcmp(key, "body")) {
		k->body = xstrdup(v);
	} else if (!strcmp(key, "request")) {
		if (!*v)
			expect = "a file of HTTP requests";
		else
			k->request_file = xstrdup(v);
	} else if (!strcmp(key, "line")) {
		if (!*v || strpbrk(v, "\r\n"))
			expect = "the request line to send";
		else
			k->line_text = xstrdup(v);
	} else if (!strcmp(key, "rate")) {
		k->rate = strtod(v, &e);
		if (!*v || *e || errno || !isfinite(k->rate) || k->rate <= 0 || k->rate > 1e7)
			expect = "requests a second, above 0 (200)";
	} else if (!strcmp(key, "schedule")) {
		if (!strcmp(v, "constant"))
			k->poisson = false;
		else if (!strcmp(v, "poisson"))
			k->poisson = true;
		else
			expect = "constant or poisson";
	} else if (!strcmp(key, "seed")) {
		unsigned long long x = strtoull(v, &e, 10);

		if (*v < '0' || *v > '9' || *e || errno)
			expect = "a number (1)";
		else
			k->seed = x;
	} else if (!strcmp(key, "connections")) {
		k->connections = strtol(v, &e, 10);
		if (*v < '1' || *v > '9' || *e || errno || k->connections > 10000) {
			k->connections = 4;
			expect = "a number of connections from 1 to 10000 (4)";
		}
	} else if (!strcmp(key, "timeout")) {
		if (config_parse_duration(v, &k->timeout_s) || k->timeout_s <= 0)
			expect = "a duration above zero with a unit (2s)";
	} else if (!strcmp(key, "load")) {
		if (!*skip_blanks(v))
			expect = "a load command";
		else
			k->load = xstrdup(v);
	} else if (!strcmp(key, "duration") || !strcmp(key, "warmup") || !strcmp(key, "window")) {
		double *f = !strcmp(key, "duration") ? &k->duration_s : !strcmp(key, "warmup") ? &k->warmup_s :
			    &k->window_s;

		if (config_parse_duration(v, f) || *f < 0 || (*f == 0 && f != &k->warmup_s))
			expect = f == &k->warmup_s ? "a duration with a unit (2s, or 0s)" :
						     "a duration above zero with a unit (10s)";
	} else if (!strcmp(key, "metric")) {
		expect = parse_canary_metric(k, v);
	} else if (!strcmp(key, "confidence")) {
		if (config_parse_percent(v, &k->confidence) || k->confidence < 0.5 || k->confidence >= 1)
			expect = "a percentage from 50% to below 100% (99%)";
	} else {	/* pass-score, marginal-score */
		double *f = !strcmp(key, "pass-score") ? &k->pass_score : &k->marginal_score;

		*f = strtod(v, &e);
		if (!*v || *e || errno || !(*f >= 0 && *f <= 100))
			expect = "a score from 0 to 100";
	}
	if (expect)
		conf_error(ctx, ctx->lineno, "bad value for '%s' in [canary \"%s\"]: expected %s", key, k->name,
			   expect);
}

/* After the whole file: a service, one load, windows that fit. */
static void check_canary(struct parse_ctx *ctx, struct config_canary *k)
{
	if (!k->svc.start)
		conf_error(ctx, k->line, "[canary \"%s\"] has no 'start' command", k->name);
	if (!(k->svc.set & 2)) {	/* no 'ready': the service's port accepts */
		k->svc.ready = SCENARIO_READY_TCP;
		k->svc.ready_arg = xstrdup("{port}");
	}
	if (k->load && (k->set & ((1u << 12) | (1u << 10) | (1u << 11) | (1u << 6))))
		conf_error(ctx, k->line, "[canary \"%s\"]: 'load' runs a command; 'rate', 'request', 'line' "
			   "and 'path' are for the built-in load: keep one", k->name);
	if (!k->load && !k->rate)
		conf_error(ctx, k->line, "[canary \"%s\"] has no load: add 'rate = 200' (the built-in "
			   "generator) or 'load = COMMAND'", k->name);
	if (k->proto == CANARY_LINE && !k->line_text)
		conf_error(ctx, k->line, "[canary \"%s\"]: 'protocol = line' needs 'line = TEXT'", k->name);
	if (k->proto == CANARY_HTTP && k->line_text)
		conf_error(ctx, k->line, "[canary \"%s\"]: 'line' is for 'protocol = line'", k->name);
	if (k->request_file && (k->path || k->method || k->body || k->headers.nr))
		conf_error(ctx, k->line, "[canary \"%s\"]: 'request' is a file of requests; 'path', 'method', "
			   "'header' and 'body' make one: keep one", k->name);
	if (k->window_s > k->duration_s)
		conf_error(ctx, k->line, "[canary \"%s\"]: 'window' (%g s) is longer than 'duration' (%g s)",
			   k->name, k->window_s, k->duration_s);
	else if (k->duration_s / k->window_s > 2000)
		conf_error(ctx, k->line, "[canary \"%s\"]: 'duration' over 'window' gives more than 2000 windows",
			   k->name);
	if (k->marginal_score > k->pass_score)
		conf_error(ctx, k->line, "[canary \"%s\"]: 'marginal-score' (%g) is above 'pass-score' (%g)",
			   k->name, k->marginal_score, k->pass_score);
}

static int config_handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	struct config *c = ctx->c;
	const char *why = NULL;
	const struct seen *prev;
	char *v;
	int spec = -1;
	void *base;

	if (ctx->sect == S_BAD || ctx->sect == S_NONE || !name || !value)
		return 1;
	v = unquote(value, &why);
	if (!v) {
		conf_error(ctx, ctx->lineno, "bad value for '%s': %s", name, why);
		return 1;
	}
	if (ctx->sect == S_SCENARIO) {
		scenario_key(ctx, &c->scenarios[ctx->idx], "scenario", name, v);
		free(v);
		return 1;
	}
	if (ctx->sect == S_CANARY) {
		canary_key(ctx, &c->canaries[ctx->idx], name, v);
		free(v);
		return 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].sect == ctx->sect && !strcmp(keys[i].key, name))
			spec = (int)i;
	if (spec < 0) {
		struct strbuf sb = STRBUF_INIT;
		const char *names[ARRAY_SIZE(keys)];

		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			names[i] = keys[i].sect == ctx->sect ? keys[i].key : NULL;
		strbuf_addf(&sb, "unknown key '%s' in ", name);
		section_label(ctx, &sb);
		add_suggestion(&sb, name, names, ARRAY_SIZE(keys), false);
		conf_error(ctx, ctx->lineno, "%s", sb.buf);
		strbuf_release(&sb);
		goto out;
	}
	prev = find_seen(ctx, ctx->sect, ctx->idx, spec);
	if (prev) {
		struct strbuf sb = STRBUF_INIT;

		section_label(ctx, &sb);
		conf_error(ctx, ctx->lineno, "'%s' set twice in %s (first on line %d)", name, sb.buf, prev->line);
		strbuf_release(&sb);
		goto out;
	}
	add_seen(ctx, ctx->sect, ctx->idx, spec, ctx->lineno);
	base = ctx->sect == S_WORKLOAD ? (void *)&c->workloads[ctx->idx] :
	       ctx->sect == S_METRIC ? (void *)&c->rules.metrics[ctx->idx] : (void *)c;
	set_value(ctx, &keys[spec], base, name, v);
out:
	free(v);
	return 1;
}

static int key_spec_index(enum sect sect, const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].sect == sect && !strcmp(keys[i].key, key))
			return (int)i;
	BUG("no key '%s'", key);
}

/* What can only be checked once the whole file is read. */
static void check_whole(struct parse_ctx *ctx)
{
	struct config *c = ctx->c;
	int primary_spec = key_spec_index(S_WORKLOAD, "primary");
	int run_spec = key_spec_index(S_WORKLOAD, "run");
	int better_spec = key_spec_index(S_METRIC, "better");
	size_t primary = SIZE_MAX;

	/* a service alone is a project too: hotloop scenario needs no workload */
	if (!c->nr_workloads && !c->nr_scenarios && !c->nr_canaries)
		conf_error(ctx, 0, "no workload: add a [workload \"NAME\"] section with a 'run' command");
	for (size_t i = 0; i < c->nr_scenarios; i++)
		check_scenario(ctx, &c->scenarios[i]);
	for (size_t i = 0; i < c->nr_canaries; i++)
		check_canary(ctx, &c->canaries[i]);
	if (*c->gate_canary && find_named(c, S_CANARY, c->gate_canary) == SIZE_MAX) {
		const struct seen *at = find_seen(ctx, S_GATE, 0, key_spec_index(S_GATE, "canary"));

		conf_error(ctx, at ? at->line : 0, "[gate]: 'canary = %s' names no [canary] section",
			   c->gate_canary);
	}
	for (size_t i = 0; i < c->nr_workloads; i++) {
		struct config_workload *w = &c->workloads[i];

		if (w->scenario) {
			size_t j;

			for (j = 0; j < c->nr_scenarios && strcmp(c->scenarios[j].name, w->scenario); j++)
				;
			if (j == c->nr_scenarios)
				conf_error(ctx, w->line, "[workload \"%s\"]: 'scenario = %s' names no [scenario] section",
					   w->name, w->scenario);
			if (find_seen(ctx, S_WORKLOAD, i, run_spec))
				conf_error(ctx, w->line, "[workload \"%s\"] has both 'run' and 'scenario': "
					   "a workload is a command or a scenario", w->name);
			if (w->nr_sizes)
				conf_error(ctx, w->line, "[workload \"%s\"]: 'sizes' is for a command with {n}, "
					   "not for a scenario", w->name);
		}
		if (!w->scenario && !find_seen(ctx, S_WORKLOAD, i, run_spec))
			conf_error(ctx, w->line, "[workload \"%s\"] has no 'run' command", w->name);
		if (!w->primary)
			continue;
		if (primary == SIZE_MAX) {
			primary = i;
			continue;
		}
		conf_error(ctx, find_seen(ctx, S_WORKLOAD, i, primary_spec)->line,
			   "two primary workloads: \"%s\" (line %d) and \"%s\": mark only one 'primary = yes'",
			   c->workloads[primary].name,
			   find_seen(ctx, S_WORKLOAD, primary, primary_spec)->line, w->name);
	}
	c->primary = primary == SIZE_MAX ? 0 : primary;
	if (c->nr_workloads)
		c->workloads[c->primary].primary = true;
	for (size_t i = 0; i < c->nr_workloads; i++)
		if (!c->workloads[i].timeout_s)
			c->workloads[i].timeout_s = c->gate_timeout_s;
	for (size_t i = 0; i < c->rules.nr_metrics; i++)
		if (!find_seen(ctx, S_METRIC, i, better_spec))
			conf_error(ctx, find_seen(ctx, S_METRIC, i, -1)->line,
				   "[metric \"%s\"] needs 'better = higher' or 'better = lower'",
				   c->rules.metrics[i].name);
}

int config_parse_buf(struct config *c, const char *buf, size_t len, const char *name)
{
	struct parse_ctx ctx = { .c = c, .buf = buf, .len = len };
	struct strbuf copy = STRBUF_INIT;
	int ret;

	config_init(c);
	free(c->file);
	c->file = xstrdup(name);
	if (len > CONFIG_MAX_BYTES) {
		conf_error(&ctx, 0, "too large (%zu bytes; at most %d)", len, CONFIG_MAX_BYTES);
		return -1;
	}
	/* a NUL-terminated copy: the UTF-8 check may look one byte ahead */
	strbuf_add(&copy, buf, len);
	ctx.buf = copy.buf;
	ret = ini_parse_stream(config_reader, &ctx, config_handler, &ctx);
	strbuf_release(&copy);
	if (ret < 0)
		conf_error(&ctx, 0, "cannot parse: out of memory");
	else if (ret > 0 && !ctx.nr_errors)
		conf_error(&ctx, ret, "cannot parse this line");
	check_whole(&ctx);
	free(ctx.seen);
	return ctx.nr_errors ? -1 : 0;
}

int config_parse_file(struct config *c, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	if (read_file(&sb, path, CONFIG_MAX_BYTES) < 0) {
		config_init(c);
		return -1;
	}
	ret = config_parse_buf(c, sb.buf, sb.len, path);
	strbuf_release(&sb);
	return ret;
}

int config_find(const char *dir, char **out)
{
	int ret = config_locate(dir, out);

	if (ret > 0)
		error("no %s in '%s' or its parents up to the git top level: run 'hotloop init' or pass -f FILE",
		      CONFIG_FILE, dir);
	return ret ? -1 : 0;
}

int config_locate(const char *dir, char **out)
{
	struct strbuf path = STRBUF_INIT;
	char *cur = realpath(dir, NULL);
	int ret = 1, up = 0;

	if (!cur)
		return error("cannot resolve '%s': %s", dir, strerror(errno));
	for (;;) {
		char *slash;

		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", strcmp(cur, "/") ? cur : "", CONFIG_FILE);
		if (!access(path.buf, F_OK)) {
			if (*dir != '/') {
				/* named as the user would: "hotloop.conf", "../hotloop.conf" */
				strbuf_reset(&path);
				if (strcmp(dir, "."))
					strbuf_addf(&path, "%s/", dir);
				for (int i = 0; i < up; i++)
					strbuf_addstr(&path, "../");
				strbuf_addstr(&path, CONFIG_FILE);
			}
			*out = strbuf_detach(&path, NULL);
			ret = 0;
			break;
		}
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/.git", strcmp(cur, "/") ? cur : "");
		slash = strrchr(cur, '/');
		if (!access(path.buf, F_OK) || !slash || !strcmp(cur, "/"))
			break;
		if (slash == cur)
			slash[1] = '\0';
		else
			*slash = '\0';
		up++;
	}
	free(cur);
	strbuf_release(&path);
	return ret;
}

/* --- normalized output ------------------------------------------- */

/*
 * Would 'v', written as is, read back as 'v'? (See unquote() and the reader.)
 * A value starting with a quote does when that quote closes before its end
 * ("a" b): unquote() keeps such a value as written. It must be written so,
 * as it was read: quoted and escaped it could pass the line limit.
 */
static bool reads_back_verbatim(const char *v)
{
	size_t n = strlen(v);
	bool inq = false;
	const char *q;

	if (!n || v[0] == ' ' || v[0] == '\t' ||
	    v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r')
		return false;
	if (v[0] == '"' && (!(q = closing_quote(v)) || q == v + n - 1))
		return false;
	for (size_t i = 0; i < n; i++) {
		if ((v[i] == ' ' || v[i] == '\t') && v[i + 1] == ';')
			return false;
		if (v[i] == '\\' && i + 1 < n)
			i++;
		else if (v[i] == '"')
			inq = !inq;
		else if (!inq && (v[i] == '#' || v[i] == ';'))
			return false;
	}
	return !inq;
}

void config_add_value(struct strbuf *sb, const char *v)
{
	if (reads_back_verbatim(v)) {
		strbuf_addstr(sb, v);
		return;
	}
	strbuf_addch(sb, '"');
	for (const char *p = v; *p; p++) {
		if (*p == '"' || *p == '\\' ||
		    (*p == ';' && p > v && (p[-1] == ' ' || p[-1] == '\t')))
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *p);
	}
	strbuf_addch(sb, '"');
}

/*
 * "\tkey = value\n"; without the spaces around '=' when the line would pass
 * libinih's limit, so a line that fit when read still fits when written.
 */
static void add_kv(struct strbuf *sb, const char *key, const struct strbuf *val)
{
	bool tight = strlen(key) + 3 + val->len > INI_MAX_LINE - 2;

	strbuf_addf(sb, "\t%s%s%s\n", key, tight ? "=" : " = ", val->buf);
}

static void add_kv_str(struct strbuf *sb, const char *key, const char *v)
{
	struct strbuf val = STRBUF_INIT;

	config_add_value(&val, v);
	add_kv(sb, key, &val);
	strbuf_release(&val);
}

static void add_kv_list(struct strbuf *sb, const char *key, const struct config_list *l,
			const char *sep)
{
	struct strbuf joined = STRBUF_INIT, val = STRBUF_INIT;

	for (size_t i = 0; i < l->nr; i++) {
		if (i)
			strbuf_addstr(&joined, sep);
		strbuf_addstr(&joined, l->v[i]);
	}
	config_add_value(&val, joined.buf);
	if (strcmp(sep, " ") && strlen(key) + 3 + val.len > INI_MAX_LINE - 2) {
		/* as short as any list that was read: one character between words */
		strbuf_release(&joined);
		strbuf_release(&val);
		add_kv_list(sb, key, l, " ");
		return;
	}
	add_kv(sb, key, &val);
	strbuf_release(&joined);
	strbuf_release(&val);
}

/*
 * The shortest "%.Nf<unit>" of want * scale, N from 0 to maxd, that 'parse'
 * reads back as exactly 'want'; false when there is none.
 */
static bool add_exact(struct strbuf *sb, double want, double scale, const char *unit,
		      int (*parse)(const char *, double *), int maxd)
{
	char buf[96];

	for (int d = 0; d <= maxd; d++) {
		double got;

		snprintf(buf, sizeof(buf), "%.*f%s", d, want * scale, unit);
		if (!parse(buf, &got) && got == want) {
			strbuf_addstr(sb, buf);
			return true;
		}
	}
	return false;
}

/* A duration in the largest unit that reads back exactly. */
static void format_duration(struct strbuf *val, double s)
{
	if (!s)
		strbuf_addstr(val, "0s");
	else if (!add_exact(val, s, 1.0 / 3600, "h", config_parse_duration, 0) &&
		 !add_exact(val, s, 1.0 / 60, "m", config_parse_duration, 0) &&
		 !add_exact(val, s, 1, "s", config_parse_duration, 0) &&
		 !add_exact(val, s, 1000, "ms", config_parse_duration, 60) &&
		 !add_exact(val, s, 1, "s", config_parse_duration, 60))
		strbuf_addf(val, "%.17gs", s);
}

static void add_kv_duration(struct strbuf *sb, const char *key, double s)
{
	struct strbuf val = STRBUF_INIT;

	format_duration(&val, s);
	add_kv(sb, key, &val);
	strbuf_release(&val);
}

static void add_kv_percent(struct strbuf *sb, const char *key, double v)
{
	struct strbuf val = STRBUF_INIT;

	if (!add_exact(&val, v, 100, "%", config_parse_percent, 60))
		strbuf_addf(&val, "%.17g%%", v * 100);
	add_kv(sb, key, &val);
	strbuf_release(&val);
}

static void add_kv_factor(struct strbuf *sb, const char *key, double v)
{
	struct strbuf val = STRBUF_INIT;

	if (!add_exact(&val, v, 1, "x", parse_factor, 60))
		strbuf_addf(&val, "%.17gx", v);
	add_kv(sb, key, &val);
	strbuf_release(&val);
}

static void add_kv_size(struct strbuf *sb, const char *key, uint64_t v)
{
	static const char units[] = "KMGT";
	struct strbuf val = STRBUF_INIT;
	int u = -1;

	while (v && u < 3 && !(v % 1024))
		v /= 1024, u++;
	if (u < 0)
		strbuf_addf(&val, "%" PRIu64, v);
	else
		strbuf_addf(&val, "%" PRIu64 "%c", v, units[u]);
	add_kv(sb, key, &val);
	strbuf_release(&val);
}

static const char *const ready_names[] = { "none", "tcp", "log", "file", "cmd" };
static const char *const metrics_names[] = { "output", "cmd", "http" };

static void add_kv_pair(struct strbuf *out, const char *key, const char *word, const char *arg)
{
	struct strbuf val = STRBUF_INIT;

	strbuf_addstr(&val, word);
	if (arg)
		strbuf_addf(&val, " %s", arg);
	add_kv_str(out, key, val.buf);
	strbuf_release(&val);
}

static void format_scenario(struct strbuf *out, const struct config_scenario *sc)
{
	struct strbuf val = STRBUF_INIT;

	strbuf_addf(out, "[scenario \"%s\"]\n", sc->name);
	add_kv_str(out, "start", sc->start ? sc->start : "");
	add_kv_pair(out, "ready", ready_names[sc->ready], sc->ready_arg);
	add_kv_duration(out, "ready-timeout", sc->ready_timeout_s);
	for (size_t j = 0; j < sc->nr_phases; j++) {
		const struct config_phase *ph = &sc->phases[j];

		strbuf_reset(&val);
		strbuf_addf(&val, "%s ", ph->kind);
		if (ph->until_exit)
			strbuf_addstr(&val, "until-exit");
		else
			format_duration(&val, ph->seconds);
		if (ph->load)
			strbuf_addf(&val, ": %s", ph->load);
		add_kv_str(out, "phase", val.buf);
	}
	add_kv_pair(out, "metrics", metrics_names[sc->metrics], sc->metrics_arg);
	add_kv_duration(out, "interval", sc->interval_s);
	strbuf_reset(&val);
	strbuf_addf(&val, "%s ", config_signal_name(sc->stop_signal));
	format_duration(&val, sc->stop_grace_s);
	add_kv_str(out, "stop", val.buf);
	add_kv_str(out, "profile", sc->profile == SCENARIO_PROFILE_CPU ? "cpu" : "none");
	add_kv_str(out, "judge", sc->nr_phases ? sc->phases[sc->judge].name : "");
	strbuf_reset(&val);
	if (sc->port)
		strbuf_addf(&val, "%d", sc->port);
	else
		strbuf_addstr(&val, "auto");
	add_kv_str(out, "port", val.buf);
	add_kv_percent(out, "leak-tolerance", sc->leak_tolerance);
	strbuf_reset(&val);
	strbuf_addf(&val, "%ld", sc->runs);
	add_kv_str(out, "runs", val.buf);
	strbuf_release(&val);
}

static json_t *scenario_json(const struct config_scenario *s)
{
	json_t *o = json_object(), *phases = json_array();

	for (size_t j = 0; j < s->nr_phases; j++) {
		const struct config_phase *ph = &s->phases[j];

		json_array_append_new(phases, json_pack("{s:o, s:o, s:f, s:b, s:o}", "name", json_text(ph->name),
							"kind", json_text(ph->kind), "seconds", ph->seconds,
							"until_exit", ph->until_exit, "load",
							ph->load ? json_text(ph->load) : json_null()));
	}
	json_object_set_new(o, "name", json_text(s->name));
	json_object_set_new(o, "start", json_text(s->start ? s->start : ""));
	json_object_set_new(o, "ready", json_pack("{s:s, s:o}", "kind", ready_names[s->ready], "arg",
						  s->ready_arg ? json_text(s->ready_arg) : json_null()));
	json_object_set_new(o, "ready_timeout_s", json_real(s->ready_timeout_s));
	json_object_set_new(o, "phases", phases);
	json_object_set_new(o, "metrics", json_pack("{s:s, s:o}", "source", metrics_names[s->metrics], "arg",
						    s->metrics_arg ? json_text(s->metrics_arg) : json_null()));
	json_object_set_new(o, "interval_s", json_real(s->interval_s));
	json_object_set_new(o, "stop", json_pack("{s:s, s:f}", "signal", config_signal_name(s->stop_signal),
						 "grace_s", s->stop_grace_s));
	json_object_set_new(o, "profile", json_string(s->profile == SCENARIO_PROFILE_CPU ? "cpu" : "none"));
	json_object_set_new(o, "judge", s->nr_phases ? json_text(s->phases[s->judge].name) : json_null());
	json_object_set_new(o, "port", s->port ? json_integer(s->port) : json_string("auto"));
	json_object_set_new(o, "leak_tolerance", json_real(s->leak_tolerance));
	json_object_set_new(o, "runs", json_integer(s->runs));
	return o;
}

/* The shortest "%g" that reads back as exactly v. */
static void format_number(struct strbuf *val, double v)
{
	char buf[40];

	if (v == (double)(long long)v && fabs(v) < 1e15) {
		strbuf_addf(val, "%lld", (long long)v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	strbuf_addstr(val, buf);
}

static void add_kv_number(struct strbuf *out, const char *key, double v)
{
	struct strbuf val = STRBUF_INIT;

	format_number(&val, v);
	add_kv(out, key, &val);
	strbuf_release(&val);
}

static const char *const direction_names[] = {
	[JUDGE_INCREASE_BAD] = "increase-bad", [JUDGE_DECREASE_BAD] = "decrease-bad",
	[JUDGE_EITHER_BAD] = "either",
};

/* Every key of a canary, its metrics in full: what the judge will use. */
static void format_canary(struct strbuf *out, const struct config_canary *k)
{
	struct strbuf val = STRBUF_INIT;
	const struct config_scenario *sc = &k->svc;

	strbuf_addf(out, "[canary \"%s\"]\n", k->name);
	add_kv_str(out, "start", sc->start ? sc->start : "");
	add_kv_pair(out, "ready", ready_names[sc->ready], sc->ready_arg);
	add_kv_duration(out, "ready-timeout", sc->ready_timeout_s);
	strbuf_addf(&val, "%s ", config_signal_name(sc->stop_signal));
	format_duration(&val, sc->stop_grace_s);
	add_kv_str(out, "stop", val.buf);
	strbuf_reset(&val);
	if (sc->port)
		strbuf_addf(&val, "%d", sc->port);
	else
		strbuf_addstr(&val, "auto");
	add_kv_str(out, "port", val.buf);
	add_kv_str(out, "protocol", k->proto == CANARY_LINE ? "line" : "http");
	if (k->load) {
		add_kv_str(out, "load", k->load);
	} else {
		if (k->path)
			add_kv_str(out, "path", k->path);
		if (k->request_file)
			add_kv_str(out, "request", k->request_file);
		if (k->line_text)
			add_kv_str(out, "line", k->line_text);
		add_kv_number(out, "rate", k->rate);
	}
	if (k->method)
		add_kv_str(out, "method", k->method);
	for (size_t i = 0; i < k->headers.nr; i++)
		add_kv_str(out, "header", k->headers.v[i]);
	if (k->body)
		add_kv_str(out, "body", k->body);
	add_kv_str(out, "schedule", k->poisson ? "poisson" : "constant");
	strbuf_reset(&val);
	strbuf_addf(&val, "%llu", (unsigned long long)k->seed);
	add_kv_str(out, "seed", val.buf);
	strbuf_reset(&val);
	strbuf_addf(&val, "%ld", k->connections);
	add_kv_str(out, "connections", val.buf);
	add_kv_duration(out, "timeout", k->timeout_s);
	add_kv_duration(out, "duration", k->duration_s);
	add_kv_duration(out, "warmup", k->warmup_s);
	add_kv_duration(out, "window", k->window_s);
	for (size_t i = 0; i < CANARY__NR_METRICS; i++) {
		const struct config_canary_metric *m = &k->metrics[i];

		strbuf_reset(&val);
		strbuf_addf(&val, "%s %s tolerance ", canary_metric_names[i], direction_names[m->direction]);
		if (!add_exact(&val, m->tolerance, 100, "%", config_parse_percent, 60))
			strbuf_addf(&val, "%.17g%%", m->tolerance * 100);
		strbuf_addstr(&val, " abs-tolerance ");
		format_number(&val, m->abs_tolerance);
		strbuf_addstr(&val, " weight ");
		format_number(&val, m->weight);
		strbuf_addstr(&val, m->critical ? " critical" : " not-critical");
		if (m->spread)
			strbuf_addstr(&val, " spread");
		add_kv_str(out, "metric", val.buf);
	}
	add_kv_percent(out, "confidence", k->confidence);
	add_kv_number(out, "pass-score", k->pass_score);
	add_kv_number(out, "marginal-score", k->marginal_score);
	strbuf_release(&val);
}

static json_t *canary_json(const struct config_canary *k)
{
	const struct config_scenario *sc = &k->svc;
	json_t *o = json_object(), *headers = json_array(), *metrics = json_object();

	for (size_t i = 0; i < k->headers.nr; i++)
		json_array_append_new(headers, json_text(k->headers.v[i]));
	for (size_t i = 0; i < CANARY__NR_METRICS; i++) {
		const struct config_canary_metric *m = &k->metrics[i];

		json_object_set_new(metrics, canary_metric_names[i],
				    json_pack("{s:s, s:f, s:f, s:f, s:b, s:b}", "direction",
					      direction_names[m->direction], "tolerance", m->tolerance,
					      "abs_tolerance", m->abs_tolerance, "weight", m->weight,
					      "critical", m->critical, "spread", m->spread));
	}
#define OPT_TEXT(s) ((s) ? json_text(s) : json_null())
	json_object_set_new(o, "name", json_text(k->name));
	json_object_set_new(o, "start", json_text(sc->start ? sc->start : ""));
	json_object_set_new(o, "ready", json_pack("{s:s, s:o}", "kind", ready_names[sc->ready], "arg",
						  OPT_TEXT(sc->ready_arg)));
	json_object_set_new(o, "ready_timeout_s", json_real(sc->ready_timeout_s));
	json_object_set_new(o, "stop", json_pack("{s:s, s:f}", "signal", config_signal_name(sc->stop_signal),
						 "grace_s", sc->stop_grace_s));
	json_object_set_new(o, "port", sc->port ? json_integer(sc->port) : json_string("auto"));
	json_object_set_new(o, "protocol", json_string(k->proto == CANARY_LINE ? "line" : "http"));
	json_object_set_new(o, "load", OPT_TEXT(k->load));
	json_object_set_new(o, "path", OPT_TEXT(k->path));
	json_object_set_new(o, "method", OPT_TEXT(k->method));
	json_object_set_new(o, "headers", headers);
	json_object_set_new(o, "body", OPT_TEXT(k->body));
	json_object_set_new(o, "request", OPT_TEXT(k->request_file));
	json_object_set_new(o, "line", OPT_TEXT(k->line_text));
#undef OPT_TEXT
	json_object_set_new(o, "rate", json_real(k->rate));
	json_object_set_new(o, "schedule", json_string(k->poisson ? "poisson" : "constant"));
	json_object_set_new(o, "seed", json_integer((json_int_t)k->seed));
	json_object_set_new(o, "connections", json_integer(k->connections));
	json_object_set_new(o, "timeout_s", json_real(k->timeout_s));
	json_object_set_new(o, "duration_s", json_real(k->duration_s));
	json_object_set_new(o, "warmup_s", json_real(k->warmup_s));
	json_object_set_new(o, "window_s", json_real(k->window_s));
	json_object_set_new(o, "metrics", metrics);
	json_object_set_new(o, "confidence", json_real(k->confidence));
	json_object_set_new(o, "pass_score", json_real(k->pass_score));
	json_object_set_new(o, "marginal_score", json_real(k->marginal_score));
	return o;
}

void config_format(const struct config *c, struct strbuf *out)
{
	const struct gate_rules *r = &c->rules;
	char num[32];

	strbuf_addstr(out, "[project]\n");
	add_kv_str(out, "build", c->build);
	add_kv_duration(out, "build-timeout", c->build_timeout_s);
	add_kv_list(out, "owned", &c->owned, " ");
	add_kv_list(out, "protected", &c->protected_paths, " ");
	add_kv_str(out, "kb", c->kb);
	snprintf(num, sizeof(num), "%ld", c->brief_budget);
	add_kv_str(out, "brief-budget", num);
	strbuf_addstr(out, "[gate]\n");
	add_kv_str(out, "test", c->test);
	add_kv_str(out, "fingerprint", c->fingerprint ? "yes" : "no");
	add_kv_str(out, "heap", c->heap ? "yes" : "no");
	add_kv_str(out, "canary", c->gate_canary);
	add_kv_duration(out, "timeout", c->gate_timeout_s);
	add_kv_list(out, "writable", &c->gate_writable, " ");
	strbuf_addstr(out, "[improve]\n");
	add_kv_str(out, "metric", gate_metric_name(r->metric));
	add_kv_percent(out, "min-improvement", r->min_improvement);
	add_kv_percent(out, "guard-regression", r->guard_regression);
	add_kv_duration(out, "guard-floor", r->guard_floor_s);
	add_kv_size(out, "ram-budget", r->ram_budget);
	add_kv_str(out, "ram-budget-on", gate_ram_name(r->ram_on));
	add_kv_factor(out, "suspicious-speedup", r->suspicious_speedup);
	snprintf(num, sizeof(num), "%ld", c->rounds);
	add_kv_str(out, "rounds", num);
	snprintf(num, sizeof(num), "%ld", c->max_rejects_in_a_row);
	add_kv_str(out, "max-rejects-in-a-row", num);
	add_kv_percent(out, "min-share", c->min_share);
	add_kv_size(out, "max-file-size", c->max_file_size);
	add_kv_str(out, "allow-binary", c->allow_binary ? "yes" : "no");
	add_kv_str(out, "require-target-gain", c->require_target_gain ? "yes" : "no");
	add_kv_list(out, "lenses", &c->lenses, ", ");
	strbuf_addstr(out, "[agent]\n");
	add_kv_str(out, "command", c->agent_command);
	add_kv_duration(out, "timeout", c->agent_timeout_s);
	add_kv_str(out, "prompt", c->agent_prompt);
	add_kv_list(out, "writable", &c->agent_writable, " ");
	strbuf_addstr(out, "[pr]\n");
	add_kv_str(out, "command", c->pr_command);
	for (size_t i = 0; i < c->nr_workloads; i++) {
		const struct config_workload *w = &c->workloads[i];

		strbuf_addf(out, "[workload \"%s\"]\n", w->name);
		add_kv_str(out, "run", w->run ? w->run : "");
		add_kv_str(out, "primary", i == c->primary ? "yes" : "no");
		add_kv_duration(out, "timeout", w->timeout_s);
		if (w->scenario)
			add_kv_str(out, "scenario", w->scenario);
		if (w->nr_sizes) {
			struct strbuf val = STRBUF_INIT;

			for (size_t j = 0; j < w->nr_sizes; j++)
				strbuf_addf(&val, "%s%llu", j ? " " : "", (unsigned long long)w->sizes[j]);
			add_kv(out, "sizes", &val);
			strbuf_release(&val);
		}
	}
	for (size_t i = 0; i < r->nr_metrics; i++) {
		const struct metric_rule *m = &r->metrics[i];

		strbuf_addf(out, "[metric \"%s\"]\n", m->name);
		add_kv_str(out, "better", m->higher_is_better ? "higher" : "lower");
		add_kv_percent(out, "tolerance", m->tolerance);
	}
	for (size_t i = 0; i < c->nr_scenarios; i++)
		format_scenario(out, &c->scenarios[i]);
	for (size_t i = 0; i < c->nr_canaries; i++)
		format_canary(out, &c->canaries[i]);
}

static json_t *list_json(const struct config_list *l)
{
	json_t *a = json_array();

	for (size_t i = 0; i < l->nr; i++)
		json_array_append_new(a, json_text(l->v[i]));
	return a;
}

json_t *config_to_json(const struct config *c)
{
	const struct gate_rules *r = &c->rules;
	json_t *doc = json_object(), *o, *a, *sizes;

	json_object_set_new(doc, "file", json_text(c->file));
	o = json_object();
	json_object_set_new(o, "build", json_text(c->build));
	json_object_set_new(o, "build_timeout_s", json_real(c->build_timeout_s));
	json_object_set_new(o, "owned", list_json(&c->owned));
	json_object_set_new(o, "protected", list_json(&c->protected_paths));
	json_object_set_new(o, "kb", json_text(c->kb));
	json_object_set_new(o, "brief_budget", json_integer(c->brief_budget));
	json_object_set_new(doc, "project", o);
	o = json_object();
	json_object_set_new(o, "test", json_text(c->test));
	json_object_set_new(o, "fingerprint", json_boolean(c->fingerprint));
	json_object_set_new(o, "heap", json_boolean(c->heap));
	json_object_set_new(o, "canary", json_text(c->gate_canary));
	json_object_set_new(o, "timeout_s", json_real(c->gate_timeout_s));
	json_object_set_new(o, "writable", list_json(&c->gate_writable));
	json_object_set_new(doc, "gate", o);
	o = json_object();
	json_object_set_new(o, "metric", json_string(gate_metric_name(r->metric)));
	json_object_set_new(o, "min_improvement", json_real(r->min_improvement));
	json_object_set_new(o, "guard_regression", json_real(r->guard_regression));
	json_object_set_new(o, "guard_floor_s", json_real(r->guard_floor_s));
	json_object_set_new(o, "ram_budget_bytes", json_integer((json_int_t)r->ram_budget));
	json_object_set_new(o, "ram_budget_on", json_string(gate_ram_name(r->ram_on)));
	json_object_set_new(o, "suspicious_speedup", json_real(r->suspicious_speedup));
	json_object_set_new(o, "rounds", json_integer(c->rounds));
	json_object_set_new(o, "max_rejects_in_a_row", json_integer(c->max_rejects_in_a_row));
	json_object_set_new(o, "min_share", json_real(c->min_share));
	json_object_set_new(o, "max_file_size_bytes", json_integer((json_int_t)c->max_file_size));
	json_object_set_new(o, "allow_binary", json_boolean(c->allow_binary));
	json_object_set_new(o, "require_target_gain", json_boolean(c->require_target_gain));
	json_object_set_new(o, "lenses", list_json(&c->lenses));
	json_object_set_new(doc, "improve", o);
	o = json_object();
	json_object_set_new(o, "command", json_text(c->agent_command));
	json_object_set_new(o, "timeout_s", json_real(c->agent_timeout_s));
	json_object_set_new(o, "prompt", json_text(c->agent_prompt));
	json_object_set_new(o, "writable", list_json(&c->agent_writable));
	json_object_set_new(doc, "agent", o);
	json_object_set_new(doc, "pr", json_pack("{s:o}", "command", json_text(c->pr_command)));
	json_object_set_new(doc, "primary", c->nr_workloads ?
			    json_text(c->workloads[c->primary].name) : json_null());
	a = json_array();
	for (size_t i = 0; i < c->nr_workloads; i++) {
		const struct config_workload *w = &c->workloads[i];

		o = json_object();
		json_object_set_new(o, "name", json_text(w->name));
		json_object_set_new(o, "run", json_text(w->run ? w->run : ""));
		json_object_set_new(o, "primary", json_boolean(i == c->primary));
		json_object_set_new(o, "timeout_s", json_real(w->timeout_s));
		json_object_set_new(o, "scenario", w->scenario ? json_text(w->scenario) : json_null());
		sizes = json_array();
		for (size_t j = 0; j < w->nr_sizes; j++)
			json_array_append_new(sizes, json_integer((json_int_t)w->sizes[j]));
		json_object_set_new(o, "sizes", sizes);
		json_array_append_new(a, o);
	}
	json_object_set_new(doc, "workloads", a);
	a = json_array();
	for (size_t i = 0; i < r->nr_metrics; i++) {
		o = json_object();
		json_object_set_new(o, "name", json_text(r->metrics[i].name));
		json_object_set_new(o, "better", json_string(r->metrics[i].higher_is_better ? "higher" : "lower"));
		json_object_set_new(o, "tolerance", json_real(r->metrics[i].tolerance));
		json_array_append_new(a, o);
	}
	json_object_set_new(doc, "metrics", a);
	a = json_array();
	for (size_t i = 0; i < c->nr_scenarios; i++)
		json_array_append_new(a, scenario_json(&c->scenarios[i]));
	json_object_set_new(doc, "scenarios", a);
	a = json_array();
	for (size_t i = 0; i < c->nr_canaries; i++)
		json_array_append_new(a, canary_json(&c->canaries[i]));
	json_object_set_new(doc, "canaries", a);
	return doc;
}
