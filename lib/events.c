/*
 * events.c: handing events to their subscribers (see events.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "events.h"
#include "util.h"

void emit(const struct observer *o, const struct event *ev)
{
	for (; o; o = o->next)
		o->notify(ev, o->data);
}

static void emit_va(const struct observer *o, struct event *ev, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	ev->message = msg;
	emit(o, ev);
}

void emit_note(const struct observer *o, const char *source, const char *fmt, ...)
{
	struct event ev = { .kind = EV_NOTE, .source = source };
	va_list ap;

	if (!o)
		return;
	va_start(ap, fmt);
	emit_va(o, &ev, fmt, ap);
	va_end(ap);
}

void emit_progress(const struct observer *o, const char *source, size_t done, size_t total,
		   const char *fmt, ...)
{
	struct event ev = { .kind = EV_PROGRESS, .source = source, .done = done, .total = total };
	va_list ap;

	if (!o)
		return;
	va_start(ap, fmt);
	emit_va(o, &ev, fmt, ap);
	va_end(ap);
}
