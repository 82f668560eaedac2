/*
 * catalog-rank.h: catalog findings ranked by a CPU profile: each finding
 * gets the self and total share of the function it is in (the profile's
 * report by function), the findings in hot functions first. Works on a
 * struct cat_check in place.
 */
#ifndef HOTLOOP_CATALOG_RANK_H
#define HOTLOOP_CATALOG_RANK_H

#include "catalog-match.h"

/*
 * Read the profile at 'path' (any form `hotloop report` reads; sample type
 * 'type', NULL: its default), set each finding's shares, and order the
 * findings by their function's total share, then self share, the findings
 * in functions without samples last (in their order); those whose total
 * share is below 'min_share' (0: none) are dropped. 0, or -1 with an error.
 */
int cat_check_rank(struct cat_check *r, const char *path, const char *type, double min_share);

#endif
