/*
 * fuzz-mcp.c: libFuzzer target for what `hotloop mcp` reads from its
 * client: the bounded line reader (a small cap, so overlong lines are
 * reached) and the JSON-RPC dispatch of each line, in a session that runs
 * its tools inline in an empty directory (no project, no commands). Every
 * answer must be one line of JSON-RPC 2.0; anything else aborts.
 * Seeds: tests/data/mcp/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "mcp.h"

static void quiet(const char *prefix, const char *msg)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/fuzz-mcp.XXXXXX";

	set_error_routine(quiet);
	set_warn_routine(quiet);
	if (!mkdtemp(dir) || chdir(dir))
		abort();
	return 0;
}

/* An answer the server may send: a JSON-RPC 2.0 result, error or notification. */
static bool is_message(json_t *msg)
{
	return json_is_object(msg) &&
	       !strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?: "", "2.0") &&
	       (json_object_get(msg, "result") || json_object_get(msg, "error") ||
		json_object_get(msg, "method"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mcp_options o = { .quiet = true };
	struct mcp_reader r;
	struct strbuf line = STRBUF_INIT, out = STRBUF_INIT;
	FILE *f = tmpfile();
	struct mcp_session *s;
	enum mcp_read got;
	size_t pos = 0;

	if (!f)
		abort();
	s = mcp_session_new(&o, fileno(f), false);
	mcp_reader_init(&r, -1, 4096);
	mcp_reader_feed(&r, data, size, true);
	while ((got = mcp_reader_next(&r, &line)) != MCP_READ_EOF) {
		if (got == MCP_READ_TOO_LONG)
			mcp_session_too_long(s, r.cap);
		else if (got == MCP_READ_LINE)
			mcp_session_handle(s, line.buf, line.len);
		else
			abort();	/* no fd: reading cannot fail */
	}
	mcp_session_free(s);
	rewind(f);
	if (strbuf_read_fd(&out, fileno(f), 1 << 26))
		abort();
	fclose(f);
	while (pos < out.len) {
		char *nl = memchr(out.buf + pos, '\n', out.len - pos);
		json_t *msg;

		if (!nl)
			abort();	/* an answer without its line's end */
		msg = json_loadb(out.buf + pos, (size_t)(nl - out.buf - pos), 0, NULL);
		if (!msg || (json_is_array(msg) ? !json_array_size(msg) : !is_message(msg))) {
			fprintf(stderr, "not a JSON-RPC message: %.*s\n", (int)(nl - out.buf - pos), out.buf + pos);
			abort();
		}
		for (size_t i = 0; json_is_array(msg) && i < json_array_size(msg); i++)
			if (!is_message(json_array_get(msg, i))) {
				fprintf(stderr, "not a JSON-RPC message in a batch's answer: %.*s\n",
					(int)(nl - out.buf - pos), out.buf + pos);
				abort();
			}
		json_decref(msg);
		pos = (size_t)(nl - out.buf) + 1;
	}
	mcp_reader_release(&r);
	strbuf_release(&line);
	strbuf_release(&out);
	return 0;
}
