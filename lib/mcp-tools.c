/*
 * mcp-tools.c: what `hotloop mcp` offers: the tools, each an engine call
 * (record, report, brief, flame, asm, bench, compare, scale, scenario,
 * kb, the store) with its input and output schema from one table, and the
 * resources (runs, their profiles' brief and report, kb entries, the last
 * loop) by URI. Commands other than the configured workloads only with
 * --allow-commands; paths only inside the project and the --root dirs.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "asm.h"
#include "bench.h"
#include "brief.h"
#include "flame.h"
#include "gate.h"
#include "json.h"
#include "kb.h"
#include "mcp.h"
#include "profile-io.h"
#include "project.h"
#include "report.h"
#include "revs.h"
#include "run.h"
#include "runner.h"
#include "scale.h"
#include "scenario.h"
#include "store.h"
#include "util.h"

#define URI_PREFIX "hotloop://"

/* ---- arguments ---- */

static const char *arg_str(json_t *a, const char *k)
{
	return json_string_value(json_object_get(a, k));
}

static long arg_int(json_t *a, const char *k, long def)
{
	json_t *v = json_object_get(a, k);

	return json_is_integer(v) ? (long)json_integer_value(v) : def;
}

static double arg_num(json_t *a, const char *k, double def)
{
	json_t *v = json_object_get(a, k);

	return json_is_number(v) ? json_number_value(v) : def;
}

static bool arg_bool(json_t *a, const char *k, bool def)
{
	json_t *v = json_object_get(a, k);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

/* A string array as a NULL-terminated vector of borrowed strings (caller frees the vector), or NULL. */
static char **arg_argv(json_t *a, const char *k, size_t *nr)
{
	json_t *v = json_object_get(a, k);
	char **argv;

	*nr = json_array_size(v);
	if (!*nr)
		return NULL;
	argv = xcalloc(*nr + 1, sizeof(*argv));
	for (size_t i = 0; i < *nr; i++)
		argv[i] = (char *)json_string_value(json_array_get(v, i));
	return argv;
}

static const char *type_name(enum mcp_type t)
{
	static const char *const names[] = { "string", "integer", "number", "boolean", "array",
					     "array", "object", "array", NULL };
	return names[t];
}

static bool type_ok(enum mcp_type t, json_t *v)
{
	size_t i;
	json_t *e;

	switch (t) {
	case MCP_T_STRING:
		return json_is_string(v);
	case MCP_T_INTEGER:
		return json_is_integer(v);
	case MCP_T_NUMBER:
		return json_is_number(v);
	case MCP_T_BOOLEAN:
		return json_is_boolean(v);
	case MCP_T_STRINGS:
	case MCP_T_INTEGERS:
		if (!json_is_array(v))
			return false;
		json_array_foreach(v, i, e)
			if (t == MCP_T_STRINGS ? !json_is_string(e) : !json_is_integer(e))
				return false;
		return true;
	case MCP_T_OBJECT:
		return json_is_object(v);
	case MCP_T_ARRAY:
		return json_is_array(v);
	case MCP_T_ANY:
		return true;
	}
	return false;
}

static bool in_choices(const char *choices, const char *s)
{
	size_t len = strlen(s);

	for (const char *p = choices; *p;) {
		const char *bar = strchrnul(p, '|');

		if ((size_t)(bar - p) == len && !strncmp(p, s, len))
			return true;
		p = *bar ? bar + 1 : bar;
	}
	return false;
}

int mcp_check_args(const struct mcp_tool *t, json_t *args)
{
	const char *key;
	json_t *v;

	json_object_foreach(args, key, v) {
		const struct mcp_param *p = t->params;
		struct strbuf names = STRBUF_INIT;

		while (p->name && strcmp(p->name, key))
			p++;
		if (!p->name) {
			for (p = t->params; p->name; p++)
				strbuf_addf(&names, "%s%s", names.len ? ", " : "", p->name);
			error("unknown argument '%s' of tool '%s': %s%s", key, t->name,
			      names.len ? "it takes " : "it takes none", names.buf);
			strbuf_release(&names);
			return -1;
		}
		if (!type_ok(p->type, v))
			return error("invalid argument '%s' of tool '%s': expected %s%s", key, t->name,
				     p->type == MCP_T_STRINGS ? "an array of strings" :
				     p->type == MCP_T_INTEGERS ? "an array of integers" :
				     p->type == MCP_T_INTEGER ? "an integer" : "a ",
				     p->type == MCP_T_STRINGS || p->type == MCP_T_INTEGERS ||
				     p->type == MCP_T_INTEGER ? "" : type_name(p->type));
		if (p->choices && !in_choices(p->choices, json_string_value(v)))
			return error("invalid argument '%s' of tool '%s': '%s' is not one of %s", key,
				     t->name, json_string_value(v), p->choices);
		if (p->max > p->min && json_is_number(v) &&
		    (json_number_value(v) < p->min || json_number_value(v) > p->max))
			return error("invalid argument '%s' of tool '%s': %g is out of range (%g to %g)",
				     key, t->name, json_number_value(v), p->min, p->max);
		if ((p->type == MCP_T_STRINGS || p->type == MCP_T_INTEGERS) && p->required &&
		    !json_array_size(v))
			return error("invalid argument '%s' of tool '%s': it must not be empty", key, t->name);
	}
	for (const struct mcp_param *p = t->params; p->name; p++)
		if (p->required && !json_object_get(args, p->name))
			return error("tool '%s' needs the argument '%s': %s", t->name, p->name, p->description);
	return 0;
}

static json_t *param_schema(const struct mcp_param *p)
{
	json_t *s = json_object();

	json_object_set_new(s, "type", json_string(type_name(p->type)));
	if (p->type == MCP_T_STRINGS)
		json_object_set_new(s, "items", json_pack("{s:s}", "type", "string"));
	if (p->type == MCP_T_INTEGERS)
		json_object_set_new(s, "items", json_pack("{s:s}", "type", "integer"));
	if (p->choices) {
		json_t *e = json_array();

		for (const char *c = p->choices; *c;) {
			const char *bar = strchrnul(c, '|');

			json_array_append_new(e, json_stringn(c, (size_t)(bar - c)));
			c = *bar ? bar + 1 : bar;
		}
		json_object_set_new(s, "enum", e);
	}
	if (p->max > p->min) {
		json_object_set_new(s, "minimum", json_real(p->min));
		json_object_set_new(s, "maximum", json_real(p->max));
	}
	json_object_set_new(s, "description", json_string(p->description));
	return s;
}

json_t *mcp_tool_json(const struct mcp_tool *t)
{
	json_t *in = json_object(), *props = json_object(), *req = json_array();
	json_t *out = json_object(), *oprops = json_object(), *oreq = json_array();

	for (const struct mcp_param *p = t->params; p->name; p++) {
		json_object_set_new(props, p->name, param_schema(p));
		if (p->required)
			json_array_append_new(req, json_string(p->name));
	}
	json_object_set_new(in, "type", json_string("object"));
	json_object_set_new(in, "properties", props);
	json_object_set_new(in, "required", req);
	json_object_set_new(in, "additionalProperties", json_false());
	for (const struct mcp_prop *p = t->output; p->name; p++) {
		json_t *type = json_string(type_name(p->type));

		if (p->nullable)
			type = json_pack("[o, s]", type, "null");
		json_object_set_new(oprops, p->name, p->type == MCP_T_ANY ? json_object() :
				    json_pack("{s:o}", "type", type));
		if (p->type == MCP_T_ANY)
			json_decref(type);
		if (p->required)
			json_array_append_new(oreq, json_string(p->name));
	}
	json_object_set_new(out, "type", json_string("object"));
	json_object_set_new(out, "properties", oprops);
	json_object_set_new(out, "required", oreq);
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:b, s:b, s:b}}", "name", t->name, "title", t->title,
			 "description", t->description, "inputSchema", in, "outputSchema", out,
			 "annotations", "readOnlyHint", !t->long_running && strcmp(t->name, "flame"),
			 "destructiveHint", 0, "openWorldHint", 0);
}

const struct mcp_tool *mcp_find_tool(const char *name)
{
	for (size_t i = 0; name && i < mcp_nr_tools; i++)
		if (!strcmp(mcp_tools[i].name, name))
			return &mcp_tools[i];
	return NULL;
}

/* ---- the project, paths and runs ---- */

static int open_project(struct mcp_call *c, struct project *p, bool need_config)
{
	*p = (struct project)PROJECT_INIT;
	return project_open(p, c->opts->conf_file, need_config ? 0 : PROJECT_CONFIG_OPTIONAL);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/*
 * 'given' (relative: to the project's directory) resolved, links followed,
 * into a new string: it must exist (else its directory must), and lie in
 * the project's top or a --root. NULL with an error otherwise.
 */
static char *allowed_path(struct mcp_call *c, const struct project *p, const char *given, bool exists)
{
	char *joined = given[0] == '/' ? xstrdup(given) : xstrfmt("%s/%s", p->dir, given);
	char *real = realpath(joined, NULL);
	bool ok = false;

	if (!real && !exists && errno == ENOENT) {
		char *slash = strrchr(joined, '/'), *dir;

		*slash = 0;
		dir = realpath(*joined ? joined : "/", NULL);
		if (dir && slash[1] && strcmp(slash + 1, ".") && strcmp(slash + 1, ".."))
			real = xstrfmt("%s/%s", dir, slash + 1);
		*slash = '/';
		free(dir);
	}
	if (!real) {
		error("cannot find '%s': %s", given, strerror(errno));
		free(joined);
		return NULL;
	}
	{
		/* the top as git or the config named it may go through a link */
		char *top = realpath(p->top, NULL);

		ok = under(real, top ? top : p->top);
		free(top);
	}
	for (size_t i = 0; !ok && i < c->opts->nr_roots; i++) {
		char *root = realpath(c->opts->roots[i], NULL);

		ok = root && under(real, root);
		free(root);
	}
	if (!ok) {
		error("'%s' is outside the project ('%s')%s: start hotloop mcp with --root DIR to allow it",
		      given, p->top, c->opts->nr_roots ? " and the --root directories" : "");
		free(real);
		real = NULL;
	}
	free(joined);
	return real;
}

static bool valid_id(const char *id)
{
	return *id && id[0] != '.' && strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789._-") == strlen(id);
}

/* <top>/.hotloop/runs/<id> ("latest" included), or NULL with an error. */
static char *run_dir(const struct project *p, const char *id)
{
	char *dir;
	struct stat st;

	if (!valid_id(id)) {
		error("invalid run id '%s'", id);
		return NULL;
	}
	dir = xstrfmt("%s/.hotloop/runs/%s", p->top, id);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		error(!strcmp(id, "latest") ? "no run yet in '%s/.hotloop/runs': record a workload first" :
		      "no run '%s' in '%s/.hotloop/runs'", !strcmp(id, "latest") ? p->top : id, p->top);
		free(dir);
		return NULL;
	}
	return dir;
}

/* The run's workload from its meta.json, or NULL (caller frees). */
static char *run_workload_name(const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/meta.json", dir), *name = NULL;
	json_t *meta;

	if (!access(path, R_OK) && !read_file(&sb, path, 1 << 20) &&
	    (meta = json_loadb(sb.buf, sb.len, 0, NULL))) {
		if (json_is_string(json_object_get(meta, "workload")))
			name = xstrdup(json_string_value(json_object_get(meta, "workload")));
		json_decref(meta);
	}
	strbuf_release(&sb);
	free(path);
	return name;
}

/*
 * The profile a tool reads: 'profile' (a path), else the run 'run', else
 * the latest run's. Its path (caller frees), and its run's workload when
 * it is a run's; NULL with an error.
 */
static char *pick_profile(struct mcp_call *c, const struct project *p, json_t *args, char **workload)
{
	const char *given = arg_str(args, "profile"), *run = arg_str(args, "run");
	char *dir, *path;

	if (workload)
		*workload = NULL;
	if (given && run) {
		error("give a profile or a run, not both");
		return NULL;
	}
	if (given)
		return allowed_path(c, p, given, true);
	if (!(dir = run_dir(p, run ? run : "latest")))
		return NULL;
	path = xstrfmt("%s/profile.pb.gz", dir);
	if (access(path, R_OK)) {
		error("run '%s' has no profile ('%s')", run ? run : "latest", path);
		free(path);
		path = NULL;
	} else if (workload) {
		*workload = run_workload_name(dir);
	}
	free(dir);
	return path;
}

static int no_commands(const char *tool)
{
	return error("%s: only the project's configured workloads run here: the server was started "
		     "without --allow-commands", tool);
}

static bool has_workload(const struct project *p, const char *name)
{
	for (size_t i = 0; i < p->cf.nr_workloads; i++)
		if (!strcmp(p->cf.workloads[i].name, name))
			return true;
	return false;
}

/* Read into prof (initialized by the caller, released either way). */
static int read_profile(const char *path, struct profile *prof)
{
	return profile_read_any(prof, path);
}

/* ---- record ---- */

static void record_doc(json_t *doc, const char *id, const char *dir, const struct record_result *res)
{
	json_object_set_new(doc, "run", json_text(id));
	json_object_set_new(doc, "dir", json_text(dir));
	{
		char *profile = xstrfmt("%s/profile.pb.gz", dir);

		json_object_set_new(doc, "profile", json_text(profile));
		free(profile);
	}
	json_object_set_new(doc, "samples", json_integer((json_int_t)res->stats.samples));
	json_object_set_new(doc, "lost", json_integer((json_int_t)res->stats.lost));
	json_object_set_new(doc, "seconds", json_real((double)res->duration_ns / 1e9));
	json_object_set_new(doc, "exit_status", json_integer(WIFEXITED(res->wait_status) ?
		WEXITSTATUS(res->wait_status) : 128 + WTERMSIG(res->wait_status)));
	json_object_set_new(doc, "resources", json_pack("[s+, s++, s++]", URI_PREFIX "runs/", id,
		URI_PREFIX "runs/", id, "/brief", URI_PREFIX "runs/", id, "/report"));
}

static int tool_record(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	const char *workload = arg_str(args, "workload"), *cg = arg_str(args, "call_graph");
	struct project p;
	struct sampler_config sampler = { .freq = (unsigned)arg_int(args, "freq", SAMPLER_DEFAULT_FREQ) };
	size_t argc;
	char **argv = arg_argv(args, "command", &argc);
	int ret = -1;

	if (argv && workload) {
		free(argv);
		return error("give a workload or a command, not both");
	}
	if (argv && !c->opts->allow_commands) {
		free(argv);
		return no_commands("record");
	}
	if (cg && sampler_parse_call_graph(cg, &sampler)) {
		free(argv);
		return -1;
	}
	if (open_project(c, &p, !argv))
		goto out;
	*doc = json_object();
	if (!argv) {
		struct run_request rq = { .project = &p, .build = arg_bool(args, "build", true),
					  .source = "run", .obs = c->obs, .sampler = sampler };
		struct run_outcome o;

		if (!(rq.workload = project_workload(&p, workload)))
			goto out;
		rq.budget = brief_budget(&p);
		run_outcome_init(&o);
		if (!run_workload(&rq, &o)) {
			json_object_set_new(*doc, "workload", json_text(rq.workload->name));
			json_object_set_new(*doc, "command", json_text(o.command));
			record_doc(*doc, o.id, o.dir, &o.rec);
			strbuf_addf(text, "recorded workload '%s' (%s): ", rq.workload->name, o.command);
			ret = 0;
		}
		if (!ret) {
			record_summary(&o.rec, json_string_value(json_object_get(*doc, "profile")), text);
			strbuf_addf(text, "run %s: its brief is resource " URI_PREFIX "runs/%s/brief, "
				    "or call brief with run '%s'\n", o.id, o.id, o.id);
		}
		run_outcome_release(&o);
	} else {
		struct record_options o = { .sampler = sampler, .argv = argv, .dir = p.dir };
		struct record_result res;
		struct strbuf line = STRBUF_INIT;
		char *dir = NULL, *id = NULL, *out = NULL, *so = NULL, *se = NULL;

		if (!project_new_dir(&p, "runs", "command", &dir, &id)) {
			o.output = out = xstrfmt("%s/profile.pb.gz", dir);
			o.stdout_file = so = xstrfmt("%s/stdout.txt", dir);
			o.stderr_file = se = xstrfmt("%s/record.log", dir);
			o.duration_ns = (uint64_t)(arg_num(args, "duration", 0) * 1e9);
			runner_quote_argv(&line, (const char *const *)argv, argc);
			if (!record_run(&o, &res)) {
				json_object_set_new(*doc, "workload", json_null());
				json_object_set_new(*doc, "command", json_text(line.buf));
				record_doc(*doc, id, dir, &res);
				strbuf_addf(text, "recorded '%s': ", line.buf);
				record_summary(&res, out, text);
				strbuf_addf(text, "run %s: call brief with run '%s'\n", id, id);
				ret = 0;
			}
		}
		strbuf_release(&line);
		free(dir);
		free(id);
		free(out);
		free(so);
		free(se);
	}
out:
	if (ret) {
		json_decref(*doc);
		*doc = NULL;
	}
	free(argv);
	project_release(&p);
	return ret;
}

/* ---- report, brief, flame, asm: what a profile says ---- */

static int tool_report(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	const char *sort_s = arg_str(args, "sort"), *by_s = arg_str(args, "by");
	enum report_sort sort = sort_s && !strcmp(sort_s, "total") ? REPORT_SORT_TOTAL : REPORT_SORT_SELF;
	enum report_by by = by_s ? (enum report_by)report_parse_by(by_s) : REPORT_BY_FUNCTION;
	size_t top = (size_t)arg_int(args, "top", 20);
	struct report r = REPORT_INIT;
	struct profile prof;
	struct project p;
	char *path = NULL;
	int idx, ret = -1;

	profile_init(&prof);
	if (open_project(c, &p, false) || !(path = pick_profile(c, &p, args, NULL)) ||
	    read_profile(path, &prof) || (idx = profile_pick_sample_type(&prof, NULL)) < 0 ||
	    report_build_flags(&r, &prof, idx, by, 0))
		goto out;
	report_sort(&r, sort);
	*doc = report_to_json(&prof, &r, top, sort);
	json_object_set_new(*doc, "profile", json_text(path));
	report_format_text(&prof, &r, top, sort, text);
	ret = 0;
out:
	report_release(&r);
	profile_release(&prof);
	project_release(&p);
	free(path);
	return ret;
}

static int tool_brief(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	struct brief_owned given = { 0 }, owned = { 0 };
	struct brief_request rq = { 0 };
	struct profile prof;
	struct project p;
	struct brief b;
	json_t *dirs = json_object_get(args, "owned"), *d;
	char *path = NULL, *workload = NULL;
	size_t budget, i;
	int ret = -1;

	profile_init(&prof);
	rq.opts.context = -1;
	rq.opts.focus = arg_str(args, "focus");
	rq.opts.top = (size_t)arg_int(args, "top", 0);
	if (open_project(c, &p, false) || !(path = pick_profile(c, &p, args, &workload)))
		goto out;
	json_array_foreach(dirs, i, d) {
		char *real = allowed_path(c, &p, json_string_value(d), true);

		if (!real || brief_owned_add(&given, real, false, true)) {
			free(real);
			goto out;
		}
		free(real);
		rq.owned = &given;
	}
	if (given.nr_roots)
		given.how = xstrdup("owned");
	rq.project = &p;
	rq.workload = arg_str(args, "workload");
	if (rq.workload && !project_workload(&p, rq.workload))
		goto out;
	/* a run's own workload, when the project still has it: the header names it, its scale joins */
	if (!rq.workload && workload && has_workload(&p, workload))
		rq.workload = workload;
	budget = json_object_get(args, "budget") ? (size_t)arg_int(args, "budget", 0) : brief_budget(&p);
	if (read_profile(path, &prof) || brief_for_workload(&rq, &prof, &owned, &b))
		goto out;
	*doc = brief_to_json(&b, budget);
	json_object_set_new(*doc, "profile", json_text(path));
	brief_format_md(&b, budget, text);
	brief_release(&b);
	ret = 0;
out:
	brief_owned_release(&given);
	brief_owned_release(&owned);
	profile_release(&prof);
	project_release(&p);
	free(path);
	free(workload);
	return ret;
}

static int tool_flame(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;
	struct profile prof, base;
	struct project p;
	const char *base_arg = arg_str(args, "base"), *out_arg = arg_str(args, "output");
	char *path = NULL, *base_path = NULL, *out = NULL;
	int ret = -1;

	profile_init(&prof);
	profile_init(&base);
	o.title = arg_str(args, "title");
	o.reverse = arg_bool(args, "reverse", false);
	if (open_project(c, &p, false) || !(path = pick_profile(c, &p, args, NULL)) ||
	    (base_arg && !(base_path = allowed_path(c, &p, base_arg, true))))
		goto out;
	if (out_arg) {
		out = allowed_path(c, &p, out_arg, false);
	} else {
		/* beside the profile: flame.svg in a run, NAME.svg for NAME.pb.gz */
		const char *slash = strrchr(path, '/'), *dot = strstr(slash ? slash : path, ".pb.gz");

		if (!strcmp(slash + 1, "profile.pb.gz"))
			out = xstrfmt("%.*s/flame%s.svg", (int)(slash - path), path, base_path ? "-diff" : "");
		else
			out = xstrfmt("%.*s%s.svg", (int)(dot ? dot - path : (long)strlen(path)), path,
				      base_path ? "-diff" : "");
	}
	if (!out)
		goto out;
	o.name = path;
	o.base_name = base_path;
	if (read_profile(path, &prof) || (base_path && read_profile(base_path, &base)) ||
	    flame_render(&prof, base_path ? &base : NULL, &o, &svg) ||
	    write_file_atomic(out, svg.buf, svg.len))
		goto out;
	*doc = json_pack("{s:o, s:o, s:o, s:I, s:b}", "svg", json_text(out), "profile", json_text(path),
			 "base", json_text(base_path), "bytes", (json_int_t)svg.len, "differential",
			 base_path != NULL);
	strbuf_addf(text, "wrote the %sflame graph of '%s' to '%s' (%zu bytes): open it in a browser\n",
		    base_path ? "differential " : "", path, out, svg.len);
	ret = 0;
out:
	strbuf_release(&svg);
	profile_release(&prof);
	profile_release(&base);
	project_release(&p);
	free(path);
	free(base_path);
	free(out);
	return ret;
}

static int tool_asm(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	struct asm_function f = ASM_FUNCTION_INIT;
	struct asm_load_options lo = ASM_LOAD_OPTIONS_INIT;
	struct profile prof;
	struct project p;
	char *binary = NULL, *path = NULL;
	bool annotate = json_object_get(args, "profile") || json_object_get(args, "run");
	int ret = -1;

	profile_init(&prof);
	if (open_project(c, &p, false) || !(binary = allowed_path(c, &p, arg_str(args, "binary"), true)))
		goto out;
	if (annotate) {
		if (!(path = pick_profile(c, &p, args, NULL)) || read_profile(path, &prof) ||
		    (lo.sample_idx = profile_pick_sample_type(&prof, NULL)) < 0)
			goto out;
		lo.profile = &prof;
	}
	if (asm_load_with(binary, arg_str(args, "function"), &lo, &f) ||
	    (annotate && asm_annotate(&f, &prof, lo.sample_idx)))
		goto out;
	asm_analyze(&f);
	*doc = asm_to_json(&f);
	strbuf_addf(text, "%s in %s: %s\n", json_string_value(json_object_get(*doc, "function")), binary,
		    f.verdict);
	for (int i = 0; i < ASM_NR_TAGS; i++)
		if (f.tags & asm_tag_order[i])
			strbuf_addf(text, "  %-15s %s\n", asm_tag_name(asm_tag_order[i]),
				    asm_evidence(&f, asm_tag_order[i]));
	strbuf_addstr(text, "structuredContent.instructions holds every instruction with its share of the samples\n");
	ret = 0;
out:
	asm_function_release(&f);
	profile_release(&prof);
	project_release(&p);
	free(binary);
	free(path);
	return ret;
}

/* ---- bench, compare, scale, scenario: what runs ---- */

static const char *metric_arg(json_t *args, enum gate_metric *m)
{
	const char *s = arg_str(args, "metric");

	*m = !s || !strcmp(s, "cpu") ? GATE_METRIC_CPU : !strcmp(s, "wall") ? GATE_METRIC_WALL :
	     GATE_METRIC_INSTRUCTIONS;
	return s;
}

/* The /bin/sh line of a workload or of a command (argv), and where it runs; -1 with an error. */
static int command_of(struct mcp_call *c, const char *tool, struct project *p, json_t *args,
		      char **line, const char **dir, double *timeout, const char **name)
{
	const char *workload = arg_str(args, "workload");
	size_t argc;
	char **argv = arg_argv(args, "command", &argc);
	int ret = 0;

	*line = NULL;
	if (argv && workload)
		ret = error("give a workload or a command, not both");
	else if (argv && !c->opts->allow_commands)
		ret = no_commands(tool);
	else if (open_project(c, p, !argv))
		ret = -1;
	if (ret)
		goto out;
	if (argv) {
		struct strbuf sb = STRBUF_INIT;

		if ((ret = runner_check_program(argv[0])) != 0) {
			ret = -1;
			goto out;
		}
		strbuf_addstr(&sb, "exec ");
		runner_quote_argv(&sb, (const char *const *)argv, argc);
		*line = strbuf_detach(&sb, NULL);
		*dir = p->dir;
		*name = NULL;
	} else {
		const struct config_workload *w = project_workload(p, workload);

		if (!w || !(*line = project_command_line(w, NULL))) {
			ret = -1;
			goto out;
		}
		*dir = p->dir;
		*timeout = w->timeout_s;
		*name = w->name;
	}
out:
	free(argv);
	return ret;
}

static int tool_bench(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	struct bench_spec spec = { .runs = arg_int(args, "runs", 10), .warmup = arg_int(args, "warmup", 1),
				   .quiesce = QUIESCE_OPTS_INIT, .obs = c->obs };
	struct bench_result b = { 0 };
	struct stats_summary s;
	struct project p = PROJECT_INIT;
	const char *name = NULL;
	char *line = NULL;
	int ret = -1;

	metric_arg(args, &spec.metric);
	if (command_of(c, "bench", &p, args, &line, &spec.dir, &spec.timeout, &name))
		goto out;
	spec.command = line;
	spec.timeout = arg_num(args, "timeout", spec.timeout);
	if (bench_run(&spec, &b))
		goto out;
	if (b.interrupted) {
		error("bench: interrupted after %zu of %ld runs", b.nr_runs, spec.runs);
		goto out;
	}
	*doc = bench_to_json(&b, line);
	json_object_set_new(*doc, "workload", json_text(name));
	strbuf_addf(text, "%s: %zu run%s%s\n", name ? name : line, b.nr_runs, b.nr_runs == 1 ? "" : "s",
		    b.complete ? "" : " (incomplete: a run failed)");
	if (b.nr_runs) {
		bench_summary(&b, GATE_METRIC_CPU, &s);
		strbuf_addf(text, "cpu   median %.4f s  MAD %.4f s  CV %.1f%%\n", s.median, s.mad, 100 * s.cv);
		bench_summary(&b, GATE_METRIC_WALL, &s);
		strbuf_addf(text, "wall  median %.4f s  MAD %.4f s  CV %.1f%%\n", s.median, s.mad, 100 * s.cv);
		if (b.metric == GATE_METRIC_INSTRUCTIONS) {
			bench_summary(&b, GATE_METRIC_INSTRUCTIONS, &s);
			strbuf_addf(text, "instructions median %.0f\n", s.median);
		}
		bench_rss_summary(&b, &s);
		strbuf_addf(text, "peak rss %.0f KiB\n", s.max);
	}
	for (size_t i = 0; i < b.nr_warm + b.nr_runs; i++) {
		char *why = bench_failure(i < b.nr_warm ? &b.warm[i] : &b.runs[i - b.nr_warm], b.timeout);

		if (why)
			strbuf_addf(text, "failed: %s %zu: %s\n", i < b.nr_warm ? "warm-up" : "run",
				    i < b.nr_warm ? i + 1 : i - b.nr_warm + 1, why);
		free(why);
	}
	for (size_t i = 0; i < b.nr_warnings; i++)
		strbuf_addf(text, "warning: %s\n", b.warnings[i]);
	ret = 0;
out:
	bench_result_release(&b);
	project_release(&p);
	free(line);
	return ret;
}

/* A gate result as the tool's answer: -1 with the reason when nothing could be judged. */
static int gate_answer(const struct gate_result *r, const struct revs_pair *trees, json_t **doc,
		       struct strbuf *text)
{
	if (r->interrupted)
		return error("compare: interrupted");
	if (r->stage == GATE_STAGE_BUILD)
		return error("%s%s", r->reasons[0], r->detail.buf);
	*doc = gate_result_to_json(r);
	if (trees) {
		json_object_set_new(*doc, "base", revs_tree_to_json(&trees->base));
		json_object_set_new(*doc, "candidate", revs_tree_to_json(&trees->cand));
		revs_pair_describe(trees, text);
	} else {
		json_object_set_new(*doc, "base", json_null());
		json_object_set_new(*doc, "candidate", json_null());
	}
	gate_result_format_text(r, text);
	return 0;
}

static int tool_compare(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	const char *base = arg_str(args, "base"), *cand = arg_str(args, "cand");
	const char *base_cmd = arg_str(args, "base_command"), *cand_cmd = arg_str(args, "cand_command");
	size_t pairs = (size_t)arg_int(args, "pairs", 0);
	struct gate_spec spec = GATE_SPEC_INIT;
	struct revs_pair trees = REVS_PAIR_INIT;
	struct gate_result r;
	struct project p = PROJECT_INIT;
	char *cand_real = NULL, *bl = NULL, *cl = NULL;
	int ret = -1;

	gate_result_init(&r);
	if (base_cmd || cand_cmd) {
		struct compare_workload_spec w = { .name = "primary", .primary = true };
		struct quiesce_opts q = QUIESCE_OPTS_INIT;

		if (!base_cmd || !cand_cmd || base || cand) {
			error("give base_command and cand_command, or base and cand (revisions), not both");
			goto out;
		}
		if (!c->opts->allow_commands) {
			no_commands("compare");
			goto out;
		}
		if (open_project(c, &p, false))
			goto out;
		w.base_cmd = bl = runner_exec_line(base_cmd);
		w.cand_cmd = cl = runner_exec_line(cand_cmd);
		w.base_dir = w.cand_dir = p.dir;
		spec.source = "compare";
		spec.workloads = &w;
		spec.nr_workloads = 1;
		spec.opts.warmup = 1;
		spec.opts.fingerprint = !arg_bool(args, "no_fingerprint", false);
		spec.opts.quiesce = q;
		spec.obs = c->obs;
		if (compare_schedule(pairs, false, &spec.opts.schedule))
			goto out;
		if (gate_run(&spec, &r))	/* -1, or a command not found */
			goto out;
		ret = gate_answer(&r, NULL, doc, text);
		goto out;
	}
	if (!base) {
		error("compare needs base (a git revision, e.g. HEAD) and cand (a revision or a directory; "
		      "default '.', the working tree)");
		goto out;
	}
	if (!cand)
		cand = ".";
	if (open_project(c, &p, true) || !project_workload(&p, NULL) ||
	    (p.in_git && project_find_git(&p)))
		goto out;
	/* a directory must be one of ours; a revision is the repository's */
	{
		char *joined = cand[0] == '/' ? xstrdup(cand) : xstrfmt("%s/%s", p.dir, cand);
		struct stat st;
		bool is_dir = !stat(joined, &st) && S_ISDIR(st.st_mode);

		free(joined);
		if (is_dir && !(cand_real = allowed_path(c, &p, cand, true)))
			goto out;
	}
	if (revs_pair_open(&trees, &p, base, cand) ||
	    gate_spec_from_project(&spec, &p, trees.base.dir, trees.cand.dir))
		goto out;
	spec.source = "compare";
	spec.obs = c->obs;
	if (pairs && compare_schedule(pairs, false, &spec.opts.schedule))
		goto out;
	if (arg_bool(args, "no_build", false))
		spec.build_base = spec.build_cand = false;
	if (arg_bool(args, "no_test", false))
		spec.test = NULL;
	if (gate_run(&spec, &r))
		goto out;
	ret = gate_answer(&r, &trees, doc, text);
out:
	if (revs_pair_close(&trees) && !ret) {
		json_decref(*doc);
		*doc = NULL;
		ret = -1;
	}
	gate_result_release(&r);
	gate_spec_release(&spec);
	project_release(&p);
	free(cand_real);
	free(bl);
	free(cl);
	return ret;
}

static int tool_scale(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	struct scale_spec spec = { .repeat = arg_int(args, "repeat", 1), .min_samples = SCALE_MIN_SAMPLES,
				   .obs = c->obs };
	struct project p = PROJECT_INIT;
	struct strbuf sizes_s = STRBUF_INIT, why = STRBUF_INIT, command = STRBUF_INIT;
	json_t *sizes = json_object_get(args, "sizes"), *v;
	const char *workload = arg_str(args, "workload");
	uint64_t *parsed = NULL;
	size_t argc, i;
	char **argv = arg_argv(args, "command", &argc);
	struct scale sc;
	bool have_sc = false;
	int ret = -1;

	spec.sampler.freq = SAMPLER_DEFAULT_FREQ;
	if (argv && workload) {
		error("give a workload or a command, not both");
		goto out;
	}
	if (argv && !c->opts->allow_commands) {
		no_commands("scale");
		goto out;
	}
	json_array_foreach(sizes, i, v)
		strbuf_addf(&sizes_s, "%s%lld", i ? "," : "", (long long)json_integer_value(v));
	if (sizes && config_parse_sizes(sizes_s.buf, &parsed, &spec.nr_sizes, &why)) {
		error("invalid sizes '%s': %s; expected at least %d different whole numbers above 0",
		      sizes_s.buf, why.buf, CONFIG_MIN_SIZES);
		goto out;
	}
	spec.sizes = parsed;
	if (open_project(c, &p, !argv))
		goto out;
	if (argv) {
		bool has_n = false;

		for (i = 0; i < argc; i++)
			has_n |= strstr(argv[i], "{n}") != NULL;
		if (!has_n || !parsed) {
			error("a command to scale needs {n} where the size goes and sizes, e.g. "
			      "command [\"./prog\", \"{n}\"], sizes [1000, 2000, 4000]");
			goto out;
		}
		spec.workload = "cmd";
		spec.argv = argv;
		spec.dir = p.dir;
		runner_quote_argv(&command, (const char *const *)argv, argc);
		spec.command = command.buf;
	} else {
		const struct config_workload *w = project_workload(&p, workload);

		if (!w)
			goto out;
		if (w->scenario || !strstr(w->run, "{n}")) {
			error("[workload \"%s\"] %s: scale runs a command with {n} at sizes", w->name,
			      w->scenario ? "is judged by a scenario" : "has no {n} in its run line");
			goto out;
		}
		if (!parsed) {
			if (!w->nr_sizes) {
				error("[workload \"%s\"] has no sizes: add 'sizes = 1000 2000 4000' to it or "
				      "give sizes", w->name);
				goto out;
			}
			spec.sizes = w->sizes;
			spec.nr_sizes = w->nr_sizes;
		}
		spec.workload = w->name;
		spec.run = spec.command = w->run;
		spec.dir = p.dir;
		spec.timeout = w->timeout_s;
	}
	spec.top = p.top;
	ret = scale_run(&spec, &sc, doc);
	have_sc = true;
	if (ret) {
		ret = -1;
		goto out;
	}
	if (hl_cancelled()) {
		json_decref(*doc);
		*doc = NULL;
		ret = error("scale: interrupted");
		goto out;
	}
	scale_format_table(&sc, spec.workload, 25, spec.min_samples, text);
out:
	if (have_sc)
		scale_release(&sc);
	strbuf_release(&sizes_s);
	strbuf_release(&why);
	strbuf_release(&command);
	project_release(&p);
	free(parsed);
	free(argv);
	return ret;
}

static int tool_scenario(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	const char *name = arg_str(args, "name");
	struct scenario_spec spec = { .profile_cpu = arg_bool(args, "profile", false), .observer = c->obs };
	struct scenario_result r;
	struct project p;
	char *dir = NULL;
	int ret = -1;

	scenario_result_init(&r);
	if (open_project(c, &p, true))
		goto out;
	for (size_t i = 0; i < p.cf.nr_scenarios; i++)
		if (!strcmp(p.cf.scenarios[i].name, name))
			spec.conf = &p.cf.scenarios[i];
	if (!spec.conf) {
		struct strbuf have = STRBUF_INIT;

		for (size_t i = 0; i < p.cf.nr_scenarios; i++)
			strbuf_addf(&have, "%s'%s'", i ? ", " : "", p.cf.scenarios[i].name);
		error("unknown scenario '%s' in '%s': %s%s", name, p.conf_path,
		      have.len ? "the configured ones are " : "it has no [scenario \"NAME\"] section", have.buf);
		strbuf_release(&have);
		goto out;
	}
	if (project_scenario_dir(&p, name, NULL, &dir))
		goto out;
	spec.dir = p.dir;
	spec.out_dir = dir;
	if (scenario_run(&spec, &r)) {
		if (!r.error)
			goto out;
		error("scenario '%s': %s", name, r.error);
		goto out;
	}
	*doc = scenario_result_to_json(&r, name);
	scenario_result_format_text(&r, name, text);
	ret = 0;
out:
	scenario_result_release(&r);
	project_release(&p);
	free(dir);
	return ret;
}

/* ---- the knowledge base and the loop ---- */

static int open_kb(struct mcp_call *c, struct project *p, struct kb *kb)
{
	char *dir;
	int ret;

	*kb = (struct kb)KB_INIT;
	if (open_project(c, p, false))
		return -1;
	dir = p->conf_path ? project_kb_dir(p) : xstrfmt("%s/kb", p->dir);
	ret = kb_load(dir, kb);
	free(dir);
	return ret;
}

static int tool_kb_search(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	json_t *words = json_object_get(args, "words"), *list = json_array();
	const char *function = arg_str(args, "function");
	size_t max = (size_t)arg_int(args, "max", 20), nr_words = json_array_size(words), total;
	const char **w = xcalloc(nr_words + 1, sizeof(*w));
	const struct kb_entry **found = NULL;
	struct project p;
	struct kb kb;
	int ret = -1;

	for (size_t i = 0; i < nr_words; i++)
		w[i] = json_string_value(json_array_get(words, i));
	if (open_kb(c, &p, &kb))
		goto out;
	found = xcalloc(kb.nr + 1, sizeof(*found));
	total = kb_find(&kb, function, w, nr_words, found, kb.nr);
	for (size_t i = 0; i < total && i < max; i++) {
		struct strbuf day = STRBUF_INIT;

		json_array_append_new(list, kb_entry_to_json(found[i], NULL));
		kb_entry_day(found[i], &day);
		strbuf_addf(text, "%s  %-12s %-24s %s\n", day.buf,
			    found[i]->verdict ? verdict_kind_name(found[i]->verdict) : "-",
			    found[i]->function ? found[i]->function : "-", found[i]->slug);
		if (found[i]->hypothesis) {
			strbuf_addstr(text, "    ");
			kb_one_line(text, found[i]->hypothesis, 160);
			strbuf_addch(text, '\n');
		}
		strbuf_release(&day);
	}
	if (!total)
		strbuf_addf(text, kb.nr ? "no attempt in '%s' matches\n" : "no attempts yet in '%s'\n", kb.dir);
	else if (total > max)
		strbuf_addf(text, "... and %zu more (raise max)\n", total - max);
	*doc = json_pack("{s:o, s:I, s:I, s:O}", "kb", json_text(kb.dir), "total", (json_int_t)total,
			 "entries", (json_int_t)kb.nr, "attempts", list);
	ret = 0;
out:
	json_decref(list);
	free(found);
	free(w);
	kb_release(&kb);
	project_release(&p);
	return ret;
}

static int tool_kb_show(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	const char *slug = arg_str(args, "slug");
	struct strbuf diff = STRBUF_INIT;
	const struct kb_entry *e;
	bool with_diff = arg_bool(args, "diff", false);
	struct project p;
	struct kb kb;
	int ret = -1;

	if (open_kb(c, &p, &kb))
		goto out;
	if (!(e = kb_lookup(&kb, slug))) {
		const struct kb_entry *near[3];
		size_t n = kb_suggest(&kb, slug, near, ARRAY_SIZE(near));
		struct strbuf hint = STRBUF_INIT;

		for (size_t i = 0; i < n; i++)
			strbuf_addf(&hint, "%s'%s'", i ? ", " : ": the most similar: ", near[i]->slug);
		error("no attempt '%s' in '%s'%s", slug, kb.dir, kb.nr ? hint.buf : " (no attempts yet)");
		strbuf_release(&hint);
		goto out;
	}
	if (with_diff && kb_read_diff(e, &diff))
		goto out;
	*doc = kb_entry_to_json(e, with_diff ? diff.buf : NULL);
	kb_format_report(e, text);
	if (with_diff && diff.len)
		strbuf_addf(text, "\n%s", diff.buf);
	ret = 0;
out:
	strbuf_release(&diff);
	kb_release(&kb);
	project_release(&p);
	return ret;
}

/* Is a loop running on the project (its lock held)? The holder's pid, 0 when none, -1 unknown. */
static long loop_running(const struct project *p)
{
	char *path = xstrfmt("%s/.hotloop/lock", p->top), buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	long pid = 0;
	ssize_t n;

	free(path);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB)) {
		pid = -1;
		n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			pid = atol(buf) > 0 ? atol(buf) : -1;
		}
	}
	close(fd);
	return pid;
}

static char *store_file(struct mcp_call *c, const struct project *p)
{
	return c->opts->db ? xstrdup(c->opts->db) : xstrfmt("%s/%s", p->top, STORE_FILE);
}

/* The store's last loop with its attempts (json null without one), or NULL with an error. */
static json_t *last_loop(struct store *s)
{
	struct store_loop l;
	struct store_attempt *a = NULL;
	size_t n = 0;
	int have = store_last_loop(s, &l);
	json_t *loop, *arr;

	if (have < 0)
		return NULL;
	if (!have)
		return json_null();
	if (store_attempts_of_loop(s, l.id, &a, &n)) {
		store_loop_release(&l);
		return NULL;
	}
	loop = store_loop_json(&l);
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, store_attempt_json(&a[i], false));
	json_object_set_new(loop, "attempts", arr);
	store_attempts_free(a, n);
	store_loop_release(&l);
	return loop;
}

static int tool_loop_status(struct mcp_call *c, json_t *args, json_t **doc, struct strbuf *text)
{
	struct project p;
	struct store *s = NULL;
	struct store_counts counts;
	json_t *loop = NULL;
	char *path = NULL;
	long pid;
	int ret = -1;

	if (open_project(c, &p, false))
		goto out;
	path = store_file(c, &p);
	pid = loop_running(&p);
	*doc = json_object();
	json_object_set_new(*doc, "running", json_boolean(pid != 0));
	json_object_set_new(*doc, "pid", pid > 0 ? json_integer(pid) : json_null());
	if (access(path, R_OK)) {
		json_object_set_new(*doc, "store", json_null());
		json_object_set_new(*doc, "counts", json_null());
		json_object_set_new(*doc, "last_loop", json_null());
		strbuf_addf(text, "no store yet ('%s'): no loop has run on this project\n", path);
	} else {
		if (store_open_readonly(path, &s) || store_counts(s, &counts) || !(loop = last_loop(s)))
			goto out;
		json_object_set_new(*doc, "store", json_text(path));
		json_object_set_new(*doc, "counts", store_counts_json(&counts));
		json_object_set_new(*doc, "last_loop", loop);
		strbuf_addf(text, "store %s: %lld loops, %lld attempts\n", path, (long long)counts.loops,
			    (long long)counts.attempts);
		if (json_is_object(loop)) {
			char *dump = json_dumps(loop, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

			strbuf_addf(text, "last loop:\n%s\n", dump ? dump : "");
			free(dump);
		}
	}
	if (pid)
		strbuf_addf(text, "a loop is running now%s\n", pid > 0 ? "" : " (its pid is not known)");
	ret = 0;
out:
	if (ret) {
		json_decref(*doc);
		*doc = NULL;
	}
	if (s)
		store_close(s);
	free(path);
	project_release(&p);
	return ret;
}

/* ---- the table ---- */

#define S MCP_T_STRING
#define I MCP_T_INTEGER
#define N MCP_T_NUMBER
#define B MCP_T_BOOLEAN
#define SS MCP_T_STRINGS
#define II MCP_T_INTEGERS
#define O MCP_T_OBJECT
#define A MCP_T_ARRAY
#define ANY MCP_T_ANY
#define END { NULL, 0, NULL, 0, 0, false, NULL }
#define PEND { NULL, 0, false, false }

#define P_PROFILE { "profile", S, NULL, 0, 0, false, "a profile file inside the project (pprof, perf.data, " \
		    "perf script, callgrind.out, folded); default: the latest run's" }
#define P_RUN { "run", S, NULL, 0, 0, false, "a run id (from record, or the runs resources) whose " \
		"profile to read, instead of profile" }
#define P_WORKLOAD(what) { "workload", S, NULL, 0, 0, false, "the configured workload to " what \
			   " (hotloop.conf); default: the primary" }
#define P_COMMAND(what) { "command", SS, NULL, 0, 0, false, "a command line (program and arguments) to " \
			  what " instead of a workload; only when the server runs with --allow-commands" }

static const struct mcp_param record_params[] = {
	P_WORKLOAD("build and record"),
	P_COMMAND("record"),
	{ "build", B, NULL, 0, 0, false, "run [project] build first (default true; workloads only)" },
	{ "freq", I, NULL, 1, 100000, false, "samples per second (default 999)" },
	{ "call_graph", S, "auto|fp|dwarf", 0, 0, false, "how stacks are walked (default auto)" },
	{ "duration", N, NULL, 0, 1e6, false, "stop a command after this many seconds (0: when it ends)" },
	END
};
static const struct mcp_prop record_out[] = {
	{ "run", S, false, true }, { "dir", S, false, true }, { "profile", S, false, true },
	{ "workload", S, true, true }, { "command", S, false, true }, { "samples", I, false, true },
	{ "lost", I, false, true }, { "seconds", N, false, true }, { "exit_status", I, false, true },
	{ "resources", A, false, true }, PEND
};

static const struct mcp_param report_params[] = {
	P_PROFILE, P_RUN,
	{ "top", I, NULL, 0, 1e6, false, "rows to give (default 20; 0: all)" },
	{ "sort", S, "self|total", 0, 0, false, "rank by self (default) or total cost" },
	{ "by", S, "function|line|file|dso", 0, 0, false, "one row per function (default), line, file or DSO" },
	END
};
static const struct mcp_prop report_out[] = {
	{ "profile", S, false, true }, { "total", N, false, true }, { "stacks", N, false, true },
	{ "sample_type", S, false, true }, { "by", S, false, true }, { "sort", S, false, true },
	{ "rows", A, false, true }, { "rows_total", N, false, true }, { "no_inline", B, false, false }, PEND
};

static const struct mcp_param brief_params[] = {
	P_PROFILE, P_RUN,
	{ "workload", S, NULL, 0, 0, false, "the configured workload the profile is of (a run's own by default): "
	  "the header names it, its scale results join" },
	{ "budget", I, NULL, 0, 1e7, false, "tokens to fit in (default [project] brief-budget, 4000; 0: no limit)" },
	{ "top", I, NULL, 1, 1000, false, "at most this many hotspots (default 10)" },
	{ "focus", S, NULL, 0, 0, false, "only this owned function (exact name, else substring)" },
	{ "owned", SS, NULL, 0, 0, false, "directories whose code is ours (default: [project] owned, else the git top)" },
	END
};
static const struct mcp_prop brief_out[] = {
	{ "profile", S, false, true }, { "workload", S, true, true }, { "quality", O, false, true },
	{ "owned", O, false, true }, { "kb", O, true, true }, { "hotspots", A, false, true },
	{ "hot_path", A, false, true }, { "rollup", O, false, true }, { "truncated", B, false, true },
	{ "budget_tokens", N, false, true }, { "questions", A, false, false }, { "cut", ANY, false, false }, PEND
};

static const struct mcp_param flame_params[] = {
	P_PROFILE, P_RUN,
	{ "base", S, NULL, 0, 0, false, "a base profile: a differential graph (red grew, blue shrank)" },
	{ "output", S, NULL, 0, 0, false, "the SVG to write, inside the project (default: beside the profile)" },
	{ "title", S, NULL, 0, 0, false, "the graph's title" },
	{ "reverse", B, NULL, 0, 0, false, "merge stacks from the leaf (an icicle of callers)" },
	END
};
static const struct mcp_prop flame_out[] = {
	{ "svg", S, false, true }, { "profile", S, false, true }, { "base", S, true, true },
	{ "bytes", I, false, true }, { "differential", B, false, true }, PEND
};

static const struct mcp_param asm_params[] = {
	{ "binary", S, NULL, 0, 0, true, "the ELF file holding the function, inside the project" },
	{ "function", S, NULL, 0, 0, true, "the function's name (exact, else a unique substring)" },
	{ "profile", S, NULL, 0, 0, false, "a profile to annotate the instructions with their samples" },
	P_RUN,
	END
};
static const struct mcp_prop asm_out[] = {
	{ "binary", S, false, true }, { "arch", S, false, true }, { "function", S, false, true },
	{ "start", N, false, true }, { "end", N, false, true }, { "size", N, false, true },
	{ "instructions", A, false, true }, { "loops", A, false, true }, { "mix", O, false, true },
	{ "tags", A, false, true }, { "verdict", S, false, true }, { "samples", N, true, false }, PEND
};

static const struct mcp_param bench_params[] = {
	P_WORKLOAD("measure"),
	P_COMMAND("measure"),
	{ "runs", I, NULL, 1, 100000, false, "measured runs (default 10)" },
	{ "warmup", I, NULL, 0, 100000, false, "discarded runs first (default 1)" },
	{ "metric", S, "cpu|wall|instructions", 0, 0, false, "the metric summarized first (default cpu; "
	  "instructions under valgrind)" },
	{ "timeout", N, NULL, 0, 1e6, false, "seconds per run (default: the workload's; 0: none)" },
	END
};
static const struct mcp_prop bench_out[] = {
	{ "command", S, false, true }, { "workload", S, true, true }, { "metric", S, false, true },
	{ "complete", B, false, true }, { "warmup_runs", A, false, true }, { "runs", A, false, true },
	{ "summary", O, false, true }, { "machine", O, true, true }, { "warnings", A, false, true }, PEND
};

static const struct mcp_param compare_params[] = {
	{ "base", S, NULL, 0, 0, false, "the baseline: a git revision of the project (e.g. HEAD, main)" },
	{ "cand", S, NULL, 0, 0, false, "the candidate: a revision, or a directory as it is (default '.', "
	  "the working tree)" },
	{ "pairs", I, NULL, 1, 1000, false, "the budget of interleaved pairs (default: looks at 12, 24, 36)" },
	{ "no_build", B, NULL, 0, 0, false, "measure the trees as they are built now" },
	{ "no_test", B, NULL, 0, 0, false, "do not run [gate] test in the candidate" },
	{ "base_command", S, NULL, 0, 0, false, "a shell line as the baseline, instead of revisions "
	  "(--allow-commands)" },
	{ "cand_command", S, NULL, 0, 0, false, "a shell line as the candidate (with base_command)" },
	{ "no_fingerprint", B, NULL, 0, 0, false, "with commands: do not compare their outputs" },
	END
};
static const struct mcp_prop compare_out[] = {
	{ "verdict", S, false, true }, { "reasons", A, false, true }, { "base", O, true, true },
	{ "candidate", O, true, true }, { "primary", O, true, false }, { "guards", A, false, false },
	{ "interrupted", B, false, false }, { "pairs", N, false, false }, { "runs", A, false, false },
	{ "machine", O, true, false }, PEND
};

static const struct mcp_param scale_params[] = {
	P_WORKLOAD("run at sizes (its run line has {n})"),
	P_COMMAND("run at sizes, {n} where the size goes"),
	{ "sizes", II, NULL, 0, 0, false, "input sizes, at least 3 (default: the workload's sizes)" },
	{ "repeat", I, NULL, 1, 1000, false, "recordings per size, added up (default 1)" },
	END
};
static const struct mcp_prop scale_out[] = {
	{ "workload", S, false, true }, { "command", S, false, true }, { "sizes", A, false, true },
	{ "runs", A, false, true }, { "functions", A, false, true }, { "program", O, false, true }, PEND
};

static const struct mcp_param scenario_params[] = {
	{ "name", S, NULL, 0, 0, true, "the [scenario \"NAME\"] of hotloop.conf" },
	{ "profile", B, NULL, 0, 0, false, "also record a CPU profile of the judged phase" },
	END
};
static const struct mcp_prop scenario_out[] = {
	{ "scenario", S, false, true }, { "outcome", S, false, true }, { "error", S, true, true },
	{ "phases", A, false, true }, { "leak", O, false, true }, { "service", O, false, true },
	{ "wall_s", N, false, true }, { "files", O, false, false }, PEND
};

static const struct mcp_param kb_search_params[] = {
	{ "words", SS, NULL, 0, 0, false, "words every match holds (title, function, hypothesis, reasons)" },
	{ "function", S, NULL, 0, 0, false, "only attempts on this function (exact)" },
	{ "max", I, NULL, 1, 10000, false, "at most this many attempts (default 20)" },
	END
};
static const struct mcp_prop kb_search_out[] = {
	{ "kb", S, false, true }, { "total", I, false, true }, { "entries", I, false, true },
	{ "attempts", A, false, true }, PEND
};

static const struct mcp_param kb_show_params[] = {
	{ "slug", S, NULL, 0, 0, true, "the attempt's slug (its directory under kb/), or a unique prefix" },
	{ "diff", B, NULL, 0, 0, false, "with the change's diff" },
	END
};
static const struct mcp_prop kb_show_out[] = {
	{ "slug", S, false, true }, { "dir", S, false, true }, { "title", S, true, true },
	{ "function", S, true, true }, { "verdict", S, true, true }, { "reasons", A, false, true },
	{ "diff", S, true, false }, PEND
};

static const struct mcp_param none[] = { END };
static const struct mcp_prop loop_status_out[] = {
	{ "running", B, false, true }, { "pid", I, true, true }, { "store", S, true, true },
	{ "counts", O, true, true }, { "last_loop", O, true, true }, PEND
};

const struct mcp_tool mcp_tools[] = {
	{ "record", "Record a workload",
	  "Build a configured workload and sample its CPU stacks (perf events): a run with its profile, "
	  "report, flame graph and brief under .hotloop/runs/. Then call brief with the run.",
	  record_params, record_out, true, tool_record },
	{ "report", "Rank where the time went",
	  "The ranked table of a profile by function, source line, file or DSO, self or total cost.",
	  report_params, report_out, false, tool_report },
	{ "brief", "Where the time goes in owned code, and why",
	  "The brief of a profile: hotspots in code the project owns ranked by attributed cost (time in "
	  "libc or the kernel charged to the owned caller), hottest lines, callers, tags with evidence, "
	  "what the knowledge base knows, the hot path; within a token budget.",
	  brief_params, brief_out, false, tool_brief },
	{ "flame", "Draw a flame graph",
	  "Write a self-contained interactive SVG flame graph of a profile (or a differential one "
	  "against a base) inside the project, and say where.",
	  flame_params, flame_out, false, tool_flame },
	{ "asm", "One function's instructions",
	  "Disassemble one function, its hot instructions annotated with their share of a profile's "
	  "samples, its loops, instruction mix and a verdict (division, not vectorized, memory-bound...).",
	  asm_params, asm_out, false, tool_asm },
	{ "bench", "Measure a workload",
	  "Run a configured workload N times after warm-ups, each from a small launcher: CPU, wall, "
	  "peak RSS; median, MAD, CV and warnings about noise.",
	  bench_params, bench_out, true, tool_bench },
	{ "compare", "Is the candidate correct and faster?",
	  "Build a baseline revision and a candidate (a revision or the working tree) outside the "
	  "user's tree, run the tests, measure every configured workload in interleaved pairs and "
	  "decide keep, reject or inconclusive with every reason.",
	  compare_params, compare_out, true, tool_compare },
	{ "scale", "Growth with input size",
	  "Record a workload at several input sizes and fit each function's growth exponent "
	  "(count_pairs ~n^2.0 superlinear); the brief shows it afterwards.",
	  scale_params, scale_out, true, tool_scale },
	{ "scenario", "A service under load",
	  "Run a configured scenario: start the service, idle, pressure and idle phases with its load, "
	  "the resource timeline (CPU, RSS, threads, fds) and metrics per phase, whether memory came back.",
	  scenario_params, scenario_out, true, tool_scenario },
	{ "kb_search", "Search the knowledge base",
	  "Attempts of the improve loop, kept or rejected, by function and words: check before trying an "
	  "optimization, rejected ideas are kept so they are not tried again.",
	  kb_search_params, kb_search_out, false, tool_kb_search },
	{ "kb_show", "One attempt of the knowledge base",
	  "An attempt's report (what, hypothesis, results, verdict and reasons), and its diff.",
	  kb_show_params, kb_show_out, false, tool_kb_show },
	{ "loop_status", "The improve loop's state",
	  "Whether a loop runs on this project now, and the store's last loop with its attempts.",
	  none, loop_status_out, false, tool_loop_status },
};
const size_t mcp_nr_tools = ARRAY_SIZE(mcp_tools);

#undef S
#undef I
#undef N
#undef B
#undef SS
#undef II
#undef O
#undef A
#undef ANY

/* ---- resources ---- */

static json_t *resource(const char *uri, const char *name, const char *title, const char *mime)
{
	return json_pack("{s:o, s:o, s:o, s:s}", "uri", json_text(uri), "name", json_text(name),
			 "title", json_text(title), "mimeType", mime);
}

static int cmp_desc(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/* The ids of the project's runs, newest first (caller frees each and the array). */
static char **list_runs(const struct project *p, size_t *nr)
{
	char *dir = xstrfmt("%s/.hotloop/runs", p->top), **ids = NULL;
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t alloc = 0;

	*nr = 0;
	while (d && (de = readdir(d))) {
		char *path;
		struct stat st;

		if (!valid_id(de->d_name) || !strcmp(de->d_name, "latest"))
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		if (!lstat(path, &st) && S_ISDIR(st.st_mode)) {
			ALLOC_GROW(ids, *nr + 1, alloc);
			ids[(*nr)++] = xstrdup(de->d_name);
		}
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
	if (*nr)
		qsort(ids, *nr, sizeof(*ids), cmp_desc);
	return ids;
}

#define MAX_LISTED_RUNS 50

json_t *mcp_resources_list(struct mcp_call *c)
{
	json_t *list = json_array();
	struct project p;
	struct kb kb = KB_INIT;
	size_t nr;
	char **ids, *db;

	if (open_project(c, &p, false)) {
		json_decref(list);
		return NULL;
	}
	ids = list_runs(&p, &nr);
	for (size_t i = 0; i < nr; i++) {
		if (i < MAX_LISTED_RUNS) {
			char *uri = xstrfmt(URI_PREFIX "runs/%s", ids[i]);
			char *b = xstrfmt("%s/brief", uri), *r = xstrfmt("%s/report", uri);
			char *t = xstrfmt("run %s", ids[i]), *tb = xstrfmt("brief of run %s", ids[i]);
			char *tr = xstrfmt("report of run %s", ids[i]);

			json_array_append_new(list, resource(uri, ids[i], t, "application/json"));
			json_array_append_new(list, resource(b, ids[i], tb, "text/markdown"));
			json_array_append_new(list, resource(r, ids[i], tr, "text/plain"));
			free(uri);
			free(b);
			free(r);
			free(t);
			free(tb);
			free(tr);
		}
		free(ids[i]);
	}
	free(ids);
	{
		char *dir = p.conf_path ? project_kb_dir(&p) : xstrfmt("%s/kb", p.dir);

		if (!kb_load(dir, &kb)) {
			for (size_t i = 0; i < kb.nr; i++) {
				char *uri = xstrfmt(URI_PREFIX "kb/%s", kb.entries[i].slug);

				json_array_append_new(list, resource(uri, kb.entries[i].slug,
					kb.entries[i].title ? kb.entries[i].title : kb.entries[i].slug,
					"text/markdown"));
				free(uri);
			}
		}
		kb_release(&kb);
		free(dir);
	}
	db = store_file(c, &p);
	if (!access(db, R_OK))
		json_array_append_new(list, resource(URI_PREFIX "loop/latest", "loop/latest",
						     "the last loop and its attempts", "application/json"));
	free(db);
	project_release(&p);
	return list;
}

json_t *mcp_resource_templates(void)
{
	return json_pack("[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s},"
			 " {s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}]",
			 "uriTemplate", URI_PREFIX "runs/{id}", "name", "run", "description",
			 "a run's meta.json (workload, command, commit, ok)", "mimeType", "application/json",
			 "uriTemplate", URI_PREFIX "runs/{id}/brief", "name", "run-brief", "description",
			 "a run's brief (Markdown); id latest: the last run", "mimeType", "text/markdown",
			 "uriTemplate", URI_PREFIX "runs/{id}/report", "name", "run-report", "description",
			 "a run's report", "mimeType", "text/plain",
			 "uriTemplate", URI_PREFIX "brief/{+path}", "name", "profile-brief", "description",
			 "the brief of any profile inside the project (path from the project's directory)",
			 "mimeType", "text/markdown",
			 "uriTemplate", URI_PREFIX "report/{+path}", "name", "profile-report", "description",
			 "the report of any profile inside the project", "mimeType", "text/plain",
			 "uriTemplate", URI_PREFIX "kb/{slug}", "name", "kb-entry", "description",
			 "an attempt of the knowledge base (report.md)", "mimeType", "text/markdown");
}

/* %XX decoded; NULL for a bad escape or a NUL. */
static char *percent_decode(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	for (; *s; s++) {
		unsigned v;

		if (*s != '%') {
			strbuf_addch(&sb, *s);
			continue;
		}
		if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]) ||
		    sscanf(s + 1, "%2x", &v) != 1 || !v) {
			strbuf_release(&sb);
			return NULL;
		}
		strbuf_addch(&sb, (int)v);
		s += 2;
	}
	return strbuf_detach(&sb, NULL);
}

static json_t *text_contents(const char *uri, const char *mime, const char *text)
{
	return json_pack("[{s:o, s:s, s:o}]", "uri", json_text(uri), "mimeType", mime, "text", json_text(text));
}

/* A report or brief computed through its tool, for a profile path. */
static int profile_text(struct mcp_call *c, bool brief, const char *path, struct strbuf *text)
{
	json_t *args = json_pack("{s:s}", "profile", path), *doc = NULL;
	int ret = (brief ? tool_brief : tool_report)(c, args, &doc, text);

	json_decref(args);
	json_decref(doc);
	return ret;
}

int mcp_resource_read(struct mcp_call *c, const char *uri, json_t **contents, bool *not_found)
{
	struct strbuf text = STRBUF_INIT;
	struct project p;
	const char *rest, *mime = "text/plain";
	char *dir = NULL, *path = NULL, *id = NULL;
	int ret = -1;

	*not_found = false;
	*contents = NULL;
	if (open_project(c, &p, false))
		return -1;
	if (strncmp(uri, URI_PREFIX, strlen(URI_PREFIX))) {
		*not_found = true;
		error("unknown resource '%s': hotloop's URIs begin with " URI_PREFIX, uri);
		goto out;
	}
	rest = uri + strlen(URI_PREFIX);
	if (!strncmp(rest, "runs/", 5)) {
		const char *slash = strchr(rest + 5, '/'), *what = slash ? slash + 1 : "";

		id = slash ? xstrndup(rest + 5, (size_t)(slash - rest - 5)) : xstrdup(rest + 5);
		if (!(dir = run_dir(&p, id))) {
			*not_found = true;
			goto out;
		}
		if (!*what) {
			path = xstrfmt("%s/meta.json", dir);
			mime = "application/json";
			if (access(path, R_OK)) {
				json_t *doc = json_pack("{s:o, s:o, s:o}", "id", json_text(id), "dir", json_text(dir),
							"workload", json_null());
				char *s = json_dumps(doc, JSON_INDENT(2));

				strbuf_addstr(&text, s);
				free(s);
				json_decref(doc);
			} else if (read_file(&text, path, 1 << 20)) {
				goto out;
			}
		} else if (!strcmp(what, "brief") || !strcmp(what, "report")) {
			bool brief = !strcmp(what, "brief");

			free(path);
			path = xstrfmt("%s/%s", dir, brief ? "brief.md" : "report.txt");
			mime = brief ? "text/markdown" : "text/plain";
			if (!access(path, R_OK)) {
				if (read_file(&text, path, 64 << 20))
					goto out;
			} else {
				free(path);
				path = xstrfmt("%s/profile.pb.gz", dir);
				if (profile_text(c, brief, path, &text))
					goto out;
			}
		} else {
			*not_found = true;
			error("unknown resource '%s': a run has %s, %s/brief and %s/report", uri, id, id, id);
			goto out;
		}
	} else if (!strncmp(rest, "brief/", 6) || !strncmp(rest, "report/", 7)) {
		bool brief = rest[0] == 'b';

		if (!(path = percent_decode(rest + (brief ? 6 : 7))) || !*path) {
			*not_found = true;
			error("unknown resource '%s': expected a profile's path after %s/", uri, brief ? "brief" : "report");
			goto out;
		}
		mime = brief ? "text/markdown" : "text/plain";
		if (profile_text(c, brief, path, &text))
			goto out;
	} else if (!strncmp(rest, "kb/", 3)) {
		struct kb kb = KB_INIT;
		const struct kb_entry *e;
		char *kdir = p.conf_path ? project_kb_dir(&p) : xstrfmt("%s/kb", p.dir);

		if (!kb_load(kdir, &kb)) {
			if (!(e = kb_lookup(&kb, rest + 3))) {
				*not_found = true;
				error("unknown resource '%s': no attempt '%s' in '%s'", uri, rest + 3, kb.dir);
			} else {
				kb_format_report(e, &text);
				mime = "text/markdown";
				ret = 0;
			}
		}
		kb_release(&kb);
		free(kdir);
		if (ret)
			goto out;
	} else if (!strcmp(rest, "loop/latest")) {
		struct store *s;
		json_t *loop;
		char *db = store_file(c, &p), *dump;

		if (access(db, R_OK)) {
			*not_found = true;
			error("unknown resource '%s': no store '%s' (no loop has run)", uri, db);
			free(db);
			goto out;
		}
		if (store_open_readonly(db, &s)) {
			free(db);
			goto out;
		}
		loop = last_loop(s);
		store_close(s);
		free(db);
		if (!loop)
			goto out;
		dump = json_dumps(loop, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
		strbuf_addstr(&text, dump ? dump : "null");
		free(dump);
		json_decref(loop);
		mime = "application/json";
	} else {
		*not_found = true;
		error("unknown resource '%s': resources/templates/list gives the forms", uri);
		goto out;
	}
	*contents = text_contents(uri, mime, text.buf);
	ret = 0;
out:
	strbuf_release(&text);
	project_release(&p);
	free(dir);
	free(path);
	free(id);
	return ret;
}
