/* what_if.c — a what-if's two runs and their comparison (what_if.h, docs/what-if.md):
 * io/event_replay.h makes the scenarios, sim_dir.c runs them, what_if_metrics.h and
 * what_if_report.h compare. */
#include "whatif/what_if.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/event_replay.h"
#include "io/scenario.h"
#include "sim/sim.h"
#include "platform/file.h"
#include "whatif/sim_report.h"
#include "whatif/what_if_metrics.h"
#include "whatif/what_if_report.h"

struct ps_what_if {
    int64_t since_ms, until_ms, fs_period_ms;
    int64_t requested_since_ms;             /* as asked; since_ms may start later (window) */
    struct ps_what_if_recorded *recorded;   /* what the fidelity takes from the record */
    json_t *changes;
    json_t *scenario[2];          /* recorded, changed */
    char *text[2];                /* their JSON */
    struct ps_scenario *sc[2];    /* parsed and checked */
};

static const char *const run_names[2] = {"recorded", "changed"};

static int apply_changes(json_t *scenario, const json_t *changes, struct ps_error *err)
{
    size_t i;
    json_t *ch;
    json_array_foreach(changes, i, ch) {
        json_t *v = json_array_get(ch, 1);
        int rc = ps_event_replay_apply(scenario, json_string_value(json_array_get(ch, 0)),
                                       json_is_null(v) ? NULL : v, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* scenario parsed and set up (without running) as the simulator would: a bad value of a
 * change is refused here, before anything runs or is written. */
static int check_scenario(const json_t *scenario, const char *name, char **text,
                          struct ps_scenario **sc, struct ps_error *err)
{
    *text = json_dumps(scenario, JSON_INDENT(1));
    if (!*text)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_scenario_parse(*text, strlen(*text), sc, err);
    struct ps_sim *sim = NULL;
    struct ps_sim_options none = {0};
    if (rc == 0)
        rc = ps_sim_new(*sc, &none, &sim, err);
    ps_sim_free(sim);
    if (rc != 0)
        ps_error_prefix(err, "%s", name);
    return rc;
}

/* What the measures read of a JSON scenario once both are checked: its frame (duration,
 * periods, node groups, events, pool trees, default tree) and its operations' ids
 * (what_if_metrics.c, what_if_report.c). The rest of each operation, its tasks and their
 * jobs' durations (a week's 700,000 numbers, the largest part of it), stays only in the text
 * written out and in the parsed scenario the simulator runs. In place: the fidelity's record
 * (ps_what_if_recorded_new) holds the recorded scenario. */
static void keep_measured_view(json_t *scenario)
{
    size_t i;
    json_t *op;
    json_array_foreach(json_object_get(scenario, "operations"), i, op) {
        json_t *id = json_incref(json_object_get(op, "id"));
        json_object_clear(op);
        if (id)
            json_object_set_new(op, "id", id);
    }
}

/* Where the record starts: its oldest row, or its first state rows when later (their
 * operations_info row; a log of a scheduler that logs none: its first pools_info row). A log
 * whose oldest rows were dropped beyond event_log_max_row_count starts with jobs of nodes and
 * operations it no longer describes, until the scheduler's next state rows (event_log.h); a
 * pools_info row of a change alone does not describe them. -1 when it has neither. */
static int64_t record_start(const struct ps_event_record *rec)
{
    if (!rec || rec->oldest_ms < 0)
        return -1;
    int64_t pools = -1;
    for (size_t i = 0; i < rec->other_count; i++) {
        const json_t *row = rec->others[i].json;
        const json_t *t = json_object_get(row, "timestamp");
        const char *type = json_string_value(json_object_get(row, "event_type"));
        if (!type || !json_is_integer(t))
            continue;
        int64_t at = json_integer_value(t);
        if (strcmp(type, "operations_info") == 0)
            return at > rec->oldest_ms ? at : rec->oldest_ms;
        if (pools < 0 && strcmp(type, "pools_info") == 0)
            pools = at;
    }
    return pools > rec->oldest_ms ? pools : rec->oldest_ms;
}

/* The window replayed: the one asked for, starting no earlier than the record. The log holds
 * nothing before it (a younger cluster, or rows dropped), so earlier time would replay as idle
 * (slow for a window asked of years; a cluster without its nodes' work, where rows were
 * dropped), and its samples would count in the fidelity. */
static int window(const struct ps_what_if_request *q, struct ps_what_if *w, struct ps_error *err)
{
    w->requested_since_ms = q->since_ms;
    w->since_ms = q->since_ms;
    w->until_ms = q->until_ms;
    int64_t start = record_start(q->record);
    if (start < 0 || w->since_ms >= start)
        return 0;
    if (w->until_ms <= start)
        return ps_error_set(err, PS_EINVAL, "until: the window ends at %lld ms since the epoch, "
                                            "not after the start of the event log's record "
                                            "(%lld): nothing was recorded in it",
                            (long long)w->until_ms, (long long)start);
    w->since_ms = start;
    return 0;
}

int ps_what_if_prepare(const struct ps_what_if_request *q, struct ps_what_if **out,
                       struct ps_error *err)
{
    struct ps_what_if *w = calloc(1, sizeof *w);
    *out = NULL;
    if (!w) {
        ps_event_record_free(q->record);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    int rc = window(q, w, err);
    w->fs_period_ms = q->fair_share_update_period_ms;
    w->changes = json_deep_copy(q->changes);
    struct ps_event_replay_options o = {.since_ms = w->since_ms, .until_ms = w->until_ms,
                                        .heartbeat_period_ms = q->heartbeat_period_ms,
                                        .fair_share_update_period_ms = w->fs_period_ms,
                                        .default_tree = q->default_tree,
                                        .tree_attributes = q->trees};
    if (rc == 0)
        rc = w->changes ? ps_event_replay_scenario(q->record, &o, &w->scenario[0], err)
                        : ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0)
        rc = ps_what_if_recorded_new(q->record, w->scenario[0], w->since_ms,
                                     json_string_value(json_object_get(w->scenario[0], "default_tree")),
                                     &w->recorded, err);
    ps_event_record_free(q->record);   /* the runs do not need it: the largest part of a week */
    if (rc == 0 && !(w->scenario[1] = json_deep_copy(w->scenario[0])))
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0)
        rc = apply_changes(w->scenario[1], w->changes, err);
    for (int k = 0; rc == 0 && k < 2; k++) {
        rc = check_scenario(w->scenario[k], k ? "the changed scenario" : "the recorded scenario",
                            &w->text[k], &w->sc[k], err);
        if (rc == 0)
            keep_measured_view(w->scenario[k]);
    }
    if (rc != 0) {
        ps_what_if_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void ps_what_if_free(struct ps_what_if *w)
{
    if (!w)
        return;
    ps_what_if_recorded_free(w->recorded);
    json_decref(w->changes);
    for (int k = 0; k < 2; k++) {
        json_decref(w->scenario[k]);
        free(w->text[k]);
        ps_scenario_free(w->sc[k]);
    }
    free(w);
}

/* The two runs go on two threads; their progress reaches the caller's callback one call at a
 * time. */
struct run_progress {
    const struct ps_what_if_control *c;
    pthread_mutex_t *mu;
    const char *run;
};

static void run_progress(void *ctx, int percent)
{
    const struct run_progress *p = ctx;
    if (!p->c->progress)
        return;
    pthread_mutex_lock(p->mu);
    p->c->progress(p->c->ctx, p->run, percent);
    pthread_mutex_unlock(p->mu);
}

/* Run k of w: its scenario written as dir/file, run into dir/<run>, then measured (the
 * recorded run: and its fidelity). */
struct run_job {
    const struct ps_what_if *w;
    int k;
    const char *dir, *tree;
    struct run_progress p;
    json_t *m, *fid;
    struct ps_error err;
    int rc;
};

static void *run(void *arg)
{
    static const char *const files[2] = {"scenario.json", "scenario-changed.json"};
    struct run_job *j = arg;
    char path[4096], out[4096];
    snprintf(path, sizeof path, "%s/%s", j->dir, files[j->k]);
    snprintf(out, sizeof out, "%s/%s", j->dir, run_names[j->k]);
    j->rc = ps_file_write(path, j->w->text[j->k], strlen(j->w->text[j->k]), &j->err);
    if (j->rc != 0)
        return NULL;
    const struct ps_scenario *sc = j->w->sc[j->k];
    int64_t sample = sc->duration_ms / 2000;   /* pools.csv rows: at most ~2000 per pool */
    struct ps_what_if_events *events = ps_what_if_events_new(j->tree, sc->duration_ms);
    if (!events) {
        j->rc = ps_error_set(&j->err, PS_ENOMEM, "out of memory");
        return NULL;
    }
    struct ps_sim_dir_options o = {.progress = run_progress, .progress_ctx = &j->p,
                                   .cancel = j->p.c->cancel, .no_events = j->p.c->no_events,
                                   .pools_period_ms = sample > sc->fair_share_update_period_ms
                                                          ? sample : 0,
                                   .on_event = ps_what_if_events_add, .on_event_ctx = events,
                                   .event_tree = j->tree};
    j->rc = ps_sim_write_dir(sc, path, out, &o, &j->err);
    if (j->rc == 0)
        j->rc = ps_what_if_run_metrics(events, out, j->w->scenario[j->k], j->w->fs_period_ms,
                                       &j->m, &j->err);
    ps_what_if_events_free(events);
    if (j->rc == 0 && j->k == 0)
        j->rc = ps_what_if_fidelity(j->w->recorded, j->m, out, &j->fid, &j->err);
    return NULL;
}

/* Both runs and their measures, the changed run on a thread of its own (the simulator keeps
 * no shared mutable state): m[k] and *fid, or the recorded run's error first when both fail. */
static int run_both(const struct ps_what_if *w, const char *dir, const char *tree,
                    const struct ps_what_if_control *c, json_t *m[2], json_t **fid,
                    struct ps_error *err)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    struct run_job j[2];
    for (int k = 0; k < 2; k++) {
        j[k] = (struct run_job){.w = w, .k = k, .dir = dir, .tree = tree,
                                .p = {c, &mu, run_names[k]}};
        ps_error_init(&j[k].err);
    }
    pthread_t thread;
    bool threaded = pthread_create(&thread, NULL, run, &j[1]) == 0;
    run(&j[0]);
    if (threaded)
        pthread_join(thread, NULL);
    else
        run(&j[1]);
    pthread_mutex_destroy(&mu);
    m[0] = j[0].m;
    m[1] = j[1].m;
    *fid = j[0].fid;
    for (int k = 0; k < 2; k++)
        if (j[k].rc != 0) {
            *err = j[k].err;
            return j[k].rc;
        }
    return 0;
}

int ps_what_if_execute(const struct ps_what_if *w, const char *dir,
                       const struct ps_what_if_control *c, char **json_text, char **summary,
                       struct ps_error *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return ps_error_set(err, PS_EIO, "%s: cannot create: %s", dir, strerror(errno));
    struct ps_what_if_control none = {0};
    const char *tree = json_string_value(json_object_get(w->scenario[0], "default_tree"));
    json_t *m[2] = {NULL, NULL}, *fid = NULL;
    int rc = run_both(w, dir, tree, c ? c : &none, m, &fid, err);
    if (rc == 0) {
        struct ps_what_if_result res = {.since_ms = w->since_ms, .until_ms = w->until_ms,
                                        .requested_since_ms = w->requested_since_ms,
                                        .tree = tree, .changes = w->changes, .recorded = m[0],
                                        .changed = m[1], .fidelity = fid,
                                        .scenario = w->scenario[0]};
        rc = ps_what_if_write(&res, dir, json_text, summary, err);
    }
    json_decref(m[0]);
    json_decref(m[1]);
    json_decref(fid);
    return rc;
}

int ps_what_if_parse_when(const char *text, const char *what, int64_t now_ms, int64_t *out,
                          struct ps_error *err)
{
    char *end = NULL;
    errno = 0;
    long long n = strtoll(text, &end, 10);
    static const struct { const char *unit; long long ms; } units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    if (end != text && !errno && n >= 0 && isdigit((unsigned char)text[0])) {
        if (!*end) {
            *out = n;
            return 0;
        }
        for (size_t i = 0; i < sizeof units / sizeof *units; i++)
            if (strcmp(end, units[i].unit) == 0 && n <= INT64_MAX / units[i].ms) {
                /* ago, but not before the epoch */
                *out = n * units[i].ms < now_ms ? now_ms - n * units[i].ms : 0;
                return 0;
            }
    }
    return ps_error_set(err, PS_EINVAL, "%s: \"%s\" is not a time (7d, 12h, 30m, 90s, 500ms, or "
                                        "ms since the epoch)", what, text);
}

/* The rows of page added to rec (a row's text that is not an object with an event_type, as a
 * damaged store may hold, is left out as the event log's reads leave it out). */
static int page_rows(const json_t *page, struct ps_event_record *rec, struct ps_error *err)
{
    for (size_t i = 0; i < json_array_size(page); i++) {
        json_t *row = json_array_get(page, i);
        bool added = true;
        int rc = json_is_string(row)
                     ? ps_event_record_add_row_text(rec, json_string_value(row),
                                                    json_string_length(row), &added, err)
                     : ps_event_record_add(rec, row, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The pages' rows, each page kept compactly as it arrives (its JSON values freed), newest
 * page first: a week's log of millions of rows is never held as JSON values. */
struct page_records {
    struct ps_event_record **recs;
    size_t count, cap;
};

static void page_records_free(struct page_records *p)
{
    for (size_t k = 0; k < p->count; k++)
        ps_event_record_free(p->recs[k]);
    free(p->recs);
}

/* The rows of page (page_rows) into a new record at the end of p (ps_event_take_fn). */
static int page_records_add(void *ctx, json_t *page, struct ps_error *err)
{
    struct page_records *p = ctx;
    if (p->count == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        struct ps_event_record **recs = realloc(p->recs, cap * sizeof *recs);
        if (!recs)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        p->recs = recs;
        p->cap = cap;
    }
    struct ps_event_record *rec = ps_event_record_new();
    if (!rec)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    p->recs[p->count++] = rec;
    return page_rows(page, rec, err);
}

int ps_what_if_collect_rows(ps_event_page_fn page, void *ctx, int64_t until_ms,
                            struct ps_event_record **out, struct ps_error *err)
{
    struct page_records pages = {0};
    int rc = ps_event_page_back(page, ctx, until_ms, page_records_add, &pages, err);
    *out = rc == 0 ? ps_event_record_new() : NULL;
    if (rc == 0 && !*out)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    for (size_t k = pages.count; rc == 0 && k-- > 0;) {   /* oldest first */
        rc = ps_event_record_append(*out, pages.recs[k], err);
        ps_event_record_free(pages.recs[k]);
        pages.recs[k] = NULL;
    }
    page_records_free(&pages);
    if (rc != 0) {
        ps_event_record_free(*out);
        *out = NULL;
    }
    return rc;
}
