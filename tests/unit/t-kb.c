/*
 * t-kb.c: unit tests for kb.c: slugs, an attempt written and read back
 * field by field, same-day collisions, the index regenerated from what is
 * on disk, damaged and hand-written reports, a writer killed mid-entry
 * (its .tmp dir ignored, then cleaned), search, lookup and the JSON.
 */
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "test-helpers.h"
#include "config.h"
#include "kb.h"
#include "strbuf.h"

#define DAY 86400
/* 2026-11-29 14:03:12 UTC (the tests run with TZ=UTC) */
#define WHEN ((time_t)1795960992)

static struct strbuf warnings = STRBUF_INIT;

static void keep_warning(const char *prefix, const char *msg)
{
	strbuf_addf(&warnings, "%s%s\n", prefix, msg);
}

static char *scratch(void)
{
	char tmpl[] = "/tmp/t-kb.XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	return xstrdup(tmpl);
}

static void rm_rf(const char *dir)
{
	char *cmd = xstrfmt("rm -rf '%s'", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void put_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write_full(fd, text, len), 0);
	close(fd);
}

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(read_file(&sb, path, 1 << 20), 0);
	return strbuf_detach(&sb, NULL);
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

static const struct {
	const char *title, *slug;
} slug_cases[] = {
	{ "hash table for find_word", "hash-table-for-find-word" },
	{ "Hash table: find_word()", "hash-table-find-word" },
	{ "  --Don't copy the key!! ", "dont-copy-the-key" },
	{ "Café: größere Schlüssel", "cafe-grossere-schlussel" },
	{ "ÆØÅ × þorn", "aeoa-thorn" },
	{ "日本語のタイトル", "attempt" },
	{ "日本 memo 化", "memo" },
	{ "!!!", "attempt" },
	{ "", "attempt" },
	{ "ABC_def.ghi/v2", "abc-def-ghi-v2" },
	{ "\xff\xfe broken \xc3 utf8", "broken-utf8" },
	/* 48 characters end at a word */
	{ "replace the linear scan of the sorted word array with a binary search",
	  "replace-the-linear-scan-of-the-sorted-word-array" },
	/* cut back to the last word that fits */
	{ "precompute lowercase keys before qsort instead of per comparison call",
	  "precompute-lowercase-keys-before-qsort-instead" },
	/* one word longer than the limit is cut in it */
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
};

static void test_kb__slugs(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(slug_cases); i++) {
		char *s = kb_slug(slug_cases[i].title);

		if (strcmp(s, slug_cases[i].slug))
			fail_msg("title '%s': slug '%s', expected '%s'", slug_cases[i].title, s,
				 slug_cases[i].slug);
		assert_true(strlen(s) <= KB_SLUG_MAX);
		free(s);
	}
	{
		char *s = kb_slug(NULL);

		assert_string_equal(s, "attempt");
		free(s);
	}
}

static const char *const reasons[] = {
	"slower: +3.1% cpu on big [+2.0, +4.2]\n\n```\nbase 1.00 s\ncand 1.03 s\n```",
	"## not a heading\n- not a new reason\n  indented **bold**",
	"#hash and \\#escaped",
	"",
};

static const char diff_text[] =
	"diff --git a/src/words.c b/src/words.c\n"
	"--- a/src/words.c\n"
	"+++ b/src/words.c\n"
	"@@ -10,3 +10,4 @@ find_word\n"
	" int x;\n"
	"-int y;\n"
	"+int y = 0;\n"
	"+--- not a header\n"
	" return x;\n"
	"diff --git a/src/new.h b/src/new.h\n"
	"new file mode 100644\n"
	"--- /dev/null\n"
	"+++ b/src/new.h\n"
	"@@ -0,0 +1 @@\n"
	"+```\n";

static struct kb_attempt rejected(void)
{
	struct kb_attempt a = { 0 };

	a.title = "hash table for find_word";
	a.function = "find_word";
	a.hypothesis = "find_word scans a sorted array: O(log n) per word.\n\n## Verdict\nA hash table is O(1).";
	a.lens = "algorithmic";
	a.agent = "claude -p";
	a.expected_gain_pct = NAN;
	a.round = 3;
	a.verdict = VERDICT_REJECT;
	a.reasons = reasons;
	a.nr_reasons = ARRAY_SIZE(reasons);
	a.results = "| workload | change |\n|---|---|\n| big | +3.1% |\n\nExpected faster; the table misses the cache.";
	a.change = "+3.1% cpu on big [+2.0, +4.2]";
	a.diff = diff_text;
	a.commit = NULL;
	a.when = WHEN;
	return a;
}

static void test_kb__round_trip(void **state)
{
	char *dir = scratch(), *kbd = xstrfmt("%s/kb", dir), *slug = NULL, *slug2 = NULL, *path, *text;
	struct kb_attempt a = rejected(), b = rejected();
	struct strbuf diff = STRBUF_INIT;
	struct kb kb;
	const struct kb_entry *e;

	assert_int_equal(kb_add(kbd, &a, &slug), 0);
	assert_string_equal(slug, "hash-table-for-find-word-29112026");

	b.title = "keep the words in a hash set";
	b.verdict = VERDICT_KEEP;
	b.expected_gain_pct = 20;
	b.commit = "0123456789abcdef0123456789abcdef01234567";
	b.change = "-12.3% cpu on big [-13.1, -11.4]";
	b.when = WHEN + 60;
	b.round = 4;
	b.lens = NULL;
	b.diff = NULL;
	b.nr_reasons = 1;
	assert_int_equal(kb_add(kbd, &b, &slug2), 0);
	assert_string_equal(slug2, "keep-the-words-in-a-hash-set-29112026");

	path = xstrfmt("%s/%s/report.md", kbd, slug);
	text = slurp(path);
	assert_non_null(strstr(text, "# hash table for find_word\n\n- function: find_word\n- verdict: reject\n"
				     "- date: 2026-11-29 14:03:12 +0000\n- round: 3\n- lens: algorithmic\n"
				     "- agent: claude -p\n- change: +3.1% cpu on big [+2.0, +4.2]\n- commit: none\n"));
	assert_non_null(strstr(text, "\n\\## Verdict\n"));	/* escaped in the hypothesis */
	assert_null(strstr(text, "expected gain"));
	free(text);
	free(path);

	assert_int_equal(kb_load(kbd, &kb), 0);
	assert_int_equal(kb.nr, 2);
	e = &kb.entries[1];		/* the older one */
	assert_string_equal(e->slug, slug);
	assert_string_equal(e->title, a.title);
	assert_string_equal(e->function, "find_word");
	assert_string_equal(e->hypothesis, a.hypothesis);
	assert_string_equal(e->lens, "algorithmic");
	assert_string_equal(e->agent, "claude -p");
	assert_true(isnan(e->expected_gain_pct));
	assert_int_equal(e->round, 3);
	assert_int_equal(e->verdict, VERDICT_REJECT);
	assert_int_equal(e->nr_reasons, ARRAY_SIZE(reasons));
	for (size_t i = 0; i < ARRAY_SIZE(reasons); i++)
		assert_string_equal(e->reasons[i], reasons[i]);
	assert_string_equal(e->results, a.results);
	assert_string_equal(e->change, a.change);
	assert_null(e->commit);
	assert_int_equal(e->when, WHEN);
	assert_int_equal(e->utc_offset, 0);
	assert_string_equal(e->what, "hash table for find_word, in `find_word` (lens: algorithmic).\n\n"
				     "Files changed: `src/words.c` (+2 -1), `src/new.h` (+1 -0).");
	assert_int_equal(kb_read_diff(e, &diff), 0);
	assert_string_equal(diff.buf, diff_text);

	e = &kb.entries[0];
	assert_string_equal(e->slug, slug2);
	assert_int_equal(e->verdict, VERDICT_KEEP);
	assert_true(e->expected_gain_pct == 20);
	assert_string_equal(e->commit, b.commit);
	assert_null(e->lens);
	assert_int_equal(e->nr_reasons, 1);
	assert_string_equal(e->what, "keep the words in a hash set, in `find_word`.\n\nNo files changed.");
	strbuf_reset(&diff);
	assert_int_equal(kb_read_diff(e, &diff), 0);
	assert_int_equal(diff.len, 0);
	kb_release(&kb);

	/* a local time zone: the date keeps its offset, the directory its local day */
	setenv("TZ", "UTC-10", 1);
	tzset();
	b.when = WHEN + 11 * 3600;	/* 2026-11-30 11:03:12 +1000 */
	free(slug2);
	assert_int_equal(kb_add(kbd, &b, &slug2), 0);
	assert_string_equal(slug2, "keep-the-words-in-a-hash-set-30112026");
	path = xstrfmt("%s/%s/report.md", kbd, slug2);
	text = slurp(path);
	assert_non_null(strstr(text, "- date: 2026-11-30 11:03:12 +1000\n"));
	assert_non_null(strstr(text, "- expected gain: 20%\n"));
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(kb_load(kbd, &kb), 0);
	assert_int_equal(kb.nr, 3);
	assert_string_equal(kb.entries[0].slug, slug2);
	assert_int_equal(kb.entries[0].when, WHEN + 11 * 3600);
	assert_int_equal(kb.entries[0].utc_offset, 36000);
	kb_release(&kb);

	free(text);
	free(path);
	strbuf_release(&diff);
	free(slug);
	free(slug2);
	rm_rf(dir);
	free(kbd);
	free(dir);
}

static void test_kb__collisions(void **state)
{
	char *dir = scratch(), *slugs[4];
	struct kb_attempt a = rejected();
	struct kb kb;

	for (int i = 0; i < 3; i++) {
		a.when = WHEN + i;
		assert_int_equal(kb_add(dir, &a, &slugs[i]), 0);
	}
	a.when = WHEN + DAY;
	assert_int_equal(kb_add(dir, &a, &slugs[3]), 0);
	assert_string_equal(slugs[0], "hash-table-for-find-word-29112026");
	assert_string_equal(slugs[1], "hash-table-for-find-word-29112026-2");
	assert_string_equal(slugs[2], "hash-table-for-find-word-29112026-3");
	assert_string_equal(slugs[3], "hash-table-for-find-word-30112026");
	assert_int_equal(kb_load(dir, &kb), 0);
	assert_int_equal(kb.nr, 4);
	for (int i = 0; i < 4; i++)
		assert_string_equal(kb.entries[i].slug, slugs[3 - i]);	/* newest first */
	kb_release(&kb);
	for (int i = 0; i < 4; i++)
		free(slugs[i]);
	rm_rf(dir);
	free(dir);
}

static void test_kb__index(void **state)
{
	char *dir = scratch(), *index = xstrfmt("%s/index.md", dir), *text, *slug, *gone;
	struct kb_attempt a = rejected();
	struct strbuf sb = STRBUF_INIT;
	struct kb kb;

	assert_int_equal(kb_add(dir, &a, &slug), 0);
	a.title = "second try";
	a.when += 10;
	a.nr_reasons = 0;
	a.hypothesis = NULL;
	assert_int_equal(kb_add(dir, &a, NULL), 0);
	text = slurp(index);
	assert_non_null(strstr(text,
		"# Knowledge base: what was tried\n\n2 attempts, newest first: 0 kept, 2 rejected, 0 other.\n\n"
		"- **second-try-29112026** (2026-11-29, round 3): reject `find_word` +3.1% cpu on big [+2.0, +4.2]\n"
		"- **hash-table-for-find-word-29112026** (2026-11-29, round 3): reject `find_word` +3.1% cpu on big "
		"[+2.0, +4.2]\n"
		"  hypothesis: find_word scans a sorted array: O(log n) per word. ## Verdict A hash table is O(1).\n"
		"  reason: slower: +3.1% cpu on big [+2.0, +4.2] ``` base 1.00 s cand 1.03 s ```\n"));
	free(text);

	/* an entry deleted by hand drops out at the next write */
	gone = xstrfmt("%s/%s", dir, slug);
	rm_rf(gone);
	a.title = "third";
	a.verdict = VERDICT_KEEP;
	a.when += 10;
	assert_int_equal(kb_add(dir, &a, NULL), 0);
	text = slurp(index);
	assert_null(strstr(text, "hash-table-for-find-word"));
	assert_non_null(strstr(text, "2 attempts, newest first: 1 kept, 1 rejected, 0 other."));
	assert_true(strstr(text, "**third-29112026**") < strstr(text, "**second-try-29112026**"));
	free(text);

	/* at most N entries, and what was left out */
	assert_int_equal(kb_load(dir, &kb), 0);
	kb_index_text(&kb, 1, &sb);
	assert_non_null(strstr(sb.buf, "**third-29112026**"));
	assert_null(strstr(sb.buf, "**second-try"));
	assert_non_null(strstr(sb.buf, "\n1 older attempt is not shown (`hotloop kb list`).\n"));
	kb_release(&kb);
	strbuf_reset(&sb);
	assert_int_equal(kb_load("/nonexistent/kb", &kb), 0);
	assert_int_equal(kb.nr, 0);
	kb_index_text(&kb, 0, &sb);
	assert_string_equal(sb.buf, "# Knowledge base: what was tried\n\nNo attempts yet.\n");
	kb_release(&kb);

	strbuf_release(&sb);
	free(gone);
	free(slug);
	rm_rf(dir);
	free(index);
	free(dir);
}

static void test_kb__damaged(void **state)
{
	char *dir = scratch(), *p;
	report_fn old = set_warn_routine(keep_warning);
	struct kb_attempt a = rejected();
	struct kb kb;
	const struct kb_entry *e;
	static const char binary[] = "# title\n\0\x01\x02garbage";
	static const char by_hand[] =
		"# Tried by hand\r\n"
		"\r\n"
		"* Function : parse_line\r\n"
		"- date: 2026-13-45\r\n"
		"- round: three\r\n"
		"- Expected_Gain: 12.5 %\r\n"
		"- colour: blue\r\n"
		"\r\n"
		"## verdict\r\n"
		"\r\n"
		"`inconclusive`\r\n"
		"\r\n"
		"- noise \xff too high\r\n";

	assert_int_equal(kb_add(dir, &a, NULL), 0);
	p = xstrfmt("%s/binary-01012026", dir);
	assert_int_equal(mkdir(p, 0777), 0);
	free(p);
	p = xstrfmt("%s/binary-01012026/report.md", dir);
	put_file(p, binary, sizeof(binary) - 1);
	free(p);
	p = xstrfmt("%s/prose-01012026", dir);
	assert_int_equal(mkdir(p, 0777), 0);
	free(p);
	p = xstrfmt("%s/prose-01012026/report.md", dir);
	put_file(p, "just some words\nno structure at all\n", 36);
	free(p);
	p = xstrfmt("%s/empty-dir", dir);
	assert_int_equal(mkdir(p, 0777), 0);
	free(p);
	p = xstrfmt("%s/by-hand-02122026-2", dir);
	assert_int_equal(mkdir(p, 0777), 0);
	free(p);
	p = xstrfmt("%s/by-hand-02122026-2/report.md", dir);
	put_file(p, by_hand, sizeof(by_hand) - 1);
	free(p);
	p = xstrfmt("%s/notes.txt", dir);
	put_file(p, "not an entry", 12);
	free(p);

	strbuf_reset(&warnings);
	assert_int_equal(kb_load(dir, &kb), 0);
	assert_int_equal(kb.nr, 2);
	assert_non_null(strstr(warnings.buf, "binary-01012026/report.md' holds NUL bytes, not a report: skipped"));
	assert_non_null(strstr(warnings.buf, "prose-01012026/report.md' has no title, field or section"));
	assert_non_null(strstr(warnings.buf, "empty-dir' has no report.md: skipped"));
	assert_non_null(strstr(warnings.buf, "by-hand-02122026-2/report.md:4: cannot read the date '2026-13-45'"));
	assert_non_null(strstr(warnings.buf, "by-hand-02122026-2/report.md:5: round 'three' is not"));
	assert_null(strstr(warnings.buf, "notes.txt"));
	e = &kb.entries[0];		/* dated by its slug: 2026-12-02 */
	assert_string_equal(e->slug, "by-hand-02122026-2");
	assert_string_equal(e->title, "Tried by hand");
	assert_string_equal(e->function, "parse_line");
	assert_int_equal(e->verdict, VERDICT_INCONCLUSIVE);
	assert_int_equal(e->round, 0);
	assert_true(e->expected_gain_pct == 12.5);
	assert_int_equal(e->when, WHEN - 14 * 3600 - 3 * 60 - 12 + 3 * DAY);
	assert_int_equal(e->nr_reasons, 1);
	assert_string_equal(e->reasons[0], "noise \xef\xbf\xbd too high");
	assert_null(e->hypothesis);
	assert_null(e->change);
	kb_release(&kb);
	set_warn_routine(old);
	rm_rf(dir);
	free(dir);
}

/* A writer killed mid-entry leaves only its .tmp dir: readers skip it, the next write removes it. */
static void test_kb__killed_writer(void **state)
{
	char *dir = scratch(), *dead, *live, *f, *text;
	struct kb_attempt a = rejected();
	struct kb kb;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);	/* a pid with no process */
	dead = xstrfmt("%s/.tmp-%ld-0", dir, (long)pid);
	live = xstrfmt("%s/.tmp-%ld-99", dir, (long)getpid());
	assert_int_equal(mkdir(dead, 0777), 0);
	assert_int_equal(mkdir(live, 0777), 0);
	f = xstrfmt("%s/report.md", dead);
	put_file(f, "# half writ", 11);
	free(f);
	f = xstrfmt("%s/report.md.tmp.abcdef", dead);
	put_file(f, "# half", 6);
	free(f);

	assert_int_equal(kb_load(dir, &kb), 0);
	assert_int_equal(kb.nr, 0);
	kb_release(&kb);
	assert_int_equal(kb_add(dir, &a, NULL), 0);
	f = xstrfmt("%s/.gitignore", dir);
	text = slurp(f);
	assert_string_equal(text, ".tmp-*\n*.tmp.*\n");
	free(text);
	free(f);
	assert_false(exists(dead));
	assert_true(exists(live));		/* its writer is alive and recent */
	assert_int_equal(kb_load(dir, &kb), 0);
	assert_int_equal(kb.nr, 1);
	kb_release(&kb);
	rm_rf(dir);
	free(dead);
	free(live);
	free(dir);
}

static void test_kb__find(void **state)
{
	char *dir = scratch();
	struct kb_attempt a = rejected();
	const struct kb_entry *out[8];
	const char *words[3];
	struct kb kb;

	assert_int_equal(kb_add(dir, &a, NULL), 0);
	a.title = "memoize the hash of each word";
	a.function = "hash_word";
	a.hypothesis = "the same words are hashed again";
	a.when += 10;
	a.nr_reasons = 0;
	assert_int_equal(kb_add(dir, &a, NULL), 0);
	a.title = "unroll the compare loop";
	a.function = "compare_words";
	a.hypothesis = "branchy inner loop";
	a.verdict = VERDICT_KEEP;
	a.when += 10;
	assert_int_equal(kb_add(dir, &a, NULL), 0);
	assert_int_equal(kb_load(dir, &kb), 0);

	assert_int_equal(kb_find(&kb, NULL, NULL, 0, out, 8), 3);
	assert_int_equal(kb_find(&kb, "find_word", NULL, 0, out, 8), 1);
	assert_string_equal(out[0]->function, "find_word");
	assert_int_equal(kb_find(&kb, "find", NULL, 0, out, 8), 0);		/* exact */
	words[0] = "HASH";
	assert_int_equal(kb_find(&kb, NULL, words, 1, out, 8), 2);
	assert_string_equal(out[0]->function, "hash_word");			/* newest first */
	assert_string_equal(out[1]->function, "find_word");
	words[1] = "cache";	/* only in the results: not searched */
	assert_int_equal(kb_find(&kb, NULL, words, 2, out, 8), 0);
	words[1] = "escaped";	/* in a reason */
	assert_int_equal(kb_find(&kb, NULL, words, 2, out, 8), 1);
	assert_string_equal(out[0]->function, "find_word");
	words[0] = "again";
	assert_int_equal(kb_find(&kb, "hash_word", words, 1, out, 8), 1);
	assert_int_equal(kb_find(&kb, "find_word", words, 1, out, 8), 0);
	assert_int_equal(kb_find(&kb, NULL, NULL, 0, out, 1), 3);		/* counts past max */

	assert_string_equal(kb_lookup(&kb, "unroll-the-compare-loop-29112026")->function, "compare_words");
	assert_string_equal(kb_lookup(&kb, "unroll-the-compare-loop")->function, "compare_words");
	assert_null(kb_lookup(&kb, "unroll-the-comp"));	/* not up to a '-'... */
	assert_string_equal(kb_lookup(&kb, "unroll")->function, "compare_words");	/* ...this is */
	assert_null(kb_lookup(&kb, "nothing"));
	assert_int_equal(kb_suggest(&kb, "unrol-the-compare-loop", out, 3), 1);
	assert_string_equal(out[0]->function, "compare_words");
	assert_int_equal(kb_suggest(&kb, "hash", out, 3), 2);
	assert_int_equal(kb_suggest(&kb, "zzzzzzzz", out, 3), 0);
	kb_release(&kb);
	rm_rf(dir);
	free(dir);
}

static void test_kb__json(void **state)
{
	char *dir = scratch();
	struct kb_attempt a = rejected();
	struct kb kb;
	json_t *o;

	assert_int_equal(kb_add(dir, &a, NULL), 0);
	assert_int_equal(kb_load(dir, &kb), 0);
	o = kb_entry_to_json(&kb.entries[0], "diff text");
	assert_string_equal(json_string_value(json_object_get(o, "slug")), "hash-table-for-find-word-29112026");
	assert_string_equal(json_string_value(json_object_get(o, "date")), "2026-11-29T14:03:12+00:00");
	assert_int_equal(json_integer_value(json_object_get(o, "round")), 3);
	assert_true(json_is_null(json_object_get(o, "expected_gain_pct")));
	assert_true(json_is_null(json_object_get(o, "commit")));
	assert_true(json_is_array(json_object_get(o, "reasons")));
	assert_int_equal(json_array_size(json_object_get(o, "reasons")), ARRAY_SIZE(reasons));
	assert_string_equal(json_string_value(json_object_get(o, "diff")), "diff text");
	assert_true(json_is_string(json_object_get(o, "hypothesis")));
	json_decref(o);
	o = kb_entry_to_json(&kb.entries[0], NULL);
	assert_null(json_object_get(o, "diff"));
	json_decref(o);
	kb_release(&kb);
	rm_rf(dir);
	free(dir);
}

static void test_kb__add_errors(void **state)
{
	char *dir = scratch(), *file = xstrfmt("%s/file", dir), *under = xstrfmt("%s/file/kb", dir);
	report_fn old = set_error_routine(keep_warning);
	struct kb_attempt a = rejected();

	put_file(file, "x", 1);
	strbuf_reset(&warnings);
	a.verdict = VERDICT_NONE;
	assert_int_equal(kb_add(dir, &a, NULL), -1);
	assert_non_null(strstr(warnings.buf, "an attempt without a verdict"));
	a.verdict = VERDICT_KEEP;
	assert_int_equal(kb_add(file, &a, NULL), -1);
	assert_int_equal(kb_add(under, &a, NULL), -1);
	set_error_routine(old);
	rm_rf(dir);
	free(file);
	free(under);
	free(dir);
}

static void test_kb__dir_of_config(void **state)
{
	struct config cf;
	char *d;

	config_init(&cf);
	d = kb_dir_of_config(&cf, "/proj/hotloop.conf");
	assert_string_equal(d, "/proj/kb");
	free(d);
	d = kb_dir_of_config(&cf, "/hotloop.conf");
	assert_string_equal(d, "/kb");
	free(d);
	free(cf.kb);
	cf.kb = xstrdup("/elsewhere/attempts");
	d = kb_dir_of_config(&cf, "/proj/hotloop.conf");
	assert_string_equal(d, "/elsewhere/attempts");
	free(d);
	config_release(&cf);
}

/* Hand-written reports: one row per case, the field checked and its value. */
static const struct {
	const char *text;
	const char *title, *verdict, *hypothesis, *reason0;
	size_t nr_reasons;
} parse_cases[] = {
	{ "# t\n## Verdict\nkeep\n", "t", "keep", NULL, NULL, 0 },
	{ "- verdict: reject\n## Verdict\n**keep**\n", NULL, "reject", NULL, NULL, 0 },
	{ "# t\n## Hypothesis\n\n  spaced  \n\n\n## Other\nignored\n## HYPOTHESIS\nmore\n", "t", NULL,
	  "spaced  \n\n\nmore", NULL, 0 },
	{ "# t\n## Verdict\n- one\ncontinued? no\n- two\n\tcontinued by tab\n", "t", "continued? no", NULL, "one", 2 },
	{ "# t\n## Verdict\n-\n  second line\n", "t", NULL, NULL, "\nsecond line", 1 },
	{ "# t\n## Verdict\n- a\n\n\n  b\n\n", "t", NULL, NULL, "a\n\n\nb", 1 },
	{ "# t\n## Hypothesis\n\\## kept\n\\\\# two\n", "t", NULL, "## kept\n\\# two", NULL, 0 },
	{ "#  \n- lens: x\n", NULL, NULL, NULL, NULL, 0 },
	{ "- function: f\n# late title\n", "late title", NULL, NULL, NULL, 0 },
};

static void test_kb__parse_cases(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(parse_cases); i++) {
		struct kb_entry e;

		assert_int_equal(kb_parse_report(parse_cases[i].text, strlen(parse_cases[i].text), "case", &e), 0);
#define CHECK(f) do { \
		if (parse_cases[i].f ? !e.f || strcmp(e.f, parse_cases[i].f) : !!e.f) \
			fail_msg("case %zu: " #f " '%s'", i, e.f ? e.f : "(null)"); \
	} while (0)
		CHECK(title);
		if (verdict_kind_parse(parse_cases[i].verdict) != (e.verdict ? (int)e.verdict : -1))
			fail_msg("case %zu: verdict '%s'", i, verdict_kind_name(e.verdict));
		CHECK(hypothesis);
#undef CHECK
		assert_int_equal(e.nr_reasons, parse_cases[i].nr_reasons);
		if (parse_cases[i].reason0)
			assert_string_equal(e.reasons[0], parse_cases[i].reason0);
		kb_entry_release(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kb__slugs),
		cmocka_unit_test(test_kb__round_trip),
		cmocka_unit_test(test_kb__collisions),
		cmocka_unit_test(test_kb__index),
		cmocka_unit_test(test_kb__damaged),
		cmocka_unit_test(test_kb__killed_writer),
		cmocka_unit_test(test_kb__find),
		cmocka_unit_test(test_kb__json),
		cmocka_unit_test(test_kb__add_errors),
		cmocka_unit_test(test_kb__dir_of_config),
		cmocka_unit_test(test_kb__parse_cases),
	};
	int ret;

	setenv("TZ", "UTC", 1);
	tzset();
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	strbuf_release(&warnings);
	return ret;
}
