/*
 * canarysrv.c: the service `hotloop canary` is tested against. HTTP/1.1 on
 * 127.0.0.1:PORT, one thread, poll; each request costs WORK rounds of
 * spin() (default 20000), so a build with 3x the work is plainly slower.
 *   canarysrv PORT MODE [WORK]
 * MODE: ok; errors (every 20th reply a 500); close (from the 100th request
 * on, every 3rd connection closed unanswered); hang (from the 100th request
 * on, nothing answered); exit (exits 3 at once); deaf (never listens).
 * It stops itself after 60 s; at SIGTERM it prints "requests=N".
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "workload.h"

#define MAX_CLIENTS 256

static volatile sig_atomic_t stop;
static unsigned long nr_requests;
static volatile unsigned long sink;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

NOINLINE static void spin(unsigned long rounds)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < rounds; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

struct client {
	char buf[8192];
	size_t len;
};

static int serve_one(int fd, struct client *c, const char *mode, unsigned long work)
{
	ssize_t n = read(fd, c->buf + c->len, sizeof(c->buf) - c->len);

	if (n <= 0)
		return -1;
	c->len += (size_t)n;
	for (;;) {
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
		const char *out = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
		size_t used;

		if (!end)
			return c->len == sizeof(c->buf) ? -1 : 0;
		used = (size_t)(end - c->buf) + 4;
		nr_requests++;
		spin(work);
		if (!strcmp(mode, "hang") && nr_requests >= 100)
			return 0;
		if (!strcmp(mode, "close") && nr_requests >= 100 && nr_requests % 3 == 0)
			return -1;
		if (!strcmp(mode, "errors") && nr_requests % 20 == 0)
			out = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nbad\n";
		if (write(fd, out, strlen(out)) != (ssize_t)strlen(out))
			return -1;
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
}

int main(int argc, char **argv)
{
	static struct client clients[MAX_CLIENTS + 1];
	struct pollfd fds[MAX_CLIENTS + 1];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	unsigned long work;
	int one = 1, nfds = 1, lfd;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: canarysrv PORT ok|errors|close|hang|exit|deaf [WORK]\n");
		return 2;
	}
	alarm(60);
	work = argc == 4 ? strtoul(argv[3], NULL, 10) : 20000;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[2], "exit")) {
		fprintf(stderr, "canarysrv: exiting at once, as asked\n");
		return 3;
	}
	if (!strcmp(argv[2], "deaf")) {
		while (!stop)
			pause();
		return 0;
	}
	sa.sin_port = htons((unsigned short)atoi(argv[1]));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 512)) {
		perror("canarysrv");
		return 1;
	}
	fds[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	while (!stop) {
		if (poll(fds, (nfds_t)nfds, 100) < 0)
			continue;
		if ((fds[0].revents & POLLIN) && nfds <= MAX_CLIENTS) {
			int fd = accept(lfd, NULL, NULL);

			if (fd >= 0) {
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				fds[nfds] = (struct pollfd){ .fd = fd, .events = POLLIN };
				clients[nfds].len = 0;
				nfds++;
			}
		}
		for (int i = 1; i < nfds; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (serve_one(fds[i].fd, &clients[i], argv[2], work)) {
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
