/* string-built-in-loop: matches */
void example(void)
{
	std::string out;
	for (auto &w : words)
		out = out + w + ",";
}
