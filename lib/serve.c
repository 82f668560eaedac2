/*
 * serve.c: the dashboard's HTTP server (see serve.h). libmicrohttpd runs
 * a pool of threads on epoll; each API request borrows one of the pool's
 * read-only store connections. One watcher thread checks the store's
 * data_version a few times a second and, when another process committed,
 * turns the new activity rows into events for every live client: a
 * client with nothing to read is suspended, not polled, and resumed when
 * there is something, or when its peer has gone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>
#include <sqlite3.h>

#include "dashboard.h"
#include "json.h"
#include "reply-cache.h"
#include "serve.h"
#include "store.h"
#include "strbuf.h"
#include "util.h"

static const char page_html[] =
#include "dash.html.h"
;
static const char page_js[] =
#include "dash.js.h"
;
static const char page_css[] =
#include "dash.css.h"
;

static const struct asset {
	const char *path, *type;
	const char *body;
	size_t len;
} assets[] = {
	{ "/", "text/html; charset=utf-8", page_html, sizeof(page_html) - 1 },
	{ "/index.html", "text/html; charset=utf-8", page_html, sizeof(page_html) - 1 },
	{ "/dash.js", "text/javascript; charset=utf-8", page_js, sizeof(page_js) - 1 },
	{ "/dash.css", "text/css; charset=utf-8", page_css, sizeof(page_css) - 1 },
};

/* The page may load only from here; the flame graphs keep their own inline script. */
#define PAGE_CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " \
	"connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; " \
	"frame-ancestors 'none'"
#define SVG_CSP "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " \
	"frame-ancestors 'self'"

struct message {
	uint64_t seq;
	char *text;		/* a whole event: "event: ...\ndata: ...\n\n" */
};

struct client {
	struct serve *sv;
	struct MHD_Connection *conn;
	uint64_t next;		/* the next message's seq */
	uint64_t pinged;	/* the ping round it got last */
	struct strbuf out;	/* what is formatted and not sent yet */
	size_t sent;
	bool suspended;
	bool gone;		/* its peer closed while it was suspended */
	struct client *link;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	struct store **conns;	/* NULL: not opened yet */
	bool *busy;
	size_t nr;
};

struct serve {
	struct dash *d;
	struct serve_options o;
	struct MHD_Daemon *mhd;
	int port;
	char *token;
	char *url_host;
	char *bind_host;	/* the address bound, as given */
	char *hostname;		/* this machine's */
	struct pool pool;

	pthread_t watcher;
	bool watching;
	pthread_mutex_t lock;	/* the clients and the messages */
	pthread_cond_t wake;
	bool stopping;
	struct client *clients;
	size_t nr_clients;
	struct message ring[SERVE_EVENTS_KEPT];
	uint64_t seq;		/* messages so far */
	uint64_t ping;		/* ping rounds so far */
	int64_t last_activity;
	struct reply_cache cache;	/* the API's answers, until the store or files change */
	uint64_t stamp;			/* dash_files_stamp() at the watcher's last look */
};

/* ---- store connections ----------------------------------------------------- */

static struct store *pool_take(struct serve *sv, size_t *slot)
{
	struct pool *p = &sv->pool;
	struct store *s = NULL;
	size_t i;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		for (i = 0; i < p->nr && p->busy[i]; i++)
			;
		if (i < p->nr)
			break;
		pthread_cond_wait(&p->freed, &p->lock);
	}
	p->busy[i] = true;
	pthread_mutex_unlock(&p->lock);
	*slot = i;
	if (!p->conns[i] && !access(sv->d->db, F_OK) && store_open_readonly(sv->d->db, &s) == 0)
		p->conns[i] = s;
	return p->conns[i];
}

static void pool_give(struct serve *sv, size_t slot)
{
	struct pool *p = &sv->pool;

	pthread_mutex_lock(&p->lock);
	p->busy[slot] = false;
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

/* ---- responses ----------------------------------------------------------- */

/* Queue response r (NULL: out of memory) with the headers every answer has. */
static enum MHD_Result send_response(struct MHD_Connection *c, unsigned status, const char *type,
				     struct MHD_Response *r, const char *csp)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (csp)
		MHD_add_response_header(r, "Content-Security-Policy", csp);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_buffer(struct MHD_Connection *c, unsigned status, const char *type,
				   const char *body, size_t len, enum MHD_ResponseMemoryMode mode,
				   const char *csp)
{
	return send_response(c, status, type, MHD_create_response_from_buffer(len, (void *)body, mode),
			     csp);
}

static void unref_blob(void *cls)
{
	reply_blob_unref(cls);
}

/* Send an API answer without copying it: the response holds a reference. */
static enum MHD_Result send_blob(struct MHD_Connection *c, struct reply_blob *b)
{
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(b->len,
		b->data, unref_blob, reply_blob_ref(b));

	if (!r)
		reply_blob_unref(b);
	return send_response(c, (unsigned)b->status, b->type, r,
			     strcmp(b->type, DASH_SVG) ? NULL : SVG_CSP);
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	json_t *doc = json_pack("{s:s}", "error", msg);
	char *text = json_dumps(doc, JSON_COMPACT);

	json_decref(doc);
	return send_buffer(c, status, DASH_JSON, text, strlen(text), MHD_RESPMEM_MUST_FREE, NULL);
}

/* ---- checks -------------------------------------------------------------- */

static bool is_loopback_name(const char *h, size_t n)
{
	return (n == 9 && !strncasecmp(h, "localhost", 9)) || (n == 9 && !strncmp(h, "127.0.0.1", 9)) ||
	       (n == 5 && !strncmp(h, "[::1]", 5));
}

static bool is_ip_literal(const char *h, size_t n)
{
	char buf[64];
	struct in6_addr a6;
	struct in_addr a4;

	if (n >= sizeof(buf))
		return false;
	if (n > 2 && h[0] == '[' && h[n - 1] == ']') {
		memcpy(buf, h + 1, n - 2);
		buf[n - 2] = 0;
		return inet_pton(AF_INET6, buf, &a6) == 1;
	}
	memcpy(buf, h, n);
	buf[n] = 0;
	return inet_pton(AF_INET, buf, &a4) == 1;
}

static bool loopback_bind(const struct serve *sv)
{
	const char *h = sv->bind_host;

	return !strcmp(h, "127.0.0.1") || !strcmp(h, "::1") || !strcasecmp(h, "localhost");
}

bool serve_host_allowed(const struct serve *sv, const char *host)
{
	const char *colon;
	size_t n;

	if (!host || !*host)
		return false;
	/* the name without its port; a port must be the one we listen on */
	colon = host[0] == '[' ? strstr(host, "]:") : strchr(host, ':');
	if (colon && host[0] == '[')
		colon++;
	n = colon ? (size_t)(colon - host) : strlen(host);
	if (colon) {
		char *end;
		long port = strtol(colon + 1, &end, 10);

		if (*end || port != sv->port)
			return false;
	}
	if (is_loopback_name(host, n))
		return true;
	if (loopback_bind(sv))
		return false;	/* a page of another name reached us: rebinding */
	if (is_ip_literal(host, n))
		return true;
	if (sv->hostname && strlen(sv->hostname) == n && !strncasecmp(host, sv->hostname, n))
		return true;
	for (size_t i = 0; i < sv->o.nr_allow_hosts; i++)
		if (strlen(sv->o.allow_hosts[i]) == n && !strncasecmp(host, sv->o.allow_hosts[i], n))
			return true;
	return false;
}

/* Equal, in a time that does not depend on where they differ. */
static bool same_secret(const char *given, const char *token)
{
	size_t n = strlen(token);
	unsigned char diff = 0;

	if (strlen(given) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)given[i] ^ (unsigned char)token[i];
	return !diff;
}

/* The token the request carries: ?token=, a Bearer header, or the cookie the page set. */
static bool token_ok(const struct serve *sv, struct MHD_Connection *c, bool *from_query)
{
	const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "hotloop_token");

	*from_query = false;
	if (!sv->token)
		return true;
	if (q && same_secret(q, sv->token))
		return *from_query = true;
	if (auth && !strncmp(auth, "Bearer ", 7) && same_secret(auth + 7, sv->token))
		return true;
	return cookie && same_secret(cookie, sv->token);
}

/* ---- server-sent events -------------------------------------------------- */

static void add_message(struct serve *sv, char *text)
{
	struct message *m = &sv->ring[sv->seq % SERVE_EVENTS_KEPT];

	free(m->text);
	m->seq = sv->seq++;
	m->text = text;
}

/* Everyone waiting gets to read again (sv->lock held). */
static void resume_all(struct serve *sv)
{
	for (struct client *c = sv->clients; c; c = c->link)
		if (c->suspended) {
			c->suspended = false;
			MHD_resume_connection(c->conn);
		}
}

/*
 * MHD watches no suspended socket, so a page closed while its stream
 * waited would keep its place among the live clients until a write
 * failed: two pings later, as the first write to a closed peer succeeds.
 * Each of them whose peer has sent its end (or reset) is resumed to end
 * its stream (sv->lock held).
 */
static void release_gone(struct serve *sv)
{
	for (struct client *c = sv->clients; c; c = c->link) {
		const union MHD_ConnectionInfo *ci;
		char byte;
		ssize_t n;

		if (!c->suspended)
			continue;
		ci = MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci)
			continue;
		n = recv(ci->connect_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			c->gone = true;
			c->suspended = false;
			MHD_resume_connection(c->conn);
		}
	}
}

static ssize_t events_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct client *c = cls;
	struct serve *sv = c->sv;
	ssize_t n;

	pthread_mutex_lock(&sv->lock);
	if (c->gone) {
		pthread_mutex_unlock(&sv->lock);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	if (c->sent == c->out.len) {
		strbuf_reset(&c->out);
		c->sent = 0;
		if (sv->stopping) {
			pthread_mutex_unlock(&sv->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (sv->seq - c->next > SERVE_EVENTS_KEPT) {
			/* too far behind: what it missed is gone, it starts over */
			c->next = sv->seq;
			strbuf_addstr(&c->out, "event: reset\ndata: {}\n\n");
		}
		for (; c->next < sv->seq && c->out.len < 65536; c->next++)
			strbuf_addstr(&c->out, sv->ring[c->next % SERVE_EVENTS_KEPT].text);
		if (c->pinged < sv->ping) {
			c->pinged = sv->ping;
			if (!c->out.len)
				strbuf_addstr(&c->out, ": ping\n\n");
		}
		if (!c->out.len) {
			c->suspended = true;
			MHD_suspend_connection(c->conn);
			pthread_mutex_unlock(&sv->lock);
			return 0;
		}
	}
	n = (ssize_t)(c->out.len - c->sent < max ? c->out.len - c->sent : max);
	memcpy(buf, c->out.buf + c->sent, (size_t)n);
	c->sent += (size_t)n;
	pthread_mutex_unlock(&sv->lock);
	return n;
}

static void events_free(void *cls)
{
	struct client *c = cls;
	struct serve *sv = c->sv;

	pthread_mutex_lock(&sv->lock);
	for (struct client **p = &sv->clients; *p; p = &(*p)->link)
		if (*p == c) {
			*p = c->link;
			break;
		}
	sv->nr_clients--;
	pthread_mutex_unlock(&sv->lock);
	strbuf_release(&c->out);
	free(c);
}

static enum MHD_Result start_events(struct serve *sv, struct MHD_Connection *conn)
{
	struct MHD_Response *r;
	struct client *c;
	enum MHD_Result ret;

	pthread_mutex_lock(&sv->lock);
	if (sv->nr_clients >= sv->o.max_clients || sv->stopping) {
		pthread_mutex_unlock(&sv->lock);
		return send_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "too many live clients: try again later");
	}
	c = xcalloc(1, sizeof(*c));
	c->sv = sv;
	c->conn = conn;
	strbuf_init(&c->out, 0);
	c->next = sv->seq;
	c->pinged = sv->ping;
	strbuf_addf(&c->out, "retry: 2000\nevent: hello\ndata: {\"last_activity_id\":%" PRId64 "}\n\n",
		    sv->last_activity);
	c->link = sv->clients;
	sv->clients = c;
	sv->nr_clients++;
	pthread_mutex_unlock(&sv->lock);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, events_read, c, events_free);
	if (!r) {
		events_free(c);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- answers kept -------------------------------------------------------- */

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	struct strbuf *sb = cls;

	(void)kind;
	strbuf_addf(sb, "&%zu:%s", strlen(key), key);
	if (value)
		strbuf_addf(sb, "=%zu:%s", strlen(value), value);
	return MHD_YES;
}

/*
 * A request's key in the cache: its decoded path's length and the path,
 * then each query argument, lengths first (a decoded path or value may
 * hold any byte but NUL, so no separator would do).
 */
static char *request_key(struct MHD_Connection *conn, const char *url)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%zu:%s", strlen(url), url);
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, add_arg, &sb);
	return strbuf_detach(&sb, NULL);
}

/* The path of a key with no query arguments; NULL for one with some. */
static const char *key_path(const char *key)
{
	char *end;
	unsigned long long n = strtoull(key, &end, 10);

	if (*end != ':' || strlen(end + 1) != n)
		return NULL;
	return end + 1;
}

/* One event of the store's activity: "event: activity" with the row as data. */
static char *activity_message(sqlite3_stmt *st, int64_t *id)
{
	json_t *o = json_object();
	char *data, *text;

	*id = sqlite3_column_int64(st, 0);
	json_object_set_new(o, "id", json_integer(*id));
	json_object_set_new(o, "at", json_real(sqlite3_column_double(st, 1)));
	json_object_set_new(o, "loop_id", sqlite3_column_type(st, 2) == SQLITE_NULL ? json_null() :
			    json_integer(sqlite3_column_int64(st, 2)));
	json_object_set_new(o, "level", json_text((const char *)sqlite3_column_text(st, 3)));
	json_object_set_new(o, "kind", json_text((const char *)sqlite3_column_text(st, 4)));
	json_object_set_new(o, "message", json_text((const char *)sqlite3_column_text(st, 5)));
	data = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	text = xstrfmt("id: %" PRId64 "\nevent: activity\ndata: %s\n\n", *id, data ? data : "{}");
	free(data);
	return text;
}

/* Has another process committed to the store since *version was read? */
static bool store_changed(struct store *s, int64_t *version)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(store_sqlite(s), "PRAGMA data_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (v == *version)
		return false;
	*version = v;
	return true;
}

/* The activity so far is history: the page reads it from the API. */
static void skip_history(struct serve *sv, struct store *s)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(store_sqlite(s), "SELECT max(id) FROM activity", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		pthread_mutex_lock(&sv->lock);
		sv->last_activity = sqlite3_column_int64(st, 0);
		pthread_mutex_unlock(&sv->lock);
	}
	sqlite3_finalize(st);
}

/* Tell every live client what changed: the new activity rows, then one "change". */
static void publish(struct serve *sv, struct store *s)
{
	sqlite3 *db = store_sqlite(s);
	sqlite3_stmt *st;
	int64_t last;
	struct store_counts counts;
	bool changed = false;

	pthread_mutex_lock(&sv->lock);
	last = sv->last_activity;
	pthread_mutex_unlock(&sv->lock);
	if (sqlite3_prepare_v2(db, "SELECT id, at, loop_id, level, kind, message FROM activity "
			       "WHERE id > ?1 ORDER BY id LIMIT 1000", -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, last);
	pthread_mutex_lock(&sv->lock);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id;

		add_message(sv, activity_message(st, &id));
		sv->last_activity = id;
		changed = true;
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&sv->lock);
	if (!store_counts(s, &counts)) {
		json_t *doc = json_pack("{s:o, s:I}", "counts", store_counts_json(&counts),
					"last_activity_id", (json_int_t)sv->last_activity);
		char *data = json_dumps(doc, JSON_COMPACT);

		json_decref(doc);
		pthread_mutex_lock(&sv->lock);
		add_message(sv, xstrfmt("event: change\ndata: %s\n\n", data));
		pthread_mutex_unlock(&sv->lock);
		free(data);
		changed = true;
	}
	if (changed) {
		pthread_mutex_lock(&sv->lock);
		resume_all(sv);
		pthread_mutex_unlock(&sv->lock);
	}
}

/*
 * Build again the answers the open pages asked for lately (those of a
 * path alone: what a page fetches when told of a change), so that the
 * fetches the change event sets off find them ready.
 */
static void rebuild(struct serve *sv, struct store *s)
{
	char **keys;
	size_t nr = reply_cache_recent(&sv->cache, SERVE_REBUILD_S, REPLY_CACHE_ENTRIES, &keys);
	size_t built = 0;

	for (size_t i = 0; i < nr; i++) {
		struct dash_reply rep;
		uint64_t gen = reply_cache_gen(&sv->cache);
		const char *url = key_path(keys[i]);

		if (url && built++ < SERVE_REBUILD_MAX) {
			struct reply_blob *b;
			size_t len;
			char *body;

			dash_get(sv->d, s, url, NULL, NULL, &rep);
			body = strbuf_detach(&rep.body, &len);
			b = reply_blob_new(rep.status, rep.type, body, len);
			if (b->status == MHD_HTTP_OK)
				reply_cache_put(&sv->cache, gen, keys[i], b);
			reply_blob_unref(b);
		}
		free(keys[i]);
	}
	free(keys);
}

static void *watch(void *arg)
{
	struct serve *sv = arg;
	struct store *s = NULL;
	int64_t version = -1;
	double next_ping = store_now() + SERVE_PING_S;
	bool first, changed;
	uint64_t stamp;

	pthread_mutex_lock(&sv->lock);
	while (!sv->stopping) {
		struct timespec until;
		double t;

		pthread_mutex_unlock(&sv->lock);
		if (!s && !access(sv->d->db, F_OK) && store_open_readonly(sv->d->db, &s))
			s = NULL;
		first = version == -1;
		changed = s && store_changed(s, &version);
		stamp = dash_files_stamp(sv->d);
		if (changed || stamp != sv->stamp) {
			/* the answers kept are stale before anyone is told of the change */
			sv->stamp = stamp;
			reply_cache_bump(&sv->cache);
			if (changed && first)
				skip_history(sv, s);
			else
				rebuild(sv, s);
			if (s && !(changed && first))
				publish(sv, s);
		}
		pthread_mutex_lock(&sv->lock);
		if (store_now() >= next_ping) {
			next_ping = store_now() + SERVE_PING_S;
			sv->ping++;
			resume_all(sv);
		}
		release_gone(sv);
		clock_gettime(CLOCK_REALTIME, &until);
		t = until.tv_nsec + sv->o.poll_s * 1e9;
		until.tv_sec += (time_t)(t / 1e9);
		until.tv_nsec = (long)(t - (double)(time_t)(t / 1e9) * 1e9);
		if (!sv->stopping)
			pthread_cond_timedwait(&sv->wake, &sv->lock, &until);
	}
	pthread_mutex_unlock(&sv->lock);
	store_close(s);
	return NULL;
}

/* ---- requests ------------------------------------------------------------ */

static const char *query_param(void *ctx, const char *key)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* An API answer: the one kept for the request, or one built now (and kept). */
static enum MHD_Result answer_api(struct serve *sv, struct MHD_Connection *conn, const char *url)
{
	char *key = request_key(conn, url);
	struct reply_blob *b = reply_cache_get(&sv->cache, key);
	enum MHD_Result ret;

	if (!b) {
		uint64_t gen = reply_cache_gen(&sv->cache);
		struct dash_reply rep;
		struct store *s;
		size_t slot, len;
		char *body;

		s = pool_take(sv, &slot);
		dash_get(sv->d, s, url, query_param, conn, &rep);
		pool_give(sv, slot);
		if (rep.status >= 500 && !sv->o.quiet)
			fprintf(stderr, "hotloop: serve: %s: %s\n", url, rep.body.buf);
		body = strbuf_detach(&rep.body, &len);
		b = reply_blob_new(rep.status, rep.type, body, len);
		if (b->status == MHD_HTTP_OK)
			reply_cache_put(&sv->cache, gen, key, b);
	}
	free(key);
	ret = send_blob(conn, b);
	reply_blob_unref(b);
	return ret;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req)
{
	struct serve *sv = cls;
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	bool from_query;

	if (!*req) {
		/*
		 * The headers are in. Refuse now what is refused whatever it
		 * asks for: a response can be queued only before a body is
		 * read, or after all of it.
		 */
		const char *len = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							      MHD_HTTP_HEADER_CONTENT_LENGTH);

		*req = (void *)1;
		if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
			return send_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
					  "the dashboard is read-only: GET and HEAD only");
		if ((len && strcmp(len, "0")) ||
		    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return send_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "requests carry no body here");
		return MHD_YES;
	}
	if (*upload_size)
		return MHD_NO;	/* a body no header announced: not HTTP we answer */
	if (!serve_host_allowed(sv, host))
		return send_error(conn, MHD_HTTP_MISDIRECTED_REQUEST,
				  "the Host header names neither this machine nor its address");
	if (!token_ok(sv, conn, &from_query))
		return send_error(conn, MHD_HTTP_UNAUTHORIZED, "a token is needed: open the address "
				  "'hotloop serve' printed, with its ?token=");
	for (size_t i = 0; i < ARRAY_SIZE(assets); i++)
		if (!strcmp(url, assets[i].path)) {
			struct MHD_Response *r = MHD_create_response_from_buffer(assets[i].len,
				(void *)assets[i].body, MHD_RESPMEM_PERSISTENT);
			enum MHD_Result ret;

			if (!r)
				return MHD_NO;
			MHD_add_response_header(r, "Content-Type", assets[i].type);
			MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
			MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
			MHD_add_response_header(r, "Cache-Control", "no-store");
			MHD_add_response_header(r, "Content-Security-Policy", PAGE_CSP);
			if (from_query && sv->token) {
				char *cookie = xstrfmt("hotloop_token=%s; Path=/; HttpOnly; SameSite=Strict",
						       sv->token);

				MHD_add_response_header(r, "Set-Cookie", cookie);
				free(cookie);
			}
			ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
			MHD_destroy_response(r);
			return ret;
		}
	if (!strcmp(url, "/api/events"))
		return start_events(sv, conn);
	if (!strncmp(url, "/api/", 5))
		return answer_api(sv, conn, url);
	return send_error(conn, MHD_HTTP_NOT_FOUND, "no such page");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct serve *sv = cls;

	if (sv->o.quiet)
		return;
	fputs("hotloop: serve: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/* ---- start and stop ------------------------------------------------------ */

static int resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	char ports[16];
	int rc;

	snprintf(ports, sizeof(ports), "%d", port);
	rc = getaddrinfo(host, ports, &hints, &res);
	if (rc)
		return error("cannot listen on '%s': %s", host, gai_strerror(rc));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Everything serve_start() made, once the daemon and the watcher are gone. */
static void destroy(struct serve *sv)
{
	for (size_t i = 0; i < sv->pool.nr; i++)
		store_close(sv->pool.conns[i]);
	for (size_t i = 0; i < SERVE_EVENTS_KEPT; i++)
		free(sv->ring[i].text);
	reply_cache_release(&sv->cache);
	pthread_mutex_destroy(&sv->lock);
	pthread_cond_destroy(&sv->wake);
	pthread_mutex_destroy(&sv->pool.lock);
	pthread_cond_destroy(&sv->pool.freed);
	free(sv->pool.conns);
	free(sv->pool.busy);
	free(sv->token);
	free(sv->bind_host);
	free(sv->hostname);
	free(sv->url_host);
	free(sv);
}

int serve_start(struct dash *d, const struct serve_options *o, struct serve **out)
{
	struct serve *sv = xcalloc(1, sizeof(*sv));
	struct sockaddr_storage ss;
	socklen_t len;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ERROR_LOG;
	char host[256];

	*out = NULL;
	sv->d = d;
	sv->o = *o;
	if (!sv->o.max_clients)
		sv->o.max_clients = SERVE_MAX_CLIENTS;
	if (!sv->o.threads)
		sv->o.threads = SERVE_THREADS;
	if (!sv->o.timeout_s)
		sv->o.timeout_s = SERVE_TIMEOUT_S;
	if (!(sv->o.poll_s > 0))
		sv->o.poll_s = SERVE_POLL_S;
	sv->bind_host = xstrdup(o->host ? o->host : "127.0.0.1");
	if (!gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = 0;
		sv->hostname = xstrdup(host);
	}
	if (o->port < 0 || o->port > 65535) {
		error("port %d is not a TCP port", o->port);
		goto fail;
	}
	if (resolve(sv->bind_host, o->port, &ss, &len))
		goto fail;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (o->token) {
		sv->token = xstrdup(o->token);
	} else if (!loopback_bind(sv)) {
		unsigned char raw[16];
		struct strbuf t = STRBUF_INIT;

		if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
			error("cannot make a token: %s", strerror(errno));
			goto fail;
		}
		for (size_t i = 0; i < sizeof(raw); i++)
			strbuf_addf(&t, "%02x", raw[i]);
		sv->token = strbuf_detach(&t, NULL);
	}
	pthread_mutex_init(&sv->lock, NULL);
	pthread_cond_init(&sv->wake, NULL);
	reply_cache_init(&sv->cache, 0, 0);
	sv->stamp = dash_files_stamp(d);
	pthread_mutex_init(&sv->pool.lock, NULL);
	pthread_cond_init(&sv->pool.freed, NULL);
	sv->pool.nr = sv->o.threads + 1;
	sv->pool.conns = xcalloc(sv->pool.nr, sizeof(*sv->pool.conns));
	sv->pool.busy = xcalloc(sv->pool.nr, sizeof(*sv->pool.busy));
	sv->mhd = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, answer, sv,
				   MHD_OPTION_EXTERNAL_LOGGER, mhd_log, sv,
				   MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				   MHD_OPTION_THREAD_POOL_SIZE, (unsigned)sv->o.threads,
				   MHD_OPTION_CONNECTION_LIMIT, (unsigned)(sv->o.max_clients + 256),
				   MHD_OPTION_CONNECTION_TIMEOUT, sv->o.timeout_s,
				   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_REQUEST_MAX,
				   MHD_OPTION_END);
	if (!sv->mhd) {
		error("cannot listen on %s port %d: %s", sv->bind_host, o->port,
		      errno ? strerror(errno) : "the address is taken or not this machine's");
		goto fail_locks;
	}
	info = MHD_get_daemon_info(sv->mhd, MHD_DAEMON_INFO_BIND_PORT);
	sv->port = info ? info->port : o->port;
	sv->url_host = ss.ss_family == AF_INET6 ? xstrfmt("[%s]", sv->bind_host) : xstrdup(sv->bind_host);
	if (pthread_create(&sv->watcher, NULL, watch, sv)) {
		error("cannot start the store's watcher");
		MHD_stop_daemon(sv->mhd);
		goto fail_locks;
	}
	sv->watching = true;
	*out = sv;
	return 0;
fail_locks:
	destroy(sv);
	return -1;
fail:
	free(sv->token);
	free(sv->bind_host);
	free(sv->hostname);
	free(sv->url_host);
	free(sv);
	return -1;
}

int serve_port(const struct serve *sv)
{
	return sv->port;
}

const char *serve_token(const struct serve *sv)
{
	return sv->token;
}

const char *serve_url_host(const struct serve *sv)
{
	return sv->url_host;
}

size_t serve_clients(struct serve *sv)
{
	size_t n;

	pthread_mutex_lock(&sv->lock);
	n = sv->nr_clients;
	pthread_mutex_unlock(&sv->lock);
	return n;
}

void serve_stop(struct serve *sv)
{
	if (!sv)
		return;
	pthread_mutex_lock(&sv->lock);
	sv->stopping = true;
	resume_all(sv);
	pthread_cond_broadcast(&sv->wake);
	pthread_mutex_unlock(&sv->lock);
	if (sv->watching)
		pthread_join(sv->watcher, NULL);
	/* the live clients read their end of stream, then the daemon goes */
	for (int i = 0; i < 100 && serve_clients(sv); i++) {
		pthread_mutex_lock(&sv->lock);
		resume_all(sv);
		pthread_mutex_unlock(&sv->lock);
		usleep(10000);
	}
	MHD_stop_daemon(sv->mhd);
	destroy(sv);
}

/* ---- the static copy ----------------------------------------------------- */

#define SNAPSHOT_MARK "<!-- snapshot data -->"
#define SNAPSHOT_HEAD "/* hotloop dashboard snapshot */\n"

/* A directory a snapshot may replace: missing, empty, or an earlier snapshot. */
static int snapshot_target_ok(const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	char *data = xstrfmt("%s/data.js", dir);
	struct stat st;
	int ret = 0;

	if (stat(dir, &st))
		goto out;
	if (!S_ISDIR(st.st_mode)) {
		ret = error("'%s' is not a directory", dir);
		goto out;
	}
	if (!rmdir(dir))
		goto out;	/* it was empty */
	/* no data.js is no snapshot: said once, below */
	if (access(data, F_OK) || read_file(&sb, data, 1u << 30) ||
	    strncmp(sb.buf, SNAPSHOT_HEAD, strlen(SNAPSHOT_HEAD)))
		ret = error("'%s' holds files and is not a dashboard snapshot: name a new or empty "
			    "directory", dir);
out:
	strbuf_release(&sb);
	free(data);
	return ret;
}

static int write_under(const char *dir, const char *rel, const char *body, size_t len,
		       struct serve_snapshot_result *r)
{
	char *path = xstrfmt("%s/%s", dir, rel), *slash = strrchr(path, '/');
	int ret;

	*slash = 0;
	ret = mkdir_p(path);
	*slash = '/';
	if (!ret)
		ret = write_file_atomic(path, body, len);
	if (!ret) {
		r->files++;
		r->bytes += len;
	}
	free(path);
	return ret;
}

int serve_snapshot(struct dash *d, const char *dir, struct serve_snapshot_result *r)
{
	struct store *s = NULL;
	char **paths = NULL, *tmp = NULL, *old = NULL, *text = NULL;
	size_t nr = 0;
	json_t *data = json_object(), *assets_list = json_array();
	struct strbuf sb = STRBUF_INIT;
	const char *mark = strstr(page_html, SNAPSHOT_MARK);
	bool was_sanitizing = d->sanitize;
	struct stat st;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (!mark)
		BUG("the page has no place for the snapshot's data");
	if (snapshot_target_ok(dir))
		goto out;
	if (!access(d->db, F_OK) && store_open_readonly(d->db, &s))
		goto out;
	d->sanitize = true;
	if (dash_snapshot_paths(d, s, &paths, &nr))
		goto out;
	tmp = xstrfmt("%s.tmp-%ld", dir, (long)getpid());
	old = xstrfmt("%s.old-%ld", dir, (long)getpid());
	if (remove_tree(tmp) || mkdir_p(tmp))
		goto out;
	for (size_t i = 0; i < nr; i++) {
		struct dash_reply rep;

		dash_get(d, s, paths[i], NULL, NULL, &rep);
		if (rep.status != 200) {
			r->skipped++;
			warning("the snapshot goes without %s: %s", paths[i], rep.body.buf);
		} else if (!strcmp(rep.type, DASH_JSON)) {
			json_t *v = json_loadb(rep.body.buf, rep.body.len, JSON_DECODE_ANY, NULL);

			if (v)
				json_object_set_new(data, paths[i], v);
		} else if (write_under(tmp, paths[i] + 1, rep.body.buf, rep.body.len, r)) {
			dash_reply_release(&rep);
			goto out_tmp;
		} else {
			json_array_append_new(assets_list, json_string(paths[i]));
		}
		dash_reply_release(&rep);
	}
	/* the files drawn, so the page offers only what the copy holds */
	json_object_set(data, "/api/assets", assets_list);
	text = json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
	if (!text) {
		error("cannot write the snapshot's data: out of memory");
		goto out_tmp;
	}
	strbuf_addf(&sb, SNAPSHOT_HEAD "window.HOTLOOP_SNAPSHOT = %s;\n", text);
	if (write_under(tmp, "data.js", sb.buf, sb.len, r))
		goto out_tmp;
	strbuf_reset(&sb);
	strbuf_add(&sb, page_html, (size_t)(mark - page_html));
	strbuf_addstr(&sb, "<script src=\"data.js\"></script>");
	strbuf_addstr(&sb, mark + strlen(SNAPSHOT_MARK));
	if (write_under(tmp, "index.html", sb.buf, sb.len, r) ||
	    write_under(tmp, "dash.js", page_js, sizeof(page_js) - 1, r) ||
	    write_under(tmp, "dash.css", page_css, sizeof(page_css) - 1, r))
		goto out_tmp;
	/* in place at once: the old copy moves aside, the new one in */
	if (!stat(dir, &st) && rename(dir, old)) {
		error("cannot replace '%s': %s", dir, strerror(errno));
		goto out_tmp;
	}
	if (rename(tmp, dir)) {
		error("cannot write '%s': %s", dir, strerror(errno));
		if (!access(old, F_OK))
			rename(old, dir);
		goto out_tmp;
	}
	remove_tree(old);
	r->paths = nr;
	ret = 0;
	goto out;
out_tmp:
	remove_tree(tmp);
out:
	d->sanitize = was_sanitizing;
	for (size_t i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
	free(text);
	free(tmp);
	free(old);
	json_decref(data);
	json_decref(assets_list);
	strbuf_release(&sb);
	store_close(s);
	return ret;
}
