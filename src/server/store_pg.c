/* store_pg.c — the PostgreSQL backend of the store (not yet available). */
#include "server/store_backend.h"

int ps_store_pg_open(const struct ps_store_config *cfg, struct ps_store **out,
                     struct ps_error *err)
{
    (void)cfg;
    *out = NULL;
    return ps_error_set(err, PS_EINVAL, "this poolsched has no PostgreSQL store");
}
