/* string-built-in-loop: does not match */
void example(void)
{
	std::string out;
	for (auto &w : words) {
		out += w;
		out += ',';
	}
}
