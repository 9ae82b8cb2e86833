/* what_if_metrics.c — the measures of a run and the replay's fidelity (what_if_metrics.h). */
#include "whatif/what_if_metrics.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formula.h"
#include "core/resources.h"
#include "io/csv.h"
#include "platform/file.h"

#define USAGE_SAMPLES 200

static int64_t ival(const json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

static const char *sval(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile q (0..1) of the integers in list (a JSON array); 0 when empty. */
static int64_t percentile(const json_t *list, double q)
{
    size_t n = json_array_size(list);
    if (n == 0)
        return 0;
    int64_t *v = malloc(n * sizeof *v);
    if (!v)
        return 0;
    for (size_t i = 0; i < n; i++)
        v[i] = (int64_t)json_integer_value(json_array_get(list, i));
    qsort(v, n, sizeof *v, cmp_i64);
    size_t rank = (size_t)ceil(q * (double)n);
    int64_t x = v[rank > 0 ? rank - 1 : 0];
    free(v);
    return x;
}

/* name's measures in map, made on first sight: no operations yet, so no wait figures (null) */
static json_t *entry(json_t *map, const char *name)
{
    json_t *m = json_object_get(map, name);
    if (!m) {
        m = json_pack("{s:i, s:n, s:n, s:i, s:i}", "operations", 0, "wait_p50_ms", "wait_p95_ms",
                      "preempted_jobs", 0, "jobs_completed", 0);
        json_object_set_new(map, name, m);
    }
    return m;
}

static void bump(json_t *m, const char *key)
{
    json_object_set_new(m, key, json_integer(json_integer_value(json_object_get(m, key)) + 1));
}

/* The five resources of a map as doubles (cpu in cores). */
static void resources(const json_t *map, double v[PS_RES_COUNT])
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        v[i] = json_number_value(json_object_get(map, ps_resource_name(i)));
}

/* The resources of a running job ([user, start, [resources]]). */
static void job_resources(const json_t *job, double v[PS_RES_COUNT])
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        v[i] = json_real_value(json_array_get(json_array_get(job, 2), (size_t)i));
}

/* A step series sampled at n points k*step: adds sign*res to [from, to) in diff arrays. */
static void add_interval(double *diff, size_t n, int64_t step, int64_t from, int64_t to,
                         const double res[PS_RES_COUNT])
{
    if (to <= from || to <= 0)   /* over before the first sample: b would not be a sample */
        return;
    size_t a = from <= 0 ? 0 : (size_t)((from + step - 1) / step);
    size_t b = (size_t)((to + step - 1) / step);
    if (a >= n)
        return;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        diff[a * PS_RES_COUNT + i] += res[i];
        if (b < n)
            diff[b * PS_RES_COUNT + i] -= res[i];
    }
}

static void prefix_sums(double *diff, size_t n)
{
    for (size_t k = 1; k < n; k++)
        for (int i = 0; i < PS_RES_COUNT; i++)
            diff[k * PS_RES_COUNT + i] += diff[(k - 1) * PS_RES_COUNT + i];
}

/* tree's nodes_filter as of the scenario's start, or NULL (every node) when tree is NULL */
static struct ps_formula *tree_filter(const json_t *sc, const char *tree, const char *text)
{
    const json_t *t = json_object_get(json_object_get(sc, "pool_trees"), tree ? tree : "");
    if (!text)
        text = sval(t, "nodes_filter");
    struct ps_formula *f = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (tree && ps_formula_parse(text ? text : "", &f, &err) != 0)
        f = NULL;   /* the simulator refused such a scenario before this runs */
    return f;
}

static bool tags_match(const struct ps_formula *f, const json_t *tags)
{
    size_t n = json_array_size(tags);
    const char **v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < n; i++)
        v[i] = json_string_value(json_array_get(tags, i));
    bool match = ps_formula_eval(f, v, (int)n);
    free(v);
    return match;
}

/* A node's state c ([limits, since, tags, in tree]) counted in total from since to t_ms. */
static void node_close(double *total, size_t n, int64_t step, const json_t *c, int64_t t_ms)
{
    double res[PS_RES_COUNT];
    resources(json_array_get(c, 0), res);
    if (total && json_is_true(json_array_get(c, 3)))
        add_interval(total, n, step, json_integer_value(json_array_get(c, 1)), t_ms, res);
}

/* Whether ev changes which nodes are in tree (its nodes_filter) */
static bool filter_event(const json_t *ev, const char *type, const char *tree)
{
    return tree && strcmp(type, "set_tree_attribute") == 0 && sval(ev, "tree") &&
           strcmp(sval(ev, "tree"), tree) == 0 && sval(ev, "key") &&
           strcmp(sval(ev, "key"), "nodes_filter") == 0;
}

/* The total of tree's nodes (tree NULL: every node) at each sample, from the scenario's groups
 * and its set_node_resources, set_node_tags and nodes_filter events. */
static double *node_totals(const json_t *sc, size_t n, int64_t step, int64_t duration_ms,
                           const char *tree)
{
    double *total = calloc(n * PS_RES_COUNT, sizeof *total);
    json_t *cur = json_object();   /* node id -> [limits, since, tags, in tree] */
    struct ps_formula *f = tree_filter(sc, tree, NULL);
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(sc, "node_groups"), i, g) {
        char id[1024];
        snprintf(id, sizeof id, "%s-0", sval(g, "name"));
        const json_t *tags = json_object_get(g, "tags");
        json_object_set_new(cur, id, json_pack("[O, i, o, b]", json_object_get(g, "resource_limits"),
                                               0, tags ? json_deep_copy(tags) : json_array(),
                                               tags_match(f, tags)));
    }
    json_t *ev;
    const char *id;
    json_t *c;
    json_array_foreach(json_object_get(sc, "events"), i, ev) {
        const char *type = sval(ev, "type");
        int64_t t = ival(ev, "time");
        if (filter_event(ev, type, tree)) {
            ps_formula_free(f);
            f = tree_filter(sc, tree, json_is_string(json_object_get(ev, "value"))
                                          ? sval(ev, "value") : "");
            json_object_foreach(cur, id, c) {
                node_close(total, n, step, c, t);
                json_array_set_new(c, 1, json_integer(t));
                json_array_set_new(c, 3, json_boolean(tags_match(f, json_array_get(c, 2))));
            }
            continue;
        }
        bool res = strcmp(type, "set_node_resources") == 0, tags = strcmp(type, "set_node_tags") == 0;
        c = sval(ev, "node") ? json_object_get(cur, sval(ev, "node")) : NULL;
        if (!c || (!res && !tags))
            continue;
        node_close(total, n, step, c, t);
        json_array_set_new(c, 1, json_integer(t));
        if (res)
            json_array_set(c, 0, json_object_get(ev, "resource_limits"));
        else
            json_array_set(c, 2, json_object_get(ev, "tags"));
        json_array_set_new(c, 3, json_boolean(tags_match(f, json_array_get(c, 2))));
    }
    json_object_foreach(cur, id, c)
        node_close(total, n, step, c, duration_ms + step);
    ps_formula_free(f);
    json_decref(cur);
    if (total)
        prefix_sums(total, n);
    return total;
}

static double dominant(const double *use, const double *total)
{
    double d = 0;
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (total[i] > 0 && use[i] / total[i] > d)
            d = use[i] / total[i];
    return d;
}

/* Usage series sampled at n points k*step, one per name (pool, user): diff arrays until
 * prefix_sums turns them into values. */
struct series {
    json_t *index;   /* name -> slot */
    double *use;     /* [slot][sample][resource] */
    size_t count, n;
    int64_t step;
};

static size_t series_slot(struct series *s, const char *name)
{
    json_t *idx = json_object_get(s->index, name);
    if (idx)
        return (size_t)json_integer_value(idx);
    double *grown = realloc(s->use, (s->count + 1) * s->n * PS_RES_COUNT * sizeof *grown);
    if (!grown)
        return SIZE_MAX;
    json_object_set_new(s->index, name, json_integer((json_int_t)s->count));
    s->use = grown;
    memset(s->use + s->count * s->n * PS_RES_COUNT, 0, s->n * PS_RES_COUNT * sizeof *grown);
    return s->count++;
}

static void series_add(struct series *s, const char *name, int64_t from, int64_t to,
                       const double res[PS_RES_COUNT])
{
    size_t slot = series_slot(s, name);
    if (slot != SIZE_MAX)
        add_interval(s->use + slot * s->n * PS_RES_COUNT, s->n, s->step, from, to, res);
}

static void series_finish(struct series *s)
{
    for (size_t p = 0; p < s->count; p++)
        prefix_sums(s->use + p * s->n * PS_RES_COUNT, s->n);
}

/* The mean over the samples of name's dominant share of total. */
static double series_mean_share(const struct series *s, size_t slot, const double *total)
{
    double sum = 0;
    for (size_t k = 0; total && k < s->n; k++)
        sum += dominant(s->use + (slot * s->n + k) * PS_RES_COUNT, total + k * PS_RES_COUNT);
    return s->n ? sum / (double)s->n : 0;
}

static void series_init(struct series *s, int64_t duration_ms)
{
    /* samples at 0, step, ..., (n - 1) step <= duration_ms: a window shorter than
     * USAGE_SAMPLES ms has a sample per ms, none after its end */
    int64_t parts = duration_ms < USAGE_SAMPLES ? (duration_ms > 0 ? duration_ms : 0) : USAGE_SAMPLES;
    *s = (struct series){.index = json_object(), .n = (size_t)parts + 1,
                         .step = parts > 0 ? duration_ms / parts : 1};
}

static void series_release(struct series *s)
{
    json_decref(s->index);
    free(s->use);
}

/* A run's events as the simulator emits them (ps_what_if_events_add): per operation
 * [pool, user, submitted]. */
struct ps_what_if_events {
    json_t *ops, *first_job, *pools, *users;
    json_t *running;          /* job id -> [user, start ms, [resources]] */
    struct series user_use;   /* usage per user */
    char *tree;
};

/* A job's time on the cluster as its user's usage. */
static void job_event(struct ps_what_if_events *r, const struct ps_sim_event *ev,
                      const char *user)
{
    const char *type = ev->type, *id = ev->job_id;
    if (!id)
        return;
    if (strcmp(type, "job_started") == 0) {
        json_t *res = json_array();
        for (int i = 0; ev->resources && i < PS_RES_COUNT; i++) {   /* cpu in cores */
            double v = (double)ev->resources->v[i];
            json_array_append_new(res, json_real(i == PS_RES_CPU ? v / PS_CPU_SCALE : v));
        }
        json_object_set_new(r->running, id,
                            json_pack("[s, I, o]", user, (json_int_t)ev->time_ms, res));
        return;
    }
    const json_t *j = json_object_get(r->running, id);
    if (!j || (strcmp(type, "job_completed") != 0 && strcmp(type, "job_failed") != 0 &&
               strcmp(type, "job_aborted") != 0))
        return;
    double res[PS_RES_COUNT];
    job_resources(j, res);
    series_add(&r->user_use, user, json_integer_value(json_array_get(j, 1)), ev->time_ms, res);
    json_object_del(r->running, id);
}

void ps_what_if_events_add(void *ctx, const struct ps_sim_event *ev)
{
    struct ps_what_if_events *r = ctx;
    const char *type = ev->type;
    const char *op = ev->operation_id;
    if (!type || !op)
        return;
    if (strcmp(type, "operation_started") == 0) {   /* pool null: not in the reported tree */
        json_object_set_new(r->ops, op,
                            json_pack("[s?, s, I]", ev->pool, ev->user ? ev->user : "",
                                      (json_int_t)ev->time_ms));
        json_object_set_new(r->first_job, op, json_null());
        return;
    }
    json_t *o = json_object_get(r->ops, op);
    if (!o)
        return;
    const char *pool = json_string_value(json_array_get(o, 0));
    const char *user = json_string_value(json_array_get(o, 1));
    const char *key = strcmp(type, "job_completed") == 0   ? "jobs_completed"
                      : strcmp(type, "job_preempted") == 0 ? "preempted_jobs"
                                                           : NULL;
    if (key) {
        if (pool && ev->tree && strcmp(ev->tree, r->tree) == 0)   /* its job in this tree */
            bump(entry(r->pools, pool), key);
        bump(entry(r->users, user), key);
    }
    if (strcmp(type, "job_started") == 0 && json_is_null(json_object_get(r->first_job, op)))
        json_object_set_new(r->first_job, op, json_integer(ev->time_ms));
    if (strncmp(type, "job_", 4) == 0)
        job_event(r, ev, user);
}

struct ps_what_if_events *ps_what_if_events_new(const char *tree, int64_t duration_ms)
{
    struct ps_what_if_events *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    *r = (struct ps_what_if_events){.ops = json_object(), .first_job = json_object(),
                                    .pools = json_object(), .users = json_object(),
                                    .running = json_object(), .tree = strdup(tree ? tree : "")};
    series_init(&r->user_use, duration_ms);
    if (!r->ops || !r->first_job || !r->pools || !r->users || !r->running || !r->tree ||
        !r->user_use.index) {
        ps_what_if_events_free(r);
        return NULL;
    }
    return r;
}

void ps_what_if_events_free(struct ps_what_if_events *r)
{
    if (!r)
        return;
    series_release(&r->user_use);
    json_decref(r->running);
    json_decref(r->ops);
    json_decref(r->first_job);
    json_decref(r->pools);
    json_decref(r->users);
    free(r->tree);
    free(r);
}

/* mean_usage of each user: jobs still running count to the end */
static void user_usage(struct ps_what_if_events *r, const json_t *scenario, int64_t duration_ms)
{
    const char *id;
    json_t *j;
    json_object_foreach(r->running, id, j) {
        double res[PS_RES_COUNT];
        job_resources(j, res);
        series_add(&r->user_use, json_string_value(json_array_get(j, 0)),
                   json_integer_value(json_array_get(j, 1)), duration_ms + r->user_use.step, res);
    }
    series_finish(&r->user_use);
    double *total = node_totals(scenario, r->user_use.n, r->user_use.step, duration_ms, NULL);
    const char *user;
    json_t *idx;
    json_object_foreach(r->user_use.index, user, idx)
        json_object_set_new(entry(r->users, user), "mean_usage",
                            json_real(series_mean_share(&r->user_use, (size_t)json_integer_value(idx),
                                                        total)));
    free(total);
}

/* name's waits in waits ({name: [ms, ...]}), as its percentiles in map */
static void set_waits(json_t *map, const json_t *waits)
{
    const char *name;
    json_t *w;
    json_object_foreach((json_t *)waits, name, w) {
        json_t *m = entry(map, name);
        json_object_set_new(m, "operations", json_integer((json_int_t)json_array_size(w)));
        json_object_set_new(m, "wait_p50_ms", json_integer(percentile(w, 0.5)));
        json_object_set_new(m, "wait_p95_ms", json_integer(percentile(w, 0.95)));
    }
}

/* waits per pool (of the reported tree) and user (every operation): first job - submission,
 * or the end - submission */
static void add_waits(struct ps_what_if_events *r, int64_t duration_ms)
{
    json_t *waits[2] = {json_object(), json_object()};   /* pools, users: {name: [ms, ...]} */
    const char *op;
    json_t *o;
    json_object_foreach(r->ops, op, o) {
        json_t *first = json_object_get(r->first_job, op);
        int64_t submitted = (int64_t)json_integer_value(json_array_get(o, 2));
        int64_t wait = (json_is_integer(first) ? json_integer_value(first) : duration_ms) - submitted;
        for (size_t k = 0; k < 2; k++) {
            const char *name = json_string_value(json_array_get(o, k));
            if (!name)
                continue;
            json_t *w = json_object_get(waits[k], name);
            if (!w)
                json_object_set_new(waits[k], name, w = json_array());
            json_array_append_new(w, json_integer(wait));
        }
    }
    set_waits(r->pools, waits[0]);
    set_waits(r->users, waits[1]);
    json_decref(waits[0]);
    json_decref(waits[1]);
}

/* Opens DIR/pools.csv (the simulator's output) and finds the named columns; *text is the file
 * (the caller releases csv and frees text, also on error). A column missing is an error naming
 * the file. */
static int open_pools_csv(const char *dir, struct ps_csv *csv, char **text, const char *const *names,
                          int *cols, int count, struct ps_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/pools.csv", dir);
    size_t len = 0;
    *text = NULL;
    memset(csv, 0, sizeof *csv);
    int rc = ps_file_read(path, text, &len, err);
    if (rc != 0)
        return rc;
    rc = ps_csv_init(csv, *text, len, path, err);
    for (int i = 0; i < count; i++) {
        cols[i] = ps_csv_column(csv, names[i]);
        if (rc == 0 && cols[i] < 0)
            rc = ps_error_set(err, PS_EIO, "%s: not a pools.csv of this version", path);
    }
    return rc;
}

static int read_pools(struct ps_what_if_events *r, const char *dir, int64_t period_ms,
                      struct ps_error *err)
{
    static const char *const names[] = {"time", "tree", "pool", "fair_share_ratio",
                                        "usage_ratio", "starvation_status"};
    int cols[6];
    struct ps_csv csv;
    char *text;
    int rc = open_pools_csv(dir, &csv, &text, names, cols, 6, err);
    if (!text)
        return rc;
    int c_time = cols[0], c_tree = cols[1], c_pool = cols[2], c_fs = cols[3], c_use = cols[4],
        c_st = cols[5];
    json_t *sums = json_object();   /* pool -> [rows, fair share sum, usage sum, starving rows] */
    int64_t last_time = -1, step = period_ms;
    int more = rc == 0;
    while (more && (more = ps_csv_next(&csv, err)) == 1) {
        if (strcmp(csv.fields[c_tree], r->tree) != 0 || strcmp(csv.fields[c_pool], "<Root>") == 0)
            continue;
        int64_t t = strtoll(csv.fields[c_time], NULL, 10);
        if (last_time >= 0 && t > last_time)
            step = t - last_time;   /* the rows' spacing (--pools-period) */
        if (t > last_time)
            last_time = t;
        json_t *s = json_object_get(sums, csv.fields[c_pool]);
        if (!s)
            json_object_set_new(sums, csv.fields[c_pool], s = json_pack("[f, f, f, f]", 0.0, 0.0,
                                                                          0.0, 0.0));
        double add[4] = {1, strtod(csv.fields[c_fs], NULL), strtod(csv.fields[c_use], NULL),
                         strcmp(csv.fields[c_st], "non_starving") != 0 ? (double)step : 0};
        for (size_t k = 0; k < 4; k++)
            json_array_set_new(s, k, json_real(json_real_value(json_array_get(s, k)) + add[k]));
    }
    ps_csv_release(&csv);
    free(text);
    if (rc == 0 && more < 0)
        rc = more;
    const char *pool;
    json_t *s;
    json_object_foreach(sums, pool, s) {
        json_t *m = entry(r->pools, pool);
        double n = json_real_value(json_array_get(s, 0));
        json_object_set_new(m, "mean_fair_share", json_real(json_real_value(json_array_get(s, 1)) / n));
        json_object_set_new(m, "mean_usage", json_real(json_real_value(json_array_get(s, 2)) / n));
        json_object_set_new(m, "starving_ms", json_integer((json_int_t)json_real_value(json_array_get(s, 3))));
    }
    json_decref(sums);
    return rc;
}

int ps_what_if_run_metrics(struct ps_what_if_events *r, const char *dir, const json_t *scenario,
                           int64_t period_ms, json_t **out, struct ps_error *err)
{
    int64_t duration_ms = ival(scenario, "duration");
    add_waits(r, duration_ms);
    user_usage(r, scenario, duration_ms);
    int rc = read_pools(r, dir, period_ms, err);
    if (rc != 0)
        return rc;
    *out = json_pack("{s:O, s:O, s:O}", "pools", r->pools, "users", r->users, "first_job",
                     r->first_job);
    return *out ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

/* ---- fidelity ------------------------------------------------------------------------------ */

/* What the fidelity takes from the record, measured before the runs so that the record can be
 * freed while they run. */
struct ps_what_if_recorded {
    const json_t *sc;    /* the no-change scenario (the caller's) */
    int64_t since, duration;
    char *tree;
    struct series use;   /* recorded usage per pool */
    json_t *first;       /* operation submitted inside the window -> its first recorded job
                          * start, ms into the window (the window's end when it had none) */
};

/* Every job attempt of rec (its last row: job_started, or its end), as usage of its pool (in
 * op_pool) and the pool's ancestors (parent). */
static int recorded_usage(struct ps_what_if_recorded *f, const struct ps_event_record *rec,
                          const json_t *op_pool, const json_t *parent)
{
    size_t *last = malloc((rec->job_ids.count ? rec->job_ids.count : 1) * sizeof *last);
    if (!last)
        return PS_ENOMEM;
    for (size_t i = 0; i < rec->job_count; i++)   /* every job id has a row */
        if (rec->jobs[i].job != PS_EVENT_NONE)
            last[rec->jobs[i].job] = i;
    for (size_t id = 0; id < rec->job_ids.count; id++) {   /* in order of first sight */
        const struct ps_event_job *j = &rec->jobs[last[id]];
        bool end = j->kind != PS_EVENT_JOB_STARTED;
        const char *op =
            j->operation != PS_EVENT_NONE ? rec->operation_ids.names[j->operation] : "";
        const char *pool = sval(op_pool, op);
        const char *job_tree =
            j->tree != PS_EVENT_NONE ? rec->tree_ids.names[j->tree] : NULL;
        if (!pool || (job_tree && strcmp(job_tree, f->tree) != 0))
            continue;   /* not in tree (an operation in several trees has jobs in each) */
        int64_t from = (end ? j->start_time : j->timestamp) - f->since;
        int64_t to = end ? j->finish_time - f->since : f->duration + f->use.step;
        for (const char *p = pool; p && strcmp(p, "<Root>") != 0; p = sval(parent, p))
            series_add(&f->use, p, from, to, j->resources);
    }
    free(last);
    series_finish(&f->use);
    return 0;
}

/* f->first from rec: the operations started (submitted) inside the window, each with its first
 * recorded job start. */
static int recorded_starts(struct ps_what_if_recorded *f, const struct ps_event_record *rec)
{
    int64_t *first = malloc((rec->operation_ids.count ? rec->operation_ids.count : 1) *
                            sizeof *first);   /* operation -> first recorded job start, or -1 */
    if (!first)
        return PS_ENOMEM;
    for (size_t i = 0; i < rec->operation_ids.count; i++)
        first[i] = -1;
    for (size_t i = 0; i < rec->job_count; i++) {
        const struct ps_event_job *j = &rec->jobs[i];
        if (j->kind == PS_EVENT_JOB_STARTED && j->operation != PS_EVENT_NONE &&
            first[j->operation] < 0)
            first[j->operation] = j->timestamp;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < rec->other_count; i++) {
        const json_t *row = rec->others[i].json;
        const char *type = sval(row, "event_type"), *id = sval(row, "operation_id");
        if (!type || !id || strcmp(type, "operation_started") != 0 || ival(row, "timestamp") < f->since)
            continue;
        uint32_t a = ps_event_names_find(&rec->operation_ids, id);
        int64_t x = a != PS_EVENT_NONE && first[a] >= 0 ? first[a] - f->since : f->duration;
        if (json_object_set_new(f->first, id, json_integer(x)) != 0)
            rc = PS_ENOMEM;
    }
    free(first);
    return rc;
}

/* An operation's pool in tree, as its operation_started row (or state entry) says, or NULL. */
static json_t *pool_in(const json_t *op, const char *tree)
{
    return json_object_get(json_object_get(json_object_get(op, "scheduling_info_per_tree"), tree),
                           "pool");
}

int ps_what_if_recorded_new(const struct ps_event_record *rec, const json_t *scenario,
                            int64_t since_ms, const char *tree, struct ps_what_if_recorded **out,
                            struct ps_error *err)
{
    struct ps_what_if_recorded *f = calloc(1, sizeof *f);
    json_t *op_pool = json_object(), *parent = json_object();   /* operation -> pool in tree */
    int rc = f && op_pool && parent ? 0 : PS_ENOMEM;
    if (rc == 0) {
        *f = (struct ps_what_if_recorded){.sc = scenario, .since = since_ms,
                                          .duration = ival(scenario, "duration"),
                                          .tree = strdup(tree ? tree : ""),
                                          .first = json_object()};
        series_init(&f->use, f->duration);
        if (!f->tree || !f->first || !f->use.index)
            rc = PS_ENOMEM;
    }
    size_t i;
    json_t *x;
    for (i = 0; rc == 0 && i < rec->other_count; i++) {
        x = rec->others[i].json;
        const char *type = sval(x, "event_type");
        if (type && strcmp(type, "operation_started") == 0 && sval(x, "operation_id"))
            json_object_set(op_pool, sval(x, "operation_id"), pool_in(x, tree));
        const char *id;
        json_t *op;
        if (type && strcmp(type, "operations_info") == 0)   /* the state rows' (event_log.h) */
            json_object_foreach(json_object_get(x, "operations"), id, op)
                if (!json_object_get(op_pool, id))
                    json_object_set(op_pool, id, pool_in(op, tree));
    }
    if (rc == 0)
        json_array_foreach(json_object_get(json_object_get(json_object_get(scenario, "pool_trees"), tree),
                                           "pools"), i, x)
            json_object_set(parent, sval(x, "name"), json_object_get(x, "parent"));
    if (rc == 0)
        rc = recorded_usage(f, rec, op_pool, parent);
    if (rc == 0)
        rc = recorded_starts(f, rec);
    json_decref(op_pool);
    json_decref(parent);
    if (rc != 0) {
        ps_what_if_recorded_free(f);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    *out = f;
    return 0;
}

void ps_what_if_recorded_free(struct ps_what_if_recorded *f)
{
    if (!f)
        return;
    series_release(&f->use);
    json_decref(f->first);
    free(f->tree);
    free(f);
}

/* The replay's usage share of each pool at each sample (pools.csv: the last row at or before) */
static int replay_usage(const struct ps_what_if_recorded *f, const char *dir, double *share,
                        struct ps_error *err)
{
    static const char *const names[] = {"time", "tree", "pool", "usage_ratio"};
    int cols[4];
    struct ps_csv csv;
    char *text;
    int rc = open_pools_csv(dir, &csv, &text, names, cols, 4, err);
    if (!text)
        return rc;
    int c_time = cols[0], c_tree = cols[1], c_pool = cols[2], c_use = cols[3];
    int more = rc == 0;
    while (more && (more = ps_csv_next(&csv, err)) == 1) {
        json_t *idx = json_object_get(f->use.index, csv.fields[c_pool]);
        if (!idx || strcmp(csv.fields[c_tree], f->tree) != 0)
            continue;
        int64_t t = strtoll(csv.fields[c_time], NULL, 10);
        size_t n = f->use.n, k = t <= 0 ? 0 : (size_t)((t + f->use.step - 1) / f->use.step);
        double u = strtod(csv.fields[c_use], NULL);
        for (; k < n; k++)   /* until a later row overwrites */
            share[(size_t)json_integer_value(idx) * n + k] = u;
    }
    ps_csv_release(&csv);
    free(text);
    return rc != 0 ? rc : more < 0 ? more : 0;
}

static json_t *start_errors(const struct ps_what_if_recorded *f, const json_t *replay_metrics,
                            json_t *out)
{
    json_t *errors = json_array();
    if (!errors)
        return NULL;
    json_t *rfirst = json_object_get(replay_metrics, "first_job");
    size_t i;
    json_t *op;
    json_array_foreach(json_object_get(f->sc, "operations"), i, op) {
        const json_t *a = json_object_get(f->first, sval(op, "id"));
        if (!a)
            continue;   /* submitted before the window: its start is not in the replay */
        const json_t *b = json_object_get(rfirst, sval(op, "id"));
        int64_t x = json_integer_value(a);
        int64_t y = json_is_integer(b) ? json_integer_value(b) : f->duration;
        json_array_append_new(errors, json_integer(x > y ? x - y : y - x));
    }
    json_object_set_new(out, "operations", json_integer((json_int_t)json_array_size(errors)));
    json_object_set_new(out, "start_error_p50_ms", json_integer(percentile(errors, 0.5)));
    json_object_set_new(out, "start_error_p95_ms", json_integer(percentile(errors, 0.95)));
    json_object_set_new(out, "start_error_max_ms", json_integer(percentile(errors, 1.0)));
    json_decref(errors);
    return out;
}

static void usage_errors(const struct ps_what_if_recorded *f, const double *share, json_t *out)
{
    size_t n = f->use.n;
    double *total = node_totals(f->sc, n, f->use.step, f->duration, f->tree);
    json_t *per_pool = json_object();
    double sum = 0, worst = 0;
    const char *worst_pool = "";
    const char *pool;
    json_t *idx;
    json_object_foreach(f->use.index, pool, idx) {
        size_t p = (size_t)json_integer_value(idx);
        double e = 0;
        for (size_t k = 0; total && k < n; k++) {
            double rec = dominant(f->use.use + (p * n + k) * PS_RES_COUNT, total + k * PS_RES_COUNT);
            e += fabs(rec - share[p * n + k]);
        }
        e /= (double)n;
        json_object_set_new(per_pool, pool, json_real(e));
        sum += e;
        if (e > worst || !*worst_pool) {
            worst = e;
            worst_pool = pool;
        }
    }
    size_t count = f->use.count;
    json_object_set_new(out, "usage_error_mean", json_real(count ? sum / (double)count : 0));
    json_object_set_new(out, "usage_error_max", json_real(worst));
    json_object_set_new(out, "usage_error_max_pool", json_string(worst_pool));
    json_object_set_new(out, "usage_error", per_pool);
    free(total);
}

int ps_what_if_fidelity(const struct ps_what_if_recorded *f, const json_t *replay_metrics,
                        const char *dir, json_t **out, struct ps_error *err)
{
    double *share = calloc((f->use.count ? f->use.count : 1) * f->use.n, sizeof *share);
    int rc = share ? replay_usage(f, dir, share, err) : PS_ENOMEM;
    if (rc == 0 && !(*out = start_errors(f, replay_metrics, json_object())))
        rc = PS_ENOMEM;
    if (rc == 0)
        usage_errors(f, share, *out);
    if (rc == PS_ENOMEM)
        ps_error_set(err, PS_ENOMEM, "out of memory");
    free(share);
    return rc;
}
