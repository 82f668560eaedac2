/*
 * lines.c: the parsers' errors (see lines.h).
 */
#include <stdio.h>

#include "util.h"
#include "lines.h"

int line_error(const struct input_pos *pos, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error("cannot read '%s': line %zu: %s", pos->what, pos->lineno, msg);
}
