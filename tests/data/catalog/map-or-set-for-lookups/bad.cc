/* map-or-set-for-lookups: matches */
void example(void)
{
	std::map<int, int> counts;
	for (int k : keys) counts[k]++;
}
