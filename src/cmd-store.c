/*
 * cmd-store.c: `hotloop store [--json] [--db FILE]`: what the store
 * (.hotloop/hotloop.db, lib/store.c) holds, without sqlite3: its schema
 * version, the rows in each table, and the last loop with its attempts.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "builtin.h"
#include "git.h"
#include "json.h"
#include "store.h"
#include "strbuf.h"

const char usage_store[] =
"usage: hotloop store [--json] [--db FILE]\n"
"\n"
"Summarize hotloop's database, .hotloop/hotloop.db under the git top level,\n"
"where the improve loop records its loops, runs, measurements, attempts and\n"
"activity: the schema version, the rows in each table, and the last loop\n"
"with its attempts. Opening the store creates it when there is none, and\n"
"brings an older schema up to date, as every command that uses it does.\n"
"\n"
"    --db FILE   the store to read instead of .hotloop/hotloop.db\n"
"    --json      one JSON document (keys in docs/store.md)\n"
"\n"
"Exit status: 0, 1 when the store cannot be opened or read (not a hotloop\n"
"store, damaged, or written by a newer hotloop), 2 on a usage error.\n";

/* A time as "2024-05-01 12:00:03 UTC", or "-" for none. */
static const char *utc(double t, char *buf, size_t size)
{
	struct tm tm;
	time_t sec;

	if (!isfinite(t) || t < 0 || t > 253402300799.0)
		return "-";
	sec = (time_t)t;
	if (!gmtime_r(&sec, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
		return "-";
	return buf;
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* The first 12 characters of a commit id, as git abbreviates them. */
static void add_commit(struct strbuf *sb, const char *c)
{
	if (!c)
		strbuf_addstr(sb, "-");
	else
		strbuf_addf(sb, "%.12s", c);
}

static void add_pct(struct strbuf *sb, double v)
{
	if (isfinite(v))
		strbuf_addf(sb, "%+.1f%%", v);
	else
		strbuf_addstr(sb, "-");
}

static void format_attempts(struct strbuf *sb, const struct store_attempt *a, size_t n)
{
	strbuf_addf(sb, "\n%5s  %-12s  %-11s  %7s  %-17s  %s\n", "round", "verdict", "stage",
		    "change", "interval", "function");
	for (size_t i = 0; i < n; i++) {
		struct strbuf pct = STRBUF_INIT, ci = STRBUF_INIT;

		add_pct(&pct, a[i].change_pct);
		if (isfinite(a[i].ci_low_pct) && isfinite(a[i].ci_high_pct)) {
			strbuf_addch(&ci, '[');
			add_pct(&ci, a[i].ci_low_pct);
			strbuf_addstr(&ci, ", ");
			add_pct(&ci, a[i].ci_high_pct);
			strbuf_addch(&ci, ']');
		} else {
			strbuf_addstr(&ci, "-");
		}
		strbuf_addf(sb, "%5" PRId64 "  %-12s  %-11s  %7s  %-17s  %s", a[i].round,
			    or_dash(verdict_kind_names[a[i].verdict]),
			    or_dash(gate_stage_names[a[i].stage]), pct.buf, ci.buf,
			    or_dash(a[i].function));
		if (a[i].lens)
			strbuf_addf(sb, " (%s)", a[i].lens);
		if (a[i].commit_sha) {
			strbuf_addstr(sb, " -> ");
			add_commit(sb, a[i].commit_sha);
		}
		strbuf_addch(sb, '\n');
		for (size_t k = 0; k < a[i].nr_reasons; k++)
			strbuf_addf(sb, "%7s- %s\n", "", a[i].reasons[k]);
		strbuf_release(&pct);
		strbuf_release(&ci);
	}
}

static void format_loop(struct strbuf *sb, const struct store_loop *l,
			const struct store_attempt *a, size_t n)
{
	char t1[64], t2[64];

	strbuf_addf(sb, "\nlast loop %" PRId64 ": %s, started %s", l->id,
		    store_loop_status_name(l->status), utc(l->started_at, t1, sizeof(t1)));
	if (isfinite(l->finished_at))
		strbuf_addf(sb, ", finished %s", utc(l->finished_at, t2, sizeof(t2)));
	strbuf_addf(sb, "\n  repo    %s\n  branch  %s\n  base    ", or_dash(l->repo),
		    or_dash(l->branch));
	add_commit(sb, l->base_commit);
	strbuf_addstr(sb, ", best ");
	add_commit(sb, l->best_commit);
	strbuf_addf(sb, "\n  rounds  %" PRId64 " planned, %zu attempted\n", l->rounds_planned, n);
	if (l->stop_reason)
		strbuf_addf(sb, "  stopped %s\n", l->stop_reason);
	if (n)
		format_attempts(sb, a, n);
	else
		strbuf_addstr(sb, "  no attempts yet\n");
}

static const char *created_note(const struct store *s, bool existed)
{
	if (!existed)
		return "there was no store here: created an empty one";
	if (!store_version_found(s))
		return "the file was empty: created the tables";
	if (store_version_found(s) != store_version(s))
		return "brought up to date";
	return NULL;
}

static int summarize(struct store *s, bool existed, bool json)
{
	struct store_counts c;
	struct store_loop l;
	struct store_attempt *a = NULL;
	size_t n = 0;
	int have, ret = HL_EXIT_FAILURE;
	const char *note = created_note(s, existed);

	if (store_counts(s, &c))
		return HL_EXIT_FAILURE;
	have = store_last_loop(s, &l);
	if (have < 0)
		return HL_EXIT_FAILURE;
	if (have && store_attempts_of_loop(s, l.id, &a, &n))
		goto out;
	if (json) {
		json_t *doc = json_object(), *loop = json_null();

		json_object_set_new(doc, "path", json_text(store_path(s)));
		json_object_set_new(doc, "created", json_boolean(!existed));
		json_object_set_new(doc, "schema", json_integer(store_version(s)));
		json_object_set_new(doc, "schema_found", json_integer(store_version_found(s)));
		json_object_set_new(doc, "counts", store_counts_json(&c));
		if (have) {
			json_t *arr = json_array();

			loop = store_loop_json(&l);
			for (size_t i = 0; i < n; i++)
				json_array_append_new(arr, store_attempt_json(&a[i], false));
			json_object_set_new(loop, "attempts", arr);
		}
		json_object_set_new(doc, "last_loop", loop);
		print_json(doc);
	} else {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "store  %s (schema %d)\n", store_path(s), store_version(s));
		if (note)
			strbuf_addf(&sb, "       %s\n", note);
		strbuf_addf(&sb, "\n%-12s %10s\n", "table", "rows");
		strbuf_addf(&sb, "%-12s %10" PRId64 "\n", "loops", c.loops);
		strbuf_addf(&sb, "%-12s %10" PRId64 "\n", "runs", c.runs);
		strbuf_addf(&sb, "%-12s %10" PRId64 "\n", "measurements", c.measurements);
		strbuf_addf(&sb, "%-12s %10" PRId64 "\n", "attempts", c.attempts);
		strbuf_addf(&sb, "%-12s %10" PRId64 "\n", "activity", c.activity);
		if (have)
			format_loop(&sb, &l, a, n);
		else
			strbuf_addstr(&sb, "\nno loops yet\n");
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	ret = HL_EXIT_OK;
out:
	store_attempts_free(a, n);
	if (have)
		store_loop_release(&l);
	return ret;
}

int cmd_store(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct store *s;
	struct stat st;
	char *path = NULL;
	bool json = false, existed;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			free(path);
			path = xstrdup(optarg);
			break;
		case 'j':
			json = true;
			break;
		default:
			free(path);
			return usage_error("store", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		free(path);
		return usage_error("store", "unexpected argument '%s'", argv[optind]);
	}
	if (!path) {
		char *top = git_find_top(".");

		if (!top) {
			error("not inside a git repository: run hotloop store in one, "
			      "or name the store with --db FILE");
			return HL_EXIT_FAILURE;
		}
		/* .hotloop/ and its .gitignore are made only for a new store */
		path = xstrfmt("%s/%s", top, STORE_FILE);
		if (stat(path, &st)) {
			free(path);
			path = store_repo_path(top);
		}
		free(top);
		if (!path)
			return HL_EXIT_FAILURE;
	}
	existed = !stat(path, &st);
	if (store_open(path, &s)) {
		free(path);
		return HL_EXIT_FAILURE;
	}
	ret = summarize(s, existed, json);
	store_close(s);
	free(path);
	return ret;
}
