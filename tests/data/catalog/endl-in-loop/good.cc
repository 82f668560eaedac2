/* endl-in-loop: does not match */
void example(void)
{
	for (auto &x : v)
		std::cout << x << '\n';
}
