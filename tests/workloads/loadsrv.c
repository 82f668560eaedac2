/*
 * loadsrv.c: the server `hotloop load` is tested against. One thread, poll,
 * 127.0.0.1 on a free port written to PORTFILE; it stops itself after
 * SECONDS (60).
 *   loadsrv MODE PORTFILE [SECONDS]
 * MODE: ok (200, Content-Length; every other reply chunked), plain (200,
 * Content-Length, for benchmarks), stall (ok, but
 * the 50th request sleeps 200 ms), errors (request i: i%10==0 500, i%10==5
 * 404), close (every 5th request: the connection closed unanswered), never
 * (reads, never answers), garbage (a reply that is not HTTP), line (the
 * line protocol: "OK <line>"). At SIGTERM it prints "requests=N".
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "workload.h"

#define MAX_CLIENTS 1024

static volatile sig_atomic_t stop;
static unsigned long nr_requests;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

struct client {
	char buf[8192];
	size_t len;
};

static void reply(int fd, const char *mode, unsigned long i)
{
	char out[512];
	int n;

	if (!strcmp(mode, "never"))
		return;
	if (!strcmp(mode, "garbage")) {
		n = snprintf(out, sizeof(out), "SMTP 220 hello\r\n\r\n");
	} else if (!strcmp(mode, "errors") && i % 10 == 0) {
		n = snprintf(out, sizeof(out), "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nbad\n");
	} else if (!strcmp(mode, "errors") && i % 10 == 5) {
		n = snprintf(out, sizeof(out), "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
	} else if (i % 2 && strcmp(mode, "plain")) {
		n = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			     "3;x=1\r\nok\n\r\n4\r\n%04lu\r\n0\r\n\r\n", i % 10000);
	} else {
		n = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nok %04lu", i % 10000);
	}
	if (write(fd, out, (size_t)n) != n)
		return;
}

NOINLINE static int serve_one(int fd, struct client *c, const char *mode)
{
	ssize_t n = read(fd, c->buf + c->len, sizeof(c->buf) - c->len);
	char *end;

	if (n <= 0)
		return -1;
	c->len += (size_t)n;
	for (;;) {
		bool line = !strcmp(mode, "line");
		size_t used;

		end = line ? memchr(c->buf, '\n', c->len) : memmem(c->buf, c->len, "\r\n\r\n", 4);
		if (!end)
			return c->len == sizeof(c->buf) ? -1 : 0;
		used = (size_t)(end - c->buf) + (line ? 1 : 4);
		nr_requests++;
		if (!strcmp(mode, "stall") && nr_requests == 50)
			usleep(200000);
		if (!strcmp(mode, "close") && nr_requests % 5 == 0)
			return -1;
		if (line) {
			char out[300];
			int len = snprintf(out, sizeof(out), "OK %.*s\n", (int)(used - 1 > 256 ? 256 : used - 1), c->buf);

			if (write(fd, out, (size_t)len) != len)
				return -1;
		} else {
			reply(fd, mode, nr_requests);
		}
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
}

int main(int argc, char **argv)
{
	static struct client clients[MAX_CLIENTS + 1];
	struct pollfd fds[MAX_CLIENTS + 1];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	int one = 1, nfds = 1, lfd;
	FILE *f;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: loadsrv ok|plain|stall|errors|close|never|garbage|line PORTFILE [SECONDS]\n");
		return 2;
	}
	alarm(argc == 4 ? (unsigned)atoi(argv[3]) : 60);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGPIPE, SIG_IGN);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 512) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &salen)) {
		perror("loadsrv");
		return 1;
	}
	f = fopen(argv[2], "w");
	if (!f || fprintf(f, "%d\n", ntohs(sa.sin_port)) < 0 || fclose(f)) {
		perror(argv[2]);
		return 1;
	}
	fds[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	while (!stop) {
		if (poll(fds, (nfds_t)nfds, 100) < 0)
			continue;
		if ((fds[0].revents & POLLIN) && nfds <= MAX_CLIENTS) {
			int fd = accept(lfd, NULL, NULL);

			if (fd >= 0) {
				setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
				fds[nfds] = (struct pollfd){ .fd = fd, .events = POLLIN };
				clients[nfds].len = 0;
				nfds++;
			}
		}
		for (int i = 1; i < nfds; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (serve_one(fds[i].fd, &clients[i], argv[1])) {
				close(fds[i].fd);
				fds[i] = fds[nfds - 1];
				clients[i] = clients[nfds - 1];
				nfds--;
				i--;
			}
		}
	}
	printf("requests=%lu\n", nr_requests);
	return 0;
}
