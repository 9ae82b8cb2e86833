/* data_dir.c — the one rule for the state directory (data_dir.h). */
#include "platform/data_dir.h"

#include <stdio.h>
#include <stdlib.h>

static int fits(int written, char *out, size_t size)
{
    if (written < 0 || (size_t)written >= size) {
        if (size > 0)
            out[0] = '\0';
        return -1;
    }
    return 0;
}

int ps_data_dir_resolve(const char *option, const char *env_data_dir, const char *env_xdg_state_home,
                        char *out, size_t size)
{
    if (option && *option)
        return fits(snprintf(out, size, "%s", option), out, size);
    if (env_data_dir && *env_data_dir)
        return fits(snprintf(out, size, "%s", env_data_dir), out, size);
    if (env_xdg_state_home && *env_xdg_state_home == '/')
        return fits(snprintf(out, size, "%s/poolsched", env_xdg_state_home), out, size);
    return fits(snprintf(out, size, "%s", PS_DATA_DIR_FALLBACK), out, size);
}

int ps_data_dir_default(const char *option, char *out, size_t size)
{
    return ps_data_dir_resolve(option, getenv("POOLSCHED_DATA_DIR"), getenv("XDG_STATE_HOME"), out, size);
}
