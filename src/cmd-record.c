/* placeholder until the real command lands (replaced by its owner) */
#include "builtin.h"
const char usage_record[] = "usage: hotloop record\n";
int cmd_record(int argc, char **argv) { return error("record: not built yet"), 1; }
