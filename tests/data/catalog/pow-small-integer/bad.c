/* pow-small-integer: matches */
void example(void)
{
	double d2 = pow(dx, 2) + pow(dy, 2);
}
