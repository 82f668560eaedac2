/*
 * pprof.h: reading and writing profiles in pprof's format (a gzipped
 * profile.proto message), the on-disk form of every hotloop profile.
 * The caller owns the struct profile in both directions.
 */
#ifndef HOTLOOP_PPROF_H
#define HOTLOOP_PPROF_H

#include <stdbool.h>
#include <stddef.h>

struct profile;
struct strbuf;

/* Largest profile hotloop will inflate: a bound on hostile input. */
#define PPROF_MAX_BYTES ((size_t)1 << 30)

/*
 * Decode 'len' bytes (gzipped or raw protobuf) into p, which must be freshly
 * initialized. Ids are remapped to be dense; every reference is checked.
 * 'what' names the input in messages. On error p is left released.
 */
int pprof_decode(struct profile *p, const void *data, size_t len, const char *what);
int pprof_read_file(struct profile *p, const char *path);

/*
 * Is data (not gzipped) a protobuf message whose top-level fields are all
 * those of a profile, to its last byte? Text is not: a deep stack makes a
 * message of mostly printable bytes, and this tells it from folded stacks.
 */
bool pprof_sniff(const void *data, size_t len);

/* Encode p as gzipped protobuf into out. */
int pprof_encode(const struct profile *p, struct strbuf *out);
/* Encode and write atomically (temp file + rename). */
int pprof_write_file(const struct profile *p, const char *path);

/* Inflate gzip or zlib data; raw data that is not compressed is copied. */
int gunzip_maybe(struct strbuf *out, const void *data, size_t len, size_t cap,
		 const char *what);
int gzip_bytes(struct strbuf *out, const void *data, size_t len);

#endif
