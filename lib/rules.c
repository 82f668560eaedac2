/*
 * rules.c: the gate's rules (see rules.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "rules.h"

static const char *const metric_names[] = { "cpu", "wall", "instructions" };

void gate_rules_release(struct gate_rules *r)
{
	for (size_t i = 0; i < r->nr_metrics; i++)
		free(r->metrics[i].name);
	free(r->metrics);
	r->metrics = NULL;
	r->nr_metrics = 0;
}

const char *gate_metric_name(enum gate_metric m)
{
	return (size_t)m < ARRAY_SIZE(metric_names) ? metric_names[m] : "?";
}

int gate_metric_parse(const char *s)
{
	return name_index(metric_names, ARRAY_SIZE(metric_names), s);
}

const char *const gate_stage_names[GATE_STAGE_NR] = {
	[GATE_STAGE_NONE] = NULL,
	[GATE_STAGE_AGENT] = "agent",
	[GATE_STAGE_INTEGRITY] = "integrity",
	[GATE_STAGE_DIFF] = "diff",
	[GATE_STAGE_PROTECTED] = "protected",
	[GATE_STAGE_TARGET] = "target",
	[GATE_STAGE_BUILD] = "build",
	[GATE_STAGE_TEST] = "test",
	[GATE_STAGE_FINGERPRINT] = "fingerprint",
	[GATE_STAGE_COMPARE] = "compare",
	[GATE_STAGE_CANARY] = "canary",
	[GATE_STAGE_TOURNAMENT] = "tournament",
	[GATE_STAGE_COMMIT] = "commit",
};

const char *gate_stage_name(enum gate_stage s)
{
	if ((size_t)s >= GATE_STAGE_NR)
		BUG("stage %d out of range", (int)s);
	return gate_stage_names[s] ? gate_stage_names[s] : "";
}

int gate_stage_parse(const char *s)
{
	return name_index(gate_stage_names, GATE_STAGE_NR, s);
}

void gate_rules_override(const struct gate_rules *conf, const struct gate_rules *cli, unsigned set,
			 struct gate_rules *out)
{
	*out = *conf;
	if (set & RULE_SET_METRIC)
		out->metric = cli->metric;
	if (set & RULE_SET_MIN)
		out->min_improvement = cli->min_improvement;
	if (set & RULE_SET_GUARD)
		out->guard_regression = cli->guard_regression;
	if (set & RULE_SET_RAM)
		out->ram_budget = cli->ram_budget;
	if (set & RULE_SET_RAM_ON)
		out->ram_on = cli->ram_on;
	out->nr_metrics = 0;
	out->metrics = xcalloc(conf->nr_metrics + cli->nr_metrics + 1, sizeof(*out->metrics));
	for (size_t i = 0; i < conf->nr_metrics + cli->nr_metrics; i++) {
		const struct metric_rule *r = i < conf->nr_metrics ? &conf->metrics[i] :
					      &cli->metrics[i - conf->nr_metrics];
		struct metric_rule *dst = NULL;

		for (size_t j = 0; j < out->nr_metrics; j++)
			if (!strcmp(out->metrics[j].name, r->name))
				dst = &out->metrics[j];
		if (!dst) {
			dst = &out->metrics[out->nr_metrics++];
			dst->name = xstrdup(r->name);
		}
		dst->higher_is_better = r->higher_is_better;
		dst->tolerance = r->tolerance;
	}
}

int gate_parse_percent(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (*end == '%')
		end++;
	if (errno || end == arg || *end || !isfinite(v) || v < 0 || v >= 100)
		return error("invalid value '%s' for %s: expected a percentage from 0 to 100", arg, opt);
	*out = v / 100;
	return 0;
}

int metric_rule_parse(const char *arg, struct gate_rules *r)
{
	const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	struct metric_rule *m;
	bool higher;
	double tol;

	if (!c1 || !c2 || c1 == arg)
		goto bad;
	if ((size_t)(c2 - c1 - 1) == 6 && !strncmp(c1 + 1, "higher", 6))
		higher = true;
	else if ((size_t)(c2 - c1 - 1) == 5 && !strncmp(c1 + 1, "lower", 5))
		higher = false;
	else
		goto bad;
	if (gate_parse_percent("--metric-rule", c2 + 1, &tol))
		return -1;
	r->metrics = xrealloc(r->metrics, (r->nr_metrics + 1) * sizeof(*r->metrics));
	m = &r->metrics[r->nr_metrics++];
	m->name = xstrfmt("%.*s", (int)(c1 - arg), arg);
	m->higher_is_better = higher;
	m->tolerance = tol;
	return 0;
bad:
	return error("invalid value '%s' for --metric-rule: expected NAME:higher:PCT or NAME:lower:PCT", arg);
}

int gate_ram_parse(const char *s)
{
	if (!strcmp(s, "rss"))
		return GATE_RAM_RSS;
	if (!strcmp(s, "heap"))
		return GATE_RAM_HEAP;
	return -1;
}

const char *gate_ram_name(enum gate_ram r)
{
	return r == GATE_RAM_HEAP ? "heap" : "rss";
}
