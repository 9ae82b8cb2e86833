/* wall_clock.h — wall-clock time and sleeping for the client commands (the engine never reads a
 * clock). Kept apart from clock.h (monotonic, for measuring) because these values leave the
 * process: `list-jobs` shows how long a running job has run, `--wait` polls the scheduler. */
#ifndef PS_PLATFORM_WALL_CLOCK_H
#define PS_PLATFORM_WALL_CLOCK_H

#include <stdint.h>

/* Milliseconds since the Unix epoch (CLOCK_REALTIME), the unit of the API's timestamps. */
int64_t ps_wall_clock_ms(void);

/* Sleeps about ms milliseconds (restarted after signals that do not end the process). */
void ps_sleep_ms(int64_t ms);

#endif
