/* wc: count the words and the capitals of a text */
#include <stdio.h>
#include <unistd.h>
#include "wc.h"

static char buf[1 << 20];

static size_t read_input(int fd)
{
	size_t len = 0;
	ssize_t n;

	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return len;
}

int main(void)
{
	read_input(0);
	printf("%zu words\n", tokenize(buf));
	printf("%zu capitals\n", count_upper(buf));
	return 0;
}
