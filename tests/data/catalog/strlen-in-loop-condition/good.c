/* strlen-in-loop-condition: does not match */
void example(void)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < len; i++)
		if (s[i] == ',') n++;
}
