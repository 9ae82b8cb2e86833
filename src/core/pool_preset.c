/* pool_preset.c — pool config presets (pool_preset.h). */
#include "core/pool_preset.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Every preset key unset; nothing else of the struct is used, nothing is owned. */
static void preset_clear(struct ps_pool_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
}

int ps_pool_preset_load(const char *name, const struct ps_value *preset, struct ps_pool_config *out,
                        struct ps_error *err)
{
    preset_clear(out);
    int rc = ps_attr_apply(&ps_pool_preset_table, out, preset, true, err);
    if (rc == PS_ENOMEM)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc != 0) {
        ps_error_prefix(err, "Config of preset \"%s\" failed to load as TPoolPresetConfig", name);
        return rc;
    }
    struct ps_value unknown;
    if (ps_attr_unrecognized(&ps_pool_preset_table, preset, NULL, &unknown) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (unknown.count > 0) {
        char keys[256] = "";
        for (int i = 0; i < unknown.count; i++) {
            size_t len = strlen(keys);
            snprintf(keys + len, sizeof keys - len, "%s%s", i ? ", " : "", unknown.keys[i]);
        }
        ps_value_release(&unknown);
        ps_attr_release(&ps_pool_preset_table, out);
        return ps_error_set(err, PS_EINVAL, "Config of preset \"%s\" contains unrecognized options: %s",
                            name, keys);
    }
    ps_value_release(&unknown);
    return 0;
}

int ps_pool_config_effective(const struct ps_pool_config *explicit_cfg, const struct ps_value *presets,
                             struct ps_pool_config *out, struct ps_error *issue)
{
    ps_error_init(issue);
    if (ps_pool_config_copy(out, explicit_cfg) != 0)
        return PS_ENOMEM;
    const char *name = explicit_cfg->config_preset;
    if (!name)
        return 0;
    const struct ps_value *preset = ps_value_find(presets, name);
    if (!preset) {
        ps_error_set(issue, PS_ENOENT, "Config preset \"%s\" is not found", name);
        return 0;
    }
    struct ps_pool_config loaded;
    int rc = ps_pool_preset_load(name, preset, &loaded, issue);
    if (rc == PS_ENOMEM) {
        ps_pool_config_release(out);
        return PS_ENOMEM;
    }
    if (rc != 0)
        return 0;
    rc = ps_attr_overlay(&ps_pool_preset_table, out, &loaded);
    ps_attr_release(&ps_pool_preset_table, &loaded);
    if (rc != 0) {
        ps_pool_config_release(out);
        return PS_ENOMEM;
    }
    return 0;
}
