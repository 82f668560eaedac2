/*
 * scenario.h: a service under load, once: start it (its command from a
 * [scenario] of hotloop.conf, on a port hotloop picks), wait until it is
 * ready, run the phases (idle, pressure with a load command, idle ...)
 * while the timeline (timeline.h) samples the service's process tree and
 * reads the metrics it and the loads print, stop it, and write
 * timeline.json, timeline.csv, summary.json and graph.html. A failure on
 * the way (no start, never ready, an early exit, a failed load, an
 * interrupt) ends the run with the reason; what was measured until then is
 * kept and written. A struct scenario_result owns everything in it.
 */
#ifndef HOTLOOP_SCENARIO_H
#define HOTLOOP_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "heap-stats.h"
#include "timeline.h"

struct observer;
struct run_result;
struct sandbox;
struct strbuf;
struct json_t;

struct scenario_spec {
	const struct config_scenario *conf;
	const char *dir;		/* where the service and the loads run */
	const char *out_dir;		/* where the files go (made if missing) */
	const char *label;		/* a name for this build in messages and files ("base"); may be NULL */
	const struct sandbox *sandbox;	/* the service, its loads and probes run in it; NULL: as they are */
	bool profile_cpu;		/* profile the judged phase, whatever the config says */
	/* the service with libhotloop-heap.so preloaded in stats mode: heap-peak, allocs, alloc-bytes of the whole run */
	bool heap;
	const struct observer *observer;
};

/* How the run ended. */
enum scenario_end {
	SCENARIO_DONE,			/* every phase ran, the service stopped */
	SCENARIO_NOT_STARTED,		/* the service could not be started, or its port was taken */
	SCENARIO_NOT_READY,		/* the probe never said ready */
	SCENARIO_EXITED,		/* the service exited before the end */
	SCENARIO_LOAD_FAILED,		/* a phase's load command failed */
	SCENARIO_INTERRUPTED,		/* hl_cancel() */
};

enum scenario_leak {
	LEAK_UNKNOWN,			/* no idle phase before and after the judged one */
	LEAK_RETURNED,			/* RSS came back within the tolerance */
	LEAK_HELD,			/* it stayed above, but stopped growing half way through the pressure */
	LEAK_GREW,			/* it stayed above, and grew to the end of the pressure */
};
extern const char *const scenario_leak_names[];	/* "unknown", "returned", "held", "grew" */

struct scenario_result {
	enum scenario_end end;
	char *error;			/* the reason, when end != SCENARIO_DONE */
	int port;
	struct timeline tl;
	struct tl_phase_stats *phases;	/* one per phase that started */
	size_t nr_phases;
	size_t judge;			/* index into phases; SIZE_MAX: it did not run */
	struct {
		enum scenario_leak verdict;
		uint64_t before_kb, after_kb;	/* RSS at the end of the idle before / after the judged phase */
		uint64_t mid_kb, end_kb;	/* RSS half way through the judged phase, and at its end */
		double tolerance;
	} leak;
	int service_status;		/* as from waitpid(); -1: not known */
	bool service_killed;		/* it did not stop within the grace time */
	double wall_s;
	double hotloop_cpu_s;		/* hotloop's own CPU over the run, sampler included */
	bool profiled;			/* profile.pb.gz holds the judged phase's CPU profile */
	char *profile_error;		/* why it does not, when it was asked for */
	char *dir;			/* where the files are */
	bool heap;			/* heap_stats holds the service's heap over the whole run */
	struct heap_stats heap_stats;
	struct heap_span_stats *heap_phases;	/* with heap: its heap in each phase (nr_phases) */
};

void scenario_result_init(struct scenario_result *r);
void scenario_result_release(struct scenario_result *r);

/*
 * Run it once. 0 when every phase ran; -1 with an error (also in
 * r->error) otherwise, r->end saying why. Either way the files are
 * written and r holds what was measured, unless the output directory
 * cannot be made (r->dir NULL).
 */
int scenario_run(const struct scenario_spec *s, struct scenario_result *r);

/*
 * One run as compare measures runs (runner.h's struct run_result, which r
 * must be initialized as): the judged phase's mean CPU as CPU seconds per
 * second (user_ns; the metric cpu compares it), its length as wall_ns, the
 * highest RSS of any phase, the judged phase's metrics (a counter's rate
 * per second, a gauge's mean), exit status 0 when every phase ran, else 1
 * with the reason warned; with s->heap, the service's heap-peak, allocs
 * and alloc-bytes over the whole run. 0, or -1 when the run could not be judged at all
 * (its output directory).
 */
int scenario_measure(const struct scenario_spec *s, struct run_result *r);

/*
 * A service alone, started as scenario_run() starts it (for the canary):
 * a port picked, the service started under its guard and probed until
 * ready; then sampled when the caller says (each sample reads its output
 * too), and stopped, its files written (timeline.json, timeline.csv,
 * graph.html, summary.json, service.log in s->out_dir). start: 0 when it
 * is ready, -1 with r->error (r->end says why; *out must still be
 * stopped). exited: true, with the reason in r->error, once it has ended.
 * stop: 0, or -1 when r->error holds a reason; frees *svc.
 */
struct scenario_service;
int scenario_service_start(const struct scenario_spec *s, struct scenario_result *r,
			   struct scenario_service **out);
void scenario_service_sample(struct scenario_service *svc);
bool scenario_service_exited(struct scenario_service *svc);
pid_t scenario_service_pid(const struct scenario_service *svc);
int scenario_service_stop(struct scenario_service *svc);

/* The summary: the keys of docs/scenario.md (scenario, phases, leak, files, ...). */
struct json_t *scenario_result_to_json(const struct scenario_result *r, const char *name);
/* The table per phase, for people. */
void scenario_result_format_text(const struct scenario_result *r, const char *name, struct strbuf *out);

/* graph.html for a timeline, with another run's laid over it, aligned by phase (may be NULL). */
void scenario_graph_html(const char *title, const struct json_t *timeline, const struct json_t *overlay,
			 const char *overlay_label, struct strbuf *out);

#endif
