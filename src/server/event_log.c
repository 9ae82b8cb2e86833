/* event_log.c — //sys/scheduler/event_log: rows journalled with the changes that cause them,
 * bounded, read back with filters (event_log.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/event_record.h"
#include "io/json_value.h"
#include "server/api_json.h"
#include "server/event_log.h"
#include "server/event_log_state.h"
#include "server/journal.h"
#include "server/persist.h"
#include "server/service_state.h"

#define READ_LIMIT 10000
#define READ_BLOCK 10000   /* rows read per block, newest first (newest_matches) */

static void seq_key(uint64_t seq, char key[24])
{
    snprintf(key, 24, "%020" PRIu64, seq);
}

static void index_note(struct ps_service *svc, uint64_t seq, int64_t ts);

/* Appends the next row, dropping the oldest beyond the bound. Its text is made off the lock:
 * by the journal's render thread from ctx (owned) with render, else ctx is the row's json_t,
 * dumped by the journal's writer (journal.h). */
static void append_row(struct ps_service *svc, int64_t ts, const struct ps_journal_renderer *render,
                       void *ctx)
{
    char key[24];
    index_note(svc, svc->event_log_next, ts);
    seq_key(svc->event_log_next++, key);
    if (render)
        ps_journal_put_aside_rendered(svc->journal, "event", key, render, ctx);
    else
        ps_journal_put_aside(svc->journal, "event", key, ctx);
    while (svc->event_log_next - svc->event_log_first > (uint64_t)svc->cfg.event_log_max_row_count) {
        if (svc->event_log_state_seq >= 0 &&
            (uint64_t)svc->event_log_state_seq == svc->event_log_first)
            svc->event_log_state_seq = -1;   /* the state rows leave: log them again */
        seq_key(svc->event_log_first++, key);
        ps_journal_put_aside(svc->journal, "event", key, NULL);
    }
    ps_journal_put_aside(svc->journal, "meta", "event_log",
                         json_pack("{s:I, s:I}", "first", (json_int_t)svc->event_log_first,
                                   "next", (json_int_t)svc->event_log_next));
}

static bool logging(const struct ps_service *svc)
{
    return svc->journal && svc->cfg.event_log_max_row_count > 0;
}

/* Appends ev (stolen) as the next row. */
static void append(struct ps_service *svc, json_t *ev)
{
    if (!ev || !logging(svc)) {
        json_decref(ev);
        return;
    }
    append_row(svc, json_integer_value(json_object_get(ev, "timestamp")), NULL, ev);
}

/* Appends the row render makes of ctx (owned; NULL: out of memory, no row). */
static void append_rendered(struct ps_service *svc, int64_t ts,
                            const struct ps_journal_renderer *render, void *ctx)
{
    if (ctx && logging(svc))
        append_row(svc, ts, render, ctx);
    else if (ctx)
        render->drop(ctx);
}

static json_t *progress_json(const struct ps_svc_op *op)
{
    int64_t c[5] = {0};   /* total, running, completed, failed, aborted */
    for (int i = 0; i < op->task_count; i++) {
        c[0] += op->tasks[i].job_count;
        c[1] += op->tasks[i].running;
        c[2] += op->tasks[i].completed;
        c[3] += op->tasks[i].failed;
        c[4] += op->tasks[i].aborted;
    }
    return json_pack("{s:{s:I, s:I, s:I, s:I, s:I}}", "jobs", "total", (json_int_t)c[0],
                     "running", (json_int_t)c[1], "completed", (json_int_t)c[2], "failed",
                     (json_int_t)c[3], "aborted", (json_int_t)c[4]);
}

void ps_event_log_operation(struct ps_service *svc, const struct ps_svc_op *op, int64_t now_ms)
{
    char type[48];
    snprintf(type, sizeof type, "operation_%s", op->finished ? op->state : "started");
    json_t *ev = ps_event_row(type, now_ms);
    if (!ev)
        return;
    struct ps_event_op_view v;
    if (ps_event_op_view_take(op, &v) != 0) {
        json_decref(ev);
        return;
    }
    ps_event_operation_info(&v, ps_strategy_default_tree(svc->strategy), ev, true);
    ps_event_op_view_release(&v);
    if (op->finished) {
        json_object_set_new(ev, "start_time", json_integer(op->start_ms));
        json_object_set_new(ev, "finish_time", json_integer(op->finish_ms));
        if (op->error)
            json_object_set_new(ev, "error", json_pack("{s:s}", "message", op->error));
        json_object_set_new(ev, "runtime_parameters", ps_event_runtime_parameters(op->runtime_options));
        json_object_set_new(ev, "progress", progress_json(op));
    }
    append(svc, ev);
}

void ps_event_log_runtime_parameters(struct ps_service *svc, const struct ps_svc_op *op,
                                     const char *user, int64_t now_ms)
{
    json_t *ev = ps_event_row("runtime_parameters_info", now_ms);
    if (!ev)
        return;
    json_object_set_new(ev, "operation_id", json_string(op->id));
    json_object_set_new(ev, "authenticated_user", json_string(user));
    json_object_set_new(ev, "runtime_parameters", ps_event_runtime_parameters(op->runtime_options));
    append(svc, ev);
}

void ps_event_log_job(struct ps_service *svc, const struct ps_svc_job *job, int64_t now_ms)
{
    char type[32];
    snprintf(type, sizeof type, "job_%s",
             job->state == PS_JOB_RUNNING ? "started" : ps_job_state_name(job->state));
    json_t *ev = ps_event_row(type, now_ms);
    if (!ev)
        return;
    const struct ps_svc_op *op = job->op;
    const char *tree = op->sop && job->tree_slot < op->sop->tree_count
                           ? op->sop->tree_names[job->tree_slot]
                           : NULL;
    json_object_set_new(ev, "job_id", json_string(job->id));
    json_object_set_new(ev, "operation_id", json_string(op->id));
    json_object_set_new(ev, "resource_limits", ps_api_resources_json(&job->usage));
    json_object_set_new(ev, "node_address", json_string(job->node_id));
    json_object_set_new(ev, "job_type", json_string("vanilla"));
    json_object_set_new(ev, "tree_id", tree ? json_string(tree) : json_null());
    json_object_set_new(ev, "task_name", json_string(op->tasks[job->task].name));
    if (job->state != PS_JOB_RUNNING) {
        json_object_set_new(ev, "start_time", json_integer(job->start_ms));
        json_object_set_new(ev, "finish_time", json_integer(job->finish_ms));
        json_object_set_new(ev, "statistics", job->statistics ? json_deep_copy(job->statistics)
                                                              : json_object());
    }
    if (job->state == PS_JOB_FAILED && job->error)
        json_object_set_new(ev, "error", json_pack("{s:s}", "message", job->error));
    if (job->state == PS_JOB_ABORTED && job->abort_reason)
        json_object_set_new(ev, "reason", json_string(job->abort_reason));
    if (job->state == PS_JOB_ABORTED && job->preempted_for_op) {
        json_t *pf = json_pack("{s:s}", "operation_id", job->preempted_for_op);
        if (pf && job->preempted_for_job)
            json_object_set_new(pf, "job_id", json_string(job->preempted_for_job));
        json_object_set_new(ev, "preempted_for", pf);
    }
    if (job->state == PS_JOB_ABORTED && job->preemption_reason)
        json_object_set_new(ev, "preemption_reason", json_string(job->preemption_reason));
    append(svc, ev);
}

void ps_event_log_banned_in_tree(struct ps_service *svc, const struct ps_svc_op *op,
                                 const char *tree, int64_t now_ms)
{
    json_t *ev = ps_event_row("operation_banned_in_tree", now_ms);
    if (!ev)
        return;
    json_object_set_new(ev, "operation_id", json_string(op->id));
    json_object_set_new(ev, "tree_id", json_string(tree));
    append(svc, ev);
}

static void tree_rows(struct ps_service *svc, int64_t now_ms);

void ps_event_log_node(struct ps_service *svc, const struct ps_svc_node *node, const char *type,
                       int64_t now_ms)
{
    if (svc->pools_info_due)   /* the trees the node was placed by come first */
        tree_rows(svc, now_ms);
    json_t *ev = ps_event_row(type, now_ms);
    if (!ev)
        return;
    json_object_set_new(ev, "node_address", json_string(node->id));
    append(svc, ps_event_node_fields(node->tags, node->tag_count, &node->limits, ev));
}

/* upstream's BuildStaticPoolsInformation: each pool's config, every key with its value */
static json_t *pools_of(const struct ps_pool_tree *tree)
{
    json_t *pools = json_object();
    for (int i = 0; pools && i < ps_pool_tree_pool_count(tree); i++) {
        const struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (p->is_root)
            continue;
        json_t *cfg = json_object();
        for (int k = 0; k < ps_pool_config_key_count(); k++) {
            struct ps_value v = ps_value_null();
            const char *key = ps_pool_config_key_name(k);
            if (ps_pool_config_get(&p->config, key, &v, NULL) == 0)
                json_object_set_new(cfg, key, ps_value_to_json(&v));
            ps_value_release(&v);
        }
        /* not a config key, but a replay needs the tree's shape (src/io/event_replay.h) */
        json_object_set_new(cfg, "parent",
                            json_string(p->parent && !p->parent->is_root ? p->parent->name
                                                                         : "<Root>"));
        json_object_set_new(pools, p->name, cfg);
    }
    return pools;
}

/* poolsched's pool_trees_info: every tree's config (every key with its value, as
 * `get //sys/pool_trees/<tree>/@config` without the nulls) and the default tree, which a replay
 * needs to put the nodes in their trees (nodes_filter) and upstream's event log lacks */
static json_t *trees_info(struct ps_service *svc, int64_t now_ms)
{
    json_t *ev = ps_event_row("pool_trees_info", now_ms), *trees = json_object();
    for (int t = 0; trees && t < ps_strategy_tree_count(svc->strategy); t++) {
        const struct ps_pool_tree *tree = ps_strategy_tree_at(svc->strategy, t);
        struct ps_value v = ps_value_null();
        if (ps_tree_config_to_value(ps_pool_tree_config(tree), &v) == 0)
            json_object_set_new(trees, ps_pool_tree_name(tree), ps_value_to_json(&v));
        ps_value_release(&v);
    }
    const char *def = ps_strategy_default_tree(svc->strategy);
    json_object_set_new(ev, "trees", trees);
    json_object_set_new(ev, "default_tree", def ? json_string(def) : json_null());
    return ev;
}

/* pool_trees_info and pools_info: the trees as they are now, after a change (at most once a
 * second), or as a part of the state rows */
static void tree_rows(struct ps_service *svc, int64_t now_ms)
{
    svc->pools_info_due = false;
    svc->pools_info_next_ms = now_ms + PS_EVENT_LOG_POOLS_INFO_PERIOD_MS;
    append(svc, trees_info(svc, now_ms));
    json_t *ev = ps_event_row("pools_info", now_ms);
    json_t *trees = json_object();
    for (int t = 0; trees && t < ps_strategy_tree_count(svc->strategy); t++) {
        const struct ps_pool_tree *tree = ps_strategy_tree_at(svc->strategy, t);
        json_object_set_new(trees, ps_pool_tree_name(tree), pools_of(tree));
    }
    json_object_set_new(ev, "pools", trees);
    append(svc, ev);
}

/* The state a replay starts from, at one timestamp: pool_trees_info, pools_info, nodes_info,
 * operations_info. */
static void state_rows(struct ps_service *svc, int64_t now_ms)
{
    svc->event_log_state_seq = (int64_t)svc->event_log_next;
    svc->event_log_state_ms = now_ms;
    tree_rows(svc, now_ms);
    /* nodes_info (upstream's periodic row) and operations_info: copies of what they read, made
     * into rows by the journal's writer (event_log_state.h) */
    append_rendered(svc, now_ms, &ps_event_nodes_info_renderer,
                    ps_event_nodes_info_take(svc, now_ms));
    append_rendered(svc, now_ms, &ps_event_operations_info_renderer,
                    ps_event_operations_info_take(svc, now_ms));
}

void ps_event_log_pools_info(struct ps_service *svc, int64_t now_ms)
{
    int64_t max = svc->cfg.event_log_max_row_count;
    if (max <= 0 || now_ms < svc->pools_info_next_ms)
        return;
    /* A replay starts at the log's first state rows: logged every 1/16 of the bound, but not
     * more often than nodes_info_logging_period, the rows before them are at most that part of
     * the log, or that period's rows (event_log.h) */
    int64_t every = max / PS_EVENT_LOG_STATE_PARTS > PS_EVENT_LOG_STATE_MIN_ROWS
                        ? max / PS_EVENT_LOG_STATE_PARTS : PS_EVENT_LOG_STATE_MIN_ROWS;
    if (svc->event_log_state_seq < 0 ||
        (svc->event_log_next - (uint64_t)svc->event_log_state_seq >= (uint64_t)every &&
         now_ms - svc->event_log_state_ms >= svc->cfg.nodes_info_logging_period_ms))
        state_rows(svc, now_ms);
    else if (svc->pools_info_due)
        tree_rows(svc, now_ms);
}

int ps_event_log_load(struct ps_service *svc, struct ps_error *err)
{
    ps_event_log_release(svc);
    svc->event_log_first = svc->event_log_next = 0;
    svc->event_log_state_seq = -1;   /* a (new) leader logs the state it starts from */
    json_t *m = NULL;
    int rc = ps_persist_meta_get(svc, "event_log", &m, err);
    if (rc != 0) {   /* not "empty": rows numbered from 0 again would overwrite the oldest */
        ps_error_prefix(err, "cannot read the event log's bounds");
        return rc;
    }
    if (!m)
        return 0;   /* no event yet */
    json_int_t first = json_integer_value(json_object_get(m, "first"));
    json_int_t next = json_integer_value(json_object_get(m, "next"));
    json_decref(m);
    if (first >= 0 && next >= first) {
        svc->event_log_first = (uint64_t)first;
        svc->event_log_next = (uint64_t)next;
    }
    return 0;
}

bool ps_event_log_claims(const char *path)
{
    return path && strcmp(path, PS_EVENT_LOG_PATH) == 0;
}

bool ps_event_log_param(const char *name)
{
    static const char *const params[] = {"operation_id", "event_type", "since", "until",
                                         "limit", "upper_row_index"};
    for (size_t i = 0; i < sizeof params / sizeof *params; i++)
        if (strcmp(params[i], name) == 0)
            return true;
    return false;
}

/* The rows a read of one block found and their timestamps' span (index_learn). */
struct block_seen {
    uint64_t rows;
    int64_t lo, hi;
};

struct filter {
    const char *operation_id;
    const json_t *event_type;   /* a string or a list of them, or NULL */
    int64_t since, until;
    uint64_t upper;             /* rows whose index is below it (upper_row_index) */
    size_t limit;
    bool raw;                   /* no filter but the time: rows kept as their stored text */
    char *needle;               /* "<operation_id>" quoted, or NULL: rows without it are
                                 * skipped unparsed (ids need no JSON escapes) */
    json_t *rows;               /* the matches of the block being read, in key order */
    uint64_t *seqs;             /* their row indexes */
    size_t seq_cap;
    bool failed;                /* out of memory keeping them */
    struct block_seen *seen;    /* every row of the block being read, matching or not */
};

/* row, the text or the parse of the row stored at key, kept as a match of the block */
static void keep(struct filter *f, const char *key, json_t *row)
{
    size_t n = json_array_size(f->rows);
    if (n == f->seq_cap) {
        size_t cap = f->seq_cap ? 2 * f->seq_cap : 256;
        uint64_t *grown = realloc(f->seqs, cap * sizeof *grown);
        if (!grown) {
            f->failed = true;
            json_decref(row);
            return;
        }
        f->seqs = grown;
        f->seq_cap = cap;
    }
    if (!row || json_array_append_new(f->rows, row) != 0) {
        f->failed = true;
        return;
    }
    f->seqs[n] = strtoull(key, NULL, 10);
}

static bool type_matches(const json_t *want, const char *type)
{
    if (!want)
        return true;
    if (json_is_string(want))
        return strcmp(json_string_value(want), type) == 0;
    size_t i;
    json_t *t;
    json_array_foreach(want, i, t)
        if (strcmp(json_string_value(t), type) == 0)
            return true;
    return false;
}

/* Whether a row's text, one that begins with its timestamp, goes on with a string event_type,
 * as every row the scheduler writes does (ps_event_row). The store holds valid JSON only (its
 * schema checks it), so such a text is a row, and it can be handed over unparsed. */
static bool typed_text(const char *text)
{
    const char *p = text + sizeof "{\"timestamp\":" - 1;
    p += *p == '-';
    while (*p >= '0' && *p <= '9')
        p++;
    return strncmp(p, ",\"event_type\":\"", sizeof ",\"event_type\":\"" - 1) == 0;
}

static int take(const char *key, const char *value, void *ctx)
{
    struct filter *f = ctx;
    /* rows are stored compact with the timestamp first (ps_event_row()): most rows outside
     * since..until are skipped unparsed; a row that does not begin so is parsed */
    int64_t ts;
    bool timed = ps_event_text_timestamp(value, &ts);
    struct block_seen *seen = f->seen;
    int64_t span_ts = timed ? ts : ps_event_text_time(value, strlen(value));
    seen->rows++;
    seen->lo = span_ts < seen->lo ? span_ts : seen->lo;
    seen->hi = span_ts > seen->hi ? span_ts : seen->hi;
    if (f->needle && !strstr(value, f->needle))
        return 0;
    if (timed && (ts < f->since || ts > f->until))
        return 0;
    /* No filter but the time: a row within it matches, and its text is parsed after the lock
     * (ps_event_log_parse) or copied into the reply (io/event_page.h); a text that does not
     * show its event type first is parsed here, so that one without is not counted. */
    json_t *text = f->raw && timed && typed_text(value) ? json_string_nocheck(value) : NULL;
    if (text) {
        keep(f, key, text);
        return 0;
    }
    json_t *ev = json_loads(value, 0, NULL);
    const char *type = json_string_value(json_object_get(ev, "event_type"));
    const char *op = json_string_value(json_object_get(ev, "operation_id"));
    bool match = type && type_matches(f->event_type, type) &&
                 json_integer_value(json_object_get(ev, "timestamp")) >= f->since &&
                 json_integer_value(json_object_get(ev, "timestamp")) <= f->until &&
                 (!f->operation_id || (op && strcmp(op, f->operation_id) == 0));
    if (!match) {
        json_decref(ev);
        return 0;
    }
    keep(f, key, ev);
    return 0;
}

/* ---- the blocks' timestamp spans ------------------------------------------------------------
 * Per block of READ_BLOCK rows (sequence number / READ_BLOCK): the smallest and largest
 * timestamp of its rows, so that a read steps over the blocks where no row can be within
 * since..until without listing them (a week's log paged back from the newest row would
 * otherwise list every newer row again for every page). Made at the first read with every
 * stored block unknown (always read); a read that finds all the rows of a block learns its span
 * (index_learn), and append() keeps the spans from then on. Reading the whole log at the first
 * read instead held the scheduler's lock for the time of that read (about a second for a
 * million rows). A block some of whose rows a read did not find (written, not committed yet)
 * stays unknown. Under svc->mu, as the rows. */

struct block_span {
    int64_t lo, hi;     /* lo > hi: no row yet */
    bool unknown;
};

struct ps_event_log_index {
    uint64_t base;      /* the block number of spans[0] */
    size_t count, cap;
    struct block_span *spans;
};

void ps_event_log_release(struct ps_service *svc)
{
    if (svc->event_log_index)
        free(svc->event_log_index->spans);
    free(svc->event_log_index);
    svc->event_log_index = NULL;
}

/* The span of block b, grown to it when grow (NULL: before the index's first block, or out of
 * memory). Blocks before the log's first row are dropped as the index grows. */
static struct block_span *span_at(struct ps_service *svc, uint64_t b, bool grow)
{
    struct ps_event_log_index *x = svc->event_log_index;
    if (b < x->base)
        return NULL;
    if (b - x->base >= x->count) {
        if (!grow)
            return NULL;
        uint64_t first = svc->event_log_first / READ_BLOCK;
        if (first > x->base) {   /* blocks wholly dropped from the log */
            size_t gone = first - x->base < x->count ? (size_t)(first - x->base) : x->count;
            memmove(x->spans, x->spans + gone, (x->count - gone) * sizeof *x->spans);
            x->count -= gone;
            x->base += gone;
            if (b < x->base)
                return NULL;
        }
        size_t need = (size_t)(b - x->base) + 1;
        if (need > x->cap) {
            size_t cap = x->cap ? 2 * x->cap : 16;
            while (cap < need)
                cap *= 2;
            struct block_span *grown = realloc(x->spans, cap * sizeof *grown);
            if (!grown)
                return NULL;
            x->spans = grown;
            x->cap = cap;
        }
        for (size_t i = x->count; i < need; i++)
            x->spans[i] = (struct block_span){INT64_MAX, INT64_MIN, false};
        x->count = need;
    }
    return &x->spans[b - x->base];
}

static void span_add(struct block_span *sp, int64_t ts)
{
    if (ts < sp->lo)
        sp->lo = ts;
    if (ts > sp->hi)
        sp->hi = ts;
}

static void index_note(struct ps_service *svc, uint64_t seq, int64_t ts)
{
    if (!svc->event_log_index)
        return;
    struct block_span *sp = span_at(svc, seq / READ_BLOCK, true);
    if (sp)
        span_add(sp, ts);
    else if (seq / READ_BLOCK >= svc->event_log_index->base)
        ps_event_log_release(svc);   /* out of memory: reads go without it */
}

/* An index whose blocks from the log's first row to its newest are all unknown; without
 * memory reads go without one. */
static void index_create(struct ps_service *svc)
{
    struct ps_event_log_index *x = calloc(1, sizeof *x);
    if (!x)
        return;
    x->base = svc->event_log_first / READ_BLOCK;
    svc->event_log_index = x;
    uint64_t first = svc->event_log_first, next = svc->event_log_next;
    if (next <= first)
        return;
    if (!span_at(svc, (next - 1) / READ_BLOCK, true)) {
        ps_event_log_release(svc);
        return;
    }
    for (size_t i = 0; i < x->count; i++)
        x->spans[i].unknown = true;
}

/* Block lo / READ_BLOCK, read from row lo to row hi (its rows that exist now), found seen: when
 * the read found every one of them, its span is known from then on. */
static void index_learn(struct ps_service *svc, uint64_t lo, uint64_t hi,
                        const struct block_seen *seen)
{
    struct block_span *sp = svc->event_log_index ? span_at(svc, lo / READ_BLOCK, false) : NULL;
    if (!sp || !sp->unknown || seen->rows != hi - lo)
        return;
    span_add(sp, seen->lo);   /* with what append() noted since the read */
    span_add(sp, seen->hi);
    sp->unknown = false;
}

/* Whether no row of block b can be within since..until. */
static bool block_outside(struct ps_service *svc, uint64_t b, const struct filter *f)
{
    if (!svc->event_log_index)
        return false;
    const struct block_span *sp = span_at(svc, b, false);
    return sp && !sp->unknown && (sp->lo > f->until || sp->hi < f->since);
}

/* PS_EINVAL naming the filter, its value and the rule */
static int bad(struct ps_error *err, const char *key, const json_t *v, const char *rule)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    int rc = ps_error_set(err, PS_EINVAL, "%s: %s, got %.80s", key, rule, text ? text : "?");
    free(text);
    return rc;
}

static bool strings(const json_t *v)
{
    if (json_is_string(v))
        return true;
    if (!json_is_array(v))
        return false;
    size_t i;
    json_t *t;
    json_array_foreach(v, i, t)
        if (!json_is_string(t))
            return false;
    return true;
}

static int parse_filter(const json_t *body, struct filter *f, struct ps_error *err)
{
    const json_t *v = json_object_get(body, "operation_id");
    if (v && !json_is_string(v))
        return bad(err, "operation_id", v, "must be a string");
    f->operation_id = json_string_value(v);
    v = json_object_get(body, "event_type");
    if (v && !strings(v))
        return bad(err, "event_type", v, "must be a string or a list of strings");
    f->event_type = v;
    v = json_object_get(body, "since");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
        return bad(err, "since", v, "must be a time in ms since the epoch (an integer >= 0)");
    f->since = v ? json_integer_value(v) : 0;
    v = json_object_get(body, "until");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
        return bad(err, "until", v, "must be a time in ms since the epoch (an integer >= 0)");
    f->until = v ? json_integer_value(v) : INT64_MAX;
    v = json_object_get(body, "limit");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
              json_integer_value(v) > READ_LIMIT))
        return bad(err, "limit", v, "must be an integer in [1, 10000]");
    f->limit = v ? (size_t)json_integer_value(v) : READ_LIMIT;
    v = json_object_get(body, "upper_row_index");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
        return bad(err, "upper_row_index", v, "must be a row index (an integer >= 0)");
    f->upper = v ? (uint64_t)json_integer_value(v) : UINT64_MAX;
    return 0;
}

/* The rows are numbered in the order they were written (first..next), so the newest matches
 * are found by reading blocks of rows backwards from the newest (or from f->upper), each block
 * in key order, until the limit is reached: a read costs about the rows it returns, and the
 * rows newer than `until` it steps over (their timestamps read off their text, unparsed), not
 * the whole log. *rows: the newest f->limit matches, oldest first; *first_row: the row index of
 * the oldest of them (-1 when none). */
static int newest_matches(struct ps_service *svc, struct filter *f, json_t **rows,
                          int64_t *first_row, struct ps_error *err)
{
    *first_row = -1;
    json_t *got = json_array();   /* the blocks' matches so far, oldest first */
    if (!got)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (!svc->event_log_index)
        index_create(svc);
    uint64_t hi = svc->event_log_next < f->upper ? svc->event_log_next : f->upper;
    uint64_t *last = NULL;   /* the row indexes of the matches of the last block with any */
    size_t last_cap = 0;
    int rc = 0;
    while (rc == 0 && hi > svc->event_log_first && json_array_size(got) < f->limit) {
        uint64_t lo = (hi - 1) / READ_BLOCK * READ_BLOCK;   /* hi - 1's block */
        if (lo < svc->event_log_first)
            lo = svc->event_log_first;
        if (block_outside(svc, lo / READ_BLOCK, f)) {
            hi = lo;
            continue;
        }
        char from[24], upper[24];
        seq_key(lo, from);
        seq_key(hi, upper);
        if (!(f->rows = json_array())) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            break;
        }
        struct block_seen seen = {0, INT64_MAX, INT64_MIN};
        f->seen = &seen;
        rc = ps_store_list_range(ps_job_archive_store(svc), "event", from, upper, take, f, err);
        if (rc == 0 && f->failed)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        /* a block read to its end (or to the newest row) learns its span; one that
         * upper_row_index cut did not see its newer rows */
        if (rc == 0 && (hi == svc->event_log_next || hi % READ_BLOCK == 0))
            index_learn(svc, lo, hi, &seen);
        if (rc == 0 && json_array_size(f->rows) > 0) {   /* its row indexes: the last ones */
            uint64_t *t = last;
            size_t c = last_cap;
            last = f->seqs;
            last_cap = f->seq_cap;
            f->seqs = t;
            f->seq_cap = c;
        }
        if (rc == 0 && json_array_extend(f->rows, got) != 0)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        if (rc == 0) {   /* the block's matches, then the newer ones */
            json_decref(got);
            got = f->rows;
        } else {
            json_decref(f->rows);
        }
        f->rows = NULL;
        hi = lo;
    }
    size_t n = json_array_size(got);
    /* the oldest match kept is in the last block with any (before it, fewer than the limit) */
    if (rc == 0 && n > 0)
        *first_row = (int64_t)last[n > f->limit ? n - f->limit : 0];
    free(last);
    if (rc != 0) {
        json_decref(got);
        return rc;
    }
    if (n <= f->limit) {
        *rows = got;
        return 0;
    }
    *rows = json_array();
    for (size_t i = n - f->limit; *rows && i < n; i++)
        json_array_append(*rows, json_array_get(got, i));
    json_decref(got);
    return *rows ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

int ps_event_log_get(struct ps_service *svc, const json_t *body, json_t **out,
                     int64_t *first_row, struct ps_error *err)
{
    *out = NULL;
    *first_row = -1;
    struct filter f = {0};
    int rc = parse_filter(body, &f, err);
    if (rc != 0)
        return rc;
    f.raw = !f.event_type && !f.operation_id;
    if (f.operation_id && asprintf(&f.needle, "\"%s\"", f.operation_id) < 0)
        f.needle = NULL;   /* without it every row is parsed */
    rc = newest_matches(svc, &f, out, first_row, err);
    free(f.needle);
    free(f.seqs);
    return rc;
}

int ps_event_log_parse(json_t *rows, struct ps_error *err)
{
    for (size_t i = 0; i < json_array_size(rows);) {
        json_t *row = json_array_get(rows, i);
        if (!json_is_string(row)) {
            i++;
            continue;
        }
        json_t *ev = json_loadb(json_string_value(row), json_string_length(row), 0, NULL);
        if (json_is_object(ev) && json_is_string(json_object_get(ev, "event_type"))) {
            if (json_array_set_new(rows, i++, ev) != 0)
                return ps_error_set(err, PS_ENOMEM, "out of memory");
        } else {   /* not a row (a damaged store): left out, as a read under the lock does */
            json_decref(ev);
            json_array_remove(rows, i);
        }
    }
    return 0;
}
