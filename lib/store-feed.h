/*
 * store-feed.h: the store as a subscriber of the engines' events
 * (events.h). While a loop runs it keeps the loop's row, one row per
 * attempt with the compare run and every measurement behind it, and the
 * activity feed the dashboard streams: loop-start, round-start,
 * agent-done, verdict, kept, loop-end. The store is a record: when it
 * cannot be written the loop goes on, with one warning.
 * A struct store_feed owns its connection until store_feed_close().
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
	struct store *store;	/* NULL: it could not be opened; the events are dropped */
	int64_t loop_id;	/* the loop's row, once EV_LOOP_STARTED came */
	bool warned;
};

/* Open <top>/.hotloop/hotloop.db for project p (a warning, not an error, when it cannot be). */
void store_feed_open(struct store_feed *f, const struct project *p);
void store_feed_close(struct store_feed *f);

#endif
