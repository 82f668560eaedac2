/*
 * catalog-rank.c: the profile-guided scan: a finding's function looked up
 * in the profile's report by function (by name, and by file name when the
 * profile knows the source file), its shares attached, hot ones first.
 */
#include <stdlib.h>
#include <string.h>

#include "catalog-rank.h"
#include "profile-io.h"
#include "profile.h"
#include "report.h"
#include "util.h"

/* "ns::C::f(int) const" and "f" name the same function: the last component, no arguments */
static size_t base_name(const char *s, const char **start)
{
	const char *end = s + strlen(s), *p;
	int depth = 0;

	for (p = s; *p; p++)
		if (*p == '(' && p != s) {
			end = p;
			break;
		}
	*start = s;
	for (p = end; p > s; p--) {
		if (p[-1] == '>')
			depth++;
		else if (p[-1] == '<')
			depth--;
		else if (!depth && p - s >= 2 && p[-1] == ':' && p[-2] == ':') {
			*start = p;
			break;
		}
	}
	return (size_t)(end - *start);
}

static const char *file_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static const struct report_row *lookup(const struct report *rep, const struct cat_finding *f)
{
	const char *fn, *rn;
	size_t fl = base_name(f->function, &fn), rl;

	for (size_t i = 0; i < rep->nr; i++) {
		const struct report_row *row = &rep->rows[i];

		if (!row->name || row->kernel)
			continue;
		rl = base_name(row->name, &rn);
		if (rl != fl || memcmp(rn, fn, fl))
			continue;
		if (row->file && *row->file && strcmp(file_base(row->file), file_base(f->file)))
			continue;
		return row;
	}
	return NULL;
}

struct ranked {
	struct cat_finding *f;
	size_t at;		/* the scan's order, among equals */
};

static int by_share(const void *a, const void *b)
{
	const struct ranked *ra = a, *rb = b;
	const struct cat_finding *x = ra->f, *y = rb->f;

	if (x->sampled != y->sampled)
		return x->sampled ? -1 : 1;
	if (x->total_share != y->total_share)
		return x->total_share > y->total_share ? -1 : 1;
	if (x->self_share != y->self_share)
		return x->self_share > y->self_share ? -1 : 1;
	return ra->at < rb->at ? -1 : ra->at > rb->at;
}

static void free_finding(struct cat_finding *f)
{
	free(f->file);
	free(f->rule_id);
	free(f->message);
	for (size_t j = 0; j < f->nr_caps; j++) {
		free(f->caps[j].name);
		free(f->caps[j].text);
	}
	free(f->caps);
	free(f->function);
}

int cat_check_rank(struct cat_check *r, const char *path, const char *type, double min_share)
{
	struct profile prof;
	struct report rep = REPORT_INIT;
	struct ranked *order;
	size_t kept = 0;
	struct cat_finding *sorted;
	int idx, ret = -1;

	profile_init(&prof);
	if (profile_read_any(&prof, path))
		goto out;
	if ((idx = profile_pick_sample_type(&prof, type)) < 0)
		goto out;
	if (report_build(&rep, &prof, idx, REPORT_BY_FUNCTION))
		goto out;
	report_sort(&rep, REPORT_SORT_TOTAL);
	for (size_t i = 0; i < r->nr; i++) {
		struct cat_finding *f = &r->findings[i];
		const struct report_row *row = f->function && rep.total > 0 ? lookup(&rep, f) : NULL;

		f->sampled = row && row->total > 0;
		f->self_share = row ? (double)row->self / (double)rep.total : 0;
		f->total_share = row ? (double)row->total / (double)rep.total : 0;
	}
	order = xcalloc(r->nr + 1, sizeof(*order));
	sorted = xcalloc(r->nr + 1, sizeof(*sorted));
	for (size_t i = 0; i < r->nr; i++)
		order[i] = (struct ranked){ &r->findings[i], i };
	qsort(order, r->nr, sizeof(*order), by_share);
	for (size_t i = 0; i < r->nr; i++) {
		struct cat_finding *f = order[i].f;

		if (min_share > 0 && f->total_share < min_share)
			free_finding(f);
		else
			sorted[kept++] = *f;
	}
	free(r->findings);
	r->findings = sorted;
	r->nr = kept;
	r->alloc = r->nr + 1;
	free(order);
	ret = 0;
out:
	report_release(&rep);
	profile_release(&prof);
	return ret;
}
