/* svc_log.h — the daemon's clock and log (service.c): wall-clock milliseconds since the epoch,
 * and one structured line on stderr per event, which every room writes. */
#ifndef PS_SERVER_SVC_LOG_H
#define PS_SERVER_SVC_LOG_H

#include <stdint.h>

struct ps_service;

int64_t ps_svc_now_ms(void);
/* One structured line on stderr: `ts=... level=info event=NAME k=v ...` (fmt gives k=v). */
void ps_svc_log(struct ps_service *svc, const char *level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
