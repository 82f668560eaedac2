/*
 * scenario-graph.c: graph.html, a scenario's timeline as one page that
 * needs nothing but itself (see scenario.h). The C side turns timeline
 * documents into panels of series on one time axis (a counter's rate
 * worked out, another run's times mapped onto this run's phases, each
 * phase's mean CPU) and embeds them as JSON; web/scenario-graph.js draws
 * them as SVG and shows the values under the cursor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json.h"
#include "scenario.h"
#include "strbuf.h"
#include "util.h"

static const char graph_css[] =
#include "scenario-graph.css.h"
;

static const char graph_js[] =
#include "scenario-graph.js.h"
;

/* A phase with its end known: a running one (end_s null) ends at the last sample. */
struct span {
	const char *name, *kind;
	double start, end;
	bool running;
	size_t nth;			/* how many phases of the same name come before it */
};

/* One timeline document, read defensively: it may come from a file. */
struct run {
	const json_t *points, *metrics;
	struct span *spans;
	size_t nr_spans, alloc_spans;
};

struct xy {
	double t, v;
};

struct series {
	struct xy *v;
	size_t nr, alloc;
};

/* A finite number, or false. */
static bool number(const json_t *j, double *out)
{
	double v;

	if (!json_is_number(j))
		return false;
	v = json_number_value(j);
	if (!isfinite(v))
		return false;
	*out = v;
	return true;
}

static void series_add(struct series *s, double t, double v)
{
	ALLOC_GROW(s->v, s->nr + 1, s->alloc);
	s->v[s->nr++] = (struct xy){ t, v };
}

static void series_release(struct series *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int cmp_xy(const void *a, const void *b)
{
	const struct xy *x = a, *y = b;

	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->v > y->v) - (x->v < y->v);
}

/* The time of the last sample, or -1 when there is none. */
static double last_sample(const json_t *points)
{
	double last = -1, t;
	size_t i;
	json_t *p;

	json_array_foreach(points, i, p)
		if (number(json_object_get(p, "t"), &t) && t > last)
			last = t;
	return last;
}

static void run_init(struct run *r, const json_t *doc)
{
	const json_t *phases = json_object_get(doc, "phases");
	double last;
	size_t i;
	json_t *ph;

	memset(r, 0, sizeof(*r));
	r->points = json_is_array(json_object_get(doc, "points")) ? json_object_get(doc, "points") : NULL;
	r->metrics = json_is_object(json_object_get(doc, "metrics")) ? json_object_get(doc, "metrics") : NULL;
	last = last_sample(r->points);
	json_array_foreach(phases, i, ph) {
		const char *name = json_string_value(json_object_get(ph, "name"));
		const char *kind = json_string_value(json_object_get(ph, "kind"));
		struct span s = { name, kind ? kind : "", 0, 0, false, 0 };

		if (!name || !number(json_object_get(ph, "start_s"), &s.start))
			continue;
		if (!number(json_object_get(ph, "end_s"), &s.end)) {
			s.running = true;
			s.end = last > s.start ? last : s.start;
		}
		if (s.end < s.start)
			s.end = s.start;
		for (size_t k = 0; k < r->nr_spans; k++)
			s.nth += !strcmp(r->spans[k].name, name);
		ALLOC_GROW(r->spans, r->nr_spans + 1, r->alloc_spans);
		r->spans[r->nr_spans++] = s;
	}
}

static void run_release(struct run *r)
{
	free(r->spans);
	memset(r, 0, sizeof(*r));
}

/* One quantity of every sample that has it (the PSI ones are null without PSI). */
static void read_points(const struct run *r, const char *key, struct series *out)
{
	size_t i;
	json_t *p;

	json_array_foreach(r->points, i, p) {
		double t, v;

		if (number(json_object_get(p, "t"), &t) && number(json_object_get(p, key), &v))
			series_add(out, t, v);
	}
}

/* A metric's [t, value] pairs. */
static void read_metric(const json_t *pairs, struct series *out)
{
	size_t i;
	json_t *p;

	json_array_foreach(pairs, i, p) {
		double t, v;

		if (number(json_array_get(p, 0), &t) && number(json_array_get(p, 1), &v))
			series_add(out, t, v);
	}
	if (out->nr > 1)
		qsort(out->v, out->nr, sizeof(*out->v), cmp_xy);
}

/* A counter only grows: at least two values, none below the one before, the last above the first. */
static bool is_counter(const struct series *s)
{
	if (s->nr < 2 || !(s->v[s->nr - 1].v > s->v[0].v))
		return false;
	for (size_t i = 1; i < s->nr; i++)
		if (s->v[i].v < s->v[i - 1].v)
			return false;
	return true;
}

/* Its growth per second between consecutive values, at the later one's time. */
static void rate_of(const struct series *s, struct series *out)
{
	size_t prev = 0;

	for (size_t i = 1; i < s->nr; i++) {
		double dt = s->v[i].t - s->v[prev].t, r;

		if (dt <= 0)
			continue;
		r = (s->v[i].v - s->v[prev].v) / dt;
		if (isfinite(r))
			series_add(out, s->v[i].t, r);
		prev = i;
	}
}

/*
 * A time of run 'ov' on the clock of run 'base': the phase it falls in
 * (start_s < t <= end_s) is stretched onto the phase of the same name
 * (the n-th of that name onto the n-th) in base. False for a time in no
 * phase, or in one base does not have. Two runs without phases share the
 * clock as it is.
 */
static bool map_time(const struct run *base, const struct run *ov, double t, double *out)
{
	if (!base->nr_spans && !ov->nr_spans) {
		*out = t;
		return true;
	}
	for (size_t i = 0; i < ov->nr_spans; i++) {
		const struct span *o = &ov->spans[i];

		if (!(t > o->start && t <= o->end))
			continue;
		for (size_t k = 0; k < base->nr_spans; k++) {
			const struct span *b = &base->spans[k];

			if (b->nth != o->nth || strcmp(b->name, o->name))
				continue;
			*out = b->start + (t - o->start) * (b->end - b->start) / (o->end - o->start);
			return isfinite(*out);
		}
		return false;
	}
	return false;
}

/* Move a series of 'ov' onto base's clock; the values that fall nowhere are dropped. */
static size_t map_series(const struct run *base, const struct run *ov, struct series *s)
{
	size_t n = 0, dropped;

	for (size_t i = 0; i < s->nr; i++) {
		double t;

		if (map_time(base, ov, s->v[i].t, &t))
			s->v[n++] = (struct xy){ t, s->v[i].v };
	}
	dropped = s->nr - n;
	s->nr = n;
	if (s->nr > 1)
		qsort(s->v, s->nr, sizeof(*s->v), cmp_xy);
	return dropped;
}

/* ---- the document the script draws --------------------------------------- */

struct graph {
	struct run base, ov;
	bool have_ov;
	int ncpus;
	double t_max;			/* the time axis ends here */
	size_t dropped;			/* overlay values in no phase this run has */
	json_t *panels;
};

static json_t *series_json(struct graph *g, const struct series *s)
{
	json_t *a = json_array();

	for (size_t i = 0; i < s->nr; i++) {
		json_array_append_new(a, json_pack("[f, f]", s->v[i].t, s->v[i].v));
		if (s->v[i].t > g->t_max)
			g->t_max = s->v[i].t;
	}
	return a;
}

/*
 * A line of a panel: its values in each run, as [t, value] pairs. The
 * overlay's come on their own clock and are mapped here; a 'context' line
 * (the machine around the service) is drawn for this run only.
 */
static json_t *line_json(struct graph *g, const char *label, int dash, bool context,
			 struct series *base, struct series *ov)
{
	json_t *runs = json_pack("[o]", series_json(g, base));

	if (g->have_ov && !context) {
		g->dropped += map_series(&g->base, &g->ov, ov);
		json_array_append_new(runs, series_json(g, ov));
	}
	return json_pack("{s:o, s:i, s:b, s:o}", "label", json_text(label), "dash", dash,
			 "context", context, "runs", runs);
}

/* A line of one quantity of the samples. */
static json_t *sample_line(struct graph *g, const char *label, const char *key, int dash, bool context)
{
	struct series b = { 0 }, o = { 0 };
	json_t *line;

	read_points(&g->base, key, &b);
	if (g->have_ov && !context)
		read_points(&g->ov, key, &o);
	line = line_json(g, label, dash, context, &b, &o);
	series_release(&b);
	series_release(&o);
	return line;
}

/* A way to look at a panel: its lines, and which phase mean goes with them. */
static json_t *view(const char *name, const char *phase_mean, json_t *lines)
{
	json_t *v = json_pack("{s:o, s:o}", "name", json_text(name), "lines", lines);

	if (phase_mean)
		json_object_set_new(v, "phase_mean", json_string(phase_mean));
	return v;
}

static void add_panel(struct graph *g, const char *id, const char *title, const char *unit, json_t *views)
{
	json_array_append_new(g->panels, json_pack("{s:o, s:o, s:s, s:o}", "id", json_text(id), "title",
						   json_text(title), "unit", unit, "views", views));
}

static void resource_panels(struct graph *g)
{
	char machine[64] = "% of the machine";

	if (g->ncpus > 0)
		snprintf(machine, sizeof(machine), "%% of the machine (%d CPU%s)", g->ncpus,
			 g->ncpus == 1 ? "" : "s");
	add_panel(g, "cpu", "CPU", "pct", json_pack("[o, o]",
		view("% of one core", "cpu_mean_pct",
		     json_pack("[o]", sample_line(g, "", "cpu_pct", 0, false))),
		view(machine, "cpu_machine_mean_pct",
		     json_pack("[o, o]", sample_line(g, "service", "cpu_machine_pct", 0, false),
			       sample_line(g, "machine busy, all processes", "machine_busy_pct", 1, true)))));
	add_panel(g, "rss", "RSS", "kib", json_pack("[o]", view("", NULL, json_pack("[o, o]",
		sample_line(g, "total", "rss_kb", 0, false),
		sample_line(g, "anon", "rss_anon_kb", 1, false)))));
	add_panel(g, "virt", "VIRT", "kib", json_pack("[o]", view("", NULL, json_pack("[o]",
		sample_line(g, "", "vsz_kb", 0, false)))));
}

/* A panel of one line. */
static void line_panel(struct graph *g, const char *id, const char *title, const char *unit,
		       struct series *base, struct series *ov)
{
	add_panel(g, id, title, unit, json_pack("[o]", view("", NULL, json_pack("[o]",
		  line_json(g, "", 0, false, base, ov)))));
}

/* One metric's panel as printed, and a counter's rate per second (each run's on its own clock). */
static void metric_panel(struct graph *g, const char *name)
{
	struct series b = { 0 }, o = { 0 }, br = { 0 }, orate = { 0 };
	bool counter;
	char *id, *title;

	read_metric(json_object_get(g->base.metrics, name), &b);
	if (g->have_ov)
		read_metric(json_object_get(g->ov.metrics, name), &o);
	counter = b.nr >= 2 ? is_counter(&b) : is_counter(&o);
	if (counter) {
		rate_of(&b, &br);
		rate_of(&o, &orate);
	}
	id = xstrfmt("metric:%s", name);
	line_panel(g, id, name, "count", &b, &o);
	free(id);
	if (counter) {
		id = xstrfmt("rate:%s", name);
		title = xstrfmt("%s per second", name);
		line_panel(g, id, title, "rate", &br, &orate);
		free(id);
		free(title);
	}
	series_release(&b);
	series_release(&o);
	series_release(&br);
	series_release(&orate);
}

/* In the order this run printed them, then the overlay's own. */
static void metric_panels(struct graph *g)
{
	const char *name;
	json_t *pairs;

	json_object_foreach((json_t *)g->base.metrics, name, pairs)
		metric_panel(g, name);
	if (!g->have_ov)
		return;
	json_object_foreach((json_t *)g->ov.metrics, name, pairs)
		if (!json_object_get(g->base.metrics, name))
			metric_panel(g, name);
}

/* The mean of one quantity over the samples in a phase (start_s < t <= end_s); null without any. */
static json_t *phase_mean(const struct run *r, const struct span *s, const char *key)
{
	double sum = 0, t, v;
	size_t n = 0, i;
	json_t *p;

	json_array_foreach(r->points, i, p) {
		if (!number(json_object_get(p, "t"), &t) || !number(json_object_get(p, key), &v))
			continue;
		if (t > s->start && t <= s->end) {
			sum += v;
			n++;
		}
	}
	return n && isfinite(sum / (double)n) ? json_real(sum / (double)n) : json_null();
}

/* The base's phases, with the mean CPU of each run in them (the overlay's in its phase of the same name). */
static json_t *phases_json(struct graph *g)
{
	static const char *const keys[][2] = {
		{ "cpu_mean_pct", "cpu_pct" }, { "cpu_machine_mean_pct", "cpu_machine_pct" },
	};
	json_t *a = json_array();

	for (size_t i = 0; i < g->base.nr_spans; i++) {
		const struct span *s = &g->base.spans[i], *o = NULL;
		json_t *ph = json_pack("{s:o, s:o, s:f, s:f, s:b}", "name", json_text(s->name), "kind",
				       json_text(s->kind), "start_s", s->start, "end_s", s->end,
				       "running", s->running);

		for (size_t k = 0; g->have_ov && k < g->ov.nr_spans && !o; k++)
			if (g->ov.spans[k].nth == s->nth && !strcmp(g->ov.spans[k].name, s->name))
				o = &g->ov.spans[k];
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
			json_t *means = json_pack("[o]", phase_mean(&g->base, s, keys[k][1]));

			if (g->have_ov)
				json_array_append_new(means, o ? phase_mean(&g->ov, o, keys[k][1]) : json_null());
			json_object_set_new(ph, keys[k][0], means);
		}
		if (s->end > g->t_max)
			g->t_max = s->end;
		json_array_append_new(a, ph);
	}
	return a;
}

static double number_or(const json_t *j, double otherwise)
{
	double v;

	return number(j, &v) ? v : otherwise;
}

static json_t *graph_json(const char *title, const json_t *timeline, const json_t *overlay,
			  const char *overlay_label)
{
	struct graph g = { .have_ov = overlay != NULL };
	json_t *doc, *runs;

	run_init(&g.base, timeline);
	run_init(&g.ov, overlay);
	g.ncpus = (int)number_or(json_object_get(timeline, "ncpus"), 0);
	g.panels = json_array();
	resource_panels(&g);
	metric_panels(&g);
	runs = json_pack("[o]", json_text(title));
	if (g.have_ov)
		json_array_append_new(runs, json_text(overlay_label ? overlay_label : "overlay"));
	doc = json_pack("{s:o, s:o, s:f, s:i, s:I, s:I, s:f}", "title", json_text(title), "runs", runs,
			"interval_s", number_or(json_object_get(timeline, "interval_s"), 0),
			"ncpus", g.ncpus,
			"samples", (json_int_t)json_array_size(g.base.points),
			"malformed_metric_lines",
			(json_int_t)number_or(json_object_get(timeline, "malformed_metric_lines"), 0),
			"sampler_cpu_s", number_or(json_object_get(json_object_get(timeline, "sampler"), "cpu_s"), 0));
	json_object_set_new(doc, "phases", phases_json(&g));
	json_object_set_new(doc, "panels", g.panels);
	json_object_set_new(doc, "t_max", json_real(g.t_max));
	if (g.have_ov)
		json_object_set_new(doc, "overlay_dropped", json_integer((json_int_t)g.dropped));
	run_release(&g.base);
	run_release(&g.ov);
	return doc;
}

/*
 * JSON inside <script>: every '<' as \u003c (it only occurs in strings),
 * so no name can close the element ("</script>") or start the parser's
 * escaped states ("<!--"), and the page's text stays the JSON's.
 */
static void add_script_json(struct strbuf *out, const char *json)
{
	for (const char *p = json; *p; p++) {
		if (*p == '<')
			strbuf_addstr(out, "\\u003c");
		else
			strbuf_addch(out, *p);
	}
}

void scenario_graph_html(const char *title, const json_t *timeline, const json_t *overlay,
			 const char *overlay_label, struct strbuf *out)
{
	json_t *doc;
	char *json;

	if (!title)
		title = "scenario";
	doc = graph_json(title, timeline, overlay, overlay_label);
	json = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	strbuf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	strbuf_addstr_xml(out, title);
	strbuf_addstr(out, " \xe2\x80\x94 resource timeline</title>\n<style>\n");
	strbuf_addstr(out, graph_css);
	strbuf_addstr(out, "</style>\n</head>\n<body>\n"
		      "<header><h1 id=\"title\"></h1><p id=\"facts\"></p><p id=\"legend\"></p></header>\n"
		      "<main id=\"graph\"><svg id=\"chart\" role=\"img\"></svg></main>\n"
		      "<div id=\"tip\" hidden></div>\n"
		      "<noscript>The graph is drawn by its script; the numbers are in timeline.json.</noscript>\n"
		      "<script type=\"application/json\" id=\"graph-data\">");
	add_script_json(out, json ? json : "{}");
	strbuf_addstr(out, "</script>\n<script>\n");
	strbuf_addstr(out, graph_js);
	strbuf_addstr(out, "</script>\n</body>\n</html>\n");
	free(json);
	json_decref(doc);
}
