/* cpuhog: hot_spin() takes ~90% of the time, called from run_loop();
 * cold_spin() takes the rest. The report must show hot_spin on top. */
#include "workload.h"

NOINLINE unsigned long hot_spin(unsigned long n)
{
	unsigned long x = n;

	for (unsigned long i = 0; i < 200000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

NOINLINE unsigned long cold_spin(unsigned long n)
{
	unsigned long x = n;

	for (unsigned long i = 0; i < 20000; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}

NOINLINE void run_loop(double seconds)
{
	double end = wl_now() + seconds;

	while (wl_now() < end) {
		wl_sink += hot_spin(wl_sink);
		wl_sink += cold_spin(wl_sink);
	}
}

int main(int argc, char **argv)
{
	run_loop(wl_seconds(argc, argv));
	return argc > 2 ? atoi(argv[2]) : 0;	/* optional exit status */
}
