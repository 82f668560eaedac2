/*
 * three N: three functions of one kernel (an LCG, inlined in each), hot
 * (3 units of N million rounds), warm (2 units) and cold (a tenth of one),
 * then "done N". Their shares follow from the counts on any CPU: about
 * 59%, 39% and 2%. t9850 edits one or several of them.
 */
#include <stdio.h>
#include <stdlib.h>

#define SPIN(count, x) \
	for (unsigned long i = 0; i < (count); i++) \
		x = x * 6364136223846793005ul + 1442695040888963407ul

__attribute__((noinline)) unsigned long hot(unsigned long n)
{
	unsigned long x = 1;

	SPIN(3 * n, x);
	return x;
}

__attribute__((noinline)) unsigned long warm(unsigned long n)
{
	unsigned long x = 2;

	SPIN(2 * n, x);
	return x;
}

__attribute__((noinline)) unsigned long cold(unsigned long n)
{
	unsigned long x = 3;

	SPIN(n / 10, x);
	return x;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	volatile unsigned long sink = hot(n * 1000000ul) + warm(n * 1000000ul) + cold(n * 1000000ul);

	(void)sink;
	printf("done %lu\n", n);
	return 0;
}
