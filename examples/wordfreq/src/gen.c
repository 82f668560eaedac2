/* gen.c: deterministic test text: WORDS words drawn from a Zipf-like
 * distribution over a vocabulary of VOCAB made-up words. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state = 0x9e3779b97f4a7c15ull;

static unsigned long long next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

int main(int argc, char **argv)
{
	long words = argc > 1 ? atol(argv[1]) : 1000, vocab = argc > 2 ? atol(argv[2]) : 1000;
	static const char *syll[] = { "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu",
				      "an", "el", "or", "um", "is", "ba" };

	for (long i = 0; i < words; i++) {
		/* rank r with probability ~ 1/r: the inverse of a log-uniform draw */
		double u = (double)(next() % 1000000) / 1000000.0;
		long r = (long)(vocab * u * u * u), n = r;
		do {
			fputs(syll[n % 16], stdout);
			n /= 16;
		} while (n);
		putchar(i % 12 == 11 ? '\n' : (i % 7 == 3 ? ',' : ' '));
		if (i % 7 == 3)
			putchar(' ');
	}
	putchar('\n');
	return 0;
}
