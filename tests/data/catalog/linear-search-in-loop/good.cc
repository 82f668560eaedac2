/* linear-search-in-loop: does not match */
void example(void)
{
	std::unordered_set<int> s(v.begin(), v.end());
	for (auto &x : v)
		if (s.count(x + 1))
			n++;
}
