/* The kernel table (src/core/isa.c): capping selects the table of that level, one entry per level
 * (SKIPPED where this process cannot use it); the names parse back; the cap never lifts the level
 * above the CPU's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/isa.h"
#include "core/isa_kernels.h"
#include "isa_test_util.h"

static void test_cap_selects_the_table(void **state)
{
    (void)state;
    AT_ISA_TEST_LEVEL(level) {
        const struct ps_kernels *k = ps_kernels();
        assert_int_equal(k->level, level);
        assert_int_equal(ps_isa_level(), level);
        assert_non_null(k->scale_argument5);
        assert_non_null(k->copy_segments5);
        assert_non_null(k->compress5);
        assert_non_null(k->compose_build5);
        assert_non_null(k->compose_compress5);
        assert_non_null(k->sum_summand5);
        assert_non_null(k->crossing);
        /* the fused composition and compression from AVX2 up, the two steps below */
        assert_true((k->compose_compress5 == ps_plf_compose_compress5_base) == (level == PS_ISA_BASE));
    }
}

ISA_LEVEL_TESTS(test_cap_selects_the_table)

static void test_cap_above_the_cpu(void **state)
{
    (void)state;
    ps_isa_cap(PS_ISA_AVX512);
    assert_int_equal(ps_isa_level(), ps_isa_detected());
    assert_int_equal(ps_kernels()->level, ps_isa_detected());
    ps_isa_cap(PS_ISA_BASE);
    assert_int_equal(ps_kernels()->level, PS_ISA_BASE);
    ps_isa_cap(PS_ISA_AVX512);
    assert_int_equal(ps_kernels()->level, ps_isa_detected());
}

static void test_names(void **state)
{
    (void)state;
    for (int i = PS_ISA_BASE; i <= PS_ISA_AVX512; i++)
        assert_int_equal(ps_isa_parse(ps_isa_name((enum ps_isa)i)), i);
    assert_int_equal(ps_isa_parse("sse2"), -1);
    assert_string_equal(ps_isa_name((enum ps_isa)7), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ISA_LEVEL_ENTRIES(test_cap_selects_the_table, NULL, NULL),
        cmocka_unit_test(test_cap_above_the_cpu),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
