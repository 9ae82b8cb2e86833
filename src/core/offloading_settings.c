#include "core/offloading_settings.h"

#include <stddef.h>
#include <string.h>

#include "core/attr_common.h"
#include "core/pool_name.h"

#define OFF(field) offsetof(struct ps_offloading_pool_settings, field)

static int settings_init(void *obj)
{
    memset(obj, 0, sizeof(struct ps_offloading_pool_settings));
    return 0;
}

static const struct ps_attr settings_attrs[] = {
    {.name = "pool", .kind = PS_ATTR_OPT_STRING, .offset = OFF(pool)},
    PS_ATTR_WEIGHT(OFF(weight), 0),
    PS_ATTR_RESOURCE_LIMITS(OFF(resource_limits), 0),
    {.name = "tentative", .kind = PS_ATTR_BOOL, .offset = OFF(tentative)},
};

static const struct ps_attr_table settings_table = {
    .what = "offloading pool settings",
    .attrs = settings_attrs,
    .count = (int)(sizeof settings_attrs / sizeof settings_attrs[0]),
    .size = sizeof(struct ps_offloading_pool_settings),
    .init = settings_init,
};

int ps_offloading_settings_parse(const char *tree, const struct ps_value *entry,
                                 struct ps_offloading_pool_settings *out, struct ps_error *err)
{
    settings_init(out);
    int rc = ps_pool_name_check("offloading_settings", tree, err);
    if (rc == 0 && entry->type != PS_VALUE_MAP)
        rc = ps_error_set(err, PS_EINVAL, "must be a map of pool, weight, resource_limits and "
                          "tentative, got a %s", ps_value_type_name(entry->type));
    if (rc == 0)
        rc = ps_attr_apply(&settings_table, out, entry, false, err);
    if (rc == 0 && out->pool && out->pool[0] != '\0')
        rc = ps_pool_name_check("pool", out->pool, err);
    if (rc != 0) {
        ps_attr_release(&settings_table, out);
        ps_error_prefix(err, "offloading_settings/%s", tree);
    }
    return rc;
}

int ps_offloading_settings_check(const struct ps_value *settings, struct ps_error *err)
{
    if (settings->type == PS_VALUE_NULL)
        return 0;
    if (settings->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL,
                            "offloading_settings: must be a map from pool tree names to settings, "
                            "got a %s", ps_value_type_name(settings->type));
    for (int i = 0; i < settings->count; i++) {
        struct ps_offloading_pool_settings s;
        int rc = ps_offloading_settings_parse(settings->keys[i], &settings->items[i], &s, err);
        if (rc != 0)
            return rc;
        ps_offloading_settings_release(&s);
    }
    return 0;
}

void ps_offloading_settings_release(struct ps_offloading_pool_settings *s)
{
    ps_attr_release(&settings_table, s);
}
