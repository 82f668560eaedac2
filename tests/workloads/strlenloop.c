/* strlenloop: a text statistics pass whose inner loop re-measures the
 * line on every character: for (i = 0; i < strlen(s); i++).
 * Root cause: strlen() in the loop condition makes count_upper quadratic
 * in the line length.
 * Hotspot #1: count_upper (the time in libc's strlen is charged to it).
 * Expected tag: string.
 * Fix: compute strlen(s) once before the loop, or walk to the NUL. */
#include <string.h>
#include "workload.h"

#define NLINES 16
#define LINE_LEN 2000

struct line_stats {
	unsigned long upper;
	unsigned long lines;
};

/* Count the upper-case letters of s into st. */
NOINLINE static void count_upper(const char *s, struct line_stats *st)
{
	for (size_t i = 0; i < strlen(s); i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			st->upper++;
	st->lines++;
}

NOINLINE static void scan_lines(char *const *lines, int n, struct line_stats *st)
{
	for (int i = 0; i < n; i++)
		count_upper(lines[i], st);
}

/* Lines of mixed-case letters and spaces, different on every run. */
static int make_lines(char **lines, int n)
{
	unsigned long x = 0x9e3779b97f4a7c15ul;

	for (int i = 0; i < n; i++) {
		lines[i] = malloc(LINE_LEN + 1);
		if (!lines[i])
			return -1;
		for (int j = 0; j < LINE_LEN; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			lines[i][j] = x % 7 == 0 ? ' ' : (char)((x & 32 ? 'a' : 'A') + x % 26);
		}
		lines[i][LINE_LEN] = '\0';
	}
	return 0;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	struct line_stats st = { 0, 0 };
	char *lines[NLINES];

	if (make_lines(lines, NLINES))
		return 1;
	while (wl_now() < end)
		scan_lines(lines, NLINES, &st);
	wl_sink = st.upper;
	for (int i = 0; i < NLINES; i++)
		free(lines[i]);
	return 0;
}
