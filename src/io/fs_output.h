/* fs_output.h — printing the result of a fair share update of a snapshot.
 *
 * JSON (shared/spec/formats.md section 2): {"pools": {...}, "operations": {...}, "alerts": [...]}
 * with every pool including <Root> (in element order: parents first) and every operation (in
 * the input's order). Each element has, in this order:
 *   fair_share_ratio, usage_ratio, demand_ratio, dominant_resource,
 *   detailed_fair_share {total, strong_guarantee, integral_guarantee, weight_proportional},
 *   demand_share, usage_share, limits_share, strong_guarantee_share, resource_limits,
 *   accumulated_resource_ratio_volume, accumulated_resource_volume, integral_pool_capacity,
 *   specified_burst_ratio, specified_resource_flow_ratio, total_burst_ratio,
 *   total_resource_flow_ratio, estimated_burst_usage_duration_seconds,
 * then extras: strong_guarantee_ratio, integral_guarantee_ratio, weight_proportional_ratio
 * (largest components of the detailed parts, as pools.csv), proposed_integral_share,
 * inferred_strong_guarantee_resources, weight (effective), fifo_index (-1 outside FIFO pools),
 * and for pools parent (absent for <Root>) and mode, for operations pool.
 * - SHARE maps always have the five keys user_slots, cpu, gpu, memory, network.
 * - RESOURCES maps: cpu printed in cores as an exact decimal (11.17), the rest as integers; a
 *   component that is unlimited (PS_RES_INFINITE) is left out, as in input limits maps where an
 *   omitted key means unlimited. Volume maps (resource x seconds) have all five keys.
 * - Numbers are printed with the fewest significant digits (up to 17) that read back as the same
 *   double, integral values without a fraction, -0 as 0, non-finite values as null. So the
 *   output is a pure function of the results: byte-identical for the same input.
 *
 * Table: the pool tree indented by depth, operations under their pool; columns name, type
 * (fair_share, fifo, op, gang op), weight, fair share and its strong / integral /
 * weight-proportional parts, usage and demand (percent of the cluster, largest component), and
 * the dominant resource; then the total resources and the alerts.
 */
#ifndef PS_IO_FS_OUTPUT_H
#define PS_IO_FS_OUTPUT_H

#include <stdio.h>

#include "core/error.h"
#include "io/snapshot.h"

/* Writes the JSON result of snap (after ps_fs_update_run filled its outputs) and the given
 * alerts to out. Returns 0, or PS_EIO when writing failed. */
int ps_fs_print_json(FILE *out, const struct ps_snapshot *snap, const char *const *alerts,
                     int alert_count, struct ps_error *err);

/* The same result as an aligned text table for people. Returns 0, PS_ENOMEM or PS_EIO. */
int ps_fs_print_table(FILE *out, const struct ps_snapshot *snap, const char *const *alerts,
                      int alert_count, struct ps_error *err);

/* Writes x in the shortest form that reads back as the same double (see above) into buf
 * (at least 32 bytes). */
void ps_fs_format_double(char *buf, size_t size, double x);

#endif
