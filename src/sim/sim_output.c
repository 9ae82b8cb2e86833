/* sim_output.c — the simulator's output formats: events.jsonl lines, pools.csv rows and
 * operations.csv (shared/spec/formats.md section 3).
 *
 * Determinism: lines are built in a buffer in a fixed key order; integers as digits, cpu as an
 * exact decimal of hundredths, other reals in the shortest form that reads back as the same
 * double (io/fs_output.h); no pointer or hash order anywhere.
 */
#include <stdlib.h>
#include <string.h>

#include "io/fs_output.h"
#include "sim/sim_internal.h"

/* ---- buffer ------------------------------------------------------------------------------ */

void sim_buf_release(struct sim_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Room for n more bytes and the terminating NUL; false (and b->oom) when out of memory. */
static bool buf_reserve(struct sim_buf *b, size_t n)
{
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *grown = realloc(b->data, cap);
    if (!grown) {
        b->oom = true;
        return false;
    }
    b->data = grown;
    b->cap = cap;
    return true;
}

void sim_buf_put(struct sim_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sim_buf_puts(struct sim_buf *b, const char *s)
{
    sim_buf_put(b, s, strlen(s));
}

void sim_buf_str(struct sim_buf *b, const char *s)
{
    sim_buf_put(b, "\"", 1);
    const char *run = s;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const char *esc = NULL;
        char u[8];
        switch (*p) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\t': esc = "\\t"; break;
        case '\r': esc = "\\r"; break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                snprintf(u, sizeof u, "\\u%04x", *p);
                esc = u;
            }
        }
        if (esc) {
            sim_buf_put(b, run, (size_t)((const char *)p - run));
            sim_buf_puts(b, esc);
            run = (const char *)p + 1;
        }
    }
    sim_buf_puts(b, run);
    sim_buf_put(b, "\"", 1);
}

void sim_buf_int(struct sim_buf *b, int64_t x)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0)
        *--p = '-';
    sim_buf_put(b, p, (size_t)(tmp + sizeof tmp - p));
}

void sim_buf_double(struct sim_buf *b, double x)
{
    char tmp[40];
    ps_fs_format_double(tmp, sizeof tmp, x);
    sim_buf_puts(b, tmp);
}

#define DOUBLE_MEMO_SLOTS 4096

struct sim_double_memo {
    uint64_t bits;
    unsigned char len;          /* 0: empty slot */
    char text[31];
};

void sim_buf_double_memo(struct ps_sim *sim, struct sim_buf *b, double x)
{
    if (!sim->double_memo &&
        !(sim->double_memo = calloc(DOUBLE_MEMO_SLOTS, sizeof *sim->double_memo))) {
        sim_buf_double(b, x);
        return;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    struct sim_double_memo *m =
        &sim->double_memo[(bits * UINT64_C(0x9E3779B97F4A7C15)) >> 52];   /* 12 bits */
    if (m->len == 0 || m->bits != bits) {
        char tmp[40];
        ps_fs_format_double(tmp, sizeof tmp, x);
        size_t n = strlen(tmp);
        if (n >= sizeof m->text) {      /* cannot happen for %.17g; stay correct anyway */
            sim_buf_put(b, tmp, n);
            return;
        }
        memcpy(m->text, tmp, n);
        m->len = (unsigned char)n;
        m->bits = bits;
    }
    sim_buf_put(b, m->text, m->len);
}

void sim_buf_amount(struct sim_buf *b, int resource, int64_t v)
{
    if (resource != PS_RES_CPU || v % PS_CPU_SCALE == 0) {
        sim_buf_int(b, resource == PS_RES_CPU ? v / PS_CPU_SCALE : v);
        return;
    }
    sim_buf_int(b, v / PS_CPU_SCALE);
    int64_t frac = (v < 0 ? -v : v) % PS_CPU_SCALE;
    char tmp[4] = {'.', (char)('0' + frac / 10), (char)('0' + frac % 10), 0};
    sim_buf_put(b, tmp, frac % 10 ? 3 : 2);
}

void sim_buf_resources(struct sim_buf *b, const struct ps_resources *r)
{
    sim_buf_put(b, "{", 1);
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (i > 0)
            sim_buf_put(b, ",", 1);
        sim_buf_str(b, ps_resource_name(i));
        sim_buf_put(b, ":", 1);
        sim_buf_amount(b, i, r->v[i]);
    }
    sim_buf_put(b, "}", 1);
}

void sim_buf_csv(struct sim_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        sim_buf_puts(b, s);
        return;
    }
    sim_buf_put(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            sim_buf_put(b, "\"", 1);
        sim_buf_put(b, p, 1);
    }
    sim_buf_put(b, "\"", 1);
}

/* ---- blocks of output -------------------------------------------------------------------- */

/* The outputs reach their files in blocks of about this many bytes: stdio's buffer (4 KB with
 * glibc, whatever size setvbuf asks without a buffer of its own) would cut them into 4-KB
 * write(2) calls, some 100,000 over an overloaded day. */
#define SIM_OUT_BLOCK (1u << 20)

/* Hands out's bytes to f once they make a block, or all of them. */
static void out_hand(struct ps_sim *sim, struct sim_buf *out, FILE *f, const char *name, bool all)
{
    if (!f || (!all && out->len < SIM_OUT_BLOCK))
        return;
    if (out->oom)
        ps_error_set(&sim->io_error, PS_ENOMEM, "out of memory writing %s", name);
    else if (out->len && fwrite(out->data, 1, out->len, f) != out->len)
        ps_error_set(&sim->io_error, PS_EIO, "cannot write %s", name);
    out->len = 0;
}

void sim_out_flush(struct ps_sim *sim)
{
    out_hand(sim, &sim->events_out, sim->options.events, "events.jsonl", true);
    out_hand(sim, &sim->pools_out, sim->options.pools, "pools.csv", true);
}

/* ---- events.jsonl ------------------------------------------------------------------------ */

static bool ev_on(const struct ps_sim *sim)
{
    return sim->options.events || sim->options.on_event;
}

void sim_ev_begin(struct ps_sim *sim, const char *type)
{
    if (!ev_on(sim))
        return;
    sim->ev = (struct ps_sim_event){.type = type, .time_ms = sim->now};
    sim->line.len = 0;
    sim_buf_puts(&sim->line, "{\"time\":");
    sim_buf_int(&sim->line, sim->now);
    sim_buf_puts(&sim->line, ",\"event_type\":\"");
    sim_buf_puts(&sim->line, type);
    sim_buf_puts(&sim->line, "\"");
}

void sim_ev_key(struct ps_sim *sim, const char *key)
{
    if (!sim->options.events)
        return;
    sim_buf_puts(&sim->line, ",\"");
    sim_buf_puts(&sim->line, key);
    sim_buf_puts(&sim->line, "\":");
}

void sim_ev_end(struct ps_sim *sim)
{
    if (sim->options.on_event && sim->ev.type)
        sim->options.on_event(sim->options.on_event_ctx, &sim->ev);
    sim->ev.type = NULL;
    if (!sim->options.events)
        return;
    sim_buf_puts(&sim->line, "}\n");
    if (sim->line.oom) {
        ps_error_set(&sim->io_error, PS_ENOMEM, "out of memory writing events.jsonl");
        return;
    }
    sim_buf_put(&sim->events_out, sim->line.data, sim->line.len);
    out_hand(sim, &sim->events_out, sim->options.events, "events.jsonl", false);
    sim->stats.events_written++;
}

void sim_ev_job(struct ps_sim *sim, const char *type, const struct sim_job *job)
{
    if (!ev_on(sim))
        return;
    char *id = sim->ev_job_id;
    sim_job_id(sim, job, id, sizeof sim->ev_job_id);
    sim_ev_begin(sim, type);
    sim->ev.job_id = id;
    sim->ev.operation_id = sim->ops[job->op].sc->id;
    sim->ev.tree = sim->trees[sim->ops[job->op].ms[job->ms].tree].name;
    sim_ev_key(sim, "job_id");
    sim_buf_str(&sim->line, id);
    sim_ev_key(sim, "operation_id");
    sim_buf_str(&sim->line, sim->ops[job->op].sc->id);
    sim_ev_key(sim, "node_id");
    sim_buf_str(&sim->line, sim->nodes[job->node].node->id);
}

static void stat(struct sim_buf *b, bool *first, const char *name, int64_t v)
{
    if (!*first)
        sim_buf_put(b, ",", 1);
    *first = false;
    sim_buf_str(b, name);
    sim_buf_put(b, ":", 1);
    sim_buf_int(b, v);
}

void sim_ev_statistics(struct ps_sim *sim, const struct sim_job *job)
{
    if (!sim->options.events)
        return;
    const struct ps_scenario_task *t = sim->ops[job->op].tasks[job->task].spec;
    int64_t run = sim->now - job->start_ms;
    struct sim_buf *b = &sim->line;
    bool first = true;
    sim_ev_key(sim, "statistics");
    sim_buf_put(b, "{", 1);
    stat(b, &first, "time/total", run);
    stat(b, &first, "user_job/cpu/user", sim_job_cpu_time_ms(sim, job, run));
    stat(b, &first, "user_job/max_memory", job->max_memory);   /* the job's own peak */
    stat(b, &first, "user_job/memory_limit", t->memory_limit_bytes);
    sim_res_statistics(sim, job, b, &first);   /* memory reserve, CPU monitor */
    sim_buf_put(b, "}", 1);
}

/* ---- pools.csv --------------------------------------------------------------------------- */

static void pool_row_format(struct ps_sim *sim, struct sim_buf *b, const char *tree,
                            const char *pool, const struct sim_pool_row *r)
{
    sim_buf_csv(b, tree);
    sim_buf_put(b, ",", 1);
    sim_buf_csv(b, pool);
    /* after the columns of formats.md, the last value: the integral capacity in the volume's
     * unit (share x seconds: the min over resources of capacity / cluster total), as
     * get_history's */
    for (int i = 0; i < 7; i++) {
        sim_buf_put(b, ",", 1);
        sim_buf_double_memo(sim, b, r->values[i]);
    }
    sim_buf_put(b, ",", 1);
    sim_buf_puts(b, ps_starvation_status_name((enum ps_starvation_status)r->starvation));
    sim_buf_put(b, ",", 1);
    sim_buf_int(b, r->running);
    sim_buf_put(b, ",", 1);
    sim_buf_int(b, r->count);
    sim_buf_put(b, ",", 1);
    sim_buf_double_memo(sim, b, r->values[7]);
    sim_buf_put(b, "\n", 1);
}

/* Most pools show the same values update after update: their rows are copied from the
 * previous build, only the others are formatted. */
void sim_pools_rows_build(struct ps_sim *sim, int tree)
{
    if (!sim->options.pools)
        return;
    struct sim_tree *T = &sim->trees[tree];
    struct sim_buf swap = T->rows_prev;
    T->rows_prev = T->rows;
    T->rows = swap;
    uint64_t prev = T->rows_build++;
    struct sim_buf *b = &T->rows;
    b->len = 0;
    const struct ps_resources *total = &ps_pool_tree_root(T->tree)->dynamic.fs.resource_limits;
    for (int e = 0; e < T->ts.fs.count; e++) {
        const struct ps_pool *p = T->ts.fs.pools[e];
        struct sim_pool_stats *st = T->elem_stats[e];
        if (!p || !st)
            continue;
        const struct ps_element_dynamic *d = &p->dynamic;
        struct sim_pool_row r;
        memset(&r, 0, sizeof r);
        r.values[0] = d->fair_share_ratio;
        r.values[1] = d->usage_ratio;
        r.values[2] = d->demand_ratio;
        r.values[3] = ps_share_max_component(d->fs.fair_share.strong_guarantee);
        r.values[4] = ps_share_max_component(d->fs.fair_share.integral_guarantee);
        r.values[5] = ps_share_max_component(d->fs.fair_share.weight_proportional);
        r.values[6] = p->fs_pool.accumulated_resource_ratio_volume;
        r.values[7] = ps_volume_min_ratio(&p->fs_pool.integral_pool_capacity, total);
        r.running = p->running_operation_count;
        r.count = p->operation_count;
        r.starvation = (int)d->starvation;
        size_t at = b->len;
        struct sim_pool_row *old = &st->row;
        if (prev != 0 && old->build == prev && old->at + old->len <= T->rows_prev.len &&
            memcmp(old->values, r.values, sizeof r.values) == 0 && old->running == r.running &&
            old->count == r.count && old->starvation == r.starvation)
            sim_buf_put(b, T->rows_prev.data + old->at, old->len);
        else
            pool_row_format(sim, b, T->name, p->name, &r);
        r.build = T->rows_build;
        r.at = at;
        r.len = b->len - at;
        *old = r;
    }
    if (b->oom)
        ps_error_set(&sim->io_error, PS_ENOMEM, "out of memory writing pools.csv");
}

/* The rows of every tree, each after the time, onto pools_out. */
void sim_pools_rows_write(struct ps_sim *sim)
{
    FILE *out = sim->options.pools;
    if (!out)
        return;
    int64_t period = sim->options.pools_period_ms;
    if (period > 0) {
        if (sim->now < sim->next_pools_row_ms)
            return;
        sim->next_pools_row_ms = (sim->now / period + 1) * period;
    }
    char prefix[24];
    struct sim_buf *line = &sim->line;
    line->len = 0;
    sim_buf_int(line, sim->now);
    sim_buf_put(line, ",", 1);
    size_t prefix_len = line->len;
    memcpy(prefix, line->data, prefix_len);
    line->len = 0;
    struct sim_buf *b = &sim->pools_out;
    for (int t = 0; t < sim->tree_count; t++) {
        const struct sim_buf *rows = &sim->trees[t].rows;
        const char *p = rows->data, *end = rows->data + rows->len;
        while (p && p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = (size_t)(nl - p) + 1;
            if (!buf_reserve(b, prefix_len + n))
                break;
            memcpy(b->data + b->len, prefix, prefix_len);
            memcpy(b->data + b->len + prefix_len, p, n);
            b->len += prefix_len + n;
            p += n;
        }
    }
    out_hand(sim, b, out, "pools.csv", b->oom);
}

/* ---- operations.csv ---------------------------------------------------------------------- */

static const char *state_name(enum sim_op_state s)
{
    switch (s) {
    case SIM_OP_WAITING: return "not_started";
    case SIM_OP_PENDING: return "pending";
    case SIM_OP_RUNNING: return "running";
    case SIM_OP_COMPLETED: return "completed";
    case SIM_OP_FAILED: return "failed";
    }
    return "unknown";
}

int ps_sim_write_operations_csv(struct ps_sim *sim, FILE *out, struct ps_error *err)
{
    struct sim_buf b = {0};
    sim_buf_puts(&b, "id,job_count,preempted_job_count,start_time,finish_time,real_duration,"
                     "jobs_total_duration,job_max_duration,preempted_jobs_total_duration,"
                     "operation_type,operation_state,in_timeframe\n");
    for (int64_t i = 0; i < sim->op_count; i++) {
        const struct sim_op *o = &sim->ops[i];
        bool finished = o->finish_ms >= 0;
        sim_buf_csv(&b, o->sc->id);
        int64_t ints[] = {o->job_count, o->preempted_job_count, o->sc->start_time_ms};
        for (size_t k = 0; k < 3; k++) {
            sim_buf_put(&b, ",", 1);
            sim_buf_int(&b, ints[k]);
        }
        sim_buf_put(&b, ",", 1);
        if (finished)
            sim_buf_int(&b, o->finish_ms);
        sim_buf_put(&b, ",", 1);
        if (finished)
            sim_buf_int(&b, o->finish_ms - o->sc->start_time_ms);
        int64_t rest[] = {o->jobs_total_duration_ms, o->job_max_duration_ms,
                          o->preempted_jobs_total_duration_ms};
        for (size_t k = 0; k < 3; k++) {
            sim_buf_put(&b, ",", 1);
            sim_buf_int(&b, rest[k]);
        }
        sim_buf_puts(&b, ",vanilla,");
        sim_buf_puts(&b, state_name(o->state));
        sim_buf_puts(&b, finished ? ",true\n" : ",false\n");
    }
    int rc = 0;
    if (b.oom)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory writing operations.csv");
    else if (fwrite(b.data, 1, b.len, out) != b.len)
        rc = ps_error_set(err, PS_EIO, "cannot write operations.csv");
    sim_buf_release(&b);
    return rc;
}
