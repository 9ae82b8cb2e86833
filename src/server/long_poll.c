/* long_poll.c — held heartbeats (docs/api.md, "Nodes", long-poll; docs/scheduling-loop.md).
 *
 * A deliberate addition to YTsaurus's protocol, where a node heartbeats every period and a new
 * job waits for the next heartbeat of some node (upstream has no long-poll): an agent that
 * sends wait_ms lets the scheduler hold its heartbeat when the heartbeat would give it nothing
 * (no job to start, interrupt or abort, nothing acknowledged, nothing written). The HTTP
 * server parks the connection (ps_http_hold: no thread per held node). The heartbeat is
 * released, and runs its normal processing again (the stages of the scheduling loop, on the
 * same request), when a fair share update finds work the node may take, when its hold ends
 * (at most one heartbeat period), when the agent sends a newer heartbeat (a job finished
 * there) or when the server stops. A released heartbeat whose rerun comes after a newer one of
 * the node ran is refused with 409 and changes nothing (ps_api_heartbeat_json compares the
 * node's heartbeat_seq with the one it was held at). Heartbeats without wait_ms are answered
 * at once, as before.
 *
 * Which held heartbeats a fair share update releases: each update that follows changes (an
 * operation started, changed or finished, a pool changed: the tree was dirty) starts a new
 * work generation of its tree; while the tree's operations have pending jobs, the update
 * releases up to that many held nodes of the tree with a free user slot that were held before
 * this generation. A released node that finds nothing is held again with the current
 * generation and is not released again until something changes: no node spins on work it
 * cannot take, and one new job wakes one node, not the whole cluster.
 */
#include <stdint.h>

#include "platform/clock.h"
#include "server/heartbeat.h"
#include "server/service_state.h"

/* A hold shorter than this is not worth parking the connection for. */
#define MIN_HOLD_NS (5 * 1000000LL)

static int64_t tree_pending(struct ps_pool_tree *tree)
{
    int64_t pending = 0;
    for (int k = 0; k < ps_pool_tree_operation_count(tree); k++) {
        const struct ps_tree_op *to = ps_pool_tree_operation_at(tree, k);
        if (!to->suspended && to->pending_job_count > 0)
            pending += to->pending_job_count;
    }
    return pending;
}

static struct ps_svc_tree_state *node_tree(struct ps_service *svc, const char *node_id,
                                           struct ps_pool_tree **tree)
{
    const struct ps_node *sn = ps_strategy_find_node(svc->strategy, node_id);
    *tree = sn ? sn->tree : NULL;
    return *tree ? ps_svc_tree(svc, ps_pool_tree_name(*tree)) : NULL;
}

bool ps_svc_long_poll_hold(struct ps_service *svc, struct ps_svc_node *node,
                           struct ps_svc_hold *hold)
{
    if (!hold || !svc->http || hold->deadline_ns < ps_clock_monotonic_ns() + MIN_HOLD_NS)
        return false;
    struct ps_pool_tree *tree;
    struct ps_svc_tree_state *ts = node_tree(svc, node->id, &tree);
    if (ps_http_hold(hold->req, hold->resp, node->id, hold->deadline_ns,
                     node->heartbeat_seq) != 0)
        return false;
    node->held = true;
    node->hold_gen = ts ? ts->work_gen : 0;
    hold->held = true;
    return true;
}

void ps_svc_long_poll_wake(struct ps_service *svc, struct ps_svc_tree_state *ts, bool changed)
{
    if (changed)
        ts->work_gen++;
    struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, ts->name);
    if (!svc->http || !tree)
        return;
    int64_t budget = tree_pending(tree);
    for (int i = 0; i < svc->node_count && budget > 0; i++) {
        struct ps_svc_node *n = svc->node_list[i];
        if (!n->held || n->hold_gen == ts->work_gen || n->banned ||
            n->job_count >= n->limits.v[PS_RES_USER_SLOTS])
            continue;
        const struct ps_node *sn = ps_strategy_find_node(svc->strategy, n->id);
        if (!sn || sn->tree != tree)
            continue;
        n->held = false;
        if (ps_http_server_release(svc->http, n->id, PS_HTTP_RELEASED_WAKE))
            budget--;
    }
}
