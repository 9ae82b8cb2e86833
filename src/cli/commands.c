#include "cli/commands.h"

#include <stddef.h>

const struct ps_command ps_commands[] = {
    {"bench", "measure the engine's hot paths on synthetic workloads (JSON figures)", ps_cmd_bench},
    {NULL, NULL, NULL},
};
