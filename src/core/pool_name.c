#include "core/pool_name.h"

#include <stdbool.h>
#include <string.h>

int ps_pool_name_check(const char *key, const char *name, struct ps_error *err)
{
    if (strcmp(name, PS_ROOT_POOL_NAME) == 0)
        return ps_error_set(err, PS_EINVAL, "%s: \"%s\" is reserved for the root pool", key, name);
    size_t len = strlen(name);
    if (len == 0)
        return ps_error_set(err, PS_EINVAL, "%s: a pool name must not be empty", key);
    if (len > PS_POOL_NAME_MAX)
        return ps_error_set(err, PS_EINVAL,
                            "%s: a pool name must be at most %d characters, got %zu in \"%.40s...\"",
                            key, PS_POOL_NAME_MAX, len, name);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == ':';
        if (c == PS_EPHEMERAL_DELIMITER)
            return ps_error_set(err, PS_EINVAL,
                                "%s: '$' is reserved for ephemeral subpools, got \"%s\"", key, name);
        if (!ok)
            return ps_error_set(err, PS_EINVAL,
                                "%s: a pool name may contain only letters, digits, '_', '-' and "
                                "':', got \"%s\" (character %zu)",
                                key, name, i);
    }
    return 0;
}
