/* libccall: time spent in libc called from an owned function. With
 * "strlen" (the default) count_long() runs libc's strlen, an assembly
 * routine without a frame of its own, on long strings (called from
 * run_strlen() from main()); with "write" write_many() calls write(2) on
 * /dev/null from main(), so most samples are taken in the kernel, below
 * libc's frameless write wrapper. A frame pointer walk alone shows the
 * libc function called from the owned function's caller. */
#include <fcntl.h>
#include <string.h>
#include "workload.h"

#define NSTR 8
#define LEN (64 * 1024)

NOINLINE size_t count_long(char *const *strs, int n)
{
	size_t total = 0;

	for (int i = 0; i < n; i++)
		total += strlen(strs[i]);
	return total;
}

NOINLINE size_t write_many(int fd, int n)
{
	size_t total = 0;

	for (int i = 0; i < n; i++)
		total += (size_t)write(fd, "x", 1);
	return total;
}

NOINLINE static int run_strlen(double end)
{
	char *strs[NSTR];
	unsigned long round = 0;

	for (int i = 0; i < NSTR; i++) {
		strs[i] = malloc(LEN + 1);
		if (!strs[i])
			return 1;
		memset(strs[i], 'a' + i, LEN);
		strs[i][LEN] = '\0';
	}
	while (wl_now() < end) {
		strs[round % NSTR][round % LEN] = 'A';	/* new contents each round */
		wl_sink += count_long(strs, NSTR);
		round++;
	}
	for (int i = 0; i < NSTR; i++)
		free(strs[i]);
	return 0;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	int fd;

	if (argc < 3 || !strcmp(argv[2], "strlen"))
		return run_strlen(end);
	if (strcmp(argv[2], "write") || (fd = open("/dev/null", O_WRONLY)) < 0)
		return 2;
	while (wl_now() < end)
		wl_sink += write_many(fd, 1000);
	close(fd);
	return 0;
}
