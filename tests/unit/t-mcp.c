/*
 * t-mcp.c: unit tests for mcp.c and mcp-tools.c: the line reader and its
 * cap, version negotiation, the JSON-RPC answers to bad and early
 * requests (cases as a table), the tool table's schemas and the checking
 * of arguments against them, and lib/'s messages in tool errors.
 */
#include <fcntl.h>
#include <unistd.h>

#include <jansson.h>

#include "test-helpers.h"
#include "mcp.h"
#include "strbuf.h"

static void test_mcp__versions(void **state)
{
	assert_string_equal(mcp_negotiate_version("2025-11-25"), "2025-11-25");
	assert_string_equal(mcp_negotiate_version("2025-06-18"), "2025-06-18");
	assert_string_equal(mcp_negotiate_version("2025-03-26"), "2025-03-26");
	/* never an echo of a version we do not speak: the newest instead */
	assert_string_equal(mcp_negotiate_version("2024-11-05"), "2025-11-25");
	assert_string_equal(mcp_negotiate_version("2099-01-01"), "2025-11-25");
	assert_string_equal(mcp_negotiate_version(""), "2025-11-25");
	assert_string_equal(mcp_negotiate_version(NULL), "2025-11-25");
}

static void test_mcp__reader_lines(void **state)
{
	struct mcp_reader r;
	struct strbuf line = STRBUF_INIT;
	static const char in[] = "{\"a\":1}\n\n  \r\n{\"b\":2}\r\nlast";

	mcp_reader_init(&r, -1, 100);
	mcp_reader_feed(&r, in, sizeof(in) - 1, true);
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_LINE);
	assert_string_equal(line.buf, "{\"a\":1}");
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_LINE);
	assert_string_equal(line.buf, "{\"b\":2}");	/* CR LF taken as the end */
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_LINE);
	assert_string_equal(line.buf, "last");	/* no newline at the end */
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_EOF);
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_EOF);
	mcp_reader_release(&r);
	strbuf_release(&line);
}

static void test_mcp__reader_cap(void **state)
{
	struct mcp_reader r;
	struct strbuf line = STRBUF_INIT;
	int p[2];

	/* through a pipe, in pieces: an overlong line is skipped up to its newline */
	assert_int_equal(pipe(p), 0);
	mcp_reader_init(&r, p[0], 8);
	assert_int_equal(write(p[1], "01234567", 8), 8);
	assert_int_equal(write(p[1], "89abc", 5), 5);
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_TOO_LONG);
	assert_int_equal(write(p[1], "defgh\nok\n12345678\n", 18), 18);
	close(p[1]);
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_LINE);
	assert_string_equal(line.buf, "ok");
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_LINE);
	assert_string_equal(line.buf, "12345678");	/* exactly the cap is fine */
	assert_int_equal(mcp_reader_next(&r, &line), MCP_READ_EOF);
	mcp_reader_release(&r);
	close(p[0]);
	strbuf_release(&line);
}

/* ---- the session, in a directory of its own (no project) ---- */

static char scratch[] = "/tmp/t-mcp.XXXXXX";
static struct mcp_options opts;

static int setup(void **state)
{
	assert_non_null(mkdtemp(scratch));
	assert_int_equal(chdir(scratch), 0);
	return 0;
}

static int teardown(void **state)
{
	assert_int_equal(chdir("/"), 0);
	remove_tree(scratch);
	return 0;
}

/*
 * Send 'lines' (one message each) through a session initialized with
 * protocol 'version' (NULL: not initialized); its answers, one JSON value
 * each (a batch's: an array).
 */
static json_t *exchange_version(const char *version, const char *const *lines, size_t nr)
{
	FILE *out = tmpfile();
	struct mcp_session *s = mcp_session_new(&opts, fileno(out), false);
	struct strbuf sb = STRBUF_INIT;
	json_t *answers = json_array();
	size_t pos = 0;

	if (version) {
		char *init = xstrfmt("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
				     "{\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":"
				     "{\"name\":\"t\",\"version\":\"1\"}}}", version);

		mcp_session_handle(s, init, strlen(init));
		free(init);
	}
	for (size_t i = 0; i < nr; i++)
		mcp_session_handle(s, lines[i], strlen(lines[i]));
	mcp_session_free(s);
	rewind(out);
	assert_int_equal(strbuf_read_fd(&sb, fileno(out), 1 << 24), 0);
	fclose(out);
	while (pos < sb.len) {
		char *nl = memchr(sb.buf + pos, '\n', sb.len - pos);
		json_error_t e;
		json_t *msg;

		assert_non_null(nl);	/* every message ends its line */
		msg = json_loadb(sb.buf + pos, (size_t)(nl - sb.buf - pos), 0, &e);
		assert_non_null(msg);
		for (size_t i = 0; i < (json_is_array(msg) ? json_array_size(msg) : 1); i++) {
			json_t *m = json_is_array(msg) ? json_array_get(msg, i) : msg;

			assert_string_equal(json_string_value(json_object_get(m, "jsonrpc")), "2.0");
		}
		json_array_append_new(answers, msg);
		pos = (size_t)(nl - sb.buf) + 1;
	}
	strbuf_release(&sb);
	if (version)
		json_array_remove(answers, 0);
	return answers;
}

static json_t *exchange(bool initialize, const char *const *lines, size_t nr)
{
	return exchange_version(initialize ? "2025-11-25" : NULL, lines, nr);
}

static json_t *one(bool initialize, const char *line)
{
	json_t *a = exchange(initialize, &line, 1), *m;

	assert_int_equal(json_array_size(a), 1);
	m = json_incref(json_array_get(a, 0));
	json_decref(a);
	return m;
}

struct error_case {
	bool initialized;
	const char *request;
	int code;		/* the error code expected; 0: a result */
	const char *message;	/* a part of the error's message, or of the tool error's text */
};

static const struct error_case error_cases[] = {
	{ false, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", MCP_INVALID_REQUEST, "not initialized" },
	{ false, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 0, NULL },
	{ false, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}", MCP_INVALID_PARAMS, "protocolVersion" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}",
	  MCP_INVALID_REQUEST, "already initialized" },
	{ true, "nonsense", MCP_PARSE_ERROR, "parse error" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", MCP_PARSE_ERROR, "parse error" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", MCP_PARSE_ERROR, "duplicate" },
	{ true, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_INVALID_REQUEST, "only in 2025-03-26" },
	{ false, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_INVALID_REQUEST, "initialize comes alone" },
	{ true, "42", MCP_INVALID_REQUEST, "JSON-RPC object" },
	{ true, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "2.0" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "id" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "id" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCP_INVALID_REQUEST, "method" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1}", MCP_INVALID_REQUEST, "no method" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/frobnicate\"}", MCP_METHOD_NOT_FOUND, "tools/frobnicate" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[]}", MCP_INVALID_PARAMS, "object" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", MCP_INVALID_PARAMS, "name" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
	  MCP_INVALID_PARAMS, "unknown tool 'nope': the tools are record, " },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"bench\",\"arguments\":3}}",
	  MCP_INVALID_PARAMS, "arguments" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{}}", MCP_INVALID_PARAMS, "uri" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///etc/passwd\"}}",
	  MCP_RESOURCE_NOT_FOUND, "hotloop://" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"hotloop://runs/../x/brief\"}}",
	  MCP_RESOURCE_NOT_FOUND, "invalid run id" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"hotloop://runs/latest/brief\"}}",
	  MCP_RESOURCE_NOT_FOUND, "no run yet" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"hotloop://brief/%00\"}}",
	  MCP_RESOURCE_NOT_FOUND, "expected a profile's path" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"hotloop://loop/latest\"}}",
	  MCP_RESOURCE_NOT_FOUND, "no store" },
	/* tool errors are results with isError and lib/'s message */
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"bench\",\"arguments\":{\"runs\":\"x\"}}}",
	  0, "invalid argument 'runs' of tool 'bench': expected an integer" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"bench\",\"arguments\":{\"runs\":0}}}",
	  0, "out of range" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"report\",\"arguments\":{\"sort\":\"up\"}}}",
	  0, "'up' is not one of self|total" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"kb_show\"}}",
	  0, "needs the argument 'slug'" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"kb_show\",\"arguments\":{\"slug\":\"x\"}}}",
	  0, "no attempt 'x'" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"loop_status\",\"arguments\":{\"x\":1}}}",
	  0, "it takes none" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"record\",\"arguments\":{\"command\":[\"true\"]}}}",
	  0, "--allow-commands" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"report\",\"arguments\":{\"profile\":\"/etc/hostname\"}}}",
	  0, "outside the project" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"report\",\"arguments\":{\"profile\":\"../../etc/hostname\"}}}",
	  0, "outside the project" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"report\",\"arguments\":{\"run\":\"a/b\"}}}",
	  0, "invalid run id" },
	{ true, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"bench\"}}",
	  0, "hotloop.conf" },
};

static void test_mcp__errors(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(error_cases); i++) {
		const struct error_case *c = &error_cases[i];
		json_t *m = one(c->initialized, c->request), *err = json_object_get(m, "error");
		const char *text;

		print_message("case %zu: %s\n", i, c->request);
		if (c->code) {
			assert_non_null(err);
			assert_int_equal(json_integer_value(json_object_get(err, "code")), c->code);
			text = json_string_value(json_object_get(err, "message"));
		} else {
			json_t *result = json_object_get(m, "result");

			assert_null(err);
			assert_non_null(result);
			text = json_string_value(json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
			if (c->message) {
				assert_true(json_is_true(json_object_get(result, "isError")));
				assert_null(json_object_get(result, "structuredContent"));
			}
		}
		if (c->message) {
			assert_non_null(text);
			if (!strstr(text, c->message))
				fail_msg("case %zu: '%s' lacks '%s'", i, text, c->message);
		}
		json_decref(m);
	}
}

static void test_mcp__initialize(void **state)
{
	static const char *const lines[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":9}}",
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
	};
	json_t *a = exchange(false, lines, ARRAY_SIZE(lines)), *init, *tools;

	/* notifications and responses get no answer */
	assert_int_equal(json_array_size(a), 2);
	init = json_object_get(json_array_get(a, 0), "result");
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "id")), "a");
	assert_string_equal(json_string_value(json_object_get(init, "protocolVersion")), "2025-03-26");
	assert_string_equal(json_string_value(json_object_get(json_object_get(init, "serverInfo"), "name")), "hotloop");
	assert_true(json_is_object(json_object_get(json_object_get(init, "capabilities"), "tools")));
	tools = json_object_get(json_object_get(json_array_get(a, 1), "result"), "tools");
	assert_int_equal(json_array_size(tools), mcp_nr_tools);
	json_decref(a);
}

static void test_mcp__schemas(void **state)
{
	static const char *const want[] = { "record", "report", "brief", "flame", "asm", "bench", "compare",
					    "scale", "scenario", "kb_search", "kb_show", "loop_status" };

	assert_int_equal(mcp_nr_tools, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct mcp_tool *t = mcp_find_tool(want[i]);
		json_t *j, *in, *out, *v;
		size_t k;

		assert_non_null(t);
		j = mcp_tool_json(t);
		in = json_object_get(j, "inputSchema");
		out = json_object_get(j, "outputSchema");
		assert_string_equal(json_string_value(json_object_get(in, "type")), "object");
		assert_string_equal(json_string_value(json_object_get(out, "type")), "object");
		assert_true(json_is_false(json_object_get(in, "additionalProperties")));
		/* every required key is a property, with a type or any value */
		json_array_foreach(json_object_get(in, "required"), k, v)
			assert_non_null(json_object_get(json_object_get(in, "properties"), json_string_value(v)));
		json_array_foreach(json_object_get(out, "required"), k, v)
			assert_non_null(json_object_get(json_object_get(out, "properties"), json_string_value(v)));
		assert_true(json_array_size(json_object_get(out, "required")) > 0);
		assert_non_null(json_string_value(json_object_get(j, "description")));
		json_decref(j);
	}
	assert_null(mcp_find_tool("nope"));
	assert_null(mcp_find_tool(NULL));
}

static void test_mcp__check_args(void **state)
{
	const struct mcp_tool *t = mcp_find_tool("scale");
	json_t *a;

	a = json_pack("{s:[i, i, i], s:s}", "sizes", 1000, 2000, 4000, "workload", "big");
	assert_int_equal(mcp_check_args(t, a), 0);
	json_decref(a);
	a = json_pack("{s:[i, s]}", "sizes", 1, "two");
	assert_int_equal(mcp_check_args(t, a), -1);
	assert_non_null(strstr(last_error(), "an array of integers"));
	json_decref(a);
	a = json_pack("{s:[s, i]}", "command", "./prog", 3);
	assert_int_equal(mcp_check_args(t, a), -1);
	assert_non_null(strstr(last_error(), "an array of strings"));
	json_decref(a);
	t = mcp_find_tool("asm");
	a = json_pack("{s:s}", "binary", "prog");
	assert_int_equal(mcp_check_args(t, a), -1);
	assert_non_null(strstr(last_error(), "needs the argument 'function'"));
	json_decref(a);
	t = mcp_find_tool("record");
	a = json_pack("{s:b, s:f}", "build", 1, "freq", 99.0);	/* an integer is wanted */
	assert_int_equal(mcp_check_args(t, a), -1);
	json_decref(a);
}

/* Protocol 2025-03-26's batches: one array of answers, none for notifications. */
static void test_mcp__batches(void **state)
{
	static const char *const lines[] = {
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
		" {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
		" 42,"
		" {\"jsonrpc\":\"2.0\",\"id\":\"t\",\"method\":\"tools/list\"},"
		" {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"kb_show\",\"arguments\":{\"slug\":\"no-such-entry\"}}},"
		" {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"no/such\"}]",
		"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]",
		"[]",
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}",
	};
	json_t *a = exchange_version("2025-03-26", lines, ARRAY_SIZE(lines)), *batch, *m;
	size_t i;
	bool seen[5] = { false };

	(void)state;
	/* the batch's array; nothing for the notifications' batch; the empty one's error; the ping */
	assert_int_equal(json_array_size(a), 3);
	batch = json_array_get(a, 0);
	assert_true(json_is_array(batch));
	assert_int_equal(json_array_size(batch), 5);
	json_array_foreach(batch, i, m) {
		json_t *id = json_object_get(m, "id");

		if (json_is_null(id)) {
			assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
					 MCP_INVALID_REQUEST);
			seen[0] = true;
		} else if (json_is_string(id)) {
			assert_non_null(json_object_get(json_object_get(m, "result"), "tools"));
			seen[2] = true;
		} else {
			json_int_t n = json_integer_value(id);

			assert_true(n == 1 || n == 3 || n == 4);
			if (n == 1)
				assert_true(json_is_object(json_object_get(m, "result")));
			if (n == 3)
				assert_true(json_is_true(json_object_get(json_object_get(m, "result"), "isError")));
			if (n == 4)
				assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
						 MCP_METHOD_NOT_FOUND);
			seen[n == 1 ? 1 : n] = true;
		}
	}
	for (i = 0; i < ARRAY_SIZE(seen); i++)
		assert_true(seen[i]);
	m = json_array_get(a, 1);
	assert_true(json_is_object(m));
	assert_true(json_is_null(json_object_get(m, "id")));
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(m, "error"), "message")), "empty"));
	m = json_array_get(a, 2);
	assert_int_equal(json_integer_value(json_object_get(m, "id")), 5);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mcp__versions),
		cmocka_unit_test(test_mcp__reader_lines),
		cmocka_unit_test(test_mcp__reader_cap),
		cmocka_unit_test(test_mcp__errors),
		cmocka_unit_test(test_mcp__initialize),
		cmocka_unit_test(test_mcp__batches),
		cmocka_unit_test(test_mcp__schemas),
		cmocka_unit_test(test_mcp__check_args),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
