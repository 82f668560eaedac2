/*
 * speedscope.h: a profile as speedscope's JSON file format (its published
 * schema, file-format-schema.json): one "sampled" profile of one sample
 * type, its stacks merged, frames shared. The caller owns the buffer.
 */
#ifndef HOTLOOP_SPEEDSCOPE_H
#define HOTLOOP_SPEEDSCOPE_H

struct profile;
struct strbuf;

/*
 * Append the speedscope document of sample type 'idx' of p, the profile
 * named 'name' (the input file's name). 0, or -1 with an error.
 */
int speedscope_write(const struct profile *p, int idx, const char *name, struct strbuf *out);

#endif
