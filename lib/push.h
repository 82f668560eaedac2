/*
 * push.h: sending a profile to a Grafana Pyroscope server's /ingest
 * endpoint (format=pprof, the profile as the "profile" part of a
 * multipart/form-data body) with libcurl, so a hotloop profile sits next to
 * the fleet's. The caller owns struct push_request and everything it points
 * to; push_send() fills a struct push_result that push_result_release() frees.
 */
#ifndef HOTLOOP_PUSH_H
#define HOTLOOP_PUSH_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct strbuf;

/* Most of a server's answer kept for messages; the rest is read and dropped. */
#define PUSH_MAX_ANSWER (64 * 1024)

struct push_request {
	const char *base;		/* http[s]://host[:port][/prefix], '/' at the end or not */
	const char *name;		/* APP or APP{k=v,...}, checked by push_check_name() */
	int64_t from, until;		/* UNIX seconds */
	const char *units;		/* samples, objects or bytes */
	long sample_rate;		/* Hz */
	double timeout_s;		/* the whole transfer; connecting gets at most 10 s */
	const char *cacert;		/* CA certificates to trust for https (NULL: the system's) */
	const char *const *headers;	/* "Name: value" each */
	size_t nr_headers;
};

struct push_result {
	char *url;			/* the URL posted to */
	long status;			/* the HTTP status, 0 when there was no answer */
	size_t sent;			/* bytes of the profile sent */
	char *answer;			/* the first line of the server's answer, printable */
};
#define PUSH_RESULT_INIT { NULL, 0, 0, NULL }

/*
 * Check an application name: APP or APP{k=v,...} with a non-empty APP,
 * label names matching [a-zA-Z_][a-zA-Z0-9_]*, values non-empty and without
 * ',', '{', '}' or '=', no label twice. 0, or -1 with an error naming what
 * is wrong.
 */
int push_check_name(const char *name);

/* A --header value: "Name: value", one line. 0, or -1 with an error. */
int push_check_header(const char *header);

/*
 * A server's base URL: http:// or https://, a host, no query, fragment or
 * white space. 0, or -1 with an error.
 */
int push_check_base(const char *base);

/*
 * The ingest URL for r (name escaped, format=pprof, from, until, spyName,
 * sampleRate, units, aggregationType) appended to out. -1 with an error
 * when push_check_base() refuses r->base.
 */
int push_ingest_url(const struct push_request *r, struct strbuf *out);

/*
 * The time range to push p under when none is given: its time_nanos to
 * time_nanos + duration_nanos, else 'now_s' - duration .. 'now_s', in whole
 * seconds, never empty.
 */
void push_default_range(const struct profile *p, int64_t now_s, int64_t *from, int64_t *until);

/* Pyroscope's units for p's default sample type: samples, objects or bytes. */
const char *push_units(const struct profile *p);
/* Samples per second from p's period (100 when p does not say). */
long push_sample_rate(const struct profile *p);

/*
 * POST the gzipped pprof bytes to r's ingest URL. 0 when the server
 * answered with a status below 300; otherwise -1 with an error saying what
 * failed (the connection, or the status and the first line of the answer).
 * res is filled as far as the exchange went, either way.
 */
int push_send(const struct push_request *r, const void *pprof, size_t len,
	      struct push_result *res);

void push_result_release(struct push_result *res);

#endif
