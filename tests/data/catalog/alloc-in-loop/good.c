/* alloc-in-loop: does not match */
void example(void)
{
	char *buf = malloc(len);
	for (int i = 0; i < n; i++)
		fill(buf, i);
	free(buf);
}
