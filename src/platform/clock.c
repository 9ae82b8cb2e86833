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

int64_t ps_clock_thread_cpu_ns(void)
{
    return read_ns(CLOCK_THREAD_CPUTIME_ID);
}
