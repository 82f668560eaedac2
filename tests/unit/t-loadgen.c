/*
 * t-loadgen.c: unit tests for loadgen.c without a network: the schedules
 * (constant times exact, Poisson the same for the same seed and near its
 * rate), the HTTP reply parser (lengths, chunked, until-close, partial and
 * malformed replies as cases), the request file splitter, the URL parser.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <string.h>

#include "test-helpers.h"
#include "loadgen.h"
#include "strbuf.h"

static struct strbuf errors = STRBUF_INIT;

static void keep_error(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static void test_loadgen__constant(void **state)
{
	struct loadgen_clock c;
	size_t n = 0;

	loadgen_clock_init(&c, LOADGEN_CONSTANT, 200, 0);
	for (;;) {
		double t = loadgen_clock_next(&c);

		if (t >= 5.0)
			break;
		assert_true(fabs(t - n / 200.0) < 1e-12);
		n++;
	}
	assert_int_equal(n, 1000);
	/* a rate that is not a divisor of a second */
	loadgen_clock_init(&c, LOADGEN_CONSTANT, 3, 0);
	for (n = 0; loadgen_clock_next(&c) < 2.5; n++)
		;
	assert_int_equal(n, 8);
}

static void test_loadgen__poisson(void **state)
{
	struct loadgen_clock a, b, other;
	double last = -1, t = 0;
	size_t same = 0;

	loadgen_clock_init(&a, LOADGEN_POISSON, 1000, 7);
	loadgen_clock_init(&b, LOADGEN_POISSON, 1000, 7);
	loadgen_clock_init(&other, LOADGEN_POISSON, 1000, 8);
	for (size_t i = 0; i < 100000; i++) {
		double ta = loadgen_clock_next(&a), tb = loadgen_clock_next(&b), to = loadgen_clock_next(&other);

		assert_true(ta == tb);
		assert_true(ta >= last);
		same += ta == to;
		last = t = ta;
	}
	assert_true(same < 10);
	/* 100000 gaps of mean 1 ms: the sum is 100 s within a few standard deviations (0.32 s) */
	assert_true(fabs(t - 100.0) < 2.0);
	assert_true(loadgen_clock_next(&a) > t);
}

static void test_loadgen__http_reply(void **state)
{
	static const struct { const char *in; bool eof; int want, status; size_t trail; bool close; } cases[] = {
		{ "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", false, 1, 200, 0, false },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nh", false, 0, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi!", false, 1, 200, 1, false },
		{ "HTTP/1.1 200 OK\r\ncontent-length:  2 \r\nConnection: close\r\n\r\nhi", false, 1, 200, 0, true },
		{ "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false, 1, 200, 0, true },
		{ "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", false, 1, 200, 0, false },
		{ "HTTP/1.1 204 No Content\r\n\r\n", false, 1, 204, 0, false },
		{ "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", false, 1, 304, 0, false },
		{ "HTTP/1.1 500\r\nContent-Length: 0\r\n\r\n", false, 1, 500, 0, false },
		{ "HTTP/1.1 404 Not Found\nContent-Length: 1\n\nx", false, 1, 404, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", false, 1, 200, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n", false, 1, 200, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n", false, 0, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab", false, 0, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\n\r\nuntil the end", false, 0, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\n\r\nuntil the end", true, 1, 200, 0, true },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi", false, 1, 200, 0, false },
		{ "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nhi", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nhi", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\n: x\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 100 Continue\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 600 Odd\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 20 OK\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.1 200OK\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/2.0 200 OK\r\n\r\n", false, -1, 0, 0, false },
		{ "HTTP/1.2 200 OK\r\n\r\n", false, -1, 0, 0, false },
		{ "SMTP 220 hi\r\n\r\n", false, -1, 0, 0, false },
		{ "HTT", false, 0, 0, 0, false },
		{ "HTX", false, -1, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nContent-Le", false, 0, 0, 0, false },
		{ "HTTP/1.1 200 OK\r\nContent-Le", true, 0, 0, 0, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct http_reply r;
		int got = loadgen_http_reply(cases[i].in, strlen(cases[i].in), cases[i].eof, &r);

		if (got != cases[i].want)
			fail_msg("case %zu '%s': got %d, want %d", i, cases[i].in, got, cases[i].want);
		if (got == 1 && (r.status != cases[i].status || r.len != strlen(cases[i].in) - cases[i].trail || r.close != cases[i].close))
			fail_msg("case %zu: status %d len %zu close %d", i, r.status, r.len, r.close);
	}
}

static void test_loadgen__http_reply_large(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct http_reply r;

	/* a head that never ends, and a body past the cap */
	strbuf_addstr(&sb, "HTTP/1.1 200 OK\r\n");
	for (int i = 0; i < 5000; i++)
		strbuf_addstr(&sb, "X-Pad: 0123456789\r\n");
	assert_int_equal(loadgen_http_reply(sb.buf, sb.len, false, &r), -1);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "HTTP/1.1 200 OK\r\n\r\n");
	strbuf_addchars(&sb, 'x', LOADGEN_MAX_REPLY + 1);
	assert_int_equal(loadgen_http_reply(sb.buf, sb.len, false, &r), -1);
	strbuf_reset(&sb);
	strbuf_addchars(&sb, 'H', 10000);
	assert_int_equal(loadgen_http_reply(sb.buf, sb.len, false, &r), -1);
	strbuf_release(&sb);
}

static void test_loadgen__requests(void **state)
{
	static const struct { const char *in; const char *err; } bad[] = {
		{ "", "no request" }, { "\n\n", "no request" },
		{ "GET /\n\n", "as its first line" }, { "GET / HTTP/2\n\n", "as its first line" },
		{ "GET / HTTP/1.1\nHost x\n\n", "line 2: expected 'Name: value'" },
		{ "GET / HTTP/1.1\nHost: x\n", "does not end with a blank line" },
		{ "POST / HTTP/1.1\nContent-Length: 10\n\nabc", "a body of 10 bytes, 3 left" },
		{ "POST / HTTP/1.1\nContent-Length: x\n\n", "a bad Content-Length" },
		{ "POST / HTTP/1.1\nTransfer-Encoding: chunked\n\n", "chunked requests are not supported" },
	};
	const char *file = "GET /a HTTP/1.1\nHost: h\n\n\nPOST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz\n"
			   "GET /c HTTP/1.1\n\n";
	struct strbuf *reqs = NULL, sb = STRBUF_INIT;
	size_t nr = 0, alloc = 0;
	const char *h[] = { "Accept: */*" };

	assert_int_equal(loadgen_split_requests(file, strlen(file), &reqs, &nr, &alloc), 0);
	assert_int_equal(nr, 3);
	assert_string_equal(reqs[0].buf, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_string_equal(reqs[1].buf, "POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz");
	assert_string_equal(reqs[2].buf, "GET /c HTTP/1.1\r\n\r\n");
	for (size_t i = 0; i < nr; i++)
		strbuf_release(&reqs[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		nr = 0;
		strbuf_reset(&errors);
		assert_int_equal(loadgen_split_requests(bad[i].in, strlen(bad[i].in), &reqs, &nr, &alloc), -1);
		assert_int_equal(nr, 0);
		if (!strstr(errors.buf, bad[i].err))
			fail_msg("'%s': got '%s'", bad[i].in, errors.buf);
	}
	free(reqs);
	loadgen_http_request(&sb, "POST", "127.0.0.1:8080", "/x?y=1", h, 1, "{}", 2);
	assert_string_equal(sb.buf, "POST /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: hotloop-load\r\n"
			    "Accept: */*\r\nContent-Length: 2\r\n\r\n{}");
	strbuf_release(&sb);
}

static void test_loadgen__url(void **state)
{
	static const struct { const char *url; int proto; int port; const char *host, *path, *err; } cases[] = {
		{ "http://127.0.0.1:8080/a/b?c", LOADGEN_HTTP, 8080, "127.0.0.1:8080", "/a/b?c", NULL },
		{ "http://127.0.0.1", LOADGEN_HTTP, 80, "127.0.0.1", "/", NULL },
		{ "http://[::1]:81/", LOADGEN_HTTP, 81, "[::1]:81", "/", NULL },
		{ "127.0.0.1:7000", LOADGEN_LINE, 7000, "127.0.0.1:7000", "/", NULL },
		{ "tcp://127.0.0.1:7000", LOADGEN_LINE, 7000, "127.0.0.1:7000", "/", NULL },
		{ "https://127.0.0.1/", 0, 0, NULL, NULL, "https is not supported" },
		{ "tcp://127.0.0.1:70/x", 0, 0, NULL, NULL, "without a path" },
		{ "127.0.0.1", 0, 0, NULL, NULL, "needs a port" },
		{ "http://:80/", 0, 0, NULL, NULL, "no host" },
		{ "http://[::1/", 0, 0, NULL, NULL, "closing ']'" },
		{ "http://[::1]x/", 0, 0, NULL, NULL, "expected ':PORT'" },
		{ "http://127.0.0.1:/", 0, 0, NULL, NULL, "from 1 to 65535" },
		{ "http://127.0.0.1:0/", 0, 0, NULL, NULL, "from 1 to 65535" },
		{ "http://127.0.0.1:65536/", 0, 0, NULL, NULL, "from 1 to 65535" },
		{ "http://127.0.0.1:8x/", 0, 0, NULL, NULL, "from 1 to 65535" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct loadgen_spec spec = { 0 };
		char *host, *path;
		int ret;

		strbuf_reset(&errors);
		ret = loadgen_parse_url(cases[i].url, &spec, &host, &path);
		if (cases[i].err) {
			assert_int_equal(ret, -1);
			if (!strstr(errors.buf, cases[i].err))
				fail_msg("'%s': got '%s'", cases[i].url, errors.buf);
			continue;
		}
		if (ret)
			fail_msg("'%s': %s", cases[i].url, errors.buf);
		assert_int_equal(spec.proto, cases[i].proto);
		assert_string_equal(host, cases[i].host);
		assert_string_equal(path, cases[i].path);
		assert_int_equal(ntohs(spec.addr.ss_family == AF_INET6 ?
				       ((struct sockaddr_in6 *)&spec.addr)->sin6_port :
				       ((struct sockaddr_in *)&spec.addr)->sin_port), cases[i].port);
		free(host);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loadgen__constant),
		cmocka_unit_test(test_loadgen__poisson),
		cmocka_unit_test(test_loadgen__http_reply),
		cmocka_unit_test(test_loadgen__http_reply_large),
		cmocka_unit_test(test_loadgen__requests),
		cmocka_unit_test(test_loadgen__url),
	};
	int ret;

	set_error_routine(keep_error);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	strbuf_release(&errors);
	return ret;
}
