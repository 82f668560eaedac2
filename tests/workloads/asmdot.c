/* asmdot: dot() is the hot loop. Built twice for `hotloop asm`: with -O2
 * (scalar SSE: "scalar FP, not vectorized") and with -O3 -march=x86-64-v3
 * (AVX, 256-bit packed multiplies: "vectorized"). */
#include "workload.h"

#define N 4096

NOINLINE float dot(const float *a, const float *b, int n)
{
	float s = 0;

	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	static float a[N], b[N];

	for (int i = 0; i < N; i++) {
		a[i] = (float)(i % 7);
		b[i] = (float)(i % 5);
	}
	while (wl_now() < end)
		for (int k = 0; k < 100; k++)
			wl_sink += (unsigned long)dot(a, b, N);
	return 0;
}
