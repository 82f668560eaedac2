/*
 * event.h: one event as evd's producers read it from a client and its
 * consumer evaluates it, and the line protocol that carries it:
 *
 *	EV <pid> <uid> <kind> <path>\n
 */
#ifndef EVENT_H
#define EVENT_H

#include <stddef.h>
#include <stdint.h>

enum ev_kind { EV_EXEC, EV_OPEN, EV_CONNECT, EV_UNLINK, EV_CHMOD, EV_RENAME, EV_NKINDS };

#define EV_PATH_MAX 232		/* with its NUL; a longer path is a malformed line */
#define EV_LINE_MAX 512		/* a longer line is malformed */

struct event {
	int32_t pid;
	uint32_t uid;
	uint32_t kind;		/* enum ev_kind */
	uint32_t path_len;
	char path[EV_PATH_MAX];	/* NUL-terminated, as sent (case kept) */
};

/* "exec", "open", ... for a kind; NULL for a bad one. */
const char *kind_name(unsigned kind);

/* The kind called NAME (LEN bytes), or -1. */
int kind_parse(const char *name, size_t len);

/* Parse one protocol line (without its '\n') into EV: 0, or -1 if malformed. */
int event_parse(struct event *ev, const char *line, size_t len);

#endif
