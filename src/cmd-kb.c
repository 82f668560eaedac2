/*
 * cmd-kb.c: `hotloop kb list|show|search`, the knowledge base of attempts
 * read back for people: which directory it is (--dir, [project] kb of
 * hotloop.conf, ./kb), one line per attempt, one report, or the attempts
 * matching words or a function. lib/kb.c reads and writes the entries.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "json.h"
#include "project.h"
#include "kb.h"
#include "strbuf.h"

const char usage_kb[] =
"usage: hotloop kb list [--function FN] [--json] [--dir KB]\n"
"   or: hotloop kb show SLUG [--diff] [--json] [--dir KB]\n"
"   or: hotloop kb search WORDS... [--function FN] [--json] [--dir KB]\n"
"\n"
"The knowledge base: every attempt the improve loop made, kept or not, as a\n"
"directory per attempt (report.md, diff.md) under kb/, with kb/index.md\n"
"listing them newest first. The format is in docs/kb.md.\n"
"\n"
"  list               one line per attempt, newest first: date, verdict,\n"
"                     function, change, slug\n"
"  show SLUG          the attempt's report.md; SLUG may leave out the date\n"
"                     when that still names one attempt\n"
"  search WORDS...    the attempts whose title, slug, function, hypothesis\n"
"                     or reasons hold every word (in any case)\n"
"\n"
"  --function FN      only the attempts on function FN (its exact name)\n"
"  --diff             show the diff after the report\n"
"  --json             one JSON document (docs/kb.md)\n"
"  --dir KB           the knowledge base directory; default: [project] kb of\n"
"                     the hotloop.conf found from here up, else ./kb\n"
"  -f, --config FILE  the hotloop.conf to take [project] kb from\n"
"\n"
"Exit status: 0 done (no attempts yet included), 1 an unknown SLUG or\n"
"another error, 2 usage.\n";

enum { OPT_FUNCTION = 256, OPT_DIFF, OPT_JSON, OPT_DIR };

struct kb_opts {
	const char *function;
	const char *dir;
	const char *conf_file;
	bool diff, json;
};

/* The knowledge base directory to read (caller frees), or NULL after an error. */
static char *find_dir(const struct kb_opts *o)
{
	struct project p;
	char *dir = NULL;

	if (o->dir)
		return xstrdup(o->dir);
	if (!project_open(&p, o->conf_file, PROJECT_CONFIG_OPTIONAL))
		dir = p.conf_path ? project_kb_dir(&p) : xstrdup("kb");
	project_release(&p);
	return dir;
}

static void pad(struct strbuf *sb, const char *s, size_t width)
{
	size_t n = utf8_strlen(s);

	strbuf_addstr(sb, s);
	strbuf_addchars(sb, ' ', width > n ? width - n + 2 : 2);
}

/* One line per entry: date, verdict, function, change, slug, in columns. */
static void print_lines(const struct kb_entry *const *e, size_t nr)
{
	struct strbuf sb = STRBUF_INIT, day = STRBUF_INIT;
	size_t wv = 7, wf = 8, wc = 6;

	for (size_t i = 0; i < nr; i++) {
		size_t v = utf8_strlen(e[i]->verdict ? verdict_kind_name(e[i]->verdict) : "-");
		size_t f = utf8_strlen(e[i]->function ? e[i]->function : "-");
		size_t c = utf8_strlen(e[i]->change ? e[i]->change : "-");

		wv = v > wv ? v : wv;
		wf = f > wf ? (f > 40 ? 40 : f) : wf;
		wc = c > wc ? (c > 48 ? 48 : c) : wc;
	}
	strbuf_addstr(&sb, "date        ");
	pad(&sb, "verdict", wv);
	pad(&sb, "function", wf);
	pad(&sb, "change", wc);
	strbuf_addstr(&sb, "slug\n");
	for (size_t i = 0; i < nr; i++) {
		strbuf_reset(&day);
		kb_entry_day(e[i], &day);
		pad(&sb, day.buf, 10);
		pad(&sb, e[i]->verdict ? verdict_kind_name(e[i]->verdict) : "-", wv);
		pad(&sb, e[i]->function ? e[i]->function : "-", wf);
		pad(&sb, e[i]->change ? e[i]->change : "-", wc);
		strbuf_addf(&sb, "%s\n", e[i]->slug);
	}
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
	strbuf_release(&day);
}

static json_t *entries_json(const struct kb *kb, const struct kb_entry *const *e, size_t nr)
{
	json_t *doc = json_object(), *a = json_array();

	json_object_set_new(doc, "kb", json_text(kb->dir));
	for (size_t i = 0; i < nr; i++)
		json_array_append_new(a, kb_entry_to_json(e[i], NULL));
	json_object_set_new(doc, "attempts", a);
	return doc;
}

/* list and search: the entries on o->function holding every word. */
static int list(const struct kb *kb, const struct kb_opts *o, const char *const *words, size_t nr_words)
{
	const struct kb_entry **found = xcalloc(kb->nr ? kb->nr : 1, sizeof(*found));
	size_t nr = kb_find(kb, o->function, words, nr_words, found, kb->nr);

	if (o->json) {
		json_t *doc = entries_json(kb, found, nr);

		if (nr_words || o->function) {
			json_t *w = json_array();

			for (size_t i = 0; i < nr_words; i++)
				json_array_append_new(w, json_text(words[i]));
			json_object_set_new(doc, "query", json_pack("{s:o, s:o}", "words", w, "function",
								    json_text(o->function)));
		}
		print_json(doc);
	} else if (!kb->nr) {
		printf("no attempts yet in '%s'\n", kb->dir);
	} else if (!nr) {
		printf("no attempt in '%s' matches\n", kb->dir);
	} else {
		print_lines(found, nr);
	}
	free(found);
	return HL_EXIT_OK;
}

static int unknown_slug(const struct kb *kb, const char *slug)
{
	const struct kb_entry *near[5];
	size_t n = kb_suggest(kb, slug, near, ARRAY_SIZE(near)), prefixed = 0, len = strlen(slug);

	for (size_t i = 0; i < kb->nr; i++)
		prefixed += !strncmp(kb->entries[i].slug, slug, len) && kb->entries[i].slug[len] == '-';
	if (prefixed > 1)
		error("'%s' names %zu attempts in '%s': give the whole slug", slug, prefixed, kb->dir);
	else
		error("no attempt '%s' in '%s'%s", slug, kb->dir, kb->nr ? "" : " (no attempts yet)");
	if (n)
		fprintf(stderr, "\nthe most similar %s\n", n == 1 ? "is" : "are");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "\t%s\n", near[i]->slug);
	return HL_EXIT_FAILURE;
}

static int show(const struct kb *kb, const struct kb_opts *o, const char *slug)
{
	const struct kb_entry *e = kb_lookup(kb, slug);
	struct strbuf report = STRBUF_INIT, diff = STRBUF_INIT;
	char *path;
	int ret = HL_EXIT_FAILURE;

	if (!e)
		return unknown_slug(kb, slug);
	if (o->json) {
		if (o->diff && kb_read_diff(e, &diff))
			goto out;
		print_json(kb_entry_to_json(e, o->diff ? diff.buf : NULL));
		ret = HL_EXIT_OK;
		goto out;
	}
	path = xstrfmt("%s/report.md", e->dir);
	if (!read_file(&report, path, KB_REPORT_MAX)) {
		fwrite(report.buf, 1, report.len, stdout);
		ret = HL_EXIT_OK;
	}
	free(path);
	if (ret || !o->diff)
		goto out;
	path = xstrfmt("%s/diff.md", e->dir);
	if (read_file(&diff, path, KB_DIFF_MAX)) {
		ret = HL_EXIT_FAILURE;
	} else {
		if (report.len && report.buf[report.len - 1] != '\n')
			putchar('\n');
		putchar('\n');
		fwrite(diff.buf, 1, diff.len, stdout);
	}
	free(path);
out:
	strbuf_release(&report);
	strbuf_release(&diff);
	return ret;
}

int cmd_kb(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "function", required_argument, NULL, OPT_FUNCTION },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "config", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const subs[] = { "list", "show", "search" };
	struct kb_opts o = { 0 };
	struct kb kb = KB_INIT;
	const char *sub;
	char *dir = NULL;
	int c, ret = HL_EXIT_USAGE;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_FUNCTION:
			o.function = optarg;
			break;
		case OPT_DIFF:
			o.diff = true;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_DIR:
			o.dir = optarg;
			break;
		case 'f':
			o.conf_file = optarg;
			break;
		case ':':
			return usage_error("kb", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("kb", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("kb", "no subcommand: expected list, show or search");
	sub = argv[optind++];
	if (!strcmp(sub, "list") && optind < argc)
		return usage_error("kb", "unexpected argument '%s' to list", argv[optind]);
	if (!strcmp(sub, "show") && argc - optind != 1)
		return usage_error("kb", "show takes one SLUG");
	if (!strcmp(sub, "search") && optind >= argc && !o.function)
		return usage_error("kb", "search needs WORDS or --function");
	if (o.diff && strcmp(sub, "show"))
		return usage_error("kb", "--diff goes with show");
	if (strcmp(sub, "list") && strcmp(sub, "show") && strcmp(sub, "search")) {
		size_t best = 0;

		for (size_t i = 1; i < ARRAY_SIZE(subs); i++)
			if (edit_distance(sub, subs[i]) < edit_distance(sub, subs[best]))
				best = i;
		if (edit_distance(sub, subs[best]) <= 2)
			return usage_error("kb", "unknown subcommand '%s' (did you mean '%s'?)", sub, subs[best]);
		return usage_error("kb", "unknown subcommand '%s': expected list, show or search", sub);
	}

	ret = HL_EXIT_FAILURE;
	if (!(dir = find_dir(&o)) || kb_load(dir, &kb))
		goto out;
	if (!strcmp(sub, "show"))
		ret = show(&kb, &o, argv[optind]);
	else
		ret = list(&kb, &o, (const char *const *)argv + optind, (size_t)(argc - optind));
out:
	kb_release(&kb);
	free(dir);
	return ret;
}
