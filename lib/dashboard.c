/*
 * dashboard.c: the dashboard's answers (see dashboard.h). Every list
 * comes from one query of the store, read-only; flame graphs are drawn
 * from the profiles the loop left under .hotloop/, and nothing outside
 * .hotloop/ and the knowledge base is ever read: a path component must
 * be a plain name, and a file's real path must lie under its root.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "dashboard.h"
#include "flame.h"
#include "intern.h"
#include "json.h"
#include "kb.h"
#include "profile-io.h"
#include "profile.h"
#include "report.h"
#include "stats.h"
#include "store.h"
#include "util.h"

#define PROFILE_MAX	(256u << 20)	/* a bigger profile is not drawn */
#define SCENARIO_FILE_MAX (64u << 20)
#define LIST_MAX	10000		/* rows in one answer at most */
#define LIST_DEFAULT	1000

/*
 * The knowledge base, read once and again only when its directory
 * changed (kb_add() renames each entry into it and rewrites index.md):
 * 10,000 entries are 10,000 files to parse, too many for each request.
 */
struct dash_cache {
	pthread_mutex_t lock;
	bool have;
	struct stat st;		/* of the kb directory when it was read */
	struct kb kb;
};

static struct dash_cache *cache_new(void)
{
	struct dash_cache *c = xcalloc(1, sizeof(*c));

	pthread_mutex_init(&c->lock, NULL);
	c->kb = (struct kb)KB_INIT;
	return c;
}

static void cache_free(struct dash_cache *c)
{
	if (!c)
		return;
	kb_release(&c->kb);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static int load_kb(const struct dash *d, struct kb *kb);

/* The knowledge base, with the cache's lock held until kb_done(); NULL (unlocked) with an error. */
static const struct kb *kb_get(const struct dash *d)
{
	struct dash_cache *c = d->cache;
	struct stat st;

	pthread_mutex_lock(&c->lock);
	if (stat(d->kb_dir, &st))
		memset(&st, 0, sizeof(st));
	if (!c->have || st.st_ino != c->st.st_ino || st.st_dev != c->st.st_dev ||
	    st.st_mtim.tv_sec != c->st.st_mtim.tv_sec || st.st_mtim.tv_nsec != c->st.st_mtim.tv_nsec ||
	    st.st_nlink != c->st.st_nlink) {
		kb_release(&c->kb);
		c->have = false;
		if (load_kb(d, &c->kb)) {
			kb_release(&c->kb);
			pthread_mutex_unlock(&c->lock);
			return NULL;
		}
		c->st = st;
		c->have = true;
	}
	return &c->kb;
}

static void kb_done(const struct dash *d)
{
	pthread_mutex_unlock(&d->cache->lock);
}

void dash_init(struct dash *d, const char *top, const char *db, const char *kb_dir)
{
	char *state = xstrfmt("%s/.hotloop", top);
	struct passwd *pw = getpwuid(getuid());
	char host[256];

	memset(d, 0, sizeof(*d));
	d->top = realpath(top, NULL);
	if (!d->top)
		d->top = xstrdup(top);
	d->db = db ? xstrdup(db) : xstrfmt("%s/" STORE_FILE, d->top);
	d->state = realpath(state, NULL);
	d->kb_dir = kb_dir ? xstrdup(kb_dir) : xstrfmt("%s/kb", d->top);
	free(state);
	if (pw && pw->pw_name && strlen(pw->pw_name) >= 3 && strcmp(pw->pw_name, "root"))
		d->user = xstrdup(pw->pw_name);
	if (!gethostname(host, sizeof(host)) && (host[sizeof(host) - 1] = 0, strlen(host) >= 3) &&
	    strcmp(host, "localhost"))
		d->host = xstrdup(host);
	if (getenv("HOME") && *getenv("HOME") == '/' && strlen(getenv("HOME")) > 1)
		d->home = xstrdup(getenv("HOME"));
	d->cache = cache_new();
}

void dash_release(struct dash *d)
{
	free(d->db);
	free(d->top);
	free(d->state);
	free(d->kb_dir);
	free(d->user);
	free(d->host);
	free(d->home);
	cache_free(d->cache);
	memset(d, 0, sizeof(*d));
}

void dash_reply_release(struct dash_reply *r)
{
	strbuf_release(&r->body);
}


/* ---- sanitizing ---------------------------------------------------------- */

/* A character of a path as the sanitizer reads one: a '/' after one is inside a path, not its start. */
static bool path_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '+' || c == '~' || c == '@' || c == '%' ||
	       c == '/' || c >= 0x80;
}

static bool word_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c >= 0x80;
}

/* s[i..] starts the word w, not inside a longer word of s[0..n)? */
static bool word_at(const char *s, size_t n, size_t i, const char *w)
{
	size_t len = strlen(w);

	return i + len <= n && !strncmp(s + i, w, len) && (i == 0 || !word_char((unsigned char)s[i - 1])) &&
	       (i + len == n || !word_char((unsigned char)s[i + len]));
}

/* s[0..n) with the user's and the host's names as "user" and "host". */
static void add_names(const struct dash *d, const char *s, size_t n, struct strbuf *out)
{
	size_t i = 0;

	while (i < n) {
		if (d->user && word_at(s, n, i, d->user)) {
			strbuf_addstr(out, "user");
			i += strlen(d->user);
		} else if (d->host && word_at(s, n, i, d->host)) {
			strbuf_addstr(out, "host");
			i += strlen(d->host);
		} else {
			strbuf_addch(out, s[i++]);
		}
	}
}

/* Does an absolute path start at s[i]: a '/' not inside a word, relative path or URL? */
static bool path_start(const char *s, size_t i)
{
	if (s[i] != '/')
		return false;
	if (i == 0)
		return true;
	/* file:///x: the path after "://" */
	if (i >= 3 && s[i - 1] == '/' && s[i - 2] == '/' && s[i - 3] == ':')
		return true;
	/* after ':' a path ("PATH=/a:/b"), unless it is a URL's "://" */
	if (s[i - 1] == ':')
		return s[i + 1] != '/';
	return !path_char((unsigned char)s[i - 1]);
}

/* s[i..] starts the directory dir (len > 1) as a whole component? */
static bool dir_at(const char *s, size_t i, const char *dir, size_t len)
{
	return len > 1 && !strncmp(s + i, dir, len) &&
	       (s[i + len] == '/' || !path_char((unsigned char)s[i + len]));
}

void dash_sanitize_text(const struct dash *d, const char *s, struct strbuf *out)
{
	size_t top_len = strlen(d->top), home_len = d->home ? strlen(d->home) : 0, n = strlen(s), i = 0;

	while (i < n) {
		size_t end, last;

		if (!path_start(s, i)) {
			size_t j = i + 1;

			/* up to the next place a path may start, names replaced */
			while (j < n && !path_start(s, j))
				j++;
			add_names(d, s + i, j - i, out);
			i = j;
			continue;
		}
		/*
		 * Inside the project: relative to its top. The top is matched
		 * whole first: it may hold characters a path is not read with.
		 */
		if (dir_at(s, i, d->top, top_len)) {
			size_t rel = i + top_len;

			end = rel;
			while (end < n && path_char((unsigned char)s[end]))
				end++;
			/* "top//a" is "a", not "/a" */
			while (rel < end && s[rel] == '/')
				rel++;
			if (rel < end)
				add_names(d, s + rel, end - rel, out);
			else
				strbuf_addstr(out, end > i + top_len ? "./" : ".");
			i = end;
			continue;
		}
		end = last = i;
		while (end < n && path_char((unsigned char)s[end])) {
			if (s[end] == '/')
				last = end;
			end++;
		}
		if (dir_at(s, i, d->home, home_len) && end == i + home_len) {
			/* the home directory alone */
			strbuf_addch(out, '~');
			i = end;
		} else if (last > i && s[i + 1] != '/') {
			/* "/a/b...": a path outside, named by its last part */
			strbuf_addstr(out, "...");
			add_names(d, s + last, end - last, out);
			i = end;
		} else {
			/* "/", "//", "/name": not told from text */
			strbuf_addch(out, s[i++]);
		}
	}
}

static json_t *sanitized_string(const struct dash *d, const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *v;

	dash_sanitize_text(d, s, &sb);
	v = json_text(sb.buf);
	strbuf_release(&sb);
	return v;
}

void dash_sanitize_json(const struct dash *d, json_t *doc)
{
	if (json_is_object(doc)) {
		json_t *renamed = json_object(), *v;
		const char *key;
		void *tmp;

		json_object_foreach_safe(doc, tmp, key, v) {
			struct strbuf sb = STRBUF_INIT;

			if (json_is_string(v))
				json_object_set_new(doc, key, sanitized_string(d, json_string_value(v)));
			else
				dash_sanitize_json(d, v);
			/* a key that changes moves after the walk: deleting frees the key */
			dash_sanitize_text(d, key, &sb);
			if (strcmp(sb.buf, key)) {
				json_object_set(renamed, sb.buf, json_object_get(doc, key));
				json_object_del(doc, key);
			}
			strbuf_release(&sb);
		}
		json_object_update(doc, renamed);
		json_decref(renamed);
	} else if (json_is_array(doc)) {
		size_t i;
		json_t *v;

		json_array_foreach(doc, i, v) {
			if (json_is_string(v))
				json_array_set_new(doc, i, sanitized_string(d, json_string_value(v)));
			else
				dash_sanitize_json(d, v);
		}
	}
}

/* ---- replies ------------------------------------------------------------- */

static void reply_json(const struct dash *d, struct dash_reply *r, int status, json_t *doc)
{
	char *text;

	if (d->sanitize)
		dash_sanitize_json(d, doc);
	text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15));
	r->status = status;
	r->type = DASH_JSON;
	strbuf_reset(&r->body);
	strbuf_addstr(&r->body, text ? text : "null");
	free(text);
	json_decref(doc);
}

static void reply_error(const struct dash *d, struct dash_reply *r, int status, const char *msg)
{
	reply_json(d, r, status, json_pack("{s:o}", "error", json_text(msg)));
}

/* A lib/ call failed: its message, as the error routine got it. */
static void reply_failed(const struct dash *d, struct dash_reply *r)
{
	reply_error(d, r, 500, *last_error() ? last_error() : "the request failed");
}

/* ---- files under the served directories ---------------------------------- */

/*
 * The state directory's real path, as found at the start or made since
 * (the first loop makes it while the server runs); NULL: none yet.
 */
static char *state_root(const struct dash *d)
{
	char *path, *real;

	if (d->state)
		return xstrdup(d->state);
	path = xstrfmt("%s/.hotloop", d->top);
	real = realpath(path, NULL);
	free(path);
	return real;
}

/* 'path' resolved, when it lies under 'root' (both real paths); NULL and why in *why. */
static char *under(const char *root, const char *path, const char **why)
{
	char *real;
	size_t n;

	*why = "not found";
	if (!root || !path)
		return NULL;
	real = realpath(path, NULL);
	if (!real)
		return NULL;
	n = strlen(root);
	if (strncmp(real, root, n) || real[n] != '/') {
		*why = "outside the served directories";
		free(real);
		return NULL;
	}
	return real;
}

/*
 * The knowledge base, as kb_load() reads it, without the entries that lie
 * outside it: an entry directory, report.md or diff.md that is a symlink
 * to elsewhere is not the knowledge base's to show. 0, or -1 with an error.
 */
static int load_kb(const struct dash *d, struct kb *kb)
{
	static const char *const files[] = { "report.md", "diff.md" };
	char *root;
	size_t kept = 0;

	if (kb_load(d->kb_dir, kb))
		return -1;
	root = realpath(d->kb_dir, NULL);
	for (size_t i = 0; i < kb->nr; i++) {
		struct kb_entry *e = &kb->entries[i];
		const char *why;
		char *real = under(root, e->dir, &why);
		bool inside = real != NULL;

		for (size_t k = 0; inside && k < ARRAY_SIZE(files); k++) {
			char *path = xstrfmt("%s/%s", real, files[k]), *r;
			struct stat st;

			if (!lstat(path, &st)) {
				r = under(root, path, &why);
				inside = r != NULL;
				free(r);
			}
			free(path);
		}
		free(real);
		if (inside)
			kb->entries[kept++] = *e;
		else
			kb_entry_release(e);
	}
	kb->nr = kept;
	free(root);
	return 0;
}

/* ---- the store ----------------------------------------------------------- */

/* A column as JSON; a *_json column parsed (null when it does not parse). */
static json_t *column_json(sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT: {
		double v = sqlite3_column_double(st, i);

		return isfinite(v) ? json_real(v) : json_null();
	}
	case SQLITE_TEXT: {
		const char *name = sqlite3_column_name(st, i), *text = (const char *)sqlite3_column_text(st, i);
		size_t n = strlen(name);

		if (n > 5 && !strcmp(name + n - 5, "_json")) {
			json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);

			return v ? v : json_null();
		}
		return json_text(text);
	}
	default:
		return json_null();
	}
}

static json_t *row_json(sqlite3_stmt *st)
{
	json_t *o = json_object();

	for (int i = 0; i < sqlite3_column_count(st); i++) {
		const char *name = sqlite3_column_name(st, i);
		size_t n = strlen(name);
		char key[64];

		if (n > 5 && n < sizeof(key) && !strcmp(name + n - 5, "_json")) {
			memcpy(key, name, n - 5);
			key[n - 5] = 0;
			json_object_set_new(o, key, column_json(st, i));
		} else {
			json_object_set_new(o, name, column_json(st, i));
		}
	}
	return o;
}

/* A statement with its integer arguments bound (?1, ?2...); NULL with an error. */
static sqlite3_stmt *prepare(struct store *s, const char *sql, size_t nargs, const int64_t *args)
{
	sqlite3 *db = store_sqlite(s);
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		error("cannot read '%s': %s", store_path(s), sqlite3_errmsg(db));
		return NULL;
	}
	for (size_t i = 0; i < nargs; i++)
		sqlite3_bind_int64(st, (int)i + 1, args[i]);
	return st;
}

/* Every row of a query, as an array of objects; NULL with an error. */
static json_t *rows(struct store *s, const char *sql, size_t nargs, const int64_t *args)
{
	sqlite3_stmt *st = prepare(s, sql, nargs, args);
	json_t *a;
	int rc;

	if (!st)
		return NULL;
	a = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(a, row_json(st));
	if (rc != SQLITE_DONE) {
		error("cannot read '%s': %s", store_path(s), sqlite3_errmsg(store_sqlite(s)));
		json_decref(a);
		a = NULL;
	}
	sqlite3_finalize(st);
	return a;
}

/* One integer from a query with its arguments (0 when it gives none); -1 with an error. */
static int one_int(struct store *s, const char *sql, size_t nargs, const int64_t *args, int64_t *v)
{
	sqlite3_stmt *st = prepare(s, sql, nargs, args);
	int rc, ret = 0;

	*v = 0;
	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		ret = error("cannot read '%s': %s", store_path(s), sqlite3_errmsg(store_sqlite(s)));
	sqlite3_finalize(st);
	return ret;
}

#define ATTEMPT_COLUMNS \
	"a.id, a.loop_id, a.round, a.lens, a.function, a.hypothesis, a.expected_gain_pct, " \
	"a.verdict, a.reasons_json, a.stage, a.change_pct, a.ci_low_pct, a.ci_high_pct, " \
	"a.commit_sha, a.kb_slug, a.agent_exit_status, a.agent_seconds, a.started_at, " \
	"a.finished_at, a.commit_sha IS NOT NULL AS kept"

#define LOOP_COLUMNS \
	"l.id, l.started_at, l.updated_at, l.finished_at, l.branch, l.base_commit, l.best_commit, " \
	"l.status, l.stop_reason, l.rounds_planned, " \
	"(SELECT count(*) FROM attempts WHERE loop_id = l.id) AS attempts, " \
	"(SELECT count(*) FROM attempts WHERE loop_id = l.id AND commit_sha IS NOT NULL) AS kept"

/*
 * Per workload of one compare run: the median of each side's measured
 * runs (warm-ups aside), their peak RSS, and the candidate's change.
 */
struct side_values {
	double *v;
	size_t nr, alloc;
	int64_t rss_max;
};

struct workload_sides {
	char *name;
	struct side_values base, cand;
};

static void side_add(struct side_values *s, double v, int64_t rss)
{
	if (isfinite(v)) {
		ALLOC_GROW(s->v, s->nr + 1, s->alloc);
		s->v[s->nr++] = v;
	}
	if (rss > s->rss_max)
		s->rss_max = rss;
}

static double side_median(const struct side_values *s)
{
	double m;

	return s->nr && !stats_median(s->v, s->nr, &m) ? m : NAN;
}

static char *dup_text(const unsigned char *s)
{
	return s ? xstrdup((const char *)s) : NULL;
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* ---- /api/overview, /api/loops ------------------------------------------- */

static json_t *loops_json(struct store *s, size_t limit)
{
	int64_t lim = (int64_t)limit;

	return rows(s, "SELECT " LOOP_COLUMNS " FROM loops l ORDER BY l.id DESC LIMIT ?1", 1, &lim);
}

/*
 * The verdict's estimate and interval for each guard workload of each
 * keep, from its compare run's summary (the "guards" of verdict.c's JSON).
 */
static int guard_intervals(struct store *s, json_t *series)
{
	static const char *const keys[][2] = { { "change_pct", "estimate_pct" },
		{ "ci_low_pct", "ci_low_pct" }, { "ci_high_pct", "ci_high_pct" } };
	/* each guard point's run, by its id: only its guards parsed, and only from a valid summary */
	sqlite3_stmt *st = prepare(s, "SELECT CASE WHEN json_valid(summary_json) THEN "
				   "json_extract(summary_json, '$.guards') END FROM runs WHERE id = ?1", 0, NULL);
	json_t *se, *p;
	size_t i, j;
	int rc, ret = 0;

	if (!st)
		return -1;
	json_array_foreach(series, i, se) {
		const char *w = json_string_value(json_object_get(se, "workload"));

		json_array_foreach(json_object_get(se, "points"), j, p) {
			json_t *guards = NULL, *g;
			size_t k;

			if (json_is_true(json_object_get(p, "primary")))
				continue;
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, json_integer_value(json_object_get(p, "run_id")));
			rc = sqlite3_step(st);
			if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT)
				guards = json_loads((const char *)sqlite3_column_text(st, 0), JSON_DECODE_ANY, NULL);
			else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
				ret = error("cannot read '%s': %s", store_path(s), sqlite3_errmsg(store_sqlite(s)));
				goto out;
			}
			json_array_foreach(guards, k, g) {
				const char *gw = json_string_value(json_object_get(g, "workload"));

				if (!gw || !w || strcmp(gw, w))
					continue;
				for (size_t m = 0; m < 3; m++) {
					json_t *v = json_object_get(g, keys[m][0]);

					if (json_is_number(v))
						json_object_set(p, keys[m][1], v);
				}
			}
			json_decref(guards);
		}
	}
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * Each workload's gain over the kept changes, in the order they were
 * kept: a point per kept attempt with its change (median against median
 * of the pairs that decided it) and the gain so far (their product).
 * The kept attempts lead the join (CROSS JOIN keeps that order): led by
 * the measurements, it would look up the run and attempt of every one.
 */
static json_t *gains_json(struct store *s)
{
	static const char sql[] =
		"SELECT a.id, a.loop_id, a.round, a.finished_at, a.commit_sha, a.function, "
		"  a.change_pct, a.ci_low_pct, a.ci_high_pct, r.id, r.metric, r.workload, "
		"  m.workload, m.side, m.value, m.max_rss_kib "
		"FROM attempts a CROSS JOIN runs r ON r.attempt_id = a.id AND r.kind = 'compare' "
		"CROSS JOIN measurements m ON m.run_id = r.id AND m.warmup = 0 AND m.side IS NOT NULL "
		"WHERE a.commit_sha IS NOT NULL ORDER BY a.id, m.workload, m.id";
	sqlite3_stmt *st = prepare(s, sql, 0, NULL);
	json_t *by_name = json_object(), *out = json_array();
	struct workload_sides *w = NULL;
	size_t nr = 0, alloc = 0;
	int64_t attempt = -1;
	int rc;
	/* the attempt being read */
	struct {
		int64_t id, loop, round, run;
		double at, change, lo, hi;
		char *commit, *function, *metric, *primary;
	} cur = { 0 };

	if (!st)
		goto fail;
	for (;;) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW || sqlite3_column_int64(st, 0) != attempt) {
			/* the attempt read so far becomes one point per workload */
			for (size_t i = 0; i < nr; i++) {
				/* a name that is not UTF-8 is no key: its JSON string is */
				json_t *name = json_text(w[i].name), *points, *p;
				const char *key = json_string_value(name);
				json_t *series = json_object_get(by_name, key);
				double b = side_median(&w[i].base), c = side_median(&w[i].cand);
				double change = b > 0 && isfinite(c) ? 100.0 * (c / b - 1) : NAN;
				double total;
				bool primary = cur.primary && !strcmp(cur.primary, w[i].name);

				if (!series) {
					series = json_pack("{s:O, s:o, s:[], s:f}", "workload", name,
							   "metric", json_text(cur.metric), "points", "total_factor", 1.0);
					json_object_set(by_name, key, series);
					json_array_append_new(out, series);
				}
				json_decref(name);
				points = json_object_get(series, "points");
				total = json_real_value(json_object_get(series, "total_factor"));
				if (isfinite(change))
					total *= 1 + change / 100;
				json_object_set_new(series, "total_factor", json_real(total));
				p = json_object();
				json_object_set_new(p, "attempt_id", json_integer(cur.id));
				json_object_set_new(p, "loop_id", json_integer(cur.loop));
				json_object_set_new(p, "round", json_integer(cur.round));
				json_object_set_new(p, "run_id", json_integer(cur.run));
				json_object_set_new(p, "at", real_or_null(cur.at));
				json_object_set_new(p, "commit", json_text(cur.commit));
				json_object_set_new(p, "function", json_text(cur.function));
				json_object_set_new(p, "primary", json_boolean(primary));
				json_object_set_new(p, "base_median", real_or_null(b));
				json_object_set_new(p, "cand_median", real_or_null(c));
				json_object_set_new(p, "base_runs", json_integer((json_int_t)w[i].base.nr));
				json_object_set_new(p, "cand_runs", json_integer((json_int_t)w[i].cand.nr));
				json_object_set_new(p, "change_pct", real_or_null(change));
				/* the verdict's interval of the primary; a guard's comes from the run's summary */
				json_object_set_new(p, "estimate_pct", real_or_null(primary ? cur.change : NAN));
				json_object_set_new(p, "ci_low_pct", real_or_null(primary ? cur.lo : NAN));
				json_object_set_new(p, "ci_high_pct", real_or_null(primary ? cur.hi : NAN));
				json_object_set_new(p, "total_pct", real_or_null(100.0 * (total - 1)));
				json_object_set_new(p, "base_rss_kib", w[i].base.rss_max > 0 ?
						    json_integer(w[i].base.rss_max) : json_null());
				json_object_set_new(p, "cand_rss_kib", w[i].cand.rss_max > 0 ?
						    json_integer(w[i].cand.rss_max) : json_null());
				json_array_append_new(points, p);
				free(w[i].name);
				free(w[i].base.v);
				free(w[i].cand.v);
			}
			nr = 0;
			free(cur.commit);
			free(cur.function);
			free(cur.metric);
			free(cur.primary);
			memset(&cur, 0, sizeof(cur));
			if (rc != SQLITE_ROW)
				break;
			attempt = cur.id = sqlite3_column_int64(st, 0);
			cur.loop = sqlite3_column_int64(st, 1);
			cur.round = sqlite3_column_int64(st, 2);
			cur.at = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
			cur.commit = dup_text(sqlite3_column_text(st, 4));
			cur.function = dup_text(sqlite3_column_text(st, 5));
			cur.change = sqlite3_column_type(st, 6) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 6);
			cur.lo = sqlite3_column_type(st, 7) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 7);
			cur.hi = sqlite3_column_type(st, 8) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 8);
			cur.run = sqlite3_column_int64(st, 9);
			cur.metric = dup_text(sqlite3_column_text(st, 10));
			cur.primary = dup_text(sqlite3_column_text(st, 11));
		}
		{
			const char *name = (const char *)sqlite3_column_text(st, 12);
			const char *side = (const char *)sqlite3_column_text(st, 13);
			double v = sqlite3_column_type(st, 14) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 14);
			int64_t rss = sqlite3_column_type(st, 15) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 15);

			if (!name || !side)
				continue;
			if (!nr || strcmp(w[nr - 1].name, name)) {
				ALLOC_GROW(w, nr + 1, alloc);
				memset(&w[nr], 0, sizeof(w[nr]));
				w[nr++].name = xstrdup(name);
			}
			side_add(!strcmp(side, "base") ? &w[nr - 1].base : &w[nr - 1].cand, v, rss);
		}
	}
	if (rc != SQLITE_DONE) {
		error("cannot read '%s': %s", store_path(s), sqlite3_errmsg(store_sqlite(s)));
		goto fail;
	}
	sqlite3_finalize(st);
	free(w);
	json_decref(by_name);
	if (guard_intervals(s, out))
		goto fail_out;
	return out;
fail_out:
	json_decref(out);
	return NULL;
fail:
	sqlite3_finalize(st);
	free(w);
	json_decref(by_name);
	json_decref(out);
	return NULL;
}

/* The newest profile of each workload (the loop's best so far), newest first. */
static json_t *latest_profiles(struct store *s)
{
	return rows(s, "SELECT r.id, r.loop_id, r.kind, r.commit_sha, r.workload, r.finished_at, "
		       "  r.summary_json FROM runs r "
		       "WHERE r.profile_path IS NOT NULL AND r.id IN "
		       "  (SELECT max(id) FROM runs WHERE profile_path IS NOT NULL GROUP BY workload) "
		       "ORDER BY r.id DESC", 0, NULL);
}

static size_t count_scenario_runs(const struct dash *d);

static json_t *overview(const struct dash *d, struct store *s)
{
	json_t *doc = json_object(), *v;
	const struct kb *kb;
	int64_t last = 0;

	if (s) {
		struct store_counts c;

		if (store_counts(s, &c) || one_int(s, "SELECT max(id) FROM activity", 0, NULL, &last))
			goto fail;
		json_object_set_new(doc, "store", json_pack("{s:i, s:o}", "version", store_version(s),
							    "counts", store_counts_json(&c)));
		if (!(v = loops_json(s, 50)))
			goto fail;
		json_object_set_new(doc, "loops", v);
		if (!(v = gains_json(s)))
			goto fail;
		json_object_set_new(doc, "gains", v);
		if (!(v = latest_profiles(s)))
			goto fail;
		json_object_set_new(doc, "profiles", v);
		v = rows(s, "SELECT id, at, loop_id, level, kind, message FROM activity "
			    "ORDER BY id DESC LIMIT 20", 0, NULL);
		if (!v)
			goto fail;
		json_object_set_new(doc, "activity", v);
	} else {
		json_object_set_new(doc, "store", json_null());
		json_object_set_new(doc, "loops", json_array());
		json_object_set_new(doc, "gains", json_array());
		json_object_set_new(doc, "profiles", json_array());
		json_object_set_new(doc, "activity", json_array());
	}
	json_object_set_new(doc, "last_activity_id", json_integer(last));
	kb = kb_get(d);
	json_object_set_new(doc, "kb_entries", json_integer(kb ? (json_int_t)kb->nr : 0));
	if (kb)
		kb_done(d);
	json_object_set_new(doc, "scenario_runs", json_integer((json_int_t)count_scenario_runs(d)));
	return doc;
fail:
	json_decref(doc);
	return NULL;
}

/* ---- /api/attempts ------------------------------------------------------- */

/* A query parameter as a number in [lo, hi]; 'def' when absent; -1: malformed. */
static int param_int(dash_param_fn param, void *ctx, const char *key, int64_t lo, int64_t hi,
		     int64_t def, int64_t *out)
{
	const char *v = param ? param(ctx, key) : NULL;
	char *end;
	long long n;

	*out = def;
	if (!v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (!*v || *end || errno || n < lo || n > hi)
		return error("query parameter '%s' must be a whole number from %" PRId64 " to %" PRId64,
			     key, lo, hi);
	*out = n;
	return 0;
}

static json_t *attempts(struct store *s, dash_param_fn param, void *ctx, int *status)
{
	int64_t args[3];
	json_t *list, *doc;
	int64_t total;

	*status = 400;
	if (param_int(param, ctx, "loop", 0, INT64_MAX, 0, &args[0]) ||
	    param_int(param, ctx, "before", 0, INT64_MAX, INT64_MAX, &args[1]) ||
	    param_int(param, ctx, "limit", 1, LIST_MAX, LIST_DEFAULT, &args[2]))
		return NULL;
	*status = 500;
	/* the newest 'limit' before 'before', then in the order they ran */
	list = rows(s, "SELECT * FROM (SELECT " ATTEMPT_COLUMNS " FROM attempts a "
		       "WHERE (?1 = 0 OR a.loop_id = ?1) AND a.id < ?2 ORDER BY a.id DESC LIMIT ?3) "
		       "ORDER BY id", 3, args);
	if (!list)
		return NULL;
	/* all of them, or all of the loop's */
	if (one_int(s, "SELECT count(*) FROM attempts WHERE ?1 = 0 OR loop_id = ?1", 1, args, &total)) {
		json_decref(list);
		return NULL;
	}
	doc = json_pack("{s:o, s:I}", "attempts", list, "total", (json_int_t)total);
	return doc;
}

/* Every measured pair of one compare run, per workload, in the order they ran. */
static json_t *pairs_json(struct store *s, int64_t run)
{
	json_t *m = rows(s, "SELECT workload, pair_index, side, position, warmup, wall_s, user_s, "
			    "sys_s, cpu_s, max_rss_kib, instructions, exit_status, signal, value "
			    "FROM measurements WHERE run_id = ?1 ORDER BY id", 1, &run);
	json_t *by = json_object(), *out = json_array(), *row;
	size_t i;

	if (!m) {
		json_decref(by);
		json_decref(out);
		return NULL;
	}
	json_array_foreach(m, i, row) {
		const char *w = json_string_value(json_object_get(row, "workload"));
		json_t *series;

		if (!w)
			continue;
		series = json_object_get(by, w);
		if (!series) {
			series = json_pack("{s:s, s:[], s:[]}", "workload", w, "pairs", "warmups");
			json_object_set_new(by, w, series);
			json_array_append(out, series);
		}
		if (json_is_true(json_object_get(row, "warmup")) || json_integer_value(json_object_get(row, "warmup"))) {
			json_array_append(json_object_get(series, "warmups"), row);
		} else {
			json_t *pairs = json_object_get(series, "pairs");
			json_int_t k = json_integer_value(json_object_get(row, "pair_index"));
			const char *side = json_string_value(json_object_get(row, "side"));
			json_t *pair = NULL, *p;
			size_t j;

			json_array_foreach(pairs, j, p)
				if (json_integer_value(json_object_get(p, "pair")) == k)
					pair = p;
			if (!pair) {
				pair = json_pack("{s:I, s:n, s:n}", "pair", k, "base", "cand");
				json_array_append_new(pairs, pair);
			}
			if (side)
				json_object_set(pair, side, row);
		}
	}
	json_decref(m);
	json_decref(by);
	return out;
}

static void reply_attempt(const struct dash *d, struct store *s, int64_t id, struct dash_reply *out)
{
	json_t *doc = NULL, *list, *runs, *run;
	const struct kb *kb;
	const char *slug;
	size_t i;

	list = rows(s, "SELECT " ATTEMPT_COLUMNS ", a.diff FROM attempts a WHERE a.id = ?1", 1, &id);
	if (!list)
		goto fail;
	if (!json_array_size(list)) {
		json_decref(list);
		reply_error(d, out, 404, "no such attempt");
		return;
	}
	doc = json_object();
	json_object_set(doc, "attempt", json_array_get(list, 0));
	json_decref(list);
	runs = rows(s, "SELECT id, kind, commit_sha, workload, metric, started_at, finished_at, "
		       "summary_json FROM runs WHERE attempt_id = ?1 ORDER BY id", 1, &id);
	if (!runs)
		goto fail;
	json_array_foreach(runs, i, run) {
		json_t *pairs = pairs_json(s, json_integer_value(json_object_get(run, "id")));

		if (!pairs) {
			json_decref(runs);
			goto fail;
		}
		json_object_set_new(run, "workloads", pairs);
	}
	json_object_set_new(doc, "runs", runs);
	/* its report in the knowledge base, when the entry is there */
	slug = json_string_value(json_object_get(json_object_get(doc, "attempt"), "kb_slug"));
	json_object_set_new(doc, "kb", json_null());
	if (slug && (kb = kb_get(d))) {
		const struct kb_entry *e = kb_lookup(kb, slug);

		if (e) {
			struct strbuf report = STRBUF_INIT;
			char *path = xstrfmt("%s/report.md", e->dir);
			json_t *ej = kb_entry_to_json(e, NULL);

			if (!read_file(&report, path, KB_REPORT_MAX))
				json_object_set_new(ej, "report_md", json_text(report.buf));
			json_object_set_new(doc, "kb", ej);
			strbuf_release(&report);
			free(path);
		}
		kb_done(d);
	}
	reply_json(d, out, 200, doc);
	return;
fail:
	json_decref(doc);
	reply_failed(d, out);
}

/* ---- /api/benchmarks ----------------------------------------------------- */

static json_t *benchmarks(struct store *s)
{
	json_t *g = gains_json(s), *baselines;

	if (!g)
		return NULL;
	/* the measured medians of the start, per workload: the first compare's base side */
	baselines = rows(s, "SELECT r.workload AS primary_workload, l.id AS loop_id, l.base_commit "
			    "FROM loops l LEFT JOIN runs r ON r.loop_id = l.id AND r.kind = 'compare' "
			    "GROUP BY l.id ORDER BY l.id", 0, NULL);
	if (!baselines) {
		json_decref(g);
		return NULL;
	}
	return json_pack("{s:o, s:o}", "workloads", g, "loops", baselines);
}

/* ---- /api/profiles ------------------------------------------------------- */

static json_t *profiles(struct store *s)
{
	json_t *all = rows(s, "SELECT r.id, r.loop_id, r.kind, r.commit_sha, r.workload, "
			      "r.finished_at, r.summary_json FROM runs r WHERE r.profile_path IS NOT NULL "
			      "ORDER BY r.id DESC LIMIT 1000", 0, NULL), *latest;

	if (!all)
		return NULL;
	if (!(latest = latest_profiles(s))) {
		json_decref(all);
		return NULL;
	}
	return json_pack("{s:o, s:o}", "latest", latest, "profiles", all);
}

/* The profile of run 'id', read; 1 found, 0 not (reply set), -1 error. */
static int load_profile(const struct dash *d, struct store *s, int64_t id, struct profile *p,
			char **label, struct dash_reply *out)
{
	struct store_run r;
	const char *why;
	char *path, *state;
	struct stat st;
	int found = store_run_get(s, id, &r);

	if (found < 0)
		return -1;
	if (!found || !r.profile_path) {
		if (found)
			store_run_release(&r);
		reply_error(d, out, 404, "no such profile");
		return 0;
	}
	state = state_root(d);
	path = under(state, r.profile_path, &why);
	free(state);
	if (!path || stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > PROFILE_MAX) {
		reply_error(d, out, 404, path ? "the profile is not a file hotloop can draw" : why);
		free(path);
		store_run_release(&r);
		return 0;
	}
	*label = xstrfmt("%s at %.12s (run %" PRId64 ")", r.workload ? r.workload : "?",
			 r.commit_sha ? r.commit_sha : "?", id);
	store_run_release(&r);
	if (profile_read_any(p, path)) {
		free(path);
		free(*label);
		*label = NULL;
		return -1;
	}
	free(path);
	return 1;
}

static void reply_flame(const struct dash *d, struct store *s, int64_t id, int64_t base_id,
			struct dash_reply *out)
{
	struct profile p, base;
	struct flame_options o = FLAME_OPTIONS_INIT;
	char *label = NULL, *base_label = NULL;
	int found;

	profile_init(&p);
	profile_init(&base);
	found = load_profile(d, s, id, &p, &label, out);
	if (found > 0 && base_id)
		found = load_profile(d, s, base_id, &base, &base_label, out);
	if (found > 0) {
		struct strbuf svg = STRBUF_INIT;

		o.name = label;
		o.base_name = base_label;
		if (flame_render(&p, base_id ? &base : NULL, &o, &svg)) {
			found = -1;
		} else {
			out->status = 200;
			out->type = DASH_SVG;
			strbuf_reset(&out->body);
			if (d->sanitize)
				dash_sanitize_text(d, svg.buf, &out->body);
			else
				strbuf_add(&out->body, svg.buf, svg.len);
		}
		strbuf_release(&svg);
	}
	if (found < 0)
		reply_failed(d, out);
	free(label);
	free(base_label);
	profile_release(&p);
	profile_release(&base);
}

static void reply_top(const struct dash *d, struct store *s, int64_t id, dash_param_fn param,
		      void *ctx, struct dash_reply *out)
{
	struct profile p;
	struct report r = REPORT_INIT;
	char *label = NULL;
	int64_t top;
	int found, idx;

	if (param_int(param, ctx, "n", 1, 1000, 30, &top)) {
		reply_error(d, out, 400, last_error());
		return;
	}
	profile_init(&p);
	found = load_profile(d, s, id, &p, &label, out);
	if (found > 0) {
		idx = profile_pick_sample_type(&p, NULL);
		if (idx < 0 || report_build(&r, &p, idx, REPORT_BY_FUNCTION)) {
			found = -1;
		} else {
			json_t *doc;

			report_sort(&r, REPORT_SORT_SELF);
			doc = report_to_json(&p, &r, (size_t)top, REPORT_SORT_SELF);
			json_object_set_new(doc, "run_id", json_integer(id));
			json_object_set_new(doc, "label", json_text(label));
			reply_json(d, out, 200, doc);
		}
		report_release(&r);
	}
	if (found < 0)
		reply_failed(d, out);
	free(label);
	profile_release(&p);
}

/* ---- /api/scenarios ------------------------------------------------------ */

/* A path component that names a file or directory plainly: no "..", "/", NUL or dot first. */
static bool plain_name(const char *s, size_t n)
{
	if (!n || n > NAME_MAX || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || c == '+' || c == '@'))
			return false;
	}
	return true;
}

static int name_cmp_desc(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/* The plain names in dir, newest (greatest) first; the caller frees them. */
static char **list_dir(const char *dir, size_t *nr)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t alloc = 0;

	*nr = 0;
	if (!dh)
		return NULL;
	while ((de = readdir(dh)))
		if (plain_name(de->d_name, strlen(de->d_name))) {
			ALLOC_GROW(names, *nr + 1, alloc);
			names[(*nr)++] = xstrdup(de->d_name);
		}
	closedir(dh);
	if (*nr)
		qsort(names, *nr, sizeof(*names), name_cmp_desc);
	return names;
}

static void free_names(char **names, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
}

/* A JSON file under the state directory, read; NULL when it is missing or not JSON. */
static json_t *state_json(const char *state, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	const char *why;
	char *real = under(state, path, &why);
	json_t *v = NULL;

	if (real && !read_file(&sb, real, SCENARIO_FILE_MAX))
		v = json_loadb(sb.buf, sb.len, 0, NULL);
	strbuf_release(&sb);
	free(real);
	return v;
}

#define SCENARIO_RUNS_MAX 500

/* The plain names in dir that lie under the state directory, as list_dir() gives them. */
static char **list_state_dir(const char *state, const char *dir, size_t *nr)
{
	const char *why;
	char **names, *real = under(state, dir, &why);
	size_t kept = 0;

	*nr = 0;
	if (!real)
		return NULL;
	names = list_dir(real, nr);
	for (size_t i = 0; i < *nr; i++) {
		char *path = xstrfmt("%s/%s", real, names[i]), *r = under(state, path, &why);

		if (r)
			names[kept++] = names[i];
		else
			free(names[i]);
		free(r);
		free(path);
	}
	*nr = kept;
	free(real);
	return names;
}

static json_t *scenarios(const struct dash *d)
{
	json_t *out = json_array();
	char *state = state_root(d), *root = state ? xstrfmt("%s/scenarios", state) : NULL, **names;
	size_t nr;

	/* a scenario or a run linked from outside .hotloop/ is not listed */
	names = root ? list_state_dir(state, root, &nr) : (nr = 0, NULL);
	for (size_t i = 0; i < nr && json_array_size(out) < SCENARIO_RUNS_MAX; i++) {
		char *dir = xstrfmt("%s/%s", root, names[i]), **stamps;
		size_t ns;

		stamps = list_state_dir(state, dir, &ns);
		for (size_t j = 0; j < ns && json_array_size(out) < SCENARIO_RUNS_MAX; j++) {
			char *path = xstrfmt("%s/%s/summary.json", dir, stamps[j]);
			json_t *sum = state_json(state, path), *phases = json_array(), *p;
			size_t k;

			json_array_foreach(json_object_get(sum, "phases"), k, p)
				json_array_append_new(phases, json_pack("{s:O?, s:O?, s:O?, s:O?}",
					"name", json_object_get(p, "name"), "start_s", json_object_get(p, "start_s"),
					"end_s", json_object_get(p, "end_s"),
					"cpu_pct", json_object_get(p, "cpu_pct")));
			json_array_append_new(out, json_pack("{s:s, s:s, s:O?, s:O?, s:O?, s:o}",
				"scenario", names[i], "run", stamps[j],
				"outcome", json_object_get(sum, "outcome"),
				"error", json_object_get(sum, "error"),
				"leak", json_object_get(sum, "leak"), "phases", phases));
			json_decref(sum);
			free(path);
		}
		free_names(stamps, ns);
		free(dir);
	}
	free_names(names, nr);
	free(root);
	free(state);
	return json_pack("{s:o}", "runs", out);
}

/* The scenario runs there are: their directories, nothing read. */
static size_t count_scenario_runs(const struct dash *d)
{
	char *state = state_root(d), *root = state ? xstrfmt("%s/scenarios", state) : NULL, **names;
	size_t nr, total = 0;

	/* as scenarios() lists them: not those linked from outside */
	names = root ? list_state_dir(state, root, &nr) : (nr = 0, NULL);
	for (size_t i = 0; i < nr; i++) {
		char *dir = xstrfmt("%s/%s", root, names[i]), **runs;
		size_t n;

		runs = list_state_dir(state, dir, &n);
		total += n;
		free_names(runs, n);
		free(dir);
	}
	free_names(names, nr);
	free(root);
	free(state);
	return total;
}

static uint64_t hash_stat(uint64_t h, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return hash_u64(h, 0);
	h = hash_u64(h, (uint64_t)st.st_ino);
	h = hash_u64(h, (uint64_t)st.st_nlink);
	h = hash_u64(h, (uint64_t)st.st_mtim.tv_sec);
	h = hash_u64(h, (uint64_t)st.st_mtim.tv_nsec);
	h = hash_u64(h, (uint64_t)st.st_ctim.tv_sec);
	return hash_u64(h, (uint64_t)st.st_ctim.tv_nsec);
}

uint64_t dash_files_stamp(const struct dash *d)
{
	char *state = state_root(d), *root = state ? xstrfmt("%s/scenarios", state) : NULL, **names;
	uint64_t h = hash_stat(HASH_SEED, d->kb_dir);
	size_t nr;

	if (root) {
		h = hash_stat(h, root);
		names = list_state_dir(state, root, &nr);
		for (size_t i = 0; i < nr; i++) {
			char *dir = xstrfmt("%s/%s", root, names[i]);

			h = hash_stat(h, dir);
			free(dir);
		}
		free_names(names, nr);
	}
	free(root);
	free(state);
	return h;
}

static void reply_scenario(const struct dash *d, const char *name, const char *run,
			   struct dash_reply *out)
{
	char *state = state_root(d);
	char *dir = state ? xstrfmt("%s/scenarios/%s/%s", state, name, run) : NULL;
	char *sp = dir ? xstrfmt("%s/summary.json", dir) : NULL;
	char *tp = dir ? xstrfmt("%s/timeline.json", dir) : NULL;
	json_t *sum = sp ? state_json(state, sp) : NULL;

	if (!sum) {
		reply_error(d, out, 404, "no such scenario run");
	} else {
		json_t *tl = state_json(state, tp);

		reply_json(d, out, 200, json_pack("{s:s, s:s, s:o, s:o}", "scenario", name, "run", run,
						  "summary", sum, "timeline", tl ? tl : json_null()));
	}
	free(dir);
	free(sp);
	free(tp);
	free(state);
}

/* ---- /api/kb ------------------------------------------------------------- */

/* The query's words, split at white space, into words[] (at most max); how many. */
static size_t split_words(char *q, const char **words, size_t max)
{
	size_t n = 0;

	while (*q && n < max) {
		while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
			*q++ = 0;
		if (!*q)
			break;
		words[n++] = q;
		while (*q && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n')
			q++;
	}
	return n;
}

static void reply_kb(const struct dash *d, const char *slug, dash_param_fn param, void *ctx,
		     struct dash_reply *out)
{
	const struct kb *kb = kb_get(d);
	json_t *list;

	if (!kb) {
		reply_failed(d, out);
		return;
	}
	if (slug) {
		const struct kb_entry *e = kb_lookup(kb, slug);
		char *root = realpath(d->kb_dir, NULL), *real;
		const char *why = "no such kb entry";

		real = e ? under(root, e->dir, &why) : NULL;
		if (!real) {
			reply_error(d, out, 404, e ? why : "no such kb entry");
		} else {
			struct strbuf diff = STRBUF_INIT, report = STRBUF_INIT;
			char *rp = xstrfmt("%s/report.md", real);
			json_t *doc;

			if (kb_read_diff(e, &diff))
				strbuf_reset(&diff);
			doc = kb_entry_to_json(e, diff.buf);
			if (!read_file(&report, rp, KB_REPORT_MAX))
				json_object_set_new(doc, "report_md", json_text(report.buf));
			reply_json(d, out, 200, doc);
			strbuf_release(&diff);
			strbuf_release(&report);
			free(rp);
		}
		free(real);
		free(root);
	} else {
		const char *q = param ? param(ctx, "q") : NULL;
		char *copy = xstrdup(q ? q : "");
		const char *words[16];
		size_t nw = split_words(copy, words, 16), n;
		const struct kb_entry **hits = xcalloc(kb->nr + 1, sizeof(*hits));

		n = kb_find(kb, NULL, words, nw, hits, kb->nr);
		list = json_array();
		for (size_t i = 0; i < n && i < kb->nr; i++)
			json_array_append_new(list, kb_entry_to_json(hits[i], NULL));
		reply_json(d, out, 200, json_pack("{s:o, s:I, s:o}", "entries", list,
						  "total", (json_int_t)kb->nr, "query", json_text(q)));
		free(hits);
		free(copy);
	}
	kb_done(d);
}

/* ---- routing ------------------------------------------------------------- */

/* The path's components after "/api/", split at "/"; how many (at most max), or -1 when malformed. */
static int split_path(const char *path, char parts[][NAME_MAX + 1], int max)
{
	const char *p = path;
	int n = 0;

	if (strncmp(p, "/api/", 5))
		return -1;
	p += 5;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (n == max || !plain_name(p, len))
			return -1;
		memcpy(parts[n], p, len);
		parts[n++][len] = 0;
		if (!e)
			break;
		p = e + 1;
		if (!*p)
			return -1;	/* a trailing slash */
	}
	return n;
}

static bool parse_id(const char *s, int64_t *id)
{
	char *end;
	long long v;

	if (*s < '1' || *s > '9')
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0)
		return false;
	*id = v;
	return true;
}

/* "N.svg" -> N */
static bool parse_svg_id(char *s, int64_t *id)
{
	size_t n = strlen(s);

	if (n < 5 || strcmp(s + n - 4, ".svg"))
		return false;
	s[n - 4] = 0;
	return parse_id(s, id);
}

void dash_get(const struct dash *d, struct store *s, const char *path, dash_param_fn param,
	      void *ctx, struct dash_reply *out)
{
	char parts[4][NAME_MAX + 1];
	int n = split_path(path, parts, 4), status = 500;
	int64_t id, id2;
	json_t *doc = NULL;

	strbuf_init(&out->body, 0);
	out->status = 500;
	out->type = DASH_JSON;
	clear_last_error();
	if (n < 1) {
		reply_error(d, out, n < 0 ? 400 : 404, n < 0 ? "malformed path" : "no such endpoint");
		return;
	}
	if (!strcmp(parts[0], "overview") && n == 1) {
		doc = overview(d, s);
	} else if (!strcmp(parts[0], "scenarios")) {
		if (n == 1)
			doc = scenarios(d);
		else if (n == 3)
			return reply_scenario(d, parts[1], parts[2], out);
		else
			return reply_error(d, out, 404, "no such endpoint");
	} else if (!strcmp(parts[0], "kb") && n <= 2) {
		return reply_kb(d, n == 2 ? parts[1] : NULL, param, ctx, out);
	} else if (!s) {
		/* no store yet: every list is empty, every record missing */
		if (n == 1 && !strcmp(parts[0], "loops"))
			doc = json_pack("{s:[]}", "loops");
		else if (n == 1 && !strcmp(parts[0], "attempts"))
			doc = json_pack("{s:[], s:i}", "attempts", "total", 0);
		else if (n == 1 && !strcmp(parts[0], "benchmarks"))
			doc = json_pack("{s:[], s:[]}", "workloads", "loops");
		else if (n == 1 && !strcmp(parts[0], "profiles"))
			doc = json_pack("{s:[], s:[]}", "latest", "profiles");
		else if (n == 1 && !strcmp(parts[0], "activity"))
			doc = json_pack("{s:[]}", "activity");
		else
			return reply_error(d, out, 404, "no store yet: nothing recorded");
	} else if (!strcmp(parts[0], "loops") && n == 1) {
		json_t *l = loops_json(s, LIST_MAX);

		doc = l ? json_pack("{s:o}", "loops", l) : NULL;
	} else if (!strcmp(parts[0], "attempts") && n == 1) {
		doc = attempts(s, param, ctx, &status);
		if (!doc && status == 400)
			return reply_error(d, out, 400, last_error());
	} else if (!strcmp(parts[0], "attempts") && n == 2) {
		if (!parse_id(parts[1], &id))
			return reply_error(d, out, 400, "malformed attempt id: a number from 1");
		return reply_attempt(d, s, id, out);
	} else if (!strcmp(parts[0], "benchmarks") && n == 1) {
		doc = benchmarks(s);
	} else if (!strcmp(parts[0], "profiles") && n == 1) {
		doc = profiles(s);
	} else if (!strcmp(parts[0], "profiles") && n == 3 &&
		   (!strcmp(parts[2], "flame.svg") || !strcmp(parts[2], "top"))) {
		if (!parse_id(parts[1], &id))
			return reply_error(d, out, 400, "malformed run id: a number from 1");
		if (!strcmp(parts[2], "top"))
			return reply_top(d, s, id, param, ctx, out);
		return reply_flame(d, s, id, 0, out);
	} else if (!strcmp(parts[0], "flame-diff") && n == 3) {
		if (!parse_id(parts[1], &id2) || !parse_svg_id(parts[2], &id))
			return reply_error(d, out, 400, "malformed run ids: /api/flame-diff/BASE/CAND.svg");
		return reply_flame(d, s, id, id2, out);
	} else if (!strcmp(parts[0], "activity") && n == 1) {
		int64_t args[2];

		if (param_int(param, ctx, "after", 0, INT64_MAX, 0, &args[0]) ||
		    param_int(param, ctx, "limit", 1, LIST_MAX, LIST_DEFAULT, &args[1]))
			return reply_error(d, out, 400, last_error());
		doc = rows(s, "SELECT id, at, loop_id, level, kind, message, data_json FROM activity "
			      "WHERE id > ?1 ORDER BY id LIMIT ?2", 2, args);
		doc = doc ? json_pack("{s:o}", "activity", doc) : NULL;
	} else {
		return reply_error(d, out, 404, "no such endpoint");
	}
	if (!doc)
		return reply_failed(d, out);
	reply_json(d, out, 200, doc);
}

/* ---- snapshots ----------------------------------------------------------- */

static void add_path(char ***paths, size_t *nr, size_t *alloc, char *p)
{
	ALLOC_GROW(*paths, *nr + 1, *alloc);
	(*paths)[(*nr)++] = p;
}

int dash_snapshot_paths(const struct dash *d, struct store *s, char ***paths, size_t *nr)
{
	static const char *const fixed[] = { "/api/overview", "/api/loops", "/api/attempts",
		"/api/benchmarks", "/api/profiles", "/api/scenarios", "/api/kb", "/api/activity" };
	size_t alloc = 0;
	json_t *doc, *v;
	const struct kb *kb;
	size_t i;

	*paths = NULL;
	*nr = 0;
	for (i = 0; i < ARRAY_SIZE(fixed); i++)
		add_path(paths, nr, &alloc, xstrdup(fixed[i]));
	if (s) {
		json_t *list = rows(s, "SELECT id FROM attempts ORDER BY id", 0, NULL);
		json_t *prof = rows(s, "SELECT id, workload, commit_sha FROM runs "
				       "WHERE profile_path IS NOT NULL ORDER BY workload, id", 0, NULL);
		json_t *firsts = json_array();	/* of the workload being read: one per commit */
		size_t j;

		if (!list || !prof) {
			json_decref(list);
			json_decref(prof);
			json_decref(firsts);
			return -1;
		}
		json_array_foreach(list, i, v)
			add_path(paths, nr, &alloc, xstrfmt("/api/attempts/%" JSON_INTEGER_FORMAT,
							    json_integer_value(json_object_get(v, "id"))));
		/*
		 * Every profile drawn; the differences the page offers first:
		 * each commit's first profile against the one before, and the
		 * first against the last, per workload.
		 */
		for (i = 0; i <= json_array_size(prof); i++) {
			json_t *p = json_array_get(prof, i), *f;
			const char *w = json_string_value(json_object_get(p, "workload"));
			const char *c = json_string_value(json_object_get(p, "commit_sha"));
			const char *fw = json_string_value(json_object_get(json_array_get(firsts, 0), "workload"));
			bool seen = false;

			if (!p || !w || !fw || strcmp(w, fw)) {
				size_t n = json_array_size(firsts);

				for (j = 1; j < n; j++)
					add_path(paths, nr, &alloc, xstrfmt("/api/flame-diff/%" JSON_INTEGER_FORMAT
						"/%" JSON_INTEGER_FORMAT ".svg",
						json_integer_value(json_object_get(json_array_get(firsts, j - 1), "id")),
						json_integer_value(json_object_get(json_array_get(firsts, j), "id"))));
				if (n > 2)
					add_path(paths, nr, &alloc, xstrfmt("/api/flame-diff/%" JSON_INTEGER_FORMAT
						"/%" JSON_INTEGER_FORMAT ".svg",
						json_integer_value(json_object_get(json_array_get(firsts, 0), "id")),
						json_integer_value(json_object_get(json_array_get(firsts, n - 1), "id"))));
				json_array_clear(firsts);
			}
			if (!p)
				break;
			add_path(paths, nr, &alloc, xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/flame.svg",
							    json_integer_value(json_object_get(p, "id"))));
			add_path(paths, nr, &alloc, xstrfmt("/api/profiles/%" JSON_INTEGER_FORMAT "/top",
							    json_integer_value(json_object_get(p, "id"))));
			json_array_foreach(firsts, j, f)
				if (c && json_string_value(json_object_get(f, "commit_sha")) &&
				    !strcmp(c, json_string_value(json_object_get(f, "commit_sha"))))
					seen = true;
			if (!seen && w)
				json_array_append(firsts, p);
		}
		json_decref(firsts);
		json_decref(list);
		json_decref(prof);
	}
	doc = scenarios(d);
	json_array_foreach(json_object_get(doc, "runs"), i, v)
		add_path(paths, nr, &alloc, xstrfmt("/api/scenarios/%s/%s",
						    json_string_value(json_object_get(v, "scenario")),
						    json_string_value(json_object_get(v, "run"))));
	json_decref(doc);
	if ((kb = kb_get(d))) {
		for (i = 0; i < kb->nr; i++)
			add_path(paths, nr, &alloc, xstrfmt("/api/kb/%s", kb->entries[i].slug));
		kb_done(d);
	}
	return 0;
}
