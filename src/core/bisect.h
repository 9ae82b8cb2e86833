/* bisect.h — bisection over the bit patterns of IEEE-754 doubles.
 *
 * Every "fit factor" of the vector HDRF update (YTsaurus's FloatingPointInverseLowerBound) is
 * found by bisecting the integer images of doubles rather than their values: doubles are mapped
 * monotonically to uint64 (negative ones with all bits flipped, non-negative ones with the sign
 * bit set), the integer range is halved until its ends are adjacent, and the answer is exact to
 * the last bit. Bit-exact reproduction of upstream numbers depends on doing it this way.
 */
#ifndef PS_CORE_BISECT_H
#define PS_CORE_BISECT_H

#include <stdbool.h>
#include <stdint.h>

/* A monotone predicate; ctx is passed through. */
typedef bool (*ps_bisect_pred)(double x, void *ctx);

/* Monotone bijection between doubles (without NaN) and uint64, and its inverse. */
uint64_t ps_double_to_ordered_bits(double value);
double ps_ordered_bits_to_double(uint64_t bits);

/* The largest x in [lo, hi] with pred(x) true, for a predicate that is true at lo and, once false,
 * stays false. Returns hi when pred(hi) holds; returns lo without calling pred when lo == hi.
 * lo <= hi, neither NaN. pred(lo) is assumed, not evaluated. */
double ps_bisect_inverse_lower_bound(double lo, double hi, ps_bisect_pred pred, void *ctx);

#endif
