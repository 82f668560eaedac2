/*
 * loadgen.c: the open-loop generator of loadgen.h. One epoll loop owns every
 * connection; the schedule is a generator of intended send times, so a
 * backlog (requests due while every connection waits for a reply) costs no
 * memory: it is the distance between the generator and the clock. Request
 * i waits for a free connection, FIFO; its latency runs from its intended
 * time, and a request that waited past the timeout is a timeout unsent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "loadgen.h"
#include "util.h"

static const char *const error_names[LOADGEN_ERR__COUNT] = {
	[LOADGEN_ERR_5XX] = "http_5xx",
	[LOADGEN_ERR_4XX] = "http_4xx",
	[LOADGEN_ERR_REFUSED] = "refused",
	[LOADGEN_ERR_RESET] = "reset",
	[LOADGEN_ERR_TIMEOUT] = "timeout",
	[LOADGEN_ERR_CLOSED] = "closed",
	[LOADGEN_ERR_MALFORMED] = "malformed",
};

const char *loadgen_error_name(enum loadgen_error e)
{
	return e < LOADGEN_ERR__COUNT ? error_names[e] : "?";
}

void loadgen_result_release(struct loadgen_result *r)
{
	free(r->windows);
	histogram_release(&r->latency);
	histogram_release(&r->service);
	*r = (struct loadgen_result)LOADGEN_RESULT_INIT;
}

/* --- the schedule --- */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void loadgen_clock_init(struct loadgen_clock *c, enum loadgen_sched sched, double rate, uint64_t seed)
{
	*c = (struct loadgen_clock){ .sched = sched, .rate = rate, .state = seed };
}

double loadgen_clock_next(struct loadgen_clock *c)
{
	double t;

	if (c->sched == LOADGEN_CONSTANT)
		return (double)c->i++ / c->rate;
	t = c->t;
	/* exponential gaps; u in (0, 1] */
	c->t += -log((double)((splitmix64(&c->state) >> 11) + 1) / 9007199254740992.0) / c->rate;
	c->i++;
	return t;
}

/* --- requests and replies --- */

void loadgen_http_request(struct strbuf *out, const char *method, const char *host,
			  const char *path, const char **headers, size_t nr_headers,
			  const char *body, size_t body_len)
{
	bool has_host = false, has_ua = false;

	for (size_t i = 0; i < nr_headers; i++) {
		has_host |= !strncasecmp(headers[i], "host:", 5);
		has_ua |= !strncasecmp(headers[i], "user-agent:", 11);
	}
	strbuf_addf(out, "%s %s HTTP/1.1\r\n", method, path);
	if (!has_host)
		strbuf_addf(out, "Host: %s\r\n", host);
	if (!has_ua)
		strbuf_addstr(out, "User-Agent: hotloop-load\r\n");
	for (size_t i = 0; i < nr_headers; i++)
		strbuf_addf(out, "%s\r\n", headers[i]);
	if (body)
		strbuf_addf(out, "Content-Length: %zu\r\n", body_len);
	strbuf_addstr(out, "\r\n");
	if (body)
		strbuf_add(out, body, body_len);
}

/* The end of the line at p (past its \n) or NULL; *eol at the \r or \n. */
static const char *line_end(const char *p, const char *end, const char **eol)
{
	const char *nl = memchr(p, '\n', end - p);

	if (!nl)
		return NULL;
	*eol = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
	return nl + 1;
}

/* A header's value if the line is "name: value", trimmed, into v[0..*vlen). */
static bool header_is(const char *line, const char *eol, const char *name, const char **v, size_t *vlen)
{
	size_t n = strlen(name);

	if ((size_t)(eol - line) <= n || strncasecmp(line, name, n) || line[n] != ':')
		return false;
	line += n + 1;
	while (line < eol && (*line == ' ' || *line == '\t'))
		line++;
	while (eol > line && (eol[-1] == ' ' || eol[-1] == '\t'))
		eol--;
	*v = line;
	*vlen = eol - line;
	return true;
}

static int parse_length(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;

	if (!n || n > 12)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return 0;
}

static bool value_has_token(const char *v, size_t n, const char *tok)
{
	size_t t = strlen(tok);

	for (size_t i = 0; i + t <= n; i++)
		if (!strncasecmp(v + i, tok, t) && (i == 0 || v[i - 1] == ',' || v[i - 1] == ' ') &&
		    (i + t == n || v[i + t] == ',' || v[i + t] == ' '))
			return true;
	return false;
}

int loadgen_split_requests(const char *buf, size_t len, struct strbuf **reqs, size_t *nr, size_t *alloc)
{
	const char *p = buf, *end = buf + len;
	size_t before = *nr;

	for (;;) {
		struct strbuf sb = STRBUF_INIT;
		const char *next, *eol;
		uint64_t body = 0;
		bool first = true, done = false;
		size_t lineno = 0;

		while (p < end && (*p == '\r' || *p == '\n'))
			p++;
		if (p == end)
			break;
		while ((next = line_end(p, end, &eol))) {
			const char *v;
			size_t vlen;

			lineno++;
			if (eol == p) {
				p = next;
				done = true;
				break;
			}
			if (memchr(p, '\0', eol - p)) {
				strbuf_release(&sb);
				return error("request %zu: a NUL byte in its head", *nr - before + 1);
			}
			if (first) {
				const char *sp1 = memchr(p, ' ', eol - p), *sp2 = sp1 ? memchr(sp1 + 1, ' ', eol - sp1 - 1) : NULL;

				if (!sp1 || !sp2 || sp1 == p || (size_t)(eol - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/1.", 7)) {
					strbuf_release(&sb);
					return error("request %zu: expected 'METHOD PATH HTTP/1.1' as its first line", *nr - before + 1);
				}
				first = false;
			} else if (!memchr(p, ':', eol - p)) {
				strbuf_release(&sb);
				return error("request %zu, line %zu: expected 'Name: value'", *nr - before + 1, lineno);
			} else if (header_is(p, eol, "content-length", &v, &vlen) && parse_length(v, vlen, &body)) {
				strbuf_release(&sb);
				return error("request %zu: a bad Content-Length", *nr - before + 1);
			} else if (header_is(p, eol, "transfer-encoding", &v, &vlen)) {
				strbuf_release(&sb);
				return error("request %zu: chunked requests are not supported: give a Content-Length", *nr - before + 1);
			}
			strbuf_add(&sb, p, eol - p);
			strbuf_addstr(&sb, "\r\n");
			p = next;
		}
		if (!done) {
			strbuf_release(&sb);
			return error("request %zu: its head does not end with a blank line", *nr - before + 1);
		}
		strbuf_addstr(&sb, "\r\n");
		if (body > (uint64_t)(end - p)) {
			strbuf_release(&sb);
			return error("request %zu: a body of %llu bytes, %zu left in the file", *nr - before + 1,
				     (unsigned long long)body, (size_t)(end - p));
		}
		strbuf_add(&sb, p, body);
		p += body;
		ALLOC_GROW(*reqs, *nr + 1, *alloc);
		(*reqs)[(*nr)++] = sb;
	}
	if (*nr == before)
		return error("no request in the file");
	return 0;
}

static int chunked_body(const char *p, const char *end, size_t *len)
{
	const char *start = p;

	for (;;) {
		const char *next, *eol, *q;
		uint64_t size = 0;

		if (!(next = line_end(p, end, &eol)))
			return (size_t)(end - p) > 1024 ? -1 : 0;
		for (q = p; q < eol && *q != ';'; q++) {
			int d = *q >= '0' && *q <= '9' ? *q - '0' : (*q | 0x20) >= 'a' && (*q | 0x20) <= 'f' ? (*q | 0x20) - 'a' + 10 : -1;

			if (d < 0 || size > LOADGEN_MAX_REPLY)
				return -1;
			size = size * 16 + (uint64_t)d;
		}
		if (q == p)
			return -1;
		p = next;
		if (!size) {
			/* trailers, then the blank line */
			while ((next = line_end(p, end, &eol))) {
				bool blank = eol == p;

				p = next;
				if (blank) {
					*len = p - start;
					return 1;
				}
			}
			return 0;
		}
		if (size > LOADGEN_MAX_REPLY || (uint64_t)(end - p) < size + 2)
			return size > LOADGEN_MAX_REPLY ? -1 : 0;
		p += size;
		if (p[0] == '\r' && p[1] == '\n')
			p += 2;
		else if (p[0] == '\n')
			p += 1;
		else
			return -1;
	}
}

int loadgen_http_reply(const char *buf, size_t len, bool eof, struct http_reply *r)
{
	static const char prefix[] = "HTTP/1.";
	const char *p = buf, *end = buf + len, *next, *eol, *v;
	uint64_t clen = 0;
	bool has_len = false, chunked = false, http10, keep_alive = false;
	size_t vlen, n = len < 7 ? len : 7;
	int status;

	memset(r, 0, sizeof(*r));
	if (memcmp(buf, prefix, n))
		return -1;
	if (!(next = line_end(p, end, &eol)))
		return len > 8192 ? -1 : 0;
	/* HTTP/1.x SSS[ reason] */
	if (eol - p < 12 || (p[7] != '0' && p[7] != '1') || p[8] != ' ' ||
	    p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
	    (eol - p > 12 && p[12] != ' '))
		return -1;
	http10 = p[7] == '0';
	status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	if (status < 200)
		return -1;
	p = next;
	for (;;) {
		if (!(next = line_end(p, end, &eol)))
			return len > 65536 ? -1 : 0;
		if (eol == p) {
			p = next;
			break;
		}
		if (*p == ' ' || *p == '\t' || !memchr(p, ':', eol - p) || *p == ':')
			return -1;
		if (header_is(p, eol, "content-length", &v, &vlen)) {
			uint64_t x;

			if (parse_length(v, vlen, &x) || (has_len && x != clen))
				return -1;
			clen = x;
			has_len = true;
		} else if (header_is(p, eol, "transfer-encoding", &v, &vlen)) {
			if (!value_has_token(v, vlen, "chunked"))
				return -1;
			chunked = true;
		} else if (header_is(p, eol, "connection", &v, &vlen)) {
			if (value_has_token(v, vlen, "close"))
				r->close = true;
			if (value_has_token(v, vlen, "keep-alive"))
				keep_alive = true;
		}
		p = next;
	}
	if (http10 && !keep_alive)
		r->close = true;
	r->status = status;
	r->head_len = p - buf;
	if (status == 204 || status == 304) {
		r->len = r->head_len;
		return 1;
	}
	if (chunked) {
		size_t blen;
		int ret;

		if ((ret = chunked_body(p, end, &blen)) <= 0)
			return ret;
		r->len = r->head_len + blen;
		return r->len > LOADGEN_MAX_REPLY ? -1 : 1;
	}
	if (has_len) {
		if (clen > LOADGEN_MAX_REPLY - r->head_len)
			return -1;
		if (len < r->head_len + clen)
			return 0;
		r->len = r->head_len + clen;
		return 1;
	}
	/* the body runs to the end of the connection */
	if (len > LOADGEN_MAX_REPLY)
		return -1;
	if (!eof)
		return 0;
	r->len = len;
	r->close = true;
	return 1;
}

/* --- the target --- */

int loadgen_parse_url(const char *url, struct loadgen_spec *spec, char **host, char **path)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	const char *p = url, *hs, *he, *ps = NULL, *slash;
	char hostname[256], port[8];
	long portnum;
	int ret;

	*host = *path = NULL;
	if (!strncmp(p, "http://", 7)) {
		spec->proto = LOADGEN_HTTP;
		p += 7;
	} else if (!strncmp(p, "tcp://", 6)) {
		spec->proto = LOADGEN_LINE;
		p += 6;
	} else if (strstr(p, "://")) {
		return error("'%s': only http:// and tcp:// targets (https is not supported)", url);
	} else {
		spec->proto = LOADGEN_LINE;
	}
	slash = strchr(p, '/');
	if (spec->proto == LOADGEN_LINE && slash)
		return error("'%s': a tcp target is HOST:PORT, without a path", url);
	if (!slash)
		slash = p + strlen(p);
	if (*p == '[') {
		hs = p + 1;
		if (!(he = memchr(hs, ']', slash - hs)))
			return error("'%s': an IPv6 address needs its closing ']'", url);
		if (he + 1 < slash) {
			if (he[1] != ':')
				return error("'%s': expected ':PORT' after ']'", url);
			ps = he + 2;
		}
	} else {
		const char *colon = memchr(p, ':', slash - p);

		hs = p;
		he = colon ? colon : slash;
		if (colon)
			ps = colon + 1;
	}
	if (he == hs)
		return error("'%s': no host", url);
	if ((size_t)(he - hs) >= sizeof(hostname))
		return error("'%s': the host is too long", url);
	memcpy(hostname, hs, he - hs);
	hostname[he - hs] = '\0';
	if (ps) {
		char *e;

		if (ps == slash || (size_t)(slash - ps) > 5)
			return error("'%s': a port is a number from 1 to 65535", url);
		portnum = strtol(ps, &e, 10);
		if (e != slash || portnum < 1 || portnum > 65535)
			return error("'%s': a port is a number from 1 to 65535", url);
	} else if (spec->proto == LOADGEN_HTTP) {
		portnum = 80;
	} else {
		return error("'%s': a tcp target needs a port (HOST:PORT)", url);
	}
	snprintf(port, sizeof(port), "%ld", portnum);
	if ((ret = getaddrinfo(hostname, port, &hints, &ai)))
		return error("'%s': cannot resolve '%s': %s", url, hostname, gai_strerror(ret));
	memcpy(&spec->addr, ai->ai_addr, ai->ai_addrlen);
	spec->addr_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (*hs == '[' || strchr(hostname, ':'))
		*host = xstrfmt("[%s]:%ld", hostname, portnum);
	else
		*host = portnum == 80 ? xstrdup(hostname) : xstrfmt("%s:%ld", hostname, portnum);
	*path = xstrdup(*slash ? slash : "/");
	return 0;
}

/* --- the engine --- */

enum conn_state { CONN_DOWN, CONN_CONNECTING, CONN_UP };

struct conn {
	int fd;
	enum conn_state state;
	bool busy;		/* holds a request: being sent or waiting for its reply */
	bool counted;		/* that request is after the warmup */
	bool late;
	bool want_out;		/* EPOLLOUT is asked for */
	bool stale;		/* its request timed out: the late reply is read and dropped */
	int64_t intended, sent_at, stale_until;	/* ns, CLOCK_MONOTONIC */
	size_t req, wpos;
	struct strbuf in;
};

struct engine {
	const struct loadgen_spec *spec;
	struct loadgen_result *r;
	int epfd;
	struct conn *conns;
	int *free;		/* a stack of the conns without a request */
	int nr_free;
	int nr_busy, nr_stale;
	struct loadgen_counts win;
	struct histogram win_hist;
	int64_t t0, blocked_at;
	size_t next_req;
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void conn_close(struct engine *e, struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->state = CONN_DOWN;
	c->want_out = false;
	strbuf_reset(&c->in);
}

static void count_error(struct engine *e, bool counted, enum loadgen_error err)
{
	e->win.errors[err]++;
	e->win.nr_errors++;
	if (counted) {
		e->r->total.errors[err]++;
		e->r->total.nr_errors++;
	}
}

static void release(struct engine *e, struct conn *c)
{
	if (c->stale)
		e->nr_stale--;
	c->stale = false;
	c->busy = false;
	e->nr_busy--;
	e->free[e->nr_free++] = (int)(c - e->conns);
}

/*
 * The request on c is over: an answer (err < 0: good) or an error. On a
 * stale connection it was counted as a timeout already: c is free again.
 */
static void finish(struct engine *e, struct conn *c, int64_t now, int status, int err)
{
	struct loadgen_counts *t = &e->r->total;

	if (c->stale) {
		release(e, c);
		return;
	}
	if (status) {
		uint64_t lat = now > c->intended ? (uint64_t)(now - c->intended) : 0;

		e->win.answered++;
		histogram_record(&e->win_hist, lat);
		if (c->counted) {
			t->answered++;
			histogram_record(&e->r->latency, lat);
			histogram_record(&e->r->service, now > c->sent_at ? (uint64_t)(now - c->sent_at) : 0);
		}
		if (err < 0) {
			e->win.ok++;
			if (c->counted)
				t->ok++;
		}
	}
	if (err >= 0)
		count_error(e, c->counted, err);
	release(e, c);
}

static void fail(struct engine *e, struct conn *c, int64_t now, enum loadgen_error err)
{
	conn_close(e, c);
	if (c->busy)
		finish(e, c, now, 0, err);
}

/*
 * c's request timed out. When it was sent whole, keep the connection and
 * drop the late reply when it comes (at most one more timeout): closing
 * it would make an overloaded server pay for a new connection each time.
 */
static void timed_out(struct engine *e, struct conn *c, int64_t now, int64_t timeout_ns)
{
	if (c->state != CONN_UP || c->wpos < e->spec->requests[c->req].len) {
		fail(e, c, now, LOADGEN_ERR_TIMEOUT);
		return;
	}
	count_error(e, c->counted, LOADGEN_ERR_TIMEOUT);
	c->stale = true;
	c->stale_until = now + timeout_ns;
	e->nr_stale++;
}

static int set_events(struct engine *e, struct conn *c, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.u32 = (uint32_t)(c - e->conns) };

	if (out == c->want_out)
		return 0;
	c->want_out = out;
	return epoll_ctl(e->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void do_write(struct engine *e, struct conn *c, int64_t now)
{
	const struct strbuf *req = &e->spec->requests[c->req];

	while (c->wpos < req->len) {
		ssize_t n = send(c->fd, req->buf + c->wpos, req->len - c->wpos, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (set_events(e, c, true))
				fail(e, c, now, LOADGEN_ERR_RESET);
			return;
		}
		if (n <= 0) {
			fail(e, c, now, errno == ECONNREFUSED ? LOADGEN_ERR_REFUSED : LOADGEN_ERR_RESET);
			return;
		}
		c->wpos += (size_t)n;
	}
	if (c->want_out && set_events(e, c, false)) {
		fail(e, c, now, LOADGEN_ERR_RESET);
		return;
	}
	c->sent_at = now;
	e->win.sent++;
	if (c->late)
		e->win.late++;
	if (c->counted) {
		e->r->total.sent++;
		if (c->late)
			e->r->total.late++;
	}
}

static void start_connect(struct engine *e, struct conn *c, int64_t now)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)(c - e->conns) };
	int one = 1;

	c->fd = socket(e->spec->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		fail(e, c, now, LOADGEN_ERR_RESET);
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, c->fd, &ev)) {
		fail(e, c, now, LOADGEN_ERR_RESET);
		return;
	}
	c->want_out = true;
	c->state = CONN_CONNECTING;
	if (connect(c->fd, (const struct sockaddr *)&e->spec->addr, e->spec->addr_len) && errno != EINPROGRESS)
		fail(e, c, now, errno == ECONNREFUSED ? LOADGEN_ERR_REFUSED : LOADGEN_ERR_RESET);
}

/* Give the request due at 'intended' to a free connection. */
static void assign(struct engine *e, int64_t intended, bool counted, bool late, int64_t now)
{
	struct conn *c = &e->conns[e->free[--e->nr_free]];

	c->busy = true;
	e->nr_busy++;
	c->intended = intended;
	c->sent_at = now;
	c->counted = counted;
	c->late = late;
	c->req = e->next_req++ % e->spec->nr_requests;
	c->wpos = 0;
	strbuf_reset(&c->in);
	if (c->state == CONN_DOWN)
		start_connect(e, c, now);
	else if (c->state == CONN_UP)
		do_write(e, c, now);
}

/* Bytes arrived on c: is its reply whole? */
static void check_reply(struct engine *e, struct conn *c, int64_t now, bool eof)
{
	struct http_reply hr;
	int ret;

	if (!c->busy) {
		/* nothing was asked: bytes or an end from the server between requests */
		conn_close(e, c);
		return;
	}
	if (e->spec->proto == LOADGEN_LINE) {
		char *nl = memchr(c->in.buf, '\n', c->in.len);

		if (!nl) {
			if (c->in.len > 65536)
				fail(e, c, now, LOADGEN_ERR_MALFORMED);
			else if (eof)
				fail(e, c, now, LOADGEN_ERR_CLOSED);
			return;
		}
		hr.len = nl + 1 - c->in.buf;
		hr.status = 200;
		hr.close = false;
		ret = 1;
	} else {
		ret = c->in.len ? loadgen_http_reply(c->in.buf, c->in.len, eof, &hr) : 0;
		if (ret < 0) {
			fail(e, c, now, LOADGEN_ERR_MALFORMED);
			return;
		}
		if (!ret) {
			if (eof)
				fail(e, c, now, c->in.len || c->wpos ? LOADGEN_ERR_CLOSED : LOADGEN_ERR_RESET);
			return;
		}
	}
	if (c->wpos < e->spec->requests[c->req].len) {
		/* an answer to what was not asked in full */
		fail(e, c, now, LOADGEN_ERR_MALFORMED);
		return;
	}
	/* one request in flight: bytes past the reply are the server's error */
	if (hr.len != c->in.len) {
		fail(e, c, now, LOADGEN_ERR_MALFORMED);
		return;
	}
	strbuf_reset(&c->in);
	if (hr.close || eof)
		conn_close(e, c);
	finish(e, c, now, hr.status,
	       hr.status >= 500 ? LOADGEN_ERR_5XX : hr.status >= 400 ? LOADGEN_ERR_4XX : -1);
}

static void on_event(struct engine *e, struct conn *c, uint32_t events, int64_t now)
{
	if (c->state == CONN_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err || (events & EPOLLERR)) {
			if (c->busy)
				fail(e, c, now, err == ECONNREFUSED || !err ? LOADGEN_ERR_REFUSED : LOADGEN_ERR_RESET);
			else
				conn_close(e, c);
			return;
		}
		c->state = CONN_UP;
		if (c->busy)
			do_write(e, c, now);
		else if (set_events(e, c, false))
			conn_close(e, c);
		return;
	}
	if (c->state != CONN_UP)
		return;
	if ((events & EPOLLOUT) && c->busy) {
		do_write(e, c, now);
		if (c->state != CONN_UP)
			return;
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		for (;;) {
			ssize_t n;

			strbuf_grow(&c->in, 16384);
			n = recv(c->fd, c->in.buf + c->in.len, 16384, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (n < 0) {
				if (c->busy)
					fail(e, c, now, errno == ECONNREFUSED ? LOADGEN_ERR_REFUSED : LOADGEN_ERR_RESET);
				else
					conn_close(e, c);
				return;
			}
			if (n == 0) {
				check_reply(e, c, now, true);
				if (c->state == CONN_UP)
					conn_close(e, c);
				return;
			}
			strbuf_setlen(&c->in, c->in.len + (size_t)n);
			if (c->in.len > LOADGEN_MAX_REPLY + 16384) {
				fail(e, c, now, LOADGEN_ERR_MALFORMED);
				return;
			}
			if ((size_t)n < 16384)
				break;
		}
		check_reply(e, c, now, false);
	}
}

static void close_window(struct engine *e, double start, double end, bool warmup)
{
	struct loadgen_window w = { .index = e->r->nr_windows, .start = start, .end = end, .warmup = warmup };

	w.c = e->win;
	w.throughput = end > start ? (double)w.c.answered / (end - start) : 0;
	histogram_summary(&e->win_hist, &w.latency);
	if (e->spec->on_window)
		e->spec->on_window(&w, e->spec->data);
	if (e->r->nr_windows < LOADGEN_MAX_WINDOWS) {
		ALLOC_GROW(e->r->windows, e->r->nr_windows + 1, e->r->alloc_windows);
		e->r->windows[e->r->nr_windows] = w;
	}
	e->r->nr_windows++;
	memset(&e->win, 0, sizeof(e->win));
	histogram_reset(&e->win_hist);
}

static int check_spec(const struct loadgen_spec *s)
{
	if (!(s->rate > 0) || s->rate > 1e7)
		return error("the rate is from 1 to 10000000 requests a second");
	if (s->connections < 1 || s->connections > 10000)
		return error("connections are from 1 to 10000");
	if (!(s->duration > 0) || !(s->window > 0) || !(s->timeout > 0) || s->warmup < 0)
		return error("the duration, window and timeout must be more than 0, the warmup 0 or more");
	if (!s->nr_requests || !s->addr_len)
		return error("no request or no target to load");
	return 0;
}

int loadgen_run(const struct loadgen_spec *spec, struct loadgen_result *r)
{
	struct engine e = { .spec = spec, .r = r, .epfd = -1, .blocked_at = INT64_MIN };
	struct loadgen_clock clock;
	struct epoll_event evs[256];
	int64_t next, end_sched, warm, win_ns, timeout_ns, win_end, drain_end = 0, now, rel, last_scan = 0;
	double next_s;
	int ret = -1, slack;

	*r = (struct loadgen_result)LOADGEN_RESULT_INIT;
	histogram_init(&r->latency);
	histogram_init(&r->service);
	if (check_spec(spec))
		return -1;
	if ((e.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return error("cannot create an epoll instance: %s", strerror(errno));
	histogram_init(&e.win_hist);
	e.conns = xcalloc(spec->connections, sizeof(*e.conns));
	e.free = xcalloc(spec->connections, sizeof(*e.free));
	for (int i = 0; i < spec->connections; i++) {
		e.conns[i].fd = -1;
		strbuf_init(&e.conns[i].in, 0);
		e.free[e.nr_free++] = spec->connections - 1 - i;
	}
	loadgen_clock_init(&clock, spec->sched, spec->rate, spec->seed);
	warm = (int64_t)(spec->warmup * 1e9);
	end_sched = warm + (int64_t)(spec->duration * 1e9);
	win_ns = (int64_t)(spec->window * 1e9);
	timeout_ns = (int64_t)(spec->timeout * 1e9);
	if (win_ns < 1000000)
		win_ns = 1000000;
	/* wake up on time: the default 50 us of timer slack would be in every latency */
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	e.t0 = mono_ns();
	/* open the connections before the first request is due */
	for (int i = 0; i < spec->connections; i++)
		start_connect(&e, &e.conns[i], e.t0);
	next_s = loadgen_clock_next(&clock);
	next = (int64_t)(next_s * 1e9);
	win_end = win_ns;
	for (;;) {
		int64_t wait;
		struct timespec ts;
		int n;

		now = mono_ns();
		rel = now - e.t0;
		if (hl_cancelled()) {
			r->cancelled = true;
			break;
		}
		/* the windows that are over, before anything of the next is counted */
		while (rel >= win_end) {
			close_window(&e, (double)(win_end - win_ns) / 1e9, (double)win_end / 1e9,
				     win_end - win_ns < warm);
			win_end += win_ns;
		}
		/* the requests that are due */
		while (next <= rel && next < end_sched) {
			bool counted = next >= warm;

			if (rel - next > timeout_ns) {
				/* waited past its timeout for a connection: never sent */
				e.win.scheduled++;
				if (counted)
					r->total.scheduled++;
				count_error(&e, counted, LOADGEN_ERR_TIMEOUT);
			} else if (!e.nr_free) {
				e.blocked_at = rel;
				break;
			} else {
				e.win.scheduled++;
				if (counted)
					r->total.scheduled++;
				assign(&e, e.t0 + next, counted, next <= e.blocked_at, now);
			}
			next_s = loadgen_clock_next(&clock);
			next = (int64_t)(next_s * 1e9);
		}
		/* timeouts, every millisecond at most */
		if (rel - last_scan >= 1000000 || drain_end) {
			last_scan = rel;
			for (int i = 0; i < spec->connections; i++) {
				struct conn *c = &e.conns[i];

				if (c->busy && c->stale && now > c->stale_until) {
					conn_close(&e, c);
					release(&e, c);
				} else if (c->busy && !c->stale && now - c->intended > timeout_ns) {
					timed_out(&e, c, now, timeout_ns);
				}
			}
		}
		if (next >= end_sched) {
			if (!drain_end)
				drain_end = end_sched + timeout_ns;
			if (e.nr_busy == e.nr_stale || rel >= drain_end)
				break;
		}
		/* until the next window, the next request due, or a reply */
		wait = win_end - rel;
		if (next < end_sched && next > rel && next - rel < wait)
			wait = next - rel;
		else if (next < end_sched && next <= rel && e.nr_free)
			wait = 0;
		if (e.nr_busy && wait > 1000000)
			wait = 1000000;
		if (wait < 0)
			wait = 0;
		ts.tv_sec = wait / 1000000000;
		ts.tv_nsec = wait % 1000000000;
		n = epoll_pwait2(e.epfd, evs, ARRAY_SIZE(evs), &ts, NULL);
		if (n < 0 && errno == ENOSYS)
			n = epoll_wait(e.epfd, evs, ARRAY_SIZE(evs), (int)((wait + 999999) / 1000000));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			error("epoll_wait: %s", strerror(errno));
			goto out;
		}
		now = mono_ns();
		for (int i = 0; i < n; i++)
			on_event(&e, &e.conns[evs[i].data.u32], evs[i].events, now);
	}
	now = mono_ns();
	/* what is still in flight at the end */
	for (int i = 0; i < spec->connections; i++)
		if (e.conns[i].busy)
			fail(&e, &e.conns[i], now, LOADGEN_ERR_TIMEOUT);
	rel = now - e.t0;
	if (rel > win_end - win_ns)
		close_window(&e, (double)(win_end - win_ns) / 1e9, (double)rel / 1e9, win_end - win_ns < warm);
	r->elapsed = (double)rel / 1e9;
	r->measured = r->cancelled ? fmax(0, (double)(rel - warm) / 1e9) : spec->duration;
	if (r->measured > spec->duration)
		r->measured = spec->duration;
	r->throughput = r->measured > 0 ? (double)r->total.answered / r->measured : 0;
	histogram_summary(&r->latency, &r->summary);
	histogram_summary(&r->service, &r->service_summary);
	ret = 0;
out:
	for (int i = 0; i < spec->connections; i++) {
		if (e.conns[i].fd >= 0)
			close(e.conns[i].fd);
		strbuf_release(&e.conns[i].in);
	}
	free(e.conns);
	free(e.free);
	histogram_release(&e.win_hist);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	close(e.epfd);
	return ret;
}
