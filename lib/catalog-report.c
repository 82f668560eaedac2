/*
 * catalog-report.c: catalog findings as text lines, hotloop's JSON, SARIF
 * 2.1.0 (runs[0].tool.driver.rules from the catalog's entries) and GitHub
 * Actions workflow commands (::warning file=...::message), one function for
 * every command that reports findings.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog-report.h"
#include "json.h"
#include "strbuf.h"
#include "util.h"

int cat_format_parse(const char *s, enum cat_format *out)
{
	static const char *const names[] = { "text", "json", "sarif", "github" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum cat_format)i;
			return 0;
		}
	}
	return -1;
}

static int dump(json_t *doc, struct strbuf *out)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));

	json_decref(doc);
	if (!s)
		return error("cannot write the findings as JSON");
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
	return 0;
}

static const char *sarif_level(enum cat_severity s)
{
	switch (s) {
	case CAT_SEV_ERROR:
		return "error";
	case CAT_SEV_WARNING:
		return "warning";
	default:
		return "note";
	}
}

/* A relative URI reference of a path (RFC 3986: unreserved bytes and '/' kept) */
static void add_uri(struct strbuf *sb, const char *path)
{
	const char *p = path;

	if (*p == '/')
		strbuf_addstr(sb, "file://");
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c))
			strbuf_addch(sb, c);
		else
			strbuf_addf(sb, "%%%02X", c);
	}
}

static json_t *sarif_text(const char *s)
{
	return json_pack("{s:o}", "text", json_text(s));
}

static json_t *sarif_rule(const struct cat_entry *e)
{
	struct strbuf help = STRBUF_INIT;
	json_t *rule, *tags = json_array();

	if (e->hint)
		strbuf_addf(&help, "%s\n", e->hint);
	if (e->anti_pattern)
		strbuf_addf(&help, "\nInstead of:\n\n%s", e->anti_pattern);
	if (e->good_pattern)
		strbuf_addf(&help, "\nwrite:\n\n%s", e->good_pattern);
	for (int l = 0; l < CAT_LANG_NR; l++)
		if (e->lang[l])
			json_array_append_new(tags, json_string(cat_lang_name(l)));
	json_array_append_new(tags, json_string("performance"));
	rule = json_pack("{s:o, s:o, s:o, s:o, s:{s:s}, s:{s:f, s:o, s:s}}",
		"id", json_text(e->id),
		"shortDescription", sarif_text(e->hint ? e->hint : e->id),
		"fullDescription", sarif_text(e->message),
		"help", sarif_text(help.len ? help.buf : e->message),
		"defaultConfiguration", "level", sarif_level(e->severity),
		"properties", "confidence", e->confidence, "tags", tags,
		"severity", cat_severity_name(e->severity));
	strbuf_release(&help);
	return rule;
}

static int write_sarif(const struct cat_check *r, const struct catalog *cat,
		       const struct cat_report_opts *o, struct strbuf *out)
{
	json_t *rules = json_array(), *results = json_array(), *doc;

	for (size_t i = 0; i < cat->nr; i++)
		json_array_append_new(rules, sarif_rule(&cat->entries[i]));
	for (size_t i = 0; i < r->nr; i++) {
		const struct cat_finding *f = &r->findings[i];
		struct strbuf uri = STRBUF_INIT;
		json_int_t index = -1;

		for (size_t j = 0; j < cat->nr; j++)
			if (!strcmp(cat->entries[j].id, f->rule_id))
				index = (json_int_t)j;
		add_uri(&uri, f->file);
		json_t *res = json_pack("{s:o, s:s, s:o, s:[{s:{s:{s:o}, s:{s:I, s:I, s:I, s:I}}}], s:{s:f}}",
			"ruleId", json_text(f->rule_id), "level", sarif_level(f->severity),
			"message", sarif_text(f->message),
			"locations", "physicalLocation", "artifactLocation", "uri", json_text(uri.buf),
			"region", "startLine", (json_int_t)f->line, "startColumn", (json_int_t)f->column,
			"endLine", (json_int_t)f->end_line, "endColumn", (json_int_t)f->end_column,
			"properties", "confidence", f->confidence);
		if (index >= 0)
			json_object_set_new(res, "ruleIndex", json_integer(index));
		if (f->function)
			json_object_set_new(json_object_get(res, "properties"), "function", json_text(f->function));
		if (o && o->profiled) {
			json_t *props = json_object_get(res, "properties");

			json_object_set_new(props, "sampled", json_boolean(f->sampled));
			json_object_set_new(props, "selfShare", json_real(f->self_share));
			json_object_set_new(props, "totalShare", json_real(f->total_share));
			/* SARIF's rank, 0 to 100: the function's total share in percent */
			json_object_set_new(res, "rank", json_real(f->total_share * 100));
		}
		json_array_append_new(results, res);
		strbuf_release(&uri);
	}
	doc = json_pack("{s:s, s:s, s:[{s:{s:{s:s, s:s, s:o}}, s:o}]}",
		"$schema", "https://json.schemastore.org/sarif-2.1.0.json", "version", "2.1.0",
		"runs", "tool", "driver", "name", "hotloop",
		"version", o && o->tool_version ? o->tool_version : "0",
		"rules", rules, "results", results);
	if (!doc)
		return error("cannot build the SARIF document");
	return dump(doc, out);
}

/* GitHub's escaping of workflow-command data and, with 'prop', of a property's value */
static void add_gh(struct strbuf *sb, const char *s, bool prop)
{
	for (; *s; s++) {
		if (*s == '%')
			strbuf_addstr(sb, "%25");
		else if (*s == '\r')
			strbuf_addstr(sb, "%0D");
		else if (*s == '\n')
			strbuf_addstr(sb, "%0A");
		else if (prop && *s == ':')
			strbuf_addstr(sb, "%3A");
		else if (prop && *s == ',')
			strbuf_addstr(sb, "%2C");
		else
			strbuf_addch(sb, *s);
	}
}

static void write_github(const struct cat_check *r, struct strbuf *out)
{
	for (size_t i = 0; i < r->nr; i++) {
		const struct cat_finding *f = &r->findings[i];
		const char *cmd = f->severity == CAT_SEV_ERROR ? "error" :
				  f->severity == CAT_SEV_WARNING ? "warning" : "notice";
		const char *file = f->file;

		while (file[0] == '.' && file[1] == '/')
			file += 2;
		strbuf_addf(out, "::%s file=", cmd);
		add_gh(out, file, true);
		strbuf_addf(out, ",line=%u,col=%u,endLine=%u,endColumn=%u,title=", f->line, f->column,
			    f->end_line, f->end_column);
		add_gh(out, f->rule_id, true);
		strbuf_addstr(out, "::");
		add_gh(out, f->message, false);
		strbuf_addch(out, '\n');
	}
}

/* The text lines, each after its function's shares */
static void write_text_ranked(const struct cat_check *r, struct strbuf *out)
{
	for (size_t i = 0; i < r->nr; i++) {
		const struct cat_finding *f = &r->findings[i];

		if (f->sampled)
			strbuf_addf(out, "%5.1f%% total %5.1f%% self  ", f->total_share * 100, f->self_share * 100);
		else
			strbuf_addstr(out, "  no samples          ");
		strbuf_addf(out, "%s:%u:%u: %s: %s [%s]", f->file, f->line, f->column,
			    cat_severity_name(f->severity), f->message, f->rule_id);
		if (f->function)
			strbuf_addf(out, " in %s()", f->function);
		strbuf_addch(out, '\n');
	}
}

int cat_report_write(const struct cat_check *r, const struct catalog *cat, enum cat_format fmt,
		     const struct cat_report_opts *o, struct strbuf *out)
{
	json_t *doc;

	switch (fmt) {
	case CAT_FMT_TEXT:
		if (o && o->profiled) {
			write_text_ranked(r, out);
			return 0;
		}
		cat_check_format_text(r, out);
		return 0;
	case CAT_FMT_JSON:
		doc = cat_check_to_json(r);
		for (size_t i = 0; i < r->nr; i++) {
			const struct cat_finding *f = &r->findings[i];
			json_t *j = json_array_get(json_object_get(doc, "findings"), i);

			json_object_set_new(j, "function", json_text(f->function));
			if (o && o->profiled) {
				json_object_set_new(j, "sampled", json_boolean(f->sampled));
				json_object_set_new(j, "self_share", json_real(f->self_share));
				json_object_set_new(j, "total_share", json_real(f->total_share));
			}
		}
		json_object_set_new(doc, "severity", json_string(cat_severity_name(o ? o->min : CAT_SEV_WARNING)));
		json_object_set_new(doc, "entries", json_integer((json_int_t)cat->nr));
		return dump(doc, out);
	case CAT_FMT_SARIF:
		return write_sarif(r, cat, o, out);
	case CAT_FMT_GITHUB:
		write_github(r, out);
		return 0;
	}
	return error("unknown output format %d", (int)fmt);
}
