/*
 * store-feed.h: the store as a subscriber of the engines' events
 * (events.h). While a loop runs it keeps the loop's row, one row per
 * attempt with the compare run and every measurement behind it, and the
 * activity feed the dashboard streams: loop-start, round-start,
 * agent-done, verdict, kept, loop-end. The store is a record: when it
 * cannot be written the loop goes on, with one warning. The store is
 * opened when a loop starts, so a loop that refuses to start leaves none.
 * A struct store_feed owns its path and connection until store_feed_close().
 */
#ifndef HOTLOOP_STORE_FEED_H
#define HOTLOOP_STORE_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"

struct project;
struct store;

struct store_feed {
	struct observer obs;	/* subscribe with this */
	char *top;		/* the repository whose .hotloop/hotloop.db it writes */
	struct store *store;	/* NULL: not open (yet), or it could not be; the events are dropped */
	int64_t loop_id;	/* the loop's row, once EV_LOOP_STARTED came */
	bool warned;
};

/* Subscribe to a loop in project p: <top>/.hotloop/hotloop.db opens at EV_LOOP_STARTED. */
void store_feed_init(struct store_feed *f, const struct project *p);
void store_feed_close(struct store_feed *f);

#endif
