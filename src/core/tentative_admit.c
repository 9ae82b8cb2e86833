/* tentative_admit.c — whether a tentative tree takes an operation at its start (tentative.h).
 * Apart from tentative.c, which op_spec.c's eligibility table uses: this rule reads an
 * operation's spec, so it sits above op_spec.c in core's layers (docs/design.md). */
#include "core/tentative.h"

#include "core/op_spec.h"
#include "core/operation.h"
#include "core/tree_config.h"

#include <string.h>

/* upstream's NonTentativeOperationTypes of the tree (unset there: the scheduler's
 * operations_without_tentative_pool_trees, sort, map_reduce and remote_copy: never vanilla) */
static bool takes_no_vanilla(const struct ps_pool_tree *tree)
{
    const struct ps_string_list *types = &ps_pool_tree_config(tree)->non_tentative_operation_types;
    for (int i = 0; i < types->count; i++)
        if (strcmp(types->items[i], "vanilla") == 0)
            return true;
    return false;
}

bool ps_tentative_admit(const struct ps_pool_tree *tree, const char *tree_name, const char *op_id,
                        const char *user, const struct ps_operation_spec *spec,
                        struct ps_error *why)
{
    ps_error_init(why);
    if (!tree)
        return true;
    if (takes_no_vanilla(tree))
        return false;
    struct ps_tree_op_settings settings;
    ps_operation_spec_settings(spec, tree_name, &settings);
    return ps_pool_tree_check_operation(tree, op_id, user, &settings, why) == 0;
}
