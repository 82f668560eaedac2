/*
 * store.h: hotloop's database, .hotloop/hotloop.db under the git top
 * level: every loop, run, measurement, attempt and activity line the
 * improve loop records, in SQLite (WAL), read by `hotloop store` and the
 * dashboard while the loop writes. A struct store owns its connection and
 * prepared statements until store_close(). Records given to a writer stay
 * the caller's; a record a reader fills owns its strings until its
 * release function. Verdicts and stages are the gate's enums (verdict.h,
 * rules.h), stored by name. The schema is in docs/internals/store.md.
 */
#ifndef HOTLOOP_STORE_H
#define HOTLOOP_STORE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"
#include "verdict.h"

/* The store's file under a git top level. */
#define STORE_FILE ".hotloop/hotloop.db"

/*
 * NULL in the database: a NULL string, STORE_NULL_INT for an integer and
 * NAN (STORE_NULL_REAL) for a real, both ways.
 */
#define STORE_NULL_INT INT64_MIN
#define STORE_NULL_REAL ((double)NAN)

/* How long a writer waits for another one before "database is locked". */
#define STORE_BUSY_MS 5000

struct store;
struct sqlite3;

/*
 * One step of the schema: store_migrations[i] takes a database from
 * version i (PRAGMA user_version) to i + 1, in one transaction. Adding a
 * version is adding one entry; an entry never changes once released.
 */
struct store_migration {
	const char *what;	/* one line, for the error when it fails */
	const char *sql;	/* statements run by sqlite3_exec() */
};
extern const struct store_migration store_migrations[];
extern const size_t store_nr_migrations;

/*
 * Open the store at 'path', creating the file and its directory when
 * missing, and bring its schema up to date. A file that is not SQLite,
 * is damaged, belongs to another program or was written by a newer
 * hotloop is refused with an error naming it, and left as it was.
 * 0 and *out, or -1 with an error.
 */
int store_open(const char *path, struct store **out);
/* The same with another list of migrations (tests: a fake next version). */
int store_open_migrations(const char *path, const struct store_migration *migrations,
			  size_t nr, struct store **out);
/*
 * Open an existing, up-to-date store for reading only (the dashboard):
 * nothing is created, migrated or written; an older schema is refused
 * with what to run. 0 and *out, or -1 with an error.
 */
int store_open_readonly(const char *path, struct store **out);
void store_close(struct store *s);

const char *store_path(const struct store *s);
/* The schema version now, and the one the file had before this open (0: new). */
int store_version(const struct store *s);
int store_version_found(const struct store *s);
/* The connection, for read-only queries the typed API lacks. */
struct sqlite3 *store_sqlite(struct store *s);

/*
 * <top>/STORE_FILE (caller frees), its directory created with the
 * .gitignore that keeps .hotloop/ out of git status; NULL with an error.
 */
char *store_repo_path(const char *top);

/* SQLite's quick_check: 0, or -1 with an error naming the first problem. */
int store_check(struct store *s);

/*
 * Group writes: BEGIN IMMEDIATE (it waits up to STORE_BUSY_MS for
 * another writer), COMMIT, ROLLBACK. Readers elsewhere keep seeing the
 * last committed state meanwhile. Keep transactions short: another
 * writer gives up after STORE_BUSY_MS.
 */
int store_begin(struct store *s);
int store_commit(struct store *s);
int store_rollback(struct store *s);

/* UTC unix time in seconds, to the millisecond: every timestamp here. */
double store_now(void);

enum store_loop_status {
	STORE_LOOP_RUNNING,
	STORE_LOOP_FINISHED,	/* every planned round ran */
	STORE_LOOP_STOPPED,	/* ended early: stop_reason says why */
	STORE_LOOP_KILLED,	/* found running with its process gone */
};

enum store_run_kind {
	STORE_RUN_BASELINE,	/* the best so far, profiled as a round starts (round 1: the start) */
	STORE_RUN_CANDIDATE,	/* a candidate's build, profiled or measured */
	STORE_RUN_FINAL,	/* the best commit at the end, profiled */
	STORE_RUN_RUN,		/* `hotloop run` outside a loop */
	STORE_RUN_COMPARE,	/* base against candidate in pairs */
};

enum store_side {
	STORE_SIDE_NONE,	/* not part of a pair: NULL */
	STORE_SIDE_BASE,
	STORE_SIDE_CAND,
};

enum store_level {
	STORE_INFO,
	STORE_WARN,
	STORE_ERROR,
};

/* The names stored in the database; NULL for the _NONE values. */
const char *store_loop_status_name(enum store_loop_status v);
const char *store_run_kind_name(enum store_run_kind v);
const char *store_side_name(enum store_side v);
const char *store_level_name(enum store_level v);

/*
 * Times given to a writer: a start (started_at, created_at) of 0 means
 * now; an end (finished_at) of 0 or NAN means not finished. Start from
 * the *_INIT initializers: they hold NULL in every nullable field.
 */

struct store_loop {
	int64_t id;
	double started_at;
	double finished_at;		/* NAN while it runs */
	const char *repo;		/* the git top level */
	const char *branch;		/* hotloop/YYYY-MM-DD */
	const char *base_commit;
	const char *best_commit;	/* NULL until a change is kept */
	enum store_loop_status status;
	const char *stop_reason;
	int64_t rounds_planned;
	const char *config_json;	/* the normalized config, or NULL */
};

#define STORE_LOOP_INIT { .finished_at = STORE_NULL_REAL }

struct store_run {
	int64_t id;
	int64_t loop_id;		/* STORE_NULL_INT: outside a loop */
	int64_t attempt_id;		/* the attempt it measures, or STORE_NULL_INT */
	enum store_run_kind kind;
	const char *commit_sha;		/* what was measured */
	const char *workload;
	const char *metric;		/* cpu, wall, instructions, rss, or a workload's */
	double started_at;
	double finished_at;		/* NAN while it runs */
	const char *profile_path;
	const char *brief_path;
	const char *summary_json;
};

#define STORE_RUN_INIT { .loop_id = STORE_NULL_INT, .attempt_id = STORE_NULL_INT, \
		.finished_at = STORE_NULL_REAL }

/* One run of a workload: a warm-up, or one side of one pair. */
struct store_measurement {
	int64_t id;
	int64_t run_id;
	const char *workload;
	int64_t pair_index;		/* STORE_NULL_INT outside a pair (warm-ups) */
	enum store_side side;
	int64_t position;		/* 0 first, 1 second in its pair */
	bool warmup;
	double wall_s, user_s, sys_s, cpu_s;
	int64_t max_rss_kib;
	int64_t instructions;		/* STORE_NULL_INT: not counted */
	int64_t exit_status;		/* STORE_NULL_INT: killed before exiting */
	int64_t signal;			/* the signal that killed it, or STORE_NULL_INT */
	double value;			/* the run's metric */
	double created_at;
};

#define STORE_MEASUREMENT_INIT { .pair_index = STORE_NULL_INT, .position = STORE_NULL_INT, \
		.wall_s = STORE_NULL_REAL, .user_s = STORE_NULL_REAL, .sys_s = STORE_NULL_REAL, \
		.cpu_s = STORE_NULL_REAL, .max_rss_kib = STORE_NULL_INT, \
		.instructions = STORE_NULL_INT, .exit_status = STORE_NULL_INT, \
		.signal = STORE_NULL_INT, .value = STORE_NULL_REAL }

/* One round of a loop: the agent's change and what the gate made of it. */
struct store_attempt {
	int64_t id;
	int64_t loop_id;
	int64_t round;			/* from 1 */
	const char *lens;
	const char *function;
	const char *hypothesis;
	double expected_gain_pct;
	enum verdict_kind verdict;
	char **reasons;			/* every reason, as the verdict gave them */
	size_t nr_reasons;
	enum gate_stage stage;		/* the stage that decided */
	double change_pct, ci_low_pct, ci_high_pct;	/* negative: faster */
	const char *diff;
	const char *commit_sha;	/* the kept change's commit, else NULL */
	const char *kb_slug;
	int64_t agent_exit_status;
	double agent_seconds;
	double started_at;
	double finished_at;		/* NAN while it runs */
};

#define STORE_ATTEMPT_INIT { .expected_gain_pct = STORE_NULL_REAL, \
		.change_pct = STORE_NULL_REAL, .ci_low_pct = STORE_NULL_REAL, \
		.ci_high_pct = STORE_NULL_REAL, .agent_exit_status = STORE_NULL_INT, \
		.agent_seconds = STORE_NULL_REAL, .finished_at = STORE_NULL_REAL }

/* One line of the dashboard's live feed. */
struct store_activity {
	int64_t id;
	double at;
	int64_t loop_id;		/* STORE_NULL_INT: not in a loop */
	enum store_level level;
	const char *kind;		/* round-start, agent-done, build-failed, verdict, ... */
	const char *message;
	const char *data_json;
};

struct store_counts {
	int64_t loops, runs, measurements, attempts, activity;
};

/*
 * Writers: 0 (and the new row's id in *id when id is not NULL), or -1
 * with an error. Text is bound, never formatted into SQL. The *_json
 * fields must hold valid JSON (or be NULL).
 */
int store_loop_begin(struct store *s, const struct store_loop *l, int64_t *id);
/* The commit the loop now stands on, after a keep. */
int store_loop_set_best(struct store *s, int64_t id, const char *best_commit);
int store_loop_end(struct store *s, int64_t id, enum store_loop_status status,
		   const char *stop_reason);

int store_run_add(struct store *s, const struct store_run *r, int64_t *id);
/* Set finished_at; each non-NULL argument replaces what the run held. */
int store_run_finish(struct store *s, int64_t id, const char *profile_path,
		     const char *brief_path, const char *summary_json);

int store_measurement_add(struct store *s, const struct store_measurement *m, int64_t *id);
/* All of them in one transaction (a savepoint inside the caller's), or none. */
int store_measurements_add(struct store *s, const struct store_measurement *m, size_t nr);

int store_attempt_add(struct store *s, const struct store_attempt *a, int64_t *id);
/* Rewrite attempt a->id from *a (all but its id and loop). */
int store_attempt_update(struct store *s, const struct store_attempt *a);

/* Add a line to the feed; loop_id may be STORE_NULL_INT, data_json NULL. */
int store_activity(struct store *s, int64_t loop_id, enum store_level level, const char *kind,
		   const char *data_json, const char *fmt, ...) ATTR_PRINTF(6, 7);

/*
 * Readers. A single record: 1 when found, 0 when not, -1 with an error.
 * A list: 0 and an array the caller frees with its *_free(), or -1.
 */
int store_counts(struct store *s, struct store_counts *c);
int store_loop_get(struct store *s, int64_t id, struct store_loop *out);
/* The loop begun last. */
int store_last_loop(struct store *s, struct store_loop *out);
void store_loop_release(struct store_loop *l);

int store_run_get(struct store *s, int64_t id, struct store_run *out);
void store_run_release(struct store_run *r);

/* In the order they ran. */
int store_measurements_of_run(struct store *s, int64_t run_id,
			      struct store_measurement **out, size_t *nr);
void store_measurements_free(struct store_measurement *m, size_t nr);

/* By round, then id. */
int store_attempts_of_loop(struct store *s, int64_t loop_id,
			   struct store_attempt **out, size_t *nr);
void store_attempt_release(struct store_attempt *a);
void store_attempts_free(struct store_attempt *a, size_t nr);

/* The lines after id 'after' (0: from the start), oldest first, at most 'limit'. */
int store_activity_since(struct store *s, int64_t after, size_t limit,
			 struct store_activity **out, size_t *nr);
void store_activities_free(struct store_activity *a, size_t nr);

/*
 * JSON forms (docs/store.md): keys are the column names; a *_json column
 * is embedded parsed, under its name without the suffix; NULL is null.
 * The attempt's diff is left out unless 'with_diff'.
 */
struct json_t;
struct json_t *store_counts_json(const struct store_counts *c);
struct json_t *store_loop_json(const struct store_loop *l);
struct json_t *store_attempt_json(const struct store_attempt *a, bool with_diff);

#endif
