/*
 * catalog-report.h: a list of catalog findings written in one of the forms
 * that `catalog scan`, `check` and `review` offer: text lines, hotloop's
 * JSON, SARIF 2.1.0 for code-scanning tools, GitHub Actions annotations.
 * The caller owns the findings, the catalog and the output buffer.
 */
#ifndef HOTLOOP_CATALOG_REPORT_H
#define HOTLOOP_CATALOG_REPORT_H

#include "catalog-match.h"
#include "catalog-rule.h"

struct strbuf;

enum cat_format { CAT_FMT_TEXT, CAT_FMT_JSON, CAT_FMT_SARIF, CAT_FMT_GITHUB };

/* "text", "json", "sarif", "github": 0, or -1 (no message) */
int cat_format_parse(const char *s, enum cat_format *out);

struct cat_report_opts {
	enum cat_severity min;		/* --severity, said in the JSON */
	const char *tool_version;	/* SARIF's driver.version */
	bool profiled;			/* the findings were ranked (cat_check_rank()): say the shares */
};

/*
 * Append the findings of 'r' (entries of 'cat' give SARIF its rules) to
 * 'out' in form 'fmt'. File names are used as the findings hold them;
 * SARIF's artifact URIs are relative to the current directory (the root
 * scanned) unless absolute, percent-encoded. 0, or -1 with an error.
 */
int cat_report_write(const struct cat_check *r, const struct catalog *cat, enum cat_format fmt,
		     const struct cat_report_opts *o, struct strbuf *out);

#endif
