#include "cli/commands.h"

#include <stddef.h>

const struct ps_command ps_commands[] = {
    {"fair-share", "compute one fair share update of a pool tree snapshot (JSON)",
     ps_cmd_fair_share},
    {"bench", "measure the engine's hot paths on synthetic workloads (JSON figures)", ps_cmd_bench},
    {NULL, NULL, NULL},
};
