/*
 * canary.h: the canary of a running service: two builds started as a
 * scenario starts a service, loaded on the same open-loop schedule
 * (loadgen.h) in alternating windows, each window's throughput, latency
 * percentiles, errors, CPU per request and RSS measured, and the windows
 * judged per metric (judge.h) into pass, marginal or fail. A struct
 * canary_result owns everything in it; the engine never prints.
 */
#ifndef HOTLOOP_CANARY_H
#define HOTLOOP_CANARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "histogram.h"
#include "judge.h"
#include "loadgen.h"

struct observer;
struct project;
struct revs_pair;
struct sandbox;
struct strbuf;
struct json_t;

enum { CANARY_BASE, CANARY_CAND };

struct canary_build {
	const char *dir;	/* where its service runs */
	const char *start;	/* its service's command; NULL: the config's 'start' */
	const struct sandbox *sandbox;	/* its service and load run in it; NULL: the spec's */
};

struct canary_spec {
	const struct config_canary *conf;
	struct canary_build builds[2];	/* CANARY_BASE, CANARY_CAND */
	const char *out_dir;	/* report.md, canary.json, canary.html; base/ and cand/ (made if missing) */
	const struct sandbox *sandbox;	/* the services and the load command run in it; NULL: as they are */
	const struct observer *observer;
};

/* How the windows were shared between the builds. */
enum canary_mode {
	CANARY_ALTERNATE,	/* one build's window, then the other's, the order flipped each round */
};

struct canary_window {
	size_t index;		/* the round */
	bool warmup;
	double start, end;	/* seconds since the canary's start */
	struct loadgen_counts c;
	double throughput;	/* answered per second */
	struct hist_summary latency;	/* ns, from the intended send time */
	double cpu_s;		/* the service's process tree over the window */
	uint64_t rss_kb;	/* at its end */
	double values[CANARY__NR_METRICS];	/* what the judge sees; NaN: none */
};

struct canary_side {
	const char *label;	/* "base", "cand" */
	char *dir;		/* its files: service.log, timeline.json, ... */
	int port;
	struct canary_window *windows;
	size_t nr_windows, alloc_windows;
	struct histogram latency;	/* every answered request after the warm-up */
	struct hist_summary summary;
	struct loadgen_counts total;	/* after the warm-up */
	double measured_s;	/* seconds of windows after the warm-up */
	double cpu_s;		/* after the warm-up */
	uint64_t rss_max_kb;
	char *problem;		/* why it could not be judged (did not start, exited ...); NULL */
};

struct canary_result {
	enum canary_mode mode;
	char mode_why[160];	/* a sentence saying why that mode */
	struct canary_side sides[2];
	size_t warmup_windows;
	struct judge_metric_spec metrics[CANARY__NR_METRICS];	/* the judged ones, names static */
	size_t metric_ids[CANARY__NR_METRICS];	/* enum canary_metric_id of each */
	size_t nr_metrics;
	struct judge_result judge;
	bool judged;
	enum judge_verdict verdict;
	char *reason;		/* one sentence: what decided */
	double wall_s;
	bool interrupted;
};

void canary_result_init(struct canary_result *r);
void canary_result_release(struct canary_result *r);

/*
 * Run the canary. 0 with a verdict in r (fail when the candidate did not
 * start, exited or errs; each named in r->reason); -1 with an error when
 * there is no verdict to give: the base build could not be run (its
 * problem in r->sides[CANARY_BASE].problem), the spec is not one, or
 * interrupted. Either way no service outlives the call and what was
 * measured stays in r.
 */
int canary_run(const struct canary_spec *s, struct canary_result *r);

/*
 * --base and --cand: each a REV (checked out outside the user's tree) or
 * a DIR, opened into *trees and built with [project] build as compare
 * builds them (logs in log_dir). 0; 1 when a build failed, the reason in
 * *why (allocated); -1 with an error.
 */
int canary_prepare(const struct project *p, const char *base, const char *cand, bool build,
		   const char *log_dir, struct revs_pair *trees, char **why);

/* The exit status of a verdict: 0 pass or marginal, HL_EXIT_REJECT fail. */
int canary_exit_status(const struct canary_result *r);

/* The result as one JSON document (docs/canary.md). */
struct json_t *canary_result_to_json(const struct canary_result *r, const char *name);
/* The table for people. */
void canary_format_text(const struct canary_result *r, const char *name, struct strbuf *out);
/* report.md: the verdict and the table in Markdown, fit for a pull request's body. */
void canary_format_markdown(const struct canary_result *r, const char *name, struct strbuf *out);
/* canary.html: one self-contained page, both builds' latency distributions and timelines. */
void canary_format_html(const struct canary_result *r, const char *name, struct strbuf *out);
/* Write report.md, canary.json and canary.html into dir: 0 or -1 with an error. */
int canary_write_files(const struct canary_result *r, const char *name, const char *dir);

#endif
