/* string-by-value: matches */
void example(void)
{
	size_t count_commas(std::string s);
}
