/*
 * perfscript.h: reading the text `perf script` prints (a header line per
 * sample, then its callchain one frame per indented line, samples separated
 * by blank lines) into a profile, so report, flame, brief and convert take
 * it like any other input. The text is read in chunks: memory grows with
 * the distinct frames and stacks, not with the input. The caller owns the
 * struct profile and the bytes or the file descriptor.
 */
#ifndef HOTLOOP_PERFSCRIPT_H
#define HOTLOOP_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>

struct profile;

/* Bounds on hostile input: one line, and the frames of one sample. */
#define PERFSCRIPT_MAX_LINE ((size_t)1 << 20)
#define PERFSCRIPT_MAX_DEPTH 65536
/* Distinct event names (each gets a sample type for its period). */
#define PERFSCRIPT_MAX_EVENTS 32

/*
 * Parse perf script text into p, which must be freshly initialized.
 *
 * Headers may carry any of comm (spaces allowed), pid/tid, [cpu], time,
 * period and event; frames are "ADDR [SYM[+OFF]] [(DSO)]", with
 * "(inlined)" for the inline frames of `--inline` and "FILE:LINE" lines of
 * `-F +srcline` giving the frame above them its line. A header without a
 * callchain may end in the sample's own "ADDR SYM (DSO)". Samples with the
 * same comm, pid, tid, event and stack become one profile sample.
 *
 * Sample types: "samples"/"count", and when headers show a period, one
 * more per event: "cpu"/"nanoseconds" for cpu-clock and task-clock, else
 * the event's name/"count" (a header without a period counts 1 there, as
 * stackcollapse-perf.pl does). Labels: comm, pid, tid, as far as shown.
 * Kernel frames get the mapping "[kernel.kallsyms]"; an "[unknown]"
 * symbol in a known DSO is named "[DSO basename]".
 *
 * Comment lines ('#') and blank lines are fine; any other line that is
 * neither a header, a frame nor a source line is an error naming its line
 * number, and so are NUL bytes, lines over PERFSCRIPT_MAX_LINE and stacks
 * deeper than PERFSCRIPT_MAX_DEPTH. On error p is left empty.
 */
int perfscript_parse(struct profile *p, const char *buf, size_t len, const char *what);

/*
 * The same for a file or a pipe: the bytes already read from it (the
 * head that told its format), then fd to its end. fd is not closed.
 */
int perfscript_read_fd(struct profile *p, int fd, const void *head, size_t head_len,
		       const char *what);

/*
 * perfscript_parse() reading 'chunk' bytes at a time (0: the default),
 * for tests: any chunk size gives the same profile, or the same error.
 */
int perfscript_parse_chunked(struct profile *p, const char *buf, size_t len,
			     const char *what, size_t chunk);

/*
 * Whether the text looks like perf script output: within its first lines,
 * a sample header followed by an indented frame line, a header that ends
 * in its own frame, or a blank line followed by a frame line (-F ip,sym).
 * Folded stacks never match.
 */
bool perfscript_sniff(const void *buf, size_t len);

#endif
