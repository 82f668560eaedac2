/* deepcall: a recursive descent 100 calls deep, each level with a frame of
 * its own, whose leaf scans a buffer with memchr (glibc, built without
 * frame pointers). The stack is deeper than the default stack copy: a
 * hybrid unwinder must take the kernel's frame pointer chain over from the
 * CFI frames to reach main.
 * Hotspot #1: scan_leaf (the time in memchr is charged to it).
 * Fix: scan once, outside the recursion. */
#include <stdio.h>
#include <string.h>
#include "workload.h"

#define DEPTH 100

static volatile unsigned long sink;
static char buffer[1 << 16];

NOINLINE static void scan_leaf(unsigned long v)
{
	for (int i = 0; i < 8; i++) {
		const char *p = memchr(buffer, (int)(1 + (v + i) % 2), sizeof(buffer));
		sink += p ? (unsigned long)(p - buffer) : 0;
	}
}

NOINLINE static void descend(int depth, unsigned long v)
{
	volatile char pad[96];

	pad[0] = (char)depth;
	if (depth)
		descend(depth - 1, v * 31 + (unsigned long)pad[0]);
	else
		scan_leaf(v);
	sink += (unsigned long)pad[0];
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	unsigned long v = 1;

	buffer[sizeof(buffer) - 1] = 1;
	while (wl_now() < end)
		descend(DEPTH, v++);
	printf("%lu\n", sink);
	return 0;
}
