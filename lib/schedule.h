/*
 * schedule.h: the loop on a timetable. loop_every() runs batches of the
 * improve loop (loop_run()) with a sleep between them, holding the loop
 * lock for its whole life; schedule_install() and friends write a systemd
 * user timer or a crontab line that runs one batch (`hotloop loop`) every
 * period, for machines that reboot. The texts of the units and the cron
 * line come from typed jobs, so they are tested alone. Strings in results
 * are owned by them until their _release(); specs stay the caller's.
 */
#ifndef HOTLOOP_SCHEDULE_H
#define HOTLOOP_SCHEDULE_H

#include <stdbool.h>
#include <time.h>

#include "strbuf.h"

struct loop_spec;
struct loop_result;
struct project;

#define SCHEDULE_MAX_PERIOD (366L * 86400)

/*
 * A period: a whole number with a unit, s, m, h or d ("30s", "10m",
 * "24h", "1d"), from 1 s to SCHEDULE_MAX_PERIOD. 0 and the seconds, or
 * -1 with an error naming 's'.
 */
int schedule_parse_period(const char *s, long *seconds);
/* The period in its largest whole unit: 86400 -> "1d", 90 -> "90s". */
void schedule_format_period(long seconds, struct strbuf *out);

/* ---- loop --every ---- */

struct every_spec {
	const struct loop_spec *loop;	/* each batch's spec (lock_held is set here) */
	long period_s;			/* from the start of one batch to the start of the next */
	long batches;			/* stop after this many; 0: until interrupted */
	/* told after each batch: its number, its result, loop_run()'s return, the next start (0: none) */
	void (*batch_done)(long nr, const struct loop_result *r, int ret, time_t next, void *data);
	void *data;
};

struct every_result {
	long batches;			/* batches run */
	long failed;			/* of them, those loop_run() failed */
	bool interrupted;		/* hl_cancel() ended it, in a batch or a sleep */
};

/*
 * Hold the loop lock (PROJECT_LOCK_LOOP: a second loop is refused with
 * the holder's pid), then run a batch, tell batch_done, sleep until the
 * next start, and so on: a failed batch is told and the next one runs. An
 * interrupt during a sleep ends it at once; during a batch, the batch
 * ends as loop_run() does (worktrees removed, the store closed by its
 * subscriber). 0, or -1 with an error when the lock cannot be taken.
 */
int loop_every(const struct every_spec *s, struct every_result *out);

/* ---- schedule install | remove | status ---- */

enum schedule_kind { SCHEDULE_NONE, SCHEDULE_SYSTEMD, SCHEDULE_CRON };

/* One scheduled job, as its texts need it. */
struct schedule_job {
	const char *id;			/* hotloop-<name>-<hash>: the unit's name, the cron line's mark */
	const char *hotloop;		/* the absolute path of the binary to run */
	const char *conf;		/* the absolute path of hotloop.conf */
	const char *dir;		/* where it runs: the project's directory */
	const char *agent;		/* --agent, or NULL for the config's */
	long rounds;			/* --rounds, or 0 for the config's */
	const char *path_env;		/* PATH to run with, or NULL */
	const char *log;		/* the cron job's log file */
	long period_s;
};

/* The job's id for a project: "hotloop-<dir's name>-<8 hex of the config's path>". Caller frees. */
char *schedule_id(const struct project *p);

/* The .service and .timer units of a systemd user timer. */
void schedule_systemd_units(const struct schedule_job *j, struct strbuf *service, struct strbuf *timer);
/*
 * The crontab line (without newline), ending with the mark "# <id>".
 * 0, or -1 with an error when cron cannot run every period (not whole
 * minutes, or not a divisor of an hour, a day or a month's days).
 */
int schedule_cron_line(const struct schedule_job *j, struct strbuf *line);
/* Is this crontab line the one of job 'id'? */
bool schedule_cron_line_is(const char *line, const char *id);

struct schedule_spec {
	const struct project *project;
	enum schedule_kind kind;	/* SCHEDULE_NONE: systemd when a user systemd answers, else cron */
	long period_s;
	const char *agent;
	long rounds;
	const char *hotloop;		/* the binary to run (absolute) */
};

struct schedule_status {
	enum schedule_kind kind;	/* what is installed; NONE: nothing */
	char *id;
	char *service, *timer;		/* the unit files (systemd), installed or not */
	char *cron_line;		/* the installed line (cron) */
	char *next;			/* systemd's next start, as it says it, or NULL */
	bool both;			/* a timer and a crontab line are installed */
};
void schedule_status_release(struct schedule_status *st);

/* Write and enable the job (replacing one installed before), or -1 with an error and nothing left. */
int schedule_install(const struct schedule_spec *s, struct schedule_status *st);
/* Remove what is installed for the project (both kinds); st says what was. */
int schedule_remove(const struct project *p, struct schedule_status *st);
/* What is installed for the project. 0, or -1 with an error (a crontab that cannot be read). */
int schedule_status(const struct project *p, struct schedule_status *st);

const char *schedule_kind_name(enum schedule_kind k);

#endif
