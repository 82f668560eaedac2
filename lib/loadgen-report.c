/*
 * loadgen-report.c: a load run for people and for programs: the table of
 * windows, the summary, and the JSON document of docs/load.md. The
 * counts' JSON is the canary's too.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include "json.h"
#include "loadgen.h"

/* A latency, in the unit that keeps it short. */
static void fmt_ns(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.2fms", ns / 1e6);
	else
		snprintf(buf, n, "%.2fs", ns / 1e9);
}

void loadgen_format_header(struct strbuf *out)
{
	strbuf_addf(out, "%-13s %8s %8s %9s %9s %9s %9s %9s %9s %6s\n", "window", "sent", "answered",
		    "req/s", "p50", "p90", "p99", "p99.9", "max", "errors");
}

void loadgen_format_window(const struct loadgen_window *w, struct strbuf *out)
{
	char span[32], p50[16], p90[16], p99[16], p999[16], max[16];

	snprintf(span, sizeof(span), "%g-%gs%s", round(w->start * 1000) / 1000, round(w->end * 1000) / 1000,
		 w->warmup ? "*" : "");
	fmt_ns(p50, sizeof(p50), w->latency.p50);
	fmt_ns(p90, sizeof(p90), w->latency.p90);
	fmt_ns(p99, sizeof(p99), w->latency.p99);
	fmt_ns(p999, sizeof(p999), w->latency.p999);
	fmt_ns(max, sizeof(max), w->latency.max);
	strbuf_addf(out, "%-13s %8" PRIu64 " %8" PRIu64 " %9.1f %9s %9s %9s %9s %9s %6" PRIu64 "\n", span,
		    w->c.sent, w->c.answered, w->throughput, p50, p90, p99, p999, max, w->c.nr_errors);
}

/* One line of percentiles: "p50 1.2ms  p90 ...  mean ...". */
static void add_percentiles(struct strbuf *out, const struct hist_summary *s)
{
	char a[16], b[16], c[16], d[16], e[16], m[16];

	fmt_ns(a, sizeof(a), s->p50);
	fmt_ns(b, sizeof(b), s->p90);
	fmt_ns(c, sizeof(c), s->p99);
	fmt_ns(d, sizeof(d), s->p999);
	fmt_ns(e, sizeof(e), s->max);
	fmt_ns(m, sizeof(m), (uint64_t)s->mean);
	strbuf_addf(out, "p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s", a, b, c, d, e, m);
}

void loadgen_format_summary(const struct loadgen_spec *spec, const char *target,
			    const struct loadgen_result *r, struct strbuf *out)
{
	const char *sep = "";

	strbuf_addf(out, "\n%s: %s, %g req/s %s, %d connections, %gs", target,
		    spec->proto == LOADGEN_HTTP ? "http" : "line", spec->rate,
		    spec->sched == LOADGEN_POISSON ? "poisson" : "constant", spec->connections, r->measured);
	if (spec->warmup > 0)
		strbuf_addf(out, " after %gs of warmup (*)", spec->warmup);
	strbuf_addf(out, "%s\n", r->cancelled ? " (interrupted)" : "");
	strbuf_addf(out, "requests:   %" PRIu64 " scheduled, %" PRIu64 " sent (%" PRIu64
		    " late: no free connection), %" PRIu64 " answered, %" PRIu64 " ok\n",
		    r->total.scheduled, r->total.sent, r->total.late, r->total.answered, r->total.ok);
	strbuf_addf(out, "throughput: %.1f answered/s\n", r->throughput);
	strbuf_addstr(out, "latency:    ");
	add_percentiles(out, &r->summary);
	strbuf_addstr(out, "  (from the intended send time)\n");
	strbuf_addstr(out, "service:    ");
	add_percentiles(out, &r->service_summary);
	strbuf_addstr(out, "  (from the actual send)\n");
	strbuf_addstr(out, "errors:     ");
	for (int i = 0; i < LOADGEN_ERR__COUNT; i++) {
		if (!r->total.errors[i])
			continue;
		strbuf_addf(out, "%s%s %" PRIu64, sep, loadgen_error_name(i), r->total.errors[i]);
		sep = ", ";
	}
	strbuf_addf(out, "%s\n", *sep ? "" : "none");
}

static json_t *latency_json(const struct hist_summary *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "count", json_integer((json_int_t)s->count));
	json_object_set_new(o, "p50_ns", json_integer((json_int_t)s->p50));
	json_object_set_new(o, "p90_ns", json_integer((json_int_t)s->p90));
	json_object_set_new(o, "p99_ns", json_integer((json_int_t)s->p99));
	json_object_set_new(o, "p999_ns", json_integer((json_int_t)s->p999));
	json_object_set_new(o, "max_ns", json_integer((json_int_t)s->max));
	json_object_set_new(o, "mean_ns", json_real(s->mean));
	return o;
}

json_t *loadgen_counts_to_json(const struct loadgen_counts *c)
{
	json_t *o = json_object(), *errs = json_object();

	json_object_set_new(o, "scheduled", json_integer((json_int_t)c->scheduled));
	json_object_set_new(o, "sent", json_integer((json_int_t)c->sent));
	json_object_set_new(o, "late", json_integer((json_int_t)c->late));
	json_object_set_new(o, "answered", json_integer((json_int_t)c->answered));
	json_object_set_new(o, "ok", json_integer((json_int_t)c->ok));
	for (int i = 0; i < LOADGEN_ERR__COUNT; i++)
		json_object_set_new(errs, loadgen_error_name(i), json_integer((json_int_t)c->errors[i]));
	json_object_set_new(o, "errors", errs);
	json_object_set_new(o, "nr_errors", json_integer((json_int_t)c->nr_errors));
	return o;
}

json_t *loadgen_result_to_json(const struct loadgen_spec *spec, const char *target,
			       const struct loadgen_result *r)
{
	json_t *doc = json_object(), *wins = json_array(), *t;
	struct strbuf hist = STRBUF_INIT;

	json_object_set_new(doc, "target", json_text(target));
	json_object_set_new(doc, "protocol", json_string(spec->proto == LOADGEN_HTTP ? "http" : "line"));
	json_object_set_new(doc, "schedule", json_string(spec->sched == LOADGEN_POISSON ? "poisson" : "constant"));
	json_object_set_new(doc, "rate", json_real(spec->rate));
	json_object_set_new(doc, "seed", spec->sched == LOADGEN_POISSON ? json_integer((json_int_t)spec->seed) :
								   json_null());
	json_object_set_new(doc, "connections", json_integer(spec->connections));
	json_object_set_new(doc, "duration_s", json_real(spec->duration));
	json_object_set_new(doc, "warmup_s", json_real(spec->warmup));
	json_object_set_new(doc, "window_s", json_real(spec->window));
	json_object_set_new(doc, "timeout_s", json_real(spec->timeout));
	for (size_t i = 0; i < r->nr_windows && i < LOADGEN_MAX_WINDOWS; i++) {
		const struct loadgen_window *w = &r->windows[i];
		json_t *o = loadgen_counts_to_json(&w->c);

		json_object_set_new(o, "start_s", json_real(w->start));
		json_object_set_new(o, "end_s", json_real(w->end));
		json_object_set_new(o, "warmup", json_boolean(w->warmup));
		json_object_set_new(o, "throughput", json_real(w->throughput));
		json_object_set_new(o, "latency", latency_json(&w->latency));
		json_array_append_new(wins, o);
	}
	json_object_set_new(doc, "windows", wins);
	t = loadgen_counts_to_json(&r->total);
	json_object_set_new(t, "throughput", json_real(r->throughput));
	json_object_set_new(t, "latency", latency_json(&r->summary));
	json_object_set_new(t, "service", latency_json(&r->service_summary));
	histogram_serialize(&r->latency, &hist);
	json_object_set_new(t, "histogram", json_text(hist.buf));
	json_object_set_new(doc, "total", t);
	json_object_set_new(doc, "elapsed_s", json_real(r->elapsed));
	json_object_set_new(doc, "cancelled", json_boolean(r->cancelled));
	strbuf_release(&hist);
	return doc;
}
