/*
 * perfdata.h: reading a perf.data file, as `perf record` writes it (file
 * mode, "PERFILE2", either byte order), into a struct profile. Its records
 * become sampler events fed to record.c's timeline in time order, so a
 * perf.data file is symbolized, labelled and laid out like a profile that
 * `hotloop record` made. The caller owns the struct profile and the bytes.
 */
#ifndef HOTLOOP_PERFDATA_H
#define HOTLOOP_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>

struct profile;

/* Whether the bytes start like a perf.data file (file or pipe mode, either order). */
bool perfdata_sniff(const void *data, size_t len);

/*
 * Decode a whole perf.data file into p (freshly initialized). Every length
 * and offset is checked: a malformed file is an error "cannot read 'WHAT':
 * <what is wrong> at byte N", never a crash, and what is allocated is
 * bounded by 'len'. Pipe-mode files and compressed records are refused
 * with a remedy. Samples of the first event that has any are kept (perf
 * adds events that only track); others are named in a warning.
 */
int perfdata_decode(struct profile *p, const void *data, size_t len, const char *what);

/*
 * The same for the regular file open on fd (not closed), mapped rather
 * than read: what stays in memory is the records of the rounds (between
 * perf's PERF_RECORD_FINISHED_ROUND) not delivered yet, at most two, not
 * the file. A file cut short while it is read is an error like any other,
 * but one that shrinks while mapped ends the process (SIGBUS), as perf's
 * own reader does.
 */
int perfdata_read_fd(struct profile *p, int fd, const char *what);

#endif
