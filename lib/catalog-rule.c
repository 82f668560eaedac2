/*
 * catalog-rule.c: the reader of catalog entries (JSON, one file per
 * pattern) and of their rules; every unknown key, wrong type or bad value
 * is an error naming the file and the field's path (rule.all[1].has.kind).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog-rule.h"
#include "strbuf.h"
#include "util.h"

#define CAT_MAX_FILE (1 << 20)
#define CAT_MAX_DEPTH 64

static const char *const sev_names[] = { "hint", "info", "warning", "error" };
static const char *const lang_names[] = { "c", "cpp" };
static const char *const rel_names[] = { "has", "inside", "follows", "precedes" };

const char *cat_severity_name(enum cat_severity s)
{
	return sev_names[s];
}

int cat_severity_parse(const char *s, enum cat_severity *out)
{
	int i = name_index(sev_names, 4, s);

	if (i < 0)
		return -1;
	*out = i;
	return 0;
}

const char *cat_lang_name(enum cat_lang l)
{
	return lang_names[l];
}

int cat_lang_of_path(const char *path)
{
	const char *dot = strrchr(path, '.');
	static const char *const cpp[] = { ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".C", ".H" };

	if (!dot || strchr(dot, '/'))
		return -1;
	if (!strcmp(dot, ".c") || !strcmp(dot, ".h"))
		return CAT_LANG_C;
	for (size_t i = 0; i < sizeof(cpp) / sizeof(*cpp); i++)
		if (!strcmp(dot, cpp[i]))
			return CAT_LANG_CPP;
	return -1;
}

struct reader {
	const char *path;
	struct strbuf field;	/* the path of the field being read */
};

static int bad(struct reader *r, const char *what)
{
	return error("%s: field '%s': %s", r->path, r->field.buf, what);
}

static size_t push(struct reader *r, const char *key)
{
	size_t old = r->field.len;

	if (old)
		strbuf_addch(&r->field, '.');
	strbuf_addstr(&r->field, key);
	return old;
}

static size_t push_index(struct reader *r, size_t i)
{
	size_t old = r->field.len;

	strbuf_addf(&r->field, "[%zu]", i);
	return old;
}

static int get_string(struct reader *r, json_t *v, char **out)
{
	if (!json_is_string(v))
		return bad(r, "must be a string");
	if (!json_string_length(v))
		return bad(r, "must not be empty");
	if (strlen(json_string_value(v)) != json_string_length(v))
		return bad(r, "must not hold a NUL character");
	*out = xstrdup(json_string_value(v));
	return 0;
}

/* A list of non-empty strings */
static int get_strings(struct reader *r, json_t *v, char ***out, size_t *nr)
{
	size_t i;
	json_t *s;

	if (!json_is_array(v))
		return bad(r, "must be a list of strings");
	*out = xcalloc(json_array_size(v) + 1, sizeof(char *));
	json_array_foreach(v, i, s) {
		size_t old = push_index(r, i);

		if (get_string(r, s, &(*out)[i]))
			return -1;
		*nr = i + 1;
		strbuf_setlen(&r->field, old);
	}
	return 0;
}

/* Code: a string, or a list of lines */
static int get_code(struct reader *r, json_t *v, char **out)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	json_t *s;

	if (json_is_string(v))
		return get_string(r, v, out);
	if (!json_is_array(v) || !json_array_size(v))
		return bad(r, "must be a string or a non-empty list of lines");
	json_array_foreach(v, i, s) {
		if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s)) {
			strbuf_release(&sb);
			push_index(r, i);
			return bad(r, "must be a string");
		}
		strbuf_addf(&sb, "%s\n", json_string_value(s));
	}
	*out = strbuf_detach(&sb, NULL);
	return 0;
}

static void rule_release(struct cat_rule *rule);

static int read_rule(struct reader *r, json_t *obj, struct cat_rule *rule, int depth);

static int read_rules(struct reader *r, json_t *v, struct cat_rule **out, size_t *nr, int depth)
{
	size_t i;
	json_t *item;

	if (!json_is_array(v) || !json_array_size(v))
		return bad(r, "must be a non-empty list of rules");
	*out = xcalloc(json_array_size(v), sizeof(**out));
	json_array_foreach(v, i, item) {
		size_t old = push_index(r, i);

		*nr = i + 1;
		if (read_rule(r, item, &(*out)[i], depth + 1))
			return -1;
		strbuf_setlen(&r->field, old);
	}
	return 0;
}

static int read_relation(struct reader *r, json_t *obj, struct cat_relation *rel, bool fields, int depth)
{
	json_t *stop = json_object_get(obj, "stopBy"), *field = json_object_get(obj, "field");
	json_t *copy;
	int ret;

	if (!json_is_object(obj))
		return bad(r, "must be a rule object");
	if (stop) {
		size_t old = push(r, "stopBy");

		if (!json_is_string(stop) ||
		    (strcmp(json_string_value(stop), "neighbor") && strcmp(json_string_value(stop), "end")))
			return bad(r, "must be \"neighbor\" or \"end\"");
		rel->stop_end = !strcmp(json_string_value(stop), "end");
		strbuf_setlen(&r->field, old);
	}
	if (field) {
		size_t old = push(r, "field");

		if (!fields)
			return bad(r, "only has and inside take a field");
		if (get_string(r, field, &rel->field))
			return -1;
		strbuf_setlen(&r->field, old);
	}
	/* the rest of the object is the other node's rule */
	copy = json_copy(obj);
	json_object_del(copy, "stopBy");
	json_object_del(copy, "field");
	rel->rule = xcalloc(1, sizeof(*rel->rule));
	ret = read_rule(r, copy, rel->rule, depth + 1);
	json_decref(copy);
	return ret;
}

static int read_rule(struct reader *r, json_t *obj, struct cat_rule *rule, int depth)
{
	const char *key;
	json_t *v;
	bool any_part = false;

	if (depth > CAT_MAX_DEPTH)
		return bad(r, "rules nest too deep");
	if (!json_is_object(obj))
		return bad(r, "must be a rule object");
	json_object_foreach(obj, key, v) {
		size_t old = push(r, key);
		int rel = name_index(rel_names, CAT_REL_NR, key);

		any_part = true;
		if (!strcmp(key, "kind")) {
			if (get_string(r, v, &rule->kind))
				return -1;
			for (const char *p = rule->kind; *p; p++)
				if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
					return bad(r, "a node kind is lowercase letters, digits and '_'");
		} else if (!strcmp(key, "pattern")) {
			if (get_string(r, v, &rule->pattern))
				return -1;
			rule->pattern_field = xstrdup(r->field.buf);
		} else if (!strcmp(key, "regex")) {
			int rc;

			if (get_string(r, v, &rule->regex_src))
				return -1;
			if ((rc = regcomp(&rule->regex, rule->regex_src, REG_EXTENDED | REG_NOSUB))) {
				char msg[128];

				regerror(rc, &rule->regex, msg, sizeof(msg));
				free(rule->regex_src);
				rule->regex_src = NULL;
				return error("%s: field '%s': not a POSIX extended regular expression: %s",
					     r->path, r->field.buf, msg);
			}
		} else if (rel >= 0) {
			if (read_relation(r, v, &rule->rel[rel], rel <= CAT_REL_INSIDE, depth))
				return -1;
		} else if (!strcmp(key, "all")) {
			if (read_rules(r, v, &rule->all, &rule->nr_all, depth))
				return -1;
		} else if (!strcmp(key, "any")) {
			if (read_rules(r, v, &rule->any, &rule->nr_any, depth))
				return -1;
		} else if (!strcmp(key, "not")) {
			rule->not = xcalloc(1, sizeof(*rule->not));
			if (read_rule(r, v, rule->not, depth + 1))
				return -1;
		} else {
			return bad(r, "unknown rule key: use kind, pattern, regex, has, inside, "
				      "follows, precedes, all, any or not");
		}
		strbuf_setlen(&r->field, old);
	}
	if (!any_part)
		return bad(r, "an empty rule matches everything: give kind, pattern or another part");
	return 0;
}

static void relation_release(struct cat_relation *rel)
{
	if (rel->rule) {
		rule_release(rel->rule);
		free(rel->rule);
	}
	free(rel->field);
}

static void rule_release(struct cat_rule *rule)
{
	free(rule->kind);
	free(rule->pattern);
	free(rule->pattern_field);
	if (rule->regex_src)
		regfree(&rule->regex);
	free(rule->regex_src);
	for (int i = 0; i < CAT_REL_NR; i++)
		relation_release(&rule->rel[i]);
	for (size_t i = 0; i < rule->nr_all; i++)
		rule_release(&rule->all[i]);
	free(rule->all);
	for (size_t i = 0; i < rule->nr_any; i++)
		rule_release(&rule->any[i]);
	free(rule->any);
	if (rule->not) {
		rule_release(rule->not);
		free(rule->not);
	}
	for (int i = 0; i < CAT_LANG_NR; i++)
		if (rule->compiled[i])
			rule->compiled_free(rule->compiled[i]);
	memset(rule, 0, sizeof(*rule));
}

static void free_strings(char **v, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(v[i]);
	free(v);
}

void cat_entry_release(struct cat_entry *e)
{
	free(e->path);
	free(e->id);
	free(e->hint);
	free(e->message);
	free_strings(e->symbols, e->nr_symbols);
	free_strings(e->kb, e->nr_kb);
	free_strings(e->repos, e->nr_repos);
	free(e->anti_pattern);
	free(e->good_pattern);
	rule_release(&e->rule);
	memset(e, 0, sizeof(*e));
}

static int read_confirmed(struct reader *r, json_t *v, struct cat_entry *e)
{
	const char *key;
	json_t *x;

	if (!json_is_object(v))
		return bad(r, "must be an object with kb and repositories");
	json_object_foreach(v, key, x) {
		size_t old = push(r, key);

		if (!strcmp(key, "kb")) {
			if (get_strings(r, x, &e->kb, &e->nr_kb))
				return -1;
		} else if (!strcmp(key, "repositories")) {
			if (get_strings(r, x, &e->repos, &e->nr_repos))
				return -1;
		} else {
			return bad(r, "unknown key: use kb or repositories");
		}
		strbuf_setlen(&r->field, old);
	}
	return 0;
}

static int read_entry(struct reader *r, json_t *doc, struct cat_entry *e)
{
	static const char *const required[] = { "id", "message", "languages", "rule" };
	const char *key;
	json_t *v;

	if (!json_is_object(doc))
		return error("%s: not a catalog entry: the file must hold one JSON object", r->path);
	for (size_t i = 0; i < sizeof(required) / sizeof(*required); i++)
		if (!json_object_get(doc, required[i]))
			return error("%s: field '%s' is missing", r->path, required[i]);
	e->severity = CAT_SEV_WARNING;
	e->confidence = 0.5;
	json_object_foreach(doc, key, v) {
		size_t old = push(r, key);

		if (!strcmp(key, "id")) {
			if (get_string(r, v, &e->id))
				return -1;
			for (const char *p = e->id; *p; p++)
				if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
					return bad(r, "an id is lowercase letters, digits and '-'");
		} else if (!strcmp(key, "hint")) {
			if (get_string(r, v, &e->hint))
				return -1;
		} else if (!strcmp(key, "message")) {
			if (get_string(r, v, &e->message))
				return -1;
		} else if (!strcmp(key, "languages")) {
			size_t i;
			json_t *l;

			if (!json_is_array(v) || !json_array_size(v))
				return bad(r, "must be a non-empty list: \"c\", \"cpp\"");
			json_array_foreach(v, i, l) {
				int n = json_is_string(l) ? name_index(lang_names, CAT_LANG_NR, json_string_value(l)) : -1;

				if (n < 0) {
					push_index(r, i);
					return bad(r, "a language is \"c\" or \"cpp\"");
				}
				e->lang[n] = true;
			}
		} else if (!strcmp(key, "severity")) {
			if (!json_is_string(v) || cat_severity_parse(json_string_value(v), &e->severity))
				return bad(r, "must be \"error\", \"warning\", \"info\" or \"hint\"");
		} else if (!strcmp(key, "confidence")) {
			if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 1))
				return bad(r, "must be a number from 0 to 1");
			e->confidence = json_number_value(v);
		} else if (!strcmp(key, "symbols")) {
			if (get_strings(r, v, &e->symbols, &e->nr_symbols))
				return -1;
		} else if (!strcmp(key, "confirmed")) {
			if (read_confirmed(r, v, e))
				return -1;
		} else if (!strcmp(key, "anti_pattern")) {
			if (get_code(r, v, &e->anti_pattern))
				return -1;
		} else if (!strcmp(key, "good_pattern")) {
			if (get_code(r, v, &e->good_pattern))
				return -1;
		} else if (!strcmp(key, "rule")) {
			if (read_rule(r, v, &e->rule, 0))
				return -1;
		} else {
			return bad(r, "unknown key: use id, hint, languages, severity, confidence, "
				      "message, symbols, confirmed, rule, anti_pattern or good_pattern");
		}
		strbuf_setlen(&r->field, old);
	}
	return 0;
}

int cat_entry_parse(struct cat_entry *e, const char *path, const char *text, size_t len)
{
	struct reader r = { path, STRBUF_INIT };
	json_error_t jerr;
	json_t *doc;
	int ret;

	memset(e, 0, sizeof(*e));
	e->path = xstrdup(path);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		ret = error("%s:%d:%d: not valid JSON: %s", path, jerr.line, jerr.column, jerr.text);
	} else {
		ret = read_entry(&r, doc, e);
		json_decref(doc);
	}
	strbuf_release(&r.field);
	if (ret)
		cat_entry_release(e);
	return ret;
}

int cat_entry_read(struct cat_entry *e, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	memset(e, 0, sizeof(*e));
	if (read_file(&sb, path, CAT_MAX_FILE)) {
		strbuf_release(&sb);
		return -1;
	}
	ret = cat_entry_parse(e, path, sb.buf, sb.len);
	strbuf_release(&sb);
	return ret;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int catalog_load_dir(struct catalog *c, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	if (!d)
		return error("cannot open catalog '%s': %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n > 5 && !strcmp(de->d_name + n - 5, ".json") && de->d_name[0] != '.') {
			ALLOC_GROW(names, nr + 1, alloc);
			names[nr++] = xstrfmt("%s/%s", dir, de->d_name);
		}
	}
	closedir(d);
	qsort(names, nr, sizeof(*names), by_name);
	for (size_t i = 0; i < nr && !ret; i++) {
		struct cat_entry e;
		size_t j;

		if (cat_entry_read(&e, names[i])) {
			ret = -1;
			break;
		}
		for (j = 0; j < c->nr; j++)
			if (!strcmp(c->entries[j].id, e.id))
				break;
		if (j < c->nr) {
			cat_entry_release(&c->entries[j]);
			c->entries[j] = e;
		} else {
			ALLOC_GROW(c->entries, c->nr + 1, c->alloc);
			c->entries[c->nr++] = e;
		}
	}
	free_strings(names, nr);
	return ret;
}

void catalog_release(struct catalog *c)
{
	for (size_t i = 0; i < c->nr; i++)
		cat_entry_release(&c->entries[i]);
	free(c->entries);
	c->entries = NULL;
	c->nr = c->alloc = 0;
}
