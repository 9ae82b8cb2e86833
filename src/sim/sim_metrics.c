/* sim_metrics.c — fairness metrics and summary.json.
 *
 * Per pool (and <Root>) of every tree, integrated exactly over virtual time: usage and demand
 * change with every job start and end, the fair share with every fair share update. Ratios are
 * dominant shares: the largest component of resources / the tree's total (unlimited totals
 * are skipped).
 *   aggregated_delay   integral of max(0, min(fair share, demand) - usage), share x seconds:
 *                      the YTsaurus simulator analysis' "delay"; demand caps the fair share so a
 *                      pool whose jobs just ended is not counted as short-changed until the next
 *                      update notices;
 *   underserved        usage < min(fair share, demand) x fair_share_starvation_tolerance of the
 *                      tree: the periods, their total and longest length, and how many lasted
 *                      longer than fair_share_starvation_timeout (they would have starved).
 * Job wait time: from the moment a job could run (its operation's submission, or its abort
 * for a retried job) to its start, over every started attempt: p50, p95 (nearest rank), max.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

#define EPS 1e-12

struct sim_pool_stats *sim_stats_get(struct ps_sim *sim, int tree, const char *pool)
{
    struct sim_tree *T = &sim->trees[tree];
    struct sim_pool_stats *st = ps_strmap_get(&T->stats_by_name, pool);
    if (st)
        return st;
    if (T->stats_count == T->stats_cap) {
        int cap = T->stats_cap ? 2 * T->stats_cap : 16;
        struct sim_pool_stats **grown = realloc(T->stats, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        T->stats = grown;
        T->stats_cap = cap;
    }
    st = calloc(1, sizeof *st);
    if (!st || !(st->name = strdup(pool))) {
        free(st);
        return NULL;
    }
    st->tree = tree;
    st->last_ms = sim->now;
    if (ps_strmap_put(&T->stats_by_name, st->name, st) != 0) {
        free(st->name);
        free(st);
        return NULL;
    }
    T->stats[T->stats_count++] = st;
    return st;
}

static double dominant(const struct ps_resources *r, const struct ps_resources *total)
{
    double best = 0.0;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (total->v[i] <= 0 || total->v[i] >= PS_RES_INFINITE)
            continue;
        double x = (double)r->v[i] / (double)total->v[i];
        best = x > best ? x : best;
    }
    return best;
}

void sim_stats_advance(struct ps_sim *sim, struct sim_pool_stats *st)
{
    int64_t dt = sim->now - st->last_ms;
    if (dt <= 0)
        return;
    const struct ps_resources *total = &sim->trees[st->tree].total;
    double usage = dominant(&st->usage, total), demand = dominant(&st->demand, total);
    double target = st->fair_share_ratio < demand ? st->fair_share_ratio : demand;
    double seconds = (double)dt / 1000.0;
    if (target > usage)
        st->delay += (target - usage) * seconds;
    st->usage_integral += usage * seconds;
    st->fair_share_integral += st->fair_share_ratio * seconds;
    st->observed_ms += dt;
    st->last_ms = sim->now;
}

/* A period that ends at the instant it began (a job ended and the heartbeat of the same
 * millisecond replaced it) is not a period. */
static void close_period(struct ps_sim *sim, struct sim_pool_stats *st)
{
    int64_t len = sim->now - st->underserved_since_ms;
    if (len <= 0)
        return;
    st->underserved_periods++;
    st->underserved_ms += len;
    if (len > st->longest_underserved_ms)
        st->longest_underserved_ms = len;
    if (len > sim->trees[st->tree].starvation_timeout_ms)
        st->underserved_long_periods++;
}

static void update_underserved(struct ps_sim *sim, struct sim_pool_stats *st)
{
    const struct sim_tree *T = &sim->trees[st->tree];
    double usage = dominant(&st->usage, &T->total), demand = dominant(&st->demand, &T->total);
    double target = (st->fair_share_ratio < demand ? st->fair_share_ratio : demand) * T->tolerance;
    bool under = usage + EPS < target;
    if (under == st->underserved)
        return;
    if (under) {
        st->underserved_since_ms = sim->now;
    } else {
        close_period(sim, st);
    }
    st->underserved = under;
}

/* Integrals advance only where a value changes, so they are sums over the same pieces however
 * often unchanged values are set again (a skipped fair share update gives the same bits). */
void sim_stats_set_fair_share(struct ps_sim *sim, struct sim_pool_stats *st, double ratio)
{
    if (ratio == st->fair_share_ratio)
        return;
    sim_stats_advance(sim, st);
    st->fair_share_ratio = ratio;
    update_underserved(sim, st);
}

void sim_stats_add(struct ps_sim *sim, struct sim_pool_stats **path, int len,
                   const struct ps_resources *usage, const struct ps_resources *demand, int sign)
{
    if (ps_resources_is_zero(*usage) && ps_resources_is_zero(*demand))
        return;
    for (int i = 0; i < len; i++) {
        struct sim_pool_stats *st = path[i];
        sim_stats_advance(sim, st);
        if (sign > 0) {
            st->usage = ps_resources_add(st->usage, *usage);
            st->demand = ps_resources_add(st->demand, *demand);
        } else {
            st->usage = ps_resources_sub(st->usage, *usage);
            st->demand = ps_resources_sub(st->demand, *demand);
        }
        update_underserved(sim, st);
    }
}

void sim_stats_finish(struct ps_sim *sim)
{
    for (int t = 0; t < sim->tree_count; t++) {
        struct sim_tree *T = &sim->trees[t];
        for (int i = 0; i < T->stats_count; i++) {
            struct sim_pool_stats *st = T->stats[i];
            sim_stats_advance(sim, st);
            if (st->underserved) {   /* an open period counts up to the end */
                close_period(sim, st);
                st->underserved = false;
            }
        }
    }
}

int sim_record_wait(struct ps_sim *sim, int64_t wait_ms)
{
    if (sim->wait_count == sim->wait_cap) {
        int64_t cap = sim->wait_cap ? 2 * sim->wait_cap : 1024;
        int64_t *grown = realloc(sim->waits, (size_t)cap * sizeof *grown);
        if (!grown)
            return PS_ENOMEM;
        sim->waits = grown;
        sim->wait_cap = cap;
    }
    sim->waits[sim->wait_count++] = wait_ms;
    return 0;
}

/* ---- summary.json ------------------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_stats(const void *a, const void *b)
{
    const struct sim_pool_stats *x = *(const struct sim_pool_stats *const *)a;
    const struct sim_pool_stats *y = *(const struct sim_pool_stats *const *)b;
    if (x->tree != y->tree)
        return x->tree - y->tree;
    return strcmp(x->name, y->name);   /* names are unique within a tree */
}

/* Nearest rank: the smallest value with at least q of the samples at or below it. */
static int64_t quantile(const int64_t *sorted, int64_t n, int q_percent)
{
    int64_t rank = (q_percent * n + 99) / 100;
    return sorted[rank > 0 ? rank - 1 : 0];
}

static void key(struct ps_textbuf *b, int indent, bool *first, const char *name)
{
    ps_textbuf_adds(b, *first ? "\n" : ",\n");
    *first = false;
    for (int i = 0; i < indent; i++)
        ps_textbuf_add(b, " ", 1);
    ps_textbuf_add_json(b, name);
    ps_textbuf_adds(b, ": ");
}

static void kint(struct ps_textbuf *b, int indent, bool *first, const char *name, int64_t v)
{
    key(b, indent, first, name);
    ps_textbuf_addi(b, v);
}

static void kdouble(struct ps_textbuf *b, int indent, bool *first, const char *name, double v)
{
    key(b, indent, first, name);
    sim_text_double(b, v);
}

static void close_obj(struct ps_textbuf *b, int indent, bool empty)
{
    if (!empty) {
        ps_textbuf_adds(b, "\n");
        for (int i = 0; i < indent; i++)
            ps_textbuf_add(b, " ", 1);
    }
    ps_textbuf_adds(b, "}");
}

int ps_sim_write_summary(struct ps_sim *sim, FILE *out, struct ps_error *err)
{
    struct ps_textbuf b = {0};
    struct ps_sim_stats s;
    ps_sim_get_stats(sim, &s);
    bool top = true, f;
    ps_textbuf_adds(&b, "{");
    kint(&b, 2, &top, "simulated_time", sim->now);
    key(&b, 2, &top, "end");
    ps_textbuf_add_json(&b, sim->end_reason ? sim->end_reason : "not_finished");
    kint(&b, 2, &top, "nodes", sim->node_count);
    kint(&b, 2, &top, "pool_trees", sim->tree_count);

    key(&b, 2, &top, "operations");
    ps_textbuf_adds(&b, "{");
    f = true;
    kint(&b, 4, &f, "total", s.operations);
    kint(&b, 4, &f, "completed", s.operations_completed);
    kint(&b, 4, &f, "failed", s.operations_failed);
    kint(&b, 4, &f, "running", s.operations_running);
    kint(&b, 4, &f, "pending", s.operations_pending);
    kint(&b, 4, &f, "not_started", s.operations_not_submitted);
    close_obj(&b, 2, false);

    int64_t jobs_all = 0, pending = 0;
    for (int64_t i = 0; i < sim->op_count; i++) {
        jobs_all += sim->ops[i].job_count;
        if (sim->ops[i].state == SIM_OP_PENDING || sim->ops[i].state == SIM_OP_RUNNING)
            pending += sim->ops[i].pending;
    }
    key(&b, 2, &top, "jobs");
    ps_textbuf_adds(&b, "{");
    f = true;
    kint(&b, 4, &f, "total", jobs_all);
    kint(&b, 4, &f, "of_started_operations", s.jobs);
    kint(&b, 4, &f, "completed", s.jobs_completed);
    kint(&b, 4, &f, "failed", s.jobs_failed);
    kint(&b, 4, &f, "running", s.jobs_running);
    kint(&b, 4, &f, "pending", pending);
    kint(&b, 4, &f, "started", s.attempts_started);
    kint(&b, 4, &f, "aborted", s.attempts_aborted);
    kint(&b, 4, &f, "preempted", s.attempts_preempted);
    close_obj(&b, 2, false);

    /* job_preempted events per reason (the <Root> counts of every tree). */
    int64_t by_reason[3] = {0, 0, 0};
    for (int t = 0; t < sim->tree_count; t++) {
        struct sim_pool_stats *root = ps_strmap_get(&sim->trees[t].stats_by_name, PS_SCENARIO_ROOT_POOL);
        for (int r = 0; root && r < 3; r++)
            by_reason[r] += root->preempted[r];
    }
    key(&b, 2, &top, "preemptions");
    ps_textbuf_adds(&b, "{");
    f = true;
    for (int r = 0; r < 3; r++)
        kint(&b, 4, &f, ps_preempt_reason_name((enum ps_preempt_reason)r), by_reason[r]);
    close_obj(&b, 2, false);

    int64_t *sorted = NULL;
    if (sim->wait_count > 0) {
        sorted = malloc((size_t)sim->wait_count * sizeof *sorted);
        if (!sorted)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        memcpy(sorted, sim->waits, (size_t)sim->wait_count * sizeof *sorted);
        qsort(sorted, (size_t)sim->wait_count, sizeof *sorted, cmp_i64);
    }
    key(&b, 2, &top, "job_wait_time");
    ps_textbuf_adds(&b, "{");
    f = true;
    kint(&b, 4, &f, "count", sim->wait_count);
    if (sorted) {
        double sum = 0;
        for (int64_t i = 0; i < sim->wait_count; i++)
            sum += (double)sorted[i];
        kint(&b, 4, &f, "p50", quantile(sorted, sim->wait_count, 50));
        kint(&b, 4, &f, "p95", quantile(sorted, sim->wait_count, 95));
        kint(&b, 4, &f, "max", sorted[sim->wait_count - 1]);
        kdouble(&b, 4, &f, "mean", sum / (double)sim->wait_count);
    }
    free(sorted);
    close_obj(&b, 2, f);

    key(&b, 2, &top, "scheduler");
    ps_textbuf_adds(&b, "{");
    f = true;
    kint(&b, 4, &f, "heartbeats", s.heartbeats);
    kint(&b, 4, &f, "heartbeats_scheduled", s.heartbeats_scheduled);
    kint(&b, 4, &f, "allocations", s.allocations);
    kint(&b, 4, &f, "fair_share_updates", s.fair_share_updates);
    kint(&b, 4, &f, "fair_share_updates_skipped", s.fair_share_updates_skipped);
    close_obj(&b, 2, false);

    /* Why operations waited: time per top reason, and the operations still waiting. */
    key(&b, 2, &top, "pending_reason_time");
    ps_textbuf_adds(&b, "{");
    f = true;
    for (int r = 1; r < PS_PENDING_REASON_COUNT; r++)
        kint(&b, 4, &f, ps_pending_reason_id((enum ps_pending_reason)r), sim->reason_ms[r]);
    close_obj(&b, 2, false);
    key(&b, 2, &top, "pending_at_end");
    ps_textbuf_adds(&b, "[");
    bool any = false;
    for (int i = 0; i < sim->active_count; i++) {
        int op = sim->active[i];
        const struct sim_op *o = &sim->ops[op];
        if (o->state == SIM_OP_RUNNING && o->pending == 0)
            continue;
        struct ps_pending_info info;
        char msg[256];
        sim_pending_reason_describe(sim, op, &info, msg, sizeof msg);
        ps_textbuf_adds(&b, any ? ",\n    {" : "\n    {");
        any = true;
        ps_textbuf_adds(&b, "\"operation_id\": ");
        ps_textbuf_add_json(&b, o->sc->id);
        ps_textbuf_adds(&b, ", \"state\": ");
        ps_textbuf_add_json(&b, o->state == SIM_OP_PENDING ? "pending" : "running");
        ps_textbuf_adds(&b, ", \"pending_job_count\": ");
        ps_textbuf_addi(&b, o->pending);
        ps_textbuf_adds(&b, ", \"reason\": ");
        ps_textbuf_add_json(&b, ps_pending_reason_id(info.reason));
        ps_textbuf_adds(&b, ", \"message\": ");
        ps_textbuf_add_json(&b, msg);
        ps_textbuf_adds(&b, "}");
    }
    ps_textbuf_adds(&b, any ? "\n  ]" : "]");

    sim_res_summary(sim, &b);   /* "memory" and "cpu_monitor" */

    int count = 0;
    for (int t = 0; t < sim->tree_count; t++)
        count += sim->trees[t].stats_count;
    struct sim_pool_stats **all = malloc((size_t)(count ? count : 1) * sizeof *all);
    if (!all) {
        ps_textbuf_release(&b);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    count = 0;
    for (int t = 0; t < sim->tree_count; t++)
        for (int i = 0; i < sim->trees[t].stats_count; i++)
            all[count++] = sim->trees[t].stats[i];
    qsort(all, (size_t)count, sizeof *all, cmp_stats);
    key(&b, 2, &top, "pools");
    ps_textbuf_adds(&b, "[");
    for (int i = 0; i < count; i++) {
        const struct sim_pool_stats *st = all[i];
        double secs = (double)st->observed_ms / 1000.0;
        ps_textbuf_adds(&b, i ? ",\n    {" : "\n    {");
        f = true;
        key(&b, 6, &f, "tree");
        ps_textbuf_add_json(&b, sim->trees[st->tree].name);
        key(&b, 6, &f, "pool");
        ps_textbuf_add_json(&b, st->name);
        kdouble(&b, 6, &f, "aggregated_delay", st->delay);
        kint(&b, 6, &f, "underserved_periods", st->underserved_periods);
        kint(&b, 6, &f, "underserved_time", st->underserved_ms);
        kint(&b, 6, &f, "longest_underserved_period", st->longest_underserved_ms);
        kint(&b, 6, &f, "underserved_periods_over_starvation_timeout", st->underserved_long_periods);
        kdouble(&b, 6, &f, "mean_fair_share_ratio", secs > 0 ? st->fair_share_integral / secs : 0.0);
        kdouble(&b, 6, &f, "mean_usage_ratio", secs > 0 ? st->usage_integral / secs : 0.0);
        /* job_preempted events of the pool's subtree, per reason */
        key(&b, 6, &f, "preemptions");
        ps_textbuf_adds(&b, "{");
        bool g = true;
        for (int r = 0; r < 3; r++)
            kint(&b, 8, &g, ps_preempt_reason_name((enum ps_preempt_reason)r), st->preempted[r]);
        close_obj(&b, 6, false);
        close_obj(&b, 4, false);
    }
    ps_textbuf_adds(&b, count ? "\n  ]" : "]");
    free(all);
    ps_textbuf_adds(&b, "\n}\n");
    int rc = 0;
    if (b.failed)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory writing summary.json");
    else if (fwrite(b.data, 1, b.len, out) != b.len)
        rc = ps_error_set(err, PS_EIO, "cannot write summary.json");
    ps_textbuf_release(&b);
    return rc;
}
