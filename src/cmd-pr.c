/*
 * cmd-pr.c: `hotloop pr`, a loop branch's kept commits as pull requests
 * (lib/pr.c): with [pr] command, that command once per commit on a stacked
 * head branch; without it, format-patch files and the bodies. Options,
 * one engine call, the list of what was written or sent.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "json.h"
#include "pr.h"
#include "project.h"

const char usage_pr[] =
"usage: hotloop pr [--branch B] [--base REF] [--command CMD] [-o DIR] [--dry-run]\n"
"                  [-f CONFIG] [--json]\n"
"\n"
"Turn the kept commits of a loop's branch (those its base does not have)\n"
"into pull requests. Each gets a body: its knowledge base report (verdict,\n"
"measured change and interval), the diff stat, where it stacks. With\n"
"[pr] command (or --command), that command runs once per commit, oldest\n"
"first, through /bin/sh in the project directory, on a local head branch\n"
"hotloop-pr/<date>/<n> made for it, each stacked on the one before; the\n"
"placeholders {title} {body} {branch} {base} {commit} are replaced by\n"
"shell-quoted values. Without a command, `git format-patch` files and the\n"
"bodies are written. Nothing is pushed but by your command.\n"
"\n"
"  --branch B         the loop's branch (default: the newest hotloop/ branch)\n"
"  --base REF         what the first pull request goes into (default: the\n"
"                     branch HEAD is on)\n"
"  --command CMD      instead of [pr] command; \"\" writes patches\n"
"  -o, --output DIR   where the bodies and patches go (new or empty; default:\n"
"                     .hotloop/pr/<branch>/)\n"
"  --dry-run          write the bodies, print the commands, run nothing\n"
"  -f, --config FILE  the hotloop.conf (default: found from here up)\n"
"  --json             what was written and sent, as JSON (docs/pr.md)\n"
"\n"
"Exit status: 0; 1 no such branch, no kept commit, a command that failed\n"
"(those before it stay sent; `hotloop pr` again goes on from it); 2 usage.\n";

static void print_result(const struct pr_result *r)
{
	printf("%s: %zu kept change%s not on %s\n", r->branch, r->nr, r->nr == 1 ? "" : "s", r->base);
	for (size_t i = 0; i < r->nr; i++) {
		const struct pr_item *it = &r->items[i];

		printf("%zu. %.12s %s\n", i + 1, it->commit, it->title);
		printf("   body:  %s\n", it->body);
		if (it->patch)
			printf("   patch: %s\n", it->patch);
		if (it->head)
			printf("   head:  %s (into %s)\n", it->head, it->base);
		if (it->skipped)
			printf("   sent by an earlier `hotloop pr`: skipped\n");
		else if (r->dry_run && it->command)
			printf("   would run: %s\n", it->command);
		else if (it->output && *it->output)
			printf("   %s%s", it->output, it->output[strlen(it->output) - 1] == '\n' ? "" : "\n");
	}
	if (!r->command)
		printf("no [pr] command: the patches and bodies are in %s\n"
		       "(git am them, or set [pr] command to open pull requests: docs/pr.md)\n", r->dir);
	else if (!r->dry_run)
		printf("%zu sent\n", r->sent);
}

enum { OPT_BRANCH = 256, OPT_BASE, OPT_COMMAND, OPT_DRY_RUN, OPT_JSON };

int cmd_pr(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "branch", required_argument, NULL, OPT_BRANCH },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "command", required_argument, NULL, OPT_COMMAND },
		{ "output", required_argument, NULL, 'o' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "config", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct pr_spec spec = { 0 };
	struct project p = PROJECT_INIT;
	struct pr_result r;
	const char *conf_file = NULL;
	bool json = false;
	int c, ret = HL_EXIT_FAILURE;

	pr_result_init(&r);
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_BRANCH:
			spec.branch = optarg;
			break;
		case OPT_BASE:
			spec.base = optarg;
			break;
		case OPT_COMMAND:
			spec.command = optarg;
			break;
		case 'o':
			spec.out_dir = optarg;
			break;
		case OPT_DRY_RUN:
			spec.dry_run = true;
			break;
		case 'f':
			conf_file = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		default:
			return usage_error("pr", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("pr", "unexpected argument '%s'", argv[optind]);
	if (project_open(&p, conf_file, PROJECT_NEED_GIT))
		goto out;
	spec.project = &p;
	cancel_on_interrupt(true);
	ret = pr_run(&spec, &r);
	cancel_on_interrupt(false);
	if (!ret) {
		if (json)
			print_json(pr_result_to_json(&r));
		else
			print_result(&r);
	}
	ret = ret ? HL_EXIT_FAILURE : HL_EXIT_OK;
out:
	pr_result_release(&r);
	project_release(&p);
	return ret;
}
