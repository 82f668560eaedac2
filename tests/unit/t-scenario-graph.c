/*
 * t-scenario-graph.c: unit tests for scenario-graph.c: graph.html is one
 * document that loads nothing, names cannot break out of its data or its
 * markup, another run's times land on this run's phases, and empty,
 * single, running and huge inputs still make a page. With
 * HOTLOOP_GRAPH_OUT=DIR it also writes sample pages there, for a browser
 * to draw (tests/e2e/t7900-scenario-graph.sh).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include "test-helpers.h"
#include "scenario.h"
#include "strbuf.h"
#include "timeline.h"

#define DATA_OPEN "<script type=\"application/json\" id=\"graph-data\">"

static void push(struct timeline *tl, double t, double cpu, uint64_t rss_kb)
{
	ALLOC_GROW(tl->points, tl->nr_points + 1, tl->alloc_points);
	tl->points[tl->nr_points++] = (struct tl_point){
		.t = t, .cpu_pct = cpu, .cpu_machine_pct = cpu / 2, .rss_kb = rss_kb,
		.rss_anon_kb = rss_kb * 3 / 4, .rss_file_kb = rss_kb / 4, .vsz_kb = 4 * rss_kb,
		.processes = 1, .threads = 4, .machine_busy_pct = cpu / 2 + 5,
		.psi_cpu_pct = -1, .psi_memory_pct = -1, .psi_io_pct = -1,
	};
}

/* end < 0: still running */
static void phase(struct timeline *tl, const char *name, const char *kind, double start, double end)
{
	ALLOC_GROW(tl->phases, tl->nr_phases + 1, tl->alloc_phases);
	tl->phases[tl->nr_phases++] = (struct tl_phase){ xstrdup(name), xstrdup(kind), start, end };
}

/* A metric value under any name, as a hostile document could carry it. */
static void metric(struct timeline *tl, const char *name, double t, double v)
{
	int idx = timeline_metric_index(tl, name);

	if (idx < 0) {
		ALLOC_GROW(tl->metric_names, tl->nr_metric_names + 1, tl->alloc_metric_names);
		idx = (int)tl->nr_metric_names;
		tl->metric_names[tl->nr_metric_names++] = xstrdup(name);
	}
	ALLOC_GROW(tl->metrics, tl->nr_metrics + 1, tl->alloc_metrics);
	tl->metrics[tl->nr_metrics++] = (struct tl_metric_point){ t, (size_t)idx, v };
}

static void render(const char *title, const struct timeline *tl, const struct timeline *ov,
		   const char *label, struct strbuf *html)
{
	json_t *a = timeline_to_json(tl), *b = ov ? timeline_to_json(ov) : NULL;

	scenario_graph_html(title, a, b, label, html);
	json_decref(a);
	json_decref(b);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The JSON the page embeds, parsed back (the caller owns it). */
static json_t *data_of(const char *html)
{
	const char *start = strstr(html, DATA_OPEN), *end;
	json_error_t err;
	json_t *doc;

	assert_non_null(start);
	start += strlen(DATA_OPEN);
	end = strstr(start, "</script>");
	assert_non_null(end);
	doc = json_loadb(start, (size_t)(end - start), 0, &err);
	if (!doc)
		fail_msg("the data block is not JSON: %s at %d", err.text, err.position);
	return doc;
}

static json_t *panel(const json_t *doc, const char *id)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(doc, "panels"), i, p)
		if (!strcmp(json_string_value(json_object_get(p, "id")), id))
			return p;
	return NULL;
}

/* The [t, v] pairs of one run of one line of a panel's view. */
static json_t *pairs(const json_t *doc, const char *id, size_t view, size_t line, size_t run)
{
	json_t *p = panel(doc, id);

	assert_non_null(p);
	return json_array_get(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(p, "views"), view), "lines"), line), "runs"), run);
}

static double at(const json_t *pairs, size_t i, size_t k)
{
	return json_number_value(json_array_get(json_array_get(pairs, i), k));
}

/* A phase's mean of 'key' ("cpu_mean_pct", ...) in one run. */
static double mean(const json_t *phase, const char *key, size_t run)
{
	return json_number_value(json_array_get(json_object_get(phase, key), run));
}

/* What every page must be: one document, nothing loaded from anywhere, its data intact. */
static void check_page(const char *html)
{
	static const char *const outside[] = {
		"http://", "https://", "src=", "<link", "@import", "url(", "//cdn", "<iframe", "<img",
	};
	const char *data, *end;
	struct strbuf markup = STRBUF_INIT;

	assert_true(!strncmp(html, "<!DOCTYPE html>\n<html", 21));
	assert_int_equal(count(html, "<html"), 1);
	assert_int_equal(count(html, "</html>"), 1);
	assert_true(!strcmp(html + strlen(html) - 8, "</html>\n"));
	assert_int_equal(count(html, "<body>"), 1);
	/* the data and the script, nothing more */
	assert_int_equal(count(html, "<script"), 2);
	assert_int_equal(count(html, "</script>"), 2);
	data = strstr(html, DATA_OPEN);
	assert_non_null(data);
	data += strlen(DATA_OPEN);
	end = strstr(data, "</script>");
	assert_null(memmem(data, (size_t)(end - data), "NaN", 3));
	assert_null(memmem(data, (size_t)(end - data), "Infinity", 8));
	json_decref(data_of(html));
	/* the page's own markup, style and script (names in the data are only text) */
	strbuf_add(&markup, html, (size_t)(data - html));
	strbuf_addstr(&markup, end);
	for (size_t i = 0; i < ARRAY_SIZE(outside); i++)
		if (strcasestr(markup.buf, outside[i]))
			fail_msg("the page refers to '%s'", outside[i]);
	strbuf_release(&markup);
}

/*
 * A run as a service's: idle, pressure, idle again, sampled every half
 * second, with a counter (events), a counter that grows under pressure
 * only (dropped) and a gauge (queue_depth). 'load' is the CPU under
 * pressure, 'mem' scales its memory; 'running': the last phase has not
 * ended. Each sample comes a little before its half second.
 */
static void service_run(struct timeline *tl, double idle, double pressure, double idle2, double load,
			double mem, bool running)
{
	double end = idle + pressure + idle2, events = 0, dropped = 0;
	unsigned seed = 7;

	timeline_init(tl, 0.5);
	tl->ncpus = 4;
	tl->samples = (size_t)(end / 0.5);
	tl->sampler_cpu_ns = 41000000;
	phase(tl, "idle", "idle", 0, idle);
	phase(tl, "pressure", "pressure", idle, idle + pressure);
	phase(tl, "idle-2", "idle", idle + pressure, running ? -1 : end);
	for (int k = 1; k <= (int)(end / 0.5); k++) {
		double t = k * 0.5, noise, cpu, mib;

		seed = seed * 1103515245u + 12345u;
		noise = (double)(seed >> 16 & 0x7fff) / 32768.0 - 0.5;
		if (t <= idle) {
			cpu = 1.5 + noise;
			mib = 40;
		} else if (t <= idle + pressure) {
			cpu = load + 6 * sin(t) + 4 * noise;
			mib = 40 + 80 * (t - idle) / pressure;
		} else {
			cpu = 1.5 + noise;
			mib = 50 + 70 * exp(-(t - idle - pressure));
		}
		push(tl, t - 0.002, cpu, (uint64_t)(mem * mib * 1024));
		tl->points[tl->nr_points - 1].vsz_kb = (uint64_t)(mem * (t > idle && t <= idle + pressure ? 612 : 310) * 1024);
		if (k % 2)
			continue;
		events += t > idle && t <= idle + pressure ? 20000 + 500 * noise : 5;
		dropped += t > idle && t <= idle + pressure ? 30 : 0;
		metric(tl, "events", t, events);
		metric(tl, "dropped", t, dropped);
		metric(tl, "queue_depth", t, t > idle && t <= idle + pressure ? 180 + 40 * noise : 0);
	}
}

static void test_scenario_graph__one_document(void **state)
{
	struct timeline tl;
	struct strbuf html = STRBUF_INIT;
	static const char *const ids[] = {
		"cpu", "rss", "virt", "metric:events", "rate:events", "metric:dropped", "rate:dropped",
		"metric:queue_depth",
	};
	json_t *doc, *ph, *rate;
	double sum = 0;
	size_t n = 0, i;
	json_t *p;

	(void)state;
	service_run(&tl, 10, 30, 10, 85, 1, false);
	render("pressure \xe2\x80\x94 base", &tl, NULL, NULL, &html);
	check_page(html.buf);
	assert_non_null(strstr(html.buf, "<title>pressure \xe2\x80\x94 base \xe2\x80\x94 resource timeline</title>"));
	doc = data_of(html.buf);

	/* the panels, in order: a gauge has no rate */
	assert_int_equal(json_array_size(json_object_get(doc, "panels")), ARRAY_SIZE(ids));
	json_array_foreach(json_object_get(doc, "panels"), i, p)
		assert_string_equal(json_string_value(json_object_get(p, "id")), ids[i]);
	assert_int_equal(json_array_size(json_object_get(panel(doc, "cpu"), "views")), 2);
	assert_int_equal(json_array_size(pairs(doc, "cpu", 0, 0, 0)), tl.nr_points);
	assert_int_equal(json_array_size(json_object_get(doc, "runs")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "ncpus")), 4);

	/* the judged phase's mean CPU: the points with start_s < t <= end_s */
	for (size_t k = 0; k < tl.nr_points; k++)
		if (tl.points[k].t > 10 && tl.points[k].t <= 40) {
			sum += tl.points[k].cpu_pct;
			n++;
		}
	ph = json_array_get(json_object_get(doc, "phases"), 1);
	assert_string_equal(json_string_value(json_object_get(ph, "name")), "pressure");
	assert_int_equal(json_array_size(json_object_get(ph, "cpu_mean_pct")), 1);
	assert_true(fabs(mean(ph, "cpu_mean_pct", 0) - sum / n) < 1e-6);
	assert_true(fabs(mean(ph, "cpu_machine_mean_pct", 0) - sum / n / 2) < 1e-6);
	assert_true(json_is_false(json_object_get(ph, "running")));

	/* a counter's rate: 30 dropped a second under pressure, none outside */
	rate = pairs(doc, "rate:dropped", 0, 0, 0);
	assert_int_equal(json_array_size(rate), 49);
	for (i = 0; i < json_array_size(rate); i++) {
		double t = at(rate, i, 0), v = at(rate, i, 1);

		assert_true(fabs(v - (t > 10 && t <= 40 ? 30 : 0)) < 1e-9);
	}
	assert_true(fabs(json_number_value(json_object_get(doc, "t_max")) - 50) < 0.01);
	json_decref(doc);
	strbuf_release(&html);
	timeline_release(&tl);
}

static void test_scenario_graph__hostile_names(void **state)
{
	static const char *const names[] = {
		"</script><b>x", "<!--<script>", "</SCRIPT >", "a&amp;b\"'", "\xc3\xa9v\xc3\xa9nements",
	};
	struct timeline tl;
	struct strbuf html = STRBUF_INIT;
	json_t *doc;

	(void)state;
	timeline_init(&tl, 1);
	phase(&tl, "</script><img src=x onerror=alert(1)>", "pressure", 0, 3);
	push(&tl, 1, 10, 100);
	push(&tl, 2, 20, 100);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		metric(&tl, names[i], 1, 1);
		metric(&tl, names[i], 2, 2);
	}
	render("</title><script>alert(1)</script>", &tl, &tl, "<b>other</b>", &html);
	check_page(html.buf);
	assert_null(strstr(html.buf, "<b>"));
	assert_null(strstr(html.buf, "<img"));
	assert_null(strstr(html.buf, "<!--"));
	assert_null(strcasestr(html.buf, "</script><"));
	assert_non_null(strstr(html.buf, "\\u003c/script>\\u003cb>x"));
	assert_non_null(strstr(html.buf, "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));

	/* and every name comes back as it was */
	doc = data_of(html.buf);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char id[64];

		snprintf(id, sizeof(id), "metric:%s", names[i]);
		assert_non_null(panel(doc, id));
		assert_string_equal(json_string_value(json_object_get(panel(doc, id), "title")), names[i]);
	}
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "phases"), 0),
							      "name")), "</script><img src=x onerror=alert(1)>");
	assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "runs"), 1)), "<b>other</b>");
	assert_string_equal(json_string_value(json_object_get(doc, "title")), "</title><script>alert(1)</script>");
	json_decref(doc);
	strbuf_release(&html);
	timeline_release(&tl);
}

/*
 * The overlay's phases are shorter, and it has one (warmup) the base has
 * not: each of its times lands at the same fraction of the base's phase of
 * the same name. Its CPU is its own time, so each point says where it was.
 */
static void test_scenario_graph__overlay_aligned(void **state)
{
	struct timeline base, ov;
	struct strbuf html = STRBUF_INIT;
	json_t *doc, *cpu, *rate, *ph;

	(void)state;
	timeline_init(&base, 1);
	phase(&base, "idle", "idle", 0, 10);
	phase(&base, "pressure", "pressure", 10, 40);
	phase(&base, "idle-2", "idle", 40, -1);		/* running: ends at its last sample, 45 */
	for (int t = 1; t <= 45; t++)
		push(&base, t, t, 100);
	metric(&base, "events", 11, 0);
	metric(&base, "events", 41, 3000);

	timeline_init(&ov, 1);
	phase(&ov, "warmup", "idle", 0, 2);
	phase(&ov, "idle", "idle", 2, 7);
	phase(&ov, "pressure", "pressure", 7, 22);
	phase(&ov, "idle-2", "idle", 22, 30);
	for (int t = 1; t <= 32; t++)
		push(&ov, t, t, 200);
	metric(&ov, "events", 8, 0);
	metric(&ov, "events", 12, 400);
	metric(&ov, "events", 17, 900);
	metric(&ov, "only_ov", 9, 1);

	render("base", &base, &ov, "candidate", &html);
	check_page(html.buf);
	doc = data_of(html.buf);
	assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "runs"), 0)), "base");
	assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "runs"), 1)), "candidate");

	cpu = pairs(doc, "cpu", 0, 0, 1);
	/* t = 1, 2 (warmup) and 31, 32 (after its last phase) dropped */
	assert_int_equal(json_array_size(cpu), 28);
	for (size_t i = 0; i < json_array_size(cpu); i++) {
		double t = at(cpu, i, 0), was = at(cpu, i, 1), want;

		if (was <= 7)
			want = 0 + (was - 2) * 10 / 5;
		else if (was <= 22)
			want = 10 + (was - 7) * 30 / 15;
		else
			want = 40 + (was - 22) * 5 / 8;
		if (fabs(t - want) > 1e-6)
			fail_msg("overlay t=%g drawn at %g, not %g", was, t, want);
	}
	assert_true(fabs(at(cpu, 0, 0) - 2) < 1e-9 && fabs(at(cpu, 0, 1) - 3) < 1e-9);
	/* the base is drawn as it was */
	assert_true(fabs(at(pairs(doc, "cpu", 0, 0, 0), 44, 0) - 45) < 1e-9);
	/* the machine's busy CPU is the base's only */
	assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(panel(doc, "cpu"), "views"), 1), "lines"), 1), "runs")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "overlay_dropped")), 5 * 4 + 0);

	/* a counter's rate per second of its own run: 100/s, at the mapped times */
	rate = pairs(doc, "rate:events", 0, 0, 1);
	assert_int_equal(json_array_size(rate), 2);
	assert_true(fabs(at(rate, 0, 0) - 20) < 1e-9 && fabs(at(rate, 0, 1) - 100) < 1e-9);
	assert_true(fabs(at(rate, 1, 0) - 30) < 1e-9 && fabs(at(rate, 1, 1) - 100) < 1e-9);
	assert_true(fabs(at(pairs(doc, "rate:events", 0, 0, 0), 0, 1) - 100) < 1e-9);
	/* a metric of the overlay only still gets its panel */
	assert_int_equal(json_array_size(pairs(doc, "metric:only_ov", 0, 0, 0)), 0);
	assert_int_equal(json_array_size(pairs(doc, "metric:only_ov", 0, 0, 1)), 1);

	/* each phase's mean CPU in each run: the base's (10, 40], the overlay's (7, 22] */
	ph = json_array_get(json_object_get(doc, "phases"), 1);
	assert_true(fabs(mean(ph, "cpu_mean_pct", 0) - 25.5) < 1e-9);
	assert_true(fabs(mean(ph, "cpu_mean_pct", 1) - 15) < 1e-9);
	ph = json_array_get(json_object_get(doc, "phases"), 2);
	assert_true(json_is_true(json_object_get(ph, "running")));
	assert_true(fabs(json_number_value(json_object_get(ph, "end_s")) - 45) < 1e-9);
	assert_true(fabs(mean(ph, "cpu_mean_pct", 0) - 43) < 1e-9);
	assert_int_equal(json_array_size(json_object_get(doc, "phases")), 3);
	json_decref(doc);
	strbuf_release(&html);
	timeline_release(&base);
	timeline_release(&ov);
}

static void test_scenario_graph__edges(void **state)
{
	struct timeline tl;
	struct strbuf html = STRBUF_INIT;
	json_t *doc, *tj, *bad, *word;

	(void)state;
	/* nothing at all */
	timeline_init(&tl, 0.1);
	render("empty", &tl, &tl, "empty too", &html);
	check_page(html.buf);
	doc = data_of(html.buf);
	assert_int_equal(json_array_size(json_object_get(doc, "panels")), 3);
	assert_int_equal(json_array_size(pairs(doc, "rss", 0, 0, 0)), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "phases")), 0);
	json_decref(doc);

	/* one point, in a phase still running */
	strbuf_reset(&html);
	phase(&tl, "pressure", "pressure", 0, -1);
	push(&tl, 0.1, 50, 1000);
	metric(&tl, "events", 0.1, 7);
	render("one", &tl, NULL, NULL, &html);
	check_page(html.buf);
	doc = data_of(html.buf);
	assert_int_equal(json_array_size(pairs(doc, "cpu", 0, 0, 0)), 1);
	assert_int_equal(json_array_size(pairs(doc, "metric:events", 0, 0, 0)), 1);
	assert_null(panel(doc, "rate:events"));
	assert_true(fabs(json_number_value(json_object_get(json_array_get(json_object_get(doc, "phases"), 0),
							   "end_s")) - 0.1) < 1e-9);
	json_decref(doc);

	/* a metric without points, huge values, a rate too large for a double */
	strbuf_reset(&html);
	metric(&tl, "huge", 1, 1e300);
	metric(&tl, "huge", 1.5, 1.7e308);
	metric(&tl, "huge", 3.5, 1.75e308);
	tj = timeline_to_json(&tl);
	json_object_set_new(json_object_get(tj, "metrics"), "silent", json_array());
	scenario_graph_html("huge", tj, NULL, NULL, &html);
	check_page(html.buf);
	doc = data_of(html.buf);
	assert_int_equal(json_array_size(pairs(doc, "metric:silent", 0, 0, 0)), 0);
	assert_null(panel(doc, "rate:silent"));
	assert_true(at(pairs(doc, "metric:huge", 0, 0, 0), 1, 1) > 1e308);
	/* (1.7e308 - 1e300) / 0.5 s is no double: left out; the next one is */
	assert_int_equal(json_array_size(pairs(doc, "rate:huge", 0, 0, 0)), 1);
	json_decref(doc);

	/* documents of the wrong shape, and none */
	strbuf_reset(&html);
	bad = json_pack("{s:i, s:[i, {s:s}, {s:i, s:s}], s:[s], s:{s:i, s:[[s, i], [i]]}}", "ncpus", 2,
			"phases", 3, "name", "no start", "start_s", 1, "name", "x",
			"points", "no", "metrics", "m", 1, "n", "a", 1, 2);
	assert_non_null(bad);
	word = json_string("not a timeline");
	scenario_graph_html("bad", bad, word, NULL, &html);
	check_page(html.buf);
	strbuf_reset(&html);
	scenario_graph_html(NULL, NULL, NULL, NULL, &html);
	check_page(html.buf);
	json_decref(bad);
	json_decref(word);
	json_decref(tj);
	strbuf_release(&html);
	timeline_release(&tl);
}

static void write_page(const char *dir, const char *name, const struct strbuf *html)
{
	char *path = xstrfmt("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(html->buf, 1, html->len, f), html->len);
	assert_int_equal(fclose(f), 0);
	free(path);
}

/* Pages for a browser to draw: HOTLOOP_GRAPH_OUT=DIR. */
static void test_scenario_graph__sample_pages(void **state)
{
	const char *dir = getenv("HOTLOOP_GRAPH_OUT");
	struct timeline base, ov, tl;
	struct strbuf html = STRBUF_INIT;

	(void)state;
	if (!dir)
		return;
	service_run(&base, 10, 30, 10, 85, 1, false);
	service_run(&ov, 8, 36, 12, 62, 0.8, false);
	render("pressure: base", &base, &ov, "candidate", &html);
	write_page(dir, "graph.html", &html);

	strbuf_reset(&html);
	timeline_release(&base);
	service_run(&base, 10, 30, 10, 85, 1, true);
	render("pressure: still running", &base, NULL, NULL, &html);
	write_page(dir, "single.html", &html);

	strbuf_reset(&html);
	timeline_init(&tl, 0.1);
	render("nothing sampled", &tl, NULL, NULL, &html);
	write_page(dir, "empty.html", &html);

	strbuf_reset(&html);
	phase(&tl, "</script><b>x", "pressure", 0, -1);
	push(&tl, 0.5, 40, 2048);
	metric(&tl, "</script><b>x", 0.5, 1e300);
	metric(&tl, "<!--<script>", 0.5, -3);
	render("<b>hostile</b>", &tl, &tl, "</script>", &html);
	write_page(dir, "hostile.html", &html);

	strbuf_release(&html);
	timeline_release(&base);
	timeline_release(&ov);
	timeline_release(&tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scenario_graph__one_document),
		cmocka_unit_test(test_scenario_graph__hostile_names),
		cmocka_unit_test(test_scenario_graph__overlay_aligned),
		cmocka_unit_test(test_scenario_graph__edges),
		cmocka_unit_test(test_scenario_graph__sample_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
