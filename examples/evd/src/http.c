/*
 * http.c: the HTTP front (http.h). Each client's bytes are kept until a
 * whole request is there (head and Content-Length body); the reply is
 * written at once, the client is dropped if it cannot take it. Requests:
 *   POST /check   body "EV <pid> <uid> <kind> <path>": 200 "allow|deny|audit\n"
 *   GET /health   200 "ok\n"
 * A malformed event is 400, another path 404, a bad request 400 and close.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "event.h"
#include "http.h"

#define REQ_MAX 4096		/* a longer request is refused */
#define MAX_EVENTS 64

struct conn {
	struct conn *next, **pprev;	/* every client, freed at the stop */
	int fd;
	size_t len;
	char buf[REQ_MAX];
};

static const char *const verdicts[] = { "allow\n", "deny\n", "audit\n" };

static int send_reply(int fd, int status, const char *reason, const char *body, bool close_after)
{
	char out[256];
	int n = snprintf(out, sizeof(out), "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nContent-Type: text/plain\r\n%s\r\n%s",
			 status, reason, strlen(body), close_after ? "Connection: close\r\n" : "", body);

	return send(fd, out, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
}

/* The verdict of one event line: the consumer's hot path, run here at once. */
static int check_event(struct http_front *h, const char *body, size_t len, const char **verdict)
{
	struct event ev;
	enum rule_action action = RULE_ALLOW;

	while (len && (body[len - 1] == '\n' || body[len - 1] == '\r'))
		len--;
	if (event_parse(&ev, body, len)) {
		atomic_fetch_add_explicit(&h->stats->malformed, 1, memory_order_relaxed);
		return -1;
	}
	if (ruleset_match(h->rules, &ev, &action) >= 0) {
		atomic_fetch_add_explicit(&h->stats->matched, 1, memory_order_relaxed);
		if (action == RULE_DENY)
			atomic_fetch_add_explicit(&h->stats->denied, 1, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&h->stats->events, 1, memory_order_relaxed);
	*verdict = verdicts[action];
	return 0;
}

/* Serve the whole requests in c's buffer: 0, or -1 to close it. */
static int serve(struct http_front *h, struct conn *c)
{
	for (;;) {
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4), *p, *sp1, *sp2, *line_end;
		size_t head, clen = 0, used;
		bool close_after = false;
		const char *verdict;

		if (!end)
			return c->len == sizeof(c->buf) ? (send_reply(c->fd, 431, "Request Header Fields Too Large", "", true), -1) : 0;
		head = (size_t)(end - c->buf) + 4;
		line_end = memmem(c->buf, head, "\r\n", 2);
		sp1 = memchr(c->buf, ' ', (size_t)(line_end - c->buf));
		sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
		if (!sp1 || !sp2 || line_end - sp2 - 1 != 8 || strncmp(sp2 + 1, "HTTP/1.", 7)) {
			send_reply(c->fd, 400, "Bad Request", "bad request line\n", true);
			return -1;
		}
		for (p = line_end + 2; p < end; ) {
			char *nl = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);

			if (!strncasecmp(p, "content-length:", 15)) {
				char *e;

				clen = strtoul(p + 15, &e, 10);
				if (clen > REQ_MAX) {
					send_reply(c->fd, 413, "Content Too Large", "", true);
					return -1;
				}
			} else if (!strncasecmp(p, "connection:", 11) && strcasestr(p, "close") && strcasestr(p, "close") < nl) {
				close_after = true;
			}
			p = nl + 2;
		}
		if (head + clen > sizeof(c->buf)) {
			send_reply(c->fd, 413, "Content Too Large", "", true);
			return -1;
		}
		if (c->len < head + clen)
			return 0;
		used = head + clen;
		if (!strncmp(c->buf, "POST /check ", 12)) {
			if (check_event(h, c->buf + head, clen, &verdict)) {
				if (send_reply(c->fd, 400, "Bad Request", "malformed event\n", close_after))
					return -1;
			} else if (send_reply(c->fd, 200, "OK", verdict, close_after)) {
				return -1;
			}
		} else if (!strncmp(c->buf, "GET /health ", 12)) {
			if (send_reply(c->fd, 200, "OK", "ok\n", close_after))
				return -1;
		} else if (send_reply(c->fd, 404, "Not Found", "POST /check or GET /health\n", close_after)) {
			return -1;
		}
		if (close_after)
			return -1;
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
}

static void drop(int ep, struct conn *c)
{
	if (c->next)
		c->next->pprev = c->pprev;
	*c->pprev = c->next;
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

static void *http_run(void *arg)
{
	struct http_front *h = arg;
	struct epoll_event e = { .events = EPOLLIN }, ready[MAX_EVENTS];
	struct conn *conns = NULL;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	bool stopping = false;

	pthread_setname_np(pthread_self(), "evd-http");
	e.data.ptr = NULL;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, h->listen_fd, &e))
		return NULL;
	e.data.ptr = h;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, h->stop[0], &e))
		return NULL;
	while (!stopping) {
		int n = epoll_wait(ep, ready, MAX_EVENTS, -1);

		for (int i = 0; i < n; i++) {
			struct conn *c = ready[i].data.ptr;

			if (!c) {
				for (int fd; (fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0; ) {
					struct conn *nc = calloc(1, sizeof(*nc));
					struct epoll_event ce = { .events = EPOLLIN };

					if (!nc) {
						close(fd);
						continue;
					}
					nc->fd = fd;
					ce.data.ptr = nc;
					if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ce)) {
						close(fd);
						free(nc);
						continue;
					}
					nc->next = conns;
					if (conns)
						conns->pprev = &nc->next;
					nc->pprev = &conns;
					conns = nc;
				}
				continue;
			}
			if ((void *)c == (void *)h) {
				stopping = true;
				break;
			}
			for (;;) {
				ssize_t r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);

				if (r < 0 && errno == EINTR)
					continue;
				if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
					if (serve(h, c))
						drop(ep, c);
					break;
				}
				if (r <= 0 || (c->len += (size_t)r, serve(h, c))) {
					drop(ep, c);
					break;
				}
			}
		}
	}
	while (conns)
		drop(ep, conns);
	close(ep);
	return NULL;
}

int http_start(struct http_front *h, int *port, const struct ruleset *rules, struct stats *stats)
{
	h->rules = rules;
	h->stats = stats;
	if ((h->listen_fd = listen_local(port)) < 0)
		return -1;
	if (pipe2(h->stop, O_CLOEXEC))
		return -1;
	errno = pthread_create(&h->thread, NULL, http_run, h);
	return errno ? -1 : 0;
}

void http_stop(struct http_front *h)
{
	close(h->stop[1]);
	pthread_join(h->thread, NULL);
	close(h->stop[0]);
	close(h->listen_fd);
}
