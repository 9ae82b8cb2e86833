/* store_mirror.c — the leader's copy of its PostgreSQL store in memory (store_mirror.h). */
#include "server/store_mirror.h"

#include <stdlib.h>
#include <string.h>

#include "server/journal.h"
#include "server/persist.h"
#include "server/service_state.h"
#include "server/store.h"
#include "server/svc_log.h"

/* A fresh mirror: an in-memory store with every object of svc->store. Under store_mu. */
static int fill(struct ps_service *svc, struct ps_store **out, struct ps_error *err)
{
    struct ps_store *m = NULL;
    int rc = ps_store_open_memory(&m, err);
    if (rc == 0 && (rc = ps_store_copy_objects(svc->store, m, err)) != 0)
        ps_error_prefix(err, "cannot copy the store into memory");
    if (rc != 0) {
        ps_store_close(m);
        return rc;
    }
    *out = m;
    return 0;
}

int ps_store_mirror_open(struct ps_service *svc, struct ps_error *err)
{
    if (strcmp(ps_store_backend(svc->store), "postgresql") != 0)
        return 0;
    pthread_mutex_lock(&svc->store_mu);
    int rc = fill(svc, &svc->mirror, err);
    pthread_mutex_unlock(&svc->store_mu);
    return rc;
}

struct ps_store *ps_store_mirror_source(struct ps_service *svc)
{
    return svc->store_down && svc->mirror ? svc->mirror : svc->store;
}

static void set_down(struct ps_service *svc, bool down)
{
    uint64_t last = down ? 0 : ps_journal_last(svc->journal);
    pthread_mutex_lock(&svc->store_mu);
    if (svc->store_down && !down)   /* every change queued so far rests on the mirror's state */
        svc->store_up_from = last;
    svc->store_down = down && svc->mirror;
    pthread_mutex_unlock(&svc->store_mu);
}

int ps_store_mirror_roll_back(struct ps_service *svc, bool unreachable, struct ps_error *err)
{
    if (!svc->mirror)
        return ps_svc_state_reload(svc, err);
    if (!unreachable && !svc->store_down) {
        int rc = ps_svc_state_reload(svc, err);
        if (rc != PS_EUNAVAIL)
            return rc;
        ps_error_init(err);
    }
    if (!svc->store_down)
        ps_svc_log(svc, "error", "store_down", "store=%s action=serving_reads_from_memory",
                   ps_store_path(svc->store));
    set_down(svc, true);
    return ps_svc_state_reload(svc, err);
}

/* Does the store answer? Asked with store_mu only, never with the state lock held. */
static bool store_answers(struct ps_service *svc)
{
    struct ps_error e;
    ps_error_init(&e);
    char *v = NULL;
    pthread_mutex_lock(&svc->store_mu);
    int rc = ps_store_get(svc->store, "meta", "default_tree", &v, &e);
    pthread_mutex_unlock(&svc->store_mu);
    free(v);
    return rc == 0 || rc == PS_ENOENT;
}

void ps_store_mirror_recover(struct ps_service *svc)
{
    if (!svc->store_down)
        return;
    pthread_mutex_unlock(&svc->mu);
    bool back = store_answers(svc);
    pthread_mutex_lock(&svc->mu);
    if (!back || !svc->store_down)
        return;
    struct ps_error err;
    ps_error_init(&err);
    set_down(svc, false);
    int rc = ps_svc_state_reload(svc, &err);
    struct ps_store *fresh = NULL;
    if (rc == 0) {
        pthread_mutex_lock(&svc->store_mu);
        rc = fill(svc, &fresh, &err);
        if (rc == 0) {
            ps_store_close(svc->mirror);
            svc->mirror = fresh;
        }
        pthread_mutex_unlock(&svc->store_mu);
    }
    if (rc != 0) {   /* gone again: back to the mirror's state */
        ps_svc_log(svc, "error", "store_recovery_failed", "error=\"%s\"", err.msg);
        set_down(svc, true);
        ps_error_init(&err);
        ps_svc_state_reload(svc, &err);
        return;
    }
    ps_svc_log(svc, "info", "store_back", "store=%s", ps_store_path(svc->store));
}

int ps_store_mirror_writable(struct ps_service *svc, struct ps_error *err)
{
    if (!svc->store_down)
        return 0;
    return ps_error_set(err, PS_EUNAVAIL,
                        "storage unavailable: the scheduler's store is unreachable; reads are "
                        "answered from memory, writes are refused until it is back; retry later");
}

void ps_store_mirror_close(struct ps_service *svc)
{
    ps_store_close(svc->mirror);
    svc->mirror = NULL;
}
