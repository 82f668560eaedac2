/* placeholder until the real command lands (replaced by its owner) */
#include "builtin.h"
const char usage_convert[] = "usage: hotloop convert\n";
int cmd_convert(int argc, char **argv) { return error("convert: not built yet"), 1; }
