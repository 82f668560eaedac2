/* vector-growth-without-reserve: does not match */
void example(void)
{
	std::vector<int> out;
	out.reserve(n);
	for (size_t i = 0; i < n; i++)
		out.push_back(f(i));
}
