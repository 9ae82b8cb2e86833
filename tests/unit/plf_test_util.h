/* plf_test_util.h — shared by the differential PLF tests (test_plf_sum.c,
 * test_plf_reference.c): the random source and the bit-for-bit comparison. */
#ifndef PS_TEST_PLF_TEST_UTIL_H
#define PS_TEST_PLF_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/plf.h"
#include "test_rng.h"

/* Fails unless want and got hold the same points to the bit; what names the operation. */
static inline void assert_same(const struct ps_plf_buf *want, const struct ps_plf_buf *got, int round, const char *what)
{
    if (want->n != got->n || want->dim != got->dim ||
        memcmp(want->a, got->a, (size_t)want->n * (size_t)(want->dim + 1) * sizeof(double)) != 0)
        fail_msg("%s differs in round %d (%d vs %d points)", what, round, want->n, got->n);
}

#endif
