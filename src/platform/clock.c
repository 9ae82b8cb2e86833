#include "platform/clock.h"

#include <time.h>

static int64_t read_ns(clockid_t id)
{
    struct timespec ts;
    /* Both clocks are mandatory on Linux; a failure would be a bug, and 0 keeps intervals sane. */
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ps_clock_monotonic_ns(void)
{
    return read_ns(CLOCK_MONOTONIC);
}

int64_t ps_clock_process_cpu_ns(void)
{
    return read_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static struct timespec deadline_after(clockid_t id, int64_t ms)
{
    struct timespec ts = {0, 0};
    clock_gettime(id, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

struct timespec ps_clock_monotonic_deadline(int64_t ms)
{
    return deadline_after(CLOCK_MONOTONIC, ms);
}

struct timespec ps_clock_realtime_deadline(int64_t ms)
{
    return deadline_after(CLOCK_REALTIME, ms);
}

int64_t ps_clock_thread_cpu_ns(void)
{
    return read_ns(CLOCK_THREAD_CPUTIME_ID);
}
