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
	if (len >= 2 && !memcmp(data, "\x1f\x8b", 2)) {
		if (gunzip_maybe(&raw, data, len, PPROF_MAX_BYTES, what))
			goto out;
		if (!raw.len) {
			error("cannot read '%s': it inflates to nothing", what);
			goto out;
		}
		data = raw.buf;
		len = raw.len;
	}
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
out:
	strbuf_release(&raw);
	return ret;
}

int profile_read_any(struct profile *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	bool is_stdin = !strcmp(path, "-");
	int ret = -1;

	if (!read_file(&sb, is_stdin ? "/dev/stdin" : path, PPROF_MAX_BYTES))
		ret = profile_decode_any(p, sb.buf, sb.len, is_stdin ? "stdin" : path, NULL);
	strbuf_release(&sb);
	return ret;
}
