/*
 * cmd-config.c: `hotloop config [--json] [-f FILE]`: find hotloop.conf (here
 * or in a parent, up to the git top level), validate it and print it
 * normalized, every default filled in. Parsing lives in lib/config.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "builtin.h"
#include "json.h"
#include "project.h"
#include "strbuf.h"

const char usage_config[] =
"usage: hotloop config [--json] [-f FILE]\n"
"\n"
"Validate hotloop.conf and print it normalized: every section and key, with\n"
"the defaults filled in. Without -f the file is looked for in the current\n"
"directory and its parents, up to the git top level. Every error is reported\n"
"with its line, not only the first.\n"
"\n"
"    -f, --file FILE   read FILE instead of looking for hotloop.conf\n"
"    --json            one JSON document (keys in docs/config.md)\n"
"\n"
"Exit status: 0 when the config is valid, 1 when it is not or is missing,\n"
"2 on a usage error.\n";

int cmd_config(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct project p;
	char *path = NULL;
	bool json = false;
	int opt, ret = HL_EXIT_FAILURE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "f:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			free(path);
			path = xstrdup(optarg);
			break;
		case 'j':
			json = true;
			break;
		default:
			free(path);
			return usage_error("config", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		free(path);
		return usage_error("config", "unexpected argument '%s'", argv[optind]);
	}
	if (project_open(&p, path, 0) < 0)
		goto out;
	if (json) {
		json_t *doc = config_to_json(&p.cf);

		/* messages name the file as given; the document says which file it was */
		json_object_set_new(doc, "file", json_text(p.conf_path));
		print_json(doc);
	} else {
		struct strbuf sb = STRBUF_INIT;

		config_format(&p.cf, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	ret = HL_EXIT_OK;
out:
	project_release(&p);
	free(path);
	return ret;
}
