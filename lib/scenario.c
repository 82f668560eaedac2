/*
 * scenario.c: one run of a service under load (see scenario.h). One loop
 * drives it: every interval the timeline samples the service's tree, the
 * new lines of the service's and the loads' output are read for metrics
 * (and the ready regex), and the phase clock is checked. The service and
 * each load run under a guard (run-command.h), so none outlives hotloop,
 * however hotloop ends. The CSV grows a row per sample, so a run killed
 * half way leaves a readable timeline.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "events.h"
#include "heap-record.h"
#include "heap-stream.h"
#include "json.h"
#include "record.h"
#include "run-command.h"
#include "runner.h"
#include "sandbox.h"
#include "scenario.h"
#include "strbuf.h"
#include "util.h"

const char *const scenario_leak_names[] = { "unknown", "returned", "held", "grew" };

/* A load is asked to stop with SIGTERM, then killed after this long. */
#define LOAD_GRACE_S 2.0
/* Metrics from a command or a URL: polled this often, each poll at most this long. */
#define METRICS_POLL_S 1.0
#define METRICS_TIMEOUT_S 0.9
/* An output line longer than this is not a metric line: skipped. */
#define LINE_MAX_BYTES 4096
/* RSS may stay this much above its level before the pressure, besides the tolerance. */
#define LEAK_FLOOR_KB 1024

void scenario_result_init(struct scenario_result *r)
{
	memset(r, 0, sizeof(*r));
	r->judge = SIZE_MAX;
	r->service_status = -1;
	timeline_init(&r->tl, 0.1);
}

void scenario_result_release(struct scenario_result *r)
{
	for (size_t i = 0; i < r->nr_phases; i++)
		tl_phase_stats_release(&r->phases[i]);
	free(r->phases);
	free(r->heap_phases);
	free(r->error);
	free(r->profile_error);
	free(r->dir);
	timeline_release(&r->tl);
	memset(r, 0, sizeof(*r));
}

/* ---- output files, read as they grow -------------------------------------- */

struct tail {
	char *path;
	const char *what;	/* "the service", "the load of phase 'pressure'" */
	off_t pos;
	struct strbuf partial;	/* a line not ended yet */
	bool skipping;		/* inside a line too long to keep */
};

/* Each new whole line of t's file to fn; false when the file cannot be read. */
static void tail_read(struct tail *t, void (*fn)(const char *line, size_t len, void *data), void *data)
{
	char buf[65536];
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = pread(fd, buf, sizeof(buf), t->pos)) > 0) {
		const char *p = buf, *end = buf + n;

		t->pos += n;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

			if (!t->skipping) {
				if (t->partial.len + len > LINE_MAX_BYTES) {
					t->skipping = true;
					strbuf_reset(&t->partial);
				} else {
					strbuf_add(&t->partial, p, len);
				}
			}
			if (!nl)
				break;
			if (!t->skipping)
				fn(t->partial.buf, t->partial.len, data);
			strbuf_reset(&t->partial);
			t->skipping = false;
			p = nl + 1;
		}
		if (n < (ssize_t)sizeof(buf))
			break;
	}
	close(fd);
}

/* The last lines of a file, indented, for a message. */
static void file_tail(const char *path, int lines, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && !fstat(fd, &st)) {
		off_t from = st.st_size > RUN_COMMAND_KEEP ? st.st_size - RUN_COMMAND_KEEP : 0;
		char buf[8192];
		ssize_t n;

		while ((n = pread(fd, buf, sizeof(buf), from)) > 0) {
			strbuf_add(&sb, buf, (size_t)n);
			from += n;
		}
	}
	if (fd >= 0)
		close(fd);
	if (sb.len)
		output_tail(&sb, lines, out);
	else
		strbuf_addstr(out, "\n    (no output)");
	strbuf_release(&sb);
}

/* ---- one run -------------------------------------------------------------- */

struct run {
	const struct scenario_spec *spec;
	const struct config_scenario *conf;
	struct scenario_result *r;
	char port[8];
	char *start, *ready_arg, *metrics_arg;
	struct child_process service;
	struct child_process load;
	bool load_running;
	const char *phase;		/* the phase running */
	struct tail *tails;
	size_t nr_tails, alloc_tails;
	regex_t ready_re;
	bool have_re, ready_seen;
	FILE *csv;
	size_t csv_rows;
	bool csv_header;
	double next_metrics_poll;
	char *env_port;
	const char *env[2];
	char heap_dir[PATH_MAX];	/* the service's heap streams; "" without heap metrics */
	char *heap_env[3];
	const char *service_env[5];	/* env, and the preload's with heap metrics */
	pid_t recorder;			/* the CPU profile's recorder, while it runs */
	uint64_t t0;
	double cpu0;
	bool no_files;			/* the output directory could not be made */
};

static void set_error(struct run *run, enum scenario_end end, const char *fmt, ...) ATTR_PRINTF(3, 4);
static void set_error(struct run *run, enum scenario_end end, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (run->r->error)
		return;		/* the first reason is the one */
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	run->r->error = strbuf_detach(&sb, NULL);
	run->r->end = end;
}

/* {port} replaced by the port; NULL for NULL. */
static char *with_port(const char *s, const char *port)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	if (!s)
		return NULL;
	while ((p = strstr(s, "{port}"))) {
		strbuf_add(&sb, s, (size_t)(p - s));
		strbuf_addstr(&sb, port);
		s = p + 6;
	}
	strbuf_addstr(&sb, s);
	return strbuf_detach(&sb, NULL);
}

/* A command with {port} filled, the shell out of its way when it is one simple command. */
static char *command_with_port(const char *s, const char *port)
{
	char *line = with_port(s, port), *ex;

	if (!line)
		return NULL;
	ex = runner_exec_line(line);
	free(line);
	return ex;
}

static int bind_loopback(int port, int *fd_out)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &len)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	*fd_out = fd;
	return ntohs(a.sin_port);
}

/* The port: the configured one if it is free, else a free one the kernel gives. */
static int pick_port(struct run *run)
{
	int fd, port = bind_loopback(run->conf->port, &fd);

	if (port < 0) {
		if (errno == EADDRINUSE)
			set_error(run, SCENARIO_NOT_STARTED,
				  "port %d is taken: something else listens on 127.0.0.1:%d (set 'port = auto')",
				  run->conf->port, run->conf->port);
		else
			set_error(run, SCENARIO_NOT_STARTED, "cannot find a free port: %s", strerror(errno));
		return -1;
	}
	close(fd);
	run->r->port = port;
	snprintf(run->port, sizeof(run->port), "%d", port);
	return 0;
}

/* Does something accept on 127.0.0.1:port? */
static bool tcp_accepts(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return false;
	ok = !connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

static struct tail *add_tail(struct run *run, const char *path, const char *what)
{
	struct tail *t;

	ALLOC_GROW(run->tails, run->nr_tails + 1, run->alloc_tails);
	t = &run->tails[run->nr_tails++];
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	t->what = what;
	strbuf_init(&t->partial, 0);
	return t;
}

static void on_line(const char *line, size_t len, void *data)
{
	struct run *run = data;
	double now = timeline_now(&run->r->tl);

	if (run->have_re && !run->ready_seen) {
		char *copy = xstrndup(line, len);

		run->ready_seen = !regexec(&run->ready_re, copy, 0, NULL, 0);
		free(copy);
	}
	if (run->conf->metrics == SCENARIO_METRICS_OUTPUT)
		timeline_metric_line(&run->r->tl, now, line, len);
}

/* Metrics of a command's output or a URL's body: a JSON object of numbers, or NAME=VALUE lines. */
static void metrics_from_text(struct run *run, const char *text, size_t len)
{
	struct timeline *tl = &run->r->tl;
	double now = timeline_now(tl);
	struct strbuf line = STRBUF_INIT;

	while (len && (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r'))
		text++, len--;
	if (len && *text == '{') {
		json_t *doc = json_loadb(text, len, 0, NULL), *v;
		const char *key;

		if (!json_is_object(doc)) {
			tl->malformed_metrics++;
		} else {
			json_object_foreach(doc, key, v) {
				if (!json_is_number(v))
					continue;
				strbuf_reset(&line);
				strbuf_addf(&line, "HOTLOOP_METRIC %s=%.17g", key, json_number_value(v));
				timeline_metric_line(tl, now, line.buf, line.len);
			}
		}
		json_decref(doc);
		strbuf_release(&line);
		return;
	}
	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t n = nl ? (size_t)(nl - text) : len;

		strbuf_reset(&line);
		if (n >= 14 && !memcmp(text, "HOTLOOP_METRIC", 14)) {
			strbuf_add(&line, text, n);
		} else if (n && memchr(text, '=', n)) {
			strbuf_addstr(&line, "HOTLOOP_METRIC ");
			strbuf_add(&line, text, n);
		}
		if (line.len)
			timeline_metric_line(tl, now, line.buf, line.len);
		text += n + (nl ? 1 : 0);
		len -= n + (nl ? 1 : 0);
	}
	strbuf_release(&line);
}

static size_t curl_body(char *p, size_t size, size_t n, void *data)
{
	struct strbuf *sb = data;

	if (sb->len + size * n > RUN_COMMAND_KEEP)
		return 0;	/* too big for metrics: the poll fails */
	strbuf_add(sb, p, size * n);
	return size * n;
}

static void poll_metrics(struct run *run)
{
	double now = timeline_now(&run->r->tl);

	if (run->conf->metrics == SCENARIO_METRICS_OUTPUT || now < run->next_metrics_poll)
		return;
	run->next_metrics_poll = now + METRICS_POLL_S;
	if (run->conf->metrics == SCENARIO_METRICS_CMD) {
		struct child_process cp = CHILD_PROCESS_INIT;

		cp.shell = run->metrics_arg;
		cp.dir = run->spec->dir;
		cp.env = run->env;
		cp.sandbox = run->spec->sandbox;
		cp.timeout = METRICS_TIMEOUT_S;
		if (!run_command(&cp) && child_succeeded(&cp))
			metrics_from_text(run, cp.out.buf, cp.out.len);
		else
			run->r->tl.malformed_metrics++;
		child_process_release(&cp);
	} else {
		struct strbuf body = STRBUF_INIT;
		CURL *c = curl_easy_init();
		long code = 0;

		if (c) {
			curl_easy_setopt(c, CURLOPT_URL, run->metrics_arg);
			curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(METRICS_TIMEOUT_S * 1000));
			curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
			curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
			curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_body);
			curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
			if (curl_easy_perform(c) == CURLE_OK &&
			    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code == 200)
				metrics_from_text(run, body.buf, body.len);
			else
				run->r->tl.malformed_metrics++;
			curl_easy_cleanup(c);
		}
		strbuf_release(&body);
	}
}

/* The rows not written yet (the header first), so a run killed half way leaves its timeline. */
static void csv_rows(struct run *run)
{
	struct strbuf sb = STRBUF_INIT;
	const struct timeline *tl = &run->r->tl;

	if (!run->csv)
		return;
	timeline_format_csv_rows(tl, run->csv_rows, !run->csv_header, &sb);
	run->csv_header = true;
	fwrite(sb.buf, 1, sb.len, run->csv);
	fflush(run->csv);
	run->csv_rows = tl->nr_points;
	strbuf_release(&sb);
}

/* One tick: sample, read the outputs, poll metrics, tell the observers. */
static void tick(struct run *run)
{
	struct event ev = { .kind = EV_SCENARIO_SAMPLE, .source = "scenario" };

	timeline_sample(&run->r->tl);
	for (size_t i = 0; i < run->nr_tails; i++)
		tail_read(&run->tails[i], on_line, run);
	poll_metrics(run);
	if (run->r->tl.nr_points % 10 == 0)
		csv_rows(run);
	ev.phase = run->phase;
	ev.point = &run->r->tl.points[run->r->tl.nr_points - 1];
	emit(run->spec->observer, &ev);
}

/* Sleep until the next sample is due. */
static void wait_tick(const struct run *run, double last)
{
	double due = last + run->conf->interval_s, now = timeline_now(&run->r->tl);

	if (due > now) {
		struct timespec ts = { (time_t)(due - now), (long)((due - now - (double)(time_t)(due - now)) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

static bool service_gone(struct run *run)
{
	return check_command(&run->service) == 1;
}

static void describe_exit(int status, struct strbuf *sb)
{
	if (WIFSIGNALED(status))
		strbuf_addf(sb, "killed by signal %d", WTERMSIG(status));
	else
		strbuf_addf(sb, "exit status %d", WEXITSTATUS(status));
}

static void service_exited(struct run *run, const char *when)
{
	struct strbuf how = STRBUF_INIT, out = STRBUF_INIT;

	run->r->service_status = run->service.status;
	describe_exit(run->service.status, &how);
	file_tail(run->tails[0].path, 10, &out);
	set_error(run, SCENARIO_EXITED, "the service exited %s (%s); its last lines:%s", when, how.buf, out.buf);
	strbuf_release(&how);
	strbuf_release(&out);
}

static bool probe_ready(struct run *run)
{
	switch (run->conf->ready) {
	case SCENARIO_READY_NONE:
		return true;
	case SCENARIO_READY_TCP:
		return tcp_accepts(atoi(run->ready_arg));
	case SCENARIO_READY_LOG:
		return run->ready_seen;
	case SCENARIO_READY_FILE: {
		char *path = run->ready_arg[0] == '/' ? xstrdup(run->ready_arg) :
			     xstrfmt("%s/%s", run->spec->dir, run->ready_arg);
		bool ok = !access(path, F_OK);

		free(path);
		return ok;
	}
	case SCENARIO_READY_CMD: {
		struct child_process cp = CHILD_PROCESS_INIT;
		bool ok;

		cp.shell = run->ready_arg;
		cp.dir = run->spec->dir;
		cp.env = run->env;
		cp.sandbox = run->spec->sandbox;
		cp.timeout = 5;
		ok = !run_command(&cp) && child_succeeded(&cp);
		child_process_release(&cp);
		return ok;
	}
	}
	return false;
}

static const char *probe_name(const struct config_scenario *c)
{
	static const char *const names[] = { "none", "tcp", "log", "file", "cmd" };

	return names[c->ready];
}

static int start_service(struct run *run)
{
	char *log = xstrfmt("%s/service.log", run->r->dir);
	double last;
	uint64_t deadline;

	add_tail(run, log, "the service");
	run->service.shell = run->start;
	run->service.dir = run->spec->dir;
	run->service.env = *run->heap_dir ? run->service_env : run->env;
	run->service.out_file = log;
	run->service.guard = true;
	run->service.sandbox = run->spec->sandbox;
	if (start_command(&run->service)) {
		set_error(run, SCENARIO_NOT_STARTED, "cannot start the service: %s", last_error());
		free(log);
		return -1;
	}
	free(log);
	timeline_watch(&run->r->tl, run->service.pid, false);
	emit_note(run->spec->observer, "scenario", "started the service on port %s; waiting until it is ready (%s)",
		  run->port, probe_name(run->conf));
	deadline = now_ns() + (uint64_t)(run->conf->ready_timeout_s * 1e9);
	for (;;) {
		last = timeline_now(&run->r->tl);
		tick(run);
		if (service_gone(run)) {
			service_exited(run, "before it was ready");
			return -1;
		}
		if (probe_ready(run))
			return 0;
		if (hl_cancelled()) {
			set_error(run, SCENARIO_INTERRUPTED, "interrupted");
			return -1;
		}
		if (now_ns() >= deadline) {
			struct strbuf out = STRBUF_INIT;

			file_tail(run->tails[0].path, 10, &out);
			set_error(run, SCENARIO_NOT_READY, "the service was not ready after %g s: the probe '%s %s' never succeeded; its last lines:%s",
				  run->conf->ready_timeout_s, probe_name(run->conf), run->ready_arg ? run->ready_arg : "",
				  out.buf);
			strbuf_release(&out);
			return -1;
		}
		wait_tick(run, last);
	}
}

/* Stop what runs under cp: 'sig', then SIGKILL after 'grace' seconds, sampling meanwhile. */
static bool stop_child(struct run *run, struct child_process *cp, int sig, double grace)
{
	uint64_t deadline = now_ns() + (uint64_t)(grace * 1e9);

	if (check_command(cp))
		return false;
	signal_command(cp, sig);
	while (!check_command(cp)) {
		double last = timeline_now(&run->r->tl);

		if (now_ns() >= deadline) {
			kill_command(cp);
			finish_command(cp);
			return true;
		}
		tick(run);
		wait_tick(run, last);
	}
	return false;
}

static void stop_load(struct run *run)
{
	if (!run->load_running)
		return;
	stop_child(run, &run->load, SIGTERM, LOAD_GRACE_S);
	run->load_running = false;
	child_process_release(&run->load);
	child_process_init(&run->load);
}

static void load_failed(struct run *run, const struct config_phase *ph, const char *cmd, const char *log)
{
	struct strbuf how = STRBUF_INIT, out = STRBUF_INIT;

	child_describe(&run->load, &how);
	file_tail(log, 10, &out);
	set_error(run, SCENARIO_LOAD_FAILED, "phase '%s': the load '%s' failed (%s); its last lines:%s",
		  ph->name, cmd, how.buf, out.buf);
	strbuf_release(&how);
	strbuf_release(&out);
}

/* ---- the CPU profile of the judged phase ------------------------------------ */

/* The service's own process: the guard's child. */
static pid_t service_pid(const struct run *run)
{
	char path[64], buf[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)run->service.pid, (int)run->service.pid);
	n = read_small_file(path, buf, sizeof(buf));
	return n > 0 ? (pid_t)atoi(buf) : -1;
}

/*
 * Record the service in a child of ours (a fork, not hotloop again), so
 * the timeline keeps its interval: it attaches to the service and stops
 * on SIGINT at the phase's end, then writes profile.pb.gz.
 */
static void start_recorder(struct run *run)
{
	pid_t target = service_pid(run), pid;

	if (target <= 0) {
		run->r->profile_error = xstrdup("the service's process could not be found");
		return;
	}
	pid = fork();
	if (pid < 0) {
		run->r->profile_error = xstrfmt("cannot fork the recorder: %s", strerror(errno));
		return;
	}
	if (!pid) {
		struct record_options o = { .pid = target };
		struct record_result res;
		char *out = xstrfmt("%s/profile.pb.gz", run->r->dir);
		int fd = open(xstrfmt("%s/profile.log", run->r->dir), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

		/* its messages go to profile.log: the terminal is the scenario's */
		if (fd >= 0)
			dup2(fd, 2);
		signal(SIGINT, SIG_DFL);
		o.sampler.freq = SAMPLER_DEFAULT_FREQ;
		o.output = out;
		memset(&res, 0, sizeof(res));
		_exit(record_run(&o, &res) ? 1 : 0);
	}
	run->recorder = pid;
}

/* Stop the recorder at the phase's end (it writes the profile). */
static void stop_recorder(struct run *run)
{
	if (run->recorder > 0)
		kill(run->recorder, SIGINT);
}

/* Wait for the recorder to have written the profile. */
static void reap_recorder(struct run *run)
{
	int status;

	if (run->recorder <= 0)
		return;
	kill(run->recorder, SIGINT);
	while (waitpid(run->recorder, &status, 0) < 0 && errno == EINTR)
		;
	run->recorder = -1;
	if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		run->r->profiled = true;
	} else {
		struct strbuf sb = STRBUF_INIT;
		char *log = xstrfmt("%s/profile.log", run->r->dir);

		file_tail(log, 3, &sb);
		run->r->profile_error = xstrfmt("the recorder failed:%s", sb.buf);
		strbuf_release(&sb);
		free(log);
	}
}

static int run_phase(struct run *run, size_t i)
{
	const struct config_phase *ph = &run->conf->phases[i];
	struct event ev = { .kind = EV_SCENARIO_PHASE, .source = "scenario" };
	char *cmd = command_with_port(ph->load, run->port), *shown = with_port(ph->load, run->port);
	char *log = NULL, *msg;
	double start = timeline_now(&run->r->tl);
	int ret = 0;

	timeline_phase_begin(&run->r->tl, ph->name, ph->kind);
	run->phase = ph->name;
	if (cmd) {
		log = xstrfmt("%s/load-%zu-%s.log", run->r->dir, i + 1, ph->name);
		add_tail(run, log, ph->name);
		run->load.shell = cmd;
		run->load.dir = run->spec->dir;
		run->load.env = run->env;
		run->load.out_file = log;
		run->load.guard = true;
		run->load.sandbox = run->spec->sandbox;
		if (start_command(&run->load)) {
			set_error(run, SCENARIO_LOAD_FAILED, "phase '%s': cannot start the load '%s': %s", ph->name,
				  shown, last_error());
			ret = -1;
			goto out;
		}
		run->load_running = true;
	}
	if (ph->until_exit)
		msg = xstrfmt("phase %s until the load exits: %s", ph->name, shown);
	else if (cmd)
		msg = xstrfmt("phase %s for %g s: %s", ph->name, ph->seconds, shown);
	else
		msg = xstrfmt("phase %s for %g s", ph->name, ph->seconds);
	ev.message = msg;
	ev.phase = ph->name;
	emit(run->spec->observer, &ev);
	free(msg);
	if (i == run->conf->judge && (run->conf->profile == SCENARIO_PROFILE_CPU || run->spec->profile_cpu))
		start_recorder(run);
	for (;;) {
		double last = timeline_now(&run->r->tl);

		wait_tick(run, last);
		tick(run);
		if (service_gone(run)) {
			char *when = xstrfmt("during phase '%s'", ph->name);

			service_exited(run, when);
			free(when);
			ret = -1;
			break;
		}
		if (run->load_running && check_command(&run->load)) {
			run->load_running = false;
			if (!child_succeeded(&run->load)) {
				load_failed(run, ph, shown, log);
				ret = -1;
				break;
			}
			if (ph->until_exit)
				break;
		}
		if (hl_cancelled()) {
			set_error(run, SCENARIO_INTERRUPTED, "interrupted in phase '%s'", ph->name);
			ret = -1;
			break;
		}
		if (!ph->until_exit && timeline_now(&run->r->tl) - start >= ph->seconds)
			break;
	}
out:
	if (i == run->conf->judge)
		stop_recorder(run);
	stop_load(run);
	/* what the load printed as it stopped belongs to this phase */
	for (size_t k = 0; k < run->nr_tails; k++)
		tail_read(&run->tails[k], on_line, run);
	timeline_phase_end(&run->r->tl);
	free(cmd);
	free(shown);
	free(log);
	return ret;
}

static void stop_service(struct run *run)
{
	double grace = run->conf->stop_grace_s;

	if (!run->service.running)
		return;
	if (hl_cancelled() && grace > 2)
		grace = 2;	/* interrupted: don't keep the person waiting */
	emit_note(run->spec->observer, "scenario", "stopping the service (SIG%s, then SIGKILL after %g s)",
		  config_signal_name(run->conf->stop_signal), grace);
	run->r->service_killed = stop_child(run, &run->service, run->conf->stop_signal, grace);
	if (run->r->service_status < 0)
		run->r->service_status = run->service.status;
}

/* ---- the numbers ---------------------------------------------------------- */

/* Is 'kb' above 'base' by more than the tolerance and the floor? */
static bool above(uint64_t kb, uint64_t base, double tolerance)
{
	return (double)kb > (double)base * (1 + tolerance) && kb > base + LEAK_FLOOR_KB;
}

/* RSS of the point nearest t. */
static uint64_t rss_at(const struct timeline *tl, double t)
{
	const struct tl_point *best = NULL;

	for (size_t i = 0; i < tl->nr_points; i++)
		if (!best || fabs(tl->points[i].t - t) < fabs(best->t - t))
			best = &tl->points[i];
	return best ? best->rss_kb : 0;
}

static void judge_leak(struct scenario_result *r, const struct config_scenario *c)
{
	const struct tl_phase_stats *before = NULL, *after = NULL, *judged;

	r->leak.tolerance = c->leak_tolerance;
	r->leak.verdict = LEAK_UNKNOWN;
	if (r->judge == SIZE_MAX)
		return;
	judged = &r->phases[r->judge];
	for (size_t i = 0; i < r->judge; i++)
		if (!strcmp(c->phases[i].kind, "idle") && r->phases[i].cpu_pct.n)
			before = &r->phases[i];
	for (size_t i = r->nr_phases; i-- > r->judge + 1;)
		if (!strcmp(c->phases[i].kind, "idle") && r->phases[i].cpu_pct.n)
			after = &r->phases[i];
	if (!before || !after)
		return;
	r->leak.before_kb = before->rss_end_kb;
	r->leak.after_kb = after->rss_end_kb;
	r->leak.verdict = LEAK_RETURNED;
	if (!above(r->leak.after_kb, r->leak.before_kb, c->leak_tolerance))
		return;
	/* it stayed up: still growing through the pressure's second half, or only what it took early */
	r->leak.mid_kb = rss_at(&r->tl, (judged->start_s + judged->end_s) / 2);
	r->leak.end_kb = judged->rss_end_kb;
	r->leak.verdict = above(r->leak.end_kb, r->leak.mid_kb, c->leak_tolerance / 2) ? LEAK_GREW : LEAK_HELD;
}

static void compute(struct scenario_result *r, const struct config_scenario *c)
{
	r->nr_phases = r->tl.nr_phases;
	r->phases = xcalloc(r->nr_phases ? r->nr_phases : 1, sizeof(*r->phases));
	for (size_t i = 0; i < r->nr_phases; i++)
		timeline_phase_stats(&r->tl, i, &r->phases[i]);
	r->judge = c->judge < r->nr_phases ? c->judge : SIZE_MAX;
	judge_leak(r, c);
}

static double own_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static int write_json(const char *path, json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	int ret;

	if (!text)
		return error("cannot write '%s': out of memory", path);
	ret = write_file_atomic(path, text, strlen(text));
	free(text);
	return ret;
}

static int write_files(struct run *run)
{
	struct scenario_result *r = run->r;
	json_t *tl = timeline_to_json(&r->tl), *sum;
	struct strbuf sb = STRBUF_INIT;
	char *path;
	int ret = 0;

	path = xstrfmt("%s/timeline.json", r->dir);
	ret |= write_json(path, tl);
	free(path);
	path = xstrfmt("%s/timeline.csv", r->dir);
	timeline_format_csv(&r->tl, &sb);
	ret |= write_file_atomic(path, sb.buf, sb.len);
	free(path);
	strbuf_reset(&sb);
	scenario_graph_html(run->spec->label ? run->spec->label : run->conf->name, tl, NULL, NULL, &sb);
	path = xstrfmt("%s/graph.html", r->dir);
	ret |= write_file_atomic(path, sb.buf, sb.len);
	free(path);
	sum = scenario_result_to_json(r, run->conf->name);
	path = xstrfmt("%s/summary.json", r->dir);
	ret |= write_json(path, sum);
	free(path);
	json_decref(sum);
	json_decref(tl);
	strbuf_release(&sb);
	return ret ? -1 : 0;
}

/*
 * Heap metrics of the service: the preload found, the start command's
 * program checked (a static or setuid one never loads it), a directory
 * for the streams, the service's environment with the preload.
 */
static int heap_start(struct run *run)
{
	const struct sandbox *sb = run->spec->sandbox;
	char *lib, *prog;
	bool simple;
	int ret = 0;

	if (!(lib = heap_find_lib()))
		return -1;
	if ((prog = runner_shell_program(!strncmp(run->start, "exec ", 5) ? run->start + 5 : run->start,
					 &simple))) {
		ret = heap_check_program(prog);
		free(prog);
	}
	if (!ret) {
		snprintf(run->heap_dir, sizeof(run->heap_dir), "%s/hotloop-heap.XXXXXX",
			 sb && sb->tmp ? sb->tmp : "/tmp");
		if (!mkdtemp(run->heap_dir)) {
			ret = error("cannot create a directory for the heap streams: %s", strerror(errno));
			*run->heap_dir = '\0';
		}
	}
	if (!ret) {
		heap_stats_env(lib, run->heap_dir, NULL, run->heap_env);
		run->service_env[0] = run->env_port;
		for (size_t i = 0; i < 3; i++)
			run->service_env[i + 1] = run->heap_env[i];
		run->service_env[4] = NULL;
	}
	free(lib);
	return ret;
}

/* The service's streams read once it has ended; a service that wrote none is an error. */
static void heap_finish(struct run *run)
{
	struct scenario_result *r = run->r;
	struct heap_stats *st = &r->heap_stats;
	size_t nr = r->tl.nr_phases;
	struct heap_span *spans = xcalloc(nr ? nr : 1, sizeof(*spans));

	/* the phases as spans of the monotonic clock the preload's points carry */
	for (size_t i = 0; i < nr; i++) {
		const struct tl_phase *ph = &r->tl.phases[i];
		double end = ph->end_s < 0 ? timeline_now(&r->tl) : ph->end_s;

		spans[i] = (struct heap_span){ r->tl.start_ns + (uint64_t)(ph->start_s * 1e9),
					       r->tl.start_ns + (uint64_t)(end * 1e9) };
	}
	free(r->heap_phases);
	r->heap_phases = xcalloc(nr ? nr : 1, sizeof(*r->heap_phases));
	if (heap_stats_collect_spans(run->heap_dir, st, spans, nr, r->heap_phases)) {
		set_error(run, SCENARIO_EXITED, "%s", last_error());
	} else if (!st->streams) {
		if (!run->r->error)
			set_error(run, SCENARIO_EXITED, "no heap stream came from the service: no process of "
				  "it loaded %s (a static program behind a wrapper, or one that clears "
				  "LD_PRELOAD); its heap cannot be measured", HEAP_LIB_NAME);
	} else {
		run->r->heap = true;
		if (st->lost_execs)
			warning("%zu process%s of the service exec'd a program that did not load %s: the "
				"heap metrics leave %s out", st->lost_execs, st->lost_execs == 1 ? "" : "es",
				HEAP_LIB_NAME, st->lost_execs == 1 ? "it" : "them");
		if (st->cut_streams)
			warning("%zu of the %zu heap streams of the service ended without their totals (a "
				"process killed, or still running; a service should exit when it is stopped): "
				"its allocs and alloc-bytes are short", st->cut_streams, st->streams);
	}
	free(spans);
	rmdir(run->heap_dir);
}

/* Everything up to a ready service: 0, or -1 with r->error set (and then run_end() still runs). */
static int run_begin(struct run *run)
{
	const struct scenario_spec *s = run->spec;
	struct scenario_result *r = run->r;
	char *csv;

	run->t0 = now_ns();
	run->cpu0 = own_cpu_s();
	timeline_release(&r->tl);
	timeline_init(&r->tl, s->conf->interval_s);
	free(r->dir);
	r->dir = xstrdup(s->out_dir);
	r->end = SCENARIO_DONE;
	child_process_init(&run->service);
	child_process_init(&run->load);
	if (mkdir_p(r->dir)) {
		free(r->dir);
		r->dir = NULL;
		set_error(run, SCENARIO_NOT_STARTED, "%s", last_error());
		run->no_files = true;
		return -1;
	}
	csv = xstrfmt("%s/timeline.csv", r->dir);
	run->csv = fopen(csv, "we");
	free(csv);
	if (pick_port(run))
		return -1;
	run->env_port = xstrfmt("HOTLOOP_PORT=%s", run->port);
	run->env[0] = run->env_port;
	run->start = command_with_port(s->conf->start, run->port);
	run->ready_arg = with_port(s->conf->ready_arg, run->port);
	run->metrics_arg = with_port(s->conf->metrics_arg, run->port);
	if (s->conf->ready == SCENARIO_READY_LOG)
		run->have_re = !regcomp(&run->ready_re, run->ready_arg, REG_EXTENDED | REG_NOSUB);
	if (s->heap && heap_start(run)) {
		set_error(run, SCENARIO_NOT_STARTED, "%s", last_error());
		return -1;
	}
	return start_service(run);
}

/* Stop the service, write the files, free the run's own state; 0 or -1 with r->error. */
static int run_end(struct run *run)
{
	const struct scenario_spec *s = run->spec;
	struct scenario_result *r = run->r;

	if (run->no_files)
		goto out_free;
	run->phase = NULL;
	stop_service(run);
	if (run->service.running)
		finish_command(&run->service);
	reap_recorder(run);
	timeline_sample(&r->tl);
	for (size_t i = 0; i < run->nr_tails; i++)
		tail_read(&run->tails[i], on_line, run);
	if (*run->heap_dir)
		heap_finish(run);
	r->wall_s = (double)(now_ns() - run->t0) / 1e9;
	r->hotloop_cpu_s = own_cpu_s() - run->cpu0;
	compute(r, s->conf);
	if (run->csv) {
		csv_rows(run);
		fclose(run->csv);
		run->csv = NULL;
	}
	if (write_files(run) && !r->error)
		set_error(run, SCENARIO_NOT_STARTED, "%s", last_error());
out_free:
	child_process_release(&run->service);
	child_process_release(&run->load);
	for (size_t i = 0; i < run->nr_tails; i++) {
		free(run->tails[i].path);
		strbuf_release(&run->tails[i].partial);
	}
	free(run->tails);
	run->tails = NULL;
	run->nr_tails = 0;
	if (run->have_re)
		regfree(&run->ready_re);
	run->have_re = false;
	free(run->start);
	run->start = NULL;
	free(run->ready_arg);
	run->ready_arg = NULL;
	free(run->metrics_arg);
	run->metrics_arg = NULL;
	free(run->env_port);
	run->env_port = NULL;
	for (size_t i = 0; i < 3; i++) {
		free(run->heap_env[i]);
		run->heap_env[i] = NULL;
	}
	return r->error ? -1 : 0;
}

int scenario_run(const struct scenario_spec *s, struct scenario_result *r)
{
	struct run run = { .spec = s, .conf = s->conf, .r = r };

	if (!run_begin(&run))
		for (size_t i = 0; i < s->conf->nr_phases; i++)
			if (run_phase(&run, i))
				break;
	if (run_end(&run))
		return error("scenario '%s': %s", s->conf->name, r->error);
	return 0;
}

/* ---- a service alone, for the canary -------------------------------------- */

struct scenario_service {
	struct run run;
};

int scenario_service_start(const struct scenario_spec *s, struct scenario_result *r,
			   struct scenario_service **out)
{
	struct scenario_service *svc = xcalloc(1, sizeof(*svc));

	svc->run.spec = s;
	svc->run.conf = s->conf;
	svc->run.r = r;
	*out = svc;
	return run_begin(&svc->run);
}

void scenario_service_sample(struct scenario_service *svc)
{
	tick(&svc->run);
}

bool scenario_service_exited(struct scenario_service *svc)
{
	struct run *run = &svc->run;

	if (!run->service.pid || !service_gone(run))
		return false;
	service_exited(run, "while it was under load");
	return true;
}

pid_t scenario_service_pid(const struct scenario_service *svc)
{
	return svc->run.service.running ? svc->run.service.pid : 0;
}

int scenario_service_stop(struct scenario_service *svc)
{
	int ret;

	if (!svc)
		return 0;
	ret = run_end(&svc->run);
	free(svc);
	return ret;
}

/* ---- one run for compare ------------------------------------------------- */

int scenario_measure(const struct scenario_spec *s, struct run_result *out)
{
	struct scenario_result r;
	const struct tl_phase_stats *ps;
	uint64_t peak = 0;
	int ret = 0;

	scenario_result_init(&r);
	if (scenario_run(s, &r)) {
		if (!r.dir) {
			ret = -1;
			goto out;
		}
		if (r.end == SCENARIO_INTERRUPTED)
			out->interrupted = true;
		else
			out->exit_status = 1;	/* the reason went out as an error: the verdict says the run failed */
	}
	for (size_t i = 0; i < r.nr_phases; i++)
		if (r.phases[i].rss_max_kb > peak)
			peak = r.phases[i].rss_max_kb;
	out->max_rss_kib = (long)peak;
	if (r.heap) {
		static const char *const names[] = { HEAP_METRIC_PEAK, HEAP_METRIC_ALLOCS, HEAP_METRIC_BYTES };
		const uint64_t v[] = { r.heap_stats.peak_bytes, r.heap_stats.allocs, r.heap_stats.alloc_bytes };

		for (size_t i = 0; i < 3; i++) {
			ALLOC_GROW(out->metrics, out->nr_metrics + 1, out->alloc_metrics);
			out->metrics[out->nr_metrics].name = xstrdup(names[i]);
			out->metrics[out->nr_metrics++].value = (double)v[i];
		}
	}
	if (r.judge == SIZE_MAX || out->exit_status || out->interrupted)
		goto out;
	ps = &r.phases[r.judge];
	out->wall_ns = (uint64_t)((ps->end_s - ps->start_s) * 1e9);
	/* CPU seconds per second of the phase: compare takes user + sys */
	out->user_ns = (uint64_t)(ps->cpu_pct.mean / 100.0 * 1e9);
	for (size_t m = 0; m < ps->nr_metrics; m++) {
		const struct tl_metric_stats *ms = &ps->metrics[m];

		if (!ms->seen)
			continue;
		if (r.heap && (!strcmp(ms->name, HEAP_METRIC_PEAK) || !strcmp(ms->name, HEAP_METRIC_ALLOCS) ||
			       !strcmp(ms->name, HEAP_METRIC_BYTES))) {
			warning("the scenario printed metric '%s', which its heap measurement replaces", ms->name);
			continue;
		}
		ALLOC_GROW(out->metrics, out->nr_metrics + 1, out->alloc_metrics);
		out->metrics[out->nr_metrics].name = xstrdup(ms->name);
		out->metrics[out->nr_metrics++].value =
			timeline_metric_is_counter(&r.tl, m) ? ms->rate_per_s : ms->mean;
	}
out:
	scenario_result_release(&r);
	return ret;
}

/* ---- the summary ---------------------------------------------------------- */

static json_t *dist_json(const struct tl_dist *d)
{
	return json_pack("{s:f, s:f, s:f, s:f}", "mean", d->mean, "p50", d->p50, "p95", d->p95, "max", d->max);
}

json_t *scenario_result_to_json(const struct scenario_result *r, const char *name)
{
	json_t *doc = json_object(), *phases = json_array(), *files = json_object();
	static const char *const ends[] = { "done", "not-started", "not-ready", "exited", "load-failed",
					    "interrupted" };

	for (size_t i = 0; i < r->nr_phases; i++) {
		const struct tl_phase_stats *ps = &r->phases[i];
		json_t *metrics = json_object();

		for (size_t m = 0; m < ps->nr_metrics; m++) {
			const struct tl_metric_stats *ms = &ps->metrics[m];

			if (!ms->seen)
				continue;
			json_object_set_new(metrics, ms->name, json_pack("{s:f, s:f, s:f, s:I}", "rate_per_s",
									 ms->rate_per_s, "total", ms->total, "mean",
									 ms->mean, "n", (json_int_t)ms->n));
		}
		json_array_append_new(phases, json_pack(
			"{s:s, s:s, s:f, s:f, s:I, s:o, s:o, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:I, s:I, s:f, s:o, s:o}",
			"name", ps->name, "kind", r->tl.phases[i].kind, "start_s", ps->start_s, "end_s", ps->end_s,
			"samples", (json_int_t)ps->cpu_pct.n,
			"cpu_pct", dist_json(&ps->cpu_pct), "cpu_machine_pct", dist_json(&ps->cpu_machine_pct),
			"rss_kb", "start", (json_int_t)ps->rss_start_kb, "end", (json_int_t)ps->rss_end_kb, "max",
			(json_int_t)ps->rss_max_kb,
			"vsz_kb", "start", (json_int_t)ps->vsz_start_kb, "end", (json_int_t)ps->vsz_end_kb, "max",
			(json_int_t)ps->vsz_max_kb,
			"threads", (json_int_t)ps->threads_max, "processes", (json_int_t)ps->processes_max,
			"machine_busy_pct", ps->machine_busy_mean_pct, "metrics", metrics,
			"heap", !r->heap || i >= r->tl.nr_phases ? json_null() :
			json_pack("{s:I, s:I, s:I}", "heap_peak_bytes", (json_int_t)r->heap_phases[i].peak_bytes,
				  "allocs", (json_int_t)r->heap_phases[i].allocs, "alloc_bytes",
				  (json_int_t)r->heap_phases[i].alloc_bytes)));
	}
	json_object_set_new(doc, "scenario", json_text(name));
	json_object_set_new(doc, "outcome", json_string(ends[r->end]));
	json_object_set_new(doc, "error", r->error ? json_text(r->error) : json_null());
	json_object_set_new(doc, "port", json_integer(r->port));
	json_object_set_new(doc, "judge", r->judge != SIZE_MAX ? json_text(r->phases[r->judge].name) : json_null());
	json_object_set_new(doc, "phases", phases);
	json_object_set_new(doc, "leak", json_pack("{s:I, s:I, s:I, s:I, s:f, s:s}", "rss_before_kb",
						   (json_int_t)r->leak.before_kb, "rss_after_kb", (json_int_t)r->leak.after_kb,
						   "rss_mid_pressure_kb", (json_int_t)r->leak.mid_kb, "rss_end_pressure_kb",
						   (json_int_t)r->leak.end_kb, "tolerance", r->leak.tolerance, "verdict",
						   scenario_leak_names[r->leak.verdict]));
	json_object_set_new(doc, "service", json_pack("{s:o, s:b}", "status",
						      r->service_status < 0 ? json_null() :
						      WIFSIGNALED(r->service_status) ?
						      json_pack("{s:i}", "signal", WTERMSIG(r->service_status)) :
						      json_pack("{s:i}", "exit", WEXITSTATUS(r->service_status)),
						      "killed_after_grace", r->service_killed));
	json_object_set_new(doc, "profile", r->profiled ? json_pack("{s:o}", "error", json_null()) :
					    r->profile_error ? json_pack("{s:o}", "error", json_text(r->profile_error)) :
					    json_null());
	json_object_set_new(doc, "heap", !r->heap ? json_null() :
				    json_pack("{s:I, s:I, s:I}", "heap_peak_bytes", (json_int_t)r->heap_stats.peak_bytes,
					      "allocs", (json_int_t)r->heap_stats.allocs, "alloc_bytes",
					      (json_int_t)r->heap_stats.alloc_bytes));
	json_object_set_new(doc, "malformed_metric_lines", json_integer((json_int_t)r->tl.malformed_metrics));
	json_object_set_new(doc, "sampler", json_pack("{s:I, s:f, s:f, s:f, s:f}", "samples",
						      (json_int_t)r->tl.samples, "interval_s", r->tl.interval_s,
						      "cpu_s", (double)r->tl.sampler_cpu_ns / 1e9,
						      "cpu_pct", r->wall_s > 0 ? 100.0 * (double)r->tl.sampler_cpu_ns / 1e9 / r->wall_s : 0.0,
						      "hotloop_cpu_pct", r->wall_s > 0 ? 100.0 * r->hotloop_cpu_s / r->wall_s : 0.0));
	json_object_set_new(doc, "wall_s", json_real(r->wall_s));
	if (r->dir) {
		static const char *const names[] = { "timeline.json", "timeline.csv", "graph.html", "summary.json",
						     "service.log" };

		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			char *p = xstrfmt("%s/%s", r->dir, names[i]);
			char key[32];

			snprintf(key, sizeof(key), "%.*s", (int)strcspn(names[i], "."), names[i]);
			if (!strcmp(names[i], "timeline.csv"))
				snprintf(key, sizeof(key), "csv");
			json_object_set_new(files, key, json_text(p));
			free(p);
		}
		if (r->profiled) {
			char *p = xstrfmt("%s/profile.pb.gz", r->dir);

			json_object_set_new(files, "profile", json_text(p));
			free(p);
		}
	}
	json_object_set_new(doc, "files", files);
	return doc;
}

static void add_kib(struct strbuf *out, uint64_t kb)
{
	if (kb >= 10 * 1024 * 1024)
		strbuf_addf(out, "%.1f GiB", (double)kb / (1024.0 * 1024));
	else if (kb >= 10 * 1024)
		strbuf_addf(out, "%.1f MiB", (double)kb / 1024.0);
	else
		strbuf_addf(out, "%llu KiB", (unsigned long long)kb);
}

void scenario_result_format_text(const struct scenario_result *r, const char *name, struct strbuf *out)
{
	strbuf_addf(out, "scenario %s: %zu phase%s, %.1f s, port %d\n", name, r->nr_phases,
		    r->nr_phases == 1 ? "" : "s", r->wall_s, r->port);
	strbuf_addf(out, "%-12s %7s %8s %8s %8s %8s %7s  %-10s %-10s %-10s %-10s %7s\n", "phase", "secs", "cpu%mean",
		    "cpu%p50", "cpu%p95", "cpu%max", "mach%", "rss start", "rss end", "rss peak", "virt peak",
		    "threads");
	for (size_t i = 0; i < r->nr_phases; i++) {
		const struct tl_phase_stats *ps = &r->phases[i];
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT, d = STRBUF_INIT;

		add_kib(&a, ps->rss_start_kb);
		add_kib(&b, ps->rss_end_kb);
		add_kib(&c, ps->rss_max_kb);
		add_kib(&d, ps->vsz_max_kb);
		strbuf_addf(out, "%-12s %7.1f %8.1f %8.1f %8.1f %8.1f %7.1f  %-10s %-10s %-10s %-10s %7u%s\n", ps->name,
			    ps->end_s - ps->start_s, ps->cpu_pct.mean, ps->cpu_pct.p50, ps->cpu_pct.p95, ps->cpu_pct.max,
			    ps->cpu_machine_pct.mean, a.buf, b.buf, c.buf, d.buf, ps->threads_max,
			    i == r->judge ? "  (judged)" : "");
		strbuf_release(&a);
		strbuf_release(&b);
		strbuf_release(&c);
		strbuf_release(&d);
	}
	for (size_t m = 0; r->nr_phases && m < r->phases[0].nr_metrics; m++) {
		bool seen = false;

		for (size_t i = 0; i < r->nr_phases; i++)
			seen |= r->phases[i].metrics[m].seen;
		if (!seen)
			continue;
		strbuf_addf(out, "metric %s:", r->phases[0].metrics[m].name);
		for (size_t i = 0; i < r->nr_phases; i++) {
			const struct tl_metric_stats *ms = &r->phases[i].metrics[m];

			if (ms->seen)
				strbuf_addf(out, "  %s %.6g/s (total %.6g, mean %.6g)", r->phases[i].name,
					    ms->rate_per_s, ms->total, ms->mean);
		}
		strbuf_addch(out, '\n');
	}
	if (r->tl.malformed_metrics)
		strbuf_addf(out, "warning: %zu malformed metric line%s ignored (HOTLOOP_METRIC NAME=NUMBER ...)\n",
			    r->tl.malformed_metrics, r->tl.malformed_metrics == 1 ? "" : "s");
	if (r->leak.verdict == LEAK_UNKNOWN) {
		strbuf_addstr(out, "memory: no idle phase before and after the judged one to compare\n");
	} else {
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		add_kib(&a, r->leak.before_kb);
		add_kib(&b, r->leak.after_kb);
		strbuf_addf(out, "memory: RSS %s before the pressure, %s after: %s\n", a.buf, b.buf,
			    r->leak.verdict == LEAK_GREW ? "it did NOT return, and grew to the end of the pressure (a leak?)" :
			    r->leak.verdict == LEAK_HELD ? "it kept what it took early in the pressure, but stopped growing" :
			    "it returned to its level");
		strbuf_release(&a);
		strbuf_release(&b);
	}
	if (r->heap) {
		struct strbuf a = STRBUF_INIT;

		add_kib(&a, r->heap_stats.peak_bytes / 1024);
		strbuf_addf(out, "heap: the service's over the whole run: heap-peak %s, %" PRIu64 " allocs, %" PRIu64
			    " alloc-bytes\n", a.buf, r->heap_stats.allocs, r->heap_stats.alloc_bytes);
		for (size_t i = 0; i < r->nr_phases && i < r->tl.nr_phases; i++) {
			const struct heap_span_stats *h = &r->heap_phases[i];

			strbuf_reset(&a);
			add_kib(&a, h->peak_bytes / 1024);
			strbuf_addf(out, "heap in %-12s heap-peak %-10s %10" PRIu64 " allocs %12" PRIu64
				    " alloc-bytes\n", r->phases[i].name, a.buf, h->allocs, h->alloc_bytes);
		}
		strbuf_release(&a);
	}
	strbuf_addf(out, "sampler: %zu samples every %g s, %.1f ms of CPU (%.3f%% of one core); hotloop in all %.2f%%\n",
		    r->tl.samples, r->tl.interval_s, (double)r->tl.sampler_cpu_ns / 1e6,
		    r->wall_s > 0 ? 100.0 * (double)r->tl.sampler_cpu_ns / 1e9 / r->wall_s : 0.0,
		    r->wall_s > 0 ? 100.0 * r->hotloop_cpu_s / r->wall_s : 0.0);
	if (r->profiled)
		strbuf_addf(out, "profile: %s/profile.pb.gz, the CPU of the service in phase '%s' (hotloop brief FILE)\n",
			    r->dir, r->judge != SIZE_MAX ? r->phases[r->judge].name : "");
	else if (r->profile_error)
		strbuf_addf(out, "warning: no CPU profile: %s\n", r->profile_error);
	if (r->dir)
		strbuf_addf(out, "files: %s/{timeline.json,timeline.csv,graph.html,summary.json,service.log}\n", r->dir);
}
