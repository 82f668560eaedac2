/* strlen-in-loop-condition: matches */
void example(void)
{
	for (size_t i = 0; i < strlen(s); i++)
		if (s[i] == ',') n++;
}
