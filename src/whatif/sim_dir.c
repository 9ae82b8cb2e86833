/* sim_dir.c — a simulation run into a directory of outputs (sim_report.h): what `poolsched
 * simulate` writes, and what `what-if` writes for each of its two runs, in the CLI and in the
 * scheduler's what-if tasks alike. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "whatif/sim_report.h"
#include "sim/sim.h"

static FILE *open_output(const char *dir, const char *name, char **path)
{
    size_t size = strlen(dir) + strlen(name) + 2;
    *path = malloc(size);
    if (!*path)
        return NULL;
    snprintf(*path, size, "%s/%s", dir, name);
    return fopen(*path, "w");
}

static int close_output(FILE *f, const char *path, struct ps_error *err)
{
    if (!f)
        return 0;
    int failed = ferror(f);
    if (fclose(f) != 0 || failed)
        return ps_error_set(err, PS_EIO, "%s: cannot write: %s", path,
                            strerror(errno ? errno : EIO));
    return 0;
}

/* Runs sc in chunks of 1/50 of its duration (when it has one), calling progress and checking
 * cancel between. */
static int run_sim(struct ps_sim *sim, const struct ps_scenario *sc,
                   const struct ps_sim_dir_options *o, struct ps_error *err)
{
    if (o && (o->progress || o->cancel) && sc->duration_ms > 0) {
        for (int step = 1; step <= 50; step++) {
            if (o->cancel && atomic_load(o->cancel))
                return ps_error_set(err, PS_ESTATE, "cancelled");
            int rc = ps_sim_run_until(sim, sc->duration_ms * step / 50, err);
            if (rc != 0)
                return rc;
            if (step < 50 && o->progress)
                o->progress(o->progress_ctx, step * 2);
            if (ps_sim_finished(sim))
                break;
        }
    }
    int rc = ps_sim_run(sim, err);
    if (rc == 0 && o && o->progress)
        o->progress(o->progress_ctx, 100);
    return rc;
}

/* The run's events as they pass: the job_preempted times for report.html, each event handed on
 * to the caller's on_event. */
struct passing {
    const struct ps_sim_dir_options *o;
    int64_t *preempted_ms;
    size_t count, cap;
    bool failed;   /* out of memory */
};

static void pass_event(void *ctx, const struct ps_sim_event *ev)
{
    struct passing *p = ctx;
    if (strcmp(ev->type, "job_preempted") == 0 && !p->failed) {
        if (p->count == p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 1024;
            int64_t *grown = realloc(p->preempted_ms, cap * sizeof *grown);
            if (grown) {
                p->preempted_ms = grown;
                p->cap = cap;
            }
            p->failed = !grown;
        }
        if (!p->failed)
            p->preempted_ms[p->count++] = ev->time_ms;
    }
    if (p->o && p->o->on_event)
        p->o->on_event(p->o->on_event_ctx, ev);
}

/* events.jsonl (unless o->no_events) and pools.csv opened, the simulator made over them; bad
 * input leaves no outputs behind. */
static int start(const struct ps_scenario *sc, const char *shown, const char *dir,
                 const struct ps_sim_dir_options *o, struct passing *passing, FILE *files[2],
                 char *paths[2], struct ps_sim **sim, struct ps_error *err)
{
    bool events = !(o && o->no_events);
    files[0] = events ? open_output(dir, "events.jsonl", &paths[0]) : NULL;
    files[1] = open_output(dir, "pools.csv", &paths[1]);
    if ((events && !files[0]) || !files[1])
        return ps_error_set(err, PS_EIO, "%s: cannot create: %s",
                            events && !files[0] ? (paths[0] ? paths[0] : dir)
                                                : (paths[1] ? paths[1] : dir),
                            strerror(errno));
    struct ps_sim_options options = {.events = files[0], .pools = files[1],
                                     .pools_period_ms = o ? o->pools_period_ms : 0,
                                     .on_event = pass_event, .on_event_ctx = passing};
    if (o)
        options.event_tree = o->event_tree;
    int rc = ps_sim_new(sc, &options, sim, err);
    if (rc != 0) {
        ps_error_prefix(err, "%s", shown);
        for (int i = 0; i < 2; i++) {
            if (files[i])
                fclose(files[i]);
            files[i] = NULL;
            if (paths[i])
                remove(paths[i]);
        }
    }
    return rc;
}

static int finish(struct ps_sim *sim, const char *dir, FILE *files[4], char *paths[4],
                  struct ps_error *err)
{
    files[2] = open_output(dir, "operations.csv", &paths[2]);
    files[3] = open_output(dir, "summary.json", &paths[3]);
    if (!files[2] || !files[3])
        return ps_error_set(err, PS_EIO, "%s: cannot create: %s",
                            !files[2] ? (paths[2] ? paths[2] : dir) : (paths[3] ? paths[3] : dir),
                            strerror(errno));
    int rc = ps_sim_write_operations_csv(sim, files[2], err);
    if (rc == 0)
        rc = ps_sim_write_summary(sim, files[3], err);
    if (rc != 0)
        ps_error_prefix(err, "%s", dir);
    return rc;
}

int ps_sim_write_dir(const struct ps_scenario *sc, const char *shown, const char *dir,
                     const struct ps_sim_dir_options *o, struct ps_error *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return ps_error_set(err, PS_EIO, "%s: cannot create: %s", dir, strerror(errno));
    char *paths[4] = {NULL, NULL, NULL, NULL};
    FILE *files[4] = {NULL, NULL, NULL, NULL};
    struct ps_sim *sim = NULL;
    struct passing passing = {.o = o};
    int rc = start(sc, shown, dir, o, &passing, files, paths, &sim, err);
    if (rc == 0 && (rc = run_sim(sim, sc, o, err)) != 0) {
        ps_error_prefix(err, "%s", shown);
        rc = rc == PS_EINVAL ? PS_EIO : rc;   /* a run's failure is not the input's */
    }
    if (rc == 0)
        rc = finish(sim, dir, files, paths, err);
    for (int i = 0; i < 4; i++) {
        int c = close_output(files[i], paths[i] ? paths[i] : dir, rc == 0 ? err : NULL);
        rc = rc == 0 ? c : rc;
        free(paths[i]);
    }
    if (rc == 0 && passing.failed)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0)
        rc = ps_sim_write_report(dir, passing.preempted_ms, passing.count, err);
    free(passing.preempted_ms);
    if (rc == 0 && o && o->stats)
        ps_sim_get_stats(sim, o->stats);
    ps_sim_free(sim);
    return rc;
}
