/* cli_vanilla.h — the spec of `poolsched vanilla`, built from its flags (docs/api.md, SPEC).
 *
 * `--spec YSON` gives a base spec; the flags given explicitly are merged over it (maps merge
 * key by key, recursively; any other value is replaced), so
 *     poolsched vanilla --spec '{pool=a; tasks={t={command="x"}}}' --task-name t --job-count 3
 * asks for 3 jobs of "x" in pool a. The task the flags describe is --task-name (default "task").
 * After the merge every task must have a command and a positive job_count.
 */
#ifndef PS_CLI_VANILLA_H
#define PS_CLI_VANILLA_H

#include <jansson.h>

#include "cli/cli_args.h"
#include "core/error.h"

/* The options of `vanilla` (without the common ones and --wait), NULL-name terminated. */
#define PS_CLI_VANILLA_OPTS                                                                  \
    {"--pool", 0, true, false}, {"--pool-trees", 0, true, false},                            \
        {"--job-count", 0, true, false}, {"--command", 0, true, false},                      \
        {"--cpu", 0, true, false}, {"--memory", 0, true, false}, {"--tmpfs", 0, true, false}, \
        {"--env", 0, true, true}, {"--task-name", 0, true, false},                           \
        {"--weight", 0, true, false}, {"--max-share-ratio", 0, true, false},                 \
        {"--resource-limits", 0, true, false}, {"--spec", 0, true, false}

/* Builds the spec from parsed args into *out (a new reference). Checks every flag: sizes
 * (ps_cli_parse_size), cores with two decimals, job count 1..1000000, weight > 0,
 * max share ratio in (0, 1], --env K=V with a non-empty K and no repeated K, --pool-trees a
 * comma-separated list of distinct names, --resource-limits and --spec maps.
 * Errors: PS_EINVAL naming the flag and the value, e.g.
 *     --memory: "2X" is not a size (use bytes or K/M/G/T)
 *     --command is required (or give tasks.task.command in --spec)
 * PS_ENOMEM. */
int ps_cli_vanilla_spec(const struct ps_cli_args *args, json_t **out, struct ps_error *err);

#endif
