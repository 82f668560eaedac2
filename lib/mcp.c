/*
 * mcp.c: the Model Context Protocol session: the line reader (bounded),
 * JSON-RPC 2.0 messages, the lifecycle with version negotiation, and the
 * worker thread that runs tools and resource reads (lib/mcp-tools.c) one
 * at a time, with progress notifications from the engines' events and
 * cancellation through hl_cancel(). docs/mcp.md says what a client sees.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "events.h"
#include "json.h"
#include "mcp.h"
#include "rules.h"
#include "util.h"

const char *const mcp_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26" };
const size_t mcp_nr_versions = ARRAY_SIZE(mcp_versions);

const char *mcp_negotiate_version(const char *requested)
{
	for (size_t i = 0; requested && i < mcp_nr_versions; i++)
		if (!strcmp(requested, mcp_versions[i]))
			return mcp_versions[i];
	return mcp_versions[0];
}

/* ---- framing ---- */

void mcp_reader_init(struct mcp_reader *r, int fd, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->cap = cap;
	strbuf_init(&r->buf, 0);
}

void mcp_reader_release(struct mcp_reader *r)
{
	strbuf_release(&r->buf);
}

void mcp_reader_feed(struct mcp_reader *r, const void *data, size_t len, bool eof)
{
	strbuf_add(&r->buf, data, len);
	r->eof |= eof;
}

/* Drop what was handed out, so the buffer holds at most one line and a read. */
static void compact(struct mcp_reader *r)
{
	if (!r->pos)
		return;
	memmove(r->buf.buf, r->buf.buf + r->pos, r->buf.len - r->pos);
	strbuf_setlen(&r->buf, r->buf.len - r->pos);
	r->pos = 0;
}

static int fill(struct mcp_reader *r)
{
	ssize_t n;

	if (r->eof || r->fd < 0) {
		r->eof = true;
		return 0;
	}
	compact(r);
	strbuf_grow(&r->buf, 65536);
	do
		n = read(r->fd, r->buf.buf + r->buf.len, 65536);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (!n)
		r->eof = true;
	strbuf_setlen(&r->buf, r->buf.len + (size_t)n);
	return 0;
}

enum mcp_read mcp_reader_next(struct mcp_reader *r, struct strbuf *line)
{
	for (;;) {
		const char *start = r->buf.buf + r->pos;
		size_t avail = r->buf.len - r->pos;
		const char *nl = memchr(start, '\n', avail);
		size_t len = nl ? (size_t)(nl - start) : avail;

		if (r->skipping) {
			/* the rest of an overlong line goes, up to its newline */
			r->pos += nl ? len + 1 : len;
			if (nl) {
				r->skipping = false;
				continue;
			}
		} else if (len > r->cap) {
			r->pos += nl ? len + 1 : len;
			r->skipping = !nl;
			return MCP_READ_TOO_LONG;
		} else if (nl || (r->eof && len)) {
			size_t n = len;

			if (n && start[n - 1] == '\r')
				n--;
			strbuf_reset(line);
			strbuf_add(line, start, n);
			r->pos += nl ? len + 1 : len;
			/* blank lines (and white space alone) are not messages */
			if (strspn(line->buf, " \t\r") == line->len)
				continue;
			return MCP_READ_LINE;
		}
		if (r->eof) {
			r->pos = r->buf.len;
			return MCP_READ_EOF;
		}
		if (fill(r) < 0)
			return MCP_READ_ERROR;
	}
}

/* ---- errors, captured per thread ---- */

static __thread struct strbuf *error_capture, *warning_capture;
static bool log_messages = true;

static void capture(struct strbuf *into, const char *prefix, const char *msg)
{
	if (log_messages)
		fprintf(stderr, "%s%s\n", prefix, msg);	/* the server's log, as clients keep it */
	if (!into)
		return;
	if (into->len)
		strbuf_addch(into, '\n');
	strbuf_addstr(into, msg);
}

static void on_error(const char *prefix, const char *msg)
{
	capture(error_capture, prefix, msg);
}

static void on_warning(const char *prefix, const char *msg)
{
	capture(warning_capture, prefix, msg);
}

/* ---- the session ---- */

/*
 * A batch (protocol 2025-03-26): its answers gathered, sent as one array
 * when the last of its requests is answered or dropped. 'pending' counts
 * its requests given to the worker, plus one while the reader still goes
 * through its elements.
 */
struct mcp_batch {
	pthread_mutex_t lock;
	json_t *replies;
	size_t pending;
};

struct mcp_job {
	json_t *id;		/* the request's */
	char *method;
	json_t *params;
	json_t *token;		/* _meta.progressToken, or NULL */
	double progress;	/* the last progress sent */
	bool cancelled;
	struct mcp_batch *batch;	/* the batch it came in, or NULL */
	struct mcp_session *s;
	struct mcp_job *next;
};

struct mcp_session {
	const struct mcp_options *opts;
	int out_fd;
	bool threaded;
	const char *version;		/* negotiated by initialize, else NULL */
	bool write_failed;
	pthread_mutex_t write_lock;
	/* the worker's queue */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct mcp_job *queue, **tail;
	struct mcp_job *running;
	bool stopping, have_worker;
	pthread_t worker;
	report_fn old_error, old_warning;
};

const char *mcp_session_version(const struct mcp_session *s)
{
	return s->version;
}

/* Where this thread's answers go: the batch they answer, or (NULL) the client. */
static __thread struct mcp_batch *reply_batch;

static void write_msg(struct mcp_session *s, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(msg);
	if (!text)
		BUG("a message could not be encoded");
	pthread_mutex_lock(&s->write_lock);
	if (!s->write_failed) {
		size_t len = strlen(text);

		text[len] = '\n';	/* json_dumps' NUL: one write holds the line and its end */
		if (write_full(s->out_fd, text, len + 1)) {
			s->write_failed = true;
			fprintf(stderr, "hotloop: mcp: cannot write to the client: %s\n",
				strerror(errno ? errno : EPIPE));
		}
	}
	pthread_mutex_unlock(&s->write_lock);
	free(text);
}

static void send_msg(struct mcp_session *s, json_t *msg)
{
	struct mcp_batch *b = reply_batch;

	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	if (!b) {
		write_msg(s, msg);
		return;
	}
	pthread_mutex_lock(&b->lock);
	json_array_append_new(b->replies, msg);
	pthread_mutex_unlock(&b->lock);
}

/* One of b's requests is answered (or dropped): after the last, the answers go out. */
static void batch_release(struct mcp_session *s, struct mcp_batch *b)
{
	bool last;

	pthread_mutex_lock(&b->lock);
	last = !--b->pending;
	pthread_mutex_unlock(&b->lock);
	if (!last)
		return;
	/* a batch of notifications only gets no answer at all */
	if (json_array_size(b->replies))
		write_msg(s, b->replies);
	else
		json_decref(b->replies);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

static void send_result(struct mcp_session *s, json_t *id, json_t *result)
{
	json_t *msg = json_object();

	json_object_set(msg, "id", id);
	json_object_set_new(msg, "result", result);
	send_msg(s, msg);
}

static void send_error(struct mcp_session *s, json_t *id, int code, const char *message, json_t *data)
{
	json_t *msg = json_object(), *err = json_object();

	json_object_set(msg, "id", id ? id : json_null());
	json_object_set_new(err, "code", json_integer(code));
	json_object_set_new(err, "message", json_text(message));
	if (data)
		json_object_set_new(err, "data", data);
	json_object_set_new(msg, "error", err);
	send_msg(s, msg);
}

static void send_errorf(struct mcp_session *s, json_t *id, int code, const char *fmt, ...)
	ATTR_PRINTF(4, 5);
static void send_errorf(struct mcp_session *s, json_t *id, int code, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	send_error(s, id, code, sb.buf, NULL);
	strbuf_release(&sb);
}

void mcp_session_too_long(struct mcp_session *s, size_t cap)
{
	send_errorf(s, NULL, MCP_PARSE_ERROR, "parse error: a message longer than %zu bytes was skipped", cap);
}

/* ---- progress: the engines' events as notifications/progress ---- */

static void notify_progress(const struct event *ev, void *data)
{
	struct mcp_job *job = data;
	struct strbuf sb = STRBUF_INIT;
	json_t *msg, *params;

	if (ev->message)
		strbuf_addf(&sb, "%s: %s", ev->source ? ev->source : "hotloop", ev->message);
	else if (ev->kind == EV_PAIR)
		strbuf_addf(&sb, "%s: %s pair %zu of %zu: base %g, candidate %g", ev->source,
			    ev->workload ? ev->workload : "workload", ev->done, ev->total, ev->base, ev->cand);
	else if (ev->kind == EV_STAGE)
		strbuf_addf(&sb, "%s: %s %s", ev->source, gate_stage_name(ev->stage),
			    ev->passed ? "passed" : "failed");
	else
		return;
	/* progress must grow with each notification; a total only where the engine counts steps */
	params = json_object();
	json_object_set(params, "progressToken", job->token);
	if (ev->kind == EV_PROGRESS && ev->total && (double)(ev->done + 1) > job->progress) {
		job->progress = (double)(ev->done + 1);
		json_object_set_new(params, "total", json_integer((json_int_t)ev->total));
	} else {
		job->progress = (double)(long long)job->progress + 1;
	}
	json_object_set_new(params, "progress", json_real(job->progress));
	json_object_set_new(params, "message", json_text(sb.buf));
	msg = json_object();
	json_object_set_new(msg, "method", json_string("notifications/progress"));
	json_object_set_new(msg, "params", params);
	send_msg(job->s, msg);
	strbuf_release(&sb);
}

/* ---- running a tool or a resource read (the worker, or inline) ---- */

static json_t *text_content(const char *text)
{
	return json_pack("[{s:s, s:o}]", "type", "text", "text", json_text(text));
}

static json_t *call_tool(struct mcp_job *job, struct mcp_call *c, struct strbuf *err)
{
	const struct mcp_tool *t = mcp_find_tool(json_string_value(json_object_get(job->params, "name")));
	json_t *args = json_object_get(job->params, "arguments"), *doc = NULL, *result = json_object();
	struct strbuf text = STRBUF_INIT;
	int ret;

	args = args ? json_incref(args) : json_object();
	ret = mcp_check_args(t, args);
	if (!ret)
		ret = t->fn(c, args, &doc, &text);
	if (!ret && !json_is_object(doc))
		BUG("tool '%s' gave no document", t->name);
	if (c->warnings.len) {
		/* what lib/ warned about goes with the answer, a line each */
		struct strbuf *into = ret ? err : &text;
		const char *w = c->warnings.buf;

		if (into->len && into->buf[into->len - 1] != '\n')
			strbuf_addch(into, '\n');
		while (*w) {
			size_t n = strcspn(w, "\n");

			strbuf_addf(into, "warning: %.*s\n", (int)n, w);
			w += n + (w[n] == '\n');
		}
	}
	if (ret) {
		/* a tool that failed is a result the model can read, not a protocol error */
		json_object_set_new(result, "content", text_content(err->len ? err->buf : "the tool failed"));
		json_object_set_new(result, "isError", json_true());
		json_decref(doc);
	} else {
		json_object_set_new(result, "content", text_content(text.buf));
		json_object_set_new(result, "structuredContent", doc);
		json_object_set_new(result, "isError", json_false());
	}
	json_decref(args);
	strbuf_release(&text);
	return result;
}

static void run_job(struct mcp_job *job)
{
	struct mcp_session *s = job->s;
	struct observer obs = { notify_progress, job, NULL };
	struct mcp_call c = { .opts = s->opts, .obs = job->token ? &obs : NULL };
	struct mcp_batch *saved;
	struct strbuf err = STRBUF_INIT;
	json_t *result = NULL;
	int code = 0;
	bool not_found = false;

	strbuf_init(&c.warnings, 0);
	error_capture = &err;
	warning_capture = &c.warnings;
	if (!strcmp(job->method, "tools/call")) {
		result = call_tool(job, &c, &err);
	} else if (!strcmp(job->method, "resources/list")) {
		json_t *list = mcp_resources_list(&c);

		if (list)
			result = json_pack("{s:o}", "resources", list);
		else
			code = MCP_INTERNAL_ERROR;
	} else if (!strcmp(job->method, "resources/read")) {
		const char *uri = json_string_value(json_object_get(job->params, "uri"));
		json_t *contents;

		if (mcp_resource_read(&c, uri, &contents, &not_found))
			code = not_found ? MCP_RESOURCE_NOT_FOUND : MCP_INTERNAL_ERROR;
		else
			result = json_pack("{s:o}", "contents", contents);
	} else {
		BUG("no job for method '%s'", job->method);
	}
	error_capture = warning_capture = NULL;

	pthread_mutex_lock(&s->lock);
	job->cancelled |= s->stopping;
	pthread_mutex_unlock(&s->lock);
	saved = reply_batch;	/* the reader's, when it runs the job itself */
	reply_batch = job->batch;
	/* a cancelled request gets no answer (the client has stopped waiting) */
	if (job->cancelled)
		json_decref(result);
	else if (result)
		send_result(s, job->id, result);
	else
		send_error(s, job->id, code, err.len ? err.buf : "the request failed",
			   not_found ? json_pack("{s:O}", "uri", json_object_get(job->params, "uri")) : NULL);
	reply_batch = saved;
	strbuf_release(&err);
	strbuf_release(&c.warnings);
}

static void job_free(struct mcp_job *job)
{
	if (job->batch)
		batch_release(job->s, job->batch);
	json_decref(job->id);
	json_decref(job->params);
	json_decref(job->token);
	free(job->method);
	free(job);
}

static void *worker_main(void *data)
{
	struct mcp_session *s = data;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct mcp_job *job;

		while (!s->queue && !s->stopping)
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->stopping)
			break;
		job = s->queue;
		s->queue = job->next;
		if (!s->queue)
			s->tail = &s->queue;
		s->running = job;
		/* under the lock: a cancel of the last job cannot reach this one */
		hl_cancel_reset();
		pthread_mutex_unlock(&s->lock);
		run_job(job);
		pthread_mutex_lock(&s->lock);
		s->running = NULL;
		hl_cancel_reset();
		job_free(job);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void submit(struct mcp_session *s, json_t *id, const char *method, json_t *params)
{
	struct mcp_job *job = xcalloc(1, sizeof(*job));

	job->s = s;
	if ((job->batch = reply_batch)) {
		pthread_mutex_lock(&job->batch->lock);
		job->batch->pending++;
		pthread_mutex_unlock(&job->batch->lock);
	}
	/* copies: the reader thread frees the message while the worker runs */
	job->id = json_deep_copy(id);
	job->method = xstrdup(method);
	job->params = params ? json_deep_copy(params) : json_object();
	job->token = json_deep_copy(json_object_get(json_object_get(job->params, "_meta"), "progressToken"));
	if (job->token && !json_is_string(job->token) && !json_is_integer(job->token)) {
		json_decref(job->token);
		job->token = NULL;
	}
	if (!s->threaded) {
		run_job(job);
		job_free(job);
		return;
	}
	pthread_mutex_lock(&s->lock);
	*s->tail = job;
	s->tail = &job->next;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* notifications/cancelled: stop the request running, or drop it from the queue. */
static void cancel_request(struct mcp_session *s, json_t *id)
{
	if (!id)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->running && json_equal(s->running->id, id)) {
		s->running->cancelled = true;
		hl_cancel();
	} else {
		for (struct mcp_job **p = &s->queue; *p; p = &(*p)->next) {
			if (json_equal((*p)->id, id)) {
				struct mcp_job *job = *p;

				*p = job->next;
				if (s->tail == &job->next)
					s->tail = p;
				job_free(job);
				break;
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
}

struct mcp_session *mcp_session_new(const struct mcp_options *o, int out_fd, bool threaded)
{
	struct mcp_session *s = xcalloc(1, sizeof(*s));

	s->opts = o;
	s->out_fd = out_fd;
	s->threaded = threaded;
	s->tail = &s->queue;
	pthread_mutex_init(&s->write_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	log_messages = !o->quiet;
	s->old_error = set_error_routine(on_error);
	s->old_warning = set_warn_routine(on_warning);
	if (threaded) {
		int err = pthread_create(&s->worker, NULL, worker_main, s);

		if (err) {
			warning("cannot start the worker thread: %s: tools run as they arrive", strerror(err));
			s->threaded = false;
		} else {
			s->have_worker = true;
		}
	}
	return s;
}

void mcp_session_free(struct mcp_session *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	while (s->queue) {
		struct mcp_job *job = s->queue;

		s->queue = job->next;
		job_free(job);
	}
	s->tail = &s->queue;
	if (s->running)
		hl_cancel();	/* its workload is killed; clean-up runs to its end */
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (s->have_worker)
		pthread_join(s->worker, NULL);
	hl_cancel_reset();
	set_error_routine(s->old_error);
	set_warn_routine(s->old_warning);
	pthread_mutex_destroy(&s->write_lock);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}

/* ---- messages ---- */

static json_t *initialize_result(const char *version)
{
	json_t *caps = json_pack("{s:{s:b}, s:{s:b, s:b}}", "tools", "listChanged", 0,
				 "resources", "subscribe", 0, "listChanged", 0);

	return json_pack("{s:s, s:o, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version,
			 "capabilities", caps,
			 "serverInfo", "name", "hotloop", "title", "hotloop", "version", HOTLOOP_VERSION,
			 "instructions",
			 "hotloop profiles and measures native programs. Record a configured workload "
			 "(record), read where its time goes in code the project owns (brief, report, "
			 "flame, asm), measure (bench) and decide whether a change is faster (compare: "
			 "keep, reject or inconclusive, with every reason). kb_search before trying an "
			 "optimization: rejected attempts are kept there.");
}

static void handle_request(struct mcp_session *s, json_t *id, const char *method, json_t *params)
{
	if (params && !json_is_object(params)) {
		send_errorf(s, id, MCP_INVALID_PARAMS, "invalid params of '%s': expected an object", method);
		return;
	}
	if (!strcmp(method, "ping")) {
		send_result(s, id, json_object());
		return;
	}
	if (!strcmp(method, "initialize")) {
		json_t *v = json_object_get(params, "protocolVersion");

		if (s->version) {
			send_errorf(s, id, MCP_INVALID_REQUEST, "the session is already initialized (protocol %s)",
				    s->version);
			return;
		}
		if (!params || !json_is_string(v)) {
			send_errorf(s, id, MCP_INVALID_PARAMS, "invalid params of 'initialize': "
				    "expected protocolVersion, a string");
			return;
		}
		s->version = mcp_negotiate_version(json_string_value(v));
		send_result(s, id, initialize_result(s->version));
		return;
	}
	if (!s->version) {
		send_errorf(s, id, MCP_INVALID_REQUEST, "the session is not initialized: send initialize first");
		return;
	}
	if (!strcmp(method, "tools/list")) {
		json_t *tools = json_array();

		for (size_t i = 0; i < mcp_nr_tools; i++)
			json_array_append_new(tools, mcp_tool_json(&mcp_tools[i]));
		send_result(s, id, json_pack("{s:o}", "tools", tools));
	} else if (!strcmp(method, "tools/call")) {
		json_t *name = json_object_get(params, "name"), *args = json_object_get(params, "arguments");

		if (!json_is_string(name)) {
			send_errorf(s, id, MCP_INVALID_PARAMS, "invalid params of 'tools/call': expected name, a string");
		} else if (!mcp_find_tool(json_string_value(name))) {
			struct strbuf sb = STRBUF_INIT;

			for (size_t i = 0; i < mcp_nr_tools; i++)
				strbuf_addf(&sb, "%s%s", i ? ", " : "", mcp_tools[i].name);
			send_errorf(s, id, MCP_INVALID_PARAMS, "unknown tool '%s': the tools are %s",
				    json_string_value(name), sb.buf);
			strbuf_release(&sb);
		} else if (args && !json_is_object(args) && !json_is_null(args)) {
			send_errorf(s, id, MCP_INVALID_PARAMS, "invalid params of 'tools/call': arguments must be an object");
		} else {
			if (json_is_null(args))
				json_object_del(params, "arguments");
			submit(s, id, method, params);
		}
	} else if (!strcmp(method, "resources/list")) {
		submit(s, id, method, params);
	} else if (!strcmp(method, "resources/templates/list")) {
		send_result(s, id, json_pack("{s:o}", "resourceTemplates", mcp_resource_templates()));
	} else if (!strcmp(method, "resources/read")) {
		if (!json_is_string(json_object_get(params, "uri")))
			send_errorf(s, id, MCP_INVALID_PARAMS, "invalid params of 'resources/read': expected uri, a string");
		else
			submit(s, id, method, params);
	} else {
		send_errorf(s, id, MCP_METHOD_NOT_FOUND, "method '%s' not found", method);
	}
}

static void handle_notification(struct mcp_session *s, const char *method, json_t *params)
{
	if (!strcmp(method, "notifications/cancelled"))
		cancel_request(s, json_object_get(params, "requestId"));
	/* notifications/initialized and any other: nothing to answer */
}

static void handle_message(struct mcp_session *s, json_t *msg)
{
	json_t *id = json_object_get(msg, "id"), *method = json_object_get(msg, "method");
	json_t *version = json_object_get(msg, "jsonrpc");

	if (!json_is_object(msg)) {
		send_errorf(s, NULL, MCP_INVALID_REQUEST, "invalid request: expected a JSON-RPC object");
		return;
	}
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		send_errorf(s, NULL, MCP_INVALID_REQUEST, "invalid request: the id must be a string or an integer");
		return;
	}
	if (!json_is_string(version) || strcmp(json_string_value(version), "2.0")) {
		send_errorf(s, id, MCP_INVALID_REQUEST, "invalid request: expected \"jsonrpc\": \"2.0\"");
		return;
	}
	if (!method) {
		/* a response (we send no requests), else nonsense */
		if (!id || (!json_object_get(msg, "result") && !json_object_get(msg, "error")))
			send_errorf(s, id, MCP_INVALID_REQUEST, "invalid request: no method");
		return;
	}
	if (!json_is_string(method)) {
		send_errorf(s, id, MCP_INVALID_REQUEST, "invalid request: the method must be a string");
		return;
	}
	if (id)
		handle_request(s, id, json_string_value(method), json_object_get(msg, "params"));
	else
		handle_notification(s, json_string_value(method), json_object_get(msg, "params"));
}

/*
 * An array of messages: JSON-RPC 2.0 batches, which protocol 2025-03-26
 * has (initialize never in one) and later versions removed. The answers
 * come back as one array, in the order they are ready.
 */
static void handle_batch(struct mcp_session *s, json_t *msgs)
{
	struct mcp_batch *b;
	size_t i;
	json_t *msg;

	if (!s->version || strcmp(s->version, "2025-03-26")) {
		send_errorf(s, NULL, MCP_INVALID_REQUEST, "invalid request: batches are not supported "
			    "in protocol %s (only in 2025-03-26): send one message a line",
			    s->version ? s->version : "negotiation (initialize comes alone)");
		return;
	}
	if (!json_array_size(msgs)) {
		send_errorf(s, NULL, MCP_INVALID_REQUEST, "invalid request: an empty batch");
		return;
	}
	b = xcalloc(1, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	b->replies = json_array();
	b->pending = 1;
	reply_batch = b;
	json_array_foreach(msgs, i, msg)
		handle_message(s, msg);
	reply_batch = NULL;
	batch_release(s, b);
}

void mcp_session_handle(struct mcp_session *s, const char *line, size_t len)
{
	json_error_t e;
	json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);

	if (!msg) {
		send_errorf(s, NULL, MCP_PARSE_ERROR, "parse error: %s at line %d, column %d", e.text,
			    e.line, e.column);
		return;
	}
	if (json_is_array(msg))
		handle_batch(s, msg);
	else
		handle_message(s, msg);
	json_decref(msg);
}

/* ---- the server ---- */

static void ignore_signal(int sig)
{
}

int mcp_serve(const struct mcp_options *o, int in_fd, int out_fd)
{
	struct mcp_reader r;
	struct strbuf line = STRBUF_INIT;
	struct mcp_session *s;
	struct sigaction sa = { .sa_handler = ignore_signal }, old;
	int ret = 0;

	/*
	 * A client gone shows as EPIPE, not death by SIGPIPE; caught, not
	 * ignored, so children start with the default again.
	 */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, &old);
	s = mcp_session_new(o, out_fd, true);
	mcp_reader_init(&r, in_fd, MCP_LINE_MAX);
	for (;;) {
		enum mcp_read got = mcp_reader_next(&r, &line);

		if (got == MCP_READ_EOF)
			break;
		if (got == MCP_READ_ERROR) {
			ret = error("mcp: cannot read requests: %s", strerror(errno));
			break;
		}
		if (got == MCP_READ_TOO_LONG)
			mcp_session_too_long(s, r.cap);
		else
			mcp_session_handle(s, line.buf, line.len);
		if (s->write_failed) {
			ret = -1;
			break;
		}
	}
	mcp_session_free(s);
	mcp_reader_release(&r);
	strbuf_release(&line);
	sigaction(SIGPIPE, &old, NULL);
	return ret;
}

int mcp_take_stdio(int *in_fd, int *out_fd)
{
	int in = fcntl(0, F_DUPFD_CLOEXEC, 3), out = fcntl(1, F_DUPFD_CLOEXEC, 3), null;

	if (in < 0 || out < 0)
		goto fail;
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0) {
		if (null >= 0)
			close(null);
		goto fail;
	}
	close(null);
	*in_fd = in;
	*out_fd = out;
	return 0;
fail:
	error("mcp: cannot take standard input and output for the protocol: %s", strerror(errno));
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return -1;
}
