/* usesshlib: calls shlib_hot() in libhotshlib.so in a loop. */
#include "workload.h"

unsigned long shlib_hot(unsigned long x);

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);

	while (wl_now() < end)
		wl_sink = shlib_hot(wl_sink);
	return 0;
}
