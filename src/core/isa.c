#include "core/isa.h"

#include <string.h>

/* The engine's one process-wide state: a fact about the CPU, read once (any thread may be the
 * first; they all store the same value, atomically), and a cap a shell sets before updates. */
static int detected = -1;
static int cap = PS_ISA_AVX512;

enum ps_isa ps_isa_detected(void)
{
    int level = __atomic_load_n(&detected, __ATOMIC_RELAXED);
    if (level < 0) {
        level = PS_ISA_BASE;
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2"))
            level = PS_ISA_AVX2;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512dq"))
            level = PS_ISA_AVX512;
#endif
        __atomic_store_n(&detected, level, __ATOMIC_RELAXED);
    }
    return (enum ps_isa)level;
}

enum ps_isa ps_isa_level(void)
{
    int d = (int)ps_isa_detected(), c = __atomic_load_n(&cap, __ATOMIC_RELAXED);
    return (enum ps_isa)(d < c ? d : c);
}

void ps_isa_cap(enum ps_isa max)
{
    __atomic_store_n(&cap, (int)max, __ATOMIC_RELAXED);
}

static const char *const names[] = {"base", "avx2", "avx512"};

const char *ps_isa_name(enum ps_isa isa)
{
    return isa >= PS_ISA_BASE && isa <= PS_ISA_AVX512 ? names[isa] : "unknown";
}

int ps_isa_parse(const char *name)
{
    for (int i = 0; i <= PS_ISA_AVX512; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}
