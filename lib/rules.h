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

/* What the ram budget limits. */
enum gate_ram {
	GATE_RAM_RSS,			/* each candidate run's peak RSS (default) */
	GATE_RAM_HEAP,			/* its heap-peak metric (heap-stats.h): the runs measure the heap */
};

/*
 * The stages of the gate a candidate goes through, in order, and the
 * loop's own around them: the one that decided is part of every attempt.
 */
enum gate_stage {
	GATE_STAGE_NONE,	/* not decided yet (NULL in the store) */
	GATE_STAGE_AGENT,	/* the agent failed, hung or had no candidate */
	GATE_STAGE_INTEGRITY,	/* the user's repository changed: the loop stops */
	GATE_STAGE_DIFF,	/* nothing changed, or the change could not be read */
	GATE_STAGE_PROTECTED,	/* a protected path changed */
	GATE_STAGE_TARGET,	/* no function at or above min-share changed, or it did not get cheaper */
	GATE_STAGE_BUILD,
	GATE_STAGE_TEST,
	GATE_STAGE_FINGERPRINT,	/* a workload's output changed */
	GATE_STAGE_COMPARE,	/* the measurements and the verdict */
	GATE_STAGE_CANARY,	/* [gate] canary: the service's two builds under the same load */
	GATE_STAGE_TOURNAMENT,	/* a keep that a better candidate beat */
	GATE_STAGE_COMMIT,	/* a keep that could not be committed */
	GATE_STAGE_NR
};
/* "agent" ... "commit"; NULL for GATE_STAGE_NONE. */
extern const char *const gate_stage_names[GATE_STAGE_NR];
/* The name; "" for GATE_STAGE_NONE. */
const char *gate_stage_name(enum gate_stage s);
/* The stage a name says; -1 when it names none. */
int gate_stage_parse(const char *s);

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
	enum gate_ram ram_on;		/* what ram_budget limits */
};

#define GATE_RULES_DEFAULT { GATE_METRIC_CPU, 0.03, 0.02, 0.005, 0, 20.0, NULL, 0, GATE_RAM_RSS }

void gate_rules_release(struct gate_rules *r);

/* Which rules a command line set, to be laid over a config's. */
enum gate_rule_set {
	RULE_SET_METRIC = 1, RULE_SET_MIN = 2, RULE_SET_GUARD = 4, RULE_SET_RAM = 8,
	RULE_SET_RAM_ON = 16,
};
/*
 * The config's rules with the command line's on top into 'out' (which the
 * caller releases): the fields 'set' names, and every metric rule of
 * either, the command line's replacing a config's of the same name.
 */
void gate_rules_override(const struct gate_rules *conf, const struct gate_rules *cli, unsigned set,
			 struct gate_rules *out);

/* "3", "3%", "0.5%" -> 0.03, 0.03, 0.005, for option 'opt'; -1 with an error. */
int gate_parse_percent(const char *opt, const char *arg, double *out);
/* NAME:higher:PCT or NAME:lower:PCT (--metric-rule), added to r; -1 with an error. */
int metric_rule_parse(const char *arg, struct gate_rules *r);
const char *gate_metric_name(enum gate_metric m);
/* "cpu", "wall", "instructions" -> enum; -1 when unknown. */
int gate_metric_parse(const char *s);
/* "rss", "heap" -> enum gate_ram; -1 when unknown. */
int gate_ram_parse(const char *s);
const char *gate_ram_name(enum gate_ram r);

#endif
