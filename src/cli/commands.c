#include "cli/commands.h"

#include <stddef.h>

const struct ps_command ps_commands[] = {
    {NULL, NULL, NULL},
};
