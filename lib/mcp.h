/*
 * mcp.h: the Model Context Protocol server of `hotloop mcp`: newline-
 * delimited JSON-RPC 2.0 on two file descriptors, the session with its
 * negotiated protocol version, and the dispatch of tools and resources onto
 * the engines (lib/mcp-tools.c). One thread reads requests; a worker runs
 * every call into lib/, so a notifications/cancelled can stop a long tool.
 * A struct mcp_session owns everything in it until mcp_session_free(); the
 * options stay the caller's.
 */
#ifndef HOTLOOP_MCP_H
#define HOTLOOP_MCP_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct json_t;
struct observer;

/* The longest request line read; a longer one is answered with a parse error and skipped. */
#define MCP_LINE_MAX (4u << 20)

/* The protocol versions spoken, newest first. */
extern const char *const mcp_versions[];
extern const size_t mcp_nr_versions;

/*
 * The version to answer an initialize that asked for 'requested': the
 * same when it is one of mcp_versions[], else the newest (NULL or not a
 * version at all included), as the lifecycle's negotiation says.
 */
const char *mcp_negotiate_version(const char *requested);

/* ---- framing ---- */

struct mcp_reader {
	int fd;
	size_t cap;		/* the longest line taken */
	struct strbuf buf;	/* bytes read and not yet handed out */
	size_t pos;		/* where the next line starts in buf */
	bool skipping;		/* inside an overlong line: drop bytes up to its newline */
	bool eof;
};

enum mcp_read {
	MCP_READ_EOF = 0,	/* no more lines (a last line without a newline was given before) */
	MCP_READ_LINE = 1,	/* a line, without its newline (and a CR before it) */
	MCP_READ_TOO_LONG = 2,	/* a line longer than cap was skipped */
	MCP_READ_ERROR = -1,	/* read() failed: errno */
};

void mcp_reader_init(struct mcp_reader *r, int fd, size_t cap);
void mcp_reader_release(struct mcp_reader *r);
/* The next line into 'line' (its contents replaced); blank lines are skipped. */
enum mcp_read mcp_reader_next(struct mcp_reader *r, struct strbuf *line);
/* Feed bytes instead of reading fd (for tests and fuzzing: fd -1); 'eof' ends the stream. */
void mcp_reader_feed(struct mcp_reader *r, const void *data, size_t len, bool eof);

/* ---- the session ---- */

struct mcp_options {
	const char *conf_file;		/* -f: the hotloop.conf (NULL: found from here up) */
	const char *db;			/* --db: the store loop_status and the loop resource read */
	const char *const *roots;	/* --root: directories besides the project's paths may be in */
	size_t nr_roots;
	bool allow_commands;		/* tools may run commands that are not configured workloads */
	bool quiet;			/* errors only in the answers, not on stderr too (fuzzing) */
};

/* JSON-RPC's and MCP's error codes. */
enum {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
	MCP_RESOURCE_NOT_FOUND = -32002,
};

struct mcp_session;

/*
 * A session writing its messages, one line each, to out_fd. 'threaded':
 * tools and resources run on a worker thread (mcp_serve()); otherwise
 * mcp_session_handle() runs them before it returns (tests, fuzzing).
 */
struct mcp_session *mcp_session_new(const struct mcp_options *o, int out_fd, bool threaded);
/* Stop the worker (cancelling what runs), then free. */
void mcp_session_free(struct mcp_session *s);

/* Handle one message (a line without its newline): answers are written to out_fd. */
void mcp_session_handle(struct mcp_session *s, const char *line, size_t len);
/* The answer to a line that was too long: a parse error. */
void mcp_session_too_long(struct mcp_session *s, size_t cap);
/* The negotiated version, or NULL before initialize. */
const char *mcp_session_version(const struct mcp_session *s);

/*
 * Serve until in_fd ends: read lines, answer them; at the end the tool
 * running is cancelled and waited for. 0, or -1 with an error when
 * reading or writing failed.
 */
int mcp_serve(const struct mcp_options *o, int in_fd, int out_fd);

/*
 * Take standard input and output for the protocol: the two descriptors
 * returned (close-on-exec) carry it, fd 0 becomes /dev/null and fd 1 a
 * copy of fd 2, so no child process (a build, a workload, perf) and no
 * stray printf can write into the stream. 0, or -1 with an error.
 */
int mcp_take_stdio(int *in_fd, int *out_fd);

/* ---- for lib/mcp-tools.c ---- */

/* What a tool or a resource read gets from the session while it runs. */
struct mcp_call {
	const struct mcp_options *opts;
	const struct observer *obs;	/* progress notifications when the client asked for them */
	struct strbuf warnings;		/* warnings lib/ gave while it ran, one a line */
};

struct mcp_tool {
	const char *name, *title, *description;
	const struct mcp_param *params;		/* ends with a NULL name */
	const struct mcp_prop *output;		/* the top-level keys of structuredContent */
	bool long_running;			/* runs workloads: progress and cancellation matter */
	/*
	 * 0 with *doc (structuredContent, a JSON object) and 'text' (its
	 * rendering for people), or -1 with an error. args were checked
	 * against params.
	 */
	int (*fn)(struct mcp_call *c, struct json_t *args, struct json_t **doc, struct strbuf *text);
};

enum mcp_type { MCP_T_STRING, MCP_T_INTEGER, MCP_T_NUMBER, MCP_T_BOOLEAN, MCP_T_STRINGS,
		MCP_T_INTEGERS, MCP_T_OBJECT, MCP_T_ARRAY, MCP_T_ANY };

struct mcp_param {
	const char *name;
	enum mcp_type type;
	const char *choices;		/* "a|b|c" for a string; NULL: any */
	double min, max;		/* for numbers when max > min */
	bool required;
	const char *description;
};

struct mcp_prop {
	const char *name;
	enum mcp_type type;
	bool nullable;
	bool required;
};

extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_nr_tools;

const struct mcp_tool *mcp_find_tool(const char *name);
/* The tool's entry of tools/list: name, title, description, inputSchema, outputSchema. */
struct json_t *mcp_tool_json(const struct mcp_tool *t);
/* Check args against t's params: 0, or -1 with an error saying which argument is wrong. */
int mcp_check_args(const struct mcp_tool *t, struct json_t *args);

/* resources/list's resources and resourceTemplates. */
struct json_t *mcp_resources_list(struct mcp_call *c);
struct json_t *mcp_resource_templates(void);
/*
 * resources/read of 'uri': 0 and *contents (the array of the result), or
 * -1 with an error; *not_found tells an unknown URI from a failure.
 */
int mcp_resource_read(struct mcp_call *c, const char *uri, struct json_t **contents, bool *not_found);

#endif
