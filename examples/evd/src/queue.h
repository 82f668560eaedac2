/*
 * queue.h: the bounded queue between evd's producers and its consumer. A
 * push never waits: what does not fit is dropped, and the caller counts it.
 * The queue owns its slots; events are copied in and out.
 */
#ifndef QUEUE_H
#define QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "event.h"

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t nonempty;
	struct event *slot;
	size_t cap, head, len;
	bool closed;
};

int queue_init(struct queue *q, size_t cap);
void queue_release(struct queue *q);

/* Copy up to N events in; returns how many fit (the rest are dropped). */
size_t queue_push(struct queue *q, const struct event *ev, size_t n);

/* Wait for events and copy up to MAX out; 0 once closed and empty. */
size_t queue_pop(struct queue *q, struct event *out, size_t max);

/* No more pushes: wake the consumer so it drains what is left and stops. */
void queue_close(struct queue *q);

#endif
