/*
 * scale.h: growth exponents from profiles of one workload run at several
 * input sizes (`hotloop scale`). Each function's cost at each size is its
 * total (inclusive) time, counted as report.c counts it; log(cost) = a +
 * k log(n) is then fitted by least squares, with R^2 and a 95% interval on
 * the exponent k. Nothing here runs a program or touches a file.
 *
 * A struct scale owns its rows, their strings and arrays; it keeps no
 * pointer into the profiles it was fed.
 */
#ifndef HOTLOOP_SCALE_H
#define HOTLOOP_SCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "sampler.h"

struct profile;
struct strbuf;
struct json_t;

#define SCALE_MIN_SAMPLES 20		/* default: a size counts with this many */
#define SCALE_MIN_POINTS 3		/* sizes needed for a fit */
#define SCALE_SUPERLINEAR_EXPONENT 1.3	/* superlinear: k above this ... */
#define SCALE_SUPERLINEAR_R2 0.9	/* ... with R^2 at least this */
#define SCALE_CONST_EXPONENT 0.25	/* |k| below this: ~const */
#define SCALE_LINEAR_LOW 0.7		/* linear: k from this to the superlinear bound */

struct scale_fit {
	bool fitted;
	char reason[128];	/* why not, when !fitted */
	size_t points;		/* sizes the fit used */
	double exponent;	/* k */
	double intercept;	/* a, in log(seconds) */
	double r2;
	double ci_low, ci_high;	/* 95% interval on k (t with points - 2 df) */
};

/*
 * Fit log(y) = a + k log(x) to n points by least squares. Every x and y
 * must be finite and above 0, and the x not all equal; at least
 * SCALE_MIN_POINTS of them. Otherwise fit->fitted is false with a reason.
 */
void scale_fit_power(const double *x, const double *y, size_t n, struct scale_fit *fit);

/* The 97.5% quantile of Student's t with df degrees of freedom (df >= 1). */
double scale_t975(size_t df);

/* k > SCALE_SUPERLINEAR_EXPONENT with R^2 >= SCALE_SUPERLINEAR_R2. */
bool scale_is_superlinear(const struct scale_fit *f);

/*
 * The verdict in words: "~n^2.0 superlinear", "~n^1.0 linear",
 * "~n^0.5 sublinear", "~n^-0.5 decreasing", "~const", "poor fit" (R^2
 * below SCALE_SUPERLINEAR_R2), or "too few samples".
 */
void scale_describe(const struct scale_fit *f, struct strbuf *out);

/* One function across the sizes. */
struct scale_fn {
	char *function;
	char *file;		/* "" when unknown */
	char *dso;		/* basename of its mapped file */
	double *cost;		/* total (inclusive) seconds, one per size */
	double *self;		/* self seconds, one per size */
	uint64_t *samples;	/* samples with it on the stack, one per size */
	struct scale_fit fit;
	bool superlinear;
};

struct scale {
	size_t nr_sizes;
	uint64_t *sizes;	/* ascending */
	double *seconds;	/* the whole program's, per size */
	uint64_t *samples;	/* the whole program's, per size */
	double *wall_seconds;	/* the runs' wall time, per size (scale_set_run) */
	char **profiles;	/* the saved profile of each size, or NULL */
	struct scale_fit program;
	struct scale_fn *fns;
	size_t nr_fns, alloc_fns;
	struct hindex index;	/* private: (function, file) -> fns[] */
};

#define SCALE_INIT { 0 }

/* Start with 'nr' sizes (ascending, distinct; copied). */
void scale_init(struct scale *s, const uint64_t *sizes, size_t nr);
void scale_release(struct scale *s);

/*
 * Add the samples of profile p to size 'idx' (several profiles of one
 * size add up: --repeat). Functions are merged by name and file (by name
 * and DSO when the file is unknown). Time is the profile's cpu/nanoseconds
 * sample type; else samples times the period when the period is in
 * nanoseconds; else samples times 'seconds_per_sample' (1 / frequency).
 * p needs a samples/count sample type. 0, or -1 with an error.
 */
int scale_add_profile(struct scale *s, size_t idx, const struct profile *p,
		      double seconds_per_sample);

/*
 * Fit every function and the program over the sizes where it has at least
 * 'min_samples' samples, then sort the functions by cost at the largest
 * size, most first.
 */
void scale_fit_all(struct scale *s, uint64_t min_samples);

/* Record how size 'idx' was run: its wall time and saved profile (copied). */
void scale_set_run(struct scale *s, size_t idx, double wall_seconds, const char *profile);

/* The document docs/scale.md describes; 'command' as the user gave it. */
struct json_t *scale_to_json(const struct scale *s, const char *workload, const char *command);

/*
 * The table of `hotloop scale`: the functions fitted over at least one
 * size (the first 'top' of them, 0: all), each with its exponent, R^2,
 * verdict and cost per size, then the whole program.
 */
void scale_format_table(const struct scale *s, const char *workload, size_t top,
			uint64_t min_samples, struct strbuf *out);

/* ---- the driver (scale-run.c) ---- */

struct observer;

struct scale_spec {
	const char *workload;		/* the result's name: a workload's, or "cmd" */
	const char *command;		/* as given, {n} included, for the result */
	char *const *argv;		/* a command's arguments, {n} in them; or NULL ... */
	const char *run;		/* ... a workload's /bin/sh line with {n} */
	const char *dir;		/* where it runs; NULL: here */
	double timeout;			/* a workload's, seconds; 0: none */
	const uint64_t *sizes;		/* ascending, distinct */
	size_t nr_sizes;
	struct sampler_config sampler;
	long repeat;			/* recordings per size, added up */
	uint64_t min_samples;		/* a size counts for a function with this many */
	const char *top;		/* results go under <top>/.hotloop/scale/ */
	const char *output;		/* the JSON here instead; "-": nowhere (the caller prints it) */
	const struct observer *obs;	/* EV_PROGRESS per run; may be NULL */
};

/*
 * Record each size (a run that fails stops everything: the message names
 * the size), fit every function, and save the profiles to
 * .hotloop/scale/<workload>/n<size>.pb.gz and the JSON to
 * .hotloop/scale/<workload>.json (or s->output), replacing the last
 * complete result only when this one is complete. s is initialized here:
 * release it either way.
 * 0 and *doc (the JSON, a new reference), or -1 with an error, or
 * HL_EXIT_NOT_PERMITTED / NOT_FOUND / NOT_EXECUTABLE from record.
 */
struct json_t;
int scale_run(const struct scale_spec *spec, struct scale *s, struct json_t **doc);

#endif
