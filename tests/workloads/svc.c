/*
 * svc.c: a tiny service for the scenario tests, and its load.
 *
 *   svc serve PORT [--work N] [--leak] [--junk]
 *	listens on 127.0.0.1:PORT; every line a client sends is one event,
 *	handled by handle_event() (N rounds of arithmetic, default
 *	WORK_DEFAULT, 20000; built with -DDROP_HALF it ignores every other);
 *	prints "HOTLOOP_METRIC events=<so far>" every 200 ms and at exit
 *	(SIGTERM, SIGINT). --leak keeps 16 KiB per 50 events; --warm takes
 *	4 MiB at its first event and keeps it (a cache, not a leak); --junk
 *	also prints malformed metric lines; --allocs N mallocs and frees N
 *	blocks of 64 bytes per event (ALLOC_SCALE times N when built with
 *	it); --hold KIB takes KIB KiB at the start and keeps it.
 *   svc load PORT RATE [SECONDS]
 *	sends RATE lines a second (until SIGTERM, or SECONDS), then prints
 *	"HOTLOOP_METRIC sent=<n>".
 *
 * alarm() ends either after 120 s, so no test can hang on it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "workload.h"

#define MAX_CLIENTS 64
/* Builds of it for the compare tests: the handler's default cost, and a "faster" one that drops half the events. */
#ifndef WORK_DEFAULT
#define WORK_DEFAULT 20000
#endif
#ifndef ALLOC_SCALE
#define ALLOC_SCALE 1
#endif

static volatile sig_atomic_t stop;
static void *volatile kept;	/* a volatile store: the compiler keeps the malloc */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static NOINLINE unsigned long handle_event(const char *line, long work)
{
	unsigned long h = 1469598103934665603ul;

	for (long i = 0; i < work; i++)
		h = (h ^ (unsigned char)line[i & 7]) * 1099511628211ul;
	return h;
}

static int serve(int port, long work, int leak, int warm, int junk, long allocs)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	struct pollfd fds[MAX_CLIENTS + 1];
	int nfds = 1, one = 1, lfd;
	unsigned long events = 0;
#ifdef DROP_HALF
	unsigned long dropped = 0;
#endif
	double next = wl_now() + 0.2;
	char buf[4096];

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 16)) {
		fprintf(stderr, "svc: cannot listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
		return 1;
	}
	printf("svc: listening on 127.0.0.1:%d\n", port);
	fflush(stdout);
	fds[0] = (struct pollfd){ lfd, POLLIN, 0 };
	while (!stop) {
		double now = wl_now();
		int n = poll(fds, (nfds_t)nfds, (int)((next - now) * 1000) + 1);

		if (n < 0 && errno != EINTR)
			return 1;
		for (int i = 1; n > 0 && i < nfds; i++) {
			ssize_t got;

			if (!(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			got = read(fds[i].fd, buf, sizeof(buf));
			if (got <= 0) {
				close(fds[i].fd);
				fds[i--] = fds[--nfds];
				continue;
			}
			for (ssize_t k = 0; k < got; k++) {
				if (buf[k] != '\n')
					continue;
#ifdef DROP_HALF
				if (++dropped % 2)
					continue;
#endif
				wl_sink += handle_event(buf + (k > 8 ? k - 8 : 0), work);
				if (warm && !events) {
					char *cache = malloc(4 << 20);

					memset(cache, 1, 4 << 20);
					wl_sink += (unsigned long)cache[100];	/* kept: a cache */
				}
				for (long j = 0; j < allocs * ALLOC_SCALE; j++) {
					kept = malloc(64);
					free(kept);
				}
				events++;
				if (leak && events % 50 == 0) {
					char *p = malloc(16384);

					memset(p, 1, 16384);
					wl_sink += (unsigned long)p[100];	/* never freed */
				}
			}
		}
		if (n > 0 && (fds[0].revents & POLLIN) && nfds <= MAX_CLIENTS) {
			int c = accept(lfd, NULL, NULL);

			if (c >= 0)
				fds[nfds++] = (struct pollfd){ c, POLLIN, 0 };
		}
		if (wl_now() >= next) {
			printf("HOTLOOP_METRIC events=%lu\n", events);
			if (junk)
				printf("HOTLOOP_METRIC events=lots\nHOTLOOP_METRIC =3\n");
			fflush(stdout);
			next += 0.2;
		}
	}
	printf("HOTLOOP_METRIC events=%lu\nsvc: stopped\n", events);
	return 0;
}

static int load(int port, double rate, double seconds)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	double start = wl_now();
	unsigned long sent = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "svc load: cannot connect to 127.0.0.1:%d: %s\n", port, strerror(errno));
		return 2;
	}
	while (!stop && (seconds <= 0 || wl_now() - start < seconds)) {
		unsigned long due = (unsigned long)((wl_now() - start) * rate);

		for (; sent < due && !stop; sent++)
			if (write(fd, "event 42\n", 9) != 9)
				return 2;
		usleep(1000);
	}
	printf("HOTLOOP_METRIC sent=%lu\n", sent);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	alarm(120);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (argc >= 3 && !strcmp(argv[1], "serve")) {
		long work = WORK_DEFAULT;
		int leak = 0, warm = 0, junk = 0;
		long allocs = 0;

		for (int i = 3; i < argc; i++) {
			if (!strcmp(argv[i], "--work") && i + 1 < argc)
				work = atol(argv[++i]);
			else if (!strcmp(argv[i], "--leak"))
				leak = 1;
			else if (!strcmp(argv[i], "--warm"))
				warm = 1;
			else if (!strcmp(argv[i], "--junk"))
				junk = 1;
			else if (!strcmp(argv[i], "--allocs") && i + 1 < argc)
				allocs = atol(argv[++i]);
			else if (!strcmp(argv[i], "--hold") && i + 1 < argc) {
				size_t n = (size_t)atol(argv[++i]) << 10;
				char *held = malloc(n);

				if (held)
					memset(held, 1, n);
				kept = held;
			}
		}
		return serve(atoi(argv[2]), work, leak, warm, junk, allocs);
	}
	if (argc >= 4 && !strcmp(argv[1], "load"))
		return load(atoi(argv[2]), atof(argv[3]), argc > 4 ? atof(argv[4]) : 0);
	fprintf(stderr, "usage: svc serve PORT [--work N] [--leak] [--warm] [--junk] [--allocs N] [--hold KIB] | svc load PORT RATE [SECONDS]\n");
	return 2;
}
