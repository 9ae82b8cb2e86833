/* what_if_task.c — the scheduler's what-if tasks (what_if_task.h): the table of tasks, the
 * thread that runs one, get_what_if and the report pages. what_if_start.c gathers a task's
 * inputs. */
#define _XOPEN_SOURCE 700
#include "server/what_if_task.h"

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "platform/file.h"
#include "platform/random.h"
#include "server/service_state.h"
#include "server/svc_log.h"
#include "server/what_if_task_impl.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int ps_what_if_tasks_new(const char *dir, struct ps_what_if_tasks **out, struct ps_error *err)
{
    struct ps_what_if_tasks *t = calloc(1, sizeof *t);
    if (!t)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    snprintf(t->root, sizeof t->root, "%s", dir);
    atomic_init(&t->cancel, false);
    remove_tree(t->root);
    pthread_mutex_init(&t->mu, NULL);
    *out = t;
    return 0;
}

/* Frees k once its thread has ended (started: joined first). */
static void task_free(struct ps_what_if_task *k, bool started)
{
    if (!k)
        return;
    if (started)
        pthread_join(k->thread, NULL);
    ps_what_if_free(k->w);
    free(k->json);
    free(k->summary);
    free(k);
}

void ps_what_if_tasks_free(struct ps_what_if_tasks *t)
{
    if (!t)
        return;
    atomic_store(&t->cancel, true);
    for (size_t i = 0; i < t->n; i++)
        task_free(t->tasks[i], true);
    remove_tree(t->root);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

static void progress(void *ctx, const char *run, int percent)
{
    struct ps_what_if_task *k = ctx;
    pthread_mutex_lock(&k->owner->mu);
    snprintf(k->run, sizeof k->run, "%s", run);
    k->run_percent[strcmp(run, "changed") == 0] = percent;
    k->percent = (k->run_percent[0] + k->run_percent[1]) / 2;
    pthread_mutex_unlock(&k->owner->mu);
}

static void *run_task(void *arg)
{
    struct ps_what_if_task *k = arg;
    struct ps_error err;
    ps_error_init(&err);
    char *json = NULL, *summary = NULL;
    /* no events.jsonl: a week's run writes ~0.8 GB of it into the scheduler's data dir, and
     * nothing a task serves reads it */
    struct ps_what_if_control control = {.progress = progress, .ctx = k,
                                         .cancel = &k->owner->cancel, .no_events = true};
    int rc = mkdir(k->owner->root, 0700) != 0 && errno != EEXIST
                 ? ps_error_set(&err, PS_EIO, "%s: cannot create: %s", k->owner->root,
                                strerror(errno))
                 : ps_what_if_execute(k->w, k->dir, &control, &json, &summary, &err);
    pthread_mutex_lock(&k->owner->mu);
    k->state = rc == 0 ? PS_WHAT_IF_COMPLETED : PS_WHAT_IF_FAILED;
    k->json = json;
    k->summary = summary;
    k->percent = rc == 0 ? 100 : k->percent;
    snprintf(k->error, sizeof k->error, "%s", rc == 0 ? "" : err.msg);
    k->finish_ms = ps_svc_now_ms();
    pthread_mutex_unlock(&k->owner->mu);
    return NULL;
}

/* Under t->mu: PS_ELIMIT when PS_WHAT_IF_RUNNING_MAX tasks run. */
static int busy(const struct ps_what_if_tasks *t, struct ps_error *err)
{
    int n = 0;
    const char *id = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->tasks[i]->state == PS_WHAT_IF_RUNNING) {
            n++;
            id = t->tasks[i]->id;
        }
    if (n < PS_WHAT_IF_RUNNING_MAX)
        return 0;
    return ps_error_set(err, PS_ELIMIT, "start_what_if: busy: what-if %s is running (at most %d "
                                        "at a time); retry when it is done", id,
                        PS_WHAT_IF_RUNNING_MAX);
}

int ps_what_if_tasks_busy(struct ps_what_if_tasks *t, struct ps_error *err)
{
    pthread_mutex_lock(&t->mu);
    int rc = busy(t, err);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Under t->mu: takes the oldest task that has ended out of the table (there is one: fewer than
 * PS_WHAT_IF_TASKS_KEPT run). */
static struct ps_what_if_task *drop_oldest_ended(struct ps_what_if_tasks *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->tasks[i]->state != PS_WHAT_IF_RUNNING) {
            struct ps_what_if_task *k = t->tasks[i];
            memmove(t->tasks + i, t->tasks + i + 1, (--t->n - i) * sizeof *t->tasks);
            return k;
        }
    return NULL;
}

int ps_what_if_tasks_add(struct ps_what_if_tasks *t, struct ps_what_if *w, const char *user,
                         char id[PS_WHAT_IF_ID_LEN + 1], struct ps_error *err)
{
    unsigned char raw[PS_WHAT_IF_ID_LEN / 2];
    int rc = ps_random_bytes(raw, sizeof raw, err);
    struct ps_what_if_task *k = rc == 0 ? calloc(1, sizeof *k) : NULL;
    if (rc == 0 && !k)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc != 0) {
        ps_what_if_free(w);
        return rc;
    }
    _Static_assert(PS_WHAT_IF_RUNNING_MAX < PS_WHAT_IF_TASKS_KEPT, "an ended task to drop");
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(k->id + 2 * i, 3, "%02x", raw[i]);
    snprintf(k->user, sizeof k->user, "%s", user);
    snprintf(k->dir, sizeof k->dir, "%s/%s", t->root, k->id);
    k->owner = t;
    k->w = w;
    k->state = PS_WHAT_IF_RUNNING;
    k->start_ms = ps_svc_now_ms();
    pthread_mutex_lock(&t->mu);
    struct ps_what_if_task *dropped = NULL;
    if ((rc = busy(t, err)) == 0 && t->n == PS_WHAT_IF_TASKS_KEPT)
        dropped = drop_oldest_ended(t);
    if (rc == 0 && pthread_create(&k->thread, NULL, run_task, k) != 0)
        rc = ps_error_set(err, PS_EIO, "start_what_if: cannot start a thread");
    if (rc == 0) {
        t->tasks[t->n++] = k;
        memcpy(id, k->id, PS_WHAT_IF_ID_LEN + 1);
    }
    pthread_mutex_unlock(&t->mu);
    if (dropped)   /* ended: joined at once, outputs and all */
        remove_tree(dropped->dir);
    task_free(dropped, true);
    if (rc != 0)
        task_free(k, false);
    return rc;
}

static struct ps_what_if_task *find(struct ps_what_if_tasks *t, const char *id)
{
    for (size_t i = 0; id && i < t->n; i++)
        if (strcmp(t->tasks[i]->id, id) == 0)
            return t->tasks[i];
    return NULL;
}

static const char *const state_names[] = {"running", "completed", "failed"};

static json_t *describe(const struct ps_what_if_task *k)
{
    json_t *r = json_pack("{s:s, s:s, s:i, s:s, s:s, s:I}", "id", k->id, "state",
                          state_names[k->state], "progress", k->percent, "run",
                          k->run[0] ? k->run : "recorded", "user", k->user, "start_time",
                          (json_int_t)k->start_ms);
    char report[96];
    snprintf(report, sizeof report, "/what-if/%s/report.html", k->id);
    if (r && k->state != PS_WHAT_IF_RUNNING)
        json_object_set_new(r, "finish_time", json_integer(k->finish_ms));
    if (r && k->state == PS_WHAT_IF_FAILED)
        json_object_set_new(r, "error", json_string(k->error));
    if (r && k->state == PS_WHAT_IF_COMPLETED) {
        json_object_set_new(r, "result", json_loads(k->json, 0, NULL));
        json_object_set_new(r, "summary", json_string(k->summary));
        json_object_set_new(r, "report", json_string(report));
    }
    return r;
}

int ps_what_if_get(struct ps_service *svc, const json_t *body, const struct ps_auth_identity *who,
                   json_t **reply, struct ps_error *err)
{
    const json_t *id = json_object_get(body, "id");
    if (!json_is_string(id))
        return ps_error_set(err, PS_EINVAL, "get_what_if: id: %s", id ? "must be a string"
                                                                      : "missing parameter");
    int rc = ps_what_if_permitted(svc, who, "get_what_if", err);
    if (rc != 0)
        return rc;
    struct ps_what_if_tasks *t = svc->what_if;
    pthread_mutex_lock(&t->mu);
    const struct ps_what_if_task *k = find(t, json_string_value(id));
    *reply = k ? describe(k) : NULL;
    pthread_mutex_unlock(&t->mu);
    if (!k)
        return ps_error_set(err, PS_ENOENT, "get_what_if: id: no what-if \"%s\" (the newest %d "
                                            "are kept, until a restart)",
                            json_string_value(id), PS_WHAT_IF_TASKS_KEPT);
    return *reply ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

/* GET /what-if/<id>/<page>: the id is the capability (32 random hex digits, given only to
 * those allowed to start or read the task), so that the page opens from a link. */
static void report_handler(const struct ps_http_request *req, struct ps_http_response *resp,
                           void *ctx)
{
    struct ps_service *svc = ctx;
    static const char *const pages[] = {"report.html", "recorded/report.html",
                                        "changed/report.html"};
    const char *rest = req->path + strlen("/what-if/");
    const char *slash = strchr(rest, '/');
    char path[4400] = "";
    pthread_mutex_lock(&svc->what_if->mu);
    for (size_t i = 0; slash && (size_t)(slash - rest) == PS_WHAT_IF_ID_LEN && i < 3; i++) {
        char id[PS_WHAT_IF_ID_LEN + 1];
        memcpy(id, rest, PS_WHAT_IF_ID_LEN);
        id[PS_WHAT_IF_ID_LEN] = 0;
        const struct ps_what_if_task *k = find(svc->what_if, id);
        if (k && k->state == PS_WHAT_IF_COMPLETED && strcmp(slash + 1, pages[i]) == 0)
            snprintf(path, sizeof path, "%s/%s", k->dir, pages[i]);
    }
    pthread_mutex_unlock(&svc->what_if->mu);
    char *text = NULL;
    size_t len = 0;
    struct ps_error err;
    ps_error_init(&err);
    if (!path[0] || ps_file_read(path, &text, &len, &err) != 0) {
        ps_http_reply_error(resp, 404, PS_ENOENT, "no such what-if report: %s", req->path);
        return;
    }
    ps_http_response_take(resp, 200, "text/html; charset=utf-8", text, len);
}

int ps_what_if_register(struct ps_service *svc, struct ps_error *err)
{
    return ps_http_server_route(svc->http, "GET", "/what-if", PS_HTTP_PREFIX, report_handler, svc,
                                err);
}
