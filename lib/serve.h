/*
 * serve.h: the dashboard's HTTP server (libmicrohttpd): the page and its
 * assets (embedded at build time), the JSON API of lib/dashboard.c under
 * /api/, and /api/events, server-sent events pushed when the store
 * changes. It is read-only: only GET and HEAD, nothing opens the store
 * for writing. It binds 127.0.0.1 unless told otherwise; on any other
 * address every request must carry the token, and the Host header must
 * be an address or a name of this machine (no DNS rebinding). A struct
 * serve owns its daemon, threads and store connections until
 * serve_stop().
 */
#ifndef HOTLOOP_SERVE_H
#define HOTLOOP_SERVE_H

#include <stdbool.h>
#include <stddef.h>

struct dash;

struct serve_options {
	const char *host;	/* the address to bind; NULL: 127.0.0.1 */
	int port;		/* 0: any free port (serve_port() says which) */
	const char *token;	/* required when not NULL; serve_start() makes one off loopback */
	const char *const *allow_hosts;	/* more names the Host header may carry */
	size_t nr_allow_hosts;
	size_t max_clients;	/* of /api/events at once; 0: SERVE_MAX_CLIENTS */
	size_t threads;		/* 0: SERVE_THREADS */
	unsigned timeout_s;	/* a connection idle this long is closed; 0: SERVE_TIMEOUT_S */
	double poll_s;		/* how often the store is checked for changes; 0: SERVE_POLL_S */
	bool quiet;		/* no line per failed request on stderr */
};

#define SERVE_DEFAULT_PORT 8383
#define SERVE_MAX_CLIENTS 256
#define SERVE_THREADS 4
#define SERVE_TIMEOUT_S 30
#define SERVE_POLL_S 0.2
#define SERVE_PING_S 15		/* a comment line to each live client this often */
#define SERVE_REQUEST_MAX 32768	/* bytes of a request's line and headers */
#define SERVE_EVENTS_KEPT 512	/* a client further behind than this starts over */
#define SERVE_REBUILD_S 600	/* answers asked for this recently are built again on a change */
#define SERVE_REBUILD_MAX 16	/* at most so many */

struct serve;

/*
 * Start answering for dashboard d (which must outlive the server) in
 * background threads. 0 and *out, or -1 with an error (the address is
 * taken, not an address, ...).
 */
int serve_start(struct dash *d, const struct serve_options *o, struct serve **out);
int serve_port(const struct serve *sv);
/* The token requests must carry, or NULL when none is needed. */
const char *serve_token(const struct serve *sv);
/* The address it listens on, as a URL's host part ("127.0.0.1", "[::1]"). */
const char *serve_url_host(const struct serve *sv);
/* Live clients of /api/events now. */
size_t serve_clients(struct serve *sv);
/* Close every connection and stop; sv is freed. */
void serve_stop(struct serve *sv);

/* What serve_snapshot() wrote. */
struct serve_snapshot_result {
	size_t paths;		/* API answers it holds */
	size_t files, bytes;	/* written */
	size_t skipped;		/* answers that failed (a profile gone): warned about */
};

/*
 * Write a static copy of the dashboard into 'dir' (missing, empty, or an
 * earlier snapshot, which it replaces whole): the page, its assets, every
 * API answer in data.js and the flame graphs as files, sanitized (no
 * absolute paths, user or host names; dash_sanitize_text()). It opens
 * from file:// or any static host. 0, or -1 with an error and 'dir' as
 * it was.
 */
int serve_snapshot(struct dash *d, const char *dir, struct serve_snapshot_result *r);

/* Is 'host' (a Host header: name or address, maybe ":port") one the server may answer? */
bool serve_host_allowed(const struct serve *sv, const char *host);

#endif
