/*
 * net.c: the producers (net.h). Each one sleeps in epoll_wait on its inbox
 * and its clients, so an idle evd costs nothing. When evd stops, a producer
 * takes no new clients but reads what its clients have already sent, so an
 * event a client wrote before the stop is counted: processed or dropped,
 * never lost.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net.h"

#define READ_SIZE (64 * 1024)
#define BATCH 256		/* events pushed into the queue at once */
#define DRAIN_IDLE_MS 200	/* stopping: give up after this long with nothing to read */
#define DRAIN_MAX_MS 2000	/* stopping: and after this long in all */

struct client {
	struct client *next, **pprev;	/* the producer's list of its clients */
	int fd;
	size_t len;		/* bytes in buf: the start of a line not yet complete */
	bool skipping;		/* inside a line too long to be an event */
	char buf[EV_LINE_MAX + READ_SIZE];
};

struct batch {
	struct event ev[BATCH];
	size_t nr;
};

int listen_local(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)*port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static void flush_batch(struct producer *p, struct batch *b)
{
	size_t taken = queue_push(p->queue, b->ev, b->nr);

	if (taken < b->nr)
		atomic_fetch_add_explicit(&p->stats->dropped, b->nr - taken, memory_order_relaxed);
	b->nr = 0;
}

/* Parse the complete lines in C's buffer; keep the incomplete last one. */
static void parse_lines(struct producer *p, struct client *c, struct batch *b)
{
	char *s = c->buf, *end = c->buf + c->len, *nl;
	uint64_t bad = 0;

	while ((nl = memchr(s, '\n', (size_t)(end - s)))) {
		if (c->skipping)
			c->skipping = false;
		else if (event_parse(&b->ev[b->nr], s, (size_t)(nl - s)))
			bad++;
		else if (++b->nr == BATCH)
			flush_batch(p, b);
		s = nl + 1;
	}
	c->len = (size_t)(end - s);
	if (c->len > EV_LINE_MAX) {
		if (!c->skipping)
			bad++;
		c->skipping = true;
		c->len = 0;
	}
	memmove(c->buf, s, c->len);
	if (bad)
		atomic_fetch_add_explicit(&p->stats->malformed, bad, memory_order_relaxed);
}

/* Read what C has sent: 1 while it stays connected, 0 once it is gone. */
static int serve(struct producer *p, struct client *c, struct batch *b)
{
	for (int round = 0; round < 4; round++) {
		ssize_t n = read(c->fd, c->buf + c->len, READ_SIZE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			if (c->len && !c->skipping)	/* a last line without its '\n' */
				atomic_fetch_add_explicit(&p->stats->malformed, 1, memory_order_relaxed);
			flush_batch(p, b);
			return 0;
		}
		c->len += (size_t)n;
		parse_lines(p, c, b);
	}
	flush_batch(p, b);
	return 1;
}

static void drop_client(int ep, struct client *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->next)
		c->next->pprev = c->pprev;
	*c->pprev = c->next;
	free(c);
}

static void add_client(int ep, int fd, struct client **clients)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct client *c = malloc(sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->len = 0;
	c->skipping = false;
	e.data.ptr = c;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e)) {
		close(fd);
		free(c);
		return;
	}
	c->next = *clients;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = clients;
	*clients = c;
}

/* Take the clients waiting in the inbox: 1, or 0 once it is closed (stop). */
static int read_inbox(struct producer *p, int ep, struct client **clients)
{
	int fd[64];
	ssize_t n = read(p->inbox[0], fd, sizeof(fd));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	for (ssize_t i = 0; i < n / (ssize_t)sizeof(int); i++)
		add_client(ep, fd[i], clients);
	return n > 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void *producer_run(void *arg)
{
	struct producer *p = arg;
	struct epoll_event e = { .events = EPOLLIN }, ready[16];
	struct batch *b = malloc(sizeof(*b));
	struct client *clients = NULL;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	bool stopping = false;
	long stop_at = 0;
	static char inbox_tag;	/* data.ptr: this, or a struct client */

	pthread_setname_np(pthread_self(), "evd-producer");
	if (!b || ep < 0)
		goto out;
	b->nr = 0;
	e.data.ptr = &inbox_tag;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, p->inbox[0], &e))
		goto out;

	for (;;) {
		int timeout = -1, n;

		if (stopping) {
			long left = stop_at + DRAIN_MAX_MS - now_ms();

			if (!clients || left <= 0)
				break;
			timeout = left < DRAIN_IDLE_MS ? (int)left : DRAIN_IDLE_MS;
		}
		n = epoll_wait(ep, ready, 16, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n == 0 && stopping))
			break;
		for (int i = 0; i < n; i++) {
			void *tag = ready[i].data.ptr;
			struct client *c = tag;

			if (tag == &inbox_tag) {
				if (!read_inbox(p, ep, &clients)) {
					epoll_ctl(ep, EPOLL_CTL_DEL, p->inbox[0], NULL);
					stopping = true;
					stop_at = now_ms();
				}
			} else if (!serve(p, c, b)) {
				drop_client(ep, c);
			}
		}
	}
out:
	while (clients)		/* still connected when the drain gave up */
		drop_client(ep, clients);
	if (ep >= 0)
		close(ep);
	free(b);
	return NULL;
}

int producer_start(struct producer *p, struct queue *q, struct stats *s)
{
	int err;

	p->queue = q;
	p->stats = s;
	if (pipe2(p->inbox, O_CLOEXEC))
		return -1;
	err = pthread_create(&p->thread, NULL, producer_run, p);
	if (err) {
		close(p->inbox[0]);
		close(p->inbox[1]);
		errno = err;
		return -1;
	}
	return 0;
}

void producer_give(struct producer *p, int fd)
{
	/* a write of one int to a pipe is whole or nothing */
	while (write(p->inbox[1], &fd, sizeof(fd)) < 0)
		if (errno != EINTR) {
			close(fd);
			return;
		}
}

void producer_stop(struct producer *p)
{
	close(p->inbox[1]);
	pthread_join(p->thread, NULL);
	close(p->inbox[0]);
}
