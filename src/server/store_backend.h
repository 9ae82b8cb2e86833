/* store_backend.h — what a store backend provides (store.c dispatches; store_sqlite.c and
 * store_pg.c implement). Not for callers of the store: they use store.h. */
#ifndef PS_SERVER_STORE_BACKEND_H
#define PS_SERVER_STORE_BACKEND_H

#include "server/store.h"

struct ps_store_ops {
    const char *name;   /* "sqlite", "postgresql" */
    void (*close)(struct ps_store *s);
    int (*begin)(struct ps_store *s, struct ps_error *err);
    int (*commit)(struct ps_store *s, struct ps_error *err);
    int (*rollback)(struct ps_store *s, struct ps_error *err);
    int (*integrity_check)(struct ps_store *s, struct ps_error *err);
    int (*put)(struct ps_store *s, const char *kind, const char *key, const char *value,
               struct ps_error *err);
    int (*get)(struct ps_store *s, const char *kind, const char *key, char **value,
               struct ps_error *err);
    int (*del)(struct ps_store *s, const char *kind, const char *key, struct ps_error *err);
    /* prefix is never NULL; upper is the exclusive bound of keys with that prefix, or NULL */
    int (*list)(struct ps_store *s, const char *kind, const char *prefix, const char *upper,
                ps_store_list_fn *fn, void *ctx, struct ps_error *err);
    /* every object, ordered by kind and key; fn's kind/key/value are borrowed */
    int (*list_all)(struct ps_store *s,
                    int (*fn)(const char *kind, const char *key, const char *value, void *ctx),
                    void *ctx, struct ps_error *err);
    int (*token_put)(struct ps_store *s, const char *hash, const char *user, const char *role,
                     struct ps_error *err);
    int (*token_delete)(struct ps_store *s, const char *hash, struct ps_error *err);
    int (*token_get)(struct ps_store *s, const char *hash, char *hash_out, size_t hash_cap,
                     char *user_out, size_t user_cap, char *role_out, size_t role_cap,
                     struct ps_error *err);
    int (*jobs_of_operation)(struct ps_store *s, const char *operation_id,
                             enum ps_store_job_order order, ps_store_list_fn *fn, void *ctx,
                             struct ps_error *err);
    /* leader election (NULL: not supported by this backend) */
    int (*leader_acquire)(struct ps_store *s, const char *holder, const char *address,
                          int lease_ms, int64_t *epoch, struct ps_error *err);
    int (*leader_renew)(struct ps_store *s, int64_t epoch, int lease_ms, struct ps_error *err);
    int (*leader_get)(struct ps_store *s, struct ps_store_leader *out, struct ps_error *err);
    void (*name_epoch)(struct ps_store *s, int64_t epoch);   /* ps_store_fence; may be NULL */
};

/* The common head of every backend's store (each embeds it first). */
struct ps_store {
    const struct ps_store_ops *ops;
    char *path;           /* for messages (store.h ps_store_path) */
    int schema_version;
    bool in_tx;
    int64_t fence_epoch;  /* 0: writes are not fenced (ps_store_fence) */
    bool deposed;         /* a fenced write found a newer epoch */
};

int ps_store_sqlite_open(const struct ps_store_config *cfg, struct ps_store **out,
                         struct ps_error *err);
int ps_store_pg_open(const struct ps_store_config *cfg, struct ps_store **out,
                     struct ps_error *err);
/* Tests only: weakens a PostgreSQL store's fence ("key_share": FOR KEY SHARE, which does not
 * conflict with the takeover; "none": no check), to show that the fault tests catch it. */
int ps_store_pg_weaken_fence(struct ps_store *s, const char *mode);

#endif
