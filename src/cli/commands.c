#include "cli/commands.h"

#include <stddef.h>

const struct ps_command ps_commands[] = {
    {"fair-share", "compute one fair share update of a pool tree snapshot (JSON)",
     ps_cmd_fair_share},
    {"bench", "measure the engine's hot paths on synthetic workloads (JSON figures)", ps_cmd_bench},
    {"scheduler", "run the scheduler service (HTTP API, pool trees, operations, nodes)",
     ps_cmd_scheduler},
    {"node", "run a node agent: register with the scheduler and run its jobs", ps_cmd_node},
    {"trace", "import a cluster trace as a scenario (trace import alibaba-gpu DIR)", ps_cmd_trace},
    {NULL, NULL, NULL},
};
