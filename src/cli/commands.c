#include "cli/commands.h"

#include <stddef.h>

const struct ps_command ps_commands[] = {
    {"fair-share", "compute one fair share update of a pool tree snapshot (JSON)",
     ps_cmd_fair_share},
    {NULL, NULL, NULL},
};
