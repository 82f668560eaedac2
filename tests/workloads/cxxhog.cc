// cxxhog: a C++ method, hotns::Matrix::multiply(int), does the work; the
// report must show it demangled.
#include <vector>
#include "workload.h"

namespace hotns {
struct Matrix {
	std::vector<double> v;
	explicit Matrix(int n) : v((size_t)n * n, 1.0001) {}
	NOINLINE double multiply(int n);
};

double Matrix::multiply(int n)
{
	double acc = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			acc += v[(size_t)i * n + j] * v[(size_t)j * n + i];
	return acc;
}
} // namespace hotns

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	hotns::Matrix m(64);
	double acc = 0;

	while (wl_now() < end)
		acc += m.multiply(64);
	wl_sink = (unsigned long)acc;
	return 0;
}
