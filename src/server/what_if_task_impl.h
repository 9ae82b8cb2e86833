/* what_if_task_impl.h — the what-if tasks' table, shared by what_if_task.c (the tasks, their
 * thread, get_what_if) and what_if_start.c (start_what_if's inputs). */
#ifndef PS_SERVER_WHAT_IF_TASK_IMPL_H
#define PS_SERVER_WHAT_IF_TASK_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/auth.h"
#include "server/what_if_task.h"
#include "whatif/what_if.h"

#define PS_WHAT_IF_ID_LEN 32

enum ps_what_if_state { PS_WHAT_IF_RUNNING, PS_WHAT_IF_COMPLETED, PS_WHAT_IF_FAILED };

struct ps_what_if_task {
    struct ps_what_if_tasks *owner;
    char id[PS_WHAT_IF_ID_LEN + 1];
    char user[PS_AUTH_MAX_USER_LEN + 1];
    char dir[4200];
    struct ps_what_if *w;          /* the prepared runs */
    pthread_t thread;              /* joined when the task is dropped */
    /* under owner->mu: */
    enum ps_what_if_state state;
    int percent;                   /* the mean of the two runs' */
    int run_percent[2];            /* recorded, changed */
    char run[16];                  /* the run reported last */
    char error[PS_ERROR_MSG_MAX];
    char *json, *summary;          /* completed: what-if.json, the text summary */
    int64_t start_ms, finish_ms;
};

struct ps_what_if_tasks {
    pthread_mutex_t mu;            /* the table and the tasks' states; never held with svc->mu */
    char root[4096];
    struct ps_what_if_task *tasks[PS_WHAT_IF_TASKS_KEPT];   /* oldest first */
    size_t n;
    atomic_bool cancel;            /* set at shutdown: a running task stops */
};

/* Adds a task running w (taken, freed on failure) for user; id receives its id. Errors:
 * PS_ELIMIT when one runs, PS_EIO, PS_ENOMEM. */
int ps_what_if_tasks_add(struct ps_what_if_tasks *t, struct ps_what_if *w, const char *user,
                         char id[PS_WHAT_IF_ID_LEN + 1], struct ps_error *err);

/* PS_ELIMIT when PS_WHAT_IF_RUNNING_MAX tasks run (the message names one), else 0. */
int ps_what_if_tasks_busy(struct ps_what_if_tasks *t, struct ps_error *err);

/* Whether who may start or read a what-if: `read` on every pool tree. Takes svc->mu. */
int ps_what_if_permitted(struct ps_service *svc, const struct ps_auth_identity *who,
                         const char *command, struct ps_error *err);

#endif
