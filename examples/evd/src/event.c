/*
 * event.c: the names of the event kinds and the parser of the line protocol
 * (event.h). Lines come from any client, so every field is checked.
 */
#include <string.h>

#include "event.h"

static const char *const kind_names[EV_NKINDS] = {
	[EV_EXEC] = "exec", [EV_OPEN] = "open", [EV_CONNECT] = "connect",
	[EV_UNLINK] = "unlink", [EV_CHMOD] = "chmod", [EV_RENAME] = "rename",
};

const char *kind_name(unsigned kind)
{
	return kind < EV_NKINDS ? kind_names[kind] : NULL;
}

int kind_parse(const char *name, size_t len)
{
	for (int k = 0; k < EV_NKINDS; k++)
		if (strlen(kind_names[k]) == len && !memcmp(kind_names[k], name, len))
			return k;
	return -1;
}

/* A decimal number below LIMIT at *P, followed by one space. */
static int parse_field(const char **p, const char *end, uint64_t limit, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	while (s < end && *s >= '0' && *s <= '9') {
		v = v * 10 + (uint64_t)(*s++ - '0');
		if (v >= limit)
			return -1;
	}
	if (s == end || *s != ' ')
		return -1;
	*p = s + 1;
	*out = v;
	return 0;
}

int event_parse(struct event *ev, const char *line, size_t len)
{
	const char *p = line, *end = line + len, *word;
	uint64_t pid, uid;
	int kind;

	if (len && end[-1] == '\r')
		end--;
	if (end - p < 3 || memcmp(p, "EV ", 3))
		return -1;
	p += 3;
	if (parse_field(&p, end, (uint64_t)1 << 31, &pid) ||
	    parse_field(&p, end, (uint64_t)1 << 32, &uid))
		return -1;
	word = p;
	while (p < end && *p != ' ')
		p++;
	kind = kind_parse(word, (size_t)(p - word));
	if (kind < 0 || p == end)
		return -1;
	p++;
	if (p == end || *p != '/' || (size_t)(end - p) >= EV_PATH_MAX ||
	    memchr(p, '\0', (size_t)(end - p)))
		return -1;
	ev->pid = (int32_t)pid;
	ev->uid = (uint32_t)uid;
	ev->kind = (uint32_t)kind;
	ev->path_len = (uint32_t)(end - p);
	memcpy(ev->path, p, ev->path_len);
	ev->path[ev->path_len] = '\0';
	return 0;
}
