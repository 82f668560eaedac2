/*
 * progress.c: the terminal as a subscriber of the engines' events
 * (lib/events.h). Notes go to stderr as "<engine>: <message>"; progress
 * steps are one line redrawn in place, and only when stderr is a terminal.
 * And Ctrl-C or SIGTERM while an engine runs: hl_cancel(), so it stops at
 * its next step and cleans up.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "builtin.h"
#include "events.h"

static bool line_open;

static void clear_line(void)
{
	if (line_open)
		fputs("\r\033[K", stderr);
	line_open = false;
}

static void notify(const struct event *ev, void *data)
{
	(void)data;
	if (!ev->message)
		return;
	if (ev->kind == EV_PROGRESS) {
		if (!isatty(2))
			return;
		fprintf(stderr, "\r\033[K%s: %s", ev->source, ev->message);
		line_open = true;
		return;
	}
	if (ev->kind == EV_PAIR)
		return;
	clear_line();
	fprintf(stderr, "%s: %s\n", ev->source, ev->message);
}

struct observer *terminal_observer(void)
{
	static struct observer o = { notify, NULL, NULL };

	return &o;
}

void terminal_done(void)
{
	clear_line();
}

static struct sigaction old_int, old_term;
static bool catching;

static void on_interrupt(int sig)
{
	(void)sig;
	hl_cancel();
}

void cancel_on_interrupt(bool on)
{
	struct sigaction sa = { 0 };

	if (on == catching)
		return;
	if (on) {
		hl_cancel_reset();
		sa.sa_handler = on_interrupt;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
	} else {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	catching = on;
}
