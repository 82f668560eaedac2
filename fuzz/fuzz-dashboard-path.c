/*
 * fuzz-dashboard-path.c: libFuzzer target for what lib/dashboard.c takes
 * from a request: the path router and its query parameters, and the
 * sanitizer of a snapshot. The input's first line is a request
 * ("/api/...?k=v&..."), answered over a small project made at start (a
 * store, two profiles, a kb entry, a scenario run); the whole input is
 * sanitized as text, as JSON when it parses, and with a project top taken
 * from its second line. Aborts on: a status other than 200, 400 or 404;
 * a JSON answer that does not parse or an error without "error"; a
 * component starting with '.' answered at all; sanitized answers that
 * still hold the project's path; sanitizing that changes its own output.
 * Seeds: tests/data/dashboard-path/.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dashboard.h"
#include "kb.h"
#include "pprof.h"
#include "profile.h"
#include "rules.h"
#include "store.h"
#include "strbuf.h"
#include "util.h"

static struct dash d;
static struct store *s;
static char top[] = "/tmp/fuzz-dashboard-XXXXXX";

static void quiet(const char *prefix, const char *msg)
{
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz-dashboard-path: cannot make the project: %s: %s\n", what, last_error());
	exit(1);
}

static void remove_project(void)
{
	store_close(s);
	dash_release(&d);
	remove_tree(top);
}

static void write_profile(const char *path, int64_t weight)
{
	struct profile p;
	uint64_t map, locs[2];
	struct pf_line line = { 0 };
	int64_t v = weight;
	char *dir = xstrdup(path), *file = xstrfmt("%s/src/a.c", top);

	*strrchr(dir, '/') = 0;
	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	map = profile_add_mapping(&p, 0x1000, 0x9000, 0, "/usr/bin/prog", "abcd");
	line.function_id = profile_add_function(&p, "main", "main", file, 1);
	locs[1] = profile_add_location(&p, map, 0x1010, &line, 1);
	line.function_id = profile_add_function(&p, "<hot>\"loop\"", "hot", file, 9);
	locs[0] = profile_add_location(&p, map, 0x1020, &line, 1);
	profile_add_sample(&p, locs, 2, &v, NULL, 0);
	if (mkdir_p(dir) || pprof_write_file(&p, path))
		die(path);
	profile_release(&p);
	free(dir);
	free(file);
}

/* Two loops' worth of rows, in the shapes a loop writes them. */
static void make_store(const char *db)
{
	struct store_loop l = STORE_LOOP_INIT;
	struct store_attempt a = STORE_ATTEMPT_INIT;
	struct store_run r = STORE_RUN_INIT;
	struct store_measurement m[6];
	char *reasons[] = { "primary 'big' improved 10%" };
	char *p1 = xstrfmt("%s/.hotloop/loop/1/profile.pb.gz", top), *p2 = xstrfmt("%s/.hotloop/loop/2/profile.pb.gz", top);
	int64_t loop, attempt, run;
	struct store *w;

	write_profile(p1, 10);
	write_profile(p2, 7);
	if (store_open(db, &w))
		die(db);
	l.repo = top;
	l.branch = "hotloop/x";
	l.base_commit = "aaaa";
	if (store_loop_begin(w, &l, &loop))
		die("a loop");
	r.loop_id = loop;
	r.kind = STORE_RUN_BASELINE;
	r.workload = "big";
	r.profile_path = p1;
	r.summary_json = "{\"hotspots\": [{\"function\": \"hot\", \"file\": \"/usr/src/a.c\"}]}";
	if (store_run_add(w, &r, &run))
		die("a run");
	r.profile_path = p2;
	if (store_run_add(w, &r, &run))
		die("a run");
	a.loop_id = loop;
	a.round = 1;
	a.function = "hot";
	a.verdict = VERDICT_KEEP;
	a.stage = GATE_STAGE_COMPARE;
	a.reasons = reasons;
	a.nr_reasons = 1;
	a.commit_sha = "bbbb";
	a.kb_slug = "fuzz-entry";
	a.diff = "--- a/src/a.c\n+++ b/src/a.c\n";
	if (store_attempt_add(w, &a, &attempt))
		die("an attempt");
	r = (struct store_run)STORE_RUN_INIT;
	r.loop_id = loop;
	r.attempt_id = attempt;
	r.kind = STORE_RUN_COMPARE;
	r.workload = "big";
	r.metric = "cpu";
	if (store_run_add(w, &r, &run))
		die("a run");
	for (int i = 0; i < 6; i++) {
		m[i] = (struct store_measurement)STORE_MEASUREMENT_INIT;
		m[i].run_id = run;
		m[i].workload = i < 4 ? "big" : "small";
		m[i].pair_index = i / 2;
		m[i].position = i % 2;
		m[i].side = i % 2 ? STORE_SIDE_CAND : STORE_SIDE_BASE;
		m[i].value = i % 2 ? 0.9 : 1.0;
	}
	if (store_measurements_add(w, m, 6))
		die("measurements");
	a.round = 2;
	a.verdict = VERDICT_REJECT;
	a.stage = GATE_STAGE_BUILD;
	a.commit_sha = NULL;
	if (store_attempt_add(w, &a, &attempt) ||
	    store_activity(w, loop, STORE_INFO, "verdict", "{\"at\": \"/tmp\"}", "round 1: keep in %s", top))
		die("rows");
	store_close(w);
	free(p1);
	free(p2);
}

#define SUMMARY "{\"outcome\": \"done\", \"phases\": [{\"name\": \"idle\", \"start_s\": 0}]}\n"

static void make_project(void)
{
	struct kb_attempt a = { 0 };
	const char *reasons[] = { "it was faster" };
	char *db, *kbd, *slug = NULL, *from, *to, *path;

	if (!mkdtemp(top))
		die(top);
	db = store_repo_path(top);
	if (!db)
		die(top);
	make_store(db);
	kbd = xstrfmt("%s/kb", top);
	a.title = "a hot loop made cold";
	a.function = "hot";
	a.verdict = VERDICT_KEEP;
	a.reasons = reasons;
	a.nr_reasons = 1;
	a.diff = "--- a/src/a.c\n+++ b/src/a.c\n";
	a.when = 1714564800;
	if (kb_add(kbd, &a, &slug))
		die("a kb entry");
	/* a fixed slug the seeds can name */
	from = xstrfmt("%s/%s", kbd, slug);
	to = xstrfmt("%s/fuzz-entry", kbd);
	if (rename(from, to))
		die(to);
	free(from);
	from = xstrfmt("%s/.hotloop/scenarios/s/20240501-000000", top);
	path = xstrfmt("%s/summary.json", from);
	if (mkdir_p(from) || write_file_atomic(path, SUMMARY, strlen(SUMMARY)))
		die(path);
	dash_init(&d, top, NULL, NULL);
	if (store_open_readonly(d.db, &s))
		die(d.db);
	atexit(remove_project);
	free(db);
	free(kbd);
	free(slug);
	free(from);
	free(to);
	free(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	make_project();
	return 0;
}

/* "k=v&k=v" */
struct query {
	char *keys[16], *values[16];
	size_t nr;
};

static const char *param(void *ctx, const char *key)
{
	struct query *q = ctx;

	for (size_t i = 0; i < q->nr; i++)
		if (!strcmp(q->keys[i], key))
			return q->values[i];
	return NULL;
}

static void parse_query(struct query *q, char *text)
{
	q->nr = 0;
	while (text && *text && q->nr < 16) {
		char *amp = strchr(text, '&'), *eq;

		if (amp)
			*amp = 0;
		eq = strchr(text, '=');
		q->keys[q->nr] = text;
		q->values[q->nr++] = eq ? (*eq = 0, eq + 1) : text + strlen(text);
		text = amp ? amp + 1 : NULL;
	}
}

static void check_reply(const char *path, const struct dash_reply *r)
{
	if (r->status != 200 && r->status != 400 && r->status != 404) {
		fprintf(stderr, "%s: status %d: %s\n", path, r->status, r->body.buf);
		abort();
	}
	if (!strcmp(r->type, DASH_JSON)) {
		json_t *v = json_loadb(r->body.buf, r->body.len, 0, NULL);

		if (!v || (r->status != 200 && !json_is_string(json_object_get(v, "error")))) {
			fprintf(stderr, "%s: not the JSON it should be: %s\n", path, r->body.buf);
			abort();
		}
		json_decref(v);
	} else if (strcmp(r->type, DASH_SVG) || r->status != 200 || !strstr(r->body.buf, "<svg")) {
		fprintf(stderr, "%s: a %s answer (%d) that is no SVG\n", path, r->type, r->status);
		abort();
	}
}

/* A component that starts with '.' ("..", ".hidden") is never answered. */
static bool dot_component(const char *path)
{
	for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		if (p[1] == '.')
			return true;
	return false;
}

static void route(const char *line, bool hostile_input)
{
	char *copy = xstrdup(line), *qm = strchr(copy, '?');
	struct query q;
	struct dash_reply r;

	if (qm)
		*qm++ = 0;
	parse_query(&q, qm);
	d.sanitize = false;
	dash_get(&d, s, copy, param, &q, &r);
	check_reply(copy, &r);
	if (dot_component(copy) && r.status != 400) {
		fprintf(stderr, "%s: status %d for a dot component\n", copy, r.status);
		abort();
	}
	dash_reply_release(&r);
	/* as a snapshot asks it: the project's path is gone */
	d.sanitize = true;
	dash_get(&d, s, copy, param, &q, &r);
	d.sanitize = false;
	check_reply(copy, &r);
	if (!hostile_input && strstr(r.body.buf, top)) {
		fprintf(stderr, "%s: a sanitized answer holds %s: %s\n", copy, top, r.body.buf);
		abort();
	}
	dash_reply_release(&r);
	free(copy);
}

static void same_twice(const struct dash *sd, const char *text)
{
	struct strbuf once = STRBUF_INIT, twice = STRBUF_INIT;

	dash_sanitize_text(sd, text, &once);
	dash_sanitize_text(sd, once.buf, &twice);
	if (strcmp(once.buf, twice.buf)) {
		fprintf(stderr, "top '%s': sanitized '%s' is '%s', then '%s'\n", sd->top, text, once.buf,
			twice.buf);
		abort();
	}
	strbuf_release(&once);
	strbuf_release(&twice);
}

/*
 * A top as a project's could be: absolute, of the characters directories
 * are named with (spaces and parentheses too), no "." or ".." component
 * and no "...", which the sanitizer writes itself.
 */
static bool top_like(const char *t)
{
	size_t n = strlen(t);

	if (n < 2 || t[0] != '/' || t[n - 1] == '/' || strstr(t, "//") || strstr(t, "...") ||
	    strstr(t, "/./") || strstr(t, "/../") ||
	    t[strspn(t, "/abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-+@()")])
		return false;
	return strcmp(t + n - 2, "/.") && (n < 3 || strcmp(t + n - 3, "/.."));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf text = STRBUF_INIT, line = STRBUF_INIT;
	struct dash hd = { 0 };
	const char *nl, *nl2;
	json_t *doc;

	strbuf_add(&text, data, size);
	/* the request: the first line, up to a NUL as a decoded URL ends there */
	nl = strchr(text.buf, '\n');
	strbuf_add(&line, text.buf, nl ? (size_t)(nl - text.buf) : strlen(text.buf));
	route(line.buf, strstr(text.buf, "fuzz-dashboard") != NULL);

	/* the text, with names and a top of our own, and with the input's second line as the top */
	hd.top = xstrdup("/tmp/x/proj");
	hd.user = xstrdup("alice");
	hd.host = xstrdup("boxhost");
	hd.home = xstrdup("/home/alice");
	hd.sanitize = true;
	same_twice(&hd, text.buf);
	free(hd.top);
	hd.top = NULL;
	nl2 = nl ? strchr(nl + 1, '\n') : NULL;
	if (nl && nl[1] == '/')
		hd.top = xstrndup(nl + 1, nl2 ? (size_t)(nl2 - nl - 1) : strlen(nl + 1));
	if (!hd.top || !top_like(hd.top)) {
		free(hd.top);
		hd.top = xstrdup("/tmp/my proj (2)");
	}
	same_twice(&hd, text.buf);

	doc = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (doc) {
		char *out;

		dash_sanitize_json(&hd, doc);
		out = json_dumps(doc, JSON_ENCODE_ANY);
		if (!out) {
			fprintf(stderr, "a sanitized document does not print\n");
			abort();
		}
		free(out);
		json_decref(doc);
	}
	dash_release(&hd);
	strbuf_release(&line);
	strbuf_release(&text);
	return 0;
}
