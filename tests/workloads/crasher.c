/* crasher: print a line, then die of SIGSEGV (a real invalid write), so
 * tests see how a crashing run is reported. */
#include <stdio.h>
#include "workload.h"

NOINLINE void crash(volatile int *p)
{
	*p = 42;
}

int main(void)
{
	alarm(10);
	puts("about to crash");
	fflush(stdout);
	crash((volatile int *)(unsigned long)wl_sink);
	return 0;
}
