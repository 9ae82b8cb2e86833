/* store.c — the store's one interface (store.h): checks its arguments once, then hands each call
 * to the backend (store_sqlite.c, store_pg.c). */
#include "server/store_backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "platform/private_file.h"

bool ps_store_url_is_postgres(const char *url)
{
    return url && (strncasecmp(url, "postgresql://", 13) == 0 ||
                   strncasecmp(url, "postgres://", 11) == 0);
}

int ps_store_open(const char *data_dir, struct ps_store **out, struct ps_error *err)
{
    struct ps_store_config cfg = {.data_dir = data_dir};
    return ps_store_open_config(&cfg, out, err);
}

int ps_store_open_url(const char *url, const char *data_dir, struct ps_store **out,
                      struct ps_error *err)
{
    struct ps_store_config cfg = {.data_dir = data_dir, .url = url};
    return ps_store_open_config(&cfg, out, err);
}

int ps_store_open_memory(struct ps_store **out, struct ps_error *err)
{
    struct ps_store_config cfg = {.memory = true};
    *out = NULL;
    return ps_store_sqlite_open(&cfg, out, err);
}

int ps_store_open_config(const struct ps_store_config *cfg, struct ps_store **out,
                         struct ps_error *err)
{
    *out = NULL;
    bool pg = cfg->url && *cfg->url;
    if (pg && !ps_store_url_is_postgres(cfg->url))
        return ps_error_set(err, PS_EINVAL,
                            "store '%.200s': expected a postgresql://USER@HOST:PORT/DB URI "
                            "(or no store for SQLite in the data dir)", cfg->url);
    /* the data dir holds the SQLite file, and for either backend the instance's secrets */
    if (!pg && (!cfg->data_dir || !*cfg->data_dir))
        return ps_error_set(err, PS_EINVAL, "the store needs a data dir");
    if (cfg->data_dir && *cfg->data_dir) {
        int rc = ps_private_dir_ensure(cfg->data_dir, "data dir", err);
        if (rc)
            return rc;
    }
    return pg ? ps_store_pg_open(cfg, out, err) : ps_store_sqlite_open(cfg, out, err);
}

void ps_store_close(struct ps_store *s)
{
    if (s)
        s->ops->close(s);
}

const char *ps_store_path(const struct ps_store *s)
{
    return s->path;
}

const char *ps_store_backend(const struct ps_store *s)
{
    return s->ops->name;
}

int ps_store_schema_version(const struct ps_store *s)
{
    return s->schema_version;
}

bool ps_store_in_transaction(const struct ps_store *s)
{
    return s->in_tx;
}

int ps_store_begin(struct ps_store *s, struct ps_error *err)
{
    if (s->in_tx)
        return ps_error_set(err, PS_ESTATE, "store %s: a transaction is open already", s->path);
    return s->ops->begin(s, err);
}

int ps_store_commit(struct ps_store *s, struct ps_error *err)
{
    if (!s->in_tx)
        return ps_error_set(err, PS_ESTATE, "store %s: commit without a transaction", s->path);
    return s->ops->commit(s, err);
}

int ps_store_rollback(struct ps_store *s, struct ps_error *err)
{
    return s->ops->rollback(s, err);
}

int ps_store_integrity_check(struct ps_store *s, struct ps_error *err)
{
    return s->ops->integrity_check(s, err);
}

/* ---- objects ------------------------------------------------------------------------------- */

/* A write outside a transaction of a fenced store runs in one of its own, so that the fence
 * (checked at begin) covers it. */
#define FENCED_WRITE(s, err, call)                                                              \
    do {                                                                                        \
        if ((s)->fence_epoch == 0 || (s)->in_tx)                                                \
            return (call);                                                                      \
        int rc_ = ps_store_begin((s), (err));                                                   \
        if (rc_ == 0)                                                                           \
            rc_ = (call);                                                                       \
        if (rc_ == 0)                                                                           \
            rc_ = ps_store_commit((s), (err));                                                  \
        if (rc_ != 0)                                                                           \
            ps_store_rollback((s), NULL);                                                       \
        return rc_;                                                                             \
    } while (0)

static int check_kind_key(const struct ps_store *s, const char *kind, const char *key,
                          struct ps_error *err)
{
    if (!kind || !*kind || !key || !*key)
        return ps_error_set(err, PS_EINVAL, "store %s: object kind and key must not be empty",
                            s->path);
    return 0;
}

int ps_store_put(struct ps_store *s, const char *kind, const char *key, const char *value,
                 struct ps_error *err)
{
    int rc = check_kind_key(s, kind, key, err);
    if (rc)
        return rc;
    if (!value)
        return ps_error_set(err, PS_EINVAL, "object %s/%s: no value", kind, key);
    FENCED_WRITE(s, err, s->ops->put(s, kind, key, value, err));
}

int ps_store_get(struct ps_store *s, const char *kind, const char *key, char **value,
                 struct ps_error *err)
{
    *value = NULL;
    int rc = check_kind_key(s, kind, key, err);
    return rc ? rc : s->ops->get(s, kind, key, value, err);
}

int ps_store_delete(struct ps_store *s, const char *kind, const char *key, struct ps_error *err)
{
    int rc = check_kind_key(s, kind, key, err);
    if (rc)
        return rc;
    FENCED_WRITE(s, err, s->ops->del(s, kind, key, err));
}

struct copy_ctx {
    struct ps_store *dst;
    struct ps_error *err;
};

static int copy_one(const char *kind, const char *key, const char *value, void *ctx)
{
    struct copy_ctx *c = ctx;
    return c->dst->ops->put(c->dst, kind, key, value, c->err);
}

int ps_store_copy_objects(struct ps_store *src, struct ps_store *dst, struct ps_error *err)
{
    struct copy_ctx c = {dst, err};
    int rc = ps_store_begin(dst, err);
    if (rc == 0)
        rc = src->ops->list_all(src, copy_one, &c, err);
    if (rc == 0)
        rc = ps_store_commit(dst, err);
    if (rc != 0)
        ps_store_rollback(dst, NULL);
    return rc;
}

int ps_store_list_range(struct ps_store *s, const char *kind, const char *from,
                        const char *upper, ps_store_list_fn *fn, void *ctx,
                        struct ps_error *err)
{
    if (!kind || !*kind)
        return ps_error_set(err, PS_EINVAL, "store %s: object kind must not be empty", s->path);
    return s->ops->list(s, kind, from ? from : "", upper, fn, ctx, err);
}

int ps_store_list(struct ps_store *s, const char *kind, const char *prefix,
                  ps_store_list_fn *fn, void *ctx, struct ps_error *err)
{
    if (!kind || !*kind)
        return ps_error_set(err, PS_EINVAL, "store %s: object kind must not be empty", s->path);
    if (!prefix)
        prefix = "";
    /* key >= prefix AND key < upper, where upper is the prefix with its last byte below 0xFF
     * incremented (trailing 0xFF bytes dropped): an index range scan, and exact under a
     * bytewise collation. No upper bound when nothing is left. */
    size_t plen = strlen(prefix);
    char *upper = malloc(plen + 1);
    if (!upper)
        return ps_error_set(err, PS_ENOMEM, "out of memory listing %s", kind);
    memcpy(upper, prefix, plen + 1);
    size_t ulen = plen;
    while (ulen > 0 && (unsigned char)upper[ulen - 1] == 0xFF)
        ulen--;
    if (ulen > 0)
        upper[ulen - 1] = (char)((unsigned char)upper[ulen - 1] + 1);
    upper[ulen] = '\0';
    int rc = s->ops->list(s, kind, prefix, ulen > 0 ? upper : NULL, fn, ctx, err);
    free(upper);
    return rc;
}

/* ---- tokens, jobs -------------------------------------------------------------------------- */

int ps_store_token_put(struct ps_store *s, const char *sha256_hex, const char *user,
                       const char *role, struct ps_error *err)
{
    if (!sha256_hex || strlen(sha256_hex) != 64 || !user || !*user || !role)
        return ps_error_set(err, PS_EINVAL, "store %s: a token row needs a SHA-256 (64 hex "
                            "digits), a user and a role", s->path);
    FENCED_WRITE(s, err, s->ops->token_put(s, sha256_hex, user, role, err));
}

int ps_store_token_delete(struct ps_store *s, const char *sha256_hex, struct ps_error *err)
{
    FENCED_WRITE(s, err, s->ops->token_delete(s, sha256_hex, err));
}

int ps_store_token_get(struct ps_store *s, const char *sha256_hex, char *hash_out,
                       size_t hash_cap, char *user_out, size_t user_cap, char *role_out,
                       size_t role_cap, struct ps_error *err)
{
    return s->ops->token_get(s, sha256_hex, hash_out, hash_cap, user_out, user_cap, role_out,
                             role_cap, err);
}

int ps_store_jobs_of_operation(struct ps_store *s, const char *operation_id,
                               enum ps_store_job_order order, ps_store_list_fn *fn, void *ctx,
                               struct ps_error *err)
{
    return s->ops->jobs_of_operation(s, operation_id, order, fn, ctx, err);
}

/* ---- leader election ----------------------------------------------------------------------- */

static int no_election(struct ps_store *s, struct ps_error *err)
{
    return ps_error_set(err, PS_EINVAL,
                        "store %s: leader election needs the PostgreSQL store (--store)", s->path);
}

int ps_store_leader_acquire(struct ps_store *s, const char *holder, const char *address,
                            int lease_ms, int64_t *epoch, struct ps_error *err)
{
    *epoch = 0;
    if (!s->ops->leader_acquire)
        return no_election(s, err);
    return s->ops->leader_acquire(s, holder, address, lease_ms, epoch, err);
}

int ps_store_leader_renew(struct ps_store *s, int64_t epoch, int lease_ms, struct ps_error *err)
{
    if (!s->ops->leader_renew)
        return no_election(s, err);
    return s->ops->leader_renew(s, epoch, lease_ms, err);
}

int ps_store_leader_get(struct ps_store *s, struct ps_store_leader *out, struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    if (!s->ops->leader_get)
        return no_election(s, err);
    return s->ops->leader_get(s, out, err);
}

void ps_store_fence(struct ps_store *s, int64_t epoch)
{
    s->fence_epoch = epoch;
    s->deposed = false;
    if (epoch > 0 && s->ops->name_epoch)
        s->ops->name_epoch(s, epoch);
}

bool ps_store_deposed(const struct ps_store *s)
{
    return s->deposed;
}
