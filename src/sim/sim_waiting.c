/* sim_waiting.c — jobs that wait on their simulated node for resources its running jobs still
 * hold (the victims of a preemption finishing their interruption), by the node agent's rule
 * (core/node_waiting.h).
 *
 * A job that does not fit at its start (sim_job_wait_check) is marked waiting; the heartbeat
 * that started it settles its node at its end (sim_node_waiting), once the victims aborted at
 * once have left: a job that fits then runs as planned at its start (same instant). One that
 * still does not fit really waits: job_waiting, its waiting timeout queued (SIM_EV_JOB_WAIT),
 * its planned end dropped. Whenever a running job leaves the node, its waiting jobs that fit
 * start in arrival order (job_running: their duration, memory and CPU profile count from
 * there); at its timeout a job still waiting is aborted with waiting_timeout. The scheduler
 * counts a waiting job's allocation as it counts the node agent's (reported as running).
 */
#include <stdlib.h>

#include "core/node_waiting.h"
#include "core/op_spec.h"
#include "core/pool_tree.h"
#include "core/tree_config.h"
#include "sim/sim_internal.h"

static struct ps_node_slots_cpu capacity(const struct sim_node *n)
{
    return (struct ps_node_slots_cpu){n->limits.v[PS_RES_USER_SLOTS], n->limits.v[PS_RES_CPU]};
}

/* What the node's running (not waiting) jobs hold. */
static struct ps_node_slots_cpu held(const struct ps_sim *sim, const struct sim_node *n)
{
    struct ps_node_slots_cpu h = {0, 0};
    for (int i = 0; i < n->job_count; i++) {
        const struct sim_job *job = &sim->jobs[n->jobs[i]];
        if (job->waiting)
            continue;
        h.user_slots++;
        h.cpu += job->resources.v[PS_RES_CPU];
    }
    return h;
}

/* The job's waiting timeout: its operation's (spec and tree), else the node's default. */
static int64_t wait_timeout(const struct ps_sim *sim, const struct sim_job *job)
{
    const struct sim_op *o = &sim->ops[job->op];
    const struct sim_tree *T = &sim->trees[o->ms[job->ms].tree];
    int64_t t = o->op ? ps_operation_spec_waiting_job_timeout(
                            &o->op->spec,
                            &ps_pool_tree_config(T->tree)->waiting_for_resources_on_node_timeout_ms)
                      : -1;
    return ps_node_waiting_timeout(t, PS_NODE_DEFAULT_WAITING_FOR_RESOURCES_TIMEOUT_MS);
}

void sim_job_wait_check(struct ps_sim *sim, int64_t slot)
{
    struct sim_job *job = &sim->jobs[slot];
    struct sim_node *n = &sim->nodes[job->node];
    job->waiting = false;
    job->wait_armed = false;
    struct ps_node_slots_cpu cap = capacity(n), h = held(sim, n);
    h.user_slots--;   /* held() counted the job itself */
    h.cpu -= job->resources.v[PS_RES_CPU];
    if (ps_node_job_fits(&cap, &h, job->resources.v[PS_RES_CPU]))
        return;
    job->waiting = true;
    job->wait_timeout_ms = wait_timeout(sim, job);
    n->waiting++;
}

/* The job waits on: job_waiting, its timeout queued. */
static int arm(struct ps_sim *sim, int64_t slot, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    job->wait_armed = true;
    sim_ev_job(sim, "job_waiting", job);
    sim_ev_key(sim, "waiting_timeout");
    ps_textbuf_addi(&sim->line, job->wait_timeout_ms);
    sim_ev_end(sim);
    if (sim_push(sim, job->start_ms + job->wait_timeout_ms, SIM_EV_JOB_WAIT, slot, job->serial) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

/* The job fits: it runs from now (as planned when it never really waited). */
static int run(struct ps_sim *sim, int64_t slot, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    struct sim_node *n = &sim->nodes[job->node];
    job->waiting = false;
    n->waiting--;
    if (!job->wait_armed)
        return 0;
    job->wait_armed = false;
    int64_t waited = sim->now - job->start_ms;
    job->start_ms = sim->now;
    n->memory_excess -= job->memory_excess;   /* its memory is planned anew from here */
    job->memory_excess = 0;
    sim_job_plan_end(sim, job);
    if (sim_push(sim, job->end_ms, SIM_EV_JOB_END, slot, job->serial) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sim_ev_job(sim, "job_running", job);
    sim_ev_key(sim, "waited");
    ps_textbuf_addi(&sim->line, waited);
    sim_ev_end(sim);
    return 0;
}

static int by_serial(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[1], y = ((const int64_t *)b)[1];
    return (x > y) - (x < y);
}

int sim_node_waiting(struct ps_sim *sim, int node, struct ps_error *err)
{
    struct sim_node *n = &sim->nodes[node];
    if (n->waiting == 0)
        return 0;
    int count = 0;
    int64_t(*w)[2] = malloc((size_t)n->waiting * sizeof *w);   /* slot, serial */
    if (!w)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int i = 0; i < n->job_count && count < n->waiting; i++)
        if (sim->jobs[n->jobs[i]].waiting) {
            w[count][0] = n->jobs[i];
            w[count++][1] = sim->jobs[n->jobs[i]].serial;
        }
    qsort(w, (size_t)count, sizeof *w, by_serial);   /* arrival order */
    struct ps_node_slots_cpu cap = capacity(n), h = held(sim, n);
    int rc = 0;
    for (int i = 0; i < count && rc == 0; i++) {
        struct sim_job *job = &sim->jobs[w[i][0]];
        if (job->serial != w[i][1] || !job->waiting)
            continue;   /* it left meanwhile */
        switch (ps_node_waiting_step(&cap, &h, job->resources.v[PS_RES_CPU],
                                     job->start_ms + job->wait_timeout_ms, sim->now)) {
        case PS_NODE_WAITING_START:
            rc = run(sim, w[i][0], err);
            break;
        case PS_NODE_WAITING_TIMEOUT:
            rc = sim_job_abort(sim, w[i][0], "waiting_timeout", err);
            break;
        case PS_NODE_WAITING_KEEP:
            if (!job->wait_armed)
                rc = arm(sim, w[i][0], err);
            break;
        }
    }
    free(w);
    return rc;
}

int sim_job_wait_event(struct ps_sim *sim, int64_t slot, int64_t serial, struct ps_error *err)
{
    if (slot < 0 || slot >= sim->job_cap || sim->jobs[slot].serial != serial ||
        !sim->jobs[slot].waiting)
        return 0;   /* it started or left before its waiting timeout */
    return sim_node_waiting(sim, sim->jobs[slot].node, err);
}
