/*
 * loop.h: the improve loop as a library call. loop_run() keeps a branch
 * hotloop/<date>; each round it profiles the current best (run.c), has
 * one agent or several (one per lens) edit fresh worktrees of it, judges
 * each candidate (the agent's exit, the diff, protected paths, then the
 * gate: build, tests, fingerprints, interleaved pairs, verdict), commits
 * the best keep on the branch, and writes every attempt up in the
 * knowledge base. Everything it does is told through events (events.h):
 * the store's activity feed (store-feed.c) and the terminal are
 * subscribers. The user's working tree, index and branch are never
 * touched. src/cmd-loop.c parses options, calls it, prints the result.
 *
 * prompt.c holds the agent's side: the prompt template, the proposal the
 * agent may write, NO CANDIDATE.
 *
 * A struct loop_result owns its attempts and everything in them until
 * loop_result_release(); the spec and the project stay the caller's.
 */
#ifndef HOTLOOP_LOOP_H
#define HOTLOOP_LOOP_H

#include <stdbool.h>
#include <stddef.h>

#include "gate.h"
#include "revs.h"
#include "rules.h"
#include "sampler.h"
#include "strbuf.h"
#include "verdict.h"

struct config_list;
struct observer;
struct project;
struct json_t;

/* ---- the agent's side (prompt.c) ---- */

/* The default prompt; [agent] prompt = FILE replaces it. */
extern const char loop_default_prompt[];

/* A placeholder's name and value: {{name}} in a template. */
struct loop_var {
	const char *name, *value;
};

/*
 * Append 'tmpl' with every {{name}} replaced by its value. An unknown
 * placeholder is an error naming it (a typo in a user's template must not
 * reach the agent silently); "{{" without "}}" is kept as text.
 */
int loop_render(const char *tmpl, const struct loop_var *vars, size_t nr, struct strbuf *out);

/* The hint of a lens for the prompt ("" for a lens hotloop has no hint for). */
const char *loop_lens_hint(const char *lens);

/* What an agent may say it tried ($HOTLOOP_PROPOSAL). */
struct loop_proposal {
	char *function, *hypothesis, *title;
	double expected_gain_pct;	/* NAN when not given */
};

/*
 * Parse the proposal JSON (an object; every key optional, but those given
 * must have the right type). 0, or -1 with the reason in 'why'.
 */
int loop_parse_proposal(const char *text, size_t len, struct loop_proposal *p, struct strbuf *why);
void loop_proposal_release(struct loop_proposal *p);

/* Does the agent's output have a line saying NO CANDIDATE? */
bool loop_no_candidate(const char *output);

/* ---- the loop (loop.c) ---- */

/*
 * The first of the changed paths (relative to the repository's top) that
 * lies under a protected path (relative to the project directory 'sub'
 * within the repository, "" at the top), or NULL.
 */
const char *loop_protected_hit(const char *const *changed, size_t nr, const char *sub,
			       const struct config_list *protected_paths);

/* "perf: <function>: <title> (<workload> -12.3%)", one line, at most ~100 chars of title. */
void loop_commit_message(const char *function, const char *title, const char *workload,
			 double change_pct, struct strbuf *out);

#define LOOP_MAX_PARALLEL 8
#define LOOP_MAX_LENSES 32

struct loop_spec {
	const struct project *project;	/* opened with PROJECT_NEED_GIT */
	const char *agent;		/* a /bin/sh line, run in each candidate's worktree */
	long rounds;			/* at most this many; 0: [improve] rounds */
	const char *const *lenses;	/* cycled through; NULL: [improve] lenses (else algorithmic) */
	size_t nr_lenses;
	size_t parallel;		/* agents at once per round: 1 to LOOP_MAX_PARALLEL */
	struct sampler_config sampler;	/* how the best is profiled each round */
	bool no_sandbox;		/* run the agent, builds and tests with the user's rights */
	const char *from;		/* a new branch starts at this revision; NULL: HEAD */
	bool lock_held;			/* the caller holds PROJECT_LOCK_LOOP (loop_every()) */
	const struct observer *obs;	/* may be NULL */
};

/* One candidate of one round, from the agent's edit to how it ended. */
struct attempt {
	long round;			/* from 1 */
	const char *lens;
	char *dir;			/* its files: .hotloop/loop/<id>/round-NN/<k>-<lens> */
	/* the agent */
	int agent_status;		/* as from waitpid(); 126 << 8 when it could not start */
	bool agent_timed_out;
	double agent_seconds;
	bool no_candidate;
	char *agent_says;		/* the first line of its output (a replay says it is one) */
	struct loop_proposal prop;
	bool have_prop;
	/* the judgement */
	enum verdict_kind verdict;
	enum gate_stage stage;		/* the stage that decided */
	char **reasons;			/* every reason, those that decided first */
	size_t nr_reasons, alloc_reasons;
	struct strbuf detail;		/* the failed step's last lines, indented */
	char *diff;			/* what it changed, NULL when nothing could be read */
	bool measured;			/* the gate measured it: gate holds every run */
	struct gate_result gate;
	bool have_change;		/* the primary's change, negative = faster */
	double change_pct, ci_low, ci_high;
	char *candidate;		/* the commit of exactly the agent's files, measured */
	char *commit;			/* the commit on the branch, when kept: the same tree */
	char *kb_slug;			/* its entry in the knowledge base, once written */
	/* the target stage: the changed function with the largest share of the best's profile */
	char *target;			/* NULL when it changed none the profile knows */
	double target_share;		/* fraction */
	char *target_gain;		/* a keep's "target spin: 62.5% -> 45.5% ...", or NULL */
	bool target_cheaper;
	double started_at, finished_at;	/* UTC seconds */
	/* private */
	struct revs_tree tree;		/* the agent's checkout */
	struct revs_tree checkout;	/* the candidate's commit, checked out afresh and measured */
};

struct loop_result {
	char *repo;			/* the git top level */
	char *branch;			/* hotloop/YYYY-MM-DD */
	char *start;			/* the commit the branch stood on when the loop began */
	char *best;			/* its tip now */
	char *dir;			/* .hotloop/loop/<id>: every round's files */
	const char *agent;
	long rounds_planned, rounds;	/* at most, and run */
	long first_round;		/* the number of its first round: a continued branch's go on */
	struct attempt *attempts;	/* in the order they were judged */
	size_t nr_attempts, alloc_attempts;
	size_t kept;
	/* rejections by the stage that decided, in the order the stages first appeared */
	size_t rejected_by[GATE_STAGE_NR];
	enum gate_stage rejected_order[GATE_STAGE_NR];
	size_t nr_rejected_stages;
	const char *stop_reason;
	char *integrity;		/* what of the user's repository changed, and when; NULL: nothing */
	bool finished;			/* every planned round ran */
	bool interrupted;		/* hl_cancel() stopped it */
	bool have_total;		/* the branch's start measured afresh against the best */
	struct gate_result total;
};

void loop_result_init(struct loop_result *r);
void loop_result_release(struct loop_result *r);

/*
 * Run the loop. 0 when it ran to a stop (rounds, rejects in a row, NO
 * CANDIDATE, or an interrupt: r->interrupted), or -1 with an error when
 * it could not start (another loop, no commit, a baseline that does not
 * build or pass its tests) or a round could not run. The worktrees are
 * removed either way.
 */
int loop_run(const struct loop_spec *s, struct loop_result *r);

/* The summary of docs/loop.md, and one attempt of it (new references). */
struct json_t *loop_result_to_json(const struct loop_result *r);
struct json_t *attempt_to_json(const struct attempt *a);

/* The numbers against what the agent expected, for the kb's Results. */
void attempt_results_text(const struct attempt *a, const char *workload, struct strbuf *sb);

#endif
