/* attr_common.h — attribute entries that several tables share (pools, ephemeral pool configs,
 * offloading pool settings, operation specs and their per-tree options, tree configs, the
 * check of an operation's tree settings in tree_ops.c): each setting's name, kind and range
 * written once. off is the field's offset in the table's struct, fl the entry's flags. */
#ifndef PS_CORE_ATTR_COMMON_H
#define PS_CORE_ATTR_COMMON_H

#include "core/attr.h"
#include "core/fair_share.h"

/* a numeric maximum that means "no maximum" (attr.c words the range as ">= min") */
#define PS_ATTR_UNBOUNDED 1e308

#define PS_ATTR_WEIGHT(off, fl)                                                              \
    {.name = "weight", .kind = PS_ATTR_OPT_DOUBLE, .offset = (off), .min = PS_WEIGHT_MIN,    \
     .max = PS_WEIGHT_MAX, .flags = (fl)}

#define PS_ATTR_RESOURCE_LIMITS(off, fl)                                                     \
    {.name = "resource_limits", .kind = PS_ATTR_RESOURCES, .offset = (off), .flags = (fl)}

/* kind: PS_ATTR_INT in a tree config (always set), PS_ATTR_OPT_INT elsewhere */
#define PS_ATTR_STARVATION_TIMEOUT(kind_, off, fl)                                           \
    {.name = "fair_share_starvation_timeout", .alias = {"fair_share_preemption_timeout"},    \
     .kind = (kind_), .offset = (off), .min = 0, .max = PS_ATTR_UNBOUNDED, .flags = (fl)}

/* kind: PS_ATTR_DOUBLE in a tree config, PS_ATTR_OPT_DOUBLE elsewhere */
#define PS_ATTR_STARVATION_TOLERANCE(kind_, off, fl)                                         \
    {.name = "fair_share_starvation_tolerance", .kind = (kind_), .offset = (off), .min = 0,  \
     .max = 1, .flags = (fl)}

#define PS_ATTR_MAX_SHARE_RATIO(off, fl)                                                     \
    {.name = "max_share_ratio", .kind = PS_ATTR_OPT_DOUBLE, .offset = (off), .min = 0,       \
     .max = 1, .flags = (fl)}

#endif
