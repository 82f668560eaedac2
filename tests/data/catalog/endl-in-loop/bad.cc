/* endl-in-loop: matches */
void example(void)
{
	for (auto &x : v)
		std::cout << x << std::endl;
}
