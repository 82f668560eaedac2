/*
 * store.c: the SQLite database of loops, runs, measurements, attempts and
 * activity (see store.h, docs/internals/store.md). Opening checks that the
 * file is a hotloop store before changing anything in it, then applies the
 * migrations it lacks, one transaction each; every statement is prepared
 * once at open and every value bound.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "util.h"
#include "strbuf.h"
#include "json.h"
#include "project.h"
#include "store.h"

/* PRAGMA application_id of a hotloop store: "hotl". */
#define STORE_APP_ID 0x686f746c

/* ---- the schema --------------------------------------------------------- */

static const char schema_v1[] =
"PRAGMA application_id = 1752134764;\n"
"CREATE TABLE loops (\n"
"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
"	started_at REAL NOT NULL,\n"
"	updated_at REAL NOT NULL,\n"
"	finished_at REAL,\n"
"	repo TEXT NOT NULL,\n"
"	branch TEXT NOT NULL,\n"
"	base_commit TEXT NOT NULL,\n"
"	best_commit TEXT,\n"
"	status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'stopped', 'killed')),\n"
"	stop_reason TEXT,\n"
"	rounds_planned INTEGER NOT NULL CHECK (rounds_planned >= 0),\n"
"	config_json TEXT\n"
");\n"
"CREATE INDEX loops_status ON loops (status);\n"
"CREATE INDEX loops_updated ON loops (updated_at);\n"
"CREATE TABLE attempts (\n"
"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
"	loop_id INTEGER NOT NULL REFERENCES loops (id) ON DELETE CASCADE,\n"
"	round INTEGER NOT NULL CHECK (round >= 0),\n"
"	lens TEXT,\n"
"	function TEXT,\n"
"	hypothesis TEXT,\n"
"	expected_gain_pct REAL,\n"
"	verdict TEXT CHECK (verdict IN ('keep', 'reject', 'inconclusive', 'error', 'no-candidate')),\n"
"	reasons_json TEXT NOT NULL DEFAULT '[]',\n"
"	stage TEXT CHECK (stage IN ('agent', 'diff', 'protected', 'build', 'test', 'fingerprint',\n"
"		'compare', 'tournament', 'commit')),\n"
"	change_pct REAL,\n"
"	ci_low_pct REAL,\n"
"	ci_high_pct REAL,\n"
"	diff TEXT,\n"
"	commit_sha TEXT,\n"
"	kb_slug TEXT,\n"
"	agent_exit_status INTEGER,\n"
"	agent_seconds REAL,\n"
"	started_at REAL NOT NULL,\n"
"	updated_at REAL NOT NULL,\n"
"	finished_at REAL\n"
");\n"
"CREATE INDEX attempts_loop ON attempts (loop_id, round);\n"
"CREATE INDEX attempts_function ON attempts (function);\n"
"CREATE INDEX attempts_updated ON attempts (updated_at);\n"
"CREATE TABLE runs (\n"
"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
"	loop_id INTEGER REFERENCES loops (id) ON DELETE CASCADE,\n"
"	attempt_id INTEGER REFERENCES attempts (id) ON DELETE SET NULL,\n"
"	kind TEXT NOT NULL CHECK (kind IN ('baseline', 'candidate', 'final', 'run', 'compare')),\n"
"	commit_sha TEXT,\n"
"	workload TEXT,\n"
"	metric TEXT,\n"
"	started_at REAL NOT NULL,\n"
"	updated_at REAL NOT NULL,\n"
"	finished_at REAL,\n"
"	profile_path TEXT,\n"
"	brief_path TEXT,\n"
"	summary_json TEXT\n"
");\n"
"CREATE INDEX runs_loop ON runs (loop_id);\n"
"CREATE INDEX runs_attempt ON runs (attempt_id);\n"
"CREATE INDEX runs_updated ON runs (updated_at);\n"
"CREATE TABLE measurements (\n"
"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
"	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
"	workload TEXT NOT NULL,\n"
"	pair_index INTEGER CHECK (pair_index >= 0),\n"
"	side TEXT CHECK (side IN ('base', 'cand')),\n"
"	position INTEGER CHECK (position IN (0, 1)),\n"
"	warmup INTEGER NOT NULL CHECK (warmup IN (0, 1)),\n"
"	wall_s REAL,\n"
"	user_s REAL,\n"
"	sys_s REAL,\n"
"	cpu_s REAL,\n"
"	max_rss_kib INTEGER,\n"
"	instructions INTEGER,\n"
"	exit_status INTEGER,\n"
"	signal INTEGER,\n"
"	value REAL,\n"
"	created_at REAL NOT NULL\n"
");\n"
"CREATE INDEX measurements_run ON measurements (run_id, workload, pair_index);\n"
"CREATE TABLE activity (\n"
"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
"	at REAL NOT NULL,\n"
"	loop_id INTEGER REFERENCES loops (id) ON DELETE CASCADE,\n"
"	level TEXT NOT NULL CHECK (level IN ('info', 'warn', 'error')),\n"
"	kind TEXT NOT NULL,\n"
"	message TEXT NOT NULL,\n"
"	data_json TEXT\n"
");\n"
"CREATE INDEX activity_loop ON activity (loop_id, id);\n";

/*
 * v2: an attempt may stop at the integrity stage. SQLite cannot change a
 * CHECK in place: the table is made anew and the rows copied (foreign keys
 * are off while migrating; they are checked after).
 */
static const char schema_v2[] =
"CREATE TABLE attempts_v2 (\n"
"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
"	loop_id INTEGER NOT NULL REFERENCES loops (id) ON DELETE CASCADE,\n"
"	round INTEGER NOT NULL CHECK (round >= 0),\n"
"	lens TEXT,\n"
"	function TEXT,\n"
"	hypothesis TEXT,\n"
"	expected_gain_pct REAL,\n"
"	verdict TEXT CHECK (verdict IN ('keep', 'reject', 'inconclusive', 'error', 'no-candidate')),\n"
"	reasons_json TEXT NOT NULL DEFAULT '[]',\n"
"	stage TEXT CHECK (stage IN ('agent', 'integrity', 'diff', 'protected', 'build', 'test',\n"
"		'fingerprint', 'compare', 'tournament', 'commit')),\n"
"	change_pct REAL,\n"
"	ci_low_pct REAL,\n"
"	ci_high_pct REAL,\n"
"	diff TEXT,\n"
"	commit_sha TEXT,\n"
"	kb_slug TEXT,\n"
"	agent_exit_status INTEGER,\n"
"	agent_seconds REAL,\n"
"	started_at REAL NOT NULL,\n"
"	updated_at REAL NOT NULL,\n"
"	finished_at REAL\n"
");\n"
"INSERT INTO attempts_v2 SELECT * FROM attempts;\n"
"DROP TABLE attempts;\n"
"ALTER TABLE attempts_v2 RENAME TO attempts;\n"
"CREATE INDEX attempts_loop ON attempts (loop_id, round);\n"
"CREATE INDEX attempts_function ON attempts (function);\n"
"CREATE INDEX attempts_updated ON attempts (updated_at);\n";

/* v3: an attempt may stop at the target stage (the same way as v2). */
static const char schema_v3[] =
"CREATE TABLE attempts_v3 (\n"
"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
"	loop_id INTEGER NOT NULL REFERENCES loops (id) ON DELETE CASCADE,\n"
"	round INTEGER NOT NULL CHECK (round >= 0),\n"
"	lens TEXT,\n"
"	function TEXT,\n"
"	hypothesis TEXT,\n"
"	expected_gain_pct REAL,\n"
"	verdict TEXT CHECK (verdict IN ('keep', 'reject', 'inconclusive', 'error', 'no-candidate')),\n"
"	reasons_json TEXT NOT NULL DEFAULT '[]',\n"
"	stage TEXT CHECK (stage IN ('agent', 'integrity', 'diff', 'protected', 'target', 'build',\n"
"		'test', 'fingerprint', 'compare', 'tournament', 'commit')),\n"
"	change_pct REAL,\n"
"	ci_low_pct REAL,\n"
"	ci_high_pct REAL,\n"
"	diff TEXT,\n"
"	commit_sha TEXT,\n"
"	kb_slug TEXT,\n"
"	agent_exit_status INTEGER,\n"
"	agent_seconds REAL,\n"
"	started_at REAL NOT NULL,\n"
"	updated_at REAL NOT NULL,\n"
"	finished_at REAL\n"
");\n"
"INSERT INTO attempts_v3 SELECT * FROM attempts;\n"
"DROP TABLE attempts;\n"
"ALTER TABLE attempts_v3 RENAME TO attempts;\n"
"CREATE INDEX attempts_loop ON attempts (loop_id, round);\n"
"CREATE INDEX attempts_function ON attempts (function);\n"
"CREATE INDEX attempts_updated ON attempts (updated_at);\n";

/* v4: an attempt may stop at the canary stage (the same way as v2). */
static const char schema_v4[] =
"CREATE TABLE attempts_v4 (\n"
"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
"	loop_id INTEGER NOT NULL REFERENCES loops (id) ON DELETE CASCADE,\n"
"	round INTEGER NOT NULL CHECK (round >= 0),\n"
"	lens TEXT,\n"
"	function TEXT,\n"
"	hypothesis TEXT,\n"
"	expected_gain_pct REAL,\n"
"	verdict TEXT CHECK (verdict IN ('keep', 'reject', 'inconclusive', 'error', 'no-candidate')),\n"
"	reasons_json TEXT NOT NULL DEFAULT '[]',\n"
"	stage TEXT CHECK (stage IN ('agent', 'integrity', 'diff', 'protected', 'target', 'build',\n"
"		'test', 'fingerprint', 'compare', 'canary', 'tournament', 'commit')),\n"
"	change_pct REAL,\n"
"	ci_low_pct REAL,\n"
"	ci_high_pct REAL,\n"
"	diff TEXT,\n"
"	commit_sha TEXT,\n"
"	kb_slug TEXT,\n"
"	agent_exit_status INTEGER,\n"
"	agent_seconds REAL,\n"
"	started_at REAL NOT NULL,\n"
"	updated_at REAL NOT NULL,\n"
"	finished_at REAL\n"
");\n"
"INSERT INTO attempts_v4 SELECT * FROM attempts;\n"
"DROP TABLE attempts;\n"
"ALTER TABLE attempts_v4 RENAME TO attempts;\n"
"CREATE INDEX attempts_loop ON attempts (loop_id, round);\n"
"CREATE INDEX attempts_function ON attempts (function);\n"
"CREATE INDEX attempts_updated ON attempts (updated_at);\n";

const struct store_migration store_migrations[] = {
	{ "create the loops, attempts, runs, measurements and activity tables", schema_v1 },
	{ "let an attempt stop at the integrity stage", schema_v2 },
	{ "let an attempt stop at the target stage", schema_v3 },
	{ "let an attempt stop at the canary stage", schema_v4 },
};
const size_t store_nr_migrations = ARRAY_SIZE(store_migrations);

/* ---- statements ----------------------------------------------------------- */

#define LOOP_COLS "id, started_at, finished_at, repo, branch, base_commit, best_commit, " \
	"status, stop_reason, rounds_planned, config_json"
#define RUN_COLS "id, loop_id, attempt_id, kind, commit_sha, workload, metric, started_at, " \
	"finished_at, profile_path, brief_path, summary_json"
#define MEAS_COLS "id, run_id, workload, pair_index, side, position, warmup, wall_s, user_s, " \
	"sys_s, cpu_s, max_rss_kib, instructions, exit_status, signal, value, created_at"
#define ATTEMPT_COLS "id, loop_id, round, lens, function, hypothesis, expected_gain_pct, " \
	"verdict, reasons_json, stage, change_pct, ci_low_pct, ci_high_pct, diff, commit_sha, " \
	"kb_slug, agent_exit_status, agent_seconds, started_at, finished_at"
#define ACTIVITY_COLS "id, at, loop_id, level, kind, message, data_json"

enum stmt {
	ST_LOOP_BEGIN,
	ST_LOOP_BEST,
	ST_LOOP_END,
	ST_LOOP_GET,
	ST_LOOP_LAST,
	ST_RUN_ADD,
	ST_RUN_FINISH,
	ST_RUN_GET,
	ST_MEAS_ADD,
	ST_MEAS_OF_RUN,
	ST_ATTEMPT_ADD,
	ST_ATTEMPT_UPDATE,
	ST_ATTEMPTS_OF_LOOP,
	ST_ACTIVITY_ADD,
	ST_ACTIVITY_SINCE,
	ST_COUNTS,
	NR_STMT
};

static const char *const stmt_sql[NR_STMT] = {
	[ST_LOOP_BEGIN] = "INSERT INTO loops (started_at, updated_at, finished_at, repo, branch, "
		"base_commit, best_commit, status, stop_reason, rounds_planned, config_json) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_LOOP_BEST] = "UPDATE loops SET best_commit = ?, updated_at = ? WHERE id = ?",
	[ST_LOOP_END] = "UPDATE loops SET status = ?, stop_reason = ?, finished_at = ?, "
		"updated_at = ? WHERE id = ?",
	[ST_LOOP_GET] = "SELECT " LOOP_COLS " FROM loops WHERE id = ?",
	[ST_LOOP_LAST] = "SELECT " LOOP_COLS " FROM loops ORDER BY id DESC LIMIT 1",
	[ST_RUN_ADD] = "INSERT INTO runs (loop_id, attempt_id, kind, commit_sha, workload, metric, "
		"started_at, updated_at, finished_at, profile_path, brief_path, summary_json) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_RUN_FINISH] = "UPDATE runs SET finished_at = ?, updated_at = ?, "
		"profile_path = coalesce(?, profile_path), brief_path = coalesce(?, brief_path), "
		"summary_json = coalesce(?, summary_json) WHERE id = ?",
	[ST_RUN_GET] = "SELECT " RUN_COLS " FROM runs WHERE id = ?",
	[ST_MEAS_ADD] = "INSERT INTO measurements (run_id, workload, pair_index, side, position, "
		"warmup, wall_s, user_s, sys_s, cpu_s, max_rss_kib, instructions, exit_status, "
		"signal, value, created_at) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_MEAS_OF_RUN] = "SELECT " MEAS_COLS " FROM measurements WHERE run_id = ? ORDER BY id",
	[ST_ATTEMPT_ADD] = "INSERT INTO attempts (loop_id, round, lens, function, hypothesis, "
		"expected_gain_pct, verdict, reasons_json, stage, change_pct, ci_low_pct, "
		"ci_high_pct, diff, commit_sha, kb_slug, agent_exit_status, agent_seconds, "
		"started_at, finished_at, updated_at) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_ATTEMPT_UPDATE] = "UPDATE attempts SET round = ?, lens = ?, function = ?, "
		"hypothesis = ?, expected_gain_pct = ?, verdict = ?, reasons_json = ?, stage = ?, "
		"change_pct = ?, ci_low_pct = ?, ci_high_pct = ?, diff = ?, commit_sha = ?, "
		"kb_slug = ?, agent_exit_status = ?, agent_seconds = ?, "
		"started_at = coalesce(?, started_at), finished_at = ?, updated_at = ? WHERE id = ?",
	[ST_ATTEMPTS_OF_LOOP] = "SELECT " ATTEMPT_COLS " FROM attempts WHERE loop_id = ? "
		"ORDER BY round, id",
	[ST_ACTIVITY_ADD] = "INSERT INTO activity (at, loop_id, level, kind, message, data_json) "
		"VALUES (?, ?, ?, ?, ?, ?)",
	[ST_ACTIVITY_SINCE] = "SELECT " ACTIVITY_COLS " FROM activity WHERE id > ? "
		"ORDER BY id LIMIT ?",
	[ST_COUNTS] = "SELECT (SELECT count(*) FROM loops), (SELECT count(*) FROM runs), "
		"(SELECT count(*) FROM measurements), (SELECT count(*) FROM attempts), "
		"(SELECT count(*) FROM activity)",
};

struct store {
	sqlite3 *db;
	char *path;
	int version;		/* the schema now */
	int version_found;	/* the schema the file had when opened */
	sqlite3_stmt *stmt[NR_STMT];
};

/* ---- names ---------------------------------------------------------------- */

static const char *const loop_status_names[] = { "running", "finished", "stopped", "killed" };
static const char *const run_kind_names[] = { "baseline", "candidate", "final", "run", "compare" };
static const char *const side_names[] = { NULL, "base", "cand" };
static const char *const level_names[] = { "info", "warn", "error" };

#define NAME_OF(table, v) ((size_t)(v) < ARRAY_SIZE(table) ? (table)[v] : \
	(BUG("%s %d out of range", #table, (int)(v)), NULL))

const char *store_loop_status_name(enum store_loop_status v) { return NAME_OF(loop_status_names, v); }
const char *store_run_kind_name(enum store_run_kind v) { return NAME_OF(run_kind_names, v); }
const char *store_side_name(enum store_side v) { return NAME_OF(side_names, v); }
const char *store_level_name(enum store_level v) { return NAME_OF(level_names, v); }

/* ---- small helpers -------------------------------------------------------- */

double store_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000) / 1000.0;
}

/* A start time given to a writer: 0 means now. */
static double or_now(double t, double now)
{
	return t == 0 ? now : t;
}

/* An end time given to a writer: 0 or NAN means not finished (NULL). */
static double or_null(double t)
{
	return t == 0 ? STORE_NULL_REAL : t;
}

const char *store_path(const struct store *s)
{
	return s->path;
}

int store_version(const struct store *s)
{
	return s->version;
}

int store_version_found(const struct store *s)
{
	return s->version_found;
}

struct sqlite3 *store_sqlite(struct store *s)
{
	return s->db;
}

/* Run one or more statements that return no rows. */
static int exec(struct store *s, const char *sql, const char *doing)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error("cannot %s '%s': %s", doing, s->path, msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* The integer a one-row query (a PRAGMA) gives; -1 with an error. */
static int query_int(struct store *s, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/*
 * Binding values in order: the first failure sticks (a string over
 * SQLite's length limit), so a writer checks once.
 */
struct binder {
	sqlite3_stmt *st;
	int i;
	int rc;
};

static void bind_rc(struct binder *b, int rc)
{
	if (b->rc == SQLITE_OK)
		b->rc = rc;
}

static void b_text(struct binder *b, const char *s)
{
	b->i++;
	bind_rc(b, s ? sqlite3_bind_text(b->st, b->i, s, -1, SQLITE_STATIC) :
		sqlite3_bind_null(b->st, b->i));
}

static void b_int(struct binder *b, int64_t v)
{
	b->i++;
	bind_rc(b, v == STORE_NULL_INT ? sqlite3_bind_null(b->st, b->i) :
		sqlite3_bind_int64(b->st, b->i, v));
}

static void b_real(struct binder *b, double v)
{
	b->i++;
	bind_rc(b, isnan(v) ? sqlite3_bind_null(b->st, b->i) :
		sqlite3_bind_double(b->st, b->i, v));
}

static struct binder bind_start(struct store *s, enum stmt which)
{
	return (struct binder){ s->stmt[which], 0, SQLITE_OK };
}

static void stmt_done(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

static int write_error(struct store *s, int rc)
{
	if ((rc & 0xff) == SQLITE_BUSY)
		return error("cannot write to '%s': %s (another process kept it locked for %d s)",
			     s->path, sqlite3_errstr(rc), STORE_BUSY_MS / 1000);
	return error("cannot write to '%s': %s", s->path,
		     rc == SQLITE_TOOBIG ? sqlite3_errstr(rc) : sqlite3_errmsg(s->db));
}

/*
 * Step a bound write: 0, and the new row's id in *id when asked; -1 with
 * an error. A write that must change a row ('must_change') and changed
 * none names the row it missed.
 */
static int run_write(struct store *s, struct binder *b, const char *table, int64_t must_change,
		     int64_t *id)
{
	int rc = b->rc;

	if (rc == SQLITE_OK)
		rc = sqlite3_step(b->st);
	if (rc != SQLITE_DONE && rc != SQLITE_OK) {
		write_error(s, rc);
		stmt_done(b->st);
		return -1;
	}
	stmt_done(b->st);
	if (must_change != STORE_NULL_INT && !sqlite3_changes(s->db))
		return error("cannot write to '%s': no row %" PRId64 " in %s", s->path,
			     must_change, table);
	if (id)
		*id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

static int read_error(struct store *s)
{
	return error("cannot read '%s': %s", s->path, sqlite3_errmsg(s->db));
}

/* JSON from a caller must parse, so that a reader can trust it. */
static int check_json(struct store *s, const char *what, const char *text)
{
	json_error_t err;
	json_t *j;

	if (!text)
		return 0;
	j = json_loads(text, JSON_DECODE_ANY, &err);
	if (!j)
		return error("cannot write to '%s': %s is not valid JSON: %s", s->path, what, err.text);
	json_decref(j);
	return 0;
}

/* The reasons as a compact JSON array (caller frees). */
static char *reasons_json(char *const *reasons, size_t nr)
{
	json_t *a = json_array();
	char *out;

	for (size_t i = 0; i < nr; i++)
		json_array_append_new(a, json_text(reasons[i]));
	out = json_dumps(a, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(a);
	if (!out)
		BUG("cannot encode reasons as JSON");
	return out;
}

/* Reading columns in order. */
struct reader {
	sqlite3_stmt *st;
	int i;
};

static int64_t r_int(struct reader *r)
{
	int i = r->i++;

	return sqlite3_column_type(r->st, i) == SQLITE_NULL ? STORE_NULL_INT :
		sqlite3_column_int64(r->st, i);
}

static double r_real(struct reader *r)
{
	int i = r->i++;

	return sqlite3_column_type(r->st, i) == SQLITE_NULL ? STORE_NULL_REAL :
		sqlite3_column_double(r->st, i);
}

static const char *r_text(struct reader *r)
{
	int i = r->i++;
	const unsigned char *t;

	if (sqlite3_column_type(r->st, i) == SQLITE_NULL)
		return NULL;
	t = sqlite3_column_text(r->st, i);
	return xstrdup(t ? (const char *)t : "");
}

/*
 * A name column into its enum: 0, or -1 with an error for a value this
 * hotloop does not know (only a file written by something else has one).
 */
static int r_name(struct store *s, struct reader *r, const char *const *names, size_t n,
		  const char *what, const char *table, int64_t id, int *out)
{
	int i = r->i++;
	const char *t = (const char *)sqlite3_column_text(r->st, i);

	*out = 0;
	for (size_t k = 0; k < n; k++) {
		if ((!t && !names[k]) || (t && names[k] && !strcmp(t, names[k]))) {
			*out = (int)k;
			return 0;
		}
	}
	return error("cannot read '%s': %s %" PRId64 " has an unknown %s '%s'", s->path, table, id,
		     what, t ? t : "NULL");
}

static void free_const(const char *p)
{
	free((char *)p);
}

/* ---- opening -------------------------------------------------------------- */

/* mkdir -p of the directory holding 'path'. */
static int make_parent(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int ret = 0;

	if (slash && slash != dir) {
		*slash = '\0';
		ret = mkdir_p(dir);
	}
	free(dir);
	return ret;
}

/*
 * A file that SQLite cannot read as a database: say which, what SQLite
 * found, and what to do.
 */
static int open_error(struct store *s, const char *doing)
{
	int rc = sqlite3_errcode(s->db);

	if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
		return error("cannot %s '%s': %s: it is not a hotloop store, or it is damaged; "
			     "move it away to start a new one", doing, s->path, sqlite3_errmsg(s->db));
	return error("cannot %s '%s': %s", doing, s->path, sqlite3_errmsg(s->db));
}

/*
 * Read what the file is, changing nothing: a database with our
 * application id and a known version, or an empty one. The version in
 * *version; -1 with an error for anything else.
 */
static int identify(struct store *s, size_t known, int64_t *version)
{
	int64_t app, objects;

	if (query_int(s, "PRAGMA application_id", &app) ||
	    query_int(s, "PRAGMA user_version", version) ||
	    query_int(s, "SELECT count(*) FROM sqlite_schema", &objects))
		return open_error(s, "open");
	if (*version == 0 && !app && objects)
		return error("cannot open '%s': it is an SQLite database but not a hotloop store "
			     "(it holds tables and no hotloop schema version)", s->path);
	if ((*version || app) && app != STORE_APP_ID)
		return error("cannot open '%s': it is an SQLite database but not a hotloop store "
			     "(application id 0x%08" PRIx32 ")", s->path, (uint32_t)app);
	if (*version < 0)
		return error("cannot open '%s': bad schema version %" PRId64, s->path, *version);
	if ((uint64_t)*version > known)
		return error("cannot open '%s': written by a newer hotloop: schema %" PRId64
			     ", this one knows %zu", s->path, *version, known);
	return 0;
}

/*
 * SQLite writes whole pages; a file that ends inside one was cut short,
 * even where the part lost held nothing SQLite would miss.
 */
static int check_size(struct store *s)
{
	int64_t page;
	struct stat st;

	if (query_int(s, "PRAGMA page_size", &page) || page <= 0)
		return open_error(s, "open");
	if (stat(s->path, &st))
		return error("cannot open '%s': %s", s->path, strerror(errno));
	if (st.st_size % page)
		return error("cannot open '%s': it is damaged: %lld bytes is not a whole number "
			     "of %" PRId64 "-byte pages; move it away to start a new one", s->path,
			     (long long)st.st_size, page);
	return 0;
}

/* Foreign keys a migration broke: -1 with an error naming the first. */
static int check_foreign_keys(struct store *s, size_t to)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st, NULL) != SQLITE_OK)
		return open_error(s, "migrate");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ret = error("cannot migrate '%s' to schema %zu: a row of '%s' refers to a missing "
			    "one in '%s'", s->path, to, (const char *)sqlite3_column_text(st, 0),
			    (const char *)sqlite3_column_text(st, 2));
	else if (rc != SQLITE_DONE)
		ret = open_error(s, "migrate");
	sqlite3_finalize(st);
	return ret;
}

/*
 * Apply migrations[version..nr-1], one transaction each. The version is
 * read again under the write lock: another process may have migrated
 * the file meanwhile.
 */
static int migrate(struct store *s, const struct store_migration *m, size_t nr)
{
	for (;;) {
		int64_t v;
		char *pragma;

		if (exec(s, "BEGIN IMMEDIATE", "migrate"))
			return -1;
		if (query_int(s, "PRAGMA user_version", &v)) {
			open_error(s, "migrate");
			goto out_rollback;
		}
		if (v < 0 || (uint64_t)v > nr) {
			error("cannot open '%s': written by a newer hotloop: schema %" PRId64
			      ", this one knows %zu", s->path, v, nr);
			goto out_rollback;
		}
		if ((uint64_t)v == nr) {
			s->version = (int)v;
			return exec(s, "COMMIT", "migrate");
		}
		if (exec(s, m[v].sql, "migrate")) {
			error("cannot migrate '%s' to schema %" PRId64 " (%s)", s->path, v + 1,
			      m[v].what);
			goto out_rollback;
		}
		pragma = xstrfmt("PRAGMA user_version = %" PRId64, v + 1);
		if (exec(s, pragma, "migrate") || check_foreign_keys(s, (size_t)v + 1) ||
		    exec(s, "COMMIT", "migrate")) {
			free(pragma);
			goto out_rollback;
		}
		free(pragma);
	}
out_rollback:
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static int prepare_all(struct store *s)
{
	for (size_t i = 0; i < NR_STMT; i++) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &s->stmt[i], NULL) != SQLITE_OK)
			return error("cannot open '%s': it does not hold hotloop's schema %d: %s",
				     s->path, s->version, sqlite3_errmsg(s->db));
	}
	return 0;
}

/*
 * An older store proves it is one before anything is migrated: it holds
 * the tables every schema has.
 */
static int check_tables(struct store *s)
{
	static const char *const tables[] = { "loops", "attempts", "runs", "measurements", "activity" };

	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		char *q = xstrfmt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '%s'",
				  tables[i]);
		int64_t n;
		int bad = query_int(s, q, &n);

		free(q);
		if (bad)
			return open_error(s, "open");
		if (!n)
			return error("cannot open '%s': it does not hold hotloop's schema %d: no such table: %s",
				     s->path, s->version, tables[i]);
	}
	return 0;
}

static int set_wal(struct store *s)
{
	sqlite3_stmt *st;
	const char *mode;
	int ret = 0;

	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		ret = open_error(s, "open");
		goto out;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	if (!mode || strcmp(mode, "wal"))
		ret = error("cannot use write-ahead logging in '%s' (journal mode '%s'): "
			    "put the store on a local file system", s->path, mode ? mode : "?");
out:
	sqlite3_finalize(st);
	return ret;
}

/* The connection to s->path, set up as every one is; -1 with an error. */
static int db_connect(struct store *s, int flags)
{
	int rc = sqlite3_open_v2(s->path, &s->db, flags, NULL);

	if (rc != SQLITE_OK)
		return error("cannot open '%s': %s", s->path,
			     s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
	sqlite3_extended_result_codes(s->db, 1);
	/* the file may come from anywhere: no schema tricks, no risky SQL in it */
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	return 0;
}

int store_open_migrations(const char *path, const struct store_migration *migrations,
			  size_t nr, struct store **out)
{
	struct store *s = xcalloc(1, sizeof(*s));
	int64_t version;
	struct stat st;
	char *lock_path = xstrfmt("%s.lock", path);
	int lock = -1;

	*out = NULL;
	s->path = xstrdup(path);
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		error("cannot open '%s': it is a directory", path);
		goto out_free;
	}
	if (make_parent(path))
		goto out_free;
	/*
	 * One opener at a time: a file another process is creating or
	 * migrating is neither read half-written nor migrated twice.
	 */
	lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (lock < 0 || flock(lock, LOCK_EX)) {
		error("cannot lock '%s': %s", lock_path, strerror(errno));
		goto out_free;
	}
	/* SQLite would take a 1-byte file for an empty database and write over it */
	if (!stat(path, &st) && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < 100) {
		error("cannot open '%s': %lld bytes, shorter than an SQLite header: it is not a "
		      "hotloop store, or it is damaged; move it away to start a new one", path,
		      (long long)st.st_size);
		goto out_free;
	}
	if (db_connect(s, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) ||
	    identify(s, nr, &version) || check_size(s))
		goto out_free;
	s->version = s->version_found = (int)version;
	/*
	 * An up-to-date file proves it has the tables before anything is
	 * written to it; an older one is migrated first.
	 */
	if ((size_t)version == nr ? prepare_all(s) : version > 0 && check_tables(s))
		goto out_free;
	if (set_wal(s) ||
	    exec(s, "PRAGMA synchronous = NORMAL", "open") ||
	    ((size_t)version < nr && (migrate(s, migrations, nr) || prepare_all(s))) ||
	    exec(s, "PRAGMA foreign_keys = ON", "open"))
		goto out_free;
	*out = s;
	close(lock);
	free(lock_path);
	return 0;
out_free:
	store_close(s);
	if (lock >= 0)
		close(lock);
	free(lock_path);
	return -1;
}

int store_open_readonly(const char *path, struct store **out)
{
	struct store *s = xcalloc(1, sizeof(*s));
	int64_t version;

	*out = NULL;
	s->path = xstrdup(path);
	if (db_connect(s, SQLITE_OPEN_READONLY) || identify(s, store_nr_migrations, &version) ||
	    check_size(s))
		goto out_free;
	s->version = s->version_found = (int)version;
	if ((size_t)version != store_nr_migrations) {
		error("cannot read '%s': schema %" PRId64 " is older than this hotloop's %zu; "
		      "run 'hotloop store' once to bring it up to date", path, version,
		      store_nr_migrations);
		goto out_free;
	}
	if (prepare_all(s))
		goto out_free;
	*out = s;
	return 0;
out_free:
	store_close(s);
	return -1;
}

int store_open(const char *path, struct store **out)
{
	return store_open_migrations(path, store_migrations, store_nr_migrations, out);
}

void store_close(struct store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < NR_STMT; i++)
		sqlite3_finalize(s->stmt[i]);
	if (s->db && sqlite3_close(s->db) != SQLITE_OK)
		BUG("statements left open on '%s'", s->path);
	free(s->path);
	free(s);
}

char *store_repo_path(const char *top)
{
	char *dir = state_dir(top, NULL), *path;

	if (!dir)
		return NULL;
	path = xstrfmt("%s/%s", top, STORE_FILE);
	free(dir);
	return path;
}

int store_check(struct store *s)
{
	sqlite3_stmt *st;
	const char *first;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK)
		return open_error(s, "check");
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = open_error(s, "check");
	} else {
		first = (const char *)sqlite3_column_text(st, 0);
		if (!first || strcmp(first, "ok"))
			ret = error("'%s' is damaged: %s", s->path, first ? first : "?");
	}
	sqlite3_finalize(st);
	return ret;
}

int store_begin(struct store *s)
{
	return exec(s, "BEGIN IMMEDIATE", "write to");
}

int store_commit(struct store *s)
{
	return exec(s, "COMMIT", "write to");
}

int store_rollback(struct store *s)
{
	return exec(s, "ROLLBACK", "write to");
}

/* ---- writers -------------------------------------------------------------- */

int store_loop_begin(struct store *s, const struct store_loop *l, int64_t *id)
{
	struct binder b = bind_start(s, ST_LOOP_BEGIN);
	double now = store_now();

	if (check_json(s, "the loop's config", l->config_json))
		return -1;
	b_real(&b, or_now(l->started_at, now));
	b_real(&b, now);
	b_real(&b, or_null(l->finished_at));
	b_text(&b, l->repo);
	b_text(&b, l->branch);
	b_text(&b, l->base_commit);
	b_text(&b, l->best_commit);
	b_text(&b, store_loop_status_name(l->status));
	b_text(&b, l->stop_reason);
	b_int(&b, l->rounds_planned);
	b_text(&b, l->config_json);
	return run_write(s, &b, "loops", STORE_NULL_INT, id);
}

int store_loop_set_best(struct store *s, int64_t id, const char *best_commit)
{
	struct binder b = bind_start(s, ST_LOOP_BEST);

	b_text(&b, best_commit);
	b_real(&b, store_now());
	b_int(&b, id);
	return run_write(s, &b, "loops", id, NULL);
}

int store_loop_end(struct store *s, int64_t id, enum store_loop_status status,
		   const char *stop_reason)
{
	struct binder b = bind_start(s, ST_LOOP_END);
	double now = store_now();

	if (status == STORE_LOOP_RUNNING)
		BUG("a loop cannot end running");
	b_text(&b, store_loop_status_name(status));
	b_text(&b, stop_reason);
	b_real(&b, now);
	b_real(&b, now);
	b_int(&b, id);
	return run_write(s, &b, "loops", id, NULL);
}

int store_run_add(struct store *s, const struct store_run *r, int64_t *id)
{
	struct binder b = bind_start(s, ST_RUN_ADD);
	double now = store_now();

	if (check_json(s, "the run's summary", r->summary_json))
		return -1;
	b_int(&b, r->loop_id);
	b_int(&b, r->attempt_id);
	b_text(&b, store_run_kind_name(r->kind));
	b_text(&b, r->commit_sha);
	b_text(&b, r->workload);
	b_text(&b, r->metric);
	b_real(&b, or_now(r->started_at, now));
	b_real(&b, now);
	b_real(&b, or_null(r->finished_at));
	b_text(&b, r->profile_path);
	b_text(&b, r->brief_path);
	b_text(&b, r->summary_json);
	return run_write(s, &b, "runs", STORE_NULL_INT, id);
}

int store_run_finish(struct store *s, int64_t id, const char *profile_path,
		     const char *brief_path, const char *summary_json)
{
	struct binder b = bind_start(s, ST_RUN_FINISH);
	double now = store_now();

	if (check_json(s, "the run's summary", summary_json))
		return -1;
	b_real(&b, now);
	b_real(&b, now);
	b_text(&b, profile_path);
	b_text(&b, brief_path);
	b_text(&b, summary_json);
	b_int(&b, id);
	return run_write(s, &b, "runs", id, NULL);
}

int store_measurement_add(struct store *s, const struct store_measurement *m, int64_t *id)
{
	struct binder b = bind_start(s, ST_MEAS_ADD);

	b_int(&b, m->run_id);
	b_text(&b, m->workload);
	b_int(&b, m->pair_index);
	b_text(&b, store_side_name(m->side));
	b_int(&b, m->position);
	b_int(&b, m->warmup);
	b_real(&b, m->wall_s);
	b_real(&b, m->user_s);
	b_real(&b, m->sys_s);
	b_real(&b, m->cpu_s);
	b_int(&b, m->max_rss_kib);
	b_int(&b, m->instructions);
	b_int(&b, m->exit_status);
	b_int(&b, m->signal);
	b_real(&b, m->value);
	b_real(&b, or_now(m->created_at, store_now()));
	return run_write(s, &b, "measurements", STORE_NULL_INT, id);
}

int store_measurements_add(struct store *s, const struct store_measurement *m, size_t nr)
{
	/* our own transaction, or a savepoint when the caller holds one */
	bool outer = !sqlite3_get_autocommit(s->db);

	if (exec(s, outer ? "SAVEPOINT measurements" : "BEGIN IMMEDIATE", "write to"))
		return -1;
	for (size_t i = 0; i < nr; i++) {
		if (store_measurement_add(s, &m[i], NULL)) {
			if (outer)
				sqlite3_exec(s->db, "ROLLBACK TO measurements; RELEASE measurements",
					     NULL, NULL, NULL);
			else
				sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
	}
	if (!exec(s, outer ? "RELEASE measurements" : "COMMIT", "write to"))
		return 0;
	if (!outer && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/* The columns attempts' insert and update share, in their order. */
static void bind_attempt(struct binder *b, const struct store_attempt *a, const char *reasons)
{
	b_text(b, a->lens);
	b_text(b, a->function);
	b_text(b, a->hypothesis);
	b_real(b, a->expected_gain_pct);
	b_text(b, NAME_OF(verdict_kind_names, a->verdict));
	b_text(b, reasons);
	b_text(b, NAME_OF(gate_stage_names, a->stage));
	b_real(b, a->change_pct);
	b_real(b, a->ci_low_pct);
	b_real(b, a->ci_high_pct);
	b_text(b, a->diff);
	b_text(b, a->commit_sha);
	b_text(b, a->kb_slug);
	b_int(b, a->agent_exit_status);
	b_real(b, a->agent_seconds);
}

int store_attempt_add(struct store *s, const struct store_attempt *a, int64_t *id)
{
	struct binder b = bind_start(s, ST_ATTEMPT_ADD);
	char *reasons = reasons_json(a->reasons, a->nr_reasons);
	double now = store_now();
	int ret;

	b_int(&b, a->loop_id);
	b_int(&b, a->round);
	bind_attempt(&b, a, reasons);
	b_real(&b, or_now(a->started_at, now));
	b_real(&b, or_null(a->finished_at));
	b_real(&b, now);
	ret = run_write(s, &b, "attempts", STORE_NULL_INT, id);
	free(reasons);
	return ret;
}

int store_attempt_update(struct store *s, const struct store_attempt *a)
{
	struct binder b = bind_start(s, ST_ATTEMPT_UPDATE);
	char *reasons = reasons_json(a->reasons, a->nr_reasons);
	double now = store_now();
	int ret;

	b_int(&b, a->round);
	bind_attempt(&b, a, reasons);
	b_real(&b, or_null(a->started_at));	/* NULL keeps it */
	b_real(&b, or_null(a->finished_at));
	b_real(&b, now);
	b_int(&b, a->id);
	ret = run_write(s, &b, "attempts", a->id, NULL);
	free(reasons);
	return ret;
}

int store_activity(struct store *s, int64_t loop_id, enum store_level level, const char *kind,
		   const char *data_json, const char *fmt, ...)
{
	struct binder b = bind_start(s, ST_ACTIVITY_ADD);
	struct strbuf msg = STRBUF_INIT;
	va_list ap;
	int ret;

	if (check_json(s, "the activity's data", data_json))
		return -1;
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	b_real(&b, store_now());
	b_int(&b, loop_id);
	b_text(&b, store_level_name(level));
	b_text(&b, kind);
	b_text(&b, msg.buf);
	b_text(&b, data_json);
	ret = run_write(s, &b, "activity", STORE_NULL_INT, NULL);
	strbuf_release(&msg);
	return ret;
}

/* ---- readers -------------------------------------------------------------- */

int store_counts(struct store *s, struct store_counts *c)
{
	sqlite3_stmt *st = s->stmt[ST_COUNTS];
	int rc = sqlite3_step(st), ret = 0;

	if (rc == SQLITE_ROW) {
		c->loops = sqlite3_column_int64(st, 0);
		c->runs = sqlite3_column_int64(st, 1);
		c->measurements = sqlite3_column_int64(st, 2);
		c->attempts = sqlite3_column_int64(st, 3);
		c->activity = sqlite3_column_int64(st, 4);
	} else {
		ret = read_error(s);
	}
	stmt_done(st);
	return ret;
}

static int fill_loop(struct store *s, sqlite3_stmt *st, struct store_loop *l)
{
	struct reader r = { st, 0 };
	int status;

	memset(l, 0, sizeof(*l));
	l->id = r_int(&r);
	l->started_at = r_real(&r);
	l->finished_at = r_real(&r);
	l->repo = r_text(&r);
	l->branch = r_text(&r);
	l->base_commit = r_text(&r);
	l->best_commit = r_text(&r);
	if (r_name(s, &r, loop_status_names, ARRAY_SIZE(loop_status_names), "status", "loop",
		   l->id, &status)) {
		store_loop_release(l);
		return -1;
	}
	l->status = status;
	l->stop_reason = r_text(&r);
	l->rounds_planned = r_int(&r);
	l->config_json = r_text(&r);
	return 0;
}

/* Step a one-row query into a record: 1, 0 for no row, -1 with an error. */
static int get_one(struct store *s, sqlite3_stmt *st, void *out,
		   int (*fill)(struct store *, sqlite3_stmt *, void *))
{
	int rc = sqlite3_step(st), ret;

	if (rc == SQLITE_ROW)
		ret = fill(s, st, out) ? -1 : 1;
	else if (rc == SQLITE_DONE)
		ret = 0;
	else
		ret = read_error(s);
	stmt_done(st);
	return ret;
}

static int fill_loop_v(struct store *s, sqlite3_stmt *st, void *out)
{
	return fill_loop(s, st, out);
}

int store_loop_get(struct store *s, int64_t id, struct store_loop *out)
{
	sqlite3_bind_int64(s->stmt[ST_LOOP_GET], 1, id);
	return get_one(s, s->stmt[ST_LOOP_GET], out, fill_loop_v);
}

int store_last_loop(struct store *s, struct store_loop *out)
{
	return get_one(s, s->stmt[ST_LOOP_LAST], out, fill_loop_v);
}

void store_loop_release(struct store_loop *l)
{
	free_const(l->repo);
	free_const(l->branch);
	free_const(l->base_commit);
	free_const(l->best_commit);
	free_const(l->stop_reason);
	free_const(l->config_json);
	memset(l, 0, sizeof(*l));
}

static int fill_run(struct store *s, sqlite3_stmt *st, void *out)
{
	struct store_run *run = out;
	struct reader r = { st, 0 };
	int kind;

	memset(run, 0, sizeof(*run));
	run->id = r_int(&r);
	run->loop_id = r_int(&r);
	run->attempt_id = r_int(&r);
	if (r_name(s, &r, run_kind_names, ARRAY_SIZE(run_kind_names), "kind", "run", run->id,
		   &kind))
		return -1;
	run->kind = kind;
	run->commit_sha = r_text(&r);
	run->workload = r_text(&r);
	run->metric = r_text(&r);
	run->started_at = r_real(&r);
	run->finished_at = r_real(&r);
	run->profile_path = r_text(&r);
	run->brief_path = r_text(&r);
	run->summary_json = r_text(&r);
	return 0;
}

int store_run_get(struct store *s, int64_t id, struct store_run *out)
{
	sqlite3_bind_int64(s->stmt[ST_RUN_GET], 1, id);
	return get_one(s, s->stmt[ST_RUN_GET], out, fill_run);
}

void store_run_release(struct store_run *r)
{
	free_const(r->commit_sha);
	free_const(r->workload);
	free_const(r->metric);
	free_const(r->profile_path);
	free_const(r->brief_path);
	free_const(r->summary_json);
	memset(r, 0, sizeof(*r));
}

/*
 * Step a bound query into an array of records of 'size' bytes: 0, or -1
 * with an error (the records read so far released with 'release').
 */
static int get_list(struct store *s, sqlite3_stmt *st, size_t size,
		    int (*fill)(struct store *, sqlite3_stmt *, void *),
		    void (*release)(void *), void **out, size_t *nr)
{
	char *arr = NULL;
	size_t n = 0, alloc = 0;
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n + 1 > alloc) {
			alloc = alloc < 16 ? 16 : alloc * 2;
			arr = xrealloc(arr, alloc * size);
		}
		if (fill(s, st, arr + n * size)) {
			ret = -1;
			break;
		}
		n++;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = read_error(s);
	stmt_done(st);
	if (ret) {
		for (size_t i = 0; i < n; i++)
			release(arr + i * size);
		free(arr);
		arr = NULL;
		n = 0;
	}
	*out = arr;
	*nr = n;
	return ret;
}

static int fill_measurement(struct store *s, sqlite3_stmt *st, void *out)
{
	struct store_measurement *m = out;
	struct reader r = { st, 0 };
	int side;

	memset(m, 0, sizeof(*m));
	m->id = r_int(&r);
	m->run_id = r_int(&r);
	m->workload = r_text(&r);
	m->pair_index = r_int(&r);
	if (r_name(s, &r, side_names, ARRAY_SIZE(side_names), "side", "measurement", m->id,
		   &side)) {
		free_const(m->workload);
		return -1;
	}
	m->side = side;
	m->position = r_int(&r);
	m->warmup = r_int(&r) > 0;
	m->wall_s = r_real(&r);
	m->user_s = r_real(&r);
	m->sys_s = r_real(&r);
	m->cpu_s = r_real(&r);
	m->max_rss_kib = r_int(&r);
	m->instructions = r_int(&r);
	m->exit_status = r_int(&r);
	m->signal = r_int(&r);
	m->value = r_real(&r);
	m->created_at = r_real(&r);
	return 0;
}

static void release_measurement(void *p)
{
	struct store_measurement *m = p;

	free_const(m->workload);
}

int store_measurements_of_run(struct store *s, int64_t run_id,
			      struct store_measurement **out, size_t *nr)
{
	void *arr;
	int ret;

	sqlite3_bind_int64(s->stmt[ST_MEAS_OF_RUN], 1, run_id);
	ret = get_list(s, s->stmt[ST_MEAS_OF_RUN], sizeof(**out), fill_measurement,
		       release_measurement, &arr, nr);
	*out = arr;
	return ret;
}

void store_measurements_free(struct store_measurement *m, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		release_measurement(&m[i]);
	free(m);
}

/* reasons_json into a->reasons: an array of strings, else an error. */
static int parse_reasons(struct store *s, struct store_attempt *a, const char *text)
{
	json_error_t err;
	json_t *j = text ? json_loads(text, 0, &err) : json_array();
	size_t i;
	json_t *v;

	if (!j || !json_is_array(j)) {
		json_decref(j);
		return error("cannot read '%s': attempt %" PRId64 " has reasons that are not "
			     "a JSON array", s->path, a->id);
	}
	a->reasons = json_array_size(j) ? xcalloc(json_array_size(j), sizeof(char *)) : NULL;
	json_array_foreach(j, i, v) {
		if (!json_is_string(v)) {
			json_decref(j);
			return error("cannot read '%s': attempt %" PRId64 " has a reason that is "
				     "not a string", s->path, a->id);
		}
		a->reasons[a->nr_reasons++] = xstrdup(json_string_value(v));
	}
	json_decref(j);
	return 0;
}

static int fill_attempt(struct store *s, sqlite3_stmt *st, void *out)
{
	struct store_attempt *a = out;
	struct reader r = { st, 0 };
	const char *reasons = NULL;
	int verdict, stage;

	memset(a, 0, sizeof(*a));
	a->id = r_int(&r);
	a->loop_id = r_int(&r);
	a->round = r_int(&r);
	a->lens = r_text(&r);
	a->function = r_text(&r);
	a->hypothesis = r_text(&r);
	a->expected_gain_pct = r_real(&r);
	if (r_name(s, &r, verdict_kind_names, VERDICT_NR, "verdict", "attempt", a->id,
		   &verdict))
		goto out_release;
	a->verdict = verdict;
	reasons = r_text(&r);
	if (parse_reasons(s, a, reasons))
		goto out_release;
	if (r_name(s, &r, gate_stage_names, GATE_STAGE_NR, "stage", "attempt", a->id, &stage))
		goto out_release;
	a->stage = stage;
	a->change_pct = r_real(&r);
	a->ci_low_pct = r_real(&r);
	a->ci_high_pct = r_real(&r);
	a->diff = r_text(&r);
	a->commit_sha = r_text(&r);
	a->kb_slug = r_text(&r);
	a->agent_exit_status = r_int(&r);
	a->agent_seconds = r_real(&r);
	a->started_at = r_real(&r);
	a->finished_at = r_real(&r);
	free_const(reasons);
	return 0;
out_release:
	free_const(reasons);
	store_attempt_release(a);
	return -1;
}

static void release_attempt(void *p)
{
	store_attempt_release(p);
}

int store_attempts_of_loop(struct store *s, int64_t loop_id,
			   struct store_attempt **out, size_t *nr)
{
	void *arr;
	int ret;

	sqlite3_bind_int64(s->stmt[ST_ATTEMPTS_OF_LOOP], 1, loop_id);
	ret = get_list(s, s->stmt[ST_ATTEMPTS_OF_LOOP], sizeof(**out), fill_attempt,
		       release_attempt, &arr, nr);
	*out = arr;
	return ret;
}

void store_attempt_release(struct store_attempt *a)
{
	free_const(a->lens);
	free_const(a->function);
	free_const(a->hypothesis);
	for (size_t i = 0; i < a->nr_reasons; i++)
		free(a->reasons[i]);
	free(a->reasons);
	free_const(a->diff);
	free_const(a->commit_sha);
	free_const(a->kb_slug);
	memset(a, 0, sizeof(*a));
}

void store_attempts_free(struct store_attempt *a, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		store_attempt_release(&a[i]);
	free(a);
}

static int fill_activity(struct store *s, sqlite3_stmt *st, void *out)
{
	struct store_activity *a = out;
	struct reader r = { st, 0 };
	int level;

	memset(a, 0, sizeof(*a));
	a->id = r_int(&r);
	a->at = r_real(&r);
	a->loop_id = r_int(&r);
	if (r_name(s, &r, level_names, ARRAY_SIZE(level_names), "level", "activity", a->id, &level))
		return -1;
	a->level = level;
	a->kind = r_text(&r);
	a->message = r_text(&r);
	a->data_json = r_text(&r);
	return 0;
}

static void release_activity(void *p)
{
	struct store_activity *a = p;

	free_const(a->kind);
	free_const(a->message);
	free_const(a->data_json);
}

int store_activity_since(struct store *s, int64_t after, size_t limit,
			 struct store_activity **out, size_t *nr)
{
	sqlite3_stmt *st = s->stmt[ST_ACTIVITY_SINCE];
	void *arr;
	int ret;

	sqlite3_bind_int64(st, 1, after);
	sqlite3_bind_int64(st, 2, limit > INT64_MAX ? INT64_MAX : (int64_t)limit);
	ret = get_list(s, st, sizeof(**out), fill_activity, release_activity, &arr, nr);
	*out = arr;
	return ret;
}

void store_activities_free(struct store_activity *a, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		release_activity(&a[i]);
	free(a);
}

/* ---- JSON ----------------------------------------------------------------- */

static json_t *j_int(int64_t v)
{
	return v == STORE_NULL_INT ? json_null() : json_integer(v);
}

static json_t *j_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A *_json column: parsed, or as a string when it does not parse. */
static json_t *j_embedded(const char *text)
{
	json_t *j;

	if (!text)
		return json_null();
	j = json_loads(text, JSON_DECODE_ANY, NULL);
	return j ? j : json_text(text);
}

json_t *store_counts_json(const struct store_counts *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "loops", json_integer(c->loops));
	json_object_set_new(o, "runs", json_integer(c->runs));
	json_object_set_new(o, "measurements", json_integer(c->measurements));
	json_object_set_new(o, "attempts", json_integer(c->attempts));
	json_object_set_new(o, "activity", json_integer(c->activity));
	return o;
}

json_t *store_loop_json(const struct store_loop *l)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(l->id));
	json_object_set_new(o, "started_at", j_real(l->started_at));
	json_object_set_new(o, "finished_at", j_real(l->finished_at));
	json_object_set_new(o, "repo", json_text(l->repo));
	json_object_set_new(o, "branch", json_text(l->branch));
	json_object_set_new(o, "base_commit", json_text(l->base_commit));
	json_object_set_new(o, "best_commit", json_text(l->best_commit));
	json_object_set_new(o, "status", json_string(store_loop_status_name(l->status)));
	json_object_set_new(o, "stop_reason", json_text(l->stop_reason));
	json_object_set_new(o, "rounds_planned", j_int(l->rounds_planned));
	json_object_set_new(o, "config", j_embedded(l->config_json));
	return o;
}

static json_t *j_name(const char *name)
{
	return name ? json_string(name) : json_null();
}

json_t *store_attempt_json(const struct store_attempt *a, bool with_diff)
{
	json_t *o = json_object(), *reasons = json_array();

	for (size_t i = 0; i < a->nr_reasons; i++)
		json_array_append_new(reasons, json_text(a->reasons[i]));
	json_object_set_new(o, "id", json_integer(a->id));
	json_object_set_new(o, "loop_id", json_integer(a->loop_id));
	json_object_set_new(o, "round", j_int(a->round));
	json_object_set_new(o, "lens", json_text(a->lens));
	json_object_set_new(o, "function", json_text(a->function));
	json_object_set_new(o, "hypothesis", json_text(a->hypothesis));
	json_object_set_new(o, "expected_gain_pct", j_real(a->expected_gain_pct));
	json_object_set_new(o, "verdict", j_name(NAME_OF(verdict_kind_names, a->verdict)));
	json_object_set_new(o, "reasons", reasons);
	json_object_set_new(o, "stage", j_name(NAME_OF(gate_stage_names, a->stage)));
	json_object_set_new(o, "change_pct", j_real(a->change_pct));
	json_object_set_new(o, "ci_low_pct", j_real(a->ci_low_pct));
	json_object_set_new(o, "ci_high_pct", j_real(a->ci_high_pct));
	if (with_diff)
		json_object_set_new(o, "diff", json_text(a->diff));
	json_object_set_new(o, "commit_sha", json_text(a->commit_sha));
	json_object_set_new(o, "kb_slug", json_text(a->kb_slug));
	json_object_set_new(o, "agent_exit_status", j_int(a->agent_exit_status));
	json_object_set_new(o, "agent_seconds", j_real(a->agent_seconds));
	json_object_set_new(o, "started_at", j_real(a->started_at));
	json_object_set_new(o, "finished_at", j_real(a->finished_at));
	return o;
}
