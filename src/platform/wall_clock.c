#include "platform/wall_clock.h"

#include <errno.h>
#include <time.h>

int64_t ps_wall_clock_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ps_sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}
