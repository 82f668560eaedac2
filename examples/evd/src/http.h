/*
 * http.h: evd's HTTP/1.1 front, for load generators that speak HTTP (and
 * the canary): POST /check with one event line as the body is checked
 * against the rules at once, through the same ruleset_match() the consumer
 * runs, and answered with its verdict. One thread, epoll, keep-alive.
 */
#ifndef HTTP_H
#define HTTP_H

#include <pthread.h>

#include "net.h"
#include "rules.h"

struct http_front {
	pthread_t thread;
	int listen_fd;
	int stop[2];		/* a pipe: closed, the front stops */
	const struct ruleset *rules;
	struct stats *stats;
};

/* Listen on 127.0.0.1:*port (0: any, *port set) and start: 0, or -1 with errno. */
int http_start(struct http_front *h, int *port, const struct ruleset *rules, struct stats *stats);
/* Stop taking requests, close every client, join the thread. */
void http_stop(struct http_front *h);

#endif
