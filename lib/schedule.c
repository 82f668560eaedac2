/*
 * schedule.c: the improve loop on a timetable (see schedule.h): periods,
 * loop --every's batches and sleeps under one lock, and the systemd user
 * timer or crontab line that `hotloop schedule` installs, removes and
 * reports on. systemctl and crontab are run through run-command.c, found
 * in PATH (a test puts stubs there).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "doctor.h"
#include "loop.h"
#include "project.h"
#include "run-command.h"
#include "runner.h"
#include "schedule.h"
#include "util.h"

/* ---- periods ---- */

int schedule_parse_period(const char *s, long *seconds)
{
	static const struct { char unit; long secs; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	const char *p = s;
	long n = 0;

	if (!s || !*s)
		return error("invalid period '': expected a whole number and a unit, like 30s, 10m, 24h or 1d");
	/* past the largest period, more digits only keep it too large */
	for (; *p >= '0' && *p <= '9'; p++)
		if (n <= SCHEDULE_MAX_PERIOD)
			n = n * 10 + (*p - '0');
	if (p == s || !p[0] || p[1])
		return error("invalid period '%s': expected a whole number and a unit, like 30s, 10m, 24h or 1d",
			     s);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (units[i].unit != *p)
			continue;
		if (n < 1 || n > SCHEDULE_MAX_PERIOD / units[i].secs)
			return error("invalid period '%s': from 1s to 366d", s);
		*seconds = n * units[i].secs;
		return 0;
	}
	return error("invalid period '%s': the unit is s, m, h or d (30s, 10m, 24h, 1d)", s);
}

void schedule_format_period(long s, struct strbuf *out)
{
	if (s % 86400 == 0)
		strbuf_addf(out, "%ldd", s / 86400);
	else if (s % 3600 == 0)
		strbuf_addf(out, "%ldh", s / 3600);
	else if (s % 60 == 0)
		strbuf_addf(out, "%ldm", s / 60);
	else
		strbuf_addf(out, "%lds", s);
}

/* ---- loop --every ---- */

/* Sleep until 'when' (CLOCK_MONOTONIC seconds); false when interrupted first. */
static bool sleep_until(double when)
{
	for (;;) {
		double left = when - (double)now_ns() / 1e9;
		struct timespec ts;

		if (hl_cancelled())
			return false;
		if (left <= 0)
			return true;
		/* a slice at most: a signal that came just before the call is seen within a second */
		if (left > 1)
			left = 1;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
}

int loop_every(const struct every_spec *s, struct every_result *out)
{
	struct loop_spec spec = *s->loop;
	int fd;

	memset(out, 0, sizeof(*out));
	if ((fd = project_lock(spec.project, PROJECT_LOCK_LOOP)) < 0)
		return -1;
	spec.lock_held = true;
	for (long nr = 1;; nr++) {
		double start = (double)now_ns() / 1e9;
		struct loop_result r;
		time_t next = 0;
		int ret;

		loop_result_init(&r);
		ret = loop_run(&spec, &r);
		out->batches = nr;
		out->failed += ret != 0;
		out->interrupted = hl_cancelled();
		if (!out->interrupted && (!s->batches || nr < s->batches)) {
			double wait = start + (double)s->period_s - (double)now_ns() / 1e9;

			next = time(NULL) + (wait > 0 ? (time_t)(wait + 0.5) : 0);
		}
		if (s->batch_done)
			s->batch_done(nr, &r, ret, next, s->data);
		loop_result_release(&r);
		if (!next)
			break;
		clear_last_error();
		if (!sleep_until(start + (double)s->period_s)) {
			out->interrupted = true;
			break;
		}
	}
	close(fd);
	return 0;
}

/* ---- the job's texts ---- */

char *schedule_id(const struct project *p)
{
	const char *path = p->conf_path ? p->conf_path : p->dir, *base = strrchr(p->dir, '/');
	struct strbuf sb = STRBUF_INIT;
	uint32_t h = 2166136261u;	/* FNV-1a */
	size_t n = 0;

	for (const char *c = path; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	strbuf_addstr(&sb, "hotloop-");
	for (const char *c = base && base[1] ? base + 1 : "project"; *c && n < 32; c++, n++) {
		char ch = *c;

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '_' || ch == '.'))
			ch = '-';
		strbuf_addch(&sb, ch);
	}
	strbuf_addf(&sb, "-%08x", h);
	return strbuf_detach(&sb, NULL);
}

/* A value for a unit file: '%' is a specifier there. */
static void add_unit_value(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '%')
			strbuf_addch(sb, '%');
		strbuf_addch(sb, *s == '\n' ? ' ' : *s);
	}
}

/* One word of ExecStart= (exec: '$' doubled) or Environment=: double quotes, C escapes, '%' doubled. */
static void add_exec_word(struct strbuf *sb, const char *s, bool exec)
{
	strbuf_addch(sb, '"');
	for (; *s; s++) {
		switch (*s) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		case '%': strbuf_addstr(sb, "%%"); break;
		case '$': strbuf_addstr(sb, exec ? "$$" : "$"); break;
		default: strbuf_addch(sb, *s);
		}
	}
	strbuf_addch(sb, '"');
}

/* hotloop loop -f CONF [--agent A] [--rounds N], as argv (the pointers are j's or 'rounds'). */
static size_t job_argv(const struct schedule_job *j, const char *argv[9], char rounds[24])
{
	size_t n = 0;

	argv[n++] = j->hotloop;
	argv[n++] = "loop";
	argv[n++] = "-f";
	argv[n++] = j->conf;
	if (j->agent) {
		argv[n++] = "--agent";
		argv[n++] = j->agent;
	}
	if (j->rounds > 0) {
		snprintf(rounds, 24, "%ld", j->rounds);
		argv[n++] = "--rounds";
		argv[n++] = rounds;
	}
	argv[n] = NULL;
	return n;
}

/* OnCalendar= for a period that divides a day (or is one), else NULL. */
static const char *calendar_of(long p, char buf[64])
{
	if (p < 60 && 60 % p == 0)
		snprintf(buf, 64, "*:*:0/%ld", p);
	else if (p % 60 == 0 && p < 3600 && 3600 % p == 0)
		snprintf(buf, 64, "*:0/%ld:00", p / 60);
	else if (p % 3600 == 0 && p < 86400 && 86400 % p == 0)
		snprintf(buf, 64, "*-*-* 0/%ld:00:00", p / 3600);
	else if (p == 86400)
		snprintf(buf, 64, "*-*-* 00:00:00");
	else
		return NULL;
	return buf;
}

void schedule_systemd_units(const struct schedule_job *j, struct strbuf *service, struct strbuf *timer)
{
	const char *argv[9];
	char rounds[24], cal[64];
	struct strbuf every = STRBUF_INIT;
	size_t n = job_argv(j, argv, rounds);
	const char *oncal = calendar_of(j->period_s, cal);

	schedule_format_period(j->period_s, &every);
	strbuf_addf(service, "# written by hotloop schedule install: one batch of the improve loop\n"
		    "[Unit]\nDescription=hotloop loop of ");
	add_unit_value(service, j->conf);
	strbuf_addstr(service, "\n\n[Service]\nType=oneshot\nWorkingDirectory=");
	add_unit_value(service, j->dir);
	strbuf_addch(service, '\n');
	if (j->path_env) {
		char *env = xstrfmt("PATH=%s", j->path_env);

		strbuf_addstr(service, "Environment=");
		add_exec_word(service, env, false);
		strbuf_addch(service, '\n');
		free(env);
	}
	strbuf_addstr(service, "ExecStart=");
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addch(service, ' ');
		add_exec_word(service, argv[i], true);
	}
	strbuf_addch(service, '\n');

	strbuf_addf(timer, "# written by hotloop schedule install: every %s\n[Unit]\nDescription=hotloop loop "
		    "every %s of ", every.buf, every.buf);
	add_unit_value(timer, j->conf);
	strbuf_addstr(timer, "\n\n[Timer]\n");
	if (oncal)
		/* a start missed while the machine was off runs when it is back */
		strbuf_addf(timer, "OnCalendar=%s\nPersistent=true\n", oncal);
	else
		/* not a calendar period: counted from the timer's start and from the last run */
		strbuf_addf(timer, "OnActiveSec=%ld\nOnUnitActiveSec=%ld\n", j->period_s, j->period_s);
	if (j->period_s < 600)
		strbuf_addstr(timer, "AccuracySec=1s\n");
	strbuf_addf(timer, "Unit=%s.service\n\n[Install]\nWantedBy=timers.target\n", j->id);
	strbuf_release(&every);
}

int schedule_cron_line(const struct schedule_job *j, struct strbuf *line)
{
	long p = j->period_s, m = p / 60, h = p / 3600, d = p / 86400;
	struct strbuf cmd = STRBUF_INIT, every = STRBUF_INIT;
	const char *argv[9], *log[2] = { j->log, NULL }, *dir[2] = { j->dir, NULL };
	char rounds[24];
	size_t n = job_argv(j, argv, rounds);

	schedule_format_period(p, &every);
	if (p % 60)
		goto out_bad;
	if (m < 60 && 60 % m == 0)
		strbuf_addf(line, m == 1 ? "* * * * *" : "*/%ld * * * *", m);
	else if (p % 3600 == 0 && h < 24 && 24 % h == 0)
		strbuf_addf(line, h == 1 ? "0 * * * *" : "0 */%ld * * *", h);
	else if (p % 86400 == 0 && d <= 31)
		strbuf_addf(line, d == 1 ? "0 0 * * *" : "0 0 */%ld * *", d);
	else
		goto out_bad;
	/* the shell line; cron makes '%' a newline unless escaped */
	strbuf_addstr(&cmd, "cd ");
	runner_quote_argv(&cmd, dir, 1);
	strbuf_addstr(&cmd, " && ");
	if (j->path_env) {
		const char *pe[2] = { j->path_env, NULL };

		strbuf_addstr(&cmd, "PATH=");
		runner_quote_argv(&cmd, pe, 1);
		strbuf_addch(&cmd, ' ');
	}
	runner_quote_argv(&cmd, argv, n);
	strbuf_addstr(&cmd, " >>");
	runner_quote_argv(&cmd, log, 1);
	strbuf_addstr(&cmd, " 2>&1");
	strbuf_addch(line, ' ');
	for (const char *c = cmd.buf; *c; c++) {
		if (*c == '%')
			strbuf_addch(line, '\\');
		strbuf_addch(line, *c == '\n' ? ' ' : *c);
	}
	strbuf_addf(line, " # %s every %s", j->id, every.buf);
	strbuf_release(&cmd);
	strbuf_release(&every);
	return 0;
out_bad:
	strbuf_release(&cmd);
	error("cron cannot run every %s: use whole minutes dividing an hour (1m, 5m, 30m), hours dividing "
	      "a day (1h, 6h), or days (1d, 7d); or install a systemd timer (--systemd)", every.buf);
	strbuf_release(&every);
	return -1;
}

bool schedule_cron_line_is(const char *line, const char *id)
{
	const char *mark = strstr(line, " # hotloop-");

	/* the mark is the last comment: " # <id> every <period>" */
	for (const char *m = mark; m; m = strstr(m + 1, " # hotloop-"))
		mark = m;
	if (!mark)
		return false;
	mark += 3;
	return !strncmp(mark, id, strlen(id)) && !strncmp(mark + strlen(id), " every ", 7);
}

/* ---- installing ---- */

const char *schedule_kind_name(enum schedule_kind k)
{
	return k == SCHEDULE_SYSTEMD ? "systemd" : k == SCHEDULE_CRON ? "cron" : "none";
}

void schedule_status_release(struct schedule_status *st)
{
	free(st->id);
	free(st->service);
	free(st->timer);
	free(st->cron_line);
	free(st->next);
	memset(st, 0, sizeof(*st));
}

/* Is 'name' a program in PATH? */
static bool have_program(const char *name)
{
	char *path = doctor_which(name);
	bool ok = path != NULL;

	free(path);
	return ok;
}

/*
 * Run argv (stdin from 'in', or /dev/null), its output in 'out' (may be
 * NULL): 0 when it exited 0, 1 when it ran and failed (an error saying it
 * could not 'what', unless 'what' is NULL), -1 when it could not run.
 */
static int run_tool(const char *const *argv, const char *in, struct strbuf *out, const char *what)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	int ret = 0;

	cp.argv = argv;
	cp.in = in;
	cp.timeout = 60;
	if (run_command(&cp)) {
		ret = -1;
		goto out;
	}
	if (!child_succeeded(&cp)) {
		ret = 1;
		if (what) {
			struct strbuf how = STRBUF_INIT, tail = STRBUF_INIT;

			child_describe(&cp, &how);
			output_tail(&cp.out, 5, &tail);
			error("cannot %s ('%s %s' failed, %s)%s", what, argv[0], argv[1] ? argv[1] : "", how.buf,
			      tail.buf);
			strbuf_release(&how);
			strbuf_release(&tail);
		}
	}
	if (out)
		strbuf_add(out, cp.out.buf, cp.out.len);
out:
	child_process_release(&cp);
	return ret;
}

static bool user_systemd(void)
{
	const char *argv[] = { "systemctl", "--user", "show-environment", NULL };

	return have_program("systemctl") && run_tool(argv, NULL, NULL, NULL) == 0;
}

static int systemctl(const char *verb, const char *unit, const char *what)
{
	const char *argv[] = { "systemctl", "--user", verb, unit, NULL };

	return run_tool(argv, NULL, NULL, what) ? -1 : 0;
}

/* $XDG_CONFIG_HOME/systemd/user (else ~/.config/...). Caller frees; NULL with an error. */
static char *unit_dir(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg && *xdg == '/')
		return xstrfmt("%s/systemd/user", xdg);
	if (!home || *home != '/') {
		error("cannot find the systemd user directory: HOME is not set");
		return NULL;
	}
	return xstrfmt("%s/.config/systemd/user", home);
}

/* The user's crontab: 0 (empty when there is none), 1 when cron is not installed, -1 with an error. */
static int crontab_read(struct strbuf *tab)
{
	const char *argv[] = { "crontab", "-l", NULL };
	struct strbuf out = STRBUF_INIT;
	int ret;

	if (!have_program("crontab"))
		return 1;
	ret = run_tool(argv, NULL, &out, NULL);
	if (ret == 1 && strstr(out.buf, "no crontab"))
		ret = 0;
	else if (ret == 0)
		strbuf_add(tab, out.buf, out.len);
	else if (ret > 0)
		ret = error("cannot read the crontab ('crontab -l': %s)", out.len ? out.buf : "failed");
	strbuf_release(&out);
	return ret;
}

static int crontab_write(const struct project *p, const char *text)
{
	char *dir = project_state_dir(p, "schedule"), *file;
	const char *argv[] = { "crontab", NULL, NULL };
	int ret = -1;

	if (!dir)
		return -1;
	file = xstrfmt("%s/crontab.new", dir);
	if (write_file_atomic(file, text, strlen(text)))
		goto out;
	argv[1] = file;
	ret = run_tool(argv, NULL, NULL, "install the crontab") ? -1 : 0;
	unlink(file);
out:
	free(file);
	free(dir);
	return ret;
}

/* The crontab without the job's line; *found when it was there. */
static void crontab_without(const char *tab, const char *id, struct strbuf *out, char **found)
{
	for (const char *l = tab; *l;) {
		const char *e = strchr(l, '\n') ? strchr(l, '\n') : l + strlen(l);
		char *line = xstrndup(l, (size_t)(e - l));

		if (schedule_cron_line_is(line, id)) {
			if (found && !*found)
				*found = xstrdup(line);
		} else {
			strbuf_addstr(out, line);
			strbuf_addch(out, '\n');
		}
		free(line);
		l = *e ? e + 1 : e;
	}
}

int schedule_status(const struct project *p, struct schedule_status *st)
{
	struct strbuf tab = STRBUF_INIT, rest = STRBUF_INIT, next = STRBUF_INIT;
	char *dir = unit_dir();
	struct stat sb;
	int ret = -1, cron;

	memset(st, 0, sizeof(*st));
	st->id = schedule_id(p);
	if (!dir)
		return -1;
	st->service = xstrfmt("%s/%s.service", dir, st->id);
	st->timer = xstrfmt("%s/%s.timer", dir, st->id);
	if (!stat(st->timer, &sb)) {
		char *unit = xstrfmt("%s.timer", st->id);
		const char *argv[] = { "systemctl", "--user", "show", unit, "--property=NextElapseUSecRealtime",
				       "--value", NULL };

		st->kind = SCHEDULE_SYSTEMD;
		if (have_program("systemctl") && run_tool(argv, NULL, &next, NULL) == 0) {
			strbuf_rtrim(&next);
			if (next.len && strcmp(next.buf, "n/a"))
				st->next = strbuf_detach(&next, NULL);
		}
		free(unit);
	}
	if ((cron = crontab_read(&tab)) < 0)
		goto out;
	if (!cron) {
		crontab_without(tab.buf, st->id, &rest, &st->cron_line);
		if (st->cron_line) {
			st->both = st->kind == SCHEDULE_SYSTEMD;
			if (!st->both)
				st->kind = SCHEDULE_CRON;
		}
	}
	ret = 0;
out:
	strbuf_release(&tab);
	strbuf_release(&rest);
	strbuf_release(&next);
	free(dir);
	return ret;
}

/* Put back a unit file as it was (NULL: there was none). */
static void restore_file(const char *path, const struct strbuf *old, bool existed)
{
	if (existed)
		write_file_atomic(path, old->buf, old->len);
	else
		unlink(path);
}

static int remove_systemd(const struct schedule_status *st)
{
	char *unit = xstrfmt("%s.timer", st->id);
	int ret = 0;

	if (have_program("systemctl") && systemctl("disable", unit, NULL) == 0)
		systemctl("stop", unit, NULL);
	if ((unlink(st->timer) && errno != ENOENT) || (unlink(st->service) && errno != ENOENT))
		ret = error("cannot remove '%s': %s", st->timer, strerror(errno));
	if (have_program("systemctl"))
		systemctl("daemon-reload", NULL, NULL);
	free(unit);
	return ret;
}

static int remove_cron(const struct project *p, const char *id)
{
	struct strbuf tab = STRBUF_INIT, rest = STRBUF_INIT;
	char *found = NULL;
	int ret = crontab_read(&tab);

	if (ret)
		goto out;
	crontab_without(tab.buf, id, &rest, &found);
	if (found)
		ret = crontab_write(p, rest.buf);
out:
	free(found);
	strbuf_release(&tab);
	strbuf_release(&rest);
	return ret < 0 ? -1 : 0;
}

static int install_systemd(const struct schedule_job *j, const struct schedule_status *now)
{
	struct strbuf service = STRBUF_INIT, timer = STRBUF_INIT, old_service = STRBUF_INIT,
		      old_timer = STRBUF_INIT;
	char *dir = unit_dir(), *unit = xstrfmt("%s.timer", j->id);
	bool had_service, had_timer;
	int ret = -1;

	if (!dir || mkdir_p(dir))
		goto out;
	had_service = !access(now->service, F_OK);
	had_timer = !access(now->timer, F_OK);
	if ((had_service && read_file(&old_service, now->service, 1 << 20) < 0) ||
	    (had_timer && read_file(&old_timer, now->timer, 1 << 20) < 0))
		goto out;
	schedule_systemd_units(j, &service, &timer);
	if (write_file_atomic(now->service, service.buf, service.len) ||
	    write_file_atomic(now->timer, timer.buf, timer.len) ||
	    systemctl("daemon-reload", NULL, "reload the systemd user units") ||
	    systemctl("enable", unit, "enable the timer") || systemctl("restart", unit, "start the timer")) {
		/* nothing half-done: the units as they were */
		restore_file(now->service, &old_service, had_service);
		restore_file(now->timer, &old_timer, had_timer);
		systemctl("daemon-reload", NULL, NULL);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&service);
	strbuf_release(&timer);
	strbuf_release(&old_service);
	strbuf_release(&old_timer);
	free(dir);
	free(unit);
	return ret;
}

static int install_cron(const struct project *p, const struct schedule_job *j)
{
	struct strbuf tab = STRBUF_INIT, rest = STRBUF_INIT, line = STRBUF_INIT;
	int ret = -1, r;

	if (schedule_cron_line(j, &line))
		goto out;
	if ((r = crontab_read(&tab)) > 0) {
		error("cannot install a crontab line: crontab is not installed (Debian: apt-get install cron)");
		goto out;
	} else if (r < 0) {
		goto out;
	}
	crontab_without(tab.buf, j->id, &rest, NULL);
	strbuf_addf(&rest, "%s\n", line.buf);
	ret = crontab_write(p, rest.buf);
out:
	strbuf_release(&tab);
	strbuf_release(&rest);
	strbuf_release(&line);
	return ret;
}

int schedule_install(const struct schedule_spec *s, struct schedule_status *st)
{
	const struct project *p = s->project;
	struct schedule_status before;
	struct schedule_job j = { 0 };
	char *state = project_state_dir(p, NULL), *log = NULL;
	enum schedule_kind kind = s->kind;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (!state || schedule_status(p, &before))
		goto out_state;
	if (!p->conf_path) {
		error("no hotloop.conf to schedule the loop of");
		goto out;
	}
	log = xstrfmt("%s/schedule.log", state);
	j.id = before.id;
	j.hotloop = s->hotloop;
	j.conf = p->conf_path;
	j.dir = p->dir;
	j.agent = s->agent;
	j.rounds = s->rounds;
	j.path_env = getenv("PATH");
	j.log = log;
	j.period_s = s->period_s;
	if (kind == SCHEDULE_NONE)
		kind = user_systemd() ? SCHEDULE_SYSTEMD : SCHEDULE_CRON;
	if (kind == SCHEDULE_SYSTEMD ? install_systemd(&j, &before) : install_cron(p, &j))
		goto out;
	/* one job per project: the other kind, installed before, goes */
	if (kind == SCHEDULE_SYSTEMD && before.cron_line)
		remove_cron(p, j.id);
	else if (kind == SCHEDULE_CRON && (before.kind == SCHEDULE_SYSTEMD))
		remove_systemd(&before);
	ret = schedule_status(p, st);
out:
	schedule_status_release(&before);
out_state:
	free(state);
	free(log);
	return ret;
}

int schedule_remove(const struct project *p, struct schedule_status *st)
{
	int ret = schedule_status(p, st);

	if (ret)
		return ret;
	if (st->kind == SCHEDULE_SYSTEMD && remove_systemd(st))
		ret = -1;
	if (st->cron_line && remove_cron(p, st->id))
		ret = -1;
	return ret;
}
