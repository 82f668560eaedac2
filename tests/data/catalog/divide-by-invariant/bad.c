/* divide-by-invariant: matches */
void example(void)
{
	for (size_t i = 0; i < n; i++)
		bucket[i] = hash[i] % nbuckets;
}
