#include "core/bisect.h"

#include <string.h>

#define SIGN_BIT ((uint64_t)1 << 63)

uint64_t ps_double_to_ordered_bits(double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    /* Negative: flip everything, so larger magnitudes come first. Non-negative: set the sign bit,
     * so they all come after the negatives in their natural order. */
    return (bits & SIGN_BIT) ? ~bits : (bits | SIGN_BIT);
}

double ps_ordered_bits_to_double(uint64_t bits)
{
    uint64_t raw = (bits & SIGN_BIT) ? (bits & ~SIGN_BIT) : ~bits;
    double value;
    memcpy(&value, &raw, sizeof value);
    return value;
}

double ps_bisect_inverse_lower_bound(double lo, double hi, ps_bisect_pred pred, void *ctx)
{
    if (lo == hi)
        return lo;
    uint64_t a = ps_double_to_ordered_bits(lo);
    uint64_t b = ps_double_to_ordered_bits(hi);
    if (pred(hi, ctx))
        return hi;
    /* Invariant: pred(a) holds, pred(b) does not. */
    while (a + 1 < b) {
        uint64_t mid = a + ((b - a) >> 1);
        if (pred(ps_ordered_bits_to_double(mid), ctx))
            a = mid;
        else
            b = mid;
    }
    return ps_ordered_bits_to_double(a);
}
