/*
 * run-command.c: starting helper processes and waiting for them (see
 * run-command.h). The child gets a process group of its own, so a timeout
 * or a cancel kills everything it started; a pidfd says when it exits, so
 * a grandchild holding the output pipe cannot keep hotloop waiting.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run-command.h"
#include "sandbox.h"
#include "util.h"

/* How often a wait looks at hl_cancelled() when nothing else wakes it. */
#define CANCEL_POLL_MS 100

void child_process_init(struct child_process *cp)
{
	memset(cp, 0, sizeof(*cp));
	strbuf_init(&cp->out, 0);
	cp->pid = -1;
	cp->out_fd = -1;
	cp->pidfd = -1;
}

void child_process_release(struct child_process *cp)
{
	if (cp->running)
		BUG("child_process_release() of a running child");
	strbuf_release(&cp->out);
	sandbox_argv_free(cp->wrapped);
	cp->wrapped = NULL;
}

static void keep_tail(struct strbuf *out, const char *buf, size_t len)
{
	strbuf_add(out, buf, len);
	if (out->len > 2 * RUN_COMMAND_KEEP) {
		memmove(out->buf, out->buf + out->len - RUN_COMMAND_KEEP, RUN_COMMAND_KEEP);
		strbuf_setlen(out, RUN_COMMAND_KEEP);
	}
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* What the child says through the error pipe when it fails before exec. */
enum child_stage { CHILD_IN, CHILD_OUT, CHILD_DIR, CHILD_EXEC, CHILD_GUARD };

static _Noreturn void child_fail(int fd, enum child_stage stage)
{
	int msg[2] = { stage, errno };

	if (write(fd, msg, sizeof(msg)) < 0)
		_exit(127);
	_exit(127);
}

static _Noreturn void child_main(const struct child_process *cp, int out_fd, int err_fd)
{
	static const char *sh[] = { "/bin/sh", "-c", NULL, NULL };
	const char *const *argv = cp->argv;
	sigset_t none;
	int fd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (!cp->guard)
		setpgid(0, 0);	/* a guarded child stays in its guard's group */
	fd = open(cp->in ? cp->in : "/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0)
		child_fail(err_fd, CHILD_IN);
	if (fd)
		close(fd);
	if (cp->out_file) {
		fd = open(cp->out_file, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd < 0)
			child_fail(err_fd, CHILD_OUT);
	} else {
		fd = out_fd;
	}
	if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		child_fail(err_fd, CHILD_OUT);
	if (cp->dir && *cp->dir && chdir(cp->dir))
		child_fail(err_fd, CHILD_DIR);
	for (size_t i = 0; cp->env && cp->env[i]; i++)
		putenv((char *)cp->env[i]);
	if (cp->wrapped) {
		argv = cp->wrapped;
	} else if (!argv) {
		sh[2] = cp->shell;
		argv = sh;
	}
	execvp(argv[0], (char *const *)argv);
	child_fail(err_fd, CHILD_EXEC);
}

/*
 * The guard (see run-command.h): leads the group, starts the command in
 * it, and waits. When hotloop dies (PR_SET_PDEATHSIG, or a parent that is
 * no longer hotloop) it kills the command and everything it started, and
 * so it does once the command ends; then it ends as the command did.
 */
static _Noreturn void guard_end(int status)
{
	sigset_t one;
	int sig;

	if (!WIFSIGNALED(status))
		_exit(WEXITSTATUS(status));
	sig = WTERMSIG(status);
	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	kill(getpid(), sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	_exit(128 + sig);
}

static _Noreturn void guard_main(const struct child_process *cp, pid_t hotloop, int out_fd, int err_fd)
{
	sigset_t all, wake;
	pid_t child;
	int fd;

	setpgid(0, 0);
	/* the group's signals are for the command: the guard takes none of them */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || prctl(PR_SET_PDEATHSIG, SIGHUP))
		child_fail(err_fd, CHILD_GUARD);
	if (getppid() != hotloop)
		_exit(127);
	prctl(PR_SET_NAME, "hotloop-guard");
	child = fork();
	if (child < 0)
		child_fail(err_fd, CHILD_GUARD);
	if (!child)
		child_main(cp, out_fd, err_fd);
	/* hold nothing of hotloop's: no pipe of its stays open through us */
	fd = open("/dev/null", O_RDWR);
	for (int i = 0; fd >= 0 && i < 3; i++)
		dup2(fd, i);
	syscall(SYS_close_range, 3U, ~0U, 0U);
	sigemptyset(&wake);
	sigaddset(&wake, SIGCHLD);
	sigaddset(&wake, SIGHUP);
	sigaddset(&wake, SIGUSR1);
	for (;;) {
		struct timespec second = { 1, 0 };
		int status;
		pid_t pid;

		if (sigtimedwait(&wake, NULL, &second) == SIGUSR1) {
			/* kill_command(): everything, the command too, as SIGKILL would */
			kill_adopted();
			guard_end(SIGKILL);
		}
		if (getppid() != hotloop) {
			kill_adopted();
			_exit(137);
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			if (pid == child) {
				kill_adopted();
				guard_end(status);
			}
		}
	}
}

static const char *program_of(const struct child_process *cp)
{
	return cp->wrapped ? cp->wrapped[0] : cp->argv ? cp->argv[0] : "/bin/sh";
}

int start_command(struct child_process *cp)
{
	int out[2] = { -1, -1 }, err[2], msg[2];
	pid_t self;
	ssize_t n;

	if (cp->running)
		BUG("start_command() of a running child");
	if (!cp->argv && !cp->shell)
		BUG("start_command() with nothing to run");
	cp->status = 0;
	cp->timed_out = cp->cancelled = false;
	cp->seconds = 0;
	if (cp->sandbox) {
		const char *sh[] = { "/bin/sh", "-c", cp->shell, NULL };

		sandbox_argv_free(cp->wrapped);
		cp->wrapped = sandbox_argv(cp->sandbox, cp->dir, cp->argv ? cp->argv : sh);
	}
	if (pipe2(err, O_CLOEXEC))
		return error("cannot create a pipe: %s", strerror(errno));
	if (!cp->out_file && pipe2(out, O_CLOEXEC)) {
		close(err[0]);
		close(err[1]);
		return error("cannot create a pipe: %s", strerror(errno));
	}
	cp->start_ns = now_ns();
	self = getpid();
	cp->pid = fork();
	if (cp->pid < 0) {
		int e = errno;

		close(err[0]);
		close(err[1]);
		if (out[0] >= 0) {
			close(out[0]);
			close(out[1]);
		}
		return error("cannot fork: %s", strerror(e));
	}
	if (!cp->pid && cp->guard)
		guard_main(cp, self, out[1], err[1]);
	if (!cp->pid)
		child_main(cp, out[1], err[1]);
	/* both sides set the group, so a kill right after fork reaches it */
	setpgid(cp->pid, cp->pid);
	close(err[1]);
	if (out[1] >= 0)
		close(out[1]);
	cp->out_fd = out[0];
	do
		n = read(err[0], msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
	close(err[0]);
	if (n == sizeof(msg)) {
		const char *subject = msg[0] == CHILD_IN ? (cp->in ? cp->in : "/dev/null") :
				      msg[0] == CHILD_OUT ? cp->out_file : msg[0] == CHILD_DIR ? cp->dir :
				      program_of(cp);

		while (waitpid(cp->pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (cp->out_fd >= 0)
			close(cp->out_fd);
		cp->out_fd = -1;
		cp->pid = -1;
		if (msg[0] == CHILD_GUARD)
			return error("cannot guard '%s': %s", program_of(cp), strerror(msg[1]));
		return error("cannot %s '%s': %s", msg[0] == CHILD_DIR ? "enter" :
			     msg[0] == CHILD_EXEC ? "run" : "open", subject ? subject : "", strerror(msg[1]));
	}
	if (cp->out_fd >= 0)
		fcntl(cp->out_fd, F_SETFL, O_NONBLOCK);
	cp->pidfd = open_pidfd(cp->pid);
	cp->running = true;
	return 0;
}

/* Read what is there without waiting (the pipe is non-blocking); false at its end. */
static bool drain(struct child_process *cp)
{
	char buf[8192];

	for (;;) {
		ssize_t n = read(cp->out_fd, buf, sizeof(buf));

		if (n > 0) {
			keep_tail(&cp->out, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		return false;
	}
}

static void close_output(struct child_process *cp)
{
	if (cp->out_fd < 0)
		return;
	/* the child is gone: take what it wrote, don't wait for strays holding the pipe */
	drain(cp);
	close(cp->out_fd);
	cp->out_fd = -1;
}

static void kill_group(struct child_process *cp)
{
	kill(-cp->pid, SIGKILL);
	kill(cp->pid, SIGKILL);
}

/* Reap cp if it has exited: true once it is done. */
static bool reap(struct child_process *cp)
{
	pid_t r;

	do
		r = waitpid(cp->pid, &cp->status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	if (r < 0)
		cp->status = 127 << 8;	/* reaped elsewhere: nothing to tell */
	cp->seconds = (double)(now_ns() - cp->start_ns) / 1e9;
	close_output(cp);
	if (cp->kill_leftovers || cp->timed_out || cp->cancelled)
		kill(-cp->pid, SIGKILL);
	if (cp->pidfd >= 0)
		close(cp->pidfd);
	cp->pidfd = -1;
	cp->running = false;
	return true;
}

static uint64_t deadline_of(const struct child_process *cp)
{
	if (cp->timeout <= 0)
		return 0;
	return cp->start_ns + (uint64_t)(cp->timeout * 1e9);
}

int finish_commands(struct child_process *const *cps, size_t nr)
{
	struct pollfd *pfd = xcalloc(2 * nr + 1, sizeof(*pfd));
	int ret = 0;

	for (;;) {
		uint64_t now = now_ns();
		size_t n = 0, left = 0;
		int ms = CANCEL_POLL_MS;
		bool have_pidfds = true;

		for (size_t i = 0; i < nr; i++) {
			struct child_process *cp = cps[i];
			uint64_t dl;

			if (!cp->running)
				continue;
			if (reap(cp))
				continue;
			left++;
			dl = deadline_of(cp);
			if (!cp->timed_out && !cp->cancelled) {
				if (cp->cancellable && hl_cancelled()) {
					cp->cancelled = true;
					kill_group(cp);
				} else if (dl && now >= dl) {
					cp->timed_out = true;
					kill_group(cp);
				} else if (dl && (dl - now) / 1000000 < (uint64_t)ms) {
					ms = (int)((dl - now) / 1000000) + 1;
				}
			}
			if (cp->out_fd >= 0)
				pfd[n++] = (struct pollfd){ cp->out_fd, POLLIN, 0 };
			if (cp->pidfd >= 0)
				pfd[n++] = (struct pollfd){ cp->pidfd, POLLIN, 0 };
			else
				have_pidfds = false;
		}
		if (!left)
			break;
		if (!have_pidfds && ms > 10)
			ms = 10;	/* no pidfd: look for the exit by polling */
		if (poll(pfd, n, ms) < 0 && errno != EINTR) {
			ret = error("cannot wait for a command: %s", strerror(errno));
			break;
		}
		for (size_t i = 0; i < nr; i++) {
			struct child_process *cp = cps[i];

			if (cp->running && cp->out_fd >= 0 && !drain(cp)) {
				close(cp->out_fd);
				cp->out_fd = -1;
			}
		}
	}
	free(pfd);
	return ret;
}

int check_command(struct child_process *cp)
{
	if (!cp->running)
		return 1;
	if (cp->out_fd >= 0 && !drain(cp)) {
		close(cp->out_fd);
		cp->out_fd = -1;
	}
	return reap(cp) ? 1 : 0;
}

void signal_command(const struct child_process *cp, int sig)
{
	if (cp->running && cp->pid > 0)
		kill(-cp->pid, sig);
}

void kill_command(const struct child_process *cp)
{
	if (!cp->running || cp->pid <= 0)
		return;
	if (cp->guard)
		kill(cp->pid, SIGUSR1);
	else
		kill(-cp->pid, SIGKILL);
}

int finish_command(struct child_process *cp)
{
	struct child_process *one[] = { cp };

	if (!cp->running)
		BUG("finish_command() of a child that is not running");
	return finish_commands(one, 1);
}

int run_command(struct child_process *cp)
{
	if (start_command(cp))
		return -1;
	return finish_command(cp);
}

bool child_succeeded(const struct child_process *cp)
{
	return !cp->timed_out && !cp->cancelled && WIFEXITED(cp->status) && !WEXITSTATUS(cp->status);
}

void child_describe(const struct child_process *cp, struct strbuf *sb)
{
	if (cp->cancelled)
		strbuf_addstr(sb, "interrupted");
	else if (cp->timed_out)
		strbuf_addf(sb, "timed out after %g s", cp->timeout);
	else if (WIFSIGNALED(cp->status))
		strbuf_addf(sb, "killed by signal %d", WTERMSIG(cp->status));
	else
		strbuf_addf(sb, "exit status %d", WEXITSTATUS(cp->status));
}

void output_tail(const struct strbuf *out, int n, struct strbuf *sb)
{
	size_t end = out->len, start;

	while (end && out->buf[end - 1] == '\n')
		end--;
	start = end;
	while (start && n) {
		start--;
		if (out->buf[start] == '\n' && !--n) {
			start++;
			break;
		}
	}
	while (start < end) {
		const char *nl = memchr(out->buf + start, '\n', end - start);
		size_t len = nl ? (size_t)(nl - out->buf) - start : end - start;

		strbuf_addf(sb, "\n    %.*s", (int)len, out->buf + start);
		start += len + 1;
	}
}

/* ---- orphans ------------------------------------------------------------- */

int adopt_orphans(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1) ? error("cannot adopt orphans: %s", strerror(errno)) : 0;
}

/* The parent pid in /proc/<pid>/stat ("pid (comm) state ppid ..."); -1 when it cannot be read. */
static pid_t parent_of(const char *pid)
{
	char path[64], buf[1024], *close_paren;
	ssize_t n;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	n = read_small_file(path, buf, sizeof(buf));
	/* the comm may hold anything, parentheses too: the state follows the last ')' */
	if (n <= 0 || !(close_paren = strrchr(buf, ')')) || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

size_t kill_adopted(void)
{
	size_t killed = 0, found;
	pid_t self = getpid();

	/* what dies leaves its own children to us: until none is left */
	do {
		DIR *d = opendir("/proc");
		struct dirent *e;

		found = 0;
		if (!d)
			break;
		while ((e = readdir(d))) {
			pid_t pid;

			if (e->d_name[0] < '1' || e->d_name[0] > '9' || parent_of(e->d_name) != self)
				continue;
			pid = (pid_t)atoi(e->d_name);
			if (!kill(pid, SIGKILL)) {
				while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
					;
				found++;
			}
		}
		closedir(d);
		killed += found;
	} while (found && killed < 100000);
	return killed;
}
