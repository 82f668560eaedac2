/*
 * share-diff.h: two profiles of the same program (two versions from a
 * fleet: Pyroscope's or Parca's, or two of hotloop's) compared function by
 * function: each function's share of the samples in both, the change with
 * an interval from the sample counts, and whether it got cheaper or
 * dearer. The engine of `hotloop canary --profiles`. Rows point at the
 * profiles' strings: both profiles must outlive the result.
 */
#ifndef HOTLOOP_SHARE_DIFF_H
#define HOTLOOP_SHARE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct strbuf;
struct json_t;

enum share_class {
	SHARE_SAME,		/* no change the counts can tell, or within the tolerance */
	SHARE_CHEAPER,
	SHARE_DEARER,
	SHARE_UNTESTED,		/* under min_share in both: not tested */
};

struct share_row {
	const char *name;
	double base_count, cand_count;	/* samples (self, or total with by_total) */
	double base_share, cand_share;	/* fractions of each profile's samples */
	double base_rate, cand_rate;	/* samples per unit of work, with the work given; else NaN */
	double delta, low, high;	/* cand_share - base_share (or the rates') and its interval */
	double rel, rel_low, rel_high;	/* cand / base - 1 of the shares (or rates); NaN when either is 0 */
	enum share_class cls;
};

struct share_diff_spec {
	const struct profile *base, *cand;
	const char *sample_type;	/* NULL: each profile's default (profile_pick_sample_type) */
	bool by_total;		/* a function's samples with its callees', not its own */
	double confidence;	/* over all the functions tested (Bonferroni); 0: 0.95 */
	double min_share;	/* functions under this share in both are not tested; 0: 0.005 */
	double tolerance;	/* a relative change within this is the same; 0: 0.05 (5%); < 0: none */
	/*
	 * The work each profile covers (requests served, instance-seconds), both
	 * or neither: with it, functions are compared by their samples per unit
	 * of work, as Poisson counts, instead of by their shares.
	 */
	double base_work, cand_work;
};

struct share_diff {
	struct share_row *rows;	/* dearer first, then cheaper, then by size of the change */
	size_t nr;
	double base_samples, cand_samples;
	double min_share;	/* the smallest share tested */
	bool per_work;		/* compared by rates (the spec's work), not shares */
	double base_work, cand_work;
	size_t tested;
	double confidence_each;	/* each function's interval's level */
	size_t cheaper, dearer;
};

/* -1 with an error (no sample type in common, an empty profile, a bad spec). */
int share_diff_build(const struct share_diff_spec *spec, struct share_diff *out);
void share_diff_release(struct share_diff *d);

const char *share_class_name(enum share_class c);

/* The table (the first 'top' tested rows that changed, then the count of the rest) and --json. */
void share_diff_format_text(const struct share_diff *d, size_t top, struct strbuf *out);
struct json_t *share_diff_to_json(const struct share_diff *d);

/*
 * Wilson's score interval of k successes in n at normal quantile z, and
 * Newcombe's interval of the difference of two proportions built from it
 * (his method 10): exposed for the tests.
 */
void share_wilson(double k, double n, double z, double *low, double *high);
void share_newcombe(double k1, double n1, double k2, double n2, double z, double *low, double *high);

#endif
