/*
 * gatework: a FIXED amount of CPU work for bench/gate, argv[1] rounds of
 * gate_spin (a round is about 7 us natively, 140000 take about 1 s), so that a candidate doing
 * 5% fewer rounds is exactly 5% faster. Built with -DGATE_LAYOUT it carries
 * an unused function ahead of the hot one, so the same work runs at other
 * code addresses. Prints FINGERPRINT=gatework whatever the amount.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

#ifdef GATE_LAYOUT
__attribute__((noinline, used)) unsigned long gate_unused(unsigned long x)
{
	for (unsigned long i = 0; i < x; i++)
		x ^= x >> 7 ^ i * 2654435761ul;
	return x;
}
#endif

__attribute__((noinline)) static unsigned long gate_spin(unsigned long x)
{
	for (unsigned long i = 0; i < 5000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 140000;

	for (long r = 0; r < rounds; r++)
		sink += gate_spin(sink);
	printf("FINGERPRINT=gatework\n");
	return 0;
}
