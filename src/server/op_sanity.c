/* op_sanity.c — operations that can never run fail, as upstream (node_health.h):
 * no online node matches their scheduling_tag_filter (controller agent CheckAvailableExecNodes),
 * or their scheduling hung in every tree: a pool above them has resource_limits smaller than
 * any of their pending jobs (the limiting ancestor), or they starve with no allocation started
 * (scheduler CheckOperationIsHung / CheckIsOperationStuck). Called by the engine loop under
 * svc->mu.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_nodes.h"
#include "core/node_ban.h"
#include "core/operation.h"
#include "server/node_health.h"
#include "server/service_state.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"

static bool op_running(const struct ps_svc_op *op)
{
    return !op->finished && op->sop && op->sop->state == PS_OP_RUNNING;
}

/* A node counts when it is registered and not banned. */
static bool node_usable(const struct ps_node *node, void *ctx)
{
    const struct ps_svc_node *n = ps_svc_node_get(ctx, node->id, false);
    return n && n->registered && !n->banned;
}

/* A node counts for op when it counts and is not banned for op (ban_nodes_with_failed_jobs). */
struct op_node {
    struct ps_service *svc;
    const struct ps_svc_op *op;
};

static bool node_usable_for_op(const struct ps_node *node, void *ctx)
{
    const struct op_node *on = ctx;
    return node_usable(node, on->svc) && !ps_svc_op_node_banned(on->op, node->id);
}

/* Upstream's CheckAvailableExecNodes with fail_on_all_nodes_banned (core/node_ban.h): it fails
 * when every node matching it is banned for it. True when it failed. */
static bool all_nodes_banned(struct ps_service *svc, struct ps_svc_op *op, int64_t now_ms)
{
    struct op_node on = {svc, op};
    char msg[1024];
    int banned = op->banned_nodes ? (int)json_object_size(op->banned_nodes) : 0;
    if (!ps_node_ban_all_banned(svc->strategy, op->sop, &op->bans, banned, node_usable_for_op, &on,
                                msg, sizeof msg))
        return false;
    ps_svc_log(svc, "warning", "operation_unschedulable", "id=%s reason=all_nodes_banned",
               op->id);
    ps_svc_op_finish(svc, op, "failed", msg, now_ms);
    return true;
}

static void check_exec_nodes(struct ps_service *svc, int64_t now_ms)
{
    for (int i = 0; i < svc->op_count; i++) {
        struct ps_svc_op *op = svc->op_list[i];
        if (!op_running(op) || all_nodes_banned(svc, op, now_ms) || op->exec_nodes_seen)
            continue;
        char msg[1024];
        op->exec_nodes_seen = ps_exec_nodes_available(svc->strategy, op->sop, node_usable, svc,
                                                      svc->cfg.safe_scheduler_online_time_ms,
                                                      msg, sizeof msg);
        if (op->exec_nodes_seen)
            continue;
        ps_svc_log(svc, "warning", "operation_unschedulable", "id=%s reason=no_matching_nodes",
                   op->id);
        ps_svc_op_finish(svc, op, "failed", msg, now_ms);
    }
}

/* The componentwise minimum of the allocations of the tasks with pending jobs (upstream
 * AggregatedMinNeededAllocationResources). False when nothing is pending. */
static bool min_needed(const struct ps_svc_op *op, struct ps_resources *out)
{
    bool any = false;
    for (int i = 0; i < op->task_count; i++) {
        const struct ps_svc_task *t = &op->tasks[i];
        if (t->q_len <= 0 || !t->queue)
            continue;
        struct ps_resources r = ps_svc_task_shape(t);
        for (int k = 0; k < PS_RES_COUNT; k++)
            out->v[k] = any && out->v[k] < r.v[k] ? out->v[k] : r.v[k];
        any = true;
    }
    return any;
}

/* The lowest pool above member whose specified resource_limits are below need somewhere;
 * *violated: those resources. */
static const struct ps_pool *limiting_ancestor(const struct ps_tree_op *member,
                                               const struct ps_resources *need, unsigned *violated)
{
    for (const struct ps_pool *p = member->pool; p; p = p->parent) {
        const struct ps_resources_opt *rl = &p->config.resource_limits;
        unsigned v = 0;
        for (int k = 0; k < PS_RES_COUNT; k++)
            if ((rl->set & (1u << k)) && rl->r.v[k] < need->v[k])
                v |= 1u << k;
        if (v) {
            *violated = v;
            return p;
        }
    }
    return NULL;
}

/* Appends "; " (unless first) and a formatted text to why. */
static void append(char *why, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *why, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(why + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = (size_t)n < size - *used ? *used + (size_t)n : size;
}

/* The limiting ancestor in one tree (upstream's check of the specified resource_limits of the
 * operation's ancestors): true with the reason appended once the ancestor has been there for
 * the safe timeout, counted from both the operation's activation and the first time seen. */
static bool limiting_hung(struct ps_service *svc, struct ps_svc_op *op, int t,
                          const struct ps_tree_op *member, const struct ps_resources *need,
                          int64_t now_ms, char *why, size_t size, size_t *used)
{
    struct ps_svc_op_tree *st = &op->trees[t];
    unsigned violated = 0;
    const struct ps_pool *p =
        need && op->sop->spec.enable_limiting_ancestor_check &&
                ps_pool_tree_config(member->tree)->enable_limiting_ancestor_check
            ? limiting_ancestor(member, need, &violated)
            : NULL;
    if (!p) {
        st->limiting_since_ms = 0;
        return false;
    }
    if (st->limiting_since_ms == 0)
        st->limiting_since_ms = now_ms;
    int64_t timeout = svc->cfg.operation_hangup_due_to_limiting_ancestor_safe_timeout_ms;
    if (now_ms <= op->hangup_active_since_ms + timeout || now_ms <= st->limiting_since_ms + timeout)
        return false;
    char names[64] = "", limits[256], needed[256];
    size_t nu = 0;
    for (int k = 0; k < PS_RES_COUNT; k++)
        if (violated & (1u << k))
            append(names, sizeof names, &nu, "%s%s", nu ? ", " : "", ps_resource_name(k));
    ps_resources_text(limits, sizeof limits, &p->config.resource_limits.r,
                      p->config.resource_limits.set);
    ps_resources_text(needed, sizeof needed, need, (1u << PS_RES_COUNT) - 1);
    append(why, size, used,
           "%sin pool tree \"%s\": Operation has an ancestor whose specified resource limits are "
           "too small to satisfy operation's minimum allocation resource demand "
           "(limiting_ancestor \"%s\"; resources [%s]; resource_limits {%s}; "
           "min_needed_resources {%s}; safe_timeout %" PRId64 " ms)",
           *used ? "; " : "", op->sop->tree_names[t], p->name, names, limits, needed, timeout);
    return true;
}

/* No successful scheduled allocations in one tree (upstream's CheckIsOperationStuck): starving
 * for the safe timeout with nothing running and nothing started in it, and passed over by more
 * than operation_hangup_min_schedule_job_attempts heartbeats since it last was not starving. */
static bool stuck(struct ps_service *svc, struct ps_svc_op *op, int t,
                  const struct ps_tree_op *member, int64_t now_ms, char *why, size_t size,
                  size_t *used)
{
    const struct ps_element_dynamic *d = &member->dynamic;
    int64_t safe = svc->cfg.operation_hangup_safe_timeout_ms;
    int64_t deactivations = member->deactivation_count - member->deactivation_count_at_non_starving;
    if (!d->valid || d->starvation == PS_NON_STARVING || member->fs_index < 0 ||
        now_ms <= op->hangup_active_since_ms + safe ||
        now_ms <= member->last_schedule_success_ms + safe ||
        d->below_fair_share_since_ms == PS_STARVATION_NEVER ||
        now_ms <= d->below_fair_share_since_ms + safe ||
        op->trees[t].usage.v[PS_RES_USER_SLOTS] > 0 ||
        deactivations <= svc->cfg.operation_hangup_min_schedule_job_attempts)
        return false;
    append(why, size, used,
           "%sin pool tree \"%s\": Operation has no successful scheduled allocations for a long "
           "period (period %" PRId64 " ms; deactivation_count %" PRId64
           "; last_schedule_allocation_success_time %" PRId64 " ms; starving_since %" PRId64
           " ms)",
           *used ? "; " : "", op->sop->tree_names[t], safe, deactivations,
           member->last_schedule_success_ms, d->below_fair_share_since_ms);
    return true;
}

/* Upstream's hung operation check: an operation fails when every one of its trees holds it back,
 * by a limiting ancestor or by being stuck. */
static void check_hung_operations(struct ps_service *svc, int64_t now_ms)
{
    for (int i = 0; i < svc->op_count; i++) {
        struct ps_svc_op *op = svc->op_list[i];
        if (!op_running(op) || op->suspended) {
            op->hangup_active_since_ms = 0;
            for (int t = 0; op->sop && t < op->tree_count; t++)
                op->trees[t].limiting_since_ms = 0;
            continue;
        }
        if (op->hangup_active_since_ms == 0)
            op->hangup_active_since_ms = now_ms;
        struct ps_resources need;
        bool pending = min_needed(op, &need);
        char why[1500] = "";
        size_t used = 0;
        bool hung = op->sop->memberships && op->sop->tree_count > 0 &&
                    op->tree_count == op->sop->tree_count;
        for (int t = 0; hung && t < op->sop->tree_count; t++) {
            const struct ps_tree_op *member = op->sop->memberships[t];
            /* both checks run, to keep the limiting ancestor's first-seen time current */
            bool limited = member && limiting_hung(svc, op, t, member, pending ? &need : NULL,
                                                   now_ms, why, sizeof why, &used);
            hung = limited || (member && stuck(svc, op, t, member, now_ms, why, sizeof why, &used));
        }
        if (!hung)
            continue;
        char msg[1800];
        snprintf(msg, sizeof msg, "Operation scheduling hung in all trees: %s", why);
        ps_svc_log(svc, "warning", "operation_unschedulable", "id=%s reason=scheduling_hung",
                   op->id);
        ps_svc_op_finish(svc, op, "failed", msg, now_ms);
    }
}

/* Upstream's CheckMinNeededResourcesSanity (core/exec_nodes.h), on each running operation's
 * tasks with pending jobs. */
static void check_resource_demand(struct ps_service *svc, int64_t now_ms)
{
    for (int i = 0; i < svc->op_count; i++) {
        struct ps_svc_op *op = svc->op_list[i];
        if (!op_running(op))
            continue;
        for (int t = 0; t < op->task_count; t++) {
            const struct ps_svc_task *task = &op->tasks[t];
            struct ps_resources need = ps_svc_task_shape(task);
            char msg[700];
            if (task->q_len <= 0 || ps_exec_nodes_demand_fits(svc->strategy, op->sop, node_usable,
                                                              svc, task->name, &need, msg,
                                                              sizeof msg))
                continue;
            ps_svc_log(svc, "warning", "operation_unschedulable",
                       "id=%s reason=no_node_satisfies_demand task=%s", op->id, task->name);
            ps_svc_op_finish(svc, op, "failed", msg, now_ms);
            break;
        }
    }
}

void ps_op_sanity_check(struct ps_service *svc, int64_t now_ms)
{
    if (now_ms >= svc->next_demand_check_ms) {
        svc->next_demand_check_ms = now_ms + svc->cfg.resource_demand_sanity_check_period_ms;
        if (now_ms >= svc->started_ms + svc->cfg.safe_scheduler_online_time_ms)
            check_resource_demand(svc, now_ms);
    }
    if (now_ms >= svc->next_exec_nodes_check_ms) {
        svc->next_exec_nodes_check_ms = now_ms + svc->cfg.available_exec_nodes_check_period_ms;
        if (now_ms >= svc->started_ms + svc->cfg.safe_scheduler_online_time_ms)
            check_exec_nodes(svc, now_ms);
    }
    if (now_ms >= svc->next_hangup_check_ms) {
        svc->next_hangup_check_ms = now_ms + svc->cfg.operation_hangup_check_period_ms;
        check_hung_operations(svc, now_ms);
    }
}
