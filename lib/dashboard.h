/*
 * dashboard.h: what the dashboard shows, as answers to its API paths
 * (/api/overview, /api/attempts/ID, ...; docs/serve.md): JSON documents
 * from the store, the knowledge base and the scenario runs under the
 * project, and flame graphs drawn from the profiles the loop recorded.
 * `hotloop serve` answers HTTP requests with it (lib/serve.c) and
 * `serve --snapshot` writes its answers to files; neither writes the
 * store or the project. A struct dash owns its paths; a dash_reply owns
 * its body.
 */
#ifndef HOTLOOP_DASHBOARD_H
#define HOTLOOP_DASHBOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

struct store;
struct json_t;
struct dash_cache;

struct dash {
	char *db;		/* the store's file */
	char *top;		/* the project's top level: .hotloop/ and kb/ under it */
	char *state;		/* <top>/.hotloop, its real path (NULL: none at the start) */
	char *kb_dir;		/* the knowledge base */
	bool sanitize;		/* for a snapshot: no absolute paths, user or host names */
	char *user, *host, *home;	/* what sanitizing takes out (NULL: nothing) */
	struct dash_cache *cache;	/* private: the knowledge base as last read */
};

/*
 * A dashboard over the store 'db' (NULL: <top>/.hotloop/hotloop.db) of
 * the project whose top level is 'top', its knowledge base in 'kb_dir'
 * (NULL: <top>/kb). The files need not exist yet.
 */
void dash_init(struct dash *d, const char *top, const char *db, const char *kb_dir);
void dash_release(struct dash *d);

/* The answer to one GET. */
struct dash_reply {
	int status;		/* 200, 400 (a malformed path or query), 404, 500 */
	const char *type;	/* its content type */
	struct strbuf body;
};

#define DASH_JSON "application/json; charset=utf-8"
#define DASH_SVG "image/svg+xml"

/* A request's query parameter 'key' (NULL: absent), from the caller. */
typedef const char *(*dash_param_fn)(void *ctx, const char *key);

/*
 * Answer GET 'path' (decoded, starting "/api/"; no query string) with
 * the store 's' (NULL: there is none yet: the answers are empty).
 * 'param' may be NULL (no query). An error is a JSON {"error": "..."}
 * with its status; the reply is always filled. Thread-safe as long as
 * each thread has its own store connection.
 */
void dash_get(const struct dash *d, struct store *s, const char *path, dash_param_fn param,
	      void *ctx, struct dash_reply *out);
void dash_reply_release(struct dash_reply *r);

/*
 * A stamp of the files the answers read besides the store: the kb
 * directory and the scenario runs' directories (their inode, change
 * time and links). It changes when an entry or a run is added or
 * removed; the server drops the answers it kept when it does.
 */
uint64_t dash_files_stamp(const struct dash *d);

/*
 * The paths a static copy needs: every path dash_get() answers without
 * a query for what the store and the project hold now (overview, lists,
 * each attempt, profile, pair of consecutive profiles, scenario run and
 * kb entry), appended to *paths (the caller frees each and the array).
 */
int dash_snapshot_paths(const struct dash *d, struct store *s, char ***paths, size_t *nr);

/*
 * What a snapshot shows of a text: the project's top level as ".",
 * other absolute paths as ".../<last component>", and the user's and
 * host's names as "user" and "host". Appends to out.
 */
void dash_sanitize_text(const struct dash *d, const char *s, struct strbuf *out);
/* The same in every string of a JSON document, keys included; in place. */
void dash_sanitize_json(const struct dash *d, struct json_t *doc);

#endif
