/*
 * profile-io.c: format detection (see profile-io.h).
 * Detection looks at bytes, not names: a pprof message is a sequence of
 * field tags and lengths to its end, folded stacks are text.
 */
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"
#include "folded.h"
#include "perfscript.h"
#include "callgrind.h"
#include "perfdata.h"
#include "profile-io.h"

static bool is_gzip(const void *data, size_t len)
{
	return len >= 2 && !memcmp(data, "\x1f\x8b", 2);
}

static int inflate_input(struct strbuf *raw, const void *data, size_t len, const char *what)
{
	if (gunzip_maybe(raw, data, len, PPROF_MAX_BYTES, what))
		return -1;
	if (!raw->len)
		return error("cannot read '%s': it inflates to nothing", what);
	return 0;
}

/* What is not perf.data, inflated when it was gzipped. */
static int decode_inflated(struct profile *p, const void *data, size_t len,
			   const char *what, enum profile_format *fmt)
{
	int ret;

	if (callgrind_sniff(data, len)) {
		if (fmt)
			*fmt = PROFILE_FORMAT_CALLGRIND;
		ret = callgrind_parse(p, data, len, what);
	} else if (perfscript_sniff(data, len)) {
		if (fmt)
			*fmt = PROFILE_FORMAT_PERFSCRIPT;
		ret = perfscript_parse(p, data, len, what);
	} else if (!pprof_sniff(data, len) && folded_sniff(data, len)) {
		if (fmt)
			*fmt = PROFILE_FORMAT_FOLDED;
		ret = folded_parse(p, data, len, what);
	} else {
		if (fmt)
			*fmt = PROFILE_FORMAT_PPROF;
		ret = pprof_decode(p, data, len, what);
	}
	return ret;
}

int profile_decode_any(struct profile *p, const void *data, size_t len,
		       const char *what, enum profile_format *fmt)
{
	struct strbuf raw = STRBUF_INIT;
	int ret = -1;

	if (!len)
		return error("cannot read '%s': the file is empty", what);
	if (perfdata_sniff(data, len)) {
		if (fmt)
			*fmt = PROFILE_FORMAT_PERFDATA;
		return perfdata_decode(p, data, len, what);
	}
	/* gzip is inflated; anything else is read where it lies, uncopied */
	if (!is_gzip(data, len))
		return decode_inflated(p, data, len, what, fmt);
	if (!inflate_input(&raw, data, len, what))
		ret = decode_inflated(p, raw.buf, raw.len, what, fmt);
	strbuf_release(&raw);
	return ret;
}

int profile_read_any(struct profile *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT, raw = STRBUF_INIT;
	bool is_stdin = !strcmp(path, "-");
	const char *what = is_stdin ? "stdin" : path;
	int ret = -1;

	if (read_file(&sb, is_stdin ? "/dev/stdin" : path, PPROF_MAX_BYTES))
		goto out;
	if (sb.len && !perfdata_sniff(sb.buf, sb.len) && is_gzip(sb.buf, sb.len)) {
		/* the file is not needed once inflated: let it go before the profile grows */
		if (inflate_input(&raw, sb.buf, sb.len, what))
			goto out;
		strbuf_release(&sb);
		ret = decode_inflated(p, raw.buf, raw.len, what, NULL);
	} else {
		ret = profile_decode_any(p, sb.buf, sb.len, what, NULL);
	}
out:
	strbuf_release(&sb);
	strbuf_release(&raw);
	return ret;
}
