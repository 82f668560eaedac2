/* print-per-item: matches */
void example(void)
{
	for (int i = 0; i < n; i++)
		printf("%d\n", v[i]);
}
