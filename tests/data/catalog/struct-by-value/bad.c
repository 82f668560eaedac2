/* struct-by-value: matches */
void example(void)
{
	double norm(struct matrix m);
}
