/* strcat-in-loop: does not match */
void example(void)
{
	char *end = out;
	for (int i = 0; i < n; i++)
		end = stpcpy(end, names[i]);
}
