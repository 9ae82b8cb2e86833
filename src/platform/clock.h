/* clock.h — clocks for the shells (the engine never reads a clock; it is given now_ms).
 *
 * Monotonic time is for measuring intervals (benchmarks, timeouts), never for timestamps that
 * leave the process. Thread CPU time is what a benchmark reports next to wall time on a noisy
 * machine: it does not count time the thread spent waiting for a core.
 */
#ifndef PS_PLATFORM_CLOCK_H
#define PS_PLATFORM_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds since an unspecified start (CLOCK_MONOTONIC); never goes backwards. */
int64_t ps_clock_monotonic_ns(void);
/* CPU time (user + system) of this process, all threads, in nanoseconds. */
int64_t ps_clock_process_cpu_ns(void);

/* The absolute CLOCK_MONOTONIC time ms milliseconds from now, for condition variables whose
 * clock attribute is CLOCK_MONOTONIC. */
struct timespec ps_clock_monotonic_deadline(int64_t ms);

/* The same for CLOCK_REALTIME, the default clock of pthread condition variables. */
struct timespec ps_clock_realtime_deadline(int64_t ms);

/* CPU time consumed by the calling thread, in nanoseconds (CLOCK_THREAD_CPUTIME_ID). */
int64_t ps_clock_thread_cpu_ns(void);

#endif
