/* divide-by-invariant: does not match */
void example(void)
{
	/* nbuckets a power of two, known before the loop */
	size_t mask = nbuckets - 1;
	for (size_t i = 0; i < n; i++)
		bucket[i] = hash[i] & mask;
}
