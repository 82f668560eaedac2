/* struct-by-value: does not match */
void example(void)
{
	double norm(const struct matrix *m);
}
