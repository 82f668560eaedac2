/*
 * push.c: `hotloop push` as a library: the checks on an application name
 * and headers, the ingest URL with its query, and the POST itself through
 * libcurl (multipart/form-data, the profile as the "profile" part, the way
 * Pyroscope's own clients send pprof). The server's answer is kept up to
 * PUSH_MAX_ANSWER bytes, for the message when it says no.
 */
#include <ctype.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include <curl/curl.h>

#include "push.h"
#include "profile.h"
#include "strbuf.h"
#include "util.h"

#define PUSH_CONNECT_TIMEOUT_MS 10000L

static bool is_label_name(const char *s, size_t len)
{
	if (!len || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

int push_check_name(const char *name)
{
	const char *brace = strchr(name, '{'), *p;
	size_t app_len = brace ? (size_t)(brace - name) : strlen(name);
	const char **keys = NULL;
	size_t *key_len = NULL, nr_keys = 0, alloc_keys = 0, alloc_len = 0;
	int ret = 0;

	if (!app_len)
		return error("the application name in '%s' is empty: use APP or APP{k=v,...}", name);
	for (size_t i = 0; i < app_len; i++) {
		unsigned char c = name[i];

		if (is_control(c))
			return error("a control character in the application name of '%s'", name);
		if (c == '}' || c == ',' || c == '=' || c == ' ')
			return error("invalid character '%c' in the application name '%.*s'",
				     c, (int)app_len, name);
	}
	if (!brace)
		return 0;
	p = brace + 1;
	if (*p == '}')
		goto check_end;
	for (;;) {
		const char *seg = p, *eq, *val;
		size_t seg_len = strcspn(seg, ",}"), val_len;

		if (!seg_len && seg[0]) {
			ret = error("an empty label in '%s'", name);
			goto out;
		}
		if (!seg[seg_len]) {
			ret = error("the labels of '%s' have no closing '}'", name);
			goto out;
		}
		eq = memchr(seg, '=', seg_len);
		if (!eq) {
			ret = error("label '%.*s' in '%s' has no value: labels are k=v", (int)seg_len, seg, name);
			goto out;
		}
		if (!is_label_name(seg, (size_t)(eq - seg))) {
			ret = error("invalid label name '%.*s' in '%s': a name matches [a-zA-Z_][a-zA-Z0-9_]*",
				    (int)(eq - seg), seg, name);
			goto out;
		}
		val = eq + 1;
		val_len = seg_len - (size_t)(val - seg);
		if (!val_len) {
			ret = error("label '%.*s' in '%s' has an empty value", (int)(eq - seg), seg, name);
			goto out;
		}
		for (size_t i = 0; i < val_len; i++) {
			if (val[i] == '=' || val[i] == '{' || is_control((unsigned char)val[i])) {
				ret = error("invalid value '%.*s' of label '%.*s' in '%s': no '=', '{', ',', '}' or control characters",
					    (int)val_len, val, (int)(eq - seg), seg, name);
				goto out;
			}
		}
		for (size_t k = 0; k < nr_keys; k++) {
			if (key_len[k] == (size_t)(eq - seg) && !memcmp(keys[k], seg, key_len[k])) {
				ret = error("label '%.*s' appears twice in '%s'", (int)key_len[k], seg, name);
				goto out;
			}
		}
		ALLOC_GROW(keys, nr_keys + 1, alloc_keys);
		ALLOC_GROW(key_len, nr_keys + 1, alloc_len);
		keys[nr_keys] = seg;
		key_len[nr_keys++] = (size_t)(eq - seg);
		p = seg + seg_len;
		if (*p == '}')
			break;
		p++;
	}
check_end:
	if (p[1])
		ret = error("unexpected '%s' after the labels of '%s'", p + 1, name);
out:
	free(keys);
	free(key_len);
	return ret;
}

int push_check_header(const char *header)
{
	const char *colon = strchr(header, ':');

	if (strpbrk(header, "\r\n"))
		return error("invalid header '%s': it must be one line", header);
	if (!colon || colon == header)
		return error("invalid header '%s': use 'Name: value'", header);
	for (const char *c = header; c < colon; c++)
		if (!isgraph((unsigned char)*c))
			return error("invalid header name '%.*s': no spaces or control characters",
				     (int)(colon - header), header);
	return 0;
}

/* RFC 3986 percent-encoding: all but the unreserved characters. */
static void add_escaped(struct strbuf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = *s;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			strbuf_addch(out, c);
		} else {
			strbuf_addch(out, '%');
			strbuf_addch(out, hex[c >> 4]);
			strbuf_addch(out, hex[c & 15]);
		}
	}
}

static bool has_prefix_nocase(const char *s, const char *prefix)
{
	return !strncasecmp(s, prefix, strlen(prefix));
}

int push_check_base(const char *base)
{
	const char *host;

	if (has_prefix_nocase(base, "http://"))
		host = base + 7;
	else if (has_prefix_nocase(base, "https://"))
		host = base + 8;
	else
		return error("'%s' is not an http:// or https:// URL: give the server like http://host:4040",
			     base);
	if (!*host || *host == '/')
		return error("'%s' has no host: give the server like http://host:4040", base);
	if (strpbrk(base, "?# \t\r\n"))
		return error("'%s' is not a server's base URL: no query, fragment or spaces", base);
	return 0;
}

int push_ingest_url(const struct push_request *r, struct strbuf *out)
{
	size_t len = strlen(r->base);

	if (push_check_base(r->base))
		return -1;
	while (len && r->base[len - 1] == '/')
		len--;
	strbuf_add(out, r->base, len);
	strbuf_addstr(out, "/ingest?name=");
	add_escaped(out, r->name);
	strbuf_addf(out, "&from=%lld&until=%lld&format=pprof&spyName=hotloop&sampleRate=%ld",
		    (long long)r->from, (long long)r->until, r->sample_rate);
	strbuf_addstr(out, "&units=");
	add_escaped(out, r->units);
	strbuf_addstr(out, "&aggregationType=sum");
	return 0;
}

void push_default_range(const struct profile *p, int64_t now_s, int64_t *from, int64_t *until)
{
	const int64_t ns = 1000000000;
	int64_t dur = p->duration_nanos > 0 ? p->duration_nanos : 0;

	if (p->time_nanos > 0) {
		int64_t end = sat_add(p->time_nanos, dur);

		*from = p->time_nanos / ns;
		*until = end / ns + (end % ns != 0);
		if (*until <= *from)
			*until = *from + 1;
	} else {
		*until = now_s;
		*from = now_s - (dur / ns + (dur % ns != 0));
		if (*from >= *until)
			*from = *until - 1;
	}
}

const char *push_units(const struct profile *p)
{
	const char *type, *unit;
	int idx;

	if (!p->nr_sample_type)
		return "samples";
	idx = profile_pick_sample_type(p, NULL);
	if (idx < 0)
		return "samples";
	type = profile_string(p, p->sample_type[idx].type);
	unit = profile_string(p, p->sample_type[idx].unit);
	if (!strcmp(unit, "bytes"))
		return "bytes";
	if (!strcmp(unit, "objects") || strstr(type, "objects"))
		return "objects";
	return "samples";
}

long push_sample_rate(const struct profile *p)
{
	const char *unit = profile_string(p, p->period_type.unit);

	if (p->period > 0 && !strcmp(unit, "nanoseconds")) {
		int64_t hz = (1000000000 + p->period / 2) / p->period;

		return hz > 0 ? (long)hz : 1;
	}
	return 100;
}

/* libcurl's write callback: keep the first PUSH_MAX_ANSWER bytes, drop the rest. */
static size_t keep_answer(char *data, size_t size, size_t nmemb, void *arg)
{
	struct strbuf *sb = arg;
	size_t n = size * nmemb;

	if (sb->len < PUSH_MAX_ANSWER)
		strbuf_add(sb, data, n < PUSH_MAX_ANSWER - sb->len ? n : PUSH_MAX_ANSWER - sb->len);
	return n;
}

/* The first non-blank line of an answer, at most 200 characters, printable. */
static char *first_line(const struct strbuf *sb)
{
	struct strbuf line = STRBUF_INIT;
	const char *s = sb->buf, *end = sb->buf + sb->len;

	while (s < end && isspace((unsigned char)*s))
		s++;
	for (; s < end && *s != '\n' && *s != '\r' && line.len < 200; s++)
		strbuf_addch(&line, is_control((unsigned char)*s) ? '?' : *s);
	strbuf_rtrim(&line);
	return strbuf_detach(&line, NULL);
}

/* The URL without its query: what messages name. */
static char *url_path(const char *url)
{
	const char *q = strchr(url, '?');

	return q ? xstrndup(url, (size_t)(q - url)) : xstrdup(url);
}

int push_send(const struct push_request *r, const void *pprof, size_t len,
	      struct push_result *res)
{
	struct strbuf url = STRBUF_INIT, answer = STRBUF_INIT;
	struct curl_slist *headers = NULL, *h;
	char errbuf[CURL_ERROR_SIZE] = "";
	char *where = NULL;
	curl_mime *mime = NULL;
	curl_mimepart *part;
	CURL *curl;
	CURLcode rc;
	long timeout_ms = r->timeout_s > 0 ? (long)(r->timeout_s * 1000) : 60000;
	int ret = -1;

	if (push_ingest_url(r, &url))
		goto out_free;
	res->url = xstrdup(url.buf);
	where = url_path(url.buf);
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		error("cannot initialize libcurl");
		goto out_free;
	}
	curl = curl_easy_init();
	if (!curl) {
		error("cannot initialize libcurl");
		goto out_global;
	}
	mime = curl_mime_init(curl);
	part = mime ? curl_mime_addpart(mime) : NULL;
	if (!part || curl_mime_name(part, "profile") ||
	    curl_mime_filename(part, "profile.pb.gz") ||
	    curl_mime_type(part, "application/octet-stream") ||
	    curl_mime_data(part, pprof, len)) {
		error("cannot build the request to '%s': out of memory", where);
		goto out_curl;
	}
	/* no "Expect: 100-continue" round trip before a large body */
	h = curl_slist_append(headers, "Expect:");
	for (size_t i = 0; h && i < r->nr_headers; i++) {
		headers = h;
		h = curl_slist_append(headers, r->headers[i]);
	}
	if (!h) {
		error("cannot build the request to '%s': out of memory", where);
		goto out_curl;
	}
	headers = h;

	curl_easy_setopt(curl, CURLOPT_URL, url.buf);
	curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "hotloop/" HOTLOOP_VERSION);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
			 timeout_ms < PUSH_CONNECT_TIMEOUT_MS ? timeout_ms : PUSH_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep_answer);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
	if (r->cacert)
		curl_easy_setopt(curl, CURLOPT_CAINFO, r->cacert);

	rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &res->status);
	res->answer = first_line(&answer);
	if (rc != CURLE_OK) {
		error("cannot send the profile to '%s': %s%s", where,
		      *errbuf ? errbuf : curl_easy_strerror(rc),
		      rc == CURLE_COULDNT_CONNECT ? " (is the server running, on that port?)" :
		      rc == CURLE_COULDNT_RESOLVE_HOST ? " (check the host name)" :
		      rc == CURLE_OPERATION_TIMEDOUT ? " (a longer --timeout may help)" : "");
		goto out_curl;
	}
	if (res->status < 200 || res->status >= 300) {
		error("'%s' refused the profile: HTTP status %ld%s%s", where, res->status,
		      *res->answer ? ": " : " (no answer)", res->answer);
		goto out_curl;
	}
	res->sent = len;
	ret = 0;
out_curl:
	curl_slist_free_all(headers);
	curl_mime_free(mime);
	curl_easy_cleanup(curl);
out_global:
	curl_global_cleanup();
out_free:
	free(where);
	strbuf_release(&url);
	strbuf_release(&answer);
	return ret;
}

void push_result_release(struct push_result *res)
{
	free(res->url);
	free(res->answer);
	res->url = res->answer = NULL;
}
