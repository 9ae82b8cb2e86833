/* libFuzzer target: the scenario parser must never crash, leak or accept half a document. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "io/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ps_scenario *sc = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_scenario_parse((const char *)data, size, &sc, &err);
    if (rc == 0) {
        /* A parsed scenario is whole: walk it, and format-reparse would be the simulator's job. */
        if (!sc || err.code != 0 || sc->tree_count == 0 || !sc->default_tree)
            __builtin_trap();
        char id[64];
        for (size_t i = 0; i < sc->node_group_count; i++)
            if (sc->node_groups[i].count > 0)
                ps_scenario_node_id(&sc->node_groups[i], sc->node_groups[i].count - 1, id, sizeof id);
        for (size_t i = 0; i < sc->operation_count; i++)
            if (sc->operations[i].task_count == 0 || !sc->operations[i].spec)
                __builtin_trap();
    } else if (sc != NULL || err.code != rc || err.msg[0] == '\0' || strlen(err.msg) >= sizeof err.msg) {
        __builtin_trap();
    }
    ps_scenario_free(sc);
    return 0;
}
