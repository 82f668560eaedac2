/*
 * rules.h: the rules a change must pass to be kept, as hotloop.conf states
 * them ([improve], [metric "NAME"]) and as the verdict applies them. Plain
 * data: config.c fills it, verdict.c reads it. Whoever holds a struct
 * gate_rules owns its metrics array and the strings in it.
 */
#ifndef HOTLOOP_RULES_H
#define HOTLOOP_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gate_metric {
	GATE_METRIC_CPU,		/* user + sys seconds (default) */
	GATE_METRIC_WALL,		/* wall-clock seconds */
	GATE_METRIC_INSTRUCTIONS,	/* valgrind instruction count */
};

/* A workload-printed metric ("HOTLOOP_METRIC name=value") that must hold. */
struct metric_rule {
	char *name;
	bool higher_is_better;
	double tolerance;		/* fraction: 0.02 for 2% */
};

struct gate_rules {
	enum gate_metric metric;
	double min_improvement;		/* fraction the primary must improve: 0.03 */
	double guard_regression;	/* fraction a guard may regress: 0.02 */
	double guard_floor_s;		/* absolute slack for guards, seconds: 0.005 */
	uint64_t ram_budget;		/* bytes of peak RSS a candidate may use; 0 = none */
	double suspicious_speedup;	/* flag speedups above this factor: 20 */
	struct metric_rule *metrics;
	size_t nr_metrics;
};

#define GATE_RULES_DEFAULT { GATE_METRIC_CPU, 0.03, 0.02, 0.005, 0, 20.0, NULL, 0 }

void gate_rules_release(struct gate_rules *r);
const char *gate_metric_name(enum gate_metric m);
/* "cpu", "wall", "instructions" -> enum; -1 when unknown. */
int gate_metric_parse(const char *s);

#endif
