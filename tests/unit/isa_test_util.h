/* isa_test_util.h — the tests of the level-dependent kernels as one cmocka entry per vector
 * level, so that a level this process cannot use (the CPU lacks it, or POOLSCHED_ISA lowers it)
 * is reported SKIPPED by name instead of passing silently.
 *
 *   static void test_x(void **state) { AT_ISA_TEST_LEVEL(level) { ... } }
 *   ISA_LEVEL_TESTS(test_x)                      defines test_x_base, test_x_avx2, test_x_avx512
 *   ... ISA_LEVEL_ENTRIES(test_x, setup, teardown) ...   in main's CMUnitTest array
 *
 * The wide-only forms (ISA_WIDE_LEVEL_TESTS, ISA_WIDE_LEVEL_ENTRIES) are for the differential
 * tests, whose reference is the baseline level itself. Include after <cmocka.h>. */
#ifndef PS_TEST_ISA_TEST_UTIL_H
#define PS_TEST_ISA_TEST_UTIL_H

#include <stdbool.h>

#include "core/isa.h"

/* The level of the entry running (set by its wrapper). */
static int isa_test_level_ = PS_ISA_BASE;

/* Runs test at level with the kernels capped there, or reports it skipped. */
static inline void isa_test_run(void (*test)(void **), void **state, int level)
{
    if (level > (int)ps_isa_detected()) {
        print_message("%s: not available here (CPU level %s, or POOLSCHED_ISA lower)\n",
                      ps_isa_name((enum ps_isa)level), ps_isa_name(ps_isa_detected()));
        skip();
    }
    isa_test_level_ = level;
    ps_isa_cap((enum ps_isa)level);
    test(state);
    ps_isa_cap(PS_ISA_AVX512);
}

#define ISA_TEST_AT_(f, suffix, level) \
    static void f##_##suffix(void **state) { isa_test_run(f, state, level); }
#define ISA_WIDE_LEVEL_TESTS(f) ISA_TEST_AT_(f, avx2, PS_ISA_AVX2) ISA_TEST_AT_(f, avx512, PS_ISA_AVX512)
#define ISA_LEVEL_TESTS(f) ISA_TEST_AT_(f, base, PS_ISA_BASE) ISA_WIDE_LEVEL_TESTS(f)
#define ISA_WIDE_LEVEL_ENTRIES(f, setup, teardown) \
    cmocka_unit_test_setup_teardown(f##_avx2, setup, teardown), \
        cmocka_unit_test_setup_teardown(f##_avx512, setup, teardown)
#define ISA_LEVEL_ENTRIES(f, setup, teardown) \
    cmocka_unit_test_setup_teardown(f##_base, setup, teardown), ISA_WIDE_LEVEL_ENTRIES(f, setup, teardown)

/* Caps the kernels at level; past the last level it returns to the entry's level and says no. */
static inline bool isa_enter_level(int level)
{
    if (level > PS_ISA_AVX512) {
        ps_isa_cap((enum ps_isa)isa_test_level_);
        return false;
    }
    ps_isa_cap((enum ps_isa)level);
    return true;
}

/* for (the entry's level, once) */
#define AT_ISA_TEST_LEVEL(level) \
    for (int level = isa_test_level_, level##_once_ = 1; level##_once_; level##_once_ = 0, (void)level)

/* for (the baseline, then the entry's level when it is wider) */
#define FOR_BASE_THEN_ISA_TEST_LEVEL(level)                        \
    for (int level = PS_ISA_BASE; isa_enter_level(level);          \
         level = level < isa_test_level_ ? isa_test_level_ : PS_ISA_AVX512 + 1)

#endif
