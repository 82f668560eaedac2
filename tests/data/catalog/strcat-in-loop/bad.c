/* strcat-in-loop: matches */
void example(void)
{
	for (int i = 0; i < n; i++)
		strcat(out, names[i]);
}
