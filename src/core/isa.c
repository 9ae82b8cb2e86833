#include "core/isa.h"

#include <string.h>

static int detected = -1;
static enum ps_isa cap = PS_ISA_AVX512;

enum ps_isa ps_isa_detected(void)
{
    if (detected < 0) {
        int level = PS_ISA_BASE;
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2"))
            level = PS_ISA_AVX2;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512dq"))
            level = PS_ISA_AVX512;
#endif
        detected = level;
    }
    return (enum ps_isa)detected;
}

enum ps_isa ps_isa_level(void)
{
    enum ps_isa d = ps_isa_detected();
    return d < cap ? d : cap;
}

void ps_isa_cap(enum ps_isa max)
{
    cap = max;
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
