/*
 * t-store.c: unit tests for the store: creating, reopening and migrating
 * (with a fake next version), refusing hostile and damaged files without
 * touching them, every writer and reader round-tripping its values, and
 * readers and writers in other connections and processes.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>
#include <sqlite3.h>

#include "util.h"
#include "strbuf.h"
#include "store.h"

static struct strbuf errors = STRBUF_INIT;

static void collect(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

struct fixture {
	char dir[64];
	char *db;		/* dir/sub/hotloop.db: its directory does not exist yet */
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/t-store.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->db = xstrfmt("%s/sub/hotloop.db", f->dir);
	strbuf_reset(&errors);
	set_error_routine(collect);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char *cmd = xstrfmt("rm -rf '%s'", f->dir);
	int rc = system(cmd);

	set_error_routine(NULL);
	free(cmd);
	free(f->db);
	free(f);
	return rc;
}

static void expect_error(const char *part)
{
	if (!strstr(errors.buf, part))
		fail_msg("expected '%s' in the errors:\n%s", part, errors.buf);
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write_full(fd, buf, len), 0);
	close(fd);
}

static void read_bytes(const char *path, struct strbuf *sb)
{
	strbuf_reset(sb);
	assert_int_equal(read_file(sb, path, 64 << 20), 0);
}

/* Run SQL on the file through a connection of our own (not the store's). */
static void raw_sql(const char *path, const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

static int64_t pragma(struct store *s, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	assert_int_equal(sqlite3_prepare_v2(store_sqlite(s), sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static const char *pragma_text(struct store *s, const char *sql, char *buf, size_t size)
{
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(store_sqlite(s), sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	snprintf(buf, size, "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

static int64_t add_loop(struct store *s)
{
	struct store_loop l = STORE_LOOP_INIT;
	int64_t id;

	l.repo = "/src/proj";
	l.branch = "hotloop/2024-05-01";
	l.base_commit = "0123456789abcdef0123456789abcdef01234567";
	l.rounds_planned = 5;
	assert_int_equal(store_loop_begin(s, &l, &id), 0);
	return id;
}

/* ---- opening and migrating -------------------------------------------------- */

/* the schema this hotloop writes; a fake migration comes after it */
#define CUR ((int)store_nr_migrations)

static void test_store__create_and_reopen(void **state)
{
	struct fixture *f = *state;
	struct store *s;
	struct stat st;
	char buf[32];

	assert_int_equal(store_open(f->db, &s), 0);
	assert_int_equal(store_version(s), CUR);
	assert_int_equal(store_version_found(s), 0);
	assert_string_equal(store_path(s), f->db);
	assert_string_equal(pragma_text(s, "PRAGMA journal_mode", buf, sizeof(buf)), "wal");
	assert_int_equal(pragma(s, "PRAGMA foreign_keys"), 1);
	assert_int_equal(pragma(s, "PRAGMA synchronous"), 1);	/* NORMAL */
	assert_int_equal(pragma(s, "PRAGMA busy_timeout"), STORE_BUSY_MS);
	assert_int_equal(pragma(s, "PRAGMA user_version"), CUR);
	assert_int_equal(pragma(s, "PRAGMA application_id"), 0x686f746c);
	add_loop(s);
	assert_int_equal(store_check(s), 0);
	store_close(s);
	assert_int_equal(stat(f->db, &st), 0);

	assert_int_equal(store_open(f->db, &s), 0);
	assert_int_equal(store_version(s), CUR);
	assert_int_equal(store_version_found(s), CUR);
	assert_int_equal(pragma(s, "SELECT count(*) FROM loops"), 1);
	store_close(s);
	assert_string_equal(errors.buf, "");
}

static void test_store__empty_file_is_new(void **state)
{
	struct fixture *f = *state;
	char *path = xstrfmt("%s/empty.db", f->dir);
	struct store *s;

	write_bytes(path, "", 0);
	assert_int_equal(store_open(path, &s), 0);
	assert_int_equal(store_version_found(s), 0);
	assert_int_equal(store_version(s), CUR);
	store_close(s);
	free(path);
}

static const char fake_v2_sql[] =
	"ALTER TABLE loops ADD COLUMN note TEXT;\n"
	"CREATE TABLE notes (id INTEGER PRIMARY KEY, loop_id INTEGER REFERENCES loops (id), "
	"text TEXT NOT NULL);\n"
	"INSERT INTO notes (loop_id, text) SELECT id, 'migrated' FROM loops;\n";

static void fake_list(struct store_migration *m, const char *v2)
{
	for (size_t i = 0; i < CUR; i++)
		m[i] = store_migrations[i];
	m[CUR] = (struct store_migration){ "add notes", v2 };
}

static void test_store__migrate_to_fake_v2(void **state)
{
	struct fixture *f = *state;
	char msg[128];
	struct store_migration m[CUR + 1];
	struct store_loop l;
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;
	struct store *s;
	int64_t id;

	fake_list(m, fake_v2_sql);
	assert_int_equal(store_open(f->db, &s), 0);
	id = add_loop(s);
	store_close(s);

	/* v1 to v2: the loop is kept, the new column and table are there */
	assert_int_equal(store_open_migrations(f->db, m, CUR + 1, &s), 0);
	assert_int_equal(store_version_found(s), CUR);
	assert_int_equal(store_version(s), CUR + 1);
	assert_int_equal(pragma(s, "PRAGMA user_version"), CUR + 1);
	assert_int_equal(pragma(s, "SELECT count(*) FROM loops WHERE note IS NULL"), 1);
	assert_int_equal(pragma(s, "SELECT count(*) FROM notes WHERE text = 'migrated'"), 1);
	assert_int_equal(store_loop_get(s, id, &l), 1);
	assert_string_equal(l.repo, "/src/proj");
	store_loop_release(&l);
	store_close(s);

	/* this hotloop knows only v1: refused, and the file left alone */
	read_bytes(f->db, &before);
	assert_int_equal(store_open(f->db, &s), -1);
	assert_null(s);
	snprintf(msg, sizeof(msg), "written by a newer hotloop: schema %d, this one knows %d", CUR + 1, CUR);
	expect_error(msg);
	expect_error(f->db);
	read_bytes(f->db, &after);
	assert_true(before.len == after.len && !memcmp(before.buf, after.buf, before.len));
	strbuf_release(&before);
	strbuf_release(&after);
}

static void test_store__migrate_empty_to_fake_v2(void **state)
{
	struct fixture *f = *state;
	struct store_migration m[CUR + 1];
	struct store *s;

	fake_list(m, fake_v2_sql);
	assert_int_equal(store_open_migrations(f->db, m, CUR + 1, &s), 0);
	assert_int_equal(store_version_found(s), 0);
	assert_int_equal(store_version(s), CUR + 1);
	assert_int_equal(pragma(s, "SELECT count(*) FROM notes"), 0);
	add_loop(s);
	store_close(s);
}

static void test_store__failed_migration_rolls_back(void **state)
{
	struct fixture *f = *state;
	char msg[128];
	struct store_migration m[CUR + 1];
	struct store *s;

	assert_int_equal(store_open(f->db, &s), 0);
	add_loop(s);
	store_close(s);

	fake_list(m, "CREATE TABLE half (x);\nINSERT INTO nowhere VALUES (1);\n");
	assert_int_equal(store_open_migrations(f->db, m, CUR + 1, &s), -1);
	expect_error("cannot migrate");
	snprintf(msg, sizeof(msg), "to schema %d (add notes)", CUR + 1);
	expect_error(msg);

	/* a migration that breaks a foreign key is refused too */
	fake_list(m, "INSERT INTO attempts (loop_id, round, started_at, updated_at) VALUES (99, 1, 0, 0);\n");
	strbuf_reset(&errors);
	assert_int_equal(store_open_migrations(f->db, m, CUR + 1, &s), -1);
	expect_error("refers to a missing one in 'loops'");

	assert_int_equal(store_open(f->db, &s), 0);
	assert_int_equal(store_version_found(s), CUR);
	assert_int_equal(pragma(s, "SELECT count(*) FROM sqlite_schema WHERE name = 'half'"), 0);
	assert_int_equal(pragma(s, "SELECT count(*) FROM attempts"), 0);
	assert_int_equal(pragma(s, "SELECT count(*) FROM loops"), 1);
	store_close(s);
}

static void test_store__newer_schema_refused(void **state)
{
	struct fixture *f = *state;
	char msg[128];
	struct store *s;

	assert_int_equal(store_open(f->db, &s), 0);
	store_close(s);
	raw_sql(f->db, "PRAGMA user_version = 7");
	assert_int_equal(store_open(f->db, &s), -1);
	assert_null(s);
	snprintf(msg, sizeof(msg), "written by a newer hotloop: schema 7, this one knows %d", CUR);
	expect_error(msg);
}

/* A store of schema 1 with an attempt: migrated on open, the attempt kept, the integrity stage allowed. */
static void test_store__v1_gains_the_integrity_stage(void **state)
{
	struct fixture *f = *state;
	struct store_attempt a = STORE_ATTEMPT_INIT, *got;
	struct store *s;
	int64_t loop, id;
	size_t n;

	assert_int_equal(store_open_migrations(f->db, store_migrations, 1, &s), 0);
	loop = add_loop(s);
	a.loop_id = loop;
	a.round = 1;
	a.verdict = VERDICT_REJECT;
	a.stage = GATE_STAGE_COMPARE;
	assert_int_equal(store_attempt_add(s, &a, &id), 0);
	a.stage = GATE_STAGE_INTEGRITY;
	assert_int_equal(store_attempt_add(s, &a, NULL), -1);
	expect_error("CHECK constraint failed");
	store_close(s);

	strbuf_reset(&errors);
	assert_int_equal(store_open(f->db, &s), 0);
	assert_int_equal(store_version_found(s), 1);
	assert_int_equal(store_version(s), CUR);
	assert_int_equal(store_attempt_add(s, &a, NULL), 0);
	assert_int_equal(store_attempts_of_loop(s, loop, &got, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(got[0].id, id);
	assert_int_equal(got[0].stage, GATE_STAGE_COMPARE);
	assert_int_equal(got[1].stage, GATE_STAGE_INTEGRITY);
	store_attempts_free(got, n);
	assert_int_equal(pragma(s, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	assert_int_equal(pragma(s, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'attempts%'"), 4);
	assert_int_equal(store_check(s), 0);
	store_close(s);
	assert_string_equal(errors.buf, "");
}

/* ---- hostile and damaged files ---------------------------------------------- */

static void make_foreign(const char *path, const char *sql)
{
	raw_sql(path, sql);
}

static const struct hostile {
	const char *what;
	const char *bytes;		/* the file's content; NULL: made by 'sql' */
	size_t len;
	const char *sql;		/* SQL run on a new database */
	const char *want;		/* in the error */
} hostile[] = {
	{ "text", "this is not a database, only a text that is long enough to fill an "
	  "SQLite header and then some more\n", 100, NULL, "file is not a database" },
	{ "one byte", "S", 1, NULL, "shorter than an SQLite header" },
	{ "the magic, then nothing sensible",
	  "SQLite format 3\0\xff\xff\x7f\x7f\x01\x02\x03\x04 and then garbage............"
	  "...............................................................", 100, NULL,
	  "it is not a hotloop store, or it is damaged" },
	{ "a page of 0xff", NULL, 0, NULL, "file is not a database" },
	{ "another program's database", NULL, 0,
	  "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)",
	  "not a hotloop store (it holds tables and no hotloop schema version)" },
	{ "another program's versioned database", NULL, 0,
	  "PRAGMA user_version = 3; CREATE TABLE t (x)", "not a hotloop store (application id 0x00000000)" },
	{ "another application id", NULL, 0, "PRAGMA application_id = 42",
	  "not a hotloop store (application id 0x0000002a)" },
	{ "our id without the tables", NULL, 0,
	  "PRAGMA application_id = 1752134764; PRAGMA user_version = 1",
	  "it does not hold hotloop's schema 1: no such table" },
	{ "our id and a negative version", NULL, 0,
	  "PRAGMA application_id = 1752134764; PRAGMA user_version = -3",
	  "bad schema version -3" },
	{ "our tables with a column missing", NULL, 0,
	  "PRAGMA application_id = 1752134764; PRAGMA user_version = 1;"
	  "CREATE TABLE loops (id INTEGER PRIMARY KEY)", "does not hold hotloop's schema 1" },
};

static void test_store__hostile_files_refused(void **state)
{
	struct fixture *f = *state;
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		const struct hostile *h = &hostile[i];
		char *path = xstrfmt("%s/hostile-%zu.db", f->dir, i);
		struct store *s = (struct store *)1;

		if (h->sql) {
			make_foreign(path, h->sql);
		} else if (h->bytes) {
			write_bytes(path, h->bytes, h->len);
		} else {
			char page[4096];

			memset(page, 0xff, sizeof(page));
			write_bytes(path, page, sizeof(page));
		}
		read_bytes(path, &before);
		strbuf_reset(&errors);
		if (store_open(path, &s) != -1)
			fail_msg("%s: opened", h->what);
		assert_null(s);
		if (!strstr(errors.buf, h->want) || !strstr(errors.buf, path))
			fail_msg("%s: expected '%s' and the path in:\n%s", h->what, h->want, errors.buf);
		read_bytes(path, &after);
		if (before.len != after.len || memcmp(before.buf, after.buf, before.len))
			fail_msg("%s: the file was changed", h->what);
		free(path);
	}
	strbuf_release(&before);
	strbuf_release(&after);
}

static void test_store__directory_refused(void **state)
{
	struct fixture *f = *state;
	char *file = xstrfmt("%s/plain", f->dir), *under = xstrfmt("%s/plain/x.db", f->dir);
	struct store *s;

	assert_int_equal(store_open(f->dir, &s), -1);
	expect_error("it is a directory");
	write_bytes(file, "x", 1);
	assert_int_equal(store_open(under, &s), -1);
	expect_error(under);
	free(file);
	free(under);
}

/* A store of several pages, closed (its WAL checkpointed into the file). */
static void fill_store(const char *path, struct strbuf *bytes)
{
	struct store *s;
	int64_t loop;

	assert_int_equal(store_open(path, &s), 0);
	loop = add_loop(s);
	assert_int_equal(store_begin(s), 0);
	for (int i = 0; i < 400; i++)
		assert_int_equal(store_activity(s, loop, STORE_INFO, "round-start",
						"{\"round\": 1}", "line %d of the feed, padded "
						"to take some room on the page", i), 0);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	read_bytes(path, bytes);
	assert_true(bytes->len >= 8 * 4096);
}

/* Damage that open or the check must report (never a crash, never a clean bill). */
static void expect_damage_found(const char *path, const char *what)
{
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;
	struct store *s;
	bool found;

	strbuf_reset(&errors);
	read_bytes(path, &before);
	if (store_open(path, &s)) {
		found = true;
		read_bytes(path, &after);
		if (before.len != after.len || memcmp(before.buf, after.buf, before.len))
			fail_msg("%s: refused, but the file was changed", what);
	} else {
		struct store_counts c;
		struct store_activity *a;
		size_t n;

		found = store_check(s) < 0;
		/* reading what is left must fail or succeed cleanly */
		if (!store_counts(s, &c) && !store_activity_since(s, 0, SIZE_MAX, &a, &n))
			store_activities_free(a, n);
		store_close(s);
	}
	if (!found)
		fail_msg("%s: the damage went unnoticed", what);
	if (!strstr(errors.buf, path))
		fail_msg("%s: the error does not name the file:\n%s", what, errors.buf);
	strbuf_release(&before);
	strbuf_release(&after);
}

static void test_store__truncated_files(void **state)
{
	struct fixture *f = *state;
	struct strbuf whole = STRBUF_INIT;
	char *path = xstrfmt("%s/cut.db", f->dir);
	size_t sizes[] = { 1, 16, 50, 99, 100, 101, 512, 4095, 4096, 4097, 8192, 0, 0, 0 };
	size_t n = ARRAY_SIZE(sizes);

	fill_store(f->db, &whole);
	sizes[n - 3] = whole.len / 2;
	sizes[n - 2] = whole.len - 4096;
	sizes[n - 1] = whole.len - 1;
	for (size_t i = 0; i < n; i++) {
		char what[64];

		snprintf(what, sizeof(what), "cut to %zu of %zu bytes", sizes[i], whole.len);
		write_bytes(path, whole.buf, sizes[i]);
		expect_damage_found(path, what);
	}
	strbuf_release(&whole);
	free(path);
}

static void test_store__damaged_pages(void **state)
{
	struct fixture *f = *state;
	struct strbuf whole = STRBUF_INIT;
	char *path = xstrfmt("%s/damaged.db", f->dir);
	size_t pages;

	fill_store(f->db, &whole);
	pages = whole.len / 4096;
	for (size_t p = 0; p < pages; p++) {
		struct strbuf copy = STRBUF_INIT;
		char what[64];

		strbuf_add(&copy, whole.buf, whole.len);
		/* keep page 1's first 100 bytes (the header): damage the rest */
		for (size_t k = p ? 0 : 100; k < 4096; k++)
			copy.buf[p * 4096 + k] = (char)(0x5a ^ (k * 7));
		write_bytes(path, copy.buf, copy.len);
		snprintf(what, sizeof(what), "page %zu of %zu overwritten", p + 1, pages);
		expect_damage_found(path, what);
		strbuf_release(&copy);
	}
	strbuf_release(&whole);
	free(path);
}

/* ---- round trips ------------------------------------------------------------ */

#define QUOTED "it's \"quoted\"; DROP TABLE loops; -- \xc3\xa9t\xc3\xa9"

static void test_store__loop_round_trip(void **state)
{
	struct fixture *f = *state;
	struct store_loop l = STORE_LOOP_INIT, got;
	struct store *s;
	int64_t id, id2;
	double before = store_now();

	assert_int_equal(store_open(f->db, &s), 0);
	assert_int_equal(store_last_loop(s, &got), 0);
	l.repo = "/src/" QUOTED;
	l.branch = "hotloop/2024-05-01";
	l.base_commit = "abc";
	l.rounds_planned = 12;
	l.config_json = "{\"improve\": {\"rounds\": 12, \"note\": \"" "it's" "\"}}";
	assert_int_equal(store_loop_begin(s, &l, &id), 0);
	assert_int_equal(store_loop_get(s, id, &got), 1);
	assert_int_equal(got.id, id);
	assert_true(got.started_at >= before - 0.001 && got.started_at <= store_now() + 0.001);
	assert_true(isnan(got.finished_at));
	assert_string_equal(got.repo, "/src/" QUOTED);
	assert_string_equal(got.branch, "hotloop/2024-05-01");
	assert_string_equal(got.base_commit, "abc");
	assert_null(got.best_commit);
	assert_int_equal(got.status, STORE_LOOP_RUNNING);
	assert_null(got.stop_reason);
	assert_int_equal(got.rounds_planned, 12);
	assert_string_equal(got.config_json, l.config_json);
	store_loop_release(&got);

	assert_int_equal(store_loop_set_best(s, id, "def"), 0);
	assert_int_equal(store_loop_end(s, id, STORE_LOOP_STOPPED, "two rounds without a keep"), 0);
	assert_int_equal(store_loop_get(s, id, &got), 1);
	assert_string_equal(got.best_commit, "def");
	assert_int_equal(got.status, STORE_LOOP_STOPPED);
	assert_string_equal(got.stop_reason, "two rounds without a keep");
	assert_true(got.finished_at >= got.started_at);
	store_loop_release(&got);

	/* given times and a second loop: the last one is the newest */
	l.started_at = 1700000000.125;
	l.finished_at = 1700000100.5;
	l.status = STORE_LOOP_KILLED;
	l.config_json = NULL;
	assert_int_equal(store_loop_begin(s, &l, &id2), 0);
	assert_true(id2 > id);
	assert_int_equal(store_last_loop(s, &got), 1);
	assert_int_equal(got.id, id2);
	assert_true(got.started_at == 1700000000.125);
	assert_true(got.finished_at == 1700000100.5);
	assert_int_equal(got.status, STORE_LOOP_KILLED);
	assert_null(got.config_json);
	store_loop_release(&got);

	/* errors: no such loop, bad JSON, a NOT NULL column left NULL */
	assert_int_equal(store_loop_get(s, 999, &got), 0);
	assert_int_equal(store_loop_end(s, 999, STORE_LOOP_FINISHED, NULL), -1);
	expect_error("no row 999 in loops");
	l.config_json = "{not json";
	assert_int_equal(store_loop_begin(s, &l, NULL), -1);
	expect_error("the loop's config is not valid JSON");
	l.config_json = NULL;
	l.repo = NULL;
	assert_int_equal(store_loop_begin(s, &l, NULL), -1);
	expect_error("NOT NULL constraint failed: loops.repo");
	expect_error("cannot write to '");
	store_close(s);
}

static void test_store__run_round_trip(void **state)
{
	struct fixture *f = *state;
	struct store_run r = STORE_RUN_INIT, got;
	struct store *s;
	int64_t loop, id, id2;

	assert_int_equal(store_open(f->db, &s), 0);
	loop = add_loop(s);
	r.loop_id = loop;
	r.kind = STORE_RUN_COMPARE;
	r.commit_sha = "c0ffee";
	r.workload = "big";
	r.metric = "cpu";
	r.brief_path = "/tmp/" QUOTED;
	assert_int_equal(store_run_add(s, &r, &id), 0);
	assert_int_equal(store_run_get(s, id, &got), 1);
	assert_int_equal(got.loop_id, loop);
	assert_int_equal(got.attempt_id, STORE_NULL_INT);
	assert_int_equal(got.kind, STORE_RUN_COMPARE);
	assert_string_equal(got.commit_sha, "c0ffee");
	assert_string_equal(got.workload, "big");
	assert_string_equal(got.metric, "cpu");
	assert_true(got.started_at > 0);
	assert_true(isnan(got.finished_at));
	assert_null(got.profile_path);
	assert_string_equal(got.brief_path, "/tmp/" QUOTED);
	assert_null(got.summary_json);
	store_run_release(&got);

	/* finishing keeps what it is not given */
	assert_int_equal(store_run_finish(s, id, "/runs/1/profile.pb.gz", NULL, "{\"pairs\": 12}"), 0);
	assert_int_equal(store_run_get(s, id, &got), 1);
	assert_false(isnan(got.finished_at));
	assert_string_equal(got.profile_path, "/runs/1/profile.pb.gz");
	assert_string_equal(got.brief_path, "/tmp/" QUOTED);
	assert_string_equal(got.summary_json, "{\"pairs\": 12}");
	store_run_release(&got);

	/* outside a loop, everything optional NULL */
	r = (struct store_run)STORE_RUN_INIT;
	r.kind = STORE_RUN_RUN;
	assert_int_equal(store_run_add(s, &r, &id2), 0);
	assert_int_equal(store_run_get(s, id2, &got), 1);
	assert_int_equal(got.loop_id, STORE_NULL_INT);
	assert_int_equal(got.kind, STORE_RUN_RUN);
	assert_null(got.commit_sha);
	assert_null(got.workload);
	assert_null(got.metric);
	store_run_release(&got);

	assert_int_equal(store_run_get(s, 999, &got), 0);
	assert_int_equal(store_run_finish(s, 999, NULL, NULL, NULL), -1);
	expect_error("no row 999 in runs");
	r.loop_id = 999;
	assert_int_equal(store_run_add(s, &r, NULL), -1);
	expect_error("FOREIGN KEY constraint failed");
	store_close(s);
}

static void measurement(struct store_measurement *m, int64_t run, int64_t pair,
			enum store_side side, int64_t pos)
{
	*m = (struct store_measurement)STORE_MEASUREMENT_INIT;
	m->run_id = run;
	m->workload = "big";
	m->pair_index = pair;
	m->side = side;
	m->position = pos;
	m->wall_s = 0.5 + pair;
	m->user_s = 0.25;
	m->sys_s = 0.125;
	m->cpu_s = 0.375;
	m->max_rss_kib = 2048;
	m->exit_status = 0;
	m->value = 0.375 + pair / 1024.0;
}

static void test_store__measurement_round_trip(void **state)
{
	struct fixture *f = *state;
	struct store_run r = STORE_RUN_INIT;
	struct store_measurement m, batch[6], *got;
	struct store *s;
	size_t n;
	int64_t run, id;

	assert_int_equal(store_open(f->db, &s), 0);
	r.kind = STORE_RUN_COMPARE;
	assert_int_equal(store_run_add(s, &r, &run), 0);

	/* a warm-up outside any pair, killed by a signal, nothing measured */
	m = (struct store_measurement)STORE_MEASUREMENT_INIT;
	m.run_id = run;
	m.workload = QUOTED;
	m.warmup = true;
	m.signal = 9;
	m.created_at = 1700000000.001;
	assert_int_equal(store_measurement_add(s, &m, &id), 0);

	for (size_t i = 0; i < ARRAY_SIZE(batch); i++)
		measurement(&batch[i], run, (int64_t)i / 2, i % 2 ? STORE_SIDE_CAND : STORE_SIDE_BASE,
			    (int64_t)i % 2);
	batch[5].instructions = 123456789012LL;
	assert_int_equal(store_measurements_add(s, batch, ARRAY_SIZE(batch)), 0);

	assert_int_equal(store_measurements_of_run(s, run, &got, &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(got[0].id, id);
	assert_string_equal(got[0].workload, QUOTED);
	assert_true(got[0].warmup);
	assert_int_equal(got[0].pair_index, STORE_NULL_INT);
	assert_int_equal(got[0].side, STORE_SIDE_NONE);
	assert_int_equal(got[0].position, STORE_NULL_INT);
	assert_true(isnan(got[0].wall_s) && isnan(got[0].user_s) && isnan(got[0].sys_s));
	assert_true(isnan(got[0].cpu_s) && isnan(got[0].value));
	assert_int_equal(got[0].max_rss_kib, STORE_NULL_INT);
	assert_int_equal(got[0].instructions, STORE_NULL_INT);
	assert_int_equal(got[0].exit_status, STORE_NULL_INT);
	assert_int_equal(got[0].signal, 9);
	assert_true(got[0].created_at == 1700000000.001);
	for (size_t i = 0; i < ARRAY_SIZE(batch); i++) {
		const struct store_measurement *g = &got[i + 1], *w = &batch[i];

		assert_true(g->id > got[i].id);
		assert_int_equal(g->run_id, run);
		assert_string_equal(g->workload, "big");
		assert_int_equal(g->pair_index, w->pair_index);
		assert_int_equal(g->side, w->side);
		assert_int_equal(g->position, w->position);
		assert_false(g->warmup);
		assert_true(g->wall_s == w->wall_s && g->user_s == w->user_s);
		assert_true(g->sys_s == w->sys_s && g->cpu_s == w->cpu_s && g->value == w->value);
		assert_int_equal(g->max_rss_kib, 2048);
		assert_int_equal(g->instructions, w->instructions);
		assert_int_equal(g->exit_status, 0);
		assert_int_equal(g->signal, STORE_NULL_INT);
		assert_true(g->created_at > 0);
	}
	store_measurements_free(got, n);

	/* a batch with one bad row adds nothing */
	batch[3].run_id = 999;
	assert_int_equal(store_measurements_add(s, batch, ARRAY_SIZE(batch)), -1);
	expect_error("FOREIGN KEY constraint failed");
	batch[3].run_id = run;
	batch[4].position = 2;
	assert_int_equal(store_measurements_add(s, batch, ARRAY_SIZE(batch)), -1);
	expect_error("CHECK constraint failed");
	assert_int_equal(pragma(s, "SELECT count(*) FROM measurements"), 7);

	/* ... also inside the caller's transaction, which goes on */
	assert_int_equal(store_begin(s), 0);
	assert_int_equal(store_measurement_add(s, &m, NULL), 0);
	assert_int_equal(store_measurements_add(s, batch, ARRAY_SIZE(batch)), -1);
	batch[4].position = 0;
	assert_int_equal(store_measurements_add(s, batch, 2), 0);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(pragma(s, "SELECT count(*) FROM measurements"), 10);

	assert_int_equal(store_measurements_of_run(s, 999, &got, &n), 0);
	assert_int_equal(n, 0);
	store_measurements_free(got, n);
	store_close(s);
}

static void test_store__attempt_round_trip(void **state)
{
	struct fixture *f = *state;
	struct store_attempt a = STORE_ATTEMPT_INIT, b = STORE_ATTEMPT_INIT, *got;
	char *reasons[] = { "cpu -4.2% [-5.1%, -3.3%]", QUOTED, "bad \xff byte", "" };
	struct store *s;
	int64_t loop, id, id2;
	size_t n;

	assert_int_equal(store_open(f->db, &s), 0);
	loop = add_loop(s);

	a.loop_id = loop;
	a.round = 2;
	a.lens = "allocation";
	a.function = "tokenize";
	a.hypothesis = QUOTED;
	a.expected_gain_pct = 5;
	assert_int_equal(store_attempt_add(s, &a, &id), 0);
	b.loop_id = loop;
	b.round = 1;
	b.verdict = VERDICT_NO_CANDIDATE;
	b.finished_at = 1700000001.5;
	b.started_at = 1700000000.25;
	assert_int_equal(store_attempt_add(s, &b, &id2), 0);

	/* the decision comes later */
	a.id = id;
	a.verdict = VERDICT_KEEP;
	a.reasons = reasons;
	a.nr_reasons = ARRAY_SIZE(reasons);
	a.stage = GATE_STAGE_COMPARE;
	a.change_pct = -4.2;
	a.ci_low_pct = -5.1;
	a.ci_high_pct = -3.3;
	a.diff = "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-'a'\n+\"b\"\n";
	a.commit_sha = "feed";
	a.kb_slug = "tokenize-reserve";
	a.agent_exit_status = 0;
	a.agent_seconds = 41.5;
	a.finished_at = store_now();
	assert_int_equal(store_attempt_update(s, &a), 0);

	assert_int_equal(store_attempts_of_loop(s, loop, &got, &n), 0);
	assert_int_equal(n, 2);
	/* by round */
	assert_int_equal(got[0].id, id2);
	assert_int_equal(got[0].round, 1);
	assert_int_equal(got[0].verdict, VERDICT_NO_CANDIDATE);
	assert_int_equal(got[0].stage, GATE_STAGE_NONE);
	assert_int_equal(got[0].nr_reasons, 0);
	assert_null(got[0].lens);
	assert_null(got[0].function);
	assert_null(got[0].diff);
	assert_null(got[0].commit_sha);
	assert_true(isnan(got[0].expected_gain_pct) && isnan(got[0].change_pct));
	assert_true(isnan(got[0].ci_low_pct) && isnan(got[0].ci_high_pct));
	assert_true(isnan(got[0].agent_seconds));
	assert_int_equal(got[0].agent_exit_status, STORE_NULL_INT);
	assert_true(got[0].started_at == 1700000000.25);
	assert_true(got[0].finished_at == 1700000001.5);

	assert_int_equal(got[1].id, id);
	assert_int_equal(got[1].loop_id, loop);
	assert_int_equal(got[1].round, 2);
	assert_string_equal(got[1].lens, "allocation");
	assert_string_equal(got[1].function, "tokenize");
	assert_string_equal(got[1].hypothesis, QUOTED);
	assert_true(got[1].expected_gain_pct == 5);
	assert_int_equal(got[1].verdict, VERDICT_KEEP);
	assert_int_equal(got[1].nr_reasons, 4);
	assert_string_equal(got[1].reasons[0], reasons[0]);
	assert_string_equal(got[1].reasons[1], QUOTED);
	assert_string_equal(got[1].reasons[2], "bad \xef\xbf\xbd byte");
	assert_string_equal(got[1].reasons[3], "");
	assert_int_equal(got[1].stage, GATE_STAGE_COMPARE);
	assert_true(got[1].change_pct == -4.2 && got[1].ci_low_pct == -5.1);
	assert_true(got[1].ci_high_pct == -3.3);
	assert_string_equal(got[1].diff, a.diff);
	assert_string_equal(got[1].commit_sha, "feed");
	assert_string_equal(got[1].kb_slug, "tokenize-reserve");
	assert_int_equal(got[1].agent_exit_status, 0);
	assert_true(got[1].agent_seconds == 41.5);
	assert_true(got[1].finished_at == a.finished_at);
	assert_true(got[1].started_at > 0 && got[1].started_at <= got[1].finished_at);

	/* the JSON form has every key with its type */
	{
		json_t *j = store_attempt_json(&got[1], false);

		assert_string_equal(json_string_value(json_object_get(j, "verdict")), "keep");
		assert_string_equal(json_string_value(json_object_get(j, "stage")), "compare");
		assert_int_equal(json_array_size(json_object_get(j, "reasons")), 4);
		assert_true(json_is_real(json_object_get(j, "change_pct")));
		assert_true(json_is_integer(json_object_get(j, "round")));
		assert_string_equal(json_string_value(json_object_get(j, "commit_sha")), "feed");
		assert_null(json_object_get(j, "diff"));
		json_decref(j);
		j = store_attempt_json(&got[0], true);
		assert_string_equal(json_string_value(json_object_get(j, "verdict")), "no-candidate");
		assert_true(json_is_null(json_object_get(j, "stage")));
		assert_true(json_is_null(json_object_get(j, "change_pct")));
		assert_true(json_is_null(json_object_get(j, "diff")));
		json_decref(j);
	}
	store_attempts_free(got, n);

	/* an update with started_at 0 keeps the start */
	b.id = id2;
	b.started_at = 0;
	b.verdict = VERDICT_ERROR;
	assert_int_equal(store_attempt_update(s, &b), 0);
	assert_int_equal(store_attempts_of_loop(s, loop, &got, &n), 0);
	assert_true(got[0].started_at == 1700000000.25);
	assert_int_equal(got[0].verdict, VERDICT_ERROR);
	store_attempts_free(got, n);

	b.id = 999;
	assert_int_equal(store_attempt_update(s, &b), -1);
	expect_error("no row 999 in attempts");
	b.loop_id = 999;
	assert_int_equal(store_attempt_add(s, &b, NULL), -1);
	expect_error("FOREIGN KEY constraint failed");
	assert_int_equal(store_attempts_of_loop(s, 999, &got, &n), 0);
	assert_int_equal(n, 0);
	store_attempts_free(got, n);
	store_close(s);
}

static void test_store__activity_feed(void **state)
{
	struct fixture *f = *state;
	struct store_activity *a;
	struct store *s;
	int64_t loop;
	size_t n;

	assert_int_equal(store_open(f->db, &s), 0);
	loop = add_loop(s);
	assert_int_equal(store_activity(s, loop, STORE_INFO, "round-start", NULL,
					"round %d of %d: %s", 1, 5, QUOTED), 0);
	assert_int_equal(store_activity(s, STORE_NULL_INT, STORE_WARN, "build-failed",
					"{\"status\": 2, \"tail\": [\"x\"]}", "build failed"), 0);
	assert_int_equal(store_activity(s, loop, STORE_ERROR, "verdict", "[]", "%s", "%d"), 0);

	assert_int_equal(store_activity_since(s, 0, SIZE_MAX, &a, &n), 0);
	assert_int_equal(n, 3);
	assert_true(a[0].id < a[1].id && a[1].id < a[2].id);
	assert_int_equal(a[0].loop_id, loop);
	assert_int_equal(a[0].level, STORE_INFO);
	assert_string_equal(a[0].kind, "round-start");
	assert_string_equal(a[0].message, "round 1 of 5: " QUOTED);
	assert_null(a[0].data_json);
	assert_true(a[0].at > 1e9 && a[0].at <= a[1].at);
	/* to the millisecond */
	assert_true(fabs(a[0].at * 1000 - round(a[0].at * 1000)) < 1e-3);
	assert_int_equal(a[1].loop_id, STORE_NULL_INT);
	assert_int_equal(a[1].level, STORE_WARN);
	assert_string_equal(a[1].data_json, "{\"status\": 2, \"tail\": [\"x\"]}");
	assert_int_equal(a[2].level, STORE_ERROR);
	assert_string_equal(a[2].message, "%d");
	store_activities_free(a, n);

	/* since an id, with a limit */
	assert_int_equal(store_activity_since(s, 1, 1, &a, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].id, 2);
	store_activities_free(a, n);
	assert_int_equal(store_activity_since(s, 3, 10, &a, &n), 0);
	assert_int_equal(n, 0);
	store_activities_free(a, n);

	assert_int_equal(store_activity(s, loop, STORE_INFO, "x", "{\"a\": ", "m"), -1);
	expect_error("the activity's data is not valid JSON");
	store_close(s);
}

static void test_store__counts_and_json(void **state)
{
	struct fixture *f = *state;
	struct store_run r = STORE_RUN_INIT;
	struct store_attempt a = STORE_ATTEMPT_INIT;
	struct store_measurement m;
	struct store_counts c;
	struct store_loop l;
	struct store *s;
	json_t *j;

	assert_int_equal(store_open(f->db, &s), 0);
	assert_int_equal(store_counts(s, &c), 0);
	assert_true(!c.loops && !c.runs && !c.measurements && !c.attempts && !c.activity);
	a.loop_id = add_loop(s);
	add_loop(s);
	r.kind = STORE_RUN_BASELINE;
	assert_int_equal(store_run_add(s, &r, &r.id), 0);
	measurement(&m, r.id, 0, STORE_SIDE_BASE, 0);
	assert_int_equal(store_measurement_add(s, &m, NULL), 0);
	assert_int_equal(store_measurement_add(s, &m, NULL), 0);
	assert_int_equal(store_measurement_add(s, &m, NULL), 0);
	assert_int_equal(store_attempt_add(s, &a, NULL), 0);
	assert_int_equal(store_activity(s, STORE_NULL_INT, STORE_INFO, "k", NULL, "m"), 0);
	assert_int_equal(store_counts(s, &c), 0);
	assert_int_equal(c.loops, 2);
	assert_int_equal(c.runs, 1);
	assert_int_equal(c.measurements, 3);
	assert_int_equal(c.attempts, 1);
	assert_int_equal(c.activity, 1);
	j = store_counts_json(&c);
	assert_int_equal(json_integer_value(json_object_get(j, "measurements")), 3);
	json_decref(j);

	assert_int_equal(store_last_loop(s, &l), 1);
	j = store_loop_json(&l);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 2);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "running");
	assert_true(json_is_real(json_object_get(j, "started_at")));
	assert_true(json_is_null(json_object_get(j, "finished_at")));
	assert_true(json_is_null(json_object_get(j, "best_commit")));
	assert_true(json_is_null(json_object_get(j, "config")));
	assert_int_equal(json_integer_value(json_object_get(j, "rounds_planned")), 5);
	json_decref(j);
	store_loop_release(&l);
	store_close(s);
}

/* A value the C API cannot write, put there by another program. */
static void test_store__unknown_names_refused(void **state)
{
	struct fixture *f = *state;
	struct store_attempt *a;
	struct store_activity *act;
	struct store_loop l;
	struct store *s;
	size_t n;

	assert_int_equal(store_open(f->db, &s), 0);
	add_loop(s);
	store_close(s);
	raw_sql(f->db, "INSERT INTO attempts (loop_id, round, reasons_json, started_at, updated_at) "
		"VALUES (1, 1, '{\"not\": \"an array\"}', 0, 0)");
	assert_int_equal(store_open(f->db, &s), 0);
	assert_int_equal(store_attempts_of_loop(s, 1, &a, &n), -1);
	assert_null(a);
	assert_int_equal(n, 0);
	expect_error("attempt 1 has reasons that are not a JSON array");
	store_close(s);

	raw_sql(f->db, "PRAGMA ignore_check_constraints = 1;"
		"UPDATE attempts SET reasons_json = '[\"fine\", 3]';"
		"INSERT INTO attempts (loop_id, round, verdict, started_at, updated_at) "
		"VALUES (1, 2, 'maybe', 0, 0);"
		"UPDATE loops SET status = 'paused';"
		"INSERT INTO activity (at, level, kind, message) VALUES (0, 'debug', 'k', 'm')");
	assert_int_equal(store_open(f->db, &s), 0);
	strbuf_reset(&errors);
	assert_int_equal(store_attempts_of_loop(s, 1, &a, &n), -1);
	expect_error("attempt 1 has a reason that is not a string");
	raw_sql(f->db, "DELETE FROM attempts WHERE id = 1");
	assert_int_equal(store_attempts_of_loop(s, 1, &a, &n), -1);
	expect_error("attempt 2 has an unknown verdict 'maybe'");
	assert_int_equal(store_last_loop(s, &l), -1);
	expect_error("loop 1 has an unknown status 'paused'");
	assert_int_equal(store_activity_since(s, 0, 10, &act, &n), -1);
	expect_error("activity 1 has an unknown level 'debug'");
	store_close(s);
}

/* ---- other connections and processes --------------------------------------- */

static void test_store__reader_during_write(void **state)
{
	struct fixture *f = *state;
	struct store *w, *r;
	struct store_counts c;
	struct store_loop l;
	int64_t first;

	assert_int_equal(store_open(f->db, &w), 0);
	first = add_loop(w);
	assert_int_equal(store_begin(w), 0);
	add_loop(w);
	assert_int_equal(store_activity(w, first, STORE_INFO, "k", NULL, "uncommitted"), 0);

	/* opening and reading do not wait for the writer */
	assert_int_equal(store_open(f->db, &r), 0);
	assert_int_equal(store_counts(r, &c), 0);
	assert_int_equal(c.loops, 1);
	assert_int_equal(c.activity, 0);
	assert_int_equal(store_last_loop(r, &l), 1);
	assert_int_equal(l.id, first);
	store_loop_release(&l);

	/* a second writer gives up with a clear error rather than waiting forever */
	assert_int_equal(sqlite3_busy_timeout(store_sqlite(r), 50), SQLITE_OK);
	assert_int_equal(store_activity(r, first, STORE_INFO, "k", NULL, "blocked"), -1);
	expect_error("database is locked");
	sqlite3_busy_timeout(store_sqlite(r), STORE_BUSY_MS);

	assert_int_equal(store_commit(w), 0);
	assert_int_equal(store_counts(r, &c), 0);
	assert_int_equal(c.loops, 2);
	assert_int_equal(c.activity, 1);
	store_close(r);
	store_close(w);
}

/* Each child opens the store itself and adds 'rows' lines; 0 when all went in. */
static int writer_child(const char *path, int rows, int who)
{
	struct store *s;
	int bad = 0;

	if (store_open(path, &s))
		return 1;
	for (int i = 0; i < rows; i++) {
		if (i % 25 == 0 && store_begin(s)) {
			bad = 1;
			break;
		}
		bad |= store_activity(s, STORE_NULL_INT, STORE_INFO, "writer", NULL,
				      "writer %d line %d", who, i) != 0;
		if (i % 25 == 24 && store_commit(s)) {
			bad = 1;
			break;
		}
	}
	store_close(s);
	return bad;
}

static void test_store__two_processes_write(void **state)
{
	struct fixture *f = *state;
	enum { WRITERS = 3, ROWS = 200 };
	pid_t pids[WRITERS];
	struct store_activity *a;
	struct store *s;
	size_t n;

	/* the store does not exist yet: they race to create it too */
	for (int i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (!pids[i])
			_exit(writer_child(f->db, ROWS, i));
	}
	for (int i = 0; i < WRITERS; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(store_open(f->db, &s), 0);
	assert_int_equal(store_check(s), 0);
	assert_int_equal(store_activity_since(s, 0, SIZE_MAX, &a, &n), 0);
	assert_int_equal(n, WRITERS * ROWS);
	for (int w = 0; w < WRITERS; w++) {
		int next = 0;

		for (size_t i = 0; i < n; i++) {
			int who, line;

			assert_int_equal(sscanf(a[i].message, "writer %d line %d", &who, &line), 2);
			if (who != w)
				continue;
			assert_int_equal(line, next);	/* each writer's lines in its order */
			next++;
		}
		assert_int_equal(next, ROWS);
	}
	store_activities_free(a, n);
	store_close(s);
}

static void test_store__disk_full(void **state)
{
	struct fixture *f = *state;
	struct store_loop l;
	struct store *s;
	char *big = xmalloc(64 * 1024);
	int rc = 0;

	assert_int_equal(store_open(f->db, &s), 0);
	add_loop(s);
	memset(big, 'x', 64 * 1024 - 1);
	big[64 * 1024 - 1] = '\0';
	pragma(s, "PRAGMA max_page_count = 40");
	for (int i = 0; i < 100 && !rc; i++)
		rc = store_activity(s, 1, STORE_INFO, "big", NULL, "%s", big);
	assert_int_equal(rc, -1);
	expect_error("database or disk is full");
	expect_error(f->db);
	/* what was committed before is intact, and writing works again with room */
	assert_int_equal(store_last_loop(s, &l), 1);
	store_loop_release(&l);
	pragma(s, "PRAGMA max_page_count = 1000000");
	assert_int_equal(store_activity(s, 1, STORE_INFO, "small", NULL, "ok"), 0);
	assert_int_equal(store_check(s), 0);

	/* a store that cannot be written is an error too; reading goes on */
	assert_int_equal(sqlite3_exec(store_sqlite(s), "PRAGMA query_only = 1", NULL, NULL, NULL),
			 SQLITE_OK);
	strbuf_reset(&errors);
	assert_int_equal(store_loop_end(s, 1, STORE_LOOP_FINISHED, NULL), -1);
	expect_error("attempt to write a readonly database");
	assert_int_equal(store_measurements_add(s, NULL, 0), -1);
	assert_int_equal(store_last_loop(s, &l), 1);
	assert_int_equal(l.status, STORE_LOOP_RUNNING);
	store_loop_release(&l);
	store_close(s);
	free(big);
}

static void test_store__repo_path(void **state)
{
	struct fixture *f = *state;
	char *path = store_repo_path(f->dir), *ign = xstrfmt("%s/.hotloop/.gitignore", f->dir);
	char *want = xstrfmt("%s/.hotloop/hotloop.db", f->dir);
	struct strbuf sb = STRBUF_INIT;

	assert_string_equal(path, want);
	read_bytes(ign, &sb);
	assert_string_equal(sb.buf, "*\n");
	strbuf_release(&sb);
	free(path);
	free(ign);
	free(want);
}

#define T(name) cmocka_unit_test_setup_teardown(test_store__##name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(create_and_reopen),
		T(empty_file_is_new),
		T(migrate_to_fake_v2),
		T(migrate_empty_to_fake_v2),
		T(failed_migration_rolls_back),
		T(newer_schema_refused),
		T(v1_gains_the_integrity_stage),
		T(hostile_files_refused),
		T(directory_refused),
		T(truncated_files),
		T(damaged_pages),
		T(loop_round_trip),
		T(run_round_trip),
		T(measurement_round_trip),
		T(attempt_round_trip),
		T(activity_feed),
		T(counts_and_json),
		T(unknown_names_refused),
		T(reader_during_write),
		T(two_processes_write),
		T(disk_full),
		T(repo_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
