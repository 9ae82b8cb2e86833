/* merge_sort.h — one bottom-up stable merge sort with its order inlined, for the sorts run at
 * every fair share update (qsort's call through a pointer per comparison was most of their
 * time). PS_MERGE_SORT_DEFINE(name, T, C, BEFORE) defines
 *     static void name(T *a, T *tmp, int n, C ctx)
 * which sorts a[0..n) so that x precedes y when BEFORE(ctx, &x, &y) (ties keep their order),
 * with tmp[0..n) as scratch. Pure. */
#ifndef PS_CORE_MERGE_SORT_H
#define PS_CORE_MERGE_SORT_H

#include <string.h>

#define PS_MERGE_SORT_DEFINE(name, T, C, BEFORE)                                                 \
    static void name(T *a, T *tmp, int n, C ctx)                                                 \
    {                                                                                            \
        T *src = a, *dst = tmp;                                                                  \
        for (int width = 1; width < n; width *= 2) {                                             \
            for (int lo = 0; lo < n; lo += 2 * width) {                                          \
                int mid = lo + width < n ? lo + width : n;                                       \
                int hi = lo + 2 * width < n ? lo + 2 * width : n;                                \
                int i = lo, j = mid, k = lo;                                                     \
                while (i < mid && j < hi)                                                        \
                    dst[k++] = BEFORE(ctx, &src[j], &src[i]) ? src[j++] : src[i++];              \
                while (i < mid)                                                                  \
                    dst[k++] = src[i++];                                                         \
                while (j < hi)                                                                   \
                    dst[k++] = src[j++];                                                         \
            }                                                                                    \
            T *swap = src;                                                                       \
            src = dst;                                                                           \
            dst = swap;                                                                          \
        }                                                                                        \
        if (src != a)                                                                            \
            memcpy(a, src, (size_t)n * sizeof *a);                                               \
    }

#endif
