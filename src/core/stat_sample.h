/* stat_sample.h — one named integer job statistic, as the engine hands them to shells.
 *
 * YTsaurus reports job statistics as a tree of integer samples addressed by paths such as
 * "/job_proxy/smoothed_cpu_usage_x100". The engine does not build that tree; modules that
 * produce statistics (cpu_monitor, memory_reserve) fill flat arrays of these, and the shell
 * that owns the job's statistics merges them in.
 */
#ifndef PS_CORE_STAT_SAMPLE_H
#define PS_CORE_STAT_SAMPLE_H

#include <stdint.h>

struct ps_stat_sample {
    const char *path;   /* static string, valid for the life of the program */
    int64_t value;
};

#endif
