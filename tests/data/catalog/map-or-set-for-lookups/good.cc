/* map-or-set-for-lookups: does not match */
void example(void)
{
	std::unordered_map<int, int> counts;
	for (int k : keys) counts[k]++;
}
