/*
 * catalog-review.c: `catalog review` (see catalog-review.h): git's diff of
 * the working tree or the index parsed into changed lines, each changed C
 * or C++ file matched whole (a rule needs the code around a line) and its
 * findings kept where they touch a changed line.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog-review.h"
#include "git.h"
#include "run-command.h"
#include "strbuf.h"
#include "util.h"

/* The largest diff read: a review of more is not a review */
#define REVIEW_MAX_DIFF (256u << 20)

const char *review_base_how_name(enum review_base_how how)
{
	static const char *const names[] = { "given", "upstream", "head", "empty" };

	return names[how];
}

/* git -C top ARGS... with its stdout and stderr in file 'path' (truncated); true when it exited 0 */
static int git_to_file(const char *top, const char *path, const char *const *args, struct strbuf *err)
{
	const char *argv[24];
	struct child_process cp = CHILD_PROCESS_INIT;
	size_t n = 0;
	int ret;

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = top;
	while (*args && n < sizeof(argv) / sizeof(*argv) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	cp.argv = argv;
	cp.out_file = path;
	ret = run_command(&cp);
	if (!ret && !child_succeeded(&cp)) {
		struct strbuf out = STRBUF_INIT;

		if (err) {
			read_file(&out, path, RUN_COMMAND_KEEP);
			output_tail(&out, 4, err);
		}
		strbuf_release(&out);
		ret = -1;
	}
	child_process_release(&cp);
	return ret;
}

/* The commit to compare with, and how it was chosen; 0 or -1 with an error */
static int find_base(const char *top, const char *base, struct review_result *out)
{
	struct strbuf sb = STRBUF_INIT;
	char *up = NULL;
	int ret = 0;

	if (base) {
		char *rev;

		if (!*base || *base == '-')
			return error("invalid --base '%s': give a revision", base);
		rev = xstrfmt("%s^{commit}", base);
		out->base = git_rev_parse(top, rev);
		free(rev);
		out->how = REVIEW_BASE_GIVEN;
		if (!out->base)
			return error("cannot resolve --base '%s': not a commit in '%s'", base, top);
		return 0;
	}
	out->how = REVIEW_BASE_HEAD;
	if (!(out->base = git_rev_parse(top, "HEAD^{commit}"))) {
		out->how = REVIEW_BASE_EMPTY;
		if (git_run(top, &sb, "find the empty tree", "hash-object", "-t", "tree", "/dev/null", NULL))
			ret = -1;
		strbuf_rtrim(&sb);
		out->base = strbuf_detach(&sb, NULL);
		return ret;
	}
	if ((up = git_rev_parse(top, "@{upstream}"))) {
		if (!git_run(top, &sb, NULL, "merge-base", out->base, up, NULL)) {
			strbuf_rtrim(&sb);
			if (sb.len >= 40 && strspn(sb.buf, "0123456789abcdef") == sb.len) {
				free(out->base);
				out->base = strbuf_detach(&sb, NULL);
				out->how = REVIEW_BASE_UPSTREAM;
				strbuf_reset(&sb);
				if (!git_run(top, &sb, NULL, "rev-parse", "--abbrev-ref", "@{upstream}", NULL)) {
					strbuf_rtrim(&sb);
					out->upstream = strbuf_detach(&sb, NULL);
				}
			}
		}
		free(up);
	}
	strbuf_release(&sb);
	return ret;
}

static void note(struct cat_check *r, const char *fmt, ...) ATTR_PRINTF(2, 3);
static void note(struct cat_check *r, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(r->notes, r->nr_notes + 1, r->alloc_notes);
	r->notes[r->nr_notes++] = strbuf_detach(&sb, NULL);
}

/* The new side of f: from the index, or the working tree (a regular file only); 0, or 1 noted as skipped */
static int read_new_side(const char *top, const struct review_file *f, bool cached, const char *tmp,
			 struct strbuf *src, struct cat_check *out)
{
	struct strbuf why = STRBUF_INIT;

	if (cached) {
		char *spec = xstrfmt(":%s", f->path);
		const char *args[] = { "cat-file", "blob", spec, NULL };
		int rc = git_to_file(top, tmp, args, &why);

		free(spec);
		if (rc) {
			note(out, "%s: skipped: cannot read it from the index%s", f->path, why.buf);
			goto skipped;
		}
		if (read_file(src, tmp, CAT_MAX_SOURCE)) {
			clear_last_error();
			note(out, "%s: skipped: more than the %u MiB a source file may have", f->path,
			     CAT_MAX_SOURCE >> 20);
			goto skipped;
		}
	} else {
		char *path = xstrfmt("%s/%s", top, f->path);
		struct stat st;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);

		free(path);
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			note(out, "%s: skipped: %s", f->path,
			     fd < 0 && errno != ELOOP ? strerror(errno) : "not a regular file");
			if (fd >= 0)
				close(fd);
			goto skipped;
		}
		if (st.st_size > (off_t)CAT_MAX_SOURCE || strbuf_read_fd(src, fd, CAT_MAX_SOURCE + 1) < 0 ||
		    src->len > CAT_MAX_SOURCE) {
			close(fd);
			note(out, "%s: skipped: cannot read it, or more than the %u MiB a source file may have",
			     f->path, CAT_MAX_SOURCE >> 20);
			goto skipped;
		}
		close(fd);
	}
	if (memchr(src->buf, '\0', src->len)) {
		note(out, "%s: skipped: a binary file (it holds NUL bytes)", f->path);
		goto skipped;
	}
	strbuf_release(&why);
	return 0;
skipped:
	out->skipped++;
	strbuf_release(&why);
	return 1;
}

/* Match one changed file; keep the findings that touch its changed lines */
static int review_file(struct catalog *c, const char *top, const struct review_file *f, bool cached,
		       const char *tmp, struct cat_check *out)
{
	struct cat_check all = CAT_CHECK_INIT;
	struct strbuf src = STRBUF_INIT;
	int lang = cat_lang_of_path(f->path), rc;

	if (read_new_side(top, f, cached, tmp, &src, out)) {
		strbuf_release(&src);
		return 0;
	}
	rc = cat_match_source(c, lang, f->path, src.buf, src.len, &all);
	if (rc < 0)
		goto out;
	out->files++;
	for (size_t i = 0; i < src.len; i++)
		out->lines += src.buf[i] == '\n';
	if (src.len && src.buf[src.len - 1] != '\n')
		out->lines++;
	if (rc == 1) {
		out->syntax_errors++;
		note(out, "%s: syntax errors: matched where it parsed", f->path);
	}
	for (size_t i = 0; i < all.nr_notes; i++) {	/* the matcher's own (nesting) */
		ALLOC_GROW(out->notes, out->nr_notes + 1, out->alloc_notes);
		out->notes[out->nr_notes++] = all.notes[i];
	}
	all.nr_notes = 0;
	for (size_t i = 0; i < all.nr; i++) {
		struct cat_finding *fd = &all.findings[i];

		if (!review_file_touches(f, fd->line, fd->end_line))
			continue;
		ALLOC_GROW(out->findings, out->nr + 1, out->alloc);
		out->findings[out->nr++] = *fd;
		memset(fd, 0, sizeof(*fd));
	}
out:
	cat_check_release(&all);
	strbuf_release(&src);
	return rc < 0 ? -1 : 0;
}

int cat_review(struct catalog *c, const struct review_spec *spec, struct review_result *out)
{
	struct review_diff d = { 0 };
	struct strbuf diff = STRBUF_INIT, why = STRBUF_INIT;
	char tmp[] = "/tmp/hotloop-review-XXXXXX";
	char *output = NULL;
	int fd, ret = -1;

	if (catalog_compile(c))
		return -1;
	if (git_run(spec->dir ? spec->dir : ".", &diff, NULL, "rev-parse", "--show-toplevel", NULL) ||
	    (strbuf_rtrim(&diff), !diff.len)) {
		strbuf_release(&diff);
		return error("catalog review needs a git repository: '%s' is not in one",
			     spec->dir ? spec->dir : ".");
	}
	out->top = strbuf_detach(&diff, NULL);
	if (find_base(out->top, spec->base, out))
		return -1;
	if ((fd = mkstemp(tmp)) < 0)
		return error("cannot create a temporary file: %s", strerror(errno));
	close(fd);
	output = xstrfmt("--output=%s", tmp);
	{
		const char *args[] = { "-c", "core.quotePath=true", "diff", "--no-color", "--no-ext-diff",
				       "--no-textconv", "--no-relative", "-U0", "-M", "--src-prefix=a/",
				       "--dst-prefix=b/", "--ignore-submodules", output,
				       out->base, "--", NULL, NULL };

		if (spec->cached) {	/* the index against base: before the base */
			memmove(args + 14, args + 13, 3 * sizeof(*args));
			args[13] = "--cached";
		}
		if (git_to_file(out->top, tmp, args, &why)) {
			error("cannot diff against %s: git diff failed%s", out->base, why.buf);
			goto out;
		}
	}
	if (read_file(&diff, tmp, REVIEW_MAX_DIFF))
		goto out;
	if (review_parse_diff(diff.buf, diff.len, &d, &why)) {
		error("cannot read git's diff: %s", why.buf);
		goto out;
	}
	out->changed = d.nr;
	for (size_t i = 0; i < d.nr; i++) {
		const struct review_file *f = &d.files[i];

		if (f->status == REVIEW_DELETED || f->status == REVIEW_BINARY || !f->nr ||
		    cat_lang_of_path(f->path) < 0)
			continue;
		if (hl_cancelled() || review_file(c, out->top, f, spec->cached, tmp, &out->check))
			goto out;
	}
	ret = 0;
out:
	unlink(tmp);
	free(output);
	review_diff_release(&d);
	strbuf_release(&diff);
	strbuf_release(&why);
	return ret;
}

void review_result_release(struct review_result *r)
{
	cat_check_release(&r->check);
	free(r->top);
	free(r->base);
	free(r->upstream);
	memset(r, 0, sizeof(*r));
}
