/*
 * rules.c: the gate's rules (see rules.h).
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "rules.h"

static const char *metric_names[] = { "cpu", "wall", "instructions" };

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
	for (size_t i = 0; i < ARRAY_SIZE(metric_names); i++)
		if (!strcmp(s, metric_names[i]))
			return (int)i;
	return -1;
}

const char *const gate_stage_names[GATE_STAGE_NR] = {
	[GATE_STAGE_NONE] = NULL,
	[GATE_STAGE_AGENT] = "agent",
	[GATE_STAGE_DIFF] = "diff",
	[GATE_STAGE_PROTECTED] = "protected",
	[GATE_STAGE_BUILD] = "build",
	[GATE_STAGE_TEST] = "test",
	[GATE_STAGE_FINGERPRINT] = "fingerprint",
	[GATE_STAGE_COMPARE] = "compare",
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
	for (int k = 0; s && k < GATE_STAGE_NR; k++)
		if (gate_stage_names[k] && !strcmp(s, gate_stage_names[k]))
			return k;
	return -1;
}
