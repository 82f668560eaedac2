/*
 * cmd-catalog-review.c: `hotloop catalog review`, the catalog on the lines
 * a diff adds or changes (code-review time), and `catalog hook`, a git
 * pre-commit hook that runs it on what is staged. cmd-catalog.c dispatches
 * here; the engines are lib/catalog-review.c and lib/catalog-hook.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "catalog-hook.h"
#include "catalog-load.h"
#include "catalog-report.h"
#include "catalog-review.h"
#include "json.h"
#include "strbuf.h"

/*
 * The one way review prints its findings: JSON with the document's other
 * keys in 'extra' (consumed), else the formats of lib/catalog-report.c.
 */
static int print_findings(const struct cat_check *r, const struct catalog *cat, enum cat_format format,
			  enum cat_severity min, json_t *extra)
{
	struct cat_report_opts ro = { .min = min, .tool_version = HOTLOOP_VERSION };
	struct strbuf sb = STRBUF_INIT;

	if (format == CAT_FMT_JSON) {
		json_t *doc = cat_check_to_json(r);

		if (extra)
			json_object_update(doc, extra);
		json_decref(extra);
		print_json(doc);
		return 0;
	}
	json_decref(extra);
	if (cat_report_write(r, cat, format, &ro, &sb)) {
		strbuf_release(&sb);
		return -1;
	}
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
	return 0;
}

static void print_error_json(void)
{
	json_t *doc = json_object();

	json_object_set_new(doc, "error", json_text(last_error()));
	print_json(doc);
}

int catalog_review(int argc, char **argv)
{
	enum { OPT_CATALOG = 256, OPT_NO_DEFAULT, OPT_SEVERITY, OPT_FORMAT, OPT_BASE, OPT_CACHED };
	static const struct option opts[] = {
		{ "catalog", required_argument, NULL, OPT_CATALOG },
		{ "no-default", no_argument, NULL, OPT_NO_DEFAULT },
		{ "severity", required_argument, NULL, OPT_SEVERITY },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "cached", no_argument, NULL, OPT_CACHED },
		{ "staged", no_argument, NULL, OPT_CACHED },
		{ NULL, 0, NULL, 0 }
	};
	struct catalog cat = CATALOG_INIT;
	struct review_result res = REVIEW_RESULT_INIT;
	struct review_spec spec = { NULL, NULL, false };
	enum cat_severity min = CAT_SEV_WARNING;
	enum cat_format format = CAT_FMT_TEXT;
	const char **dirs;
	size_t nr_dirs = 0;
	bool defaults = true;
	int c, ret = HL_EXIT_FAILURE;

	dirs = xcalloc(argc + 1, sizeof(*dirs));
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
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
			if (cat_format_parse(optarg, &format)) {
				free(dirs);
				return usage_error("catalog", "invalid --format '%s': use text, json, sarif or github", optarg);
			}
			break;
		case OPT_BASE:
			spec.base = optarg;
			break;
		case OPT_CACHED:
			spec.cached = true;
			break;
		default:
			free(dirs);
			return usage_error("catalog", "invalid option");
		}
	}
	if (optind < argc) {
		free(dirs);
		return usage_error("catalog", "catalog review takes no FILE: it reviews git's diff");
	}
	if (catalog_load_all(&cat, defaults, dirs, nr_dirs) || cat_review(&cat, &spec, &res))
		goto out;
	for (size_t i = 0; i < res.check.nr_notes; i++)
		fprintf(stderr, "hotloop: %s\n", res.check.notes[i]);
	if (format == CAT_FMT_JSON) {
		json_t *extra = json_object();

		json_object_set_new(extra, "base", json_text(res.base));
		json_object_set_new(extra, "base_from", json_string(review_base_how_name(res.how)));
		json_object_set_new(extra, "upstream", res.upstream ? json_text(res.upstream) : json_null());
		json_object_set_new(extra, "cached", json_boolean(spec.cached));
		json_object_set_new(extra, "changed_files", json_integer(res.changed));
		json_object_set_new(extra, "severity", json_string(cat_severity_name(min)));
		json_object_set_new(extra, "entries", json_integer(cat.nr));
		print_findings(&res.check, &cat, format, min, extra);
	} else {
		if (print_findings(&res.check, &cat, format, min, NULL))
			goto out;
		if (format == CAT_FMT_TEXT && (res.check.skipped || res.check.syntax_errors))
			fprintf(stderr, "hotloop: %zu file%s reviewed, %zu skipped, %zu with syntax errors\n",
				res.check.files, res.check.files == 1 ? "" : "s", res.check.skipped,
				res.check.syntax_errors);
	}
	ret = cat_check_count(&res.check, min) ? HL_EXIT_REJECT : HL_EXIT_OK;
out:
	if (ret == HL_EXIT_FAILURE && (format == CAT_FMT_JSON || format == CAT_FMT_SARIF) && *last_error())
		print_error_json();
	review_result_release(&res);
	catalog_release(&cat);
	free(dirs);
	return ret;
}

static void print_hook(const struct cat_hook_status *st)
{
	switch (st->state) {
	case CAT_HOOK_NONE:
		printf("no pre-commit hook in %s\n", st->hooks_dir);
		break;
	case CAT_HOOK_OURS:
		printf("hotloop's pre-commit hook: %s%s\n", st->path,
		       st->chained ? " (it runs the hook that was there before, " CAT_HOOK_CHAINED ", first)" : "");
		break;
	case CAT_HOOK_FOREIGN:
		printf("a pre-commit hook that is not hotloop's: %s\n", st->path);
		break;
	}
}

int catalog_hook(int argc, char **argv)
{
	enum { OPT_SEVERITY = 256 };
	static const struct option opts[] = {
		{ "severity", required_argument, NULL, OPT_SEVERITY },
		{ NULL, 0, NULL, 0 }
	};
	struct cat_hook_status st = CAT_HOOK_STATUS_INIT;
	enum cat_severity min = CAT_SEV_WARNING;
	const char *action;
	int c, ret = HL_EXIT_FAILURE;

	if (argc < 2)
		return usage_error("catalog", "catalog hook needs install, remove or status");
	action = argv[1];
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != OPT_SEVERITY)
			return usage_error("catalog", "invalid option");
		if (cat_severity_parse(optarg, &min))
			return usage_error("catalog", "invalid --severity '%s': use error, warning, info or hint", optarg);
	}
	if (optind < argc)
		return usage_error("catalog", "catalog hook %s takes no argument '%s'", action, argv[optind]);
	if (!strcmp(action, "install")) {
		char *self = realpath("/proc/self/exe", NULL);

		if (!self) {
			error("cannot find hotloop's own path: %s", strerror(errno));
			goto out;
		}
		if (!cat_hook_install(".", self, min, &st)) {
			printf("installed %s: a commit adding a catalog finding at or above %s is stopped%s\n",
			       st.path, cat_severity_name(min),
			       st.chained ? "; the hook that was there runs first (" CAT_HOOK_CHAINED ")" : "");
			ret = HL_EXIT_OK;
		}
		free(self);
	} else if (!strcmp(action, "remove")) {
		bool was = false;

		if (!cat_hook_status(".", &st)) {
			was = st.state == CAT_HOOK_OURS;
			cat_hook_status_release(&st);
			if (!cat_hook_remove(".", &st)) {
				if (!was)
					printf("no hotloop hook in %s: nothing to remove\n", st.hooks_dir);
				else if (st.state == CAT_HOOK_FOREIGN)
					printf("removed hotloop's hook; the one before is back: %s\n", st.path);
				else
					printf("removed %s\n", st.path);
				ret = HL_EXIT_OK;
			}
		}
	} else if (!strcmp(action, "status")) {
		if (!cat_hook_status(".", &st)) {
			print_hook(&st);
			ret = HL_EXIT_OK;
		}
	} else {
		return usage_error("catalog", "unknown catalog hook action '%s': use install, remove or status", action);
	}
out:
	cat_hook_status_release(&st);
	return ret;
}
