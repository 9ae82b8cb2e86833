#include "platform/memstat.h"

#include <sys/resource.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define HAVE_MALLINFO2 1
#endif

int64_t ps_memstat_peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return (int64_t)ru.ru_maxrss * 1024; /* Linux reports KiB */
}

int64_t ps_memstat_heap_in_use_bytes(void)
{
#ifdef HAVE_MALLINFO2
    struct mallinfo2 mi = mallinfo2();
    int64_t bytes = (int64_t)mi.uordblks + (int64_t)mi.hblkhd;
    return bytes > 0 ? bytes : -1;
#else
    return -1;
#endif
}
