/* short.c: changed since the profile, now five lines */
int past_end(void)
{
	return 0;
}
