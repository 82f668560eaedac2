/*
 * events.h: how the engines (loop, gate, bench, scale, run) tell the world
 * what they are doing while they do it: one observer interface of typed
 * events. The engine emits; subscribers (the terminal progress display,
 * the store's activity feed, the MCP server's progress
 * notifications) decide what to show or keep. docs/internals/engine.md
 * lists every event with the fields it sets.
 *
 * An event and everything it points to belong to the engine and live only
 * for the call: a subscriber copies what it keeps.
 */
#ifndef HOTLOOP_EVENTS_H
#define HOTLOOP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "rules.h"
#include "verdict.h"

enum event_kind {
	EV_NOTE,		/* a step begins or ends: "building the baseline"; message only */
	EV_PROGRESS,		/* one of many steps: done of total, message says which */
	EV_LOOP_STARTED,	/* loop: the branch, its start, the plan */
	EV_ROUND_STARTED,	/* loop: round, agents */
	EV_AGENT_FINISHED,	/* loop: attempt (its agent's exit, time, proposal) */
	EV_STAGE,		/* gate: stage passed or failed; attempt when in a loop */
	EV_PAIR,		/* gate: one pair measured: workload, pair, base and cand values */
	EV_VERDICT,		/* gate or loop: an attempt decided (verdict, stage, reasons) */
	EV_KEPT,		/* loop: attempt committed as commit */
	EV_ATTEMPT,		/* loop: attempt written up (kb slug known): the record to keep */
	EV_LOOP_ENDED,		/* loop: loop (kept, stop reason, best) */
	EV_SCENARIO_PHASE,	/* scenario: a phase began (phase; message says what runs) */
	EV_SCENARIO_SAMPLE,	/* scenario: the timeline took a sample (phase, point) */
	EV_PROFILED,		/* loop: the best so far profiled (round, commit, workload, run); the last kind */
};

struct attempt;
struct tl_point;
struct loop_result;
struct gate_result;
struct run_outcome;

struct event {
	enum event_kind kind;
	const char *source;	/* the engine: "loop", "compare", "bench", "scale", "run" */
	const char *message;	/* one line for people; NULL when the event has none */
	/* what the kind says; fields not named for it are 0 or NULL */
	long round;
	enum gate_stage stage;
	bool passed;		/* EV_STAGE */
	enum verdict_kind verdict;
	size_t done, total;	/* EV_PROGRESS; EV_PAIR: pairs so far of the budget */
	const char *workload;	/* EV_PAIR */
	double base, cand;	/* EV_PAIR: the pair's values of the metric */
	const char *commit;	/* EV_KEPT */
	const char *phase;	/* EV_SCENARIO_*: the phase running, NULL before the first */
	const struct tl_point *point;	/* EV_SCENARIO_SAMPLE */
	const struct attempt *attempt;
	const struct loop_result *loop;
	const struct gate_result *gate;
	const struct run_outcome *run;	/* EV_PROFILED: its directory, profile and brief */
};

/* A subscriber: notify() is called for every event, in order, on the engine's thread. */
struct observer {
	void (*notify)(const struct event *ev, void *data);
	void *data;
	struct observer *next;	/* the next subscriber, or NULL */
};

/* Give ev to every subscriber of the chain (o may be NULL: nobody listens). */
void emit(const struct observer *o, const struct event *ev);
/* An EV_NOTE from 'source'. */
void emit_note(const struct observer *o, const char *source, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An EV_PROGRESS from 'source': step 'done' (from 0) of 'total'. */
void emit_progress(const struct observer *o, const char *source, size_t done, size_t total,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
