/*
 * speedscope.c: writes speedscope's file format. Frames are functions
 * (name, file, first line), shared by every stack; each distinct stack is
 * one sample, root first, weighed by its summed value.
 */
#include <string.h>

#include <jansson.h>

#include "json.h"
#include "profile.h"
#include "speedscope.h"
#include "stacks.h"
#include "strbuf.h"
#include "util.h"

/* Frame indexes by function id (functions are dense) and for unknown frames by mapping. */
struct frames {
	json_t *array;
	long *by_fn;		/* function id -> index + 1 */
	long *by_map;		/* mapping id -> index + 1 of its [unknown] frame; [0]: no mapping */
};

static long frame_index(struct frames *f, const struct profile *p, const struct pf_frame *fr)
{
	long *slot;
	json_t *o;

	if (fr->fn)
		slot = &f->by_fn[fr->fn->id - 1];
	else
		slot = &f->by_map[fr->mapping ? fr->mapping->id : 0];
	if (*slot)
		return *slot - 1;
	o = json_object();
	json_object_set_new(o, "name", json_text(frame_name(p, fr)));
	if (fr->fn && *frame_file(p, fr))
		json_object_set_new(o, "file", json_text(frame_file(p, fr)));
	if (fr->fn && fr->fn->start_line > 0)
		json_object_set_new(o, "line", json_integer(fr->fn->start_line));
	json_array_append_new(f->array, o);
	*slot = (long)json_array_size(f->array);
	return *slot - 1;
}

static const char *unit_of(const struct profile *p, int idx)
{
	const char *u = profile_string(p, p->sample_type[idx].unit);

	if (!strcmp(u, "nanoseconds") || !strcmp(u, "microseconds") || !strcmp(u, "milliseconds") ||
	    !strcmp(u, "seconds") || !strcmp(u, "bytes"))
		return u;
	return "none";
}

int speedscope_write(const struct profile *p, int idx, const char *name, struct strbuf *out)
{
	struct frames f = { json_array(), NULL, NULL };
	struct stack_sum *st = NULL;
	struct pf_frame *frames = NULL;
	size_t alloc = 0, n = stacks_merge(p, idx, &st);
	json_t *doc, *prof, *samples = json_array(), *weights = json_array(), *shared = json_object();
	int64_t total = 0;
	char *s;
	int ret = 0;

	f.by_fn = xcalloc(p->nr_functions + 1, sizeof(*f.by_fn));
	f.by_map = xcalloc(p->nr_mappings + 1, sizeof(*f.by_map));
	for (size_t i = 0; i < n; i++) {
		size_t nf;
		json_t *stack;

		if (st[i].value <= 0)
			continue;
		nf = profile_sample_frames(p, &p->samples[st[i].sample], &frames, &alloc);
		if (!nf)
			continue;
		stack = json_array();
		for (size_t k = nf; k-- > 0;)	/* root first */
			json_array_append_new(stack, json_integer(frame_index(&f, p, &frames[k])));
		json_array_append_new(samples, stack);
		json_array_append_new(weights, json_integer(st[i].value));
		total = sat_add(total, st[i].value);
	}
	prof = json_pack("{s:s, s:o, s:s, s:I, s:I, s:o, s:o}", "type", "sampled",
			 "name", json_text(profile_string(p, p->sample_type[idx].type)),
			 "unit", unit_of(p, idx),
			 "startValue", (json_int_t)0, "endValue", (json_int_t)total,
			 "samples", samples, "weights", weights);
	json_object_set_new(shared, "frames", f.array);
	doc = json_pack("{s:s, s:o, s:[o], s:o, s:I, s:s}",
			"$schema", "https://www.speedscope.app/file-format-schema.json",
			"shared", shared, "profiles", prof, "name", json_text(name),
			"activeProfileIndex", (json_int_t)0, "exporter", "hotloop");
	s = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (!s)
		ret = error("cannot encode the speedscope document");
	else
		strbuf_addstr(out, s);
	free(s);
	json_decref(doc);
	free(f.by_fn);
	free(f.by_map);
	free(frames);
	free(st);
	return ret;
}
