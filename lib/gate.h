/*
 * gate.h: the gate, as one library call. gate_run() takes a baseline and
 * a candidate (two directories, or two commands), builds them, runs the
 * tests in the candidate, measures every workload in interleaved pairs
 * (compare.c), checks the outputs and decides (verdict.c), and says which
 * stage decided, with every reason and every measurement. `compare`, the
 * loop and its final re-measure call it; the store is filled from its
 * result, and compare's JSON is only a way of printing it.
 *
 * The caller owns the spec and what it points to (gate_spec_from_project()
 * makes the spec own its workloads; gate_spec_release() frees them); a
 * struct gate_result owns everything in it (copies of the workloads
 * included, so it outlives the spec and may be moved) until
 * gate_result_release().
 */
#ifndef HOTLOOP_GATE_H
#define HOTLOOP_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "rules.h"
#include "strbuf.h"
#include "verdict.h"

struct observer;
struct project;
struct sandbox;
struct json_t;

struct gate_spec {
	const char *source;		/* who runs it, for events: "compare", "loop" */
	const char *base_dir;		/* where the baseline builds (and runs, for project workloads) */
	const char *cand_dir;
	const char *build;		/* a /bin/sh line; NULL or "": nothing to build */
	double build_timeout;		/* seconds; 0: none */
	bool build_base, build_cand;
	const char *test;		/* run in the candidate; NULL or "": no tests */
	double test_timeout;
	const char *log_dir;		/* build and test output saved here; NULL: not saved */
	const struct compare_workload_spec *workloads;
	size_t nr_workloads;
	struct gate_rules rules;	/* the caller's: not released here */
	struct compare_opts opts;	/* metric and min_improvement are taken from rules */
	const struct observer *obs;	/* may be NULL */
	/* each side's build and tests run in its sandbox (sandbox.h); NULL: as they are */
	const struct sandbox *base_sandbox, *cand_sandbox;
	/* private: what gate_spec_from_project() allocated */
	struct compare_workload_spec *own_workloads;
	char **own_lines;
};

#define GATE_SPEC_INIT { .rules = GATE_RULES_DEFAULT }

/*
 * Fill s for two trees of project p: its build (with build-timeout), its
 * test (with [gate] timeout), every workload's command line run in each
 * tree's copy of the project directory (base_dir and cand_dir are those
 * directories), with its own timeout; the fingerprint setting; the rules
 * are p's (s->rules points into p's config: the caller may replace it).
 * Builds and the test are on; turn them off in s. The compare options
 * (schedule, warm-up) get the defaults. 0, or -1 with an error (a workload
 * whose {n} has no size).
 */
int gate_spec_from_project(struct gate_spec *s, const struct project *p, const char *base_dir,
			   const char *cand_dir);
void gate_spec_release(struct gate_spec *s);

struct gate_result {
	enum verdict_kind verdict;	/* keep, reject or inconclusive */
	enum gate_stage stage;		/* the stage that decided: build, test, fingerprint, compare */
	char **reasons;			/* every reason, those that decided first */
	size_t nr_reasons, alloc_reasons;
	struct strbuf detail;		/* the failed step's last lines of output, indented; may be empty */
	enum vd_test test;
	bool measured;			/* the workloads ran: compare and v hold every number */
	bool interrupted;		/* hl_cancel() stopped it: partial */
	struct compare compare;
	struct verdict v;		/* when the tests ran or anything was measured */
	/* private: copies of what compare points to, so a result can be moved and kept */
	struct gate_copy *copy;
};

/* Initialize before the first gate_run(); release (and reuse) after each. */
void gate_result_init(struct gate_result *r);
void gate_result_release(struct gate_result *r);

/*
 * Run the gate. 0 with a result (also for a candidate that does not build
 * or pass its tests: a reject at that stage; also when interrupted);
 * -1 with an error when it cannot judge: the baseline does not build, a
 * command cannot be started, instructions cannot be counted here;
 * HL_EXIT_NOT_FOUND when a workload's command is not found.
 */
int gate_run(const struct gate_spec *s, struct gate_result *r);

/*
 * One shell step of the gate on its own (a build, a test): 'cmd' in 'dir',
 * cancellable, in sandbox 'sb' when not NULL, its output saved to 'log'
 * (NULL: not saved). 0 when it
 * exited 0; 1 when it did not, with how in 'how' ("exit status 2",
 * "timed out after 60 s", "interrupted") and its last lines, indented, in
 * 'tail' (either may be NULL); -1 with an error when it could not run.
 */
int gate_shell_step(const char *cmd, const char *dir, double timeout, const struct sandbox *sb,
		    const char *log, struct strbuf *how, struct strbuf *tail);

/*
 * Run s->build in one tree (the candidate's when 'cand'), its output in
 * s->log_dir/log. 0 when it built; 1 when it did not, with the reason in
 * *why (allocated) and its last lines in 'tail'; -1 with an error when it
 * could not be run. gate_run() builds with it; so does the canary.
 */
int gate_build(const struct gate_spec *s, bool cand, const char *log, char **why, struct strbuf *tail);

/*
 * The primary workload's change when it was measured: 0 and e, or -1 (no
 * usable pairs). e points into r.
 */
int gate_primary(const struct gate_result *r, const struct verdict_estimate **e);

/* Did any workload's output differ from the baseline's? */
bool gate_output_changed(const struct gate_result *r);

/*
 * compare's JSON document (docs/compare.md): the verdict, the schedule,
 * the machine and every run. Only for a result that was decided by the
 * tests or measured (r->v).
 */
struct json_t *gate_result_to_json(const struct gate_result *r);
/* The same for people: the verdict, each estimate, memory, schedule, machine, reasons. */
void gate_result_format_text(const struct gate_result *r, struct strbuf *out);

/* compare's exit status for a result: 0 keep, 4 reject, 1 inconclusive, 130 interrupted. */
int gate_exit_status(const struct gate_result *r);


#endif
