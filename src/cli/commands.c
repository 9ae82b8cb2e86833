#include "cli/commands.h"

#include <stddef.h>

const struct ps_command ps_commands[] = {
    {"trace", "import a cluster trace as a scenario (trace import alibaba-gpu DIR)", ps_cmd_trace},
    {NULL, NULL, NULL},
};
