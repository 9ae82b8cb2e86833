#include "cli/commands.h"

#include <stddef.h>

const struct ps_command ps_commands[] = {
    {"fair-share", "compute one fair share update of a pool tree snapshot (JSON)",
     ps_cmd_fair_share},
    {"simulate", "replay a scenario in virtual time (simulate SCENARIO --output DIR)",
     ps_cmd_simulate},
    {"trace", "import a cluster trace as a scenario (trace import alibaba-gpu DIR)", ps_cmd_trace},
    {"bench", "measure the engine's hot paths on synthetic workloads (JSON figures)", ps_cmd_bench},
    {"scheduler", "run the scheduler service (HTTP API, pool trees, operations, nodes)",
     ps_cmd_scheduler},
    {"node", "run a node agent: register with the scheduler and run its jobs", ps_cmd_node},
    /* Client commands of the scheduler service (cmd_cypress.c, cmd_ops.c; docs/api.md). */
    {"get", "print the value at a path (YSON): pools, trees, attributes, orchid", ps_cmd_get},
    {"set", "set an attribute at a path to a YSON/JSON value", ps_cmd_set},
    {"list", "list the children of a path", ps_cmd_list},
    {"create", "create a scheduler_pool or scheduler_pool_tree", ps_cmd_create},
    {"remove", "remove a pool or pool tree", ps_cmd_remove},
    {"exists", "print whether a path exists (true/false)", ps_cmd_exists},
    {"vanilla", "start a vanilla operation from flags", ps_cmd_vanilla},
    {"start-op", "start an operation from a spec file", ps_cmd_start_op},
    {"list-operations", "list operations as a table", ps_cmd_list_operations},
    {"get-operation", "show one operation", ps_cmd_get_operation},
    {"abort-op", "abort an operation", ps_cmd_abort_op},
    {"suspend-op", "suspend an operation", ps_cmd_suspend_op},
    {"resume-op", "resume a suspended operation", ps_cmd_resume_op},
    {"complete-op", "complete an operation now", ps_cmd_complete_op},
    {"update-op-parameters", "change an operation's pool, weight or limits",
     ps_cmd_update_op_parameters},
    {"list-jobs", "list the jobs of an operation as a table", ps_cmd_list_jobs},
    {"get-job-stderr", "print a job's standard error", ps_cmd_get_job_stderr},
    {"list-nodes", "list the nodes: state, tree, tags, resources in use, jobs", ps_cmd_list_nodes},
    {"issue-token", "issue a token for a user (admin only)", ps_cmd_issue_token},
    {"revoke-token", "revoke a token (admin only)", ps_cmd_revoke_token},
    {NULL, NULL, NULL},
};
