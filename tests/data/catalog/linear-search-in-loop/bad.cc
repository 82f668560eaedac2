/* linear-search-in-loop: matches */
void example(void)
{
	for (auto &x : v)
		if (std::find(v.begin(), v.end(), x + 1) != v.end())
			n++;
}
