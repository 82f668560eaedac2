/*
 * runner.c: one measured run of a shell command. hotloop talks to a
 * launcher over a socket: the launcher is hotloop re-executed (a constructor
 * below catches HOTLOOP_LAUNCHER_FD before main() runs), so it stays a few
 * MiB however large the caller grows, and the peak RSS a run inherits across
 * exec is the launcher's, not hotloop's. The launcher forks, pins, execs,
 * enforces the timeout on the run's process group and reports wait4()'s
 * rusage; hotloop reads the run's stdout through a pipe it passed along.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "intern.h"
#include "doctor.h"
#include "heap-record.h"
#include "heap-stats.h"
#include "runner.h"
#include "sandbox.h"

#define LAUNCHER_ENV "HOTLOOP_LAUNCHER_FD"
#define LAUNCH_MAGIC 0x484c524eu
#define LAUNCH_PAYLOAD_MAX (4u << 20)
#define LAUNCH_MAX_CPUS 1024
#define LAUNCH_MAX_STRINGS 65536

struct launch_req {
	uint32_t magic;
	uint32_t payload_len;		/* dir, argv..., env..., each NUL-terminated */
	uint32_t nr_argv, nr_env;
	int64_t timeout_ns;		/* 0: none */
	uint32_t pin;
	uint32_t pad;
	uint64_t cpu_mask[LAUNCH_MAX_CPUS / 64];
};

enum launch_stage { STAGE_NONE, STAGE_CHDIR, STAGE_AFFINITY, STAGE_EXEC, STAGE_FORK };

struct launch_reply {
	int32_t stage;			/* what failed before the run started, or STAGE_NONE */
	int32_t err;			/* its errno */
	int32_t wstatus;
	int32_t timed_out, interrupted;
	int32_t pad;
	int64_t wall_ns, user_ns, sys_ns, max_rss_kib;
};

/* ---- the launcher ----------------------------------------------------- */

static int recv_req(int sock, struct launch_req *req, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { req, sizeof(*req) };
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	if ((size_t)n < sizeof(*req) &&
	    read_full(sock, (char *)req + n, sizeof(*req) - (size_t)n))
		return -1;
	return req->magic == LAUNCH_MAGIC && req->payload_len <= LAUNCH_PAYLOAD_MAX &&
	       req->nr_argv >= 1 && req->nr_argv < LAUNCH_MAX_STRINGS &&
	       req->nr_env < LAUNCH_MAX_STRINGS ? 0 : -1;
}

/* Split the payload into dir, argv and env; -1 when the counts don't fit. */
static int split_payload(char *payload, uint32_t len, uint32_t nr_argv, uint32_t nr_env,
			 char **dir, char **argv, char **env)
{
	uint32_t want = 1 + nr_argv + nr_env, got = 0;
	char *p = payload, *end = payload + len;

	while (p < end && got < want) {
		char *nul = memchr(p, '\0', (size_t)(end - p));
		if (!nul)
			return -1;
		if (!got)
			*dir = p;
		else if (got <= nr_argv)
			argv[got - 1] = p;
		else
			env[got - 1 - nr_argv] = p;
		got++;
		p = nul + 1;
	}
	argv[nr_argv] = NULL;
	env[nr_env] = NULL;
	return got == want ? 0 : -1;
}

static _Noreturn void child_fail(int errpipe, enum launch_stage stage)
{
	int32_t msg[2] = { stage, errno };

	if (write(errpipe, msg, sizeof(msg)) < 0)
		_exit(127);
	_exit(127);
}

static void launch_one(const struct launch_req *req, char *dir, char **argv, char **env,
		       int outfd, struct launch_reply *rep)
{
	sigset_t waitset;
	int errpipe[2], devnull;
	int32_t msg[2];
	uint64_t t0, deadline = 0;
	struct rusage ru;
	int status = 0, sig;
	pid_t pid;

	memset(rep, 0, sizeof(*rep));
	sigemptyset(&waitset);
	sigaddset(&waitset, SIGCHLD);
	sigaddset(&waitset, SIGINT);
	sigaddset(&waitset, SIGTERM);
	/* an interrupt that arrived between runs belonged to no run */
	while (sigtimedwait(&waitset, NULL, &(struct timespec){ 0, 0 }) > 0)
		;
	if (pipe2(errpipe, O_CLOEXEC)) {
		rep->stage = STAGE_FORK;
		rep->err = errno;
		return;
	}
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		rep->stage = STAGE_FORK;
		rep->err = errno;
		close(errpipe[0]);
		close(errpipe[1]);
		return;
	}
	if (!pid) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0 && devnull != 0) {
			dup2(devnull, 0);
			close(devnull);
		}
		if (outfd >= 0 && dup2(outfd, 1) < 0)
			child_fail(errpipe[1], STAGE_EXEC);
		if (*dir && chdir(dir))
			child_fail(errpipe[1], STAGE_CHDIR);
		if (req->pin) {
			cpu_set_t set;

			CPU_ZERO(&set);
			for (int c = 0; c < LAUNCH_MAX_CPUS && c < CPU_SETSIZE; c++)
				if (req->cpu_mask[c / 64] & (1ull << (c % 64)))
					CPU_SET(c, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				child_fail(errpipe[1], STAGE_AFFINITY);
		}
		execve(argv[0], argv, env);
		child_fail(errpipe[1], STAGE_EXEC);
	}
	setpgid(pid, pid);
	close(errpipe[1]);
	if (outfd >= 0)
		close(outfd);
	if (read_full(errpipe[0], msg, sizeof(msg)) == 0) {
		rep->stage = msg[0];
		rep->err = msg[1];
	}
	close(errpipe[0]);
	if (req->timeout_ns > 0)
		deadline = t0 + (uint64_t)req->timeout_ns;
	for (;;) {
		struct timespec ts, *tsp = NULL;
		pid_t r = wait4(pid, &status, WNOHANG, &ru);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (deadline && !rep->timed_out && !rep->interrupted) {
			uint64_t now = now_ns(), left = now < deadline ? deadline - now : 0;
			ts.tv_sec = (time_t)(left / 1000000000u);
			ts.tv_nsec = (long)(left % 1000000000u);
			tsp = &ts;
		}
		sig = sigtimedwait(&waitset, NULL, tsp);
		if (sig == SIGINT || sig == SIGTERM) {
			if (!rep->timed_out)
				rep->interrupted = 1;
			kill(-pid, SIGKILL);
		} else if (sig < 0 && errno == EAGAIN) {
			rep->timed_out = 1;
			kill(-pid, SIGKILL);
		}
	}
	rep->wall_ns = (int64_t)(now_ns() - t0);
	/* what the run left behind in its process group dies with it */
	kill(-pid, SIGKILL);
	/*
	 * In a sandbox the launcher is its PID namespace's pid 1: everything
	 * else there is what the run started (in any session), and goes too.
	 */
	if (getpid() == 1) {
		kill(-1, SIGKILL);
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
	}
	rep->wstatus = status;
	rep->user_ns = (int64_t)ru.ru_utime.tv_sec * 1000000000 + ru.ru_utime.tv_usec * 1000;
	rep->sys_ns = (int64_t)ru.ru_stime.tv_sec * 1000000000 + ru.ru_stime.tv_usec * 1000;
	rep->max_rss_kib = ru.ru_maxrss;
}

_Noreturn void runner_launcher_main(int sock)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	for (;;) {
		struct launch_req req;
		struct launch_reply rep;
		char *payload, *dir = NULL, **argv, **env;
		int outfd;

		if (recv_req(sock, &req, &outfd))
			_exit(0);
		payload = xmalloc(req.payload_len + 1);
		argv = xcalloc(req.nr_argv + 1, sizeof(*argv));
		env = xcalloc(req.nr_env + 1, sizeof(*env));
		if (read_full(sock, payload, req.payload_len))
			_exit(0);
		payload[req.payload_len] = '\0';
		if (split_payload(payload, req.payload_len, req.nr_argv, req.nr_env, &dir, argv, env)) {
			memset(&rep, 0, sizeof(rep));
			rep.stage = STAGE_EXEC;
			rep.err = EINVAL;
			if (outfd >= 0)
				close(outfd);
		} else {
			launch_one(&req, dir, argv, env, outfd, &rep);
		}
		free(payload);
		free(argv);
		free(env);
		if (write_full(sock, &rep, sizeof(rep)))
			_exit(0);
	}
}

/* A re-executed hotloop with HOTLOOP_LAUNCHER_FD set is a launcher, nothing else. */
__attribute__((constructor)) static void launcher_hook(void)
{
	const char *v = getenv(LAUNCHER_ENV);
	char *end;
	long fd;

	if (!v)
		return;
	fd = strtol(v, &end, 10);
	if (end == v || *end || fd < 3 || fd > 65535)
		return;
	unsetenv(LAUNCHER_ENV);
	runner_launcher_main((int)fd);
}

/* ---- the caller's side ------------------------------------------------ */

/*
 * The pid outside of the sandbox's pid 1 (the launcher), from what
 * bubblewrap wrote to its info fd: {"child-pid": N}. -1 when it said nothing.
 */
static pid_t read_child_pid(int fd)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *doc;
	pid_t pid = -1;

	if (!strbuf_read_fd(&sb, fd, 65536) && (doc = json_loads(sb.buf, 0, NULL))) {
		json_t *v = json_object_get(doc, "child-pid");

		if (json_is_integer(v) && json_integer_value(v) > 0)
			pid = (pid_t)json_integer_value(v);
		json_decref(doc);
	}
	strbuf_release(&sb);
	return pid;
}

int runner_start(struct runner *r, const struct sandbox *sb)
{
	extern char **environ;
	struct strbuf var = STRBUF_INIT;
	const char *const plain[] = { "hotloop-launcher", NULL };
	const char **argv = NULL;
	char **envp, *exe = NULL;
	size_t n = 0;
	int sv[2], info[2] = { -1, -1 };
	pid_t pid;

	r->launcher = -1;
	r->sock = -1;
	r->signal = -1;
	r->tmp = NULL;
	r->sandbox = sb;
	if (sb) {
		struct sandbox in = *sb;
		const char *const self[2] = { exe = realpath("/proc/self/exe", NULL), NULL };

		if (!exe)
			return error("cannot find hotloop's own executable: %s", strerror(errno));
		if (pipe2(info, O_CLOEXEC)) {
			free(exe);
			return error("cannot create a pipe: %s", strerror(errno));
		}
		in.as_pid_1 = true;
		in.info_fd = info[1];
		argv = sandbox_argv(&in, NULL, self);
		r->tmp = sb->tmp ? xstrdup(sb->tmp) : NULL;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		error("cannot create the launcher's socket: %s", strerror(errno));
		goto fail;
	}
	while (environ[n])
		n++;
	envp = xcalloc(n + 2, sizeof(*envp));
	n = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, LAUNCHER_ENV "=", strlen(LAUNCHER_ENV) + 1))
			envp[n++] = *e;
	strbuf_addf(&var, "%s=%d", LAUNCHER_ENV, sv[1]);
	envp[n++] = var.buf;
	pid = fork();
	if (!pid) {
		close(sv[0]);
		fcntl(sv[1], F_SETFD, 0);
		if (argv) {
			fcntl(info[1], F_SETFD, 0);
			execve(argv[0], (char *const *)argv, envp);
		} else {
			execve("/proc/self/exe", (char *const *)plain, envp);
		}
		_exit(127);
	}
	free(envp);
	strbuf_release(&var);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		error("cannot start the launcher: %s", strerror(errno));
		goto fail;
	}
	r->launcher = pid;
	r->sock = sv[0];
	r->signal = pid;
	if (argv) {
		close(info[1]);
		info[1] = -1;
		/* bubblewrap says where its pid 1 is once it started it, or it failed */
		if ((r->signal = read_child_pid(info[0])) < 0) {
			runner_stop(r);
			error("cannot start the launcher in its sandbox (bubblewrap said nothing of it)");
			goto fail;
		}
		close(info[0]);
		sandbox_argv_free(argv);
		free(exe);
	}
	return 0;
fail:
	if (info[0] >= 0)
		close(info[0]);
	if (info[1] >= 0)
		close(info[1]);
	sandbox_argv_free(argv);
	free(exe);
	free(r->tmp);
	r->tmp = NULL;
	return -1;
}

void runner_stop(struct runner *r)
{
	if (r->sock >= 0)
		close(r->sock);
	if (r->launcher > 0)
		while (waitpid(r->launcher, NULL, 0) < 0 && errno == EINTR)
			;
	r->sock = -1;
	r->launcher = -1;
	r->signal = -1;
	free(r->tmp);
	r->tmp = NULL;
}

void runner_interrupt(const struct runner *r)
{
	if (r->signal > 0)
		kill(r->signal, SIGINT);
}

char **runner_build_env(const char *const *extra)
{
	const char *path = getenv("PATH"), *home = getenv("HOME");
	char **env = NULL;
	size_t nr = 0, alloc = 0;

	ALLOC_GROW(env, nr + 4, alloc);
	env[nr++] = xstrfmt("PATH=%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (home)
		env[nr++] = xstrfmt("HOME=%s", home);
	env[nr++] = xstrdup("LANG=C");
	for (size_t i = 0; extra && extra[i]; i++) {
		const char *eq = strchr(extra[i], '=');
		size_t name_len, j;

		if (!eq || eq == extra[i])
			continue;
		name_len = (size_t)(eq - extra[i]) + 1;
		for (j = 0; j < nr; j++)
			if (!strncmp(env[j], extra[i], name_len))
				break;
		if (j < nr) {
			free(env[j]);
			env[j] = xstrdup(extra[i]);
			continue;
		}
		ALLOC_GROW(env, nr + 2, alloc);
		env[nr++] = xstrdup(extra[i]);
	}
	env[nr] = NULL;
	return env;
}

void runner_free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

void runner_quote_argv(struct strbuf *sb, const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool plain = *a;

		for (const char *p = a; *p && plain; p++)
			plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789_./:=@%+,-{}", *p) != NULL;
		if (i)
			strbuf_addch(sb, ' ');
		if (plain) {
			strbuf_addstr(sb, a);
			continue;
		}
		strbuf_addch(sb, '\'');
		for (const char *p = a; *p; p++) {
			if (*p == '\'')
				strbuf_addstr(sb, "'\\''");
			else
				strbuf_addch(sb, *p);
		}
		strbuf_addch(sb, '\'');
	}
}

void run_result_init(struct run_result *r)
{
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->out, 0);
	strbuf_init(&r->line, 0);
	r->stdout_hash = HASH_SEED;
	r->instructions = -1;
}

void run_result_release(struct run_result *r)
{
	strbuf_release(&r->out);
	strbuf_release(&r->line);
	for (size_t i = 0; i < r->nr_fingerprints; i++)
		free(r->fingerprints[i]);
	free(r->fingerprints);
	for (size_t i = 0; i < r->nr_metrics; i++)
		free(r->metrics[i].name);
	free(r->metrics);
	run_result_init(r);
}

static bool metric_name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '/' || c == ':';
}

static void parse_line(struct run_result *r, const char *line, size_t len)
{
	static const char fp[] = "FINGERPRINT=", metric[] = "HOTLOOP_METRIC ";

	if (len && line[len - 1] == '\r')
		len--;
	if (len >= strlen(fp) && !memcmp(line, fp, strlen(fp))) {
		ALLOC_GROW(r->fingerprints, r->nr_fingerprints + 1, r->alloc_fingerprints);
		r->fingerprints[r->nr_fingerprints++] = xstrndup(line + strlen(fp), len - strlen(fp));
		return;
	}
	if (len >= strlen(metric) && !memcmp(line, metric, strlen(metric))) {
		char *text = xstrndup(line + strlen(metric), len - strlen(metric));
		char *p = text, *eq, *end;
		double v;

		while (*p == ' ')
			p++;
		eq = strchr(p, '=');
		for (char *q = p; eq && q < eq; q++)
			if (!metric_name_char((unsigned char)*q))
				eq = NULL;
		if (!eq || eq == p)
			goto bad;
		errno = 0;
		v = strtod(eq + 1, &end);
		while (*end == ' ' || *end == '\t')
			end++;
		if (end == eq + 1 || *end || errno || !isfinite(v))
			goto bad;
		ALLOC_GROW(r->metrics, r->nr_metrics + 1, r->alloc_metrics);
		r->metrics[r->nr_metrics].name = xstrndup(p, (size_t)(eq - p));
		r->metrics[r->nr_metrics++].value = v;
		free(text);
		return;
bad:
		r->bad_lines++;
		warning("ignoring malformed metric line 'HOTLOOP_METRIC %.80s': expected name=number", text);
		free(text);
	}
}

void run_result_feed(struct run_result *r, const char *buf, size_t len)
{
	r->stdout_hash = hash_bytes(r->stdout_hash, buf, len);
	r->stdout_bytes += len;
	if (r->out.len < RUNNER_STDOUT_CAP)
		strbuf_add(&r->out, buf, len < RUNNER_STDOUT_CAP - r->out.len ? len : RUNNER_STDOUT_CAP - r->out.len);
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl ? (size_t)(nl - buf) : len;

		if (!r->line_overflow) {
			if (r->line.len + n > RUNNER_LINE_MAX) {
				r->line_overflow = true;
				strbuf_reset(&r->line);
			} else {
				strbuf_add(&r->line, buf, n);
			}
		}
		if (!nl)
			break;
		if (!r->line_overflow)
			parse_line(r, r->line.buf, r->line.len);
		strbuf_reset(&r->line);
		r->line_overflow = false;
		buf = nl + 1;
		len -= n + 1;
	}
}

void run_result_feed_end(struct run_result *r)
{
	if (r->line.len && !r->line_overflow)
		parse_line(r, r->line.buf, r->line.len);
	strbuf_reset(&r->line);
	r->line_overflow = false;
}

int runner_parse_callgrind(const char *text, int64_t *instructions)
{
	static const char *keys[] = { "summary:", "totals:" };

	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		size_t klen = strlen(keys[k]);

		for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			char *end;
			long long v;

			if (strncmp(p, keys[k], klen))
				continue;
			errno = 0;
			v = strtoll(p + klen, &end, 10);
			if (end == p + klen || errno || v < 0)
				return -1;
			*instructions = v;
			return 0;
		}
	}
	return -1;
}

const char *runner_instructions_unavailable(void)
{
	char *v = doctor_which("valgrind"), *s = doctor_which("setarch");
	const char *why = NULL;

	if (!v)
		why = "valgrind is not installed (apt-get install valgrind)";
	else if (!s)
		why = "setarch is not installed (util-linux)";
	free(v);
	free(s);
	return why;
}

/* Sum the instruction counts callgrind wrote for each process of the run. */
static int collect_instructions(const char *dir, int64_t *total)
{
	struct strbuf sb = STRBUF_INIT;
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0, ret = 0;

	*total = 0;
	if (!d)
		return error("cannot open '%s': %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		char *path;
		int64_t v;

		if (de->d_name[0] == '.')
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		strbuf_reset(&sb);
		if (!read_file(&sb, path, 256u << 20) && !runner_parse_callgrind(sb.buf, &v)) {
			*total = sat_add(*total, v);
			found++;
		}
		unlink(path);
		free(path);
	}
	closedir(d);
	strbuf_release(&sb);
	if (!found)
		ret = -1;
	return ret;
}

static void add_string(struct strbuf *payload, const char *s)
{
	strbuf_add(payload, s, strlen(s) + 1);
}

static int send_req(int sock, const struct launch_req *req, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)req, sizeof(*req) };
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	ssize_t n;

	memset(&u, 0, sizeof(u));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(*req))
		return write_full(sock, (const char *)req + n, sizeof(*req) - (size_t)n);
	return 0;
}

/* Read stdout and wait for the launcher's reply. */
static int collect(struct runner *r, int outfd, struct run_result *res, struct launch_reply *rep)
{
	char buf[65536];

	bool cancelled = false;

	for (;;) {
		struct pollfd pfd[2] = { { r->sock, POLLIN, 0 }, { outfd, POLLIN, 0 } };
		/* a look at hl_cancelled() now and then: the launcher kills the run */
		int n = poll(pfd, outfd >= 0 ? 2 : 1, 100);

		if (!cancelled && hl_cancelled()) {
			runner_interrupt(r);
			cancelled = true;
		}
		if ((n < 0 && errno == EINTR) || n == 0)
			continue;
		if (n < 0)
			return error("cannot wait for the run: %s", strerror(errno));
		if (outfd >= 0 && pfd[1].revents) {
			ssize_t got = read(outfd, buf, sizeof(buf));
			if (got > 0) {
				run_result_feed(res, buf, (size_t)got);
			} else if (got == 0 || errno != EINTR) {
				close(outfd);
				outfd = -1;
			}
			continue;
		}
		if (pfd[0].revents)
			break;
	}
	if (read_full(r->sock, rep, sizeof(*rep))) {
		if (outfd >= 0)
			close(outfd);
		return error("the launcher exited unexpectedly");
	}
	if (outfd >= 0) {
		ssize_t got;

		/* the run is gone: take what it wrote, don't wait for strays */
		fcntl(outfd, F_SETFL, O_NONBLOCK);
		while ((got = read(outfd, buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR))
			if (got > 0)
				run_result_feed(res, buf, (size_t)got);
		close(outfd);
	}
	run_result_feed_end(res);
	return 0;
}

/*
 * A heap-measured run: the preload found, the program checked (a static or
 * setuid one never loads it), a directory for its streams, the environment.
 */
static int heap_start(const struct runner *r, const struct run_spec *spec, char *dir, char *env[3])
{
	const char *preload = NULL;
	char *lib, *prog;
	bool simple;
	int ret = 0;

	if (spec->instructions)
		return error("heap metrics and instruction counts cannot be taken in one run: "
			     "valgrind replaces the allocator");
	if (!(lib = heap_find_lib()))
		return -1;
	if ((prog = runner_shell_program(!strncmp(spec->command, "exec ", 5) ?
					 spec->command + 5 : spec->command, &simple))) {
		ret = heap_check_program(prog);
		free(prog);
	}
	if (ret)
		goto out;
	snprintf(dir, PATH_MAX, "%s/hotloop-heap.XXXXXX", r->tmp ? r->tmp : "/tmp");
	if (!mkdtemp(dir)) {
		ret = error("cannot create a directory for the heap streams: %s", strerror(errno));
		*dir = '\0';
		goto out;
	}
	for (size_t i = 0; spec->env && spec->env[i]; i++)
		if (!strncmp(spec->env[i], "LD_PRELOAD=", 11))
			preload = spec->env[i] + 11;
	heap_stats_env(lib, dir, preload, env);
out:
	free(lib);
	return ret;
}

static void add_metric(struct run_result *res, const char *name, double v)
{
	for (size_t i = 0; i < res->nr_metrics; i++)
		if (!strcmp(res->metrics[i].name, name)) {
			warning("the run printed metric '%s', which its heap measurement replaces", name);
			res->metrics[i].value = v;
			return;
		}
	ALLOC_GROW(res->metrics, res->nr_metrics + 1, res->alloc_metrics);
	res->metrics[res->nr_metrics].name = xstrdup(name);
	res->metrics[res->nr_metrics++].value = v;
}

/* The run's heap metrics from its streams; -1 when a run that ended gave none. */
static int heap_finish(const struct run_spec *spec, const char *dir, struct run_result *res)
{
	struct heap_stats st = { 0 };

	if (heap_stats_collect(dir, &st))
		return -1;
	if (!st.streams) {
		/* a run cut short may have died before any stream: it failed anyway */
		if (res->timed_out || res->interrupted || res->signal)
			return 0;
		return error("no heap stream came from '%s': no process of it loaded %s (a static "
			     "program behind a wrapper, or one that clears LD_PRELOAD); its heap "
			     "cannot be measured", spec->command, HEAP_LIB_NAME);
	}
	if (st.lost_execs)
		warning("%zu process%s of '%s' exec'd a program that did not load %s (a static or "
			"setuid program, or LD_PRELOAD cleared): the heap metrics leave %s out",
			st.lost_execs, st.lost_execs == 1 ? "" : "es", spec->command, HEAP_LIB_NAME,
			st.lost_execs == 1 ? "it" : "them");
	if (st.cut_streams)
		warning("%zu of the %zu heap streams of '%s' ended without their totals (a process "
			"killed, or still running): its allocs and alloc-bytes are short",
			st.cut_streams, st.streams, spec->command);
	add_metric(res, HEAP_METRIC_PEAK, (double)st.peak_bytes);
	add_metric(res, HEAP_METRIC_ALLOCS, (double)st.allocs);
	add_metric(res, HEAP_METRIC_BYTES, (double)st.alloc_bytes);
	return 0;
}

int runner_run(struct runner *r, const struct run_spec *spec, struct run_result *res)
{
	struct strbuf payload = STRBUF_INIT, outfile = STRBUF_INIT;
	struct launch_req req;
	struct launch_reply rep;
	char **env = NULL, *tmpdir = xstrfmt("%s/hotloop-callgrind.XXXXXX", r->tmp ? r->tmp : "/tmp");
	bool have_tmpdir = false;
	int pipefd[2] = { -1, -1 }, ret = -1;
	const char *argv[16];
	size_t argc = 0;
	char *valgrind = NULL, *setarch = NULL, *tmpenv = NULL, *heapenv[3] = { NULL, NULL, NULL };
	char heapdir[PATH_MAX] = "";
	struct utsname uts;

	run_result_release(res);
	if (r->sock < 0)
		BUG("runner_run() without runner_start()");
	memset(&req, 0, sizeof(req));
	if (spec->instructions) {
		const char *why = runner_instructions_unavailable();

		if (why) {
			error("cannot count instructions: %s", why);
			goto out_free;
		}
		valgrind = doctor_which("valgrind");
		setarch = doctor_which("setarch");
		if (!mkdtemp(tmpdir)) {
			error("cannot create a directory for callgrind: %s", strerror(errno));
			goto out_free;
		}
		have_tmpdir = true;
		uname(&uts);
		strbuf_addf(&outfile, "--callgrind-out-file=%s/callgrind.out.%%p", tmpdir);
		argv[argc++] = setarch;
		argv[argc++] = uts.machine;
		argv[argc++] = "-R";
		argv[argc++] = valgrind;
		argv[argc++] = "--tool=callgrind";
		argv[argc++] = "--trace-children=yes";
		argv[argc++] = "-q";
		argv[argc++] = outfile.buf;
	}
	argv[argc++] = "/bin/sh";
	argv[argc++] = "-c";
	argv[argc++] = spec->command;
	if (spec->heap && heap_start(r, spec, heapdir, heapenv))
		goto out_free;
	{
		/* in a sandbox: temporary files in its own directory, the rest is read-only */
		size_t n = 0, k;
		const char **extra;

		while (spec->env && spec->env[n])
			n++;
		extra = xcalloc(n + 5, sizeof(*extra));
		if (n)
			memcpy(extra, spec->env, n * sizeof(*extra));
		k = n;
		if (r->tmp)
			extra[k++] = tmpenv = xstrfmt("TMPDIR=%s", r->tmp);
		for (size_t i = 0; spec->heap && i < 3; i++)
			extra[k++] = heapenv[i];
		env = runner_build_env(extra);
		free(extra);
	}

	req.magic = LAUNCH_MAGIC;
	req.nr_argv = (uint32_t)argc;
	add_string(&payload, spec->dir ? spec->dir : "");
	for (size_t i = 0; i < argc; i++)
		add_string(&payload, argv[i]);
	for (size_t i = 0; env[i]; i++, req.nr_env++)
		add_string(&payload, env[i]);
	if (payload.len > LAUNCH_PAYLOAD_MAX || req.nr_env >= LAUNCH_MAX_STRINGS) {
		error("the command and its environment are too long (%zu bytes)", payload.len);
		goto out_free;
	}
	req.payload_len = (uint32_t)payload.len;
	if (spec->timeout > 0)
		req.timeout_ns = spec->timeout >= 1e9 ? INT64_MAX : (int64_t)(spec->timeout * 1e9);
	for (size_t i = 0; i < spec->nr_cpus; i++) {
		if (spec->cpus[i] < 0 || spec->cpus[i] >= LAUNCH_MAX_CPUS) {
			error("cannot pin to CPU %d: CPUs are numbered 0 to %d", spec->cpus[i],
			      LAUNCH_MAX_CPUS - 1);
			goto out_free;
		}
		req.pin = 1;
		req.cpu_mask[spec->cpus[i] / 64] |= 1ull << (spec->cpus[i] % 64);
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		error("cannot create a pipe for the run's output: %s", strerror(errno));
		goto out_free;
	}
	if (send_req(r->sock, &req, pipefd[1]) || write_full(r->sock, payload.buf, payload.len)) {
		error("cannot talk to the launcher: %s", strerror(errno));
		goto out_close;
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	if (collect(r, pipefd[0], res, &rep)) {
		pipefd[0] = -1;
		goto out_free;
	}
	pipefd[0] = -1;
	switch (rep.stage) {
	case STAGE_NONE:
		break;
	case STAGE_CHDIR:
		error("cannot change to directory '%s': %s", spec->dir ? spec->dir : "", strerror(rep.err));
		goto out_free;
	case STAGE_AFFINITY:
		error("cannot pin the run to its CPUs: %s", strerror(rep.err));
		goto out_free;
	default:
		error("cannot run '%s': %s", argv[0], strerror(rep.err));
		goto out_free;
	}
	res->wall_ns = (uint64_t)rep.wall_ns;
	res->user_ns = (uint64_t)rep.user_ns;
	res->sys_ns = (uint64_t)rep.sys_ns;
	res->max_rss_kib = (long)rep.max_rss_kib;
	res->timed_out = rep.timed_out;
	res->interrupted = rep.interrupted;
	if (WIFSIGNALED(rep.wstatus)) {
		res->signal = WTERMSIG(rep.wstatus);
		res->exit_status = 128 + res->signal;
	} else {
		res->exit_status = WEXITSTATUS(rep.wstatus);
	}
	if (have_tmpdir && collect_instructions(tmpdir, &res->instructions) &&
	    !res->exit_status && !res->timed_out)
		warning("callgrind wrote no instruction count for '%s'", spec->command);
	if (*heapdir && heap_finish(spec, heapdir, res))
		goto out_close;
	ret = 0;
out_close:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
out_free:
	if (have_tmpdir) {
		int64_t ignored;

		if (ret)
			collect_instructions(tmpdir, &ignored);
		rmdir(tmpdir);
	}
	if (*heapdir) {
		struct heap_stats ignored = { 0 };

		if (ret)
			heap_stats_collect(heapdir, &ignored);
		rmdir(heapdir);
	}
	for (size_t i = 0; i < 3; i++)
		free(heapenv[i]);
	free(tmpenv);
	free(tmpdir);
	runner_free_env(env);
	strbuf_release(&payload);
	strbuf_release(&outfile);
	free(valgrind);
	free(setarch);
	return ret;
}

double run_result_metric(const struct run_result *r, enum gate_metric m)
{
	switch (m) {
	case GATE_METRIC_WALL:
		return (double)r->wall_ns / 1e9;
	case GATE_METRIC_INSTRUCTIONS:
		return (double)r->instructions;
	default:
		return (double)(r->user_ns + r->sys_ns) / 1e9;
	}
}

/* ---- shell command lines ---------------------------------------------- */

static bool is_shell_word(const char *w, size_t len)
{
	static const char *const words[] = {
		"if", "for", "while", "until", "case", "{", "(", "!", "exec", "cd", "export",
		"set", ".", ":", "eval", "test", "[", "echo", "printf", "true", "false",
		"command", "exit", "ulimit", "umask", "time", "env", "nice",
	};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == len && !strncmp(words[i], w, len))
			return true;
	return false;
}

char *runner_shell_program(const char *cmd, bool *simple)
{
	const char *p = cmd + strspn(cmd, " \t"), *e = p + strcspn(p, " \t\n;&|<>(){}");

	*simple = !strpbrk(cmd, ";&|\n(){}`");
	if (e == p || memchr(p, '=', (size_t)(e - p)) || strpbrk(p, "'\"$\\*?[~") == p ||
	    is_shell_word(p, (size_t)(e - p))) {
		*simple = false;
		return NULL;
	}
	for (const char *q = p; q < e; q++)
		if (strchr("'\"$\\*?[~", *q))
			return NULL;
	return xstrfmt("%.*s", (int)(e - p), p);
}

int runner_check_program(const char *name)
{
	char *path = NULL;
	int r = doctor_resolve_command(name, &path);

	free(path);
	if (!r)
		return 0;
	if (r == -ENOENT) {
		error("%s: command not found", name);
		return HL_EXIT_NOT_FOUND;
	}
	error("%s: %s", name, strerror(-r));
	return HL_EXIT_NOT_EXECUTABLE;
}

char *runner_exec_line(const char *cmd)
{
	bool simple;

	free(runner_shell_program(cmd, &simple));
	return simple ? xstrfmt("exec %s", cmd) : xstrdup(cmd);
}
