/*
 * loadgen.h: an open-loop load generator for one service on TCP: HTTP/1.1
 * requests (keep-alive, one in flight per connection) or a line protocol
 * (one request line, one reply line), sent at a constant rate or on a
 * seeded Poisson schedule, each request's latency measured from the time
 * it was meant to be sent, so a stall shows as the queueing it causes.
 * One thread, epoll, non-blocking sockets, memory bounded by the number of
 * connections and windows. The caller owns the spec and the result; the
 * engine never prints.
 */
#ifndef HOTLOOP_LOADGEN_H
#define HOTLOOP_LOADGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "histogram.h"
#include "strbuf.h"

enum loadgen_proto { LOADGEN_HTTP, LOADGEN_LINE };
enum loadgen_sched { LOADGEN_CONSTANT, LOADGEN_POISSON };

/* Why a request did not get a good answer. */
enum loadgen_error {
	LOADGEN_ERR_5XX,	/* HTTP status >= 500 */
	LOADGEN_ERR_4XX,	/* HTTP status 400..499 */
	LOADGEN_ERR_REFUSED,	/* connection refused */
	LOADGEN_ERR_RESET,	/* connection reset (or another socket error) */
	LOADGEN_ERR_TIMEOUT,	/* no full reply within the timeout of its intended time */
	LOADGEN_ERR_CLOSED,	/* the server closed before the full reply: a short reply */
	LOADGEN_ERR_MALFORMED,	/* a reply that is not HTTP/1.x or a line, or too large */
	LOADGEN_ERR__COUNT
};

const char *loadgen_error_name(enum loadgen_error e);

struct loadgen_window;

struct loadgen_spec {
	struct sockaddr_storage addr;	/* the target; loadgen_resolve() fills it */
	socklen_t addr_len;
	enum loadgen_proto proto;
	/* the requests, sent in turn (request i is requests[i % nr]); whole bytes */
	const struct strbuf *requests;
	size_t nr_requests;
	enum loadgen_sched sched;
	double rate;		/* requests per second */
	uint64_t seed;		/* of the Poisson schedule */
	int connections;
	double duration, warmup, window, timeout;	/* seconds */
	/* called at the end of each window (warmup ones too) */
	void (*on_window)(const struct loadgen_window *w, void *data);
	void *data;
};

struct loadgen_counts {
	uint64_t scheduled;	/* requests the schedule asked for */
	uint64_t sent;		/* written in full */
	uint64_t late;		/* of those, sent after waiting for a free connection */
	uint64_t answered;	/* a full reply, whatever its status */
	uint64_t ok;		/* answered, status < 400 (every line reply) */
	uint64_t errors[LOADGEN_ERR__COUNT];
	uint64_t nr_errors;
};

struct loadgen_window {
	size_t index;
	double start, end;	/* seconds since the start */
	bool warmup;
	struct loadgen_counts c;
	double throughput;	/* answered per second */
	struct hist_summary latency;	/* of the answered, from their intended time */
};

/* At most this many windows are kept in the result; all go to on_window. */
#define LOADGEN_MAX_WINDOWS 100000

struct loadgen_result {
	struct loadgen_window *windows;
	size_t nr_windows, alloc_windows;
	struct loadgen_counts total;	/* after the warmup */
	struct histogram latency;	/* after the warmup, from the intended send time */
	struct histogram service;	/* the same from the actual send: what a closed loop sees */
	struct hist_summary summary, service_summary;
	double elapsed;		/* seconds, warmup and drain included */
	double measured;	/* seconds of schedule after the warmup */
	double throughput;	/* answered per second of 'measured' */
	bool cancelled;
};

#define LOADGEN_RESULT_INIT { NULL, 0, 0, { 0 }, HISTOGRAM_INIT, HISTOGRAM_INIT, { 0 }, { 0 }, 0, 0, 0, false }

void loadgen_result_release(struct loadgen_result *r);

/*
 * Run the load: 0 (also when cancelled by hl_cancel(): r->cancelled), or
 * -1 with an error for a bad spec or when the machine refuses (epoll,
 * sockets). A server that refuses or fails is counted, not an error.
 */
int loadgen_run(const struct loadgen_spec *spec, struct loadgen_result *r);

/* ---- for people and programs (lib/loadgen-report.c) ---- */

struct json_t;
/* The table's head, and one window's row (for spec.on_window). */
void loadgen_format_header(struct strbuf *out);
void loadgen_format_window(const struct loadgen_window *w, struct strbuf *out);
/* The summary after the table: requests, throughput, latency, errors. */
void loadgen_format_summary(const struct loadgen_spec *spec, const char *target,
			    const struct loadgen_result *r, struct strbuf *out);
/* The counts as JSON: scheduled, sent, late, answered, ok, errors by kind, nr_errors. */
struct json_t *loadgen_counts_to_json(const struct loadgen_counts *c);
/* The whole run as the JSON document of docs/load.md. */
struct json_t *loadgen_result_to_json(const struct loadgen_spec *spec, const char *target,
				      const struct loadgen_result *r);

/*
 * The target of a URL: "http://HOST[:PORT][/PATH]" (port 80) for HTTP,
 * "tcp://HOST:PORT" or "HOST:PORT" for the line protocol; HOST numeric or
 * a name (IPv6 in brackets). Fills the spec's address and proto, *host
 * (for the Host header, allocated) and *path (allocated, "/" by default).
 */
int loadgen_parse_url(const char *url, struct loadgen_spec *spec, char **host, char **path);

/* One HTTP/1.1 request from a template: headers are "Name: value". */
void loadgen_http_request(struct strbuf *out, const char *method, const char *host,
			  const char *path, const char **headers, size_t nr_headers,
			  const char *body, size_t body_len);

/*
 * The requests of a file: one or more HTTP/1.1 requests one after the
 * other (bare \n line ends become \r\n in their heads; a body needs a
 * Content-Length), blank lines between them skipped. Appends to *reqs.
 */
int loadgen_split_requests(const char *buf, size_t len, struct strbuf **reqs, size_t *nr, size_t *alloc);

/* An HTTP/1.x reply at the start of a buffer. */
struct http_reply {
	int status;
	size_t head_len;	/* status line and headers with the blank line */
	size_t len;		/* the whole reply, body included */
	bool close;		/* Connection: close, or HTTP/1.0 without keep-alive */
};

/* Replies larger than this are malformed. */
#define LOADGEN_MAX_REPLY (1u << 20)

/*
 * Parse buf[0..len): 1 with *r filled when a whole reply is there (a reply
 * without a length ends at eof), 0 when more bytes are needed, -1 when it
 * is malformed (or longer than LOADGEN_MAX_REPLY). Quiet: the bytes come
 * from the server and are counted, not reported.
 */
int loadgen_http_reply(const char *buf, size_t len, bool eof, struct http_reply *r);

/*
 * The first n send times of a schedule, in ns from the start (for tests
 * and for loadgen_run(), which uses the same generator).
 */
struct loadgen_clock {
	enum loadgen_sched sched;
	double rate;
	uint64_t state;
	uint64_t i;
	double t;		/* seconds, of the next request */
};

void loadgen_clock_init(struct loadgen_clock *c, enum loadgen_sched sched, double rate, uint64_t seed);
/* The next send time in seconds since the start. */
double loadgen_clock_next(struct loadgen_clock *c);

#endif
