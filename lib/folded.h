/*
 * folded.h: folded stacks, the text format of FlameGraph's stackcollapse
 * scripts and of many other profilers: one line per stack, frames root
 * first joined with ';', then a count ("main;run;hot_spin 42"). Kernel
 * frames end in "_[k]", inlined frames in "_[i]". A second count column
 * ("stack 10 12", FlameGraph's difffolded form) is read as two sample types.
 * The caller owns the struct profile and the strbuf in both directions.
 */
#ifndef HOTLOOP_FOLDED_H
#define HOTLOOP_FOLDED_H

#include <stdbool.h>
#include <stddef.h>

struct profile;
struct strbuf;

/* Bounds on hostile input: one line, and the frames in one stack. */
#define FOLDED_MAX_LINE ((size_t)4 << 20)
#define FOLDED_MAX_DEPTH 65536

/*
 * Parse folded text into p, which must be freshly initialized. One count
 * column gives one sample type, "samples"/"count"; two give "base"/"count"
 * (the first column) and "samples"/"count" (the second), and "samples" is
 * the default sample type either way. Blank lines and surrounding white
 * space are ignored; a line without a count, with a negative, fractional or
 * overflowing count, with a NUL byte, longer than FOLDED_MAX_LINE or deeper
 * than FOLDED_MAX_DEPTH is an error naming the line. 'what' names the input
 * in messages. On error p is left empty.
 */
int folded_parse(struct profile *p, const char *buf, size_t len, const char *what);

/*
 * Append p's stacks weighted by sample type 'idx' as folded text: stacks
 * with equal frame names merged, lines in byte order (LC_ALL=C sort), ';'
 * in names turned into ':' and control characters into spaces, stacks
 * whose total is not positive left out.
 */
int folded_write(const struct profile *p, int idx, struct strbuf *out);

/*
 * Whether the bytes look like text (folded stacks) rather than binary: at
 * most 1% of the first 4 KiB are control bytes other than white space, or
 * the first line has none.
 */
bool folded_sniff(const void *buf, size_t len);

#endif
