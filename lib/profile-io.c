/*
 * profile-io.c: format detection (see profile-io.h).
 * Detection looks at bytes, not names: a pprof message is a sequence of
 * field tags and lengths to its end, folded stacks are text; gzip and
 * zstd (heaptrack's files) are inflated first. A file's
 * first 64 KiB tell its format; perf.data and perf script text are then
 * read as they stream by, the other formats whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"
#include "folded.h"
#include "perfscript.h"
#include "callgrind.h"
#include "perfdata.h"
#include "heaptrack.h"
#include "jeprof.h"
#include "profile-io.h"

static bool is_zstd(const void *data, size_t len)
{
	return len >= 4 && !memcmp(data, "\x28\xb5\x2f\xfd", 4);
}

static bool is_gzip(const void *data, size_t len)
{
	return (len >= 2 && !memcmp(data, "\x1f\x8b", 2)) || is_zstd(data, len);
}

/* zstd frames (heaptrack's files), one after another, into raw: at most 'cap' bytes. */
static int unzstd(struct strbuf *raw, const void *data, size_t len, size_t cap, const char *what)
{
	ZSTD_DStream *zs = ZSTD_createDStream();
	ZSTD_inBuffer in = { data, len, 0 };
	int ret = 0;

	if (!zs)
		return error("cannot read '%s': zstd init failed", what);
	ZSTD_initDStream(zs);
	for (;;) {
		ZSTD_outBuffer out;
		size_t r;

		strbuf_grow(raw, 1 << 20);
		out = (ZSTD_outBuffer){ raw->buf + raw->len, raw->alloc - raw->len - 1, 0 };
		r = ZSTD_decompressStream(zs, &out, &in);
		if (ZSTD_isError(r)) {
			ret = error("cannot read '%s': corrupt zstd data (%s)", what, ZSTD_getErrorName(r));
			break;
		}
		strbuf_setlen(raw, raw->len + out.pos);
		if (raw->len > cap) {
			ret = error("cannot read '%s': inflates to more than %zu bytes", what, cap);
			break;
		}
		/* 0: a frame ended and all of it is out */
		if (!r && in.pos == in.size)
			break;
		if (in.pos == in.size && out.pos < out.size) {
			ret = error("cannot read '%s': truncated zstd data", what);
			break;
		}
	}
	ZSTD_freeDStream(zs);
	return ret;
}

static int inflate_input(struct strbuf *raw, const void *data, size_t len, const char *what)
{
	if (is_zstd(data, len) ? unzstd(raw, data, len, PPROF_MAX_BYTES, what) :
	    gunzip_maybe(raw, data, len, PPROF_MAX_BYTES, what))
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

	if (jeprof_sniff(data, len)) {
		if (fmt)
			*fmt = PROFILE_FORMAT_JEPROF;
		ret = jeprof_parse(p, data, len, what);
	} else if (heaptrack_sniff(data, len)) {
		if (fmt)
			*fmt = PROFILE_FORMAT_HEAPTRACK;
		ret = heaptrack_parse(p, data, len, what);
	} else if (callgrind_sniff(data, len)) {
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

/* What every sniffer looks at, at most. */
#define HEAD_BYTES 65536

/* Up to 'n' bytes from fd into sb: fewer only at the end of the input. */
static int read_head(struct strbuf *sb, int fd, size_t n)
{
	strbuf_grow(sb, n);
	while (sb->len < n) {
		ssize_t r = read(fd, sb->buf + sb->len, n - sb->len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!r)
			break;
		strbuf_setlen(sb, sb->len + (size_t)r);
	}
	return 0;
}

int profile_read_any(struct profile *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT, raw = STRBUF_INIT;
	bool is_stdin = !strcmp(path, "-");
	const char *what = is_stdin ? "stdin" : path;
	int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	struct stat st;

	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (read_head(&sb, fd, HEAD_BYTES)) {
		error("cannot read '%s': %s", what, strerror(errno));
		goto out;
	}
	if (perfdata_sniff(sb.buf, sb.len) && !fstat(fd, &st) && S_ISREG(st.st_mode)) {
		ret = perfdata_read_fd(p, fd, what);
		goto out;
	}
	if (sb.len && !perfdata_sniff(sb.buf, sb.len) && !is_gzip(sb.buf, sb.len) &&
	    !callgrind_sniff(sb.buf, sb.len) && perfscript_sniff(sb.buf, sb.len)) {
		ret = perfscript_read_fd(p, fd, sb.buf, sb.len, what);
		goto out;
	}
	/* any other format is read whole */
	if (sb.len == HEAD_BYTES && strbuf_read_fd(&sb, fd, PPROF_MAX_BYTES)) {
		if (errno == EFBIG)
			error("cannot read '%s': larger than %zu bytes", what, PPROF_MAX_BYTES);
		else
			error("cannot read '%s': %s", what, strerror(errno));
		goto out;
	}
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
	if (!is_stdin)
		close(fd);
	strbuf_release(&sb);
	strbuf_release(&raw);
	return ret;
}
