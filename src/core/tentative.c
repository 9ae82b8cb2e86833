#include "core/tentative.h"

#include "core/operation.h"
#include "core/tree_config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define OFF(field) offsetof(struct ps_tentative_eligibility_config, field)

static int config_init(void *obj)
{
    ps_tentative_eligibility_init(obj);
    return 0;
}

static const struct ps_attr attrs[] = {
    {.name = "sample_job_count", .kind = PS_ATTR_INT32, .offset = OFF(sample_job_count), .min = 0,
     .max = 1e9, .flags = PS_ATTR_MIN_OPEN},
    {.name = "max_tentative_job_duration_ratio", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(max_tentative_job_duration_ratio), .min = 0, .max = 1e9,
     .flags = PS_ATTR_MIN_OPEN},
    {.name = "min_job_duration", .kind = PS_ATTR_INT, .offset = OFF(min_job_duration_ms),
     .min = 0, .max = 1e15},
    {.name = "ignore_missing_pool_trees", .kind = PS_ATTR_BOOL,
     .offset = OFF(ignore_missing_pool_trees)},
};

const struct ps_attr_table ps_tentative_eligibility_table = {
    .what = "tentative_tree_eligibility",
    .attrs = attrs,
    .count = (int)(sizeof attrs / sizeof attrs[0]),
    .size = sizeof(struct ps_tentative_eligibility_config),
    .init = config_init,
};

void ps_tentative_eligibility_init(struct ps_tentative_eligibility_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->sample_job_count = 10;
    cfg->max_tentative_job_duration_ratio = 10.0;
    cfg->min_job_duration_ms = 30000;
}

static bool listed_in(const struct ps_string_list *list, const char *name)
{
    for (int i = 0; list && i < list->count; i++)
        if (strcmp(list->items[i], name) == 0)
            return true;
    return false;
}

static int add_tree(struct ps_tentative_state *st, const char *name)
{
    for (int i = 0; i < st->count; i++)
        if (strcmp(st->trees[i].name, name) == 0)
            return 0;
    struct ps_tentative_tree *n = realloc(st->trees, (size_t)(st->count + 1) * sizeof *n);
    if (!n)
        return PS_ENOMEM;
    st->trees = n;
    n[st->count] = (struct ps_tentative_tree){.name = strdup(name), .last_start_ms = -1};
    if (!n[st->count].name)
        return PS_ENOMEM;
    st->count++;
    return 0;
}

int ps_tentative_state_init(struct ps_tentative_state *st,
                            const struct ps_tentative_eligibility_config *cfg,
                            const struct ps_string_list *pool_trees,
                            const struct ps_string_list *listed, bool use_default,
                            const struct ps_string_list *defaults,
                            bool (*exists)(void *ctx, const char *tree), void *ctx,
                            struct ps_error *err)
{
    memset(st, 0, sizeof *st);
    st->cfg = *cfg;
    const struct ps_string_list *names = listed && listed->count > 0 ? listed
                                         : use_default               ? defaults
                                                                     : NULL;
    if (!names || names->count == 0)
        return 0;
    if (!pool_trees || pool_trees->count == 0)
        return ps_error_set(err, PS_EINVAL, "Regular pool trees must be explicitly specified for "
                            "tentative pool trees to work properly");
    for (int i = 0; i < names->count; i++)
        if (listed_in(pool_trees, names->items[i]))
            return ps_error_set(err, PS_EINVAL, "Regular and tentative pool trees must not "
                                "intersect (pool tree \"%s\")", names->items[i]);
    for (int i = 0; i < names->count; i++) {
        const char *name = names->items[i];
        if (!exists(ctx, name)) {
            if (cfg->ignore_missing_pool_trees)
                continue;
            ps_tentative_state_release(st);
            return ps_error_set(err, PS_ENOENT, "Pool tree \"%s\" not found", name);
        }
        if (add_tree(st, name) != 0) {
            ps_tentative_state_release(st);
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
    }
    return 0;
}

void ps_tentative_state_release(struct ps_tentative_state *st)
{
    for (int i = 0; i < st->count; i++)
        free(st->trees[i].name);
    free(st->trees);
    st->trees = NULL;
    st->count = 0;
}

struct ps_tentative_tree *ps_tentative_find(const struct ps_tentative_state *st, const char *tree)
{
    for (int i = 0; tree && i < st->count; i++)
        if (strcmp(st->trees[i].name, tree) == 0)
            return &st->trees[i];
    return NULL;
}

bool ps_tentative_can_schedule(const struct ps_tentative_state *st,
                               const struct ps_tentative_tree *t)
{
    if (t->banned)
        return false;
    int running = t->started - t->finished;
    int remaining = st->cfg.sample_job_count - t->completed;
    return !(remaining > 0 && running >= remaining);
}

void ps_tentative_job_started(struct ps_tentative_state *st, const char *tree, int64_t now_ms)
{
    struct ps_tentative_tree *t = ps_tentative_find(st, tree);
    if (!t)
        return;
    t->started++;
    if (now_ms > t->last_start_ms)   /* jobs read back at a restart come in any order */
        t->last_start_ms = now_ms;
}

void ps_tentative_job_finished(struct ps_tentative_state *st, const char *tree, bool completed,
                               int64_t duration_ms)
{
    struct ps_tentative_tree *t = ps_tentative_find(st, tree);
    if (duration_ms < 0)
        duration_ms = 0;
    if (t)
        t->finished++;
    if (!completed)
        return;
    if (t) {
        t->completed++;
        t->duration_sum_ms += duration_ms;
    } else {
        st->regular_sum_ms += duration_ms;
        st->regular_count++;
    }
}

/* upstream's GetTentativeTreeAverageJobDuration (ms): the completed jobs and, until they make
 * the sample, the time since the last start as one more job. (Upstream's branch for a running
 * job after a full sample compares two counts of the same completed jobs: never taken.) */
static double tree_average(const struct ps_tentative_state *st, const struct ps_tentative_tree *t,
                           int64_t now_ms)
{
    double sum = (double)t->duration_sum_ms;
    if (t->completed >= st->cfg.sample_job_count)
        return sum / t->completed;
    double last = t->last_start_ms >= 0 ? (double)(now_ms - t->last_start_ms) : 0.0;
    return (sum + last) / (t->completed + 1);
}

static bool is_slow(const struct ps_tentative_state *st, const struct ps_tentative_tree *t,
                    int64_t now_ms)
{
    if (st->regular_count < st->cfg.sample_job_count || st->regular_sum_ms == 0)
        return false;
    double avg = tree_average(st, t, now_ms);
    if (avg < (double)st->cfg.min_job_duration_ms)
        return false;
    double regular = (double)st->regular_sum_ms / st->regular_count;
    return avg / regular >= st->cfg.max_tentative_job_duration_ratio;
}

int ps_tentative_ban_slow(struct ps_tentative_state *st, int64_t now_ms,
                          struct ps_tentative_tree **newly)
{
    int n = 0;
    for (int i = 0; i < st->count; i++) {
        struct ps_tentative_tree *t = &st->trees[i];
        /* upstream looks at the trees that started a job (StartedJobsPerPoolTree_) */
        if (t->banned || t->last_start_ms < 0 || !is_slow(st, t, now_ms))
            continue;
        t->banned = true;
        newly[n++] = t;
    }
    return n;
}
