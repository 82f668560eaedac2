/* vector-growth-without-reserve: matches */
void example(void)
{
	std::vector<int> out;
	for (size_t i = 0; i < n; i++)
		out.push_back(f(i));
}
