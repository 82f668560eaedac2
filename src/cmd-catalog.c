/*
 * cmd-catalog.c: `hotloop catalog check FILE...` and `catalog scan DIR...`:
 * the pattern catalog's CPU anti-patterns found in source files (check:
 * fast enough for an editor or an agent on every save) or trees. Catalogs:
 * the shipped one, a project's own catalog/, and --catalog DIR.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "builtin.h"
#include "catalog-match.h"
#include "catalog-rank.h"
#include "catalog-report.h"
#include "catalog-rule.h"
#include "json.h"
#include "strbuf.h"

const char usage_catalog[] =
"usage: hotloop catalog check FILE... [--catalog DIR]... [--severity LEVEL]\n"
"                             [--format text|json|sarif|github] [--no-default]\n"
"                             [-j N] [--profile P [--min-share PCT]]\n"
"   or: hotloop catalog scan DIR... [the same options]\n"
"   or: hotloop catalog review [--base REV] [--cached] [the same options]\n"
"   or: hotloop catalog hook install [--severity LEVEL] | remove | status\n"
"   or: hotloop catalog add --from-kb SLUG [-o FILE] [--dir KB] [-f CONFIG]\n"
"\n"
"Find the catalog's CPU anti-patterns in C and C++ source files: strlen\n"
"in a loop condition, allocation per iteration, std::endl in a loop and\n"
"more (docs/catalog.md). The catalogs read: the one shipped with hotloop,\n"
"./catalog/ when it exists, and each --catalog DIR; a later entry with the\n"
"same id replaces an earlier one. Files that cannot be read or parsed are\n"
"counted and noted on stderr; the check goes on. scan checks every C and\n"
"C++ file under each DIR (not dot-directories), in name order.\n"
"review keeps the findings on lines git's diff adds or changes: the work\n"
"tree (--cached: the index) against REV, by default the merge-base of HEAD\n"
"and its upstream, else HEAD. hook puts `review --cached` in git's\n"
"pre-commit hook (a hook already there is chained, not overwritten).\n"
"add drafts an entry (catalog/ID.json) from a kept attempt of the\n"
"knowledge base, or adds the attempt to that entry's confirmations.\n"
"\n"
"  --catalog DIR       also read the entries (*.json) of DIR\n"
"  --no-default        not the shipped catalog nor ./catalog/\n"
"  --severity LEVEL    exit 4 when a finding at or above LEVEL is present:\n"
"                      error, warning (default), info or hint\n"
"  -j, --jobs N        check N files at once (scan: one per CPU, check: 1);\n"
"                      the output is the same whatever N\n"
"  --profile P         rank the findings by a CPU profile (any `hotloop\n"
"                      report` reads): hot functions first, with their\n"
"                      self and total share; no samples last\n"
"  --min-share PCT     with --profile: drop findings in functions below\n"
"                      PCT percent of the total\n"
"  --format FORMAT     findings as FILE:LINE:COL lines (text, the default),\n"
"                      JSON, SARIF 2.1.0 (sarif) or GitHub Actions\n"
"                      annotations (github: ::warning file=...::message)\n"
"  --base REV          review: compare with REV\n"
"  --cached            review: the staged content (--staged too)\n"
"\n"
"Exit status: 0 no finding at or above the severity, 4 some, 1 a catalog\n"
"that does not read, 2 usage.\n";

/* The shipped catalog: $HOTLOOP_CATALOG, else beside the binary or in its source tree */
static char *shipped_catalog(void)
{
	const char *env = getenv("HOTLOOP_CATALOG");
	char *exe, *dir, *found = NULL;
	static const char *const rel[] = { "catalog", "../catalog", "../../catalog", "../share/hotloop/catalog" };
	struct stat st;

	if (env && *env)
		return xstrdup(env);
	if (!(exe = realpath("/proc/self/exe", NULL)))
		return NULL;
	dir = exe;
	*strrchr(dir, '/') = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(*rel) && !found; i++) {
		char *p = xstrfmt("%s/%s", dir, rel[i]);
		char *marker = xstrfmt("%s/strlen-in-loop-condition.json", p);

		if (!stat(marker, &st))
			found = realpath(p, NULL);
		free(marker);
		free(p);
	}
	free(exe);
	return found;
}

static int load(struct catalog *c, const char *dir, struct strbuf *seen)
{
	char *real = realpath(dir, NULL);
	int ret;

	if (real) {
		struct strbuf key = STRBUF_INIT;

		strbuf_addf(&key, "\n%s\n", real);
		free(real);
		if (strstr(seen->buf, key.buf)) {	/* read once */
			strbuf_release(&key);
			return 0;
		}
		strbuf_addstr(seen, key.buf + 1);
		strbuf_release(&key);
	}
	ret = catalog_load_dir(c, dir);
	return ret;
}

static int catalog_check(int argc, char **argv, bool scan)
{
	enum { OPT_CATALOG = 256, OPT_NO_DEFAULT, OPT_SEVERITY, OPT_FORMAT, OPT_PROFILE, OPT_MIN_SHARE };
	static const struct option opts[] = {
		{ "catalog", required_argument, NULL, OPT_CATALOG },
		{ "no-default", no_argument, NULL, OPT_NO_DEFAULT },
		{ "severity", required_argument, NULL, OPT_SEVERITY },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "jobs", required_argument, NULL, 'j' },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "min-share", required_argument, NULL, OPT_MIN_SHARE },
		{ NULL, 0, NULL, 0 }
	};
	struct catalog cat = CATALOG_INIT;
	struct cat_check res = CAT_CHECK_INIT;
	struct strbuf seen = STRBUF_INIT;
	enum cat_severity min = CAT_SEV_WARNING;
	enum cat_format fmt = CAT_FMT_TEXT;
	const char **dirs = NULL;
	size_t nr_dirs = 0;
	bool defaults = true, json = false;
	unsigned jobs = scan ? 0 : 1;
	const char *profile = NULL;
	double min_share = 0;
	int c, ret = HL_EXIT_FAILURE;

	dirs = xcalloc(argc + 1, sizeof(*dirs));
	while ((c = getopt_long(argc, argv, "j:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_CATALOG:
			dirs[nr_dirs++] = optarg;
			break;
		case OPT_NO_DEFAULT:
			defaults = false;
			break;
		case OPT_SEVERITY:
			if (cat_severity_parse(optarg, &min)) {
				free(dirs);
				return usage_error("catalog", "invalid --severity '%s': use error, warning, info or hint", optarg);
			}
			break;
		case OPT_FORMAT:
			if (cat_format_parse(optarg, &fmt)) {
				free(dirs);
				return usage_error("catalog", "invalid --format '%s': use text, json, sarif or github", optarg);
			}
			json = fmt == CAT_FMT_JSON || fmt == CAT_FMT_SARIF;
			break;
		case OPT_PROFILE:
			profile = optarg;
			break;
		case OPT_MIN_SHARE: {
			char *end;

			min_share = strtod(optarg, &end);
			if (end == optarg || (*end && strcmp(end, "%")) || !(min_share >= 0 && min_share <= 100)) {
				free(dirs);
				return usage_error("catalog", "invalid --min-share '%s': give a percentage, 0 to 100", optarg);
			}
			min_share /= 100;
			break;
		}
		case 'j': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*optarg < '1' || *optarg > '9' || *end || n > 256) {
				free(dirs);
				return usage_error("catalog", "invalid -j '%s': give 1 to 256 threads", optarg);
			}
			jobs = (unsigned)n;
			break;
		}
		default:
			free(dirs);
			return usage_error("catalog", "invalid option");
		}
	}
	if (min_share > 0 && !profile) {
		free(dirs);
		return usage_error("catalog", "--min-share needs --profile");
	}
	if (optind >= argc) {
		free(dirs);
		return usage_error("catalog", scan ? "catalog scan needs at least one DIR" :
						     "catalog check needs at least one FILE");
	}
	strbuf_addch(&seen, '\n');
	if (defaults) {
		char *shipped = shipped_catalog();
		struct stat st;

		if (!shipped) {
			error("cannot find hotloop's own catalog: set HOTLOOP_CATALOG to its directory, "
			      "or give --no-default and --catalog DIR");
			goto out;
		}
		if (load(&cat, shipped, &seen)) {
			free(shipped);
			goto out;
		}
		free(shipped);
		if (!stat("catalog", &st) && S_ISDIR(st.st_mode) && load(&cat, "catalog", &seen))
			goto out;
	}
	for (size_t i = 0; i < nr_dirs; i++)
		if (load(&cat, dirs[i], &seen))
			goto out;
	if (!cat.nr) {
		error("the catalog is empty: no *.json entry in the directories given");
		goto out;
	}
	if ((scan ? cat_scan_paths_jobs : cat_check_files_jobs)(&cat, argv + optind, argc - optind, jobs, &res))
		goto out;
	if (profile && cat_check_rank(&res, profile, NULL, min_share))
		goto out;
	for (size_t i = 0; i < res.nr_notes; i++)
		fprintf(stderr, "hotloop: %s\n", res.notes[i]);
	{
		struct cat_report_opts ro = { .min = min, .tool_version = HOTLOOP_VERSION, .profiled = profile };
		struct strbuf sb = STRBUF_INIT;

		if (cat_report_write(&res, &cat, fmt, &ro, &sb)) {
			strbuf_release(&sb);
			goto out;
		}
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
		if (!json && (res.skipped || res.syntax_errors))
			fprintf(stderr, "hotloop: %zu file%s checked, %zu skipped, %zu with syntax errors\n",
				res.files, res.files == 1 ? "" : "s", res.skipped, res.syntax_errors);
	}
	ret = cat_check_count(&res, min) ? HL_EXIT_REJECT : HL_EXIT_OK;
out:
	if (ret == HL_EXIT_FAILURE && json && *last_error()) {	/* errors follow the mode */
		json_t *doc = json_object();

		json_object_set_new(doc, "error", json_text(last_error()));
		print_json(doc);
	}
	cat_check_release(&res);
	catalog_release(&cat);
	strbuf_release(&seen);
	free(dirs);
	return ret;
}

int cmd_catalog(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("catalog", "give a subcommand: check or scan");
	if (!strcmp(argv[1], "check") || !strcmp(argv[1], "scan"))
		return catalog_check(argc - 1, argv + 1, !strcmp(argv[1], "scan"));
	if (!strcmp(argv[1], "review"))
		return catalog_review(argc - 1, argv + 1);
	if (!strcmp(argv[1], "hook"))
		return catalog_hook(argc - 1, argv + 1);
	if (!strcmp(argv[1], "add"))
		return catalog_add(argc - 1, argv + 1);
	return usage_error("catalog", "unknown subcommand '%s': use check, scan, review, hook or add", argv[1]);
}
