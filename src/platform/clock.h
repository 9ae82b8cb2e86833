/* clock.h — clocks for the shells (the engine never reads a clock; it is given now_ms).
 *
 * Monotonic time is for measuring intervals (benchmarks, timeouts), never for timestamps that
 * leave the process. Thread CPU time is what a benchmark reports next to wall time on a noisy
 * machine: it does not count time the thread spent waiting for a core.
 */
#ifndef PS_PLATFORM_CLOCK_H
#define PS_PLATFORM_CLOCK_H

#include <stdint.h>

/* Nanoseconds since an unspecified start (CLOCK_MONOTONIC); never goes backwards. */
int64_t ps_clock_monotonic_ns(void);

/* CPU time consumed by the calling thread, in nanoseconds (CLOCK_THREAD_CPUTIME_ID). */
int64_t ps_clock_thread_cpu_ns(void);

#endif
