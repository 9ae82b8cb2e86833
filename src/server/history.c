/* history.c — the bounded fair share history of history.h: per tree a ring of recent samples
 * and a ring of 5-minute buckets, per pool a series of fixed size in each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"
#include "server/history.h"

enum { V_FAIR, V_USAGE, V_DEMAND, V_VOLUME, V_CAPACITY, V_COUNT };
static const char *const value_names[V_COUNT] = {"fair_share", "usage", "demand",
                                                 "integral_volume", "integral_capacity"};

#define RECENT PS_HISTORY_RECENT_POINTS
#define BUCKETS PS_HISTORY_BUCKETS

/* A ring's position: next = where the next point goes, count = points held (<= cap). */
struct ring {
    int next, count;
};

static int ring_push(struct ring *r, int cap)
{
    int at = r->next;
    r->next = (r->next + 1) % cap;
    if (r->count < cap)
        r->count++;
    return at;
}

/* The index of the i-th oldest point. */
static int ring_at(const struct ring *r, int cap, int i)
{
    return (r->next - r->count + i + cap) % cap;
}

struct series {
    char *name;
    char *parent;                      /* as last seen; NULL for the root */
    int64_t last_seen_ms;
    float recent[RECENT][V_COUNT];
    float buckets[BUCKETS][V_COUNT];
    double sum[V_COUNT];               /* the current bucket's samples */
    int n;
};

struct tree_history {
    char *name;
    int64_t bucket_ms;
    struct ring recent, buckets;
    int64_t recent_t[RECENT], bucket_t[BUCKETS];
    float recent_usage[RECENT], bucket_usage[BUCKETS];
    double recent_preempt[RECENT], bucket_preempt[BUCKETS];
    int64_t bucket_start;              /* of the current bucket (-1: none yet) */
    double usage_sum, preempt_last;
    int n;
    struct series **series;
    int series_count, series_cap;
    struct ps_strmap by_name;          /* name -> struct series * */
};

struct ps_history {
    struct tree_history **trees;
    int tree_count;
    int64_t bucket_ms;
};

int ps_history_new(struct ps_history **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return PS_ENOMEM;
    (*out)->bucket_ms = PS_HISTORY_BUCKET_MS;
    return 0;
}

void ps_history_set_bucket_ms(struct ps_history *h, int64_t bucket_ms)
{
    h->bucket_ms = bucket_ms;
}

static void series_free(struct series *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->parent);
    free(s);
}

void ps_history_free(struct ps_history *h)
{
    if (!h)
        return;
    for (int i = 0; i < h->tree_count; i++) {
        struct tree_history *t = h->trees[i];
        for (int k = 0; k < t->series_count; k++)
            series_free(t->series[k]);
        free(t->series);
        ps_strmap_release(&t->by_name);
        free(t->name);
        free(t);
    }
    free(h->trees);
    free(h);
}

static struct tree_history *find_tree(const struct ps_history *h, const char *name)
{
    for (int i = 0; i < h->tree_count; i++)
        if (strcmp(h->trees[i]->name, name) == 0)
            return h->trees[i];
    return NULL;
}

static struct tree_history *tree_of(struct ps_history *h, const char *name)
{
    struct tree_history *t = find_tree(h, name);
    if (t)
        return t;
    struct tree_history **grown = realloc(h->trees, (size_t)(h->tree_count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    h->trees = grown;
    t = calloc(1, sizeof *t);
    if (!t || !(t->name = strdup(name))) {
        free(t);
        return NULL;
    }
    t->bucket_start = -1;
    t->bucket_ms = h->bucket_ms;
    ps_strmap_init(&t->by_name);
    h->trees[h->tree_count++] = t;
    return t;
}

static struct series *series_of(struct tree_history *t, const char *name)
{
    struct series *s = ps_strmap_get(&t->by_name, name);
    if (s)
        return s;
    if (t->series_count == t->series_cap) {
        int cap = t->series_cap ? 2 * t->series_cap : 16;
        struct series **grown = realloc(t->series, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        t->series = grown;
        t->series_cap = cap;
    }
    s = malloc(sizeof *s);
    if (!s || !(s->name = strdup(name))) {
        free(s);
        return NULL;
    }
    s->parent = NULL;
    s->last_seen_ms = 0;
    for (int i = 0; i < RECENT; i++)
        for (int v = 0; v < V_COUNT; v++)
            s->recent[i][v] = NAN;
    for (int i = 0; i < BUCKETS; i++)
        for (int v = 0; v < V_COUNT; v++)
            s->buckets[i][v] = NAN;
    memset(s->sum, 0, sizeof s->sum);
    s->n = 0;
    if (ps_strmap_put(&t->by_name, s->name, s) != 0) {
        series_free(s);
        return NULL;
    }
    t->series[t->series_count++] = s;
    return s;
}

/* Closes the current bucket: one point per series (the mean of its samples, NaN without), and
 * drops series not seen since before the oldest point kept. */
static int close_bucket(struct tree_history *t)
{
    int at = ring_push(&t->buckets, BUCKETS);
    t->bucket_t[at] = t->bucket_start;
    t->bucket_usage[at] = t->n ? (float)(t->usage_sum / t->n) : NAN;
    t->bucket_preempt[at] = t->preempt_last;
    t->usage_sum = 0;
    t->n = 0;
    int64_t oldest = t->bucket_t[ring_at(&t->buckets, BUCKETS, 0)];
    int kept = 0;
    for (int k = 0; k < t->series_count; k++) {
        struct series *s = t->series[k];
        for (int v = 0; v < V_COUNT; v++)
            s->buckets[at][v] = s->n ? (float)(s->sum[v] / s->n) : NAN;
        memset(s->sum, 0, sizeof s->sum);
        s->n = 0;
        if (s->last_seen_ms < oldest) {
            ps_strmap_remove(&t->by_name, s->name);
            series_free(s);
            continue;
        }
        t->series[kept++] = s;
    }
    t->series_count = kept;
    return at;
}

static double capacity_ratio(const struct ps_volume *v, const struct ps_resources *total)
{
    bool any = false;
    double best = 0;
    for (int r = 0; r < PS_RES_COUNT; r++) {
        double limit = ps_res_get(total, r);
        if (!(limit > 0))
            continue;
        double ratio = v->v[r] / limit;
        if (!any || ratio < best)
            best = ratio;
        any = true;
    }
    return any ? best : 0;
}

static int sample_pool(struct tree_history *t, struct ps_pool *p, const struct ps_resources *total,
                       int at, int64_t now_ms)
{
    struct series *s = series_of(t, p->name);
    if (!s)
        return PS_ENOMEM;
    const char *parent = p->parent ? p->parent->name : NULL;
    if (parent && (!s->parent || strcmp(s->parent, parent) != 0)) {
        char *copy = strdup(parent);
        if (!copy)
            return PS_ENOMEM;
        free(s->parent);
        s->parent = copy;
    }
    double v[V_COUNT] = {
        p->dynamic.fair_share_ratio, p->dynamic.usage_ratio, p->dynamic.demand_ratio,
        p->fs_pool.accumulated_resource_ratio_volume,
        capacity_ratio(&p->fs_pool.integral_pool_capacity, total),
    };
    for (int i = 0; i < V_COUNT; i++) {
        double x = isfinite(v[i]) ? v[i] : 0;
        s->recent[at][i] = (float)x;
        s->sum[i] += x;
    }
    s->n++;
    s->last_seen_ms = now_ms;
    return 0;
}

/* ---- persistence: one record per closed bucket ------------------------------------------ */

static json_t *num(double x);

/* {"tree", "t", "usage", "preemptions", "pools": {name: [parent, fair_share, usage, demand,
 * integral_volume, integral_capacity]}}: the series with a point in the bucket. */
static json_t *bucket_json(const struct tree_history *t, int at)
{
    json_t *pools = json_object(), *o = json_object();
    if (!pools || !o) {
        json_decref(pools);
        json_decref(o);
        return NULL;
    }
    for (int k = 0; k < t->series_count; k++) {
        const struct series *s = t->series[k];
        if (isnan(s->buckets[at][V_FAIR]))
            continue;
        json_t *a = json_array();
        json_array_append_new(a, s->parent ? json_string(s->parent) : json_null());
        for (int v = 0; v < V_COUNT; v++)
            json_array_append_new(a, num(s->buckets[at][v]));
        json_object_set_new(pools, s->name, a);
    }
    json_object_set_new(o, "tree", json_string(t->name));
    json_object_set_new(o, "t", json_integer(t->bucket_t[at]));
    json_object_set_new(o, "usage", num(t->bucket_usage[at]));
    json_object_set_new(o, "preemptions", json_real(t->bucket_preempt[at]));
    json_object_set_new(o, "pools", pools);
    return o;
}

char *ps_history_record_key(const char *tree, int64_t t, int64_t bucket_ms)
{
    char *key = NULL;
    long long slot = (long long)((t / bucket_ms) % BUCKETS);
    return asprintf(&key, "%s/%lld", tree, slot) < 0 ? NULL : key;
}

int64_t ps_history_record_time(const json_t *record)
{
    return json_integer_value(json_object_get(record, "t"));
}

static double val(const json_t *x)
{
    return json_is_number(x) ? json_number_value(x) : NAN;
}

static int restore_one(struct ps_history *h, const json_t *r)
{
    const char *name = json_string_value(json_object_get(r, "tree"));
    const json_t *pools = json_object_get(r, "pools");
    if (!name || !json_is_object(pools) || !json_is_integer(json_object_get(r, "t")))
        return 0;   /* not a record of this version: skipped */
    struct tree_history *t = tree_of(h, name);
    if (!t)
        return PS_ENOMEM;
    int64_t when = json_integer_value(json_object_get(r, "t"));
    if (t->buckets.count && when <= t->bucket_t[ring_at(&t->buckets, BUCKETS, t->buckets.count - 1)])
        return 0;   /* sorted by the caller: a duplicate */
    int at = ring_push(&t->buckets, BUCKETS);
    t->bucket_t[at] = when;
    t->bucket_usage[at] = (float)val(json_object_get(r, "usage"));
    t->preempt_last = val(json_object_get(r, "preemptions"));
    t->bucket_preempt[at] = isnan(t->preempt_last) ? 0 : t->preempt_last;
    for (int k = 0; k < t->series_count; k++)
        for (int v = 0; v < V_COUNT; v++)
            t->series[k]->buckets[at][v] = NAN;
    const char *pool;
    json_t *a;
    json_object_foreach((json_t *)pools, pool, a) {
        if (!json_is_array(a) || json_array_size(a) != 1 + V_COUNT)
            continue;
        struct series *s = series_of(t, pool);
        if (!s)
            return PS_ENOMEM;
        const char *parent = json_string_value(json_array_get(a, 0));
        if (parent && (!s->parent || strcmp(s->parent, parent) != 0)) {
            free(s->parent);
            if (!(s->parent = strdup(parent)))
                return PS_ENOMEM;
        }
        for (int v = 0; v < V_COUNT; v++)
            s->buckets[at][v] = (float)val(json_array_get(a, 1 + (size_t)v));
        if (when > s->last_seen_ms)
            s->last_seen_ms = when;
    }
    return 0;
}

static int by_time(const void *a, const void *b)
{
    int64_t x = ps_history_record_time(*(json_t *const *)a);
    int64_t y = ps_history_record_time(*(json_t *const *)b);
    return x < y ? -1 : x > y;
}

int ps_history_restore(struct ps_history *h, json_t *records, int64_t now_ms)
{
    size_t n = json_array_size(records);
    json_t **r = n ? malloc(n * sizeof *r) : NULL;
    if (n && !r)
        return PS_ENOMEM;
    size_t m = 0;
    int64_t oldest = now_ms - (int64_t)BUCKETS * h->bucket_ms;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(records, i);
        if (ps_history_record_time(x) >= oldest && ps_history_record_time(x) < now_ms)
            r[m++] = x;
    }
    if (m > 1)
        qsort(r, m, sizeof *r, by_time);
    int rc = 0;
    for (size_t i = 0; i < m && rc == 0; i++)
        rc = restore_one(h, r[i]);
    free(r);
    return rc;
}

int ps_history_sample(struct ps_history *h, struct ps_pool_tree *tree, int64_t now_ms,
                      double preemptions, json_t **closed)
{
    if (closed)
        *closed = NULL;
    struct tree_history *t = tree_of(h, ps_pool_tree_name(tree));
    if (!t)
        return PS_ENOMEM;
    int64_t bucket = now_ms - now_ms % t->bucket_ms;
    if (t->bucket_start >= 0 && bucket != t->bucket_start && t->n > 0) {
        int at = close_bucket(t);
        if (closed)
            *closed = bucket_json(t, at);   /* NULL when out of memory: that bucket unsaved */
    }
    t->bucket_start = bucket;
    struct ps_pool *root = ps_pool_tree_root(tree);
    const struct ps_resources *total = &root->dynamic.fs.resource_limits;
    int at = ring_push(&t->recent, RECENT);
    t->recent_t[at] = now_ms;
    t->recent_usage[at] = (float)root->dynamic.usage_ratio;
    t->recent_preempt[at] = preemptions;
    t->usage_sum += root->dynamic.usage_ratio;
    t->preempt_last = preemptions;
    t->n++;
    /* series absent from this sample: a gap */
    for (int k = 0; k < t->series_count; k++)
        for (int v = 0; v < V_COUNT; v++)
            t->series[k]->recent[at][v] = NAN;
    int rc = 0;
    for (int i = -1; i < ps_pool_tree_pool_count(tree) && rc == 0; i++) {
        struct ps_pool *p = i < 0 ? root : ps_pool_tree_pool_at(tree, i);
        if (p->dynamic.valid)
            rc = sample_pool(t, p, total, at, now_ms);
    }
    return rc;
}

/* ---- query ------------------------------------------------------------------------------- */

static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* Bucket points older than the oldest recent sample, then the recent samples. */
struct view {
    int nb, nr;   /* bucket points used, recent points */
};

static struct view view_of(const struct tree_history *t)
{
    struct view w = {0, t->recent.count};
    int64_t first_recent = w.nr ? t->recent_t[ring_at(&t->recent, RECENT, 0)] : INT64_MAX;
    for (int i = 0; i < t->buckets.count; i++)
        if (t->bucket_t[ring_at(&t->buckets, BUCKETS, i)] + t->bucket_ms <= first_recent)
            w.nb = i + 1;
    return w;
}

static json_t *series_json(const struct tree_history *t, const struct series *s, struct view w)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "parent", s->parent ? json_string(s->parent) : json_null());
    for (int v = 0; v < V_COUNT; v++) {
        json_t *a = json_array();
        for (int i = 0; i < w.nb; i++)
            json_array_append_new(a, num(s->buckets[ring_at(&t->buckets, BUCKETS, i)][v]));
        for (int i = 0; i < w.nr; i++)
            json_array_append_new(a, num(s->recent[ring_at(&t->recent, RECENT, i)][v]));
        json_object_set_new(o, value_names[v], a);
    }
    return o;
}

int ps_history_query(const struct ps_history *h, const char *tree, const json_t *pools,
                     json_t **out, struct ps_error *err)
{
    *out = NULL;
    const struct tree_history *t = find_tree(h, tree);
    if (!t)
        return ps_error_set(err, PS_ENOENT, "pool_tree: no history of tree \"%s\" (no fair share update yet)", tree);
    if (pools && !json_is_array(pools))
        return ps_error_set(err, PS_EINVAL, "pools: must be a list of pool names");
    if (pools && json_array_size(pools) > PS_HISTORY_MAX_POOLS_REPLY)
        return ps_error_set(err, PS_EINVAL, "pools: at most %d names, got %zu",
                            PS_HISTORY_MAX_POOLS_REPLY, json_array_size(pools));
    size_t i;
    json_t *name;
    json_array_foreach(pools, i, name) {
        if (!json_is_string(name))
            return ps_error_set(err, PS_EINVAL, "pools/%zu: must be a pool name (a string)", i);
    }
    struct view w = view_of(t);
    json_t *r = json_object(), *times = json_array(), *usage = json_array(),
           *preempt = json_array(), *map = json_object();
    for (int k = 0; k < w.nb; k++) {
        int at = ring_at(&t->buckets, BUCKETS, k);
        json_array_append_new(times, json_integer(t->bucket_t[at]));
        json_array_append_new(usage, num(t->bucket_usage[at]));
        json_array_append_new(preempt, json_real(t->bucket_preempt[at]));
    }
    for (int k = 0; k < w.nr; k++) {
        int at = ring_at(&t->recent, RECENT, k);
        json_array_append_new(times, json_integer(t->recent_t[at]));
        json_array_append_new(usage, num(t->recent_usage[at]));
        json_array_append_new(preempt, json_real(t->recent_preempt[at]));
    }
    if (pools) {
        json_array_foreach(pools, i, name) {
            const struct series *s = ps_strmap_get(&t->by_name, json_string_value(name));
            if (s)
                json_object_set_new(map, s->name, series_json(t, s, w));
        }
    } else {
        for (int k = 0; k < t->series_count; k++) {
            const struct series *s = t->series[k];
            if (!s->parent || strcmp(s->parent, "<Root>") == 0)
                json_object_set_new(map, s->name, series_json(t, s, w));
        }
    }
    json_object_set_new(r, "pool_tree", json_string(t->name));
    json_object_set_new(r, "times", times);
    json_object_set_new(r, "cluster_usage", usage);
    json_object_set_new(r, "preemptions", preempt);
    json_object_set_new(r, "pools", map);
    json_object_set_new(r, "recent_points", json_integer(RECENT));
    json_object_set_new(r, "bucket_ms", json_integer(t->bucket_ms));
    *out = r;
    return 0;
}
