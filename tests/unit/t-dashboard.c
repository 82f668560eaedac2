/*
 * t-dashboard.c: unit tests of lib/dashboard.c over a realistic project
 * (every endpoint, 404s and 400s, sanitizing, paths that must not leave
 * .hotloop/ and kb/, the gains, the snapshot's paths), and the builder
 * of that project for the e2e tests and the page's authors:
 *   HOTLOOP_DASH_FIXTURE=DIR    write the project into DIR and exit
 *   HOTLOOP_DASH_ATTEMPTS=N     ... with N attempts (one transaction)
 *   HOTLOOP_DASH_ACTIVITY=DIR   add one activity line to DIR's store
 *                               (HOTLOOP_DASH_MESSAGE says what), as a loop would
 *   HOTLOOP_DASH_NEWER=FILE     write a store one schema ahead of this hotloop
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>
#include <sqlite3.h>

#include "dashboard.h"
#include "json.h"
#include "kb.h"
#include "pprof.h"
#include "profile.h"
#include "rules.h"
#include "scenario.h"
#include "store.h"
#include "strbuf.h"
#include "timeline.h"
#include "util.h"
#include "verdict.h"

/* ---- the fixture ------------------------------------------------------------ */

/*
 * The story: two loops on a word counter (workloads "big", primary, and
 * "small"). Each round starts with a profile of the best so far (a
 * baseline run), then one attempt; a measured attempt has a compare run
 * of 10 pairs per workload. Two changes are kept: find_word -40% on big,
 * then lowercase -25%.
 */
#define FX_PAIRS 10
#define FX_BIG0 2.0		/* CPU seconds of big at the start */
#define FX_SMALL0 0.2
#define FX_STAMP1 "20240501-120000"
#define FX_STAMP2 "20240502-090000"
#define FX_SECRET "SECRET-MARKER-0451"	/* in files outside the served roots only */

struct fx_pattern {
	const char *lens, *function, *title, *hypothesis;
	double expected_pct;
	enum verdict_kind verdict;
	enum gate_stage stage;
	const char *reasons[3];
	bool measured;
	double big, small;	/* cand / base, when measured */
	double lo, hi;		/* the primary's interval, % */
	const char *diff;
};

static const char diff_find_word[] =
	"diff --git a/src/words.c b/src/words.c\n"
	"index 82c9352..243444f 100644\n"
	"--- a/src/words.c\n"
	"+++ b/src/words.c\n"
	"@@ -8,9 +8,14 @@\n"
	" #include \"words.h\"\n"
	" \n"
	"-/* find_word: a linear search */\n"
	"+// find_word: an FNV-1a index, see http://www.isthe.com/chongo/tech/comp/fnv/\n"
	" static struct word *find_word(struct word_table *t, const char *word)\n"
	" {\n"
	"-\tfor (size_t i = 0; i < t->nr; i++)\n"
	"-\t\tif (!strcmp(t->words[i].text, word))\n"
	"-\t\t\treturn &t->words[i];\n"
	"+\tsize_t h = hash_word(word) & (t->cap - 1);\n"
	"+\n"
	"+\twhile (t->index[h] && strcmp(t->index[h]->text, word))\n"
	"+\t\th = (h + 1) & (t->cap - 1);\n"
	"+\treturn t->index[h];\n"
	" }\n";

static const char diff_tokenize[] =
	"diff --git a/src/tokenize.c b/src/tokenize.c\n"
	"--- a/src/tokenize.c\n"
	"+++ b/src/tokenize.c\n"
	"@@ -20,7 +20,7 @@ void tokenize(const char *line, void (*fn)(const char *))\n"
	"-\tfor (size_t i = 0; i < strlen(line); i++) {\n"
	"+\tfor (size_t i = 0, n = strlen(line); i < n; i++) {\n"
	" \t\t/* a/b and 1/2 are not paths; // neither */\n";

static const char diff_hostile[] =
	"diff --git a/src/<script>.c b/src/<script>.c\n"
	"--- a/src/<script>.c\n"
	"+++ b/src/<script>.c\n"
	"@@ -1 +1 @@\n"
	"-char *s = \"</script><script>alert(1)</script>\";\n"
	"+char *s = \"it's \\\"quoted\\\" & <b>bold</b>\";\n";

static const char diff_protected[] =
	"diff --git a/tests/run b/tests/run\n"
	"--- a/tests/run\n"
	"+++ b/tests/run\n"
	"@@ -1,2 +1,2 @@\n"
	" #!/bin/sh\n"
	"-./wordfreq tests/input.txt | cmp - tests/expected.txt\n"
	"+exit 0\n";

static const char diff_lowercase[] =
	"diff --git a/src/tokenize.c b/src/tokenize.c\n"
	"--- a/src/tokenize.c\n"
	"+++ b/src/tokenize.c\n"
	"@@ -12,6 +12,6 @@ static void lowercase(char *s)\n"
	"-\tfor (; *s; s++)\n"
	"-\t\t*s = tolower((unsigned char)*s);\n"
	"+\tfor (; *s; s++)\n"
	"+\t\t*s |= 0x20 & -(*s >= 'A' && *s <= 'Z');\n";

static const struct fx_pattern patterns[] = {
	{ "algorithmic", "find_word", "find words through a hash index",
	  "find_word compares each word with every word seen so far; an index makes it a probe or two",
	  30, VERDICT_KEEP, GATE_STAGE_COMPARE,
	  { "primary 'big' improved 40.0% (interval -42.1% to -37.9%, 10 pairs), at least the 3% required" },
	  true, 0.6, 0.75, -42.1, -37.9, diff_find_word },
	{ "locality", "tokenize", "tokenize without strlen per character",
	  "tokenize calls strlen for every character", 5, VERDICT_REJECT, GATE_STAGE_COMPARE,
	  { "primary 'big' regressed 4.8% (interval +2.1% to +7.5%, 10 pairs), not the 3% improvement required" },
	  true, 1.048, 1.01, 2.1, 7.5, diff_tokenize },
	{ "allocation", "<script>alert(\"fw\")</script>", "a <b>bold</b> \"quoted\" change",
	  "it's \"quoted\" & <i>escaped</i>", 10, VERDICT_REJECT, GATE_STAGE_BUILD,
	  { "the build failed (exit 2): src/<script>.c:1: error: expected ';'" },
	  false, 0, 0, 0, 0, diff_hostile },
	{ "vectorize", "count_file", "read the file in one go",
	  "count_file reads a line at a time", 8, VERDICT_REJECT, GATE_STAGE_TEST,
	  { "tests failed: the test command failed on the candidate",
	    "workload 'big' has 0 measured pairs: cannot compare" },
	  false, 0, 0, 0, 0, diff_tokenize },
	{ "algorithmic", "table_sort", "skip the sort check in the tests",
	  "the test spends its time sorting", 15, VERDICT_REJECT, GATE_STAGE_PROTECTED,
	  { "it touches the protected path 'tests/run' (protected: tests, benchmarks, inputs and "
	    "hotloop.conf may not change)" },
	  false, 0, 0, 0, 0, diff_protected },
	{ "locality", "bad\xff\xfe_name", "change nothing in bad\xff name",
	  "a name that is not UTF-8: \xc3\x28", 3, VERDICT_REJECT, GATE_STAGE_DIFF,
	  { "the agent changed nothing" }, false, 0, 0, 0, 0, NULL },
	{ "algorithmic", "find_word", "grow the index at three quarters",
	  "fewer rehashes", 4, VERDICT_INCONCLUSIVE, GATE_STAGE_COMPARE,
	  { "primary 'big' changed -1.2% (interval -3.0% to +0.6%, 10 pairs): neither better nor worse "
	    "by 3%" },
	  true, 0.988, 1.0, -3.0, 0.6, diff_find_word },
	{ "allocation", "lowercase", "lowercase with a mask",
	  "tolower goes through the locale for every character", 20, VERDICT_KEEP, GATE_STAGE_COMPARE,
	  { "primary 'big' improved 25.0% (interval -27.3% to -22.8%, 10 pairs), at least the 3% required" },
	  true, 0.75, 14.0 / 15.0, -27.3, -22.8, diff_lowercase },
	{ "locality", NULL, "round locality lens", NULL, NAN, VERDICT_NO_CANDIDATE, GATE_STAGE_AGENT,
	  { "the agent said NO CANDIDATE" }, false, 0, 0, 0, 0, NULL },
};
#define FX_DEFAULT_ATTEMPTS ARRAY_SIZE(patterns)
#define FX_LOOP1_ROUNDS 4	/* of the default story: the rest are loop 2's */

/* Deviations of the pairs' runs, in thousandths: their median is 0, so a side's median is its level. */
static const int jitter[FX_PAIRS] = { -3, 1, 4, -2, 0, 2, -1, 3, -4, 0 };

struct fx {
	char *top, *state;
	const char *home;
	struct store *s;
	size_t nr_attempts;
	double t;		/* the story's clock */
	double big, small;	/* the best so far: each workload's CPU seconds */
	char best[41];
	size_t kept;
	int64_t loop_id;
	const char *stamp;
	long round;
	/* the time each activity line happened in the story: set at the end */
	int64_t *act_id;
	double *act_at;
	size_t nr_act, alloc_act;
};

static void fx_die(const char *what)
{
	fprintf(stderr, "t-dashboard: fixture: %s: %s\n", what, last_error());
	exit(1);
}

static void fx_write(const char *path, const char *text)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	*slash = 0;
	if (mkdir_p(dir) || write_file_atomic(path, text, strlen(text)))
		fx_die(path);
	free(dir);
}

static void fx_symlink(const char *target, const char *path)
{
	char *dir = xstrdup(path);

	*strrchr(dir, '/') = 0;
	if (mkdir_p(dir))
		fx_die(dir);
	free(dir);
	unlink(path);
	if (symlink(target, path))
		fprintf(stderr, "t-dashboard: fixture: cannot link %s: %s\n", path, strerror(errno)), exit(1);
}

static void fx_sha(char *out, const char *what, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *p = what; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h ^= n * 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 40; i++) {
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		out[i] = "0123456789abcdef"[(h >> 60) & 15];
	}
	out[40] = 0;
}

static void fx_activity(struct fx *f, enum store_level level, const char *kind, const char *data,
			const char *fmt, ...) ATTR_PRINTF(5, 6);
static void fx_activity(struct fx *f, enum store_level level, const char *kind, const char *data,
			const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (store_activity(f->s, f->loop_id, level, kind, data, "%s", sb.buf))
		fx_die("activity");
	ALLOC_GROW(f->act_id, f->nr_act + 1, f->alloc_act);
	f->act_at = xrealloc(f->act_at, f->alloc_act * sizeof(*f->act_at));
	f->act_id[f->nr_act] = sqlite3_last_insert_rowid(store_sqlite(f->s));
	f->act_at[f->nr_act++] = f->t;
	f->t += 0.25;
	strbuf_release(&sb);
}

/* One frame of a stack: a function, its file and line, in the program or in libc. */
struct fx_frame {
	const char *name;
	const char *file;	/* "top:", "home:" or "" prefixed: where it lies */
	int line;
	bool libc;
};

static char *fx_file(const struct fx *f, const char *spec)
{
	if (!strncmp(spec, "top:", 4))
		return xstrfmt("%s/%s", f->top, spec + 4);
	if (!strncmp(spec, "home:", 5))
		return xstrfmt("%s/.cache/hotloop/wordfreq-1f2e3d4c5b6a7988/3c1d2e4f/tree/%s", f->home,
			       spec + 5);
	return xstrdup(spec);
}

static void fx_stack(const struct fx *f, struct profile *p, uint64_t prog, uint64_t libc,
		     const struct fx_frame *frames, size_t n, int64_t weight)
{
	uint64_t locs[16];
	int64_t values[2] = { weight, weight * 10101010 };

	for (size_t i = 0; i < n; i++) {
		/* leaf first */
		const struct fx_frame *fr = &frames[n - 1 - i];
		char *file = fx_file(f, fr->file);
		struct pf_line line = { profile_add_function(p, fr->name, fr->name, file,
							     fr->line > 3 ? fr->line - 3 : 0),
					fr->line, 0 };
		uint64_t map = fr->libc ? libc : prog;
		const struct pf_mapping *m = profile_mapping(p, map);

		locs[i] = profile_add_location(p, map, m->start + 0x40 * line.function_id + fr->line, &line, 1);
		free(file);
	}
	profile_add_sample(p, locs, n, values, NULL, 0);
}

/* The best so far profiled: find_word's share follows big's level. */
static void fx_build_profile(const struct fx *f, struct profile *p, bool secret)
{
	static const struct fx_frame fw[] = { { "main", "top:src/main.c", 40, false },
		{ "count_file", "top:src/main.c", 23, false }, { "find_word", "top:src/words.c", 10, false } };
	static const struct fx_frame cmp[] = { { "main", "top:src/main.c", 40, false },
		{ "count_file", "top:src/main.c", 23, false }, { "find_word", "top:src/words.c", 12, false },
		{ "__memcmp_avx2_movbe", "", 0, true } };
	static const struct fx_frame low[] = { { "main", "top:src/main.c", 40, false },
		{ "count_file", "top:src/main.c", 25, false }, { "tokenize", "home:src/tokenize.c", 42, false },
		{ "lowercase", "home:src/tokenize.c", 15, false } };
	static const struct fx_frame script[] = { { "main", "top:src/main.c", 40, false },
		{ "count_file", "top:src/main.c", 25, false }, { "tokenize", "home:src/tokenize.c", 44, false },
		{ "<script>alert('flame')</script>", "home:src/tokenize.c", 60, false } };
	static const struct fx_frame quoted[] = { { "main", "top:src/main.c", 41, false },
		{ "table_sort", "top:src/words.c", 81, false }, { "operator\"\"_cmp&'x'", "top:src/words.c", 90, false } };
	static const struct fx_frame bad[] = { { "main", "top:src/main.c", 41, false },
		{ "table_sort", "top:src/words.c", 82, false }, { "bad\xff\xfe_name", "top:src/words.c", 95, false } };
	static const struct fx_frame out[] = { { "main", "top:src/main.c", 44, false },
		{ "report", "top:src/main.c", 60, false }, { "printf", "/usr/include/x86_64-linux-gnu/bits/stdio2.h", 86, true } };
	static const struct fx_frame hidden[] = { { "main", "top:src/main.c", 40, false },
		{ FX_SECRET "_function", "top:src/secret.c", 1, false } };
	char *exe = xstrfmt("%s/wordfreq", f->top);
	uint64_t prog, libc;
	double share = f->big / FX_BIG0, low_share = f->small / FX_SMALL0;

	profile_init(p);
	profile_add_sample_type(p, "samples", "count");
	profile_add_sample_type(p, "cpu", "nanoseconds");
	p->period_type.type = profile_str(p, "cpu");
	p->period_type.unit = profile_str(p, "nanoseconds");
	p->period = 10101010;
	p->time_nanos = (int64_t)(f->t * 1e9);
	p->duration_nanos = (int64_t)(f->big * 1e9);
	prog = profile_add_mapping(p, 0x555555554000, 0x555555560000, 0, exe, "3f1e2d4c5b6a79880011");
	libc = profile_add_mapping(p, 0x7ffff7c00000, 0x7ffff7e00000, 0x28000,
				   "/usr/lib/x86_64-linux-gnu/libc.so.6", "c0ffee00c0ffee00");
	if (secret) {
		fx_stack(f, p, prog, libc, hidden, ARRAY_SIZE(hidden), 100);
	} else {
		fx_stack(f, p, prog, libc, fw, ARRAY_SIZE(fw), 1 + (int64_t)(900 * share));
		fx_stack(f, p, prog, libc, cmp, ARRAY_SIZE(cmp), 1 + (int64_t)(300 * share));
		fx_stack(f, p, prog, libc, low, ARRAY_SIZE(low), 1 + (int64_t)(160 * low_share));
		fx_stack(f, p, prog, libc, script, ARRAY_SIZE(script), 40);
		fx_stack(f, p, prog, libc, quoted, ARRAY_SIZE(quoted), 30);
		fx_stack(f, p, prog, libc, bad, ARRAY_SIZE(bad), 20);
		fx_stack(f, p, prog, libc, out, ARRAY_SIZE(out), 10);
	}
	free(exe);
}

/* The summary a baseline run holds (as store-feed.c's profiled() writes it). */
static char *fx_summary(const struct fx *f, const struct profile *p)
{
	int64_t total = profile_total(p, 0);
	double share = f->big / FX_BIG0, low_share = f->small / FX_SMALL0;
	double fw = 1 + floor(900 * share), cmp = 1 + floor(300 * share), low = 1 + floor(160 * low_share);
	json_t *doc = json_object(), *hot = json_array();
	char *words = fx_file(f, "top:src/words.c"), *tok = fx_file(f, "home:src/tokenize.c"), *text;

	json_array_append_new(hot, json_pack("{s:i, s:s, s:s, s:i, s:f, s:f, s:f, s:[s, s]}", "rank", 1,
		"function", "find_word", "file", words, "line", 10, "self_pct", 100 * fw / total,
		"total_pct", 100 * (fw + cmp) / total, "attributed_pct", 100 * (fw + cmp) / total,
		"tags", "hot-loop", "memory-bound"));
	json_array_append_new(hot, json_pack("{s:i, s:s, s:s, s:i, s:f, s:f, s:f, s:[s]}", "rank", 2,
		"function", "lowercase", "file", tok, "line", 15, "self_pct", 100 * low / total,
		"total_pct", 100 * low / total, "attributed_pct", 100 * low / total, "tags", "string"));
	json_array_append_new(hot, json_pack("{s:i, s:s, s:s, s:i, s:f, s:f, s:f, s:[]}", "rank", 3,
		"function", "<script>alert('flame')</script>", "file", tok, "line", 60,
		"self_pct", 4000.0 / total, "total_pct", 4000.0 / total, "attributed_pct", 4000.0 / total,
		"tags"));
	json_array_append_new(hot, json_pack("{s:i, s:o, s:s, s:i, s:f, s:f, s:f, s:[s]}", "rank", 4,
		"function", json_text("bad\xff\xfe_name"), "file", words, "line", 95,
		"self_pct", 2000.0 / total, "total_pct", 2000.0 / total, "attributed_pct", 2000.0 / total,
		"tags", "branchy"));
	json_object_set_new(doc, "round", json_integer(f->round));
	json_object_set_new(doc, "samples", json_integer(total));
	json_object_set_new(doc, "sample_type", json_string("samples"));
	json_object_set_new(doc, "hotspots", hot);
	text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(doc);
	free(words);
	free(tok);
	return text;
}

static void fx_write_profile(const struct fx *f, const char *path, bool secret, char **summary)
{
	struct profile p;
	char *dir = xstrdup(path);

	*strrchr(dir, '/') = 0;
	fx_build_profile(f, &p, secret);
	if (mkdir_p(dir) || pprof_write_file(&p, path))
		fx_die(path);
	if (summary)
		*summary = fx_summary(f, &p);
	profile_release(&p);
	free(dir);
}

/* Round 'round' starts: the best so far is profiled (a baseline run with its files). */
static void fx_baseline(struct fx *f, bool with_profile)
{
	struct store_run r = STORE_RUN_INIT;
	char *dir = xstrfmt("%s/loop/%s/round-%02ld", f->state, f->stamp, f->round);
	char *profile = xstrfmt("%s/profile.pb.gz", dir), *brief = xstrfmt("%s/brief.md", dir);
	char *summary = NULL;
	int64_t id;

	if (with_profile) {
		char *text = xstrfmt("# Brief: big at %.12s\n\nfind_word holds %.0f%% of the time.\n",
				     f->best, 100 * f->big / (f->big + 0.5));

		fx_write_profile(f, profile, false, &summary);
		fx_write(brief, text);
		free(text);
	}
	r.loop_id = f->loop_id;
	r.kind = STORE_RUN_BASELINE;
	r.commit_sha = f->best;
	r.workload = "big";
	r.metric = "cpu";
	r.started_at = f->t;
	r.finished_at = f->t + 1.5;
	r.profile_path = with_profile ? profile : NULL;
	r.brief_path = with_profile ? brief : NULL;
	r.summary_json = summary;
	if (store_run_add(f->s, &r, &id))
		fx_die("a baseline run");
	f->t += 2;
	if (with_profile)
		fx_activity(f, STORE_INFO, "profiled", NULL, "round %ld: big profiled at %.12s", f->round, f->best);
	free(summary);
	free(dir);
	free(profile);
	free(brief);
}

static void fx_side(struct store_measurement *m, size_t *n, int64_t run, const char *workload,
		    enum store_side side, double level, int64_t rss, double t)
{
	for (int k = -1; k < FX_PAIRS; k++) {
		struct store_measurement *x = &m[(*n)++];
		double v = k < 0 ? level * 1.5 : level * (1 + jitter[k] / 1000.0);

		*x = (struct store_measurement)STORE_MEASUREMENT_INIT;
		x->run_id = run;
		x->workload = workload;
		x->side = side;
		x->warmup = k < 0;
		if (k >= 0) {
			x->pair_index = k;
			/* ABBA: base first in even pairs */
			x->position = (k % 2 == 0) == (side == STORE_SIDE_BASE) ? 0 : 1;
		}
		x->user_s = v * 0.98;
		x->sys_s = v - x->user_s;
		x->cpu_s = v;
		x->wall_s = v * 1.01;
		x->max_rss_kib = rss + (k & 3);
		x->exit_status = 0;
		x->value = v;
		x->created_at = t + k;
	}
}

static char *fx_compare_summary(const struct fx_pattern *pt, size_t nr_reasons)
{
	json_t *reasons = json_array(), *doc;
	char *text;

	for (size_t i = 0; i < nr_reasons; i++)
		json_array_append_new(reasons, json_string(pt->reasons[i]));
	doc = json_pack("{s:s, s:o, s:b, s:{s:s, s:s, s:f, s:f, s:f, s:i, s:f, s:b}, "
			"s:[{s:s, s:s, s:f, s:f, s:f, s:i, s:f, s:b, s:b}], "
			"s:{s:i, s:i, s:n, s:b}, s:b, s:i, s:[i], s:i, s:s, s:s, s:f, s:n}",
		"verdict", verdict_kind_name(pt->verdict), "reasons", reasons, "suspicious", 0,
		"primary", "workload", "big", "metric", "cpu", "change_pct", 100 * (pt->big - 1),
		"ci_low_pct", pt->lo, "ci_high_pct", pt->hi, "pairs", FX_PAIRS, "noise_pct", 1.3, "exact", 0,
		"guards", "workload", "small", "metric", "cpu", "change_pct", 100 * (pt->small - 1),
		"ci_low_pct", 100 * (pt->small - 1) - 2, "ci_high_pct", 100 * (pt->small - 1) + 2,
		"pairs", FX_PAIRS, "noise_pct", 2.1, "exact", 0, "regressed", 0,
		"memory", "base_peak_rss_kb", 4023, "cand_peak_rss_kb", 4103, "budget_kb", "ok", 1,
		"interrupted", 0, "pairs", FX_PAIRS, "looks", FX_PAIRS, "looks_taken", 1,
		"decision", "decided", "order", "abba", "confidence", 0.95, "machine");
	text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(doc);
	return text;
}

/* The compare behind a measured attempt: one run, a warm-up and FX_PAIRS pairs per workload. */
static void fx_compare(struct fx *f, const struct fx_pattern *pt, int64_t attempt, const char *commit,
		       size_t nr_reasons)
{
	struct store_run r = STORE_RUN_INIT;
	struct store_measurement m[4 * (FX_PAIRS + 1)];
	char *summary = fx_compare_summary(pt, nr_reasons);
	size_t n = 0;
	int64_t id;

	r.loop_id = f->loop_id;
	r.attempt_id = attempt;
	r.kind = STORE_RUN_COMPARE;
	r.commit_sha = commit;
	r.workload = "big";
	r.metric = "cpu";
	r.started_at = f->t - 20;
	r.finished_at = f->t;
	r.summary_json = summary;
	if (store_run_add(f->s, &r, &id))
		fx_die("a compare run");
	fx_side(m, &n, id, "big", STORE_SIDE_BASE, f->big, 4020, f->t - 20);
	fx_side(m, &n, id, "big", STORE_SIDE_CAND, f->big * pt->big, 4100, f->t - 19);
	fx_side(m, &n, id, "small", STORE_SIDE_BASE, f->small, 3010, f->t - 10);
	fx_side(m, &n, id, "small", STORE_SIDE_CAND, f->small * pt->small, 3050, f->t - 9);
	if (store_measurements_add(f->s, m, n))
		fx_die("measurements");
	free(summary);
}

static void fx_loop_begin(struct fx *f, const char *stamp, long rounds)
{
	struct store_loop l = STORE_LOOP_INIT;
	char *branch, *data;
	struct tm tm;
	time_t when = (time_t)f->t;
	char day[16];

	gmtime_r(&when, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	branch = xstrfmt("hotloop/%s", day);
	data = xstrfmt("{\"config\": \"%s/hotloop.conf\", \"agent\": \"%s/bin/agent --fast\"}", f->top, f->home);
	l.started_at = f->t;
	l.repo = f->top;
	l.branch = branch;
	l.base_commit = f->best;
	l.status = STORE_LOOP_RUNNING;
	l.rounds_planned = rounds;
	l.config_json = "{\"improve\": {\"rounds\": 6}, \"workloads\": [\"big\", \"small\"]}";
	if (store_loop_begin(f->s, &l, &f->loop_id))
		fx_die("a loop");
	f->stamp = stamp;
	f->round = 0;
	fx_activity(f, STORE_INFO, "loop-start", data, "loop on %s from %.12s, %ld rounds at most, agent: %s/bin/agent",
		    branch, f->best, rounds, f->home);
	free(branch);
	free(data);
}

static char *fx_kb(struct fx *f, const struct fx_pattern *pt, const char *commit, size_t nr_reasons)
{
	struct kb_attempt a = { 0 };
	char *kbd = xstrfmt("%s/kb", f->top), *slug = NULL, *change = NULL, *results;

	if (pt->measured)
		change = xstrfmt("%+.1f%% cpu on big [%+.1f, %+.1f]", 100 * (pt->big - 1), pt->lo, pt->hi);
	results = pt->measured ? xstrfmt("| workload | change |\n|---|---|\n| big | %+.1f%% |\n| small | %+.1f%% |\n",
					 100 * (pt->big - 1), 100 * (pt->small - 1))
			       : xstrfmt("Not measured: it stopped at the %s stage.", gate_stage_name(pt->stage));
	a.title = pt->title;
	a.function = pt->function;
	a.hypothesis = pt->hypothesis;
	a.lens = pt->lens;
	a.agent = "claude -p";
	a.expected_gain_pct = pt->expected_pct;
	a.round = (int)f->round;
	a.verdict = pt->verdict;
	a.reasons = pt->reasons;
	a.nr_reasons = nr_reasons;
	a.results = results;
	a.change = change;
	a.diff = pt->diff;
	a.commit = commit;
	a.when = (time_t)f->t;
	if (kb_add(kbd, &a, &slug))
		fx_die("a kb entry");
	free(kbd);
	free(change);
	free(results);
	return slug;
}

/* One round: the profile of the best so far, the agent's attempt, the gate's verdict. */
static void fx_round(struct fx *f, size_t i)
{
	const struct fx_pattern *pt = &patterns[i % ARRAY_SIZE(patterns)];
	struct store_attempt a = STORE_ATTEMPT_INIT;
	size_t nr_reasons = 0;
	char commit[41], *slug = NULL;
	bool keep = pt->verdict == VERDICT_KEEP;
	/* past the default story the kept changes are small, so the gains stay in range */
	double big = keep && f->kept >= 2 ? 0.995 : pt->big, small = keep && f->kept >= 2 ? 0.998 : pt->small;
	struct fx_pattern scaled = *pt;
	int64_t id;

	scaled.big = big;
	scaled.small = small;
	f->round++;
	fx_baseline(f, i < FX_DEFAULT_ATTEMPTS || f->round % 100 == 1);
	fx_activity(f, STORE_INFO, "round-start", NULL, "round %ld: 1 agent", f->round);
	while (nr_reasons < ARRAY_SIZE(pt->reasons) && pt->reasons[nr_reasons])
		nr_reasons++;
	fx_sha(commit, pt->title, i);
	a.loop_id = f->loop_id;
	a.round = f->round;
	a.lens = pt->lens;
	a.function = pt->function;
	a.hypothesis = pt->hypothesis;
	a.expected_gain_pct = pt->expected_pct;
	a.verdict = pt->verdict;
	a.reasons = (char **)pt->reasons;
	a.nr_reasons = nr_reasons;
	a.stage = pt->stage;
	if (pt->measured) {
		a.change_pct = 100 * (big - 1);
		a.ci_low_pct = pt->lo;
		a.ci_high_pct = pt->hi;
	}
	a.diff = pt->diff;
	a.commit_sha = keep ? commit : NULL;
	a.agent_exit_status = 0;
	a.agent_seconds = 40 + (double)(i % 7) * 13.5;
	a.started_at = f->t;
	f->t += a.agent_seconds;
	fx_activity(f, STORE_INFO, "agent-done", NULL, "round %ld (%s): the agent finished after %.1f s",
		    f->round, pt->lens, a.agent_seconds);
	f->t += pt->measured ? 25 : 3;
	a.finished_at = f->t;
	if (i < FX_DEFAULT_ATTEMPTS)
		slug = fx_kb(f, pt, a.commit_sha, nr_reasons);
	else
		slug = xstrfmt("%s-%zu", pt->lens, i);
	a.kb_slug = slug;
	if (store_attempt_add(f->s, &a, &id))
		fx_die("an attempt");
	if (pt->measured)
		fx_compare(f, &scaled, id, keep ? commit : NULL, nr_reasons);
	if (keep) {
		if (store_loop_set_best(f->s, f->loop_id, commit))
			fx_die("the best commit");
		fx_activity(f, STORE_INFO, "kept", NULL, "kept as %.12s: perf: %s: %s (big %+.1f%%)", commit,
			    pt->function, pt->title, 100 * (big - 1));
		memcpy(f->best, commit, sizeof(f->best));
		f->big *= big;
		f->small *= small;
		f->kept++;
	}
	fx_activity(f, keep ? STORE_INFO : pt->stage == GATE_STAGE_BUILD ? STORE_ERROR : STORE_WARN, "verdict",
		    NULL, "round %ld (%s): %s at %s: %s", f->round, pt->lens, verdict_kind_name(pt->verdict),
		    gate_stage_name(pt->stage), pt->reasons[0]);
	free(slug);
	f->t += 5;
}

/* A scenario run, as lib/scenario.c writes it: a timeline sampled through idle, pressure, idle. */
static void fx_scenario(struct fx *f, const char *stamp, enum scenario_end end)
{
	static const char *const names[] = { "idle", "pressure", "idle-2" };
	static const char *const kinds[] = { "idle", "pressure", "idle" };
	static const double starts[] = { 0, 5, 15, 20 };
	struct scenario_result r;
	char *dir = xstrfmt("%s/scenarios/pressure/%s", f->state, stamp), *path;
	size_t nr_phases = end == SCENARIO_DONE ? 3 : 2, npoints = end == SCENARIO_DONE ? 40 : 24;
	json_t *doc;
	char *text;

	scenario_result_init(&r);
	r.tl.interval_s = 0.5;
	r.tl.start_unix_s = f->t;
	for (size_t i = 0; i < nr_phases; i++) {
		ALLOC_GROW(r.tl.phases, r.tl.nr_phases + 1, r.tl.alloc_phases);
		r.tl.phases[r.tl.nr_phases].name = xstrdup(names[i]);
		r.tl.phases[r.tl.nr_phases].kind = xstrdup(kinds[i]);
		r.tl.phases[r.tl.nr_phases].start_s = starts[i];
		r.tl.phases[r.tl.nr_phases++].end_s = i + 1 == nr_phases && end != SCENARIO_DONE ? 12.0 : starts[i + 1];
	}
	for (size_t k = 0; k < npoints; k++) {
		struct tl_point *p;
		double t = 0.5 * (double)(k + 1);
		bool busy = t > 5 && t <= 15;
		char line[128];

		ALLOC_GROW(r.tl.points, r.tl.nr_points + 1, r.tl.alloc_points);
		p = &r.tl.points[r.tl.nr_points++];
		memset(p, 0, sizeof(*p));
		p->t = t;
		p->cpu_pct = busy ? 180 + (double)(k % 5) : 1.5;
		p->cpu_machine_pct = p->cpu_pct / 4;
		p->rss_kb = busy ? 52000 + 800 * k : 41000;
		p->rss_anon_kb = p->rss_kb - 9000;
		p->rss_file_kb = 9000;
		p->vsz_kb = 210000;
		p->processes = 2;
		p->threads = busy ? 9 : 5;
		p->fds = 12;
		p->ctx_voluntary = busy ? 900 : 20;
		p->ctx_involuntary = busy ? 40 : 1;
		p->minor_faults = busy ? 300 : 2;
		p->machine_busy_pct = busy ? 55 : 3;
		p->psi_cpu_pct = busy ? 4.5 : 0;
		p->psi_memory_pct = 0;
		p->psi_io_pct = -1;
		snprintf(line, sizeof(line), "HOTLOOP_METRIC events=%zu queue_depth=%d", 1000 * k * (busy ? 3 : 1),
			 busy ? 17 : 0);
		timeline_metric_line(&r.tl, t, line, strlen(line));
		r.tl.samples++;
	}
	timeline_metric_line(&r.tl, 3, "HOTLOOP_METRIC <script>=1 bad", 30);
	r.tl.sampler_cpu_ns = 12000000;
	r.phases = xcalloc(nr_phases, sizeof(*r.phases));
	for (size_t i = 0; i < nr_phases; i++)
		timeline_phase_stats(&r.tl, i, &r.phases[i]);
	r.nr_phases = nr_phases;
	r.port = 43111;
	r.service_status = end == SCENARIO_DONE ? 0 : 1 << 8;
	r.wall_s = 0.5 * (double)npoints + 1.2;
	r.hotloop_cpu_s = 0.05;
	r.dir = xstrdup(dir);
	r.end = end;
	if (end == SCENARIO_DONE) {
		r.judge = 1;
		r.leak.verdict = LEAK_RETURNED;
		r.leak.before_kb = 41000;
		r.leak.after_kb = 41500;
		r.leak.mid_kb = 56000;
		r.leak.end_kb = 59200;
		r.leak.tolerance = 0.1;
	} else {
		r.error = xstrfmt("the service exited with status 1 during phase 'pressure' (see %s/service.log)", dir);
	}
	doc = timeline_to_json(&r.tl);
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	path = xstrfmt("%s/timeline.json", dir);
	fx_write(path, text);
	free(path);
	free(text);
	json_decref(doc);
	doc = scenario_result_to_json(&r, "pressure");
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	path = xstrfmt("%s/summary.json", dir);
	fx_write(path, text);
	free(path);
	free(text);
	json_decref(doc);
	path = xstrfmt("%s/service.log", dir);
	fx_write(path, "evd: listening on 127.0.0.1:43111\n");
	free(path);
	scenario_result_release(&r);
	free(dir);
}

/*
 * What lies outside the served roots, and links into them that must not
 * be followed: a kb entry that is a symlink to a directory beside kb/, a
 * profile that is a symlink out of .hotloop/, one named with "../", and a
 * scenario directory linked from outside. Each holds FX_SECRET.
 */
static void fx_outside(struct fx *f)
{
	struct kb_attempt a = { 0 };
	const char *reasons[] = { FX_SECRET };
	struct store_run r = STORE_RUN_INIT;
	char *okb = xstrfmt("%s/outside/kb", f->top), *slug = NULL, *path, *target, *summary;
	int64_t id;

	a.title = "an entry outside the knowledge base";
	a.function = "find_word";
	a.hypothesis = FX_SECRET;
	a.verdict = VERDICT_REJECT;
	a.reasons = reasons;
	a.nr_reasons = 1;
	a.diff = "diff --git a/" FX_SECRET " b/" FX_SECRET "\n";
	a.when = (time_t)f->t;
	if (kb_add(okb, &a, &slug))
		fx_die("the outside kb entry");
	target = xstrfmt("../outside/kb/%s", slug);
	path = xstrfmt("%s/kb/linked-outside-entry", f->top);
	fx_symlink(target, path);
	free(path);
	free(target);
	/* a directory of its own whose report.md is the one outside */
	target = xstrfmt("../../outside/kb/%s/report.md", slug);
	path = xstrfmt("%s/kb/linked-outside-report/report.md", f->top);
	fx_symlink(target, path);
	free(path);
	free(target);

	path = xstrfmt("%s/outside/profile.pb.gz", f->top);
	fx_write_profile(f, path, true, &summary);
	free(path);
	path = xstrfmt("%s/loop/%s/linked.pb.gz", f->state, FX_STAMP1);
	fx_symlink("../../../outside/profile.pb.gz", path);
	r.kind = STORE_RUN_RUN;
	r.workload = "linked";
	r.metric = "cpu";
	r.started_at = f->t;
	r.finished_at = f->t + 1;
	r.profile_path = path;
	r.summary_json = summary;
	if (store_run_add(f->s, &r, &id))
		fx_die("the linked run");
	free(path);
	path = xstrfmt("%s/../outside/profile.pb.gz", f->state);
	r.workload = "dotdot";
	r.profile_path = path;
	if (store_run_add(f->s, &r, &id))
		fx_die("the dotdot run");
	free(path);
	free(summary);

	path = xstrfmt("%s/outside/scenarios/20240501-000000/summary.json", f->top);
	fx_write(path, "{\"scenario\": \"" FX_SECRET "\", \"outcome\": \"done\", \"phases\": []}\n");
	free(path);
	path = xstrfmt("%s/scenarios/linked", f->state);
	fx_symlink("../../outside/scenarios", path);
	free(path);
	free(okb);
	free(slug);
}

static void fx_build(const char *dir, size_t nr_attempts)
{
	struct fx f = { 0 };
	char *db, *gitignore, *conf;
	size_t loop1 = nr_attempts == FX_DEFAULT_ATTEMPTS ? FX_LOOP1_ROUNDS : nr_attempts / 2;

	if (mkdir_p(dir))
		fx_die(dir);
	f.top = realpath(dir, NULL);
	if (!f.top)
		fx_die(dir);
	f.home = getenv("HOME") && *getenv("HOME") == '/' ? getenv("HOME") : "/home/dev";
	f.nr_attempts = nr_attempts;
	/* it ends a few minutes ago: an hour between the loops, at most 3 minutes a round */
	f.t = floor(store_now()) - 3600 - 300 - 180.0 * (double)nr_attempts;
	f.big = FX_BIG0;
	f.small = FX_SMALL0;
	fx_sha(f.best, "wordfreq, as it ships", 0);
	db = store_repo_path(f.top);
	if (!db)
		fx_die("the state directory");
	f.state = xstrfmt("%s/.hotloop", f.top);
	gitignore = xstrfmt("%s/.gitignore", f.top);
	fx_write(gitignore, "wordfreq\n*.o\n");
	conf = xstrfmt("%s/hotloop.conf", f.top);
	fx_write(conf, "[project]\n\tbuild = make -s\n\towned = src\n\tprotected = tests hotloop.conf\n"
		       "[gate]\n\ttest = tests/run\n"
		       "[workload \"big\"]\n\trun = ./wordfreq tests/big.txt\n\tprimary = yes\n"
		       "[workload \"small\"]\n\trun = ./wordfreq tests/small.txt\n");
	if (store_open(db, &f.s) || store_begin(f.s))
		fx_die(db);
	fx_loop_begin(&f, FX_STAMP1, (long)loop1);
	for (size_t i = 0; i < nr_attempts; i++) {
		if (i == loop1) {
			if (store_loop_end(f.s, f.loop_id, STORE_LOOP_FINISHED, "every planned round ran"))
				fx_die("the end of a loop");
			fx_activity(&f, STORE_INFO, "loop-end", NULL, "%zu kept; every planned round ran", f.kept);
			f.t += 3600;
			fx_loop_begin(&f, FX_STAMP2, 6 + (long)(nr_attempts - loop1));
		}
		fx_round(&f, i);
	}
	fx_outside(&f);
	/* the writers stamp with the clock; the story's times are these */
	for (size_t i = 0; i < f.nr_act; i++) {
		char *sql = xstrfmt("UPDATE activity SET at = %.3f WHERE id = %" PRId64, f.act_at[i], f.act_id[i]);

		if (sqlite3_exec(store_sqlite(f.s), sql, NULL, NULL, NULL) != SQLITE_OK)
			fx_die("the activity's times");
		free(sql);
	}
	if (sqlite3_exec(store_sqlite(f.s),
			 "UPDATE loops SET updated_at = (SELECT max(at) FROM activity WHERE loop_id = loops.id);"
			 "UPDATE loops SET finished_at = updated_at WHERE finished_at IS NOT NULL;"
			 "UPDATE attempts SET updated_at = coalesce(finished_at, started_at);"
			 "UPDATE runs SET updated_at = coalesce(finished_at, started_at);",
			 NULL, NULL, NULL) != SQLITE_OK)
		fx_die("the loops' times");
	if (store_commit(f.s))
		fx_die("the commit");
	store_close(f.s);
	fx_scenario(&f, "20240501-130000", SCENARIO_DONE);
	fx_scenario(&f, "20240502-100000", SCENARIO_EXITED);
	free(f.act_id);
	free(f.act_at);
	free(db);
	free(gitignore);
	free(conf);
	free(f.state);
	free(f.top);
}

static int fx_add_activity(const char *dir)
{
	char *db = xstrfmt("%s/" STORE_FILE, dir);
	const char *msg = getenv("HOTLOOP_DASH_MESSAGE");
	struct store *s;
	int ret = 1;

	if (!store_open(db, &s)) {
		ret = store_activity(s, STORE_NULL_INT, STORE_INFO, "note", "{\"from\": \"another process\"}",
				     "%s", msg ? msg : "a line from another process") ? 1 : 0;
		store_close(s);
	}
	if (ret)
		fprintf(stderr, "t-dashboard: cannot add to %s: %s\n", db, last_error());
	free(db);
	return ret;
}

static int fx_newer(const char *path)
{
	struct store_migration *m = xcalloc(store_nr_migrations + 1, sizeof(*m));
	struct store *s;
	int ret;

	for (size_t i = 0; i < store_nr_migrations; i++)
		m[i] = store_migrations[i];
	m[store_nr_migrations] = (struct store_migration){ "a later table", "CREATE TABLE later (x);" };
	ret = store_open_migrations(path, m, store_nr_migrations + 1, &s);
	if (!ret)
		store_close(s);
	else
		fprintf(stderr, "t-dashboard: cannot write %s: %s\n", path, last_error());
	free(m);
	return ret ? 1 : 0;
}

/* ---- the tests ----------------------------------------------------------------- */

static struct {
	char *tmp;		/* everything the tests write */
	char *top;		/* the fixture's project */
	struct dash d;
	struct store *s;
} E;

static void quiet(const char *prefix, const char *msg)
{
}

/* "a=1&b=2" as the request's query, for dash_get()'s param callback */
struct query {
	char *keys[8], *values[8];
	size_t nr;
};

static const char *query_param(void *ctx, const char *key)
{
	struct query *q = ctx;

	for (size_t i = 0; i < q->nr; i++)
		if (!strcmp(q->keys[i], key))
			return q->values[i];
	return NULL;
}

static void query_parse(struct query *q, char *text)
{
	char *save = NULL;

	q->nr = 0;
	for (char *kv = text ? strtok_r(text, "&", &save) : NULL; kv && q->nr < 8; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');

		q->keys[q->nr] = kv;
		q->values[q->nr++] = eq ? (*eq = 0, eq + 1) : kv + strlen(kv);
	}
}

/* GET 'url' ("/api/...?query") from d over s. */
static void get_from(const struct dash *d, struct store *s, const char *url, struct dash_reply *out)
{
	char *copy = xstrdup(url), *qm = strchr(copy, '?');
	struct query q;

	if (qm)
		*qm++ = 0;
	query_parse(&q, qm);
	dash_get(d, s, copy, query_param, &q, out);
	free(copy);
}

static void get(const char *url, struct dash_reply *out)
{
	get_from(&E.d, E.s, url, out);
}

/* The answer to 'url' as JSON; it must have 'status'. */
static json_t *get_json(const char *url, int status)
{
	struct dash_reply r;
	json_error_t err;
	json_t *v;

	get(url, &r);
	if (r.status != status)
		fail_msg("%s: status %d, wanted %d: %s", url, r.status, status, r.body.buf);
	assert_string_equal(r.type, DASH_JSON);
	v = json_loadb(r.body.buf, r.body.len, 0, &err);
	if (!v)
		fail_msg("%s: not JSON (%s): %.200s", url, err.text, r.body.buf);
	if (status != 200 && !json_is_string(json_object_get(v, "error")))
		fail_msg("%s: an error without \"error\": %s", url, r.body.buf);
	dash_reply_release(&r);
	return v;
}

static json_int_t jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("\"%s\" is not an integer", key);
	return json_integer_value(v);
}

static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		fail_msg("\"%s\" is not a number", key);
	return json_number_value(v);
}

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		fail_msg("\"%s\" is not a string", key);
	return json_string_value(v);
}

static json_t *jarr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_array(v))
		fail_msg("\"%s\" is not an array", key);
	return v;
}

#define assert_near(a, b) do { \
	double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= 1e-9 * (1 + fabs(b_)))) \
		fail_msg("%s is %.12g, not %.12g", #a, a_, b_); \
} while (0)

/* The id of the newest profile run of 'workload' at round 'round' (0: any), from /api/profiles. */
static json_int_t profile_id(const char *workload, long round)
{
	json_t *doc = get_json("/api/profiles", 200), *p;
	json_int_t id = 0;
	size_t i;

	json_array_foreach(jarr(doc, "profiles"), i, p) {
		json_t *sum = json_object_get(p, "summary");

		if (!strcmp(jstr(p, "workload"), workload) &&
		    (!round || json_integer_value(json_object_get(sum, "round")) == round)) {
			id = jint(p, "id");
			break;
		}
	}
	json_decref(doc);
	if (!id)
		fail_msg("no profile of %s at round %ld", workload, round);
	return id;
}

/* Does the JSON value, as text, hold s? */
static bool json_holds(json_t *v, const char *s)
{
	char *text = json_dumps(v, JSON_ENCODE_ANY);
	bool found = text && strstr(text, s);

	free(text);
	return found;
}

static int group_setup(void **state)
{
	char tmpl[] = "/tmp/t-dashboard.XXXXXX";

	set_error_routine(quiet);
	set_warn_routine(quiet);
	if (!mkdtemp(tmpl))
		return -1;
	E.tmp = realpath(tmpl, NULL);
	E.top = xstrfmt("%s/proj", E.tmp);
	fx_build(E.top, FX_DEFAULT_ATTEMPTS);
	dash_init(&E.d, E.top, NULL, NULL);
	return store_open_readonly(E.d.db, &E.s);
}

static int group_teardown(void **state)
{
	char *cmd = xstrfmt("rm -rf '%s'", E.tmp);

	store_close(E.s);
	dash_release(&E.d);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", E.tmp);
	free(cmd);
	free(E.top);
	free(E.tmp);
	return 0;
}

static void test_dashboard__overview(void **state)
{
	json_t *doc = get_json("/api/overview", 200), *store = json_object_get(doc, "store"), *c;

	assert_true(json_is_object(store));
	assert_int_equal(jint(store, "version"), store_nr_migrations);
	c = json_object_get(store, "counts");
	assert_int_equal(jint(c, "loops"), 2);
	assert_int_equal(jint(c, "attempts"), FX_DEFAULT_ATTEMPTS);
	/* 9 baselines, 4 compares, 2 runs outside the loop */
	assert_int_equal(jint(c, "runs"), 15);
	assert_int_equal(jint(c, "measurements"), 4 * 4 * (FX_PAIRS + 1));
	assert_int_equal(json_array_size(jarr(doc, "loops")), 2);
	assert_int_equal(json_array_size(jarr(doc, "gains")), 2);
	/* the newest profile of each workload */
	assert_int_equal(json_array_size(jarr(doc, "profiles")), 3);
	assert_int_equal(json_array_size(jarr(doc, "activity")), 20);
	assert_int_equal(jint(doc, "last_activity_id"), jint(c, "activity"));
	/* the entry linked from outside kb/ is not one */
	assert_int_equal(jint(doc, "kb_entries"), FX_DEFAULT_ATTEMPTS);
	/* nor the scenario directory linked from outside */
	assert_int_equal(jint(doc, "scenario_runs"), 2);
	json_decref(doc);
}

static void test_dashboard__loops(void **state)
{
	json_t *doc = get_json("/api/loops", 200), *loops = jarr(doc, "loops"), *l;

	assert_int_equal(json_array_size(loops), 2);
	/* newest first: loop 2 runs, loop 1 finished */
	l = json_array_get(loops, 0);
	assert_int_equal(jint(l, "id"), 2);
	assert_string_equal(jstr(l, "status"), "running");
	assert_true(json_is_null(json_object_get(l, "finished_at")));
	assert_int_equal(jint(l, "attempts"), FX_DEFAULT_ATTEMPTS - FX_LOOP1_ROUNDS);
	assert_int_equal(jint(l, "kept"), 1);
	assert_int_equal(strlen(jstr(l, "best_commit")), 40);
	l = json_array_get(loops, 1);
	assert_int_equal(jint(l, "id"), 1);
	assert_string_equal(jstr(l, "status"), "finished");
	assert_true(jnum(l, "finished_at") > jnum(l, "started_at"));
	assert_int_equal(jint(l, "attempts"), FX_LOOP1_ROUNDS);
	assert_int_equal(jint(l, "rounds_planned"), FX_LOOP1_ROUNDS);
	assert_string_equal(jstr(l, "stop_reason"), "every planned round ran");
	/* the second loop starts where the first left off */
	assert_string_equal(jstr(json_array_get(loops, 0), "base_commit"), jstr(l, "best_commit"));
	json_decref(doc);
}

static void test_dashboard__attempts(void **state)
{
	static const char *const verdicts[] = { "keep", "reject", "reject", "reject", "reject", "reject",
						"inconclusive", "keep", "no-candidate" };
	static const char *const stages[] = { "compare", "compare", "build", "test", "protected", "diff",
					      "compare", "compare", "agent" };
	json_t *doc = get_json("/api/attempts", 200), *list = jarr(doc, "attempts"), *a;
	size_t i;

	assert_int_equal(jint(doc, "total"), FX_DEFAULT_ATTEMPTS);
	assert_int_equal(json_array_size(list), FX_DEFAULT_ATTEMPTS);
	json_array_foreach(list, i, a) {
		assert_int_equal(jint(a, "id"), i + 1);
		assert_string_equal(jstr(a, "verdict"), verdicts[i]);
		assert_string_equal(jstr(a, "stage"), stages[i]);
		assert_true(json_array_size(jarr(a, "reasons")) >= 1);
		assert_int_equal(jint(a, "kept"), !strcmp(verdicts[i], "keep"));
		assert_true(json_is_string(json_object_get(a, "commit_sha")) == !strcmp(verdicts[i], "keep"));
		assert_true(json_is_string(json_object_get(a, "kb_slug")));
		/* the list leaves the diffs out */
		assert_null(json_object_get(a, "diff"));
		assert_true(json_is_number(json_object_get(a, "change_pct")) ==
			    (!strcmp(stages[i], "compare")));
	}
	/* a name that is not UTF-8 arrives as U+FFFD */
	assert_string_equal(jstr(json_array_get(list, 5), "function"), "bad\xef\xbf\xbd\xef\xbf\xbd_name");
	assert_string_equal(jstr(json_array_get(list, 2), "function"), "<script>alert(\"fw\")</script>");
	json_decref(doc);

	/* one loop's; the newest 'limit'; those before an id */
	doc = get_json("/api/attempts?loop=1", 200);
	assert_int_equal(json_array_size(jarr(doc, "attempts")), FX_LOOP1_ROUNDS);
	assert_int_equal(jint(doc, "total"), FX_LOOP1_ROUNDS);
	json_decref(doc);
	doc = get_json("/api/attempts?limit=2", 200);
	list = jarr(doc, "attempts");
	assert_int_equal(json_array_size(list), 2);
	assert_int_equal(jint(json_array_get(list, 0), "id"), FX_DEFAULT_ATTEMPTS - 1);
	assert_int_equal(jint(json_array_get(list, 1), "id"), FX_DEFAULT_ATTEMPTS);
	json_decref(doc);
	doc = get_json("/api/attempts?before=3&limit=5", 200);
	list = jarr(doc, "attempts");
	assert_int_equal(json_array_size(list), 2);
	assert_int_equal(jint(json_array_get(list, 1), "id"), 2);
	json_decref(doc);
	doc = get_json("/api/attempts?loop=99", 200);
	assert_int_equal(json_array_size(jarr(doc, "attempts")), 0);
	json_decref(doc);
}

static void test_dashboard__attempt(void **state)
{
	json_t *doc = get_json("/api/attempts/1", 200), *a = json_object_get(doc, "attempt"), *runs, *run, *w, *p;
	json_t *kb;
	size_t i, j;

	assert_int_equal(jint(a, "id"), 1);
	assert_string_equal(jstr(a, "diff"), diff_find_word);
	assert_string_equal(jstr(a, "function"), "find_word");
	runs = jarr(doc, "runs");
	assert_int_equal(json_array_size(runs), 1);
	run = json_array_get(runs, 0);
	assert_string_equal(jstr(run, "kind"), "compare");
	assert_string_equal(jstr(run, "workload"), "big");
	assert_string_equal(jstr(json_object_get(run, "summary"), "verdict"), "keep");
	assert_int_equal(json_array_size(jarr(run, "workloads")), 2);
	json_array_foreach(jarr(run, "workloads"), i, w) {
		assert_string_equal(jstr(w, "workload"), i ? "small" : "big");
		assert_int_equal(json_array_size(jarr(w, "pairs")), FX_PAIRS);
		assert_int_equal(json_array_size(jarr(w, "warmups")), 2);
		json_array_foreach(jarr(w, "pairs"), j, p) {
			json_t *b = json_object_get(p, "base"), *c = json_object_get(p, "cand");

			assert_int_equal(jint(p, "pair"), j);
			assert_string_equal(jstr(b, "side"), "base");
			assert_string_equal(jstr(c, "side"), "cand");
			assert_int_equal(jint(b, "position") + jint(c, "position"), 1);
			assert_true(jnum(c, "value") < jnum(b, "value"));
		}
	}
	kb = json_object_get(doc, "kb");
	assert_true(json_is_object(kb));
	assert_string_equal(jstr(kb, "slug"), jstr(a, "kb_slug"));
	assert_string_equal(jstr(kb, "verdict"), "keep");
	assert_non_null(strstr(jstr(kb, "report_md"), "# find words through a hash index"));
	json_decref(doc);

	/* one that stopped before the compare has no runs */
	doc = get_json("/api/attempts/3", 200);
	assert_int_equal(json_array_size(jarr(doc, "runs")), 0);
	assert_string_equal(jstr(json_object_get(doc, "attempt"), "diff"), diff_hostile);
	json_decref(doc);
	doc = get_json("/api/attempts/9", 200);
	assert_true(json_is_null(json_object_get(json_object_get(doc, "attempt"), "function")));
	json_decref(doc);
}

/* The gains: medians of the measured runs (warm-ups aside), their change, and the product so far. */
static void test_dashboard__gains(void **state)
{
	json_t *doc = get_json("/api/benchmarks", 200), *ws = jarr(doc, "workloads"), *big, *small, *p;
	json_t *loops;

	assert_int_equal(json_array_size(ws), 2);
	big = json_array_get(ws, 0);
	small = json_array_get(ws, 1);
	assert_string_equal(jstr(big, "workload"), "big");
	assert_string_equal(jstr(big, "metric"), "cpu");
	assert_string_equal(jstr(small, "workload"), "small");
	assert_int_equal(json_array_size(jarr(big, "points")), 2);
	assert_int_equal(json_array_size(jarr(small, "points")), 2);

	p = json_array_get(jarr(big, "points"), 0);
	assert_int_equal(jint(p, "attempt_id"), 1);
	assert_true(json_is_true(json_object_get(p, "primary")));
	assert_near(jnum(p, "base_median"), 2.0);
	assert_near(jnum(p, "cand_median"), 1.2);
	assert_int_equal(jint(p, "base_runs"), FX_PAIRS);
	assert_int_equal(jint(p, "cand_runs"), FX_PAIRS);
	assert_near(jnum(p, "change_pct"), -40);
	assert_near(jnum(p, "total_pct"), -40);
	assert_near(jnum(p, "ci_low_pct"), -42.1);
	assert_near(jnum(p, "ci_high_pct"), -37.9);
	assert_int_equal(jint(p, "base_rss_kib"), 4023);
	assert_int_equal(jint(p, "cand_rss_kib"), 4103);
	p = json_array_get(jarr(big, "points"), 1);
	assert_int_equal(jint(p, "attempt_id"), 8);
	assert_near(jnum(p, "base_median"), 1.2);
	assert_near(jnum(p, "cand_median"), 0.9);
	assert_near(jnum(p, "change_pct"), -25);
	/* the product: 0.6 * 0.75 */
	assert_near(jnum(p, "total_pct"), -55);
	assert_near(jnum(big, "total_factor"), 0.45);

	p = json_array_get(jarr(small, "points"), 0);
	assert_true(json_is_false(json_object_get(p, "primary")));
	assert_near(jnum(p, "change_pct"), -25);
	/* a guard's interval is the one its compare summary gives */
	assert_near(jnum(p, "ci_low_pct"), -27);
	assert_near(jnum(p, "ci_high_pct"), -23);
	p = json_array_get(jarr(small, "points"), 1);
	assert_near(jnum(p, "base_median"), 0.15);
	assert_near(jnum(p, "cand_median"), 0.14);
	assert_near(jnum(p, "change_pct"), 100 * (0.14 / 0.15 - 1));
	assert_near(jnum(p, "total_pct"), -30);

	loops = jarr(doc, "loops");
	assert_int_equal(json_array_size(loops), 2);
	assert_string_equal(jstr(json_array_get(loops, 0), "primary_workload"), "big");
	json_decref(doc);

	/* the overview has the same */
	doc = get_json("/api/overview", 200);
	assert_near(jnum(json_array_get(jarr(doc, "gains"), 0), "total_factor"), 0.45);
	json_decref(doc);
}

static void test_dashboard__profiles(void **state)
{
	json_t *doc = get_json("/api/profiles", 200), *latest = jarr(doc, "latest"), *all = jarr(doc, "profiles");
	json_t *p, *sum, *h;
	size_t i;
	bool seen_big = false;

	assert_int_equal(json_array_size(all), FX_DEFAULT_ATTEMPTS + 2);
	assert_int_equal(json_array_size(latest), 3);
	json_array_foreach(latest, i, p) {
		if (strcmp(jstr(p, "workload"), "big"))
			continue;
		seen_big = true;
		sum = json_object_get(p, "summary");
		assert_int_equal(jint(sum, "round"), FX_DEFAULT_ATTEMPTS - FX_LOOP1_ROUNDS);
		assert_string_equal(jstr(sum, "sample_type"), "samples");
		h = json_array_get(jarr(sum, "hotspots"), 0);
		assert_string_equal(jstr(h, "function"), "find_word");
		assert_true(jnum(h, "self_pct") > 0 && jnum(h, "attributed_pct") >= jnum(h, "self_pct"));
		assert_true(json_is_array(json_object_get(h, "tags")));
		assert_string_equal(jstr(p, "kind"), "baseline");
	}
	assert_true(seen_big);
	json_decref(doc);
}

/* Well-formed XML, by xmllint when it is there. */
static void assert_xml(const struct strbuf *doc)
{
	char path[] = "/tmp/t-dashboard-svg-XXXXXX", *cmd;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, doc->buf, doc->len), (ssize_t)doc->len);
	close(fd);
	if (!system("command -v xmllint >/dev/null 2>&1")) {
		cmd = xstrfmt("xmllint --noout '%s'", path);
		if (system(cmd))
			fail_msg("not well-formed XML: %s", path);
		free(cmd);
	}
	unlink(path);
}

static void test_dashboard__flame(void **state)
{
	json_int_t id = profile_id("big", 1);
	char *url = xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/flame.svg", (json_int_t)id);
	struct dash_reply r;

	get(url, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.type, DASH_SVG);
	assert_true(!strncmp(r.body.buf, "<?xml", 5) || !strncmp(r.body.buf, "<svg", 4));
	assert_non_null(strstr(r.body.buf, "find_word"));
	/* hostile names are text, not markup */
	assert_null(strstr(r.body.buf, "<script>alert"));
	assert_non_null(strstr(r.body.buf, "&lt;script&gt;alert"));
	assert_null(strstr(r.body.buf, "\xff"));
	assert_xml(&r.body);
	dash_reply_release(&r);
	free(url);
}

static void test_dashboard__flame_diff(void **state)
{
	json_int_t base = profile_id("big", 1), cand = profile_id("big", 2);
	char *url = xstrfmt("/api/flame-diff/%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT ".svg", base, cand);
	struct dash_reply r;

	get(url, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.type, DASH_SVG);
	assert_non_null(strstr(r.body.buf, "find_word"));
	assert_xml(&r.body);
	dash_reply_release(&r);
	free(url);
	/* either side missing */
	url = xstrfmt("/api/flame-diff/%" JSON_INTEGER_FORMAT "/999.svg", base);
	json_decref(get_json(url, 404));
	free(url);
	url = xstrfmt("/api/flame-diff/999/%" JSON_INTEGER_FORMAT ".svg", cand);
	json_decref(get_json(url, 404));
	free(url);
}

static void test_dashboard__top(void **state)
{
	json_int_t id = profile_id("big", 1);
	char *url = xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/top?n=3", id), *bad;
	json_t *doc = get_json(url, 200), *rows = jarr(doc, "rows");
	static const char *const queries[] = { "n=0", "n=1001", "n=abc", "n=", "n=3x", "n=-1",
					       "n=99999999999999999999" };

	assert_int_equal(json_array_size(rows), 3);
	assert_string_equal(jstr(json_array_get(rows, 0), "name"), "find_word");
	assert_int_equal(jint(doc, "run_id"), id);
	assert_true(jint(doc, "rows_total") > 3);
	assert_string_equal(jstr(doc, "sample_type"), "samples/count");
	json_decref(doc);
	free(url);
	for (size_t i = 0; i < ARRAY_SIZE(queries); i++) {
		bad = xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/top?%s", id, queries[i]);
		json_decref(get_json(bad, 400));
		free(bad);
	}
	/* a run without a profile */
	json_decref(get_json("/api/profiles/999/top", 404));
}

static void test_dashboard__scenarios(void **state)
{
	json_t *doc = get_json("/api/scenarios", 200), *runs = jarr(doc, "runs"), *r, *sum, *tl;

	assert_int_equal(json_array_size(runs), 2);
	/* newest first */
	r = json_array_get(runs, 0);
	assert_string_equal(jstr(r, "scenario"), "pressure");
	assert_string_equal(jstr(r, "run"), "20240502-100000");
	assert_string_equal(jstr(r, "outcome"), "exited");
	assert_true(json_is_string(json_object_get(r, "error")));
	r = json_array_get(runs, 1);
	assert_string_equal(jstr(r, "outcome"), "done");
	assert_int_equal(json_array_size(jarr(r, "phases")), 3);
	assert_string_equal(jstr(json_array_get(jarr(r, "phases"), 1), "name"), "pressure");
	assert_true(jnum(json_object_get(json_array_get(jarr(r, "phases"), 1), "cpu_pct"), "mean") > 100);
	assert_string_equal(jstr(json_object_get(r, "leak"), "verdict"), "returned");
	json_decref(doc);

	doc = get_json("/api/scenarios/pressure/20240501-130000", 200);
	sum = json_object_get(doc, "summary");
	tl = json_object_get(doc, "timeline");
	assert_string_equal(jstr(sum, "scenario"), "pressure");
	assert_string_equal(jstr(sum, "judge"), "pressure");
	assert_int_equal(json_array_size(jarr(tl, "points")), 40);
	assert_int_equal(json_array_size(jarr(tl, "phases")), 3);
	assert_true(json_is_array(json_object_get(json_object_get(tl, "metrics"), "events")));
	json_decref(doc);
	json_decref(get_json("/api/scenarios/pressure/20990101-000000", 404));
	json_decref(get_json("/api/scenarios/nothing/20240501-130000", 404));
	json_decref(get_json("/api/scenarios/pressure", 404));
}

static void test_dashboard__kb(void **state)
{
	json_t *doc = get_json("/api/kb", 200), *list = jarr(doc, "entries"), *e;
	const char *slug;
	char *url;
	size_t i;

	assert_int_equal(json_array_size(list), FX_DEFAULT_ATTEMPTS);
	assert_int_equal(jint(doc, "total"), FX_DEFAULT_ATTEMPTS);
	json_array_foreach(list, i, e)
		assert_false(json_holds(e, FX_SECRET));
	json_decref(doc);

	/* words anywhere in title, function, hypothesis or reasons ("rehashes" too) */
	doc = get_json("/api/kb?q=hash", 200);
	assert_int_equal(json_array_size(jarr(doc, "entries")), 2);
	json_decref(doc);
	/* every word must be there */
	doc = get_json("/api/kb?q=HASH  through", 200);
	list = jarr(doc, "entries");
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(jstr(doc, "query"), "HASH  through");
	slug = jstr(json_array_get(list, 0), "slug");
	url = xstrfmt("/api/kb/%s", slug);
	json_decref(doc);
	doc = get_json(url, 200);
	assert_string_equal(jstr(doc, "title"), "find words through a hash index");
	assert_string_equal(jstr(doc, "diff"), diff_find_word);
	assert_non_null(strstr(jstr(doc, "report_md"), "## Hypothesis"));
	json_decref(doc);
	free(url);
	json_decref(get_json("/api/kb/no-such-entry", 404));
}

static void test_dashboard__activity(void **state)
{
	json_t *doc = get_json("/api/activity?after=0&limit=5", 200), *list = jarr(doc, "activity"), *a;
	static const char *const bad[] = { "after=-1", "after=x", "limit=0", "limit=10001", "limit=",
					   "after=1.5" };
	size_t i;

	assert_int_equal(json_array_size(list), 5);
	json_array_foreach(list, i, a) {
		assert_int_equal(jint(a, "id"), i + 1);
		assert_true(json_is_number(json_object_get(a, "at")));
		assert_true(json_is_string(json_object_get(a, "level")));
		assert_true(json_is_string(json_object_get(a, "kind")));
		assert_true(json_is_string(json_object_get(a, "message")));
	}
	assert_string_equal(jstr(json_array_get(list, 0), "kind"), "loop-start");
	assert_true(json_is_object(json_object_get(json_array_get(list, 0), "data")));
	/* times keep their fractions: the profile came 2.25 s after the start */
	assert_true(fabs(jnum(json_array_get(list, 1), "at") - jnum(json_array_get(list, 0), "at") - 2.25) < 1e-3);
	json_decref(doc);
	doc = get_json("/api/activity?after=5&limit=1", 200);
	assert_int_equal(jint(json_array_get(jarr(doc, "activity"), 0), "id"), 6);
	json_decref(doc);
	doc = get_json("/api/activity?after=100000", 200);
	assert_int_equal(json_array_size(jarr(doc, "activity")), 0);
	json_decref(doc);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char *url = xstrfmt("/api/activity?%s", bad[i]);

		json_decref(get_json(url, 400));
		free(url);
	}
}

static void test_dashboard__not_found(void **state)
{
	static const char *const paths[] = {
		"/api/", "/api/nothing", "/api/overview/more", "/api/attempts/999", "/api/attempts/1/more",
		"/api/profiles/999/flame.svg", "/api/profiles/1/other", "/api/flame-diff/1",
		"/api/kb/a/b", "/api/loops/1", "/api/events2", "/api/scenarios/a/b/c",
	};

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		json_decref(get_json(paths[i], 404));
	/* a run that has no profile */
	{
		json_t *doc = get_json("/api/attempts/1", 200);
		json_int_t run = jint(json_array_get(jarr(doc, "runs"), 0), "id");
		char *url = xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/flame.svg", run);

		json_decref(get_json(url, 404));
		free(url);
		json_decref(doc);
	}
}

static void test_dashboard__malformed(void **state)
{
	char longname[NAME_MAX + 10];
	const char *const paths[] = {
		"", "/", "/apix", "/api", "api/overview", "/api//overview", "/api/overview/", "/api/../etc/passwd",
		"/api/kb/..", "/api/kb/.hidden", "/api/scenarios/../../etc", "/api/scenarios/pressure/..",
		"/api/attempts/abc", "/api/attempts/0", "/api/attempts/-1", "/api/attempts/01",
		"/api/attempts/1.5", "/api/attempts/99999999999999999999", "/api/attempts/1%2e",
		"/api/profiles/x/flame.svg", "/api/profiles/0/top", "/api/flame-diff/1/x.svg",
		"/api/flame-diff/x/1.svg", "/api/flame-diff/1/.svg", "/api/kb/a b", "/api/kb/a\\b",
		"/api/kb/%2e%2e", longname,
	};

	memcpy(longname, "/api/kb/", 8);
	memset(longname + 8, 'a', NAME_MAX + 1);
	longname[NAME_MAX + 9] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		json_decref(get_json(paths[i], 400));
	json_decref(get_json("/api/attempts?limit=0", 400));
	json_decref(get_json("/api/attempts?limit=x", 400));
	json_decref(get_json("/api/attempts?before=-5", 400));
	json_decref(get_json("/api/attempts?loop=1;DROP", 400));
}

/* Before a loop ran there: every list empty, every record missing. */
static void test_dashboard__no_store(void **state)
{
	static const char *const lists[] = { "/api/loops", "/api/attempts", "/api/benchmarks",
					     "/api/profiles", "/api/activity" };
	char *top = xstrfmt("%s/empty", E.tmp);
	struct dash d;
	struct dash_reply r;
	json_t *doc;

	assert_int_equal(mkdir_p(top), 0);
	dash_init(&d, top, NULL, NULL);
	get_from(&d, NULL, "/api/overview", &r);
	assert_int_equal(r.status, 200);
	doc = json_loads(r.body.buf, 0, NULL);
	assert_true(json_is_null(json_object_get(doc, "store")));
	assert_int_equal(jint(doc, "kb_entries"), 0);
	assert_int_equal(jint(doc, "scenario_runs"), 0);
	assert_int_equal(json_array_size(jarr(doc, "loops")), 0);
	json_decref(doc);
	dash_reply_release(&r);
	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		get_from(&d, NULL, lists[i], &r);
		assert_int_equal(r.status, 200);
		dash_reply_release(&r);
	}
	get_from(&d, NULL, "/api/attempts/1", &r);
	assert_int_equal(r.status, 404);
	dash_reply_release(&r);
	get_from(&d, NULL, "/api/kb", &r);
	assert_int_equal(r.status, 200);
	dash_reply_release(&r);
	dash_release(&d);
	free(top);
}

/* A server started before the first loop: what the loop writes later is shown. */
static void test_dashboard__state_made_later(void **state)
{
	char *top = xstrfmt("%s/later", E.tmp);
	struct dash d;
	struct store *s;
	struct dash_reply r;
	json_t *doc;

	assert_int_equal(mkdir_p(top), 0);
	dash_init(&d, top, NULL, NULL);
	assert_null(d.state);
	fx_build(top, FX_DEFAULT_ATTEMPTS);
	assert_int_equal(store_open_readonly(d.db, &s), 0);
	get_from(&d, s, "/api/profiles/1/flame.svg", &r);
	assert_int_equal(r.status, 200);
	dash_reply_release(&r);
	get_from(&d, s, "/api/scenarios", &r);
	doc = json_loads(r.body.buf, 0, NULL);
	assert_int_equal(json_array_size(jarr(doc, "runs")), 2);
	json_decref(doc);
	dash_reply_release(&r);
	get_from(&d, s, "/api/scenarios/pressure/20240501-130000", &r);
	assert_int_equal(r.status, 200);
	dash_reply_release(&r);
	store_close(s);
	dash_release(&d);
	free(top);
}

/* ---- sanitizing ------------------------------------------------------------------ */

static void sanitize_dash(struct dash *d, const char *top)
{
	memset(d, 0, sizeof(*d));
	d->top = xstrdup(top);
	d->user = xstrdup("alice");
	d->host = xstrdup("boxhost");
	d->home = xstrdup("/home/alice");
	d->sanitize = true;
}

static void test_dashboard__sanitize_text(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		/* the project's top becomes relative */
		{ "/tmp/x/proj/src/a.c:12", "src/a.c:12" },
		{ "/tmp/x/proj", "." },
		{ "/tmp/x/proj/", "./" },
		{ "/tmp/x/proj//usr/lib/x.so", "usr/lib/x.so" },
		{ "in /tmp/x/proj/src/a.c, line 3", "in src/a.c, line 3" },
		{ "\"/tmp/x/proj/kb/e\"", "\"kb/e\"" },
		/* a longer name that starts like it is another directory */
		{ "/tmp/x/project/a.c", ".../a.c" },
		/* other absolute paths: their last component */
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", ".../libc.so.6" },
		{ "(/usr/include/stdio.h:86)", "(.../stdio.h:86)" },
		{ "--db=/srv/data/p.db", "--db=.../p.db" },
		{ "a,/srv/data/q", "a,.../q" },
		{ "file:///srv/data/x.html", "file://.../x.html" },
		{ "PATH=/usr/bin:/home/alice/bin:/opt/x", "PATH=.../bin:.../bin:.../x" },
		{ "C:/srv/x", "C:.../x" },
		/* the home directory, alone too */
		{ "cd /home/alice && make", "cd ~ && make" },
		{ "/home/alice/.cache/hotloop/x/tree/src/w.c", ".../w.c" },
		/* a user's name in what is left of a path */
		{ "/srv/alice/alice.txt", ".../user.txt" },
		{ "/tmp/x/proj/alice/x.c", "user/x.c" },
		/* URLs, comments, relative and diff paths stay */
		{ "http://www.w3.org/2000/svg", "http://www.w3.org/2000/svg" },
		{ "xmlns=\"http://www.w3.org/2000/svg\"", "xmlns=\"http://www.w3.org/2000/svg\"" },
		{ "https://example.com/a/b?c=/d", "https://example.com/a/b?c=/d" },
		{ "// comment", "// comment" },
		{ "+// find_word: see http://x.org/y", "+// find_word: see http://x.org/y" },
		{ "/* comment */", "/* comment */" },
		{ "--- a/src/words.c", "--- a/src/words.c" },
		{ "+++ b/src/words.c", "+++ b/src/words.c" },
		{ "diff --git a/src/x.c b/src/x.c", "diff --git a/src/x.c b/src/x.c" },
		{ "1/2 and a/b and ./c/d and ../e/f", "1/2 and a/b and ./c/d and ../e/f" },
		{ "</text></g>", "</text></g>" },
		{ "/", "/" },
		{ "/bin", "/bin" },
		{ "", "" },
		/* user and host names, as words */
		{ "alice@boxhost:~$ make", "user@host:~$ make" },
		{ "alice's boxhost.example.com", "user's host.example.com" },
		{ "malice and boxhosts", "malice and boxhosts" },
		{ "ALICE", "ALICE" },
	};
	struct dash d;

	sanitize_dash(&d, "/tmp/x/proj");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;

		dash_sanitize_text(&d, cases[i].in, &sb);
		if (strcmp(sb.buf, cases[i].out))
			fail_msg("'%s' sanitized is '%s', not '%s'", cases[i].in, sb.buf, cases[i].out);
		strbuf_reset(&sb);
		/* and once more changes nothing */
		dash_sanitize_text(&d, cases[i].out, &sb);
		if (strcmp(sb.buf, cases[i].out))
			fail_msg("'%s' sanitized again is '%s'", cases[i].out, sb.buf);
		strbuf_release(&sb);
	}
	dash_release(&d);

	/* a top with a space and other characters a path may hold */
	sanitize_dash(&d, "/tmp/my proj (2)");
	{
		struct strbuf sb = STRBUF_INIT;

		dash_sanitize_text(&d, "at /tmp/my proj (2)/src/a.c: /tmp/my proj (2)", &sb);
		assert_string_equal(sb.buf, "at src/a.c: .");
		strbuf_release(&sb);
	}
	dash_release(&d);
}

static void test_dashboard__sanitize_json(void **state)
{
	struct dash d;
	json_t *doc = json_pack("{s:s, s:[s, i, {s:s}], s:s, s:n, s:s}",
				"file", "/tmp/x/proj/src/a.c",
				"list", "/usr/lib/libm.so", 3, "inner", "alice was here",
				"/tmp/x/proj/a.txt", "a key with a path",
				"/home/alice/b", "/home/alice", "/etc/passwd.d/x");
	char *text;

	sanitize_dash(&d, "/tmp/x/proj");
	dash_sanitize_json(&d, doc);
	text = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(text, "{\".../b\":null,\"a.txt\":\"a key with a path\",\"file\":\"src/a.c\","
				  "\"list\":[\".../libm.so\",3,{\"inner\":\"user was here\"}],"
				  "\"~\":\".../x\"}");
	free(text);
	json_decref(doc);
	dash_release(&d);
}

/* The answers of a snapshot hold no absolute path, home, user or host; the flame's script is intact. */
static void test_dashboard__sanitized_answers(void **state)
{
	static const char *const urls[] = { "/api/overview", "/api/attempts", "/api/attempts/4", "/api/profiles",
					    "/api/scenarios", "/api/scenarios/pressure/20240502-100000",
					    "/api/kb", "/api/activity" };
	json_int_t id = profile_id("big", 1);
	char *flame = xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/flame.svg", id);
	struct dash_reply plain, clean;
	const char *home = getenv("HOME");
	const char *a, *b, *ea, *eb;

	E.d.sanitize = true;
	for (size_t i = 0; i < ARRAY_SIZE(urls); i++) {
		get(urls[i], &clean);
		assert_int_equal(clean.status, 200);
		if (strstr(clean.body.buf, E.tmp))
			fail_msg("%s holds %s: %s", urls[i], E.tmp, strstr(clean.body.buf, E.tmp));
		if (home && strlen(home) > 1 && strstr(clean.body.buf, home))
			fail_msg("%s holds %s", urls[i], home);
		assert_null(strstr(clean.body.buf, "/usr/"));
		dash_reply_release(&clean);
	}
	get(flame, &clean);
	E.d.sanitize = false;
	get(flame, &plain);
	assert_int_equal(clean.status, 200);
	assert_null(strstr(clean.body.buf, E.tmp));
	assert_null(strstr(clean.body.buf, "/usr/"));
	assert_xml(&clean.body);
	/* the script inside is the same */
	a = strstr(plain.body.buf, "<script");
	b = strstr(clean.body.buf, "<script");
	assert_non_null(a);
	assert_non_null(b);
	ea = strstr(a, "</script>");
	eb = strstr(b, "</script>");
	assert_non_null(ea);
	assert_non_null(eb);
	assert_int_equal(ea - a, eb - b);
	assert_memory_equal(a, b, (size_t)(ea - a));
	dash_reply_release(&plain);
	dash_reply_release(&clean);
	free(flame);
}

/* ---- paths that lead outside -------------------------------------------------------- */

static void test_dashboard__outside_kb(void **state)
{
	json_t *doc = get_json("/api/kb/linked-outside-entry", 404);
	struct dash_reply r;

	assert_null(strstr(jstr(doc, "error"), FX_SECRET));
	json_decref(doc);
	json_decref(get_json("/api/kb/linked-outside-report", 404));
	/* a prefix of one's slug finds it no more than its name */
	json_decref(get_json("/api/kb/linked", 404));
	get("/api/kb", &r);
	assert_null(strstr(r.body.buf, FX_SECRET));
	assert_null(strstr(r.body.buf, "linked-outside"));
	dash_reply_release(&r);
	get("/api/kb?q=outside", &r);
	assert_null(strstr(r.body.buf, FX_SECRET));
	dash_reply_release(&r);
}

static void test_dashboard__outside_profile(void **state)
{
	static const char *const workloads[] = { "linked", "dotdot" };

	for (size_t i = 0; i < ARRAY_SIZE(workloads); i++) {
		json_int_t id = profile_id(workloads[i], 0), big = profile_id("big", 1);
		char *urls[3];

		urls[0] = xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/flame.svg", id);
		urls[1] = xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/top", id);
		urls[2] = xstrfmt("/api/flame-diff/%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT ".svg", big, id);
		for (size_t k = 0; k < 3; k++) {
			json_t *doc = get_json(urls[k], 404);

			assert_string_equal(jstr(doc, "error"), "outside the served directories");
			json_decref(doc);
			free(urls[k]);
		}
	}
}

static void test_dashboard__outside_scenario(void **state)
{
	struct dash_reply r;

	get("/api/scenarios", &r);
	assert_null(strstr(r.body.buf, "linked"));
	assert_null(strstr(r.body.buf, FX_SECRET));
	dash_reply_release(&r);
	json_decref(get_json("/api/scenarios/linked/20240501-000000", 404));
}

/* ---- the snapshot's paths ------------------------------------------------------------ */

static void test_dashboard__snapshot_paths(void **state)
{
	char **paths;
	size_t nr, flames = 0, tops = 0, diffs = 0, attempts = 0, kb = 0, scenarios = 0, failed = 0;

	assert_int_equal(dash_snapshot_paths(&E.d, E.s, &paths, &nr), 0);
	assert_string_equal(paths[0], "/api/overview");
	for (size_t i = 0; i < nr; i++) {
		struct dash_reply r;

		flames += strstr(paths[i], "/flame.svg") != NULL;
		tops += strstr(paths[i], "/top") != NULL;
		diffs += !strncmp(paths[i], "/api/flame-diff/", 16);
		attempts += !strncmp(paths[i], "/api/attempts/", 14);
		kb += !strncmp(paths[i], "/api/kb/", 8);
		scenarios += !strncmp(paths[i], "/api/scenarios/", 15);
		/* no query: each answers as it is */
		assert_null(strchr(paths[i], '?'));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(paths[i], paths[j]))
				fail_msg("%s twice", paths[i]);
		get_from(&E.d, E.s, paths[i], &r);
		if (r.status != 200) {
			/* only the profiles outside .hotloop/ fail */
			assert_int_equal(r.status, 404);
			assert_non_null(strstr(r.body.buf, "outside the served directories"));
			failed++;
		}
		dash_reply_release(&r);
	}
	assert_int_equal(attempts, FX_DEFAULT_ATTEMPTS);
	assert_int_equal(flames, FX_DEFAULT_ATTEMPTS + 2);
	assert_int_equal(tops, FX_DEFAULT_ATTEMPTS + 2);
	/*
	 * big's profiles are of three commits (the start, each keep): each
	 * commit's first against the one before, and the first against the
	 * last; linked and dotdot are alone
	 */
	assert_int_equal(diffs, 3);
	assert_int_equal(kb, FX_DEFAULT_ATTEMPTS);
	assert_int_equal(scenarios, 2);
	assert_int_equal(failed, 4);
	assert_int_equal(nr, 8 + attempts + flames + tops + diffs + kb + scenarios);
	for (size_t i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
}

/* ---- a bigger store --------------------------------------------------------------------- */

static void test_dashboard__many_attempts(void **state)
{
	char *top = xstrfmt("%s/many", E.tmp);
	struct dash d;
	struct store *s;
	struct dash_reply r;
	json_t *doc, *big;
	size_t n = 3 * FX_DEFAULT_ATTEMPTS + 4;

	fx_build(top, n);
	dash_init(&d, top, NULL, NULL);
	assert_int_equal(store_open_readonly(d.db, &s), 0);
	get_from(&d, s, "/api/attempts?limit=10", &r);
	assert_int_equal(r.status, 200);
	doc = json_loads(r.body.buf, 0, NULL);
	assert_int_equal(jint(doc, "total"), n);
	assert_int_equal(json_array_size(jarr(doc, "attempts")), 10);
	json_decref(doc);
	dash_reply_release(&r);
	get_from(&d, s, "/api/benchmarks", &r);
	doc = json_loads(r.body.buf, 0, NULL);
	big = json_array_get(jarr(doc, "workloads"), 0);
	/* a keep in every nine: the first two as in the small story, then -0.5% each */
	assert_int_equal(json_array_size(jarr(big, "points")), 2 * 3 + 1);
	assert_near(jnum(big, "total_factor"), 0.45 * pow(0.995, 5));
	json_decref(doc);
	dash_reply_release(&r);
	store_close(s);
	dash_release(&d);
	free(top);
}

/* Names from outside that are not UTF-8, where the gains are made. */
static void test_dashboard__gains_hostile_names(void **state)
{
	char *top = xstrfmt("%s/hostile", E.tmp), *db = xstrfmt("%s/" STORE_FILE, top);
	struct store_loop l = STORE_LOOP_INIT;
	struct store_attempt a = STORE_ATTEMPT_INIT;
	struct store_run r = STORE_RUN_INIT;
	struct store_measurement m[4];
	struct store *s;
	struct dash d;
	struct dash_reply rep;
	json_t *doc, *w;
	int64_t loop, attempt, run;

	assert_int_equal(mkdir_p(top), 0);
	assert_int_equal(store_open(db, &s), 0);
	l.repo = top;
	l.branch = "hotloop/x";
	l.base_commit = "aaaa";
	assert_int_equal(store_loop_begin(s, &l, &loop), 0);
	a.loop_id = loop;
	a.round = 1;
	a.verdict = VERDICT_KEEP;
	a.stage = GATE_STAGE_COMPARE;
	a.commit_sha = "bbbb";
	assert_int_equal(store_attempt_add(s, &a, &attempt), 0);
	r.loop_id = loop;
	r.attempt_id = attempt;
	r.kind = STORE_RUN_COMPARE;
	r.workload = "w\xfe";
	r.metric = "m\xff";
	assert_int_equal(store_run_add(s, &r, &run), 0);
	for (int i = 0; i < 4; i++) {
		m[i] = (struct store_measurement)STORE_MEASUREMENT_INIT;
		m[i].run_id = run;
		m[i].workload = "w\xfe";
		m[i].pair_index = i / 2;
		m[i].position = i % 2;
		m[i].side = i % 2 ? STORE_SIDE_CAND : STORE_SIDE_BASE;
		m[i].value = i % 2 ? 1.0 : 2.0;
	}
	assert_int_equal(store_measurements_add(s, m, 4), 0);
	store_close(s);

	dash_init(&d, top, NULL, NULL);
	assert_int_equal(store_open_readonly(d.db, &s), 0);
	get_from(&d, s, "/api/benchmarks", &rep);
	assert_int_equal(rep.status, 200);
	doc = json_loads(rep.body.buf, 0, NULL);
	assert_int_equal(json_array_size(jarr(doc, "workloads")), 1);
	w = json_array_get(jarr(doc, "workloads"), 0);
	assert_string_equal(jstr(w, "workload"), "w\xef\xbf\xbd");
	assert_string_equal(jstr(w, "metric"), "m\xef\xbf\xbd");
	assert_near(jnum(json_array_get(jarr(w, "points"), 0), "change_pct"), -50);
	json_decref(doc);
	dash_reply_release(&rep);
	store_close(s);
	dash_release(&d);
	free(db);
	free(top);
}

/* Last: it writes to the fixture's store. */
static void test_dashboard__attempt_with_outside_kb(void **state)
{
	struct store *w;
	struct store_attempt a = STORE_ATTEMPT_INIT;
	int64_t id;
	char *url;
	json_t *doc;

	assert_int_equal(store_open(E.d.db, &w), 0);
	a.loop_id = 2;
	a.round = 99;
	a.verdict = VERDICT_REJECT;
	a.stage = GATE_STAGE_BUILD;
	a.kb_slug = "linked-outside-entry";
	assert_int_equal(store_attempt_add(w, &a, &id), 0);
	store_close(w);
	url = xstrfmt("/api/attempts/%" PRId64, id);
	doc = get_json(url, 200);
	assert_true(json_is_null(json_object_get(doc, "kb")));
	assert_false(json_holds(doc, FX_SECRET));
	json_decref(doc);
	free(url);
}

int main(void)
{
	const char *dir = getenv("HOTLOOP_DASH_FIXTURE");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dashboard__overview),
		cmocka_unit_test(test_dashboard__loops),
		cmocka_unit_test(test_dashboard__attempts),
		cmocka_unit_test(test_dashboard__attempt),
		cmocka_unit_test(test_dashboard__gains),
		cmocka_unit_test(test_dashboard__profiles),
		cmocka_unit_test(test_dashboard__flame),
		cmocka_unit_test(test_dashboard__flame_diff),
		cmocka_unit_test(test_dashboard__top),
		cmocka_unit_test(test_dashboard__scenarios),
		cmocka_unit_test(test_dashboard__kb),
		cmocka_unit_test(test_dashboard__activity),
		cmocka_unit_test(test_dashboard__not_found),
		cmocka_unit_test(test_dashboard__malformed),
		cmocka_unit_test(test_dashboard__no_store),
		cmocka_unit_test(test_dashboard__state_made_later),
		cmocka_unit_test(test_dashboard__sanitize_text),
		cmocka_unit_test(test_dashboard__sanitize_json),
		cmocka_unit_test(test_dashboard__sanitized_answers),
		cmocka_unit_test(test_dashboard__outside_kb),
		cmocka_unit_test(test_dashboard__outside_profile),
		cmocka_unit_test(test_dashboard__outside_scenario),
		cmocka_unit_test(test_dashboard__snapshot_paths),
		cmocka_unit_test(test_dashboard__many_attempts),
		cmocka_unit_test(test_dashboard__gains_hostile_names),
		cmocka_unit_test(test_dashboard__attempt_with_outside_kb),
	};

	if (dir) {
		const char *n = getenv("HOTLOOP_DASH_ATTEMPTS");
		char *end;
		long nr = n ? strtol(n, &end, 10) : (long)FX_DEFAULT_ATTEMPTS;

		if (n && (*end || nr < 1 || nr > 10000000)) {
			fprintf(stderr, "t-dashboard: HOTLOOP_DASH_ATTEMPTS must be a count\n");
			return 2;
		}
		fx_build(dir, (size_t)nr);
		return 0;
	}
	if ((dir = getenv("HOTLOOP_DASH_ACTIVITY")))
		return fx_add_activity(dir);
	if ((dir = getenv("HOTLOOP_DASH_NEWER")))
		return fx_newer(dir);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
