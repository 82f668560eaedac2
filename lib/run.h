/*
 * run.h: one workload of a project profiled end to end, in-process: its
 * build, a recording of its command in its tree, then the report (text
 * and JSON), the flame graph and the brief, into one directory. `hotloop
 * run` gets a new .hotloop/runs/<id>/ with meta.json and the `latest`
 * link; the loop profiles its current best each round into the round's
 * directory.
 *
 * And the brief as every caller builds it: brief_for_workload() decides
 * which code is owned, joins the workload's scale results and the
 * knowledge base, and leaves the budget to the one rule of [project]
 * brief-budget.
 *
 * A struct run_outcome owns its strings, its profile and its brief until
 * run_outcome_release(); the request stays the caller's.
 */
#ifndef HOTLOOP_RUN_H
#define HOTLOOP_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "brief.h"
#include "profile.h"
#include "record.h"
#include "strbuf.h"

struct project;
struct config_workload;
struct sandbox;
struct observer;
struct json_t;

struct brief_request {
	const struct project *project;	/* its config may be missing (brief without one) */
	const char *dir;		/* the project's directory in the tree the profile was
					   recorded in (owned roots resolve there); NULL: project's */
	const char *workload;		/* its name: the header, its scale results; NULL: none */
	const struct brief_owned *owned;	/* the roots to use, or NULL: the project's */
	const char *kb_dir;		/* the knowledge base (it must exist), or NULL: the
					   project's when it has one */
	const char *scale_path;		/* growth exponents, or NULL: the workload's when saved */
	const char *sample_type;	/* NULL: the profile's default */
	struct brief_opts opts;		/* top, context, focus; owned and workload are set here */
};

/*
 * The brief of profile p. 'owned' holds the roots it decided (when the
 * request gives none) and must outlive the brief. 0, or -1 with an error.
 */
int brief_for_workload(const struct brief_request *rq, const struct profile *p,
		       struct brief_owned *owned, struct brief *b);

/* The budget of a brief of project p: [project] brief-budget, or the default without a config. */
size_t brief_budget(const struct project *p);

struct run_request {
	const struct project *project;
	const struct config_workload *workload;
	const char *dir;		/* the project's directory in the tree to profile; NULL: project's */
	const char *size;		/* the value of {n}; NULL: the largest of its sizes */
	struct sampler_config sampler;	/* frequency and call graph */
	bool build;			/* run [project] build first */
	bool scale;			/* also run it at its sizes (scale_run()) before the brief */
	size_t budget;			/* of the brief written; 0: no limit */
	const char *out_dir;		/* NULL: a new .hotloop/runs/<stamp>-<workload>/ with
					   meta.json and the latest link */
	const char *source;		/* for events: "run", "loop" */
	const struct observer *obs;
	const struct sandbox *sandbox;	/* record the workload in it (sandbox.h); NULL: none */
};

struct run_outcome {
	char *dir;			/* where the files are */
	char *id;			/* the run's id when run made the directory, else NULL */
	char *command;			/* the line recorded */
	struct record_result rec;
	struct profile profile;
	struct brief_owned owned;
	struct brief brief;
	bool have_brief;
	struct strbuf brief_md;		/* within the budget */
	struct json_t *brief_json;	/* within the budget */
	double seconds;
};

void run_outcome_init(struct run_outcome *o);
/* Free what it holds (it may be reused after run_outcome_init()). */
void run_outcome_release(struct run_outcome *o);

/*
 * Build (when asked), record, report, draw and brief into o (initialized,
 * and released first). 0, or -1 with an
 * error naming the step that failed (and, for a new run directory,
 * meta.json saying ok: false). In the directory: build.log, stdout.txt
 * and record.log (the workload's output), profile.pb.gz, report.txt,
 * report.json, flame.svg, brief.md, brief.json (and meta.json).
 */
int run_workload(const struct run_request *rq, struct run_outcome *out);

#endif
