// alloc-in-loop: new and delete per iteration
void example(int n)
{
	for (int i = 0; i < n; i++) {
		Matrix *m = new Matrix(64, 64);
		fill(m, i);
		delete m;
	}
}
