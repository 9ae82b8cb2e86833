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

/* ---- numbers ---------------------------------------------------------------------------- */

void sim_text_double(struct ps_textbuf *b, double x)
{
    char tmp[40];
    ps_fs_format_double(tmp, sizeof tmp, x);
    ps_textbuf_adds(b, tmp);
}

#define DOUBLE_MEMO_SLOTS 4096

struct sim_double_memo {
    uint64_t bits;
    unsigned char len;          /* 0: empty slot */
    char text[31];
};

void sim_text_double_memo(struct ps_sim *sim, struct ps_textbuf *b, double x)
{
    if (!sim->double_memo &&
        !(sim->double_memo = calloc(DOUBLE_MEMO_SLOTS, sizeof *sim->double_memo))) {
        sim_text_double(b, x);
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
            ps_textbuf_add(b, tmp, n);
            return;
        }
        memcpy(m->text, tmp, n);
        m->len = (unsigned char)n;
        m->bits = bits;
    }
    ps_textbuf_add(b, m->text, m->len);
}

void sim_text_amount(struct ps_textbuf *b, int resource, int64_t v)
{
    if (resource != PS_RES_CPU || v % PS_CPU_SCALE == 0) {
        ps_textbuf_addi(b, resource == PS_RES_CPU ? v / PS_CPU_SCALE : v);
        return;
    }
    ps_textbuf_addi(b, v / PS_CPU_SCALE);
    int64_t frac = (v < 0 ? -v : v) % PS_CPU_SCALE;
    char tmp[4] = {'.', (char)('0' + frac / 10), (char)('0' + frac % 10), 0};
    ps_textbuf_add(b, tmp, frac % 10 ? 3 : 2);
}

void sim_text_resources(struct ps_textbuf *b, const struct ps_resources *r)
{
    ps_textbuf_add(b, "{", 1);
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (i > 0)
            ps_textbuf_add(b, ",", 1);
        ps_textbuf_add_json(b, ps_resource_name(i));
        ps_textbuf_add(b, ":", 1);
        sim_text_amount(b, i, r->v[i]);
    }
    ps_textbuf_add(b, "}", 1);
}

/* ---- blocks of output -------------------------------------------------------------------- */

/* The outputs reach their files in blocks of about this many bytes: stdio's buffer (4 KB with
 * glibc, whatever size setvbuf asks without a buffer of its own) would cut them into 4-KB
 * write(2) calls, some 100,000 over an overloaded day. */
#define SIM_OUT_BLOCK (1u << 20)

/* Hands out's bytes to f once they make a block, or all of them. */
static void out_hand(struct ps_sim *sim, struct ps_textbuf *out, FILE *f, const char *name,
                     bool all)
{
    if (!f || (!all && out->len < SIM_OUT_BLOCK))
        return;
    if (out->failed)
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
    ps_textbuf_adds(&sim->line, "{\"time\":");
    ps_textbuf_addi(&sim->line, sim->now);
    ps_textbuf_adds(&sim->line, ",\"event_type\":\"");
    ps_textbuf_adds(&sim->line, type);
    ps_textbuf_adds(&sim->line, "\"");
}

void sim_ev_key(struct ps_sim *sim, const char *key)
{
    if (!sim->options.events)
        return;
    ps_textbuf_adds(&sim->line, ",\"");
    ps_textbuf_adds(&sim->line, key);
    ps_textbuf_adds(&sim->line, "\":");
}

void sim_ev_end(struct ps_sim *sim)
{
    if (sim->options.on_event && sim->ev.type)
        sim->options.on_event(sim->options.on_event_ctx, &sim->ev);
    sim->ev.type = NULL;
    if (!sim->options.events)
        return;
    ps_textbuf_adds(&sim->line, "}\n");
    if (sim->line.failed) {
        ps_error_set(&sim->io_error, PS_ENOMEM, "out of memory writing events.jsonl");
        return;
    }
    ps_textbuf_add(&sim->events_out, sim->line.data, sim->line.len);
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
    ps_textbuf_add_json(&sim->line, id);
    sim_ev_key(sim, "operation_id");
    ps_textbuf_add_json(&sim->line, sim->ops[job->op].sc->id);
    sim_ev_key(sim, "node_id");
    ps_textbuf_add_json(&sim->line, sim->nodes[job->node].node->id);
}

static void stat(struct ps_textbuf *b, bool *first, const char *name, int64_t v)
{
    if (!*first)
        ps_textbuf_add(b, ",", 1);
    *first = false;
    ps_textbuf_add_json(b, name);
    ps_textbuf_add(b, ":", 1);
    ps_textbuf_addi(b, v);
}

void sim_ev_statistics(struct ps_sim *sim, const struct sim_job *job)
{
    if (!sim->options.events)
        return;
    const struct ps_scenario_task *t = sim->ops[job->op].tasks[job->task].spec;
    int64_t run = sim->now - job->start_ms;
    struct ps_textbuf *b = &sim->line;
    bool first = true;
    sim_ev_key(sim, "statistics");
    ps_textbuf_add(b, "{", 1);
    stat(b, &first, "time/total", run);
    stat(b, &first, "user_job/cpu/user", sim_job_cpu_time_ms(sim, job, run));
    stat(b, &first, "user_job/max_memory", job->max_memory);   /* the job's own peak */
    stat(b, &first, "user_job/memory_limit", t->memory_limit_bytes);
    sim_res_statistics(sim, job, b, &first);   /* memory reserve, CPU monitor */
    ps_textbuf_add(b, "}", 1);
}

/* ---- pools.csv --------------------------------------------------------------------------- */

/* Value i of row r, starting at row_at in b: the text of the row before (old, at old_text;
 * NULL: none) when the value kept its bits, else formatted. */
static void pool_row_value(struct ps_sim *sim, struct ps_textbuf *b, size_t row_at,
                           struct sim_pool_row *r, int i, const struct sim_pool_row *old,
                           const char *old_text)
{
    r->value_at[i] = (uint32_t)(b->len - row_at);
    if (old_text && memcmp(&old->values[i], &r->values[i], sizeof r->values[i]) == 0)
        ps_textbuf_add(b, old_text + old->value_at[i], old->value_len[i]);
    else
        sim_text_double_memo(sim, b, r->values[i]);
    r->value_len[i] = (uint32_t)(b->len - row_at) - r->value_at[i];
}

static void pool_row_format(struct ps_sim *sim, struct ps_textbuf *b, const char *tree,
                            const char *pool, struct sim_pool_row *r,
                            const struct sim_pool_row *old, const char *old_text)
{
    size_t row_at = b->len;
    if (old_text) {   /* the same stats, so the same tree and pool: their text up to value 0 */
        ps_textbuf_add(b, old_text, old->value_at[0] - 1);
    } else {
        ps_textbuf_add_csv(b, tree);
        ps_textbuf_add(b, ",", 1);
        ps_textbuf_add_csv(b, pool);
    }
    /* after the columns of formats.md, the last value: the integral capacity in the volume's
     * unit (share x seconds: the min over resources of capacity / cluster total), as
     * get_history's */
    for (int i = 0; i < 7; i++) {
        ps_textbuf_add(b, ",", 1);
        pool_row_value(sim, b, row_at, r, i, old, old_text);
    }
    ps_textbuf_add(b, ",", 1);
    ps_textbuf_adds(b, ps_starvation_status_name((enum ps_starvation_status)r->starvation));
    ps_textbuf_add(b, ",", 1);
    ps_textbuf_addi(b, r->running);
    ps_textbuf_add(b, ",", 1);
    ps_textbuf_addi(b, r->count);
    ps_textbuf_add(b, ",", 1);
    pool_row_value(sim, b, row_at, r, 7, old, old_text);
    ps_textbuf_add(b, "\n", 1);
}

/* Most pools show the same values update after update: their rows are copied from the
 * previous build, only the others are formatted. */
void sim_pools_rows_build(struct ps_sim *sim, int tree)
{
    if (!sim->options.pools)
        return;
    struct sim_tree *T = &sim->trees[tree];
    struct ps_textbuf swap = T->rows_prev;
    T->rows_prev = T->rows;
    T->rows = swap;
    uint64_t prev = T->rows_build++;
    struct ps_textbuf *b = &T->rows;
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
        const char *old_text = prev != 0 && old->build == prev && old->at + old->len <= T->rows_prev.len
                                   ? T->rows_prev.data + old->at
                                   : NULL;
        if (old_text && memcmp(old->values, r.values, sizeof r.values) == 0 &&
            old->running == r.running && old->count == r.count && old->starvation == r.starvation) {
            ps_textbuf_add(b, old_text, old->len);
            memcpy(r.value_at, old->value_at, sizeof r.value_at);
            memcpy(r.value_len, old->value_len, sizeof r.value_len);
        } else {
            pool_row_format(sim, b, T->name, p->name, &r, old, old_text);
        }
        r.build = T->rows_build;
        r.at = at;
        r.len = b->len - at;
        *old = r;
    }
    if (b->failed)
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
    struct ps_textbuf *line = &sim->line;
    line->len = 0;
    ps_textbuf_addi(line, sim->now);
    ps_textbuf_add(line, ",", 1);
    size_t prefix_len = line->len;
    memcpy(prefix, line->data, prefix_len);
    line->len = 0;
    struct ps_textbuf *b = &sim->pools_out;
    for (int t = 0; t < sim->tree_count; t++) {
        const struct ps_textbuf *rows = &sim->trees[t].rows;
        const char *p = rows->data, *end = rows->data + rows->len;
        while (p && p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = (size_t)(nl - p) + 1;
            if (!ps_textbuf_reserve(b, prefix_len + n))
                break;
            memcpy(b->data + b->len, prefix, prefix_len);
            memcpy(b->data + b->len + prefix_len, p, n);
            b->len += prefix_len + n;
            p += n;
        }
    }
    out_hand(sim, b, out, "pools.csv", b->failed);
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
    struct ps_textbuf b = {0};
    ps_textbuf_adds(&b, "id,job_count,preempted_job_count,start_time,finish_time,real_duration,"
                     "jobs_total_duration,job_max_duration,preempted_jobs_total_duration,"
                     "operation_type,operation_state,in_timeframe\n");
    for (int64_t i = 0; i < sim->op_count; i++) {
        const struct sim_op *o = &sim->ops[i];
        bool finished = o->finish_ms >= 0;
        ps_textbuf_add_csv(&b, o->sc->id);
        int64_t ints[] = {o->job_count, o->preempted_job_count, o->sc->start_time_ms};
        for (size_t k = 0; k < 3; k++) {
            ps_textbuf_add(&b, ",", 1);
            ps_textbuf_addi(&b, ints[k]);
        }
        ps_textbuf_add(&b, ",", 1);
        if (finished)
            ps_textbuf_addi(&b, o->finish_ms);
        ps_textbuf_add(&b, ",", 1);
        if (finished)
            ps_textbuf_addi(&b, o->finish_ms - o->sc->start_time_ms);
        int64_t rest[] = {o->jobs_total_duration_ms, o->job_max_duration_ms,
                          o->preempted_jobs_total_duration_ms};
        for (size_t k = 0; k < 3; k++) {
            ps_textbuf_add(&b, ",", 1);
            ps_textbuf_addi(&b, rest[k]);
        }
        ps_textbuf_adds(&b, ",vanilla,");
        ps_textbuf_adds(&b, state_name(o->state));
        ps_textbuf_adds(&b, finished ? ",true\n" : ",false\n");
    }
    int rc = 0;
    if (b.failed)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory writing operations.csv");
    else if (fwrite(b.data, 1, b.len, out) != b.len)
        rc = ps_error_set(err, PS_EIO, "cannot write operations.csv");
    ps_textbuf_release(&b);
    return rc;
}
