/*
 * profile-io.h: reading a profile in any format hotloop understands,
 * recognized by content rather than by file name (perf.data; gzip or not:
 * pprof protobuf, callgrind output, perf script or folded text; gzip or
 * zstd: heaptrack's data files; jemalloc's heap profiles). The
 * commands that take a profile file share it.
 * The caller owns the struct profile.
 */
#ifndef HOTLOOP_PROFILE_IO_H
#define HOTLOOP_PROFILE_IO_H

#include <stddef.h>

struct profile;

enum profile_format {
	PROFILE_FORMAT_PPROF,
	PROFILE_FORMAT_FOLDED,
	PROFILE_FORMAT_PERFSCRIPT,
	PROFILE_FORMAT_CALLGRIND,
	PROFILE_FORMAT_PERFDATA,
	PROFILE_FORMAT_HEAPTRACK,
	PROFILE_FORMAT_JEPROF,
};

/*
 * Decode 'len' bytes into p (freshly initialized): a perf.data file (by
 * its magic, perfdata.h) is read as such; otherwise gzip or zstd is
 * inflated first, then a heaptrack file (heaptrack.h) or a jemalloc heap
 * profile (jeprof.h), callgrind output (callgrind.h) is read as such, `perf
 * script` output when it looks like it, a pprof message as one (even one
 * mostly of printable bytes: pprof_sniff()), other text as folded stacks,
 * and anything else as a pprof message, for its errors.
 * *fmt (when not NULL) says which. 'what' names the input in messages.
 */
int profile_decode_any(struct profile *p, const void *data, size_t len,
		       const char *what, enum profile_format *fmt);
/*
 * The same for a file; "-" reads standard input. Its first 64 KiB tell
 * the format: perf script text is then read in chunks and a perf.data
 * file (a regular one) mapped, so neither is held whole in memory; the
 * other formats are read whole (at most PPROF_MAX_BYTES).
 */
int profile_read_any(struct profile *p, const char *path);

#endif
