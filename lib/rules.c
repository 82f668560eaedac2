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
