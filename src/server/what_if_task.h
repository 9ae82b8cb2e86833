/* what_if_task.h — what-if (docs/what-if.md) as an asynchronous task of the scheduler
 * (docs/api.md "What if"): start_what_if gathers the inputs (the event log's rows, the trees'
 * configs, the cluster's periods) and checks the change in the request, then runs the two
 * simulations on a thread of its own, never on an HTTP worker or the engine loop; get_what_if
 * reads its state, progress and answer; GET /what-if/<id>/<file> its report pages.
 *
 * Bounds: PS_WHAT_IF_RUNNING_MAX task runs at a time (another start is refused: 429), the
 * newest PS_WHAT_IF_TASKS_KEPT tasks are kept (in memory, their outputs under
 * <data_dir>/what-if/<id>; a restart forgets them). Permission: a task reads the whole event
 * log, every pool's and user's figures, so starting or reading one needs `read` on every pool
 * tree (an admin token always has it). */
#ifndef PS_SERVER_WHAT_IF_TASK_H
#define PS_SERVER_WHAT_IF_TASK_H

#include <jansson.h>

#include "core/error.h"

#define PS_WHAT_IF_RUNNING_MAX 1
#define PS_WHAT_IF_TASKS_KEPT 8

struct ps_service;
struct ps_auth_identity;
struct ps_what_if_tasks;

/* Tasks whose outputs go under dir (emptied: tasks do not outlive the process). */
int ps_what_if_tasks_new(const char *dir, struct ps_what_if_tasks **out, struct ps_error *err);
/* Stops a running task (at its next 1/50 of a run) and waits for it, then frees every task. */
void ps_what_if_tasks_free(struct ps_what_if_tasks *t);

/* start_what_if {since, until, set, remove}: *reply {"id"}. Takes svc->mu for its reads; call
 * without it. Errors: PS_EINVAL naming the parameter or the change, PS_EPERM, PS_ELIMIT when
 * PS_WHAT_IF_RUNNING_MAX tasks run (429), PS_ENOMEM, PS_EIO. */
int ps_what_if_start(struct ps_service *svc, const json_t *body,
                     const struct ps_auth_identity *who, json_t **reply, struct ps_error *err);

/* get_what_if {id}: *reply {"id", "state" (running, completed, failed), "progress" (0..100),
 * "run" (recorded, changed), "user", "start_time", "finish_time", "error" (failed), "result"
 * (completed: what-if.json), "summary" (the CLI's text), "report" (its page's path)}. Errors:
 * PS_EINVAL, PS_ENOENT, PS_EPERM. Call without svc->mu. */
int ps_what_if_get(struct ps_service *svc, const json_t *body, const struct ps_auth_identity *who,
                   json_t **reply, struct ps_error *err);

/* GET /what-if/<id>/report.html, .../recorded/report.html, .../changed/report.html */
int ps_what_if_register(struct ps_service *svc, struct ps_error *err);

#endif
