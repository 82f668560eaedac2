/* allocount: argv[1] mallocs (default 1000) of argv[2] bytes (default 64),
 * each freed before the next, then a held block of argv[3] KiB (default 0)
 * freed at the end; prints "ok". The heap metrics' exact counts use it. */
#include <stdio.h>
#include <string.h>
#include "workload.h"

NOINLINE static unsigned long churn(long n, size_t size)
{
	unsigned long sum = 0;

	for (long i = 0; i < n; i++) {
		unsigned char *p = malloc(size);

		if (!p)
			abort();
		memset(p, (int)(i & 0xff), size);
		sum += p[size - 1];
		free(p);
	}
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 64;
	size_t held = argc > 3 ? (size_t)atol(argv[3]) << 10 : 0;
	char *p = NULL;

	alarm(10);
	if (!size)
		size = 1;
	if (held && !(p = malloc(held)))
		return 1;
	if (p)
		memset(p, 1, held);
	if (churn(n, size) == (unsigned long)-1)
		return 1;
	free(p);
	puts("ok");
	return 0;
}
