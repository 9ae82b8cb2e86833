/* args.h — parsing of `poolsched node` flag values (pure; no I/O).
 *
 *   sizes       "8G", "512M", "64K", "1T", "1048576" (bytes); suffixes are binary (K = 1024,
 *               as YTsaurus's size literals) and may be written K, KB, Ki or KiB, any case
 *   resources   "cpu=4,memory=8G,user_slots=8,gpu=4": cpu in cores (up to two decimals are
 *               kept), memory a size, user_slots and gpu whole numbers; each key at most once
 *   tags        "gpu,ssd": names as the tag formulas accept them (formula.h), no duplicates
 */
#ifndef PS_NODE_ARGS_H
#define PS_NODE_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Parses a size into bytes, 0 .. 2^62. Errors: PS_EINVAL naming the text and the reason. */
int ps_node_parse_size(const char *text, int64_t *out, struct ps_error *err);

struct ps_node_resource_args {
    bool has_cpu;
    double cpu;                 /* cores, rounded to hundredths, > 0 */
    bool has_memory;
    int64_t memory_bytes;       /* > 0 */
    bool has_user_slots;
    int64_t user_slots;         /* >= 1 */
    bool has_gpu;
    int gpu;                    /* GPU devices, 0..64 (devices.h) */
};

/* Parses a resources list; keys not given keep has_* false. Errors: PS_EINVAL. */
int ps_node_parse_resources(const char *text, struct ps_node_resource_args *out,
                            struct ps_error *err);

/* Parses a comma-separated tag list into *tags (malloc'ed array of malloc'ed strings, in the
 * given order; free with ps_node_tags_free). "" gives no tags. Errors: PS_EINVAL, PS_ENOMEM. */
int ps_node_parse_tags(const char *text, char ***tags, size_t *count, struct ps_error *err);
void ps_node_tags_free(char **tags, size_t count);

#endif
