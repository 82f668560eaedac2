/* placeholder until the real command lands (replaced by its owner) */
#include "builtin.h"
const char usage_report[] = "usage: hotloop report\n";
int cmd_report(int argc, char **argv) { return error("report: not built yet"), 1; }
