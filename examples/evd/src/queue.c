/*
 * queue.c: a ring of event slots under one mutex (queue.h). Producers push
 * a whole read's worth of events at a time and the consumer takes a batch,
 * so the lock is taken a few hundred times a second, not once per event.
 */
#include <stdlib.h>
#include <string.h>

#include "queue.h"

int queue_init(struct queue *q, size_t cap)
{
	memset(q, 0, sizeof(*q));
	q->slot = calloc(cap, sizeof(*q->slot));
	if (!q->slot)
		return -1;
	q->cap = cap;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->nonempty, NULL);
	return 0;
}

void queue_release(struct queue *q)
{
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->nonempty);
	free(q->slot);
	q->slot = NULL;
}

size_t queue_push(struct queue *q, const struct event *ev, size_t n)
{
	size_t room, done = 0;

	pthread_mutex_lock(&q->lock);
	room = q->cap - q->len;
	if (n > room)
		n = room;
	while (done < n) {
		size_t tail = (q->head + q->len) % q->cap;
		size_t run = q->cap - tail;

		if (run > n - done)
			run = n - done;
		memcpy(&q->slot[tail], &ev[done], run * sizeof(*ev));
		q->len += run;
		done += run;
	}
	if (done)
		pthread_cond_signal(&q->nonempty);
	pthread_mutex_unlock(&q->lock);
	return done;
}

size_t queue_pop(struct queue *q, struct event *out, size_t max)
{
	size_t done = 0;

	pthread_mutex_lock(&q->lock);
	while (!q->len && !q->closed)
		pthread_cond_wait(&q->nonempty, &q->lock);
	if (max > q->len)
		max = q->len;
	while (done < max) {
		size_t run = q->cap - q->head;

		if (run > max - done)
			run = max - done;
		memcpy(&out[done], &q->slot[q->head], run * sizeof(*out));
		q->head = (q->head + run) % q->cap;
		q->len -= run;
		done += run;
	}
	pthread_mutex_unlock(&q->lock);
	return done;
}

void queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->nonempty);
	pthread_mutex_unlock(&q->lock);
}
