/* placeholder until the real command lands (replaced by its owner) */
#include "builtin.h"
const char usage_flame[] = "usage: hotloop flame\n";
int cmd_flame(int argc, char **argv) { return error("flame: not built yet"), 1; }
