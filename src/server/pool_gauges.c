/* pool_gauges.c — each pool's gauges after a fair share update: its fair share, usage and
 * demand ratios and the quantiles of its operations' satisfaction (core/pool_satisfaction.h);
 * it also holds each pool's job metric counters (job_metrics.c), so they leave with the pool.
 *
 * A tree of 1,000 pools has 14,000 such series: looking each up by its labels after every
 * update (a binary search of string comparisons over scattered labels, under svc->mu) cost
 * more than the rest of the update's bookkeeping. Each tree state keeps the series of its
 * pools by position; an entry stands while its series' pool label is the pool's name there
 * (pools come and go, a freed pool's place goes to another), and the satisfaction series while
 * the tree's profiling quantiles are those they were looked up for.
 *
 * A series an entry lets go of (its pool moved, or is gone; the quantiles changed) is removed
 * from /metrics unless another entry holds it (the pool now stands elsewhere): a pool that is
 * removed takes its gauges with it, as upstream's profiling drops a removed pool's sensors, so
 * ephemeral pools that come and go do not pile up series; a tree removed by the API takes
 * all its gauges (ps_svc_pool_gauges_remove). These caches hold the only pointers to the
 * series of their families.
 *
 * They are set at most once a second (GAUGE_PERIOD_MS; every update at the default 1 s
 * fair_share_update_period): the satisfaction digests of every pool cost a pass over all
 * operations, and a scrape every few seconds reads no more.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool_satisfaction.h"
#include "server/pool_gauges.h"
#include "server/service_state.h"
#include "server/svc_log.h"

#define GAUGE_PERIOD_MS 1000

struct pool_series {
    struct ps_metric *fair_share, *usage, *demand;
    struct ps_metric *job[PS_JOB_METRIC_COUNT];   /* its job metric counters (job_metrics.c) */
    struct ps_metric **satisfaction;   /* one per quantile, allocated with the cache's count */
};

struct ps_svc_gauge_cache {
    struct pool_series *pools;   /* [0] the root, [i + 1] pool i */
    int cap;
    double *quantiles;           /* what the satisfaction series are labelled with */
    int quantile_count;
    int64_t next_ms;             /* the next update that sets them */
    struct ps_metric **dropped;  /* let go of during this pass: removed unless still held */
    size_t dropped_count, dropped_cap;
};

static void drop(struct ps_svc_gauge_cache *c, struct ps_metric *m)
{
    if (!m)
        return;
    if (c->dropped_count == c->dropped_cap) {
        size_t cap = c->dropped_cap ? 2 * c->dropped_cap : 64;
        struct ps_metric **d = realloc(c->dropped, cap * sizeof *d);
        if (!d)
            return;   /* out of memory: it stays in /metrics */
        c->dropped = d;
        c->dropped_cap = cap;
    }
    c->dropped[c->dropped_count++] = m;
}

/* Lets go of e's own series (not its satisfaction ones). */
static void drop_own(struct ps_svc_gauge_cache *c, struct pool_series *e)
{
    drop(c, e->fair_share);
    drop(c, e->usage);
    drop(c, e->demand);
    e->fair_share = e->usage = e->demand = NULL;
    for (int k = 0; k < PS_JOB_METRIC_COUNT; k++) {
        drop(c, e->job[k]);
        e->job[k] = NULL;
    }
}

static void drop_satisfaction(struct ps_svc_gauge_cache *c)
{
    for (int i = 0; i < c->cap; i++) {
        for (int j = 0; c->pools[i].satisfaction && j < c->quantile_count; j++)
            drop(c, c->pools[i].satisfaction[j]);
        free(c->pools[i].satisfaction);
        c->pools[i].satisfaction = NULL;
    }
    free(c->quantiles);
    c->quantiles = NULL;
    c->quantile_count = 0;
}

void ps_svc_gauge_cache_free(struct ps_svc_gauge_cache *c)
{
    if (!c)
        return;
    drop_satisfaction(c);
    free(c->pools);
    free(c->dropped);
    free(c);
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (struct ps_metric *const *)a;
    uintptr_t y = (uintptr_t) * (struct ps_metric *const *)b;
    return x < y ? -1 : x > y;
}

/* The series let go of in this pass that no entry holds now leave their families. */
static void remove_dropped(struct ps_svc_gauge_cache *c)
{
    if (c->dropped_count == 0)
        return;
    size_t per = 3 + PS_JOB_METRIC_COUNT + (size_t)c->quantile_count, n = 0;
    struct ps_metric **held = malloc((size_t)c->cap * per * sizeof *held);
    if (!held) {
        c->dropped_count = 0;   /* they stay in /metrics: a leak of series, not of memory */
        return;
    }
    for (int i = 0; i < c->cap; i++) {
        const struct pool_series *e = &c->pools[i];
        struct ps_metric *own[3] = {e->fair_share, e->usage, e->demand};
        for (int k = 0; k < 3; k++)
            if (own[k])
                held[n++] = own[k];
        for (int k = 0; k < PS_JOB_METRIC_COUNT; k++)
            if (e->job[k])
                held[n++] = e->job[k];
        for (int j = 0; e->satisfaction && j < c->quantile_count; j++)
            if (e->satisfaction[j])
                held[n++] = e->satisfaction[j];
    }
    qsort(held, n, sizeof *held, by_address);
    qsort(c->dropped, c->dropped_count, sizeof *c->dropped, by_address);
    for (size_t k = 0; k < c->dropped_count; k++) {
        struct ps_metric *m = c->dropped[k];
        if (k > 0 && c->dropped[k - 1] == m)
            continue;   /* dropped twice */
        if (!bsearch(&m, held, n, sizeof *held, by_address))
            ps_metric_remove(m);
    }
    free(held);
    c->dropped_count = 0;
}

void ps_svc_pool_gauges_remove(struct ps_service *svc, struct ps_svc_tree_state *ts)
{
    struct ps_metric_family *per_tree[] = {svc->f_pool_count, svc->f_tree_nodes};
    const char *tname = ts->name;
    for (size_t k = 0; k < sizeof per_tree / sizeof *per_tree; k++) {
        struct ps_metric *m;
        if (ps_metric_family_get(per_tree[k], &tname, &m, NULL) == 0)
            ps_metric_remove(m);
    }
    struct ps_svc_gauge_cache *c = ts->gauges;
    if (!c)
        return;
    for (int i = 0; i < c->cap; i++)
        drop_own(c, &c->pools[i]);
    drop_satisfaction(c);
    remove_dropped(c);
}

/* Room for n pools' entries and the satisfaction series for these quantiles; false when out of
 * memory (the gauges are skipped this time). Entries past n (pools gone) let go of theirs. */
static bool prepare(struct ps_svc_tree_state *ts, int n, const struct ps_double_list *q)
{
    struct ps_svc_gauge_cache *c = ts->gauges;
    if (!c && !(c = ts->gauges = calloc(1, sizeof *c)))
        return false;
    if (c->quantile_count != q->count ||
        (q->count && memcmp(c->quantiles, q->items, (size_t)q->count * sizeof *q->items) != 0)) {
        drop_satisfaction(c);
        if (q->count) {
            c->quantiles = malloc((size_t)q->count * sizeof *q->items);
            if (!c->quantiles)
                return false;
            memcpy(c->quantiles, q->items, (size_t)q->count * sizeof *q->items);
            c->quantile_count = q->count;
        }
    }
    for (int i = n; i < c->cap; i++) {
        struct pool_series *e = &c->pools[i];
        drop_own(c, e);
        for (int j = 0; e->satisfaction && j < c->quantile_count; j++)
            drop(c, e->satisfaction[j]);
        free(e->satisfaction);
        memset(e, 0, sizeof *e);
    }
    if (n > c->cap) {
        struct pool_series *p = realloc(c->pools, (size_t)n * sizeof *p);
        if (!p)
            return false;
        memset(p + c->cap, 0, (size_t)(n - c->cap) * sizeof *p);
        c->pools = p;
        c->cap = n;
    }
    return true;
}

/* The series of family f for pool (labels tree, pool[, quantile]) through the slot *m: kept
 * when its pool label is still this pool's name, else let go of. NULL when it cannot be had. */
static struct ps_metric *series(struct ps_svc_gauge_cache *c, struct ps_metric_family *f,
                                struct ps_metric **m, const char *const *labels)
{
    if (*m && strcmp(ps_metric_label(*m, 1), labels[1]) == 0)
        return *m;
    drop(c, *m);
    if (ps_metric_family_get(f, labels, m, NULL) != 0)
        *m = NULL;
    return *m;
}

static void set(struct ps_metric *m, double v)
{
    if (m)
        ps_metric_set(m, v);
}

void ps_svc_pool_gauges(struct ps_service *svc, struct ps_svc_tree_state *ts,
                        struct ps_pool_tree *tree, int64_t now_ms)
{
    /* (a clock stepped back more than a period starts them again) */
    if (ts->gauges && now_ms < ts->gauges->next_ms &&
        now_ms >= ts->gauges->next_ms - GAUGE_PERIOD_MS)
        return;
    const char *tname = ps_pool_tree_name(tree);
    struct ps_metric *m;
    if (ps_metric_family_get(svc->f_pool_count, &tname, &m, NULL) == 0)
        ps_metric_set(m, ps_pool_tree_pool_count(tree));
    if (ps_metric_family_get(svc->f_tree_nodes, &tname, &m, NULL) == 0)
        ps_metric_set(m, ps_pool_tree_node_count(tree));

    const struct ps_double_list *q =
        &ps_pool_tree_config(tree)->per_pool_satisfaction_profiling_quantiles;
    int n = ps_pool_tree_pool_count(tree) + 1;
    if (!prepare(ts, n, q)) {
        if (ts->gauges)
            ts->gauges->dropped_count = 0;
        return;
    }
    struct ps_svc_gauge_cache *c = ts->gauges;
    c->next_ms = now_ms + GAUGE_PERIOD_MS;
    double *values = NULL;
    int count = 0;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_pool_satisfaction_quantiles(tree, &values, &count, &err) != 0) {
        ps_svc_log(svc, "error", "satisfaction_digest_failed", "tree=%s error=\"%s\"", tname,
                   err.msg);
        count = 0;
    }
    if (count != c->quantile_count)
        count = 0;   /* not what the series are for: no satisfaction gauges this time */
    for (int i = 0; i < n; i++) {
        struct ps_pool *p = i == 0 ? ps_pool_tree_root(tree) : ps_pool_tree_pool_at(tree, i - 1);
        if (!p->dynamic.valid)
            continue;
        struct pool_series *e = &c->pools[i];
        const char *labels[3] = {tname, p->name, NULL};
        set(series(c, svc->f_pool_fair_share, &e->fair_share, labels), p->dynamic.fair_share_ratio);
        set(series(c, svc->f_pool_usage, &e->usage, labels), p->dynamic.usage_ratio);
        set(series(c, svc->f_pool_demand, &e->demand, labels), p->dynamic.demand_ratio);
        /* held here so that they leave with the pool; the jobs' reports add to them */
        for (int k = 0; k < PS_JOB_METRIC_COUNT; k++)
            if (svc->f_job_metrics[k])
                series(c, svc->f_job_metrics[k], &e->job[k], labels);
        if (count == 0)
            continue;
        if (!e->satisfaction && !(e->satisfaction = calloc((size_t)count, sizeof *e->satisfaction)))
            continue;
        for (int j = 0; j < count; j++) {
            if (!e->satisfaction[j] ||
                strcmp(ps_metric_label(e->satisfaction[j], 1), p->name) != 0) {
                /* labelled as upstream's sensor tag: %g, so 1.0 is "1" and 0.25 "0.25" */
                char quantile[32];
                snprintf(quantile, sizeof quantile, "%g", q->items[j]);
                labels[2] = quantile;
                series(c, svc->f_pool_satisfaction, &e->satisfaction[j], labels);
            }
            set(e->satisfaction[j], values[(size_t)i * (size_t)count + (size_t)j]);
        }
    }
    free(values);
    remove_dropped(c);
}
