/*
 * heap-brief.c: the memory brief (heap-brief.h). Sites are the functions
 * of the first owned frames; each gathers its samples' values, its
 * realloc sizes (the samples' "bytes" labels) and its hottest line and
 * caller; then the rules of docs/brief.md tag the top sites, reading the
 * binary's code (asm.h) to see whether the allocating call sits in a loop.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "json.h"
#include "profile.h"
#include "asm.h"
#include "heap-profile.h"
#include "heap-brief.h"

static const char *const tag_names[HT_NR] = {
	"alloc-in-loop", "realloc-growth", "short-lived", "leak",
};

const char *heap_tag_name(enum heap_tag t)
{
	return t < HT_NR ? tag_names[t] : "?";
}

void heap_brief_init(struct heap_brief *hb, const struct profile *p)
{
	memset(hb, 0, sizeof(*hb));
	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
		hb->idx[t] = profile_find_sample_type(p, heap_sample_types[t][0]);
	hb->nr_site_of = p->nr_functions + 1;
	hb->site_of = xcalloc(hb->nr_site_of, sizeof(*hb->site_of));
	hb->peak = -1;
	for (size_t i = 0; i < p->nr_comments; i++) {
		const char *c = profile_string(p, p->comments[i]);

		if (c && !strncmp(c, "heap-peak=", 10))
			hb->peak = strtoll(c + 10, NULL, 10);
	}
}

static int64_t add_sat(int64_t a, int64_t b)
{
	return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* The sample's numeric "bytes" label, 0 when it has none. */
static int64_t sample_bytes(const struct profile *p, const struct pf_sample *s)
{
	for (uint32_t j = 0; j < s->nlabel; j++) {
		const struct pf_label *l = &p->labels[s->label_off + j];
		const char *k = profile_string(p, l->key);

		if (k && !strcmp(k, "bytes") && !l->str)
			return l->num;
	}
	return 0;
}

static const char *frame_binary(const struct profile *p, const struct pf_frame *f)
{
	const char *b = f && f->mapping ? profile_string(p, f->mapping->filename) : NULL;

	return b && *b ? b : NULL;
}

void heap_brief_add(struct heap_brief *hb, const struct profile *p, size_t i,
		    const struct pf_frame *site, const struct pf_frame *caller)
{
	const struct pf_sample *s = &p->samples[i];
	const int64_t *v = profile_sample_values(p, s);
	int64_t vals[HEAP_NR_SAMPLE_TYPES] = { 0 };
	struct heap_site *hs;
	const char *op;

	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++) {
		vals[t] = v && hb->idx[t] >= 0 ? v[hb->idx[t]] : 0;
		hb->total[t] = add_sat(hb->total[t], vals[t]);
	}
	if (!site || !site->fn || site->fn->id >= hb->nr_site_of)
		return;
	if (!hb->site_of[site->fn->id]) {
		ALLOC_GROW(hb->sites, hb->nr_sites + 1, hb->alloc_sites);
		hs = &hb->sites[hb->nr_sites++];
		memset(hs, 0, sizeof(*hs));
		hs->function = frame_name(p, site);
		hs->file = frame_file(p, site);
		hs->binary = frame_binary(p, site);
		hs->best_line_bytes = hs->best_caller_bytes = -1;
		hb->site_of[site->fn->id] = (uint32_t)hb->nr_sites;
	}
	hs = &hb->sites[hb->site_of[site->fn->id] - 1];
	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++) {
		hs->v[t] = add_sat(hs->v[t], vals[t]);
		hb->owned[t] = add_sat(hb->owned[t], vals[t]);
	}
	/* one sample per stack: its bytes say which line and caller weigh most */
	if (vals[HEAP_ALLOC_SPACE] > hs->best_line_bytes) {
		hs->best_line_bytes = vals[HEAP_ALLOC_SPACE];
		hs->line = site->line;
	}
	if (caller && caller->fn && vals[HEAP_ALLOC_SPACE] > hs->best_caller_bytes) {
		hs->best_caller_bytes = vals[HEAP_ALLOC_SPACE];
		hs->caller = frame_name(p, caller);
		hs->caller_file = frame_file(p, caller);
		hs->caller_line = caller->line;
		hs->caller_binary = frame_binary(p, caller);
	}
	op = profile_sample_label(p, s, HEAP_LABEL_OP);
	if (op && !strcmp(op, "realloc")) {
		int64_t sz = sample_bytes(p, s);

		hs->realloc_objects = add_sat(hs->realloc_objects, vals[HEAP_ALLOC_OBJECTS]);
		if (sz > 0 && (!hs->min_size || sz < hs->min_size))
			hs->min_size = sz;
		if (sz > hs->max_size)
			hs->max_size = sz;
	}
}

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

/*
 * The line of the head of the innermost loop holding code of 'line' of
 * 'function' in 'binary' (the line of a call's return address: the call
 * itself, or the loop's next step after it), 0 when there is none or the
 * code cannot be read.
 */
static int64_t loop_around(const char *binary, const char *function, int64_t line)
{
	struct asm_function f;
	report_fn old_error, old_warn;
	int64_t head_line = 0;
	int ret;

	if (!binary || *binary != '/' || !function || line <= 0)
		return 0;
	old_error = set_error_routine(quiet);
	old_warn = set_warn_routine(quiet);
	ret = asm_load(binary, function, true, &f);
	if (ret) {
		/* a compiler's clone of it: build_list.constprop.0 */
		char *clone = xstrfmt("%s.", function);

		asm_function_release(&f);
		ret = asm_load(binary, clone, false, &f);
		free(clone);
	}
	if (!ret) {
		asm_analyze(&f);
		for (size_t i = 0; i < f.nr_insns && !head_line; i++) {
			const struct asm_insn *in = &f.insns[i];

			if (in->line != line || in->loop < 0 || (size_t)in->loop >= f.nr_loops)
				continue;
			for (size_t j = 0; j < f.nr_insns; j++)
				if (f.insns[j].addr == f.loops[in->loop].head)
					head_line = f.insns[j].line;
			if (!head_line)
				head_line = line;
		}
	}
	asm_function_release(&f);
	set_error_routine(old_error);
	set_warn_routine(old_warn);
	return head_line;
}

static int rank_type = HEAP_ALLOC_SPACE;

static int cmp_bytes(const void *a, const void *b)
{
	const struct heap_site *x = a, *y = b;

	if (x->v[rank_type] != y->v[rank_type])
		return x->v[rank_type] > y->v[rank_type] ? -1 : 1;
	return strcmp(x->function, y->function);
}

static const struct heap_site *count_base;

static int cmp_count(const void *a, const void *b)
{
	const struct heap_site *x = &count_base[*(const size_t *)a], *y = &count_base[*(const size_t *)b];

	if (x->v[HEAP_ALLOC_OBJECTS] != y->v[HEAP_ALLOC_OBJECTS])
		return x->v[HEAP_ALLOC_OBJECTS] > y->v[HEAP_ALLOC_OBJECTS] ? -1 : 1;
	return strcmp(x->function, y->function);
}

static void set_tags(struct heap_site *s, bool no_asm)
{
	int64_t n = s->v[HEAP_ALLOC_OBJECTS];

	if (s->v[HEAP_LEAK_SPACE] > 0)
		s->evidence[HT_LEAK] = xstrfmt("%" PRId64 " bytes in %" PRId64 " objects still live at exit",
					       s->v[HEAP_LEAK_SPACE], s->v[HEAP_LEAK_OBJECTS]);
	if (n >= HEAP_SHORT_MIN && (double)s->v[HEAP_TEMP_OBJECTS] >= HEAP_SHORT_SHARE * (double)n)
		s->evidence[HT_SHORT_LIVED] = xstrfmt("%" PRId64 " of %" PRId64 " allocations (%.0f%%) "
						      "freed before the next allocation",
						      s->v[HEAP_TEMP_OBJECTS], n,
						      100.0 * (double)s->v[HEAP_TEMP_OBJECTS] / (double)n);
	if (s->realloc_objects >= HEAP_REALLOC_MIN &&
	    (!s->min_size || (double)s->max_size >= HEAP_REALLOC_GROWTH * (double)s->min_size)) {
		if (s->min_size)
			s->evidence[HT_REALLOC_GROWTH] = xstrfmt("%" PRId64 " realloc calls, sizes from %"
								 PRId64 " to %" PRId64 " bytes",
								 s->realloc_objects, s->min_size, s->max_size);
		else
			s->evidence[HT_REALLOC_GROWTH] = xstrfmt("%" PRId64 " realloc calls",
								 s->realloc_objects);
	}
	if (n >= HEAP_LOOP_MIN && !no_asm) {
		/* the allocating call in a loop of the site, else the site's call in its caller's */
		s->loop_line = loop_around(s->binary, s->function, s->line);
		s->loop_in = s->function;
		if (!s->loop_line && s->caller) {
			s->loop_line = loop_around(s->caller_binary, s->caller, s->caller_line);
			s->loop_in = s->caller;
		}
		if (s->loop_line)
			s->evidence[HT_ALLOC_IN_LOOP] = xstrfmt("%" PRId64 " allocations; the call at line %"
								PRId64 " of %s is in a loop of line %" PRId64,
								n, s->loop_in == s->function ? s->line : s->caller_line,
								s->loop_in, s->loop_line);
	}
}

void heap_brief_finish(struct heap_brief *hb, size_t top, bool no_asm)
{
	size_t keep;

	free(hb->site_of);
	hb->site_of = NULL;
	hb->nr_site_of = 0;
	/* a profile of what was live only (jemalloc without prof_accum): by those bytes */
	hb->rank = HEAP_ALLOC_SPACE;
	if (hb->total[HEAP_ALLOC_SPACE] <= 0)
		hb->rank = hb->total[HEAP_INUSE_SPACE] > 0 ? HEAP_INUSE_SPACE : HEAP_LEAK_SPACE;
	rank_type = hb->rank;
	if (hb->nr_sites)
		qsort(hb->sites, hb->nr_sites, sizeof(*hb->sites), cmp_bytes);
	hb->by_count = xcalloc(hb->nr_sites + 1, sizeof(*hb->by_count));
	for (size_t i = 0; i < hb->nr_sites; i++)
		hb->by_count[i] = i;
	count_base = hb->sites;
	if (hb->nr_sites)
		qsort(hb->by_count, hb->nr_sites, sizeof(*hb->by_count), cmp_count);
	keep = top ? top : HEAP_SITES_SHOWN;
	hb->show = hb->nr_sites < HEAP_SITES_SHOWN ? hb->nr_sites : HEAP_SITES_SHOWN;
	/* a site shown by count keeps its tags too */
	for (size_t i = 0; i < hb->nr_sites; i++) {
		bool shown = i < keep;

		for (size_t j = 0; !shown && j < hb->nr_sites && j < (keep + 1) / 2; j++)
			shown = hb->by_count[j] == i;
		if (shown)
			set_tags(&hb->sites[i], no_asm);
	}
}

static void human(struct strbuf *sb, int64_t v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	if (!u)
		strbuf_addf(sb, "%" PRId64 " B", v);
	else
		strbuf_addf(sb, "%.1f %s", d, units[u]);
}

static void md_tags(const struct heap_site *s, struct strbuf *sb)
{
	bool any = false;

	for (int t = 0; t < HT_NR; t++)
		if (s->evidence[t]) {
			strbuf_addf(sb, "%s%s", any ? ", " : "", tag_names[t]);
			any = true;
		}
	if (!any)
		strbuf_addch(sb, '-');
}

void heap_brief_format_md(const struct heap_brief *hb, struct strbuf *sb)
{
	size_t keep = hb->show;

	strbuf_addf(sb, "\n## Allocation sites (owned code, by %s)\n\n- heap: ",
		    hb->rank == HEAP_ALLOC_SPACE ? "bytes allocated" : hb->rank == HEAP_INUSE_SPACE ?
		    "bytes in use (the profile has no allocation counts)" :
		    "bytes leaked (the profile has no allocation counts)");
	human(sb, hb->total[HEAP_ALLOC_SPACE]);
	strbuf_addf(sb, " in %" PRId64 " allocations", hb->total[HEAP_ALLOC_OBJECTS]);
	if (hb->peak >= 0) {
		strbuf_addstr(sb, ", peak ");
		human(sb, hb->peak);
	}
	strbuf_addstr(sb, ", leaked ");
	human(sb, hb->total[HEAP_LEAK_SPACE]);
	strbuf_addf(sb, ", %" PRId64 " temporary; owned sites allocate %.1f%% of the bytes\n\n",
		    hb->total[HEAP_TEMP_OBJECTS],
		    hb->total[HEAP_ALLOC_SPACE] > 0 ? 100.0 * (double)hb->owned[HEAP_ALLOC_SPACE] /
		    (double)hb->total[HEAP_ALLOC_SPACE] : 0.0);
	if (!hb->nr_sites) {
		strbuf_addstr(sb, "No owned function allocates.\n");
		return;
	}
	strbuf_addstr(sb, "| # | site | line | bytes | allocs | at peak | leaked | temporary | tags |\n"
		      "|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < keep; i++) {
		const struct heap_site *s = &hb->sites[i];

		strbuf_addf(sb, "| %zu | `%s` | %s:%" PRId64 " | ", i + 1, s->function, s->file, s->line);
		human(sb, s->v[HEAP_ALLOC_SPACE]);
		strbuf_addf(sb, " | %" PRId64 " | ", s->v[HEAP_ALLOC_OBJECTS]);
		human(sb, s->v[HEAP_INUSE_SPACE]);
		strbuf_addstr(sb, " | ");
		human(sb, s->v[HEAP_LEAK_SPACE]);
		strbuf_addf(sb, " | %" PRId64 " | ", s->v[HEAP_TEMP_OBJECTS]);
		md_tags(s, sb);
		strbuf_addstr(sb, " |\n");
	}
	strbuf_addstr(sb, "\nBy count:");
	for (size_t i = 0; i < hb->nr_sites && i < (HEAP_SITES_SHOWN + 1) / 2; i++) {
		const struct heap_site *s = &hb->sites[hb->by_count[i]];

		strbuf_addf(sb, "%s `%s` %" PRId64, i ? "," : "", s->function, s->v[HEAP_ALLOC_OBJECTS]);
		/* a site not in the table: its tags here */
		if (hb->by_count[i] >= keep) {
			bool any = false;

			for (int t = 0; t < HT_NR; t++)
				if (s->evidence[t]) {
					strbuf_addf(sb, "%s%s", any ? ", " : " (", tag_names[t]);
					any = true;
				}
			if (any)
				strbuf_addch(sb, ')');
		}
	}
	strbuf_addstr(sb, "\n\n");
	for (size_t i = 0; i < keep; i++) {
		const struct heap_site *s = &hb->sites[i];

		for (int t = 0; t < HT_NR; t++)
			if (s->evidence[t])
				strbuf_addf(sb, "- `%s` %s: %s\n", s->function, tag_names[t], s->evidence[t]);
	}
}

static json_t *site_json(const struct heap_site *s, size_t rank)
{
	json_t *o = json_object(), *tags = json_array();

	json_object_set_new(o, "rank", json_integer((json_int_t)rank));
	json_object_set_new(o, "function", json_text(s->function));
	json_object_set_new(o, "file", json_text(s->file));
	json_object_set_new(o, "line", json_integer((json_int_t)s->line));
	json_object_set_new(o, "caller", s->caller ? json_text(s->caller) : json_null());
	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
		json_object_set_new(o, heap_sample_types[t][0], json_integer((json_int_t)s->v[t]));
	json_object_set_new(o, "realloc_objects", json_integer((json_int_t)s->realloc_objects));
	for (int t = 0; t < HT_NR; t++)
		if (s->evidence[t])
			json_array_append_new(tags, json_pack("{s:s, s:o}", "tag", tag_names[t],
							      "evidence", json_text(s->evidence[t])));
	json_object_set_new(o, "tags", tags);
	return o;
}

json_t *heap_brief_to_json(const struct heap_brief *hb)
{
	json_t *o = json_object(), *tot = json_object(), *sites = json_array(), *count = json_array();
	size_t keep = hb->show;

	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
		json_object_set_new(tot, heap_sample_types[t][0], json_integer((json_int_t)hb->total[t]));
	json_object_set_new(tot, "heap_peak", hb->peak >= 0 ? json_integer((json_int_t)hb->peak) : json_null());
	json_object_set_new(o, "totals", tot);
	json_object_set_new(o, "ranked_by", json_text(heap_sample_types[hb->rank][0]));
	for (size_t i = 0; i < keep; i++)
		json_array_append_new(sites, site_json(&hb->sites[i], i + 1));
	for (size_t i = 0; i < hb->nr_sites && i < (HEAP_SITES_SHOWN + 1) / 2; i++) {
		const struct heap_site *s = &hb->sites[hb->by_count[i]];

		json_array_append_new(count, json_pack("{s:o, s:I}", "function", json_text(s->function),
						       "alloc_objects", (json_int_t)s->v[HEAP_ALLOC_OBJECTS]));
	}
	json_object_set_new(o, "sites", sites);
	json_object_set_new(o, "by_count", count);
	return o;
}

void heap_brief_release(struct heap_brief *hb)
{
	for (size_t i = 0; i < hb->nr_sites; i++)
		for (int t = 0; t < HT_NR; t++)
			free(hb->sites[i].evidence[t]);
	free(hb->sites);
	free(hb->by_count);
	free(hb->site_of);
	memset(hb, 0, sizeof(*hb));
}
