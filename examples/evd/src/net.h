/*
 * net.h: evd's producers. The main thread accepts clients and hands them to
 * the producer threads in turn; each producer reads its clients' event
 * lines, parses them and pushes them into the queue; what the queue has no
 * room for is dropped and counted.
 */
#ifndef NET_H
#define NET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "queue.h"

/* What evd counts; read by the metrics printer while the threads run. */
struct stats {
	atomic_uint_fast64_t events;	/* evaluated by the consumer */
	atomic_uint_fast64_t dropped;	/* parsed, but the queue was full */
	atomic_uint_fast64_t matched;	/* events some rule matched */
	atomic_uint_fast64_t denied;	/* events whose first matching rule was a deny */
	atomic_uint_fast64_t malformed;	/* lines that were not events */
};

struct producer {
	pthread_t thread;
	int inbox[2];		/* a pipe: client fds in; closed, the producer stops */
	struct queue *queue;
	struct stats *stats;
};

/* A non-blocking TCP socket listening on 127.0.0.1:*PORT (0: any free port, set on return). */
int listen_local(int *port);

/* Start P's thread, pushing into Q and counting in S: 0, or -1 with errno. */
int producer_start(struct producer *p, struct queue *q, struct stats *s);

/* Hand the client FD over to P, which closes it when the client hangs up. */
void producer_give(struct producer *p, int fd);

/*
 * Stop P: it reads what its clients have already sent (until they hang up,
 * or 200 ms pass with nothing to read), then its thread ends and is joined.
 */
void producer_stop(struct producer *p);

#endif
