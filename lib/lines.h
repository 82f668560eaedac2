/*
 * lines.h: what the parsers of line-oriented text from outside share
 * (callgrind output, folded stacks, perf script): lines, white space, and
 * errors that name the input and its line. Nothing here allocates.
 */
#ifndef HOTLOOP_LINES_H
#define HOTLOOP_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "util.h"

/* Where a parser is: the input's name and its current line. */
struct input_pos {
	const char *what;	/* as messages name it: a path, "stdin" */
	size_t lineno;		/* from 1 */
};

/* error("cannot read '<what>': line <lineno>: <message>"): returns -1. */
int line_error(const struct input_pos *pos, const char *fmt, ...) ATTR_PRINTF(2, 3);

/* White space inside a line: not '\n', which ends it. */
static inline bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Drop the white space at both ends of s[0..*n). */
static inline void trim(const char **s, size_t *n)
{
	while (*n && is_space((*s)[*n - 1]))
		(*n)--;
	while (*n && is_space(**s)) {
		(*s)++;
		(*n)--;
	}
}

/* The line at *pos of buf (without its '\n'), *pos moved past it; false at the end. */
static inline bool next_line(const char *buf, size_t len, size_t *pos,
			     const char **line, size_t *n)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*line = buf + *pos;
	nl = memchr(*line, '\n', len - *pos);
	*n = nl ? (size_t)(nl - *line) : len - *pos;
	*pos += *n + (nl ? 1 : 0);
	return true;
}

#endif
