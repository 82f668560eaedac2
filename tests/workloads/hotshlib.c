/* hotshlib: a shared library whose shlib_hot() is where usesshlib spends
 * its time; the report must attribute it to libhotshlib.so. */
unsigned long shlib_hot(unsigned long x);

__attribute__((noinline)) unsigned long shlib_hot(unsigned long x)
{
	for (unsigned long i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 7;
	return x;
}
