#include "core/node_ban.h"

#include <stdio.h>

struct ps_node_ban_spec ps_node_ban_spec_of(const struct ps_operation_spec *spec)
{
    return (struct ps_node_ban_spec){
        .ban_nodes_with_failed_jobs = spec->ban_nodes_with_failed_jobs,
        .ignore_job_failures_at_banned_nodes = spec->ignore_job_failures_at_banned_nodes,
        .fail_on_all_nodes_banned = spec->fail_on_all_nodes_banned,
    };
}

enum ps_node_ban_failure ps_node_ban_job_failed(const struct ps_node_ban_spec *spec,
                                                bool node_banned)
{
    if (node_banned)
        return spec->ignore_job_failures_at_banned_nodes ? PS_NODE_BAN_ABORTED
                                                         : PS_NODE_BAN_FAILED;
    return spec->ban_nodes_with_failed_jobs ? PS_NODE_BAN_FAILED_BAN : PS_NODE_BAN_FAILED;
}

bool ps_node_ban_all_banned(const struct ps_strategy *s, const struct ps_operation *op,
                            const struct ps_node_ban_spec *spec, int banned_count,
                            ps_exec_node_usable_fn usable_for_op, void *ctx, char *msg,
                            size_t size)
{
    if (!spec->fail_on_all_nodes_banned || banned_count <= 0)
        return false;
    char filter[512], trees[256];
    if (ps_exec_nodes_find(s, op, usable_for_op, ctx, filter, sizeof filter, trees, sizeof trees))
        return false;
    snprintf(msg, size,
             "All online nodes that match operation scheduling tag filter \"%s\" were banned in "
             "trees [%s]%s",
             filter, trees,
             spec->ban_nodes_with_failed_jobs ? " (\"ban_nodes_with_failed_jobs\" spec option is "
                                                "set, try investigating your job failures)"
                                              : "");
    return true;
}
