/* spin N: N million rounds of an LCG, then "done N"; the loop's tests edit it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	volatile unsigned long sink = spin(n * 1000000ul);
	(void)sink;
	printf("done %lu\n", n);
	return 0;
}
