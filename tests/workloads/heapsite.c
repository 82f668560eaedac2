/*
 * heapsite: allocation sites with known counts, for record --heap.
 * make_records: RECORDS mallocs of RECORD_SIZE bytes, each freed before the
 * next allocation (temporaries). keep_cache: CACHED blocks of CACHE_SIZE
 * bytes never freed (the leak). grow_buffer: a buffer grown by realloc.
 * Modes (argv[1]): plain; fork (a child forked without exec does the same
 * work in child_work); signal (a timer's handler allocates meanwhile, the
 * signal blocked while the program itself allocates: glibc's malloc is not
 * async-signal-safe, a handler that allocates may only run outside it);
 * closefds (every descriptor but stdout and stderr is closed first, and
 * some numbers are then reused); threads (a thread's HANDOFFS blocks of
 * HANDOFF_SIZE bytes, made in hand_over, are freed by the main thread
 * while it does its own work). Prints "ok" when its own checks pass.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workload.h"

#define RECORDS 20000
#define RECORD_SIZE 100
#define CACHED 50
#define CACHE_SIZE 1000
#define CHILD_RECORDS 3000
#define HANDOFFS 30000
#define HANDOFF_SIZE 40

static void *cache[CACHED];
static volatile sig_atomic_t handled;

NOINLINE static unsigned long make_records(int n)
{
	unsigned long sum = 0;

	for (int i = 0; i < n; i++) {
		unsigned char *r = malloc(RECORD_SIZE);

		if (!r)
			abort();
		memset(r, i & 0xff, RECORD_SIZE);
		sum += r[i % RECORD_SIZE];
		free(r);
	}
	return sum;
}

NOINLINE static void keep_cache(void)
{
	for (int i = 0; i < CACHED; i++) {
		cache[i] = malloc(CACHE_SIZE);
		memset(cache[i], 1, CACHE_SIZE);
	}
}

NOINLINE static size_t grow_buffer(void)
{
	size_t cap = 16;
	char *b = malloc(cap);

	for (int i = 0; i < 12; i++) {
		cap *= 2;
		b = realloc(b, cap);
		memset(b, 2, cap);
	}
	free(b);
	return cap;
}

static unsigned long expected(int n);

static int handoff[2];

/* The thread's blocks, passed to the main thread through a pipe. */
NOINLINE static void *hand_over(void *arg)
{
	(void)arg;
	for (int i = 0; i < HANDOFFS; i++) {
		char *p = malloc(HANDOFF_SIZE);

		if (!p)
			abort();
		memset(p, i & 0xff, HANDOFF_SIZE);
		if (write(handoff[1], &p, sizeof(p)) != sizeof(p))
			abort();
	}
	close(handoff[1]);
	return NULL;
}

/* Free what the thread hands over, interleaved with our own allocations. */
static int take_over(void)
{
	char *p;
	int n = 0;

	while (read(handoff[0], &p, sizeof(p)) == sizeof(p)) {
		if ((unsigned char)p[0] != (n & 0xff))
			return -1;
		free(p);
		if (++n % 100 == 0)
			make_records(1);
	}
	return n;
}

NOINLINE static int child_work(void)
{
	unsigned long sum = make_records(CHILD_RECORDS);

	return sum == expected(CHILD_RECORDS) ? 0 : 1;
}

static void on_alarm(int sig)
{
	char *p = malloc(48);

	(void)sig;
	if (p) {
		memset(p, 3, 48);
		free(p);
	}
	handled++;
}

static unsigned long expected(int n)
{
	unsigned long sum = 0;

	for (int i = 0; i < n; i++)
		sum += (unsigned char)(i & 0xff);
	return sum;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	pid_t child = -1;
	int status;
	sigset_t alrm;

	alarm(30);
	if (!strcmp(mode, "closefds")) {
		for (int fd = 0; fd < 4096; fd++)
			if (fd != 1 && fd != 2)
				close(fd);
		for (int fd = 900; fd < 904; fd++) {
			int n = open("/dev/null", O_WRONLY);
			if (n < 0 || dup2(n, fd) < 0)
				return 1;
			close(n);
		}
	}
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	if (!strcmp(mode, "signal")) {
		struct itimerval it = { { 0, 200 }, { 0, 200 } };

		sigprocmask(SIG_BLOCK, &alrm, NULL);
		signal(SIGALRM, on_alarm);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	if (!strcmp(mode, "threads")) {
		pthread_t t;

		if (pipe(handoff) || pthread_create(&t, NULL, hand_over, NULL) ||
		    take_over() != HANDOFFS || pthread_join(t, NULL))
			return 1;
	}
	if (!strcmp(mode, "fork")) {
		fflush(stdout);
		child = fork();
		if (child == 0)
			_exit(child_work());
	}
	keep_cache();
	if (make_records(RECORDS) != expected(RECORDS) || grow_buffer() != 16 << 12)
		return 1;
	if (!strcmp(mode, "closefds"))
		for (int fd = 900; fd < 904; fd++)
			if (write(fd, "x", 1) != 1)
				return 1;
	if (!strcmp(mode, "signal")) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		/* allocating, the signal blocked, and computing: the handler's
		 * allocations come from a signal frame, and are recorded */
		while (handled < 100) {
			make_records(10);
			sigprocmask(SIG_UNBLOCK, &alrm, NULL);
			for (volatile int i = 0; i < 200000; i++)
				;
			sigprocmask(SIG_BLOCK, &alrm, NULL);
		}
		setitimer(ITIMER_REAL, &off, NULL);
	}
	if (child > 0 && (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
			  WEXITSTATUS(status)))
		return 1;
	printf("ok\n");
	return 0;
}
