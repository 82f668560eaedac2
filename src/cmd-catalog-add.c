/*
 * cmd-catalog-add.c: `hotloop catalog add --from-kb SLUG`: a catalog entry
 * drafted from a kept attempt of the knowledge base, written to the
 * project's catalog/, or a confirmation added to the entry already there.
 * The engine is lib/catalog-draft.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "catalog-draft.h"
#include "git.h"
#include "kb.h"
#include "project.h"
#include "strbuf.h"

/* The knowledge base: --dir, else the project's ([project] kb), else ./kb */
static char *kb_dir(const char *dir, const char *conf_file)
{
	struct project p;
	char *found = NULL;

	if (dir)
		return xstrdup(dir);
	if (!project_open(&p, conf_file, PROJECT_CONFIG_OPTIONAL))
		found = p.conf_path ? project_kb_dir(&p) : xstrdup("kb");
	project_release(&p);
	return found;
}

/* The repository's name: its top level's, else the current directory's */
static char *repo_name(void)
{
	char *top = NULL, *name, *slash;

	if (git_top(".", &top)) {
		clear_last_error();
		top = realpath(".", NULL);
	}
	if (!top)
		return xstrdup("unknown");
	slash = strrchr(top, '/');
	name = xstrdup(slash && slash[1] ? slash + 1 : top);
	free(top);
	return name;
}

int catalog_add(int argc, char **argv)
{
	enum { OPT_FROM_KB = 256, OPT_DIR };
	static const struct option opts[] = {
		{ "from-kb", required_argument, NULL, OPT_FROM_KB },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "config", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	const char *slug = NULL, *dir = NULL, *conf = NULL, *output = NULL;
	struct strbuf text = STRBUF_INIT, rule = STRBUF_INIT, old = STRBUF_INIT;
	struct kb kb = KB_INIT;
	const struct kb_entry *e;
	char *kbd = NULL, *repo = NULL, *id = NULL, *path = NULL;
	struct stat st;
	int c, ret = HL_EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "o:f:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_FROM_KB:
			slug = optarg;
			break;
		case OPT_DIR:
			dir = optarg;
			break;
		case 'f':
			conf = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		default:
			return usage_error("catalog", "invalid option");
		}
	}
	if (!slug)
		return usage_error("catalog", "catalog add needs --from-kb SLUG");
	if (optind < argc)
		return usage_error("catalog", "catalog add takes no argument '%s'", argv[optind]);
	if (!(kbd = kb_dir(dir, conf)) || kb_load(kbd, &kb))
		goto out;
	if (!(e = kb_lookup(&kb, slug))) {
		const struct kb_entry *near[3];
		size_t n = kb_suggest(&kb, slug, near, 3);
		struct strbuf sb = STRBUF_INIT;

		for (size_t i = 0; i < n; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "; the nearest: ", near[i]->slug);
		error("no attempt '%s' in the knowledge base '%s'%s", slug, kbd, sb.buf);
		strbuf_release(&sb);
		goto out;
	}
	{
		struct strbuf diff = STRBUF_INIT;

		if (kb_read_diff(e, &diff)) {
			strbuf_release(&diff);
			goto out;
		}
		repo = repo_name();
		id = cat_draft_id(e->slug);
		path = output ? xstrdup(output) : xstrfmt("catalog/%s.json", id);
		if (!stat(path, &st)) {
			bool added;
			double conf_v;

			if (read_file(&old, path, 1 << 20) ||
			    cat_draft_confirm(path, old.buf, e->slug, repo, &text, &added, &conf_v)) {
				strbuf_release(&diff);
				goto out;
			}
			strbuf_release(&diff);
			if (!added) {
				printf("%s: already confirmed by %s; confidence %.2f\n", path, e->slug, conf_v);
				ret = HL_EXIT_OK;
				goto out;
			}
			if (write_file_atomic(path, text.buf, text.len))
				goto out;
			printf("%s: confirmed by %s (%s); confidence now %.2f\n", path, e->slug, repo, conf_v);
			ret = HL_EXIT_OK;
			goto out;
		}
		if (cat_draft_from_kb(e, diff.len ? diff.buf : NULL, repo, &text, &rule)) {
			strbuf_release(&diff);
			goto out;
		}
		strbuf_release(&diff);
	}
	if (!output && mkdir_p("catalog"))
		goto out;
	if (write_file_atomic(path, text.buf, text.len))
		goto out;
	printf("%s: drafted from %s, rule pattern '%s' (severity hint, confidence %.2f): "
	       "refine the rule, message and severity before relying on it\n",
	       path, e->slug, rule.buf, CAT_DRAFT_CONFIDENCE);
	ret = HL_EXIT_OK;
out:
	kb_release(&kb);
	strbuf_release(&text);
	strbuf_release(&rule);
	strbuf_release(&old);
	free(kbd);
	free(repo);
	free(id);
	free(path);
	return ret;
}
