/* rel.c: found under the root by its relative name */
int relative(int x)
{
	return x * 3 + 1;
}
