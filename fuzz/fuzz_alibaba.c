/* libFuzzer target: the Alibaba trace reader and importer. The input is the node list, a form
 * feed, then the pod list. Reading must never crash or leak, and whatever the importer builds
 * from a readable trace must be a scenario the scenario parser accepts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/alibaba.h"
#include "io/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *ff = memchr(text, '\f', size);
    size_t node_len = ff ? (size_t)(ff - text) : size;
    const char *pods = ff ? ff + 1 : "";
    size_t pod_len = ff ? size - node_len - 1 : 0;

    struct ps_alibaba_trace trace = {0};
    struct ps_error err;
    ps_error_init(&err);
    if (ps_alibaba_read_nodes(&trace, text, node_len, "nodes", &err) != 0 ||
        ps_alibaba_read_pods(&trace, pods, pod_len, "pods", &err) != 0) {
        if (err.code == 0)
            __builtin_trap();
        ps_alibaba_trace_release(&trace);
        return 0;
    }
    /* options from the sizes, so the fuzzer explores slicing and scaling too */
    struct ps_alibaba_options opt = {.limit = (int64_t)(size % 7),
                                     .start_offset_s = (int64_t)(pod_len % 3),
                                     .time_scale = size % 2 ? 1.0 : 0.001,
                                     .compress = size % 5 ? 1.0 : 7.5};
    json_t *doc = NULL;
    struct ps_alibaba_stats stats;
    int rc = ps_alibaba_to_scenario(&trace, &opt, &doc, &stats, &err);
    if (rc == 0) {
        char *out = ps_scenario_format(doc);
        struct ps_scenario *sc = NULL;
        struct ps_error parse_err;
        ps_error_init(&parse_err);
        if (!out || ps_scenario_parse(out, strlen(out), &sc, &parse_err) != 0)
            __builtin_trap();
        if ((int64_t)sc->operation_count != stats.operations ||
            sc->node_count != (int64_t)trace.node_count)
            __builtin_trap();
        ps_scenario_free(sc);
        free(out);
        json_decref(doc);
    } else if (rc != PS_EINVAL || trace.node_count != 0) {
        __builtin_trap();   /* the only refusal of a readable trace is "no nodes" */
    }
    ps_alibaba_trace_release(&trace);
    return 0;
}
