/* string-by-value: does not match */
void example(void)
{
	size_t count_commas(const std::string &s);
}
