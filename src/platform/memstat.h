/* memstat.h — memory figures of the current process, for benchmarks and metrics.
 *
 * Both are best effort: they return -1 when the figure is not available (another libc, or a
 * sanitizer's allocator that does not fill mallinfo2).
 */
#ifndef PS_PLATFORM_MEMSTAT_H
#define PS_PLATFORM_MEMSTAT_H

#include <stdint.h>

/* Peak resident set size of the process so far, in bytes (getrusage ru_maxrss). */
int64_t ps_memstat_peak_rss_bytes(void);

/* Bytes currently allocated from the C heap and not freed (glibc mallinfo2: in-use bytes of
 * the arena plus mmapped chunks). The difference across a piece of code is what it kept. */
int64_t ps_memstat_heap_in_use_bytes(void);

#endif
