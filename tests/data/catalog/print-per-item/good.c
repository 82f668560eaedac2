/* print-per-item: does not match */
void example(void)
{
	for (int i = 0; i < n; i++)
		p += fmt_int(p, v[i]);
	fwrite(buf, 1, p - buf, stdout);
}
