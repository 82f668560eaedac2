/*
 * seed-catalog-rule.c: seeds for fuzz-catalog-rule: the shipped catalog's
 * entries (the .json files of ../catalog: make -C fuzz runs in fuzz/), copied into
 * the directory given.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	DIR *d = opendir("../catalog");
	struct dirent *de;
	char buf[1 << 16];

	if (argc != 2 || !d)
		return 1;
	while ((de = readdir(d))) {
		char in[4096], out[4096];
		FILE *f, *g;
		size_t n;

		if (!strstr(de->d_name, ".json"))
			continue;
		snprintf(in, sizeof(in), "../catalog/%s", de->d_name);
		snprintf(out, sizeof(out), "%s/catalog-%s", argv[1], de->d_name);
		if (!(f = fopen(in, "rb")) || !(g = fopen(out, "wb")))
			return 1;
		while ((n = fread(buf, 1, sizeof(buf), f)))
			fwrite(buf, 1, n, g);
		fclose(f);
		if (fclose(g))
			return 1;
	}
	closedir(d);
	return 0;
}
