/* placeholder until the real command lands (replaced by its owner) */
#include "builtin.h"
const char usage_doctor[] = "usage: hotloop doctor\n";
int cmd_doctor(int argc, char **argv) { return error("doctor: not built yet"), 1; }
