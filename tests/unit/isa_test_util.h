/* isa_test_util.h — running a differential test at every vector level the CPU has, the
 * baseline first, by capping the kernels' level in turn (ps_isa_cap). */
#ifndef PS_TEST_ISA_TEST_UTIL_H
#define PS_TEST_ISA_TEST_UTIL_H

#include <stdbool.h>

#include "core/isa.h"

/* Caps the kernels at level and says whether the CPU has it; past the CPU's last level it lifts
 * the cap again (for the tests after) and says no. */
static inline bool isa_enter_level(int level)
{
    if (level > (int)ps_isa_detected()) {
        ps_isa_cap(PS_ISA_AVX512);
        return false;
    }
    ps_isa_cap((enum ps_isa)level);
    return true;
}

/* for (each level the CPU has, capped in turn; the cap lifted when the loop ends normally) */
#define FOR_EACH_ISA_LEVEL(level) for (int level = PS_ISA_BASE; isa_enter_level(level); level++)

#endif
