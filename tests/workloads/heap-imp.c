/* heap-imp: planted allocation sites for the heap profile importers and the
 * memory brief, one per mode (argv[1]):
 *   loop     make_node: many small blocks, one per iteration of build_list's loop,
 *            all kept until the end (tag alloc-in-loop)
 *   leak     leak_table: a large table never freed (tag leak)
 *   realloc  grow_buffer: a buffer grown by realloc a little at a time (realloc-growth)
 *   temp     scratch_copy: a buffer freed right after use, each time (short-lived)
 * Each mode's site allocates the most bytes of its run. */
#include <stdio.h>
#include <string.h>
#include "workload.h"

struct node {
	struct node *next;
	char payload[48];
};

NOINLINE static struct node *make_node(struct node *next, int i)
{
	struct node *n = malloc(sizeof(*n));

	if (!n)
		exit(1);
	n->next = next;
	memset(n->payload, i, sizeof(n->payload));
	return n;
}

NOINLINE static struct node *build_list(int count)
{
	struct node *head = NULL;

	for (int i = 0; i < count; i++)
		head = make_node(head, i);
	return head;
}

NOINLINE static long *leak_table(size_t n)
{
	long *t = calloc(n, sizeof(*t));

	for (size_t i = 0; t && i < n; i += 512)
		t[i] = (long)i;
	return t;
}

NOINLINE static char *grow_buffer(int steps)
{
	char *buf = NULL;
	size_t len = 0;

	for (int i = 0; i < steps; i++) {
		char *nb = realloc(buf, len + 256);

		if (!nb)
			exit(1);
		buf = nb;
		memset(buf + len, 'x', 256);
		len += 256;
	}
	return buf;
}

NOINLINE static unsigned long scratch_copy(const char *s)
{
	size_t n = strlen(s) + 1;
	char *tmp = malloc(n);
	unsigned long h = 0;

	if (!tmp)
		exit(1);
	memcpy(tmp, s, n);
	for (size_t i = 0; i < n; i++)
		h = h * 31 + (unsigned char)tmp[i];
	free(tmp);
	return h;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";

	alarm(20);
	if (!strcmp(mode, "loop")) {
		struct node *l = build_list(20000);

		while (l) {
			struct node *next = l->next;

			free(l);
			l = next;
		}
	} else if (!strcmp(mode, "leak")) {
		wl_sink = (unsigned long)leak_table(1 << 18);
		wl_sink = 0;
	} else if (!strcmp(mode, "realloc")) {
		char *b = grow_buffer(400);

		wl_sink = (unsigned char)b[100];
		free(b);
	} else if (!strcmp(mode, "temp")) {
		char line[200];

		memset(line, 'a', sizeof(line) - 1);
		line[sizeof(line) - 1] = '\0';
		for (int i = 0; i < 20000; i++)
			wl_sink += scratch_copy(line);
	} else {
		fprintf(stderr, "heap-imp: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
