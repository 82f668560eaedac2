/*
 * catalog-load.h: which catalogs a catalog command reads: the one shipped
 * with hotloop, a project's own ./catalog/, then each directory given; a
 * later entry with the same id replaces an earlier one, and a directory is
 * read once however often it is named. The catalog is the caller's.
 */
#ifndef HOTLOOP_CATALOG_LOAD_H
#define HOTLOOP_CATALOG_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog-rule.h"

/* The shipped catalog's directory: $HOTLOOP_CATALOG, else beside the binary; NULL when none */
char *catalog_shipped_dir(void);

/*
 * Read the catalogs into c: with 'defaults' the shipped one and ./catalog/,
 * then dirs[0..nr). 0, or -1 with an error (a catalog not found, an entry
 * that does not read, nothing read at all).
 */
int catalog_load_all(struct catalog *c, bool defaults, const char *const *dirs, size_t nr);

#endif
