/* pow-small-integer: does not match */
void example(void)
{
	double d2 = dx * dx + dy * dy;
}
