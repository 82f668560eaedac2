/* alloc-in-loop: matches */
void example(void)
{
	for (int i = 0; i < n; i++) {
		char *buf = malloc(len);
		fill(buf, i);
		free(buf);
	}
}
