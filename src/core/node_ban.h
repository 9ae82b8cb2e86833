/* node_ban.h — an operation's own node bans, as upstream's controller agent: with
 * ban_nodes_with_failed_jobs a node where one of the operation's jobs failed takes no more of
 * its jobs; with ignore_job_failures_at_banned_nodes a later failure there counts as an abort
 * (reason node_banned); with fail_on_all_nodes_banned (default) the operation fails once every
 * node that matches it is banned for it (CheckAvailableExecNodes, every
 * available_exec_nodes_check_period). The hosts keep the set of banned nodes (the service per
 * operation in its store, the simulator in memory) and ask these rules: the service
 * (server/svc_jobs.c, server/sched_host.c, server/op_sanity.c) and the simulator
 * (sim/sim_jobs.c, sim/sim_host.c, sim/sim_sched.c). */
#ifndef PS_CORE_NODE_BAN_H
#define PS_CORE_NODE_BAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/exec_nodes.h"
#include "core/op_spec.h"

/* The spec's keys (core/op_spec.h). */
struct ps_node_ban_spec {
    bool ban_nodes_with_failed_jobs;            /* false */
    bool ignore_job_failures_at_banned_nodes;   /* false */
    bool fail_on_all_nodes_banned;              /* true */
};

struct ps_node_ban_spec ps_node_ban_spec_of(const struct ps_operation_spec *spec);

/* What a failed job of the operation is (upstream's OnJobFailed). */
enum ps_node_ban_failure {
    PS_NODE_BAN_FAILED = 0,     /* a failed job, nothing more */
    PS_NODE_BAN_FAILED_BAN,     /* a failed job, and its node is banned for the operation now */
    PS_NODE_BAN_ABORTED,        /* an aborted job, reason node_banned (the node was banned) */
};

/* The reason of a job aborted by PS_NODE_BAN_ABORTED, and of a start refused on a node banned
 * for the operation (upstream's EAbortReason::NodeBanned). */
#define PS_NODE_BAN_ABORT_REASON "node_banned"

/* A job of an operation with spec failed at a node; node_banned: the node is banned for the
 * operation already. */
enum ps_node_ban_failure ps_node_ban_job_failed(const struct ps_node_ban_spec *spec,
                                                bool node_banned);

/* May a job of the operation start on a node? Not on one banned for it. */
static inline bool ps_node_ban_may_start(bool node_banned)
{
    return !node_banned;
}

/* Upstream's CheckAvailableExecNodes with fail_on_all_nodes_banned: true when op (spec, with
 * banned_count nodes banned for it) must fail because no node matching it is left once its
 * bans are taken away; usable_for_op tells a node that counts and is not banned for op. msg
 * (size bytes) then receives upstream's message. False when it has no ban, when
 * fail_on_all_nodes_banned is off, or when a node is left (or that cannot be told). */
bool ps_node_ban_all_banned(const struct ps_strategy *s, const struct ps_operation *op,
                            const struct ps_node_ban_spec *spec, int banned_count,
                            ps_exec_node_usable_fn usable_for_op, void *ctx, char *msg,
                            size_t size);

#endif
