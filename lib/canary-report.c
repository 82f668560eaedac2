/*
 * canary-report.c: a canary's result for people and programs: the table,
 * the JSON document, report.md (a pull request's body) and canary.html
 * (one self-contained page of inline SVG: both builds' latency
 * distributions and their per-window timelines).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "canary.h"
#include "json.h"
#include "strbuf.h"
#include "util.h"

static const char *verdict_word(const struct canary_result *r)
{
	return judge_verdict_name(r->verdict);
}

/* A metric's value in its unit, for people. */
static void fmt_value(char *buf, size_t n, size_t id, bool per_s, double v)
{
	if (!isfinite(v)) {
		snprintf(buf, n, "-");
		return;
	}
	switch (id) {
	case CANARY_THROUGHPUT:
		snprintf(buf, n, "%.1f/s", v);
		break;
	case CANARY_ERRORS:
		snprintf(buf, n, "%.2f%%", v * 100);
		break;
	case CANARY_RSS:
		snprintf(buf, n, "%.0f KiB", v);
		break;
	default:	/* seconds; a command's load: CPU seconds per second */
		if (id == CANARY_CPU_PER_REQUEST && per_s)
			snprintf(buf, n, "%.1f%% cpu", v * 100);
		else if (fabs(v) < 1e-3)
			snprintf(buf, n, "%.1f us", v * 1e6);
		else if (fabs(v) < 1)
			snprintf(buf, n, "%.2f ms", v * 1e3);
		else
			snprintf(buf, n, "%.3f s", v);
		break;
	}
}

static void fmt_rel(char *buf, size_t n, const struct judge_metric_result *m)
{
	if (m->cls == JUDGE_NODATA)
		snprintf(buf, n, "-");
	else if (isfinite(m->rel))
		snprintf(buf, n, "%+.1f%% [%+.1f%%, %+.1f%%]", m->rel * 100, m->rel_low * 100, m->rel_high * 100);
	else
		snprintf(buf, n, "%+.3g [%+.3g, %+.3g]", m->shift, m->low, m->high);
}

static const char *class_word(const struct judge_metric_result *m)
{
	if (m->spread_failed)
		return "spread";
	return judge_class_name(m->cls);
}

static bool per_second(const struct canary_result *r, size_t i)
{
	return r->metric_ids[i] == CANARY_CPU_PER_REQUEST && !strcmp(r->metrics[i].name, "cpu");
}

static void side_line(const struct canary_side *s, struct strbuf *out)
{
	strbuf_addf(out, "%s: ", s->label);
	if (s->problem) {
		strbuf_addf(out, "%s\n", s->problem);
		return;
	}
	strbuf_addf(out, "port %d, %" PRIu64 " requests after the warm-up, %" PRIu64 " answered, %" PRIu64
		    " errors", s->port, s->total.scheduled, s->total.answered, s->total.nr_errors);
	for (int e = 0; e < LOADGEN_ERR__COUNT; e++)
		if (s->total.errors[e])
			strbuf_addf(out, " %s=%" PRIu64, loadgen_error_name(e), s->total.errors[e]);
	if (s->summary.count)
		strbuf_addf(out, "; latency p50 %.3f ms, p99 %.3f ms, max %.3f ms", (double)s->summary.p50 / 1e6,
			    (double)s->summary.p99 / 1e6, (double)s->summary.max / 1e6);
	strbuf_addf(out, "; CPU %.3f s, RSS peak %" PRIu64 " KiB\n", s->cpu_s, s->rss_max_kb);
}

void canary_format_text(const struct canary_result *r, const char *name, struct strbuf *out)
{
	strbuf_addf(out, "canary %s: %s", name, verdict_word(r));
	if (r->judged)
		strbuf_addf(out, " (score %.0f)", r->judge.score);
	strbuf_addf(out, ": %s\n", r->reason ? r->reason : "");
	strbuf_addf(out, "schedule: %s; %zu windows of warm-up dropped\n", r->mode_why, r->warmup_windows);
	if (r->judged) {
		strbuf_addf(out, "%-16s %12s %12s  %-32s %s\n", "metric", "base", "cand", "change [interval]", "class");
		for (size_t i = 0; i < r->nr_metrics; i++) {
			const struct judge_metric_result *m = &r->judge.metrics[i];
			char b[32], c[32], rel[64];

			fmt_value(b, sizeof(b), r->metric_ids[i], per_second(r, i), m->base_median);
			fmt_value(c, sizeof(c), r->metric_ids[i], per_second(r, i), m->cand_median);
			fmt_rel(rel, sizeof(rel), m);
			strbuf_addf(out, "%-16s %12s %12s  %-32s %s%s%s\n", r->metrics[i].name, b, c, rel, class_word(m),
				    m->failed ? " FAIL" : "", r->metrics[i].critical ? " (critical)" : "");
		}
	}
	for (int i = 0; i < 2; i++)
		side_line(&r->sides[i], out);
}

void canary_format_markdown(const struct canary_result *r, const char *name, struct strbuf *out)
{
	strbuf_addf(out, "## Canary `%s`: **%s**", name, verdict_word(r));
	if (r->judged)
		strbuf_addf(out, " (score %.0f of 100)", r->judge.score);
	strbuf_addf(out, "\n\n%s.\n\n", r->reason ? r->reason : "");
	strbuf_addf(out, "Both builds served the same open-loop schedule in %s; %zu warm-up windows were dropped. "
		    "Each metric is the candidate's windows against the base's (Mann-Whitney U, the "
		    "Hodges-Lehmann shift with its interval).\n\n", r->mode_why, r->warmup_windows);
	if (r->judged) {
		strbuf_addstr(out, "| metric | base | candidate | change [interval] | class |\n"
				   "|---|---:|---:|---|---|\n");
		for (size_t i = 0; i < r->nr_metrics; i++) {
			const struct judge_metric_result *m = &r->judge.metrics[i];
			char b[32], c[32], rel[64];

			fmt_value(b, sizeof(b), r->metric_ids[i], per_second(r, i), m->base_median);
			fmt_value(c, sizeof(c), r->metric_ids[i], per_second(r, i), m->cand_median);
			fmt_rel(rel, sizeof(rel), m);
			strbuf_addf(out, "| %s%s | %s | %s | %s | %s%s |\n", r->metrics[i].name,
				    r->metrics[i].critical ? " (critical)" : "", b, c, rel, class_word(m),
				    m->failed ? " **fail**" : "");
		}
		strbuf_addch(out, '\n');
	}
	for (int i = 0; i < 2; i++) {
		strbuf_addstr(out, "- ");
		side_line(&r->sides[i], out);
	}
}

/* ---- JSON ----------------------------------------------------------------- */

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *side_json(const struct canary_side *s)
{
	json_t *o = json_object(), *ws = json_array();

	json_object_set_new(o, "label", json_text(s->label));
	json_object_set_new(o, "problem", s->problem ? json_text(s->problem) : json_null());
	json_object_set_new(o, "port", json_integer(s->port));
	json_object_set_new(o, "dir", s->dir ? json_text(s->dir) : json_null());
	json_object_set_new(o, "total", loadgen_counts_to_json(&s->total));
	json_object_set_new(o, "latency_ns", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "count",
						       (json_int_t)s->summary.count, "p50", (json_int_t)s->summary.p50,
						       "p90", (json_int_t)s->summary.p90, "p99",
						       (json_int_t)s->summary.p99, "p999", (json_int_t)s->summary.p999,
						       "max", (json_int_t)s->summary.max));
	json_object_set_new(o, "cpu_s", json_real(s->cpu_s));
	json_object_set_new(o, "measured_s", json_real(s->measured_s));
	json_object_set_new(o, "rss_max_kb", json_integer((json_int_t)s->rss_max_kb));
	for (size_t i = 0; i < s->nr_windows; i++) {
		const struct canary_window *w = &s->windows[i];
		json_t *wo = json_object(), *v = json_object();

		json_object_set_new(wo, "index", json_integer((json_int_t)w->index));
		json_object_set_new(wo, "warmup", json_boolean(w->warmup));
		json_object_set_new(wo, "start_s", json_real(w->start));
		json_object_set_new(wo, "end_s", json_real(w->end));
		json_object_set_new(wo, "counts", loadgen_counts_to_json(&w->c));
		json_object_set_new(wo, "cpu_s", json_real(w->cpu_s));
		json_object_set_new(wo, "rss_kb", json_integer((json_int_t)w->rss_kb));
		for (int m = 0; m < CANARY__NR_METRICS; m++)
			json_object_set_new(v, canary_metric_names[m], num(w->values[m]));
		json_object_set_new(wo, "values", v);
		json_array_append_new(ws, wo);
	}
	json_object_set_new(o, "windows", ws);
	return o;
}

json_t *canary_result_to_json(const struct canary_result *r, const char *name)
{
	json_t *o = json_object(), *ms = json_array(), *sides = json_object();

	json_object_set_new(o, "canary", json_text(name));
	json_object_set_new(o, "verdict", json_text(verdict_word(r)));
	json_object_set_new(o, "score", r->judged ? json_real(r->judge.score) : json_null());
	json_object_set_new(o, "reason", json_text(r->reason ? r->reason : ""));
	json_object_set_new(o, "critical_failed", json_boolean(r->judged && r->judge.critical_failed));
	json_object_set_new(o, "mode", json_text("alternate"));
	json_object_set_new(o, "schedule", json_text(r->mode_why));
	json_object_set_new(o, "warmup_windows", json_integer((json_int_t)r->warmup_windows));
	json_object_set_new(o, "wall_s", json_real(r->wall_s));
	for (size_t i = 0; r->judged && i < r->nr_metrics; i++) {
		const struct judge_metric_result *m = &r->judge.metrics[i];
		const struct judge_metric_spec *sp = &r->metrics[i];
		json_t *mo = json_object();

		json_object_set_new(mo, "metric", json_text(sp->name));
		json_object_set_new(mo, "class", json_text(judge_class_name(m->cls)));
		json_object_set_new(mo, "failed", json_boolean(m->failed));
		json_object_set_new(mo, "critical", json_boolean(sp->critical));
		json_object_set_new(mo, "weight", json_real(sp->weight));
		json_object_set_new(mo, "windows", json_pack("[I, I]", (json_int_t)m->n_base, (json_int_t)m->n_cand));
		json_object_set_new(mo, "base_median", num(m->base_median));
		json_object_set_new(mo, "cand_median", num(m->cand_median));
		json_object_set_new(mo, "shift", num(m->shift));
		json_object_set_new(mo, "shift_low", num(m->low));
		json_object_set_new(mo, "shift_high", num(m->high));
		json_object_set_new(mo, "relative", num(m->rel));
		json_object_set_new(mo, "relative_low", num(m->rel_low));
		json_object_set_new(mo, "relative_high", num(m->rel_high));
		json_object_set_new(mo, "p", m->cls == JUDGE_NODATA ? json_null() : num(m->p));
		json_object_set_new(mo, "spread_failed", json_boolean(m->spread_failed));
		json_object_set_new(mo, "reason", json_text(m->reason));
		json_array_append_new(ms, mo);
	}
	json_object_set_new(o, "metrics", ms);
	for (int i = 0; i < 2; i++)
		json_object_set_new(sides, r->sides[i].label, side_json(&r->sides[i]));
	json_object_set_new(o, "builds", sides);
	return o;
}

/* ---- canary.html ---------------------------------------------------------- */

#define SVG_W 640
#define SVG_H 220
#define PAD_L 70
#define PAD_B 30
static const char *const side_colors[2] = { "#1f77b4", "#d62728" };

/* One chart: a polyline per build of (x, y) with x and y in their own units. */
struct series {
	double *x, *y;
	size_t n;
};

static void svg_chart(struct strbuf *out, const char *title, const char *xlabel, const char *ylabel,
		      const struct series s[2], bool logx)
{
	double x0 = INFINITY, x1 = -INFINITY, y1 = 0;

	for (int b = 0; b < 2; b++)
		for (size_t i = 0; i < s[b].n; i++) {
			double x = logx ? log10(s[b].x[i]) : s[b].x[i];

			if (!isfinite(x) || !isfinite(s[b].y[i]))
				continue;
			x0 = fmin(x0, x);
			x1 = fmax(x1, x);
			y1 = fmax(y1, s[b].y[i]);
		}
	strbuf_addstr(out, "<figure><figcaption>");
	strbuf_addstr_xml(out, title);
	strbuf_addf(out, "</figcaption>\n<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n",
		    SVG_W, SVG_H, SVG_W, SVG_H);
	if (!(x1 > x0) || !(y1 > 0)) {
		strbuf_addstr(out, "<text x=\"100\" y=\"100\">no data</text></svg></figure>\n");
		return;
	}
	strbuf_addf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>"
		    "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n",
		    PAD_L, SVG_H - PAD_B, SVG_W - 10, SVG_H - PAD_B, PAD_L, PAD_L, SVG_H - PAD_B);
	strbuf_addf(out, "<text x=\"4\" y=\"16\" font-size=\"11\">%.4g</text>"
		    "<text x=\"4\" y=\"%d\" font-size=\"11\">0</text>\n", y1, SVG_H - PAD_B);
	strbuf_addf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">", PAD_L, SVG_H - 8);
	strbuf_addstr_xml(out, xlabel);
	strbuf_addf(out, "</text><text x=\"4\" y=\"%d\" font-size=\"11\">", SVG_H / 2);
	strbuf_addstr_xml(out, ylabel);
	strbuf_addstr(out, "</text>\n");
	for (int b = 0; b < 2; b++) {
		strbuf_addf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", side_colors[b]);
		for (size_t i = 0; i < s[b].n; i++) {
			double x = logx ? log10(s[b].x[i]) : s[b].x[i];

			if (!isfinite(x) || !isfinite(s[b].y[i]))
				continue;
			strbuf_addf(out, "%.1f,%.1f ", PAD_L + (x - x0) / (x1 - x0) * (SVG_W - 10 - PAD_L),
				    (SVG_H - PAD_B) - s[b].y[i] / y1 * (SVG_H - PAD_B - 10));
		}
		strbuf_addstr(out, "\"/>\n");
	}
	strbuf_addstr(out, "</svg></figure>\n");
}

/* The latency at each percentile 1 - 10^-k/10 (0% .. 99.99%): the distribution's tail in view. */
static void latency_series(const struct canary_side *s, struct series *o)
{
	static const double pcts[] = { 1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100 };
	size_t n = ARRAY_SIZE(pcts);

	o->x = xcalloc(n, sizeof(double));
	o->y = xcalloc(n, sizeof(double));
	o->n = s->latency.total ? n : 0;
	for (size_t i = 0; i < o->n; i++) {
		o->x[i] = 1 / (1 - fmin(pcts[i], 99.999) / 100);	/* 1/(1-q): the tail spread out */
		o->y[i] = (double)histogram_percentile(&s->latency, pcts[i]) / 1e6;
	}
}

static void window_series(const struct canary_side *s, size_t metric, double scale, struct series *o)
{
	o->x = xcalloc(s->nr_windows + 1, sizeof(double));
	o->y = xcalloc(s->nr_windows + 1, sizeof(double));
	o->n = s->nr_windows;
	for (size_t i = 0; i < s->nr_windows; i++) {
		o->x[i] = (double)s->windows[i].index;
		o->y[i] = s->windows[i].values[metric] * scale;
	}
}

static void free_series(struct series s[2])
{
	for (int b = 0; b < 2; b++) {
		free(s[b].x);
		free(s[b].y);
	}
}

void canary_format_html(const struct canary_result *r, const char *name, struct strbuf *out)
{
	static const struct { size_t metric; double scale; const char *title, *unit; } charts[] = {
		{ CANARY_P99, 1e3, "p99 latency per window", "ms" },
		{ CANARY_P50, 1e3, "p50 latency per window", "ms" },
		{ CANARY_THROUGHPUT, 1, "throughput per window", "answered/s" },
		{ CANARY_ERRORS, 100, "errors per window", "% of requests" },
		{ CANARY_CPU_PER_REQUEST, 1e6, "CPU per request per window", "us" },
		{ CANARY_RSS, 1, "RSS at each window's end", "KiB" },
	};
	struct strbuf md = STRBUF_INIT;
	struct series s[2];

	strbuf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'unsafe-inline'\">\n<title>canary ");
	strbuf_addstr_xml(out, name);
	strbuf_addstr(out, "</title>\n<style>body{font:14px system-ui,sans-serif;margin:1.5em;max-width:60em}"
		      "figure{margin:1em 0}figcaption{font-weight:600}pre{background:#f4f4f4;padding:.6em;"
		      "overflow-x:auto}.base{color:#1f77b4}.cand{color:#d62728}</style>\n</head>\n<body>\n<h1>canary ");
	strbuf_addstr_xml(out, name);
	strbuf_addf(out, ": %s</h1>\n<p><span class=\"base\">&#9632; base</span> &nbsp; "
		    "<span class=\"cand\">&#9632; candidate</span></p>\n<pre>", verdict_word(r));
	canary_format_text(r, name, &md);
	strbuf_addstr_xml(out, md.buf);
	strbuf_addstr(out, "</pre>\n");
	for (int b = 0; b < 2; b++)
		latency_series(&r->sides[b], &s[b]);
	svg_chart(out, "latency distribution after the warm-up (from the intended send time)",
		  "percentile: 0, 90, 99, 99.9, 99.99 (1/(1-q), log)", "ms", s, true);
	free_series(s);
	for (size_t c = 0; c < ARRAY_SIZE(charts); c++) {
		for (int b = 0; b < 2; b++)
			window_series(&r->sides[b], charts[c].metric, charts[c].scale, &s[b]);
		svg_chart(out, charts[c].title, "round", charts[c].unit, s, false);
		free_series(s);
	}
	strbuf_addstr(out, "</body>\n</html>\n");
	strbuf_release(&md);
}

int canary_write_files(const struct canary_result *r, const char *name, const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *doc = canary_result_to_json(r, name);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	char *path;
	int ret = 0;

	path = xstrfmt("%s/canary.json", dir);
	ret |= write_file_atomic(path, text ? text : "{}", text ? strlen(text) : 2);
	free(path);
	canary_format_markdown(r, name, &sb);
	path = xstrfmt("%s/report.md", dir);
	ret |= write_file_atomic(path, sb.buf, sb.len);
	free(path);
	strbuf_reset(&sb);
	canary_format_html(r, name, &sb);
	path = xstrfmt("%s/canary.html", dir);
	ret |= write_file_atomic(path, sb.buf, sb.len);
	free(path);
	free(text);
	json_decref(doc);
	strbuf_release(&sb);
	return ret ? -1 : 0;
}
