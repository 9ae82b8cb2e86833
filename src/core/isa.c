#include "core/isa.h"

#include <stdlib.h>
#include <string.h>

#include "core/isa_kernels.h"

/* The kernels whose baseline form is as fast as an AVX2 one would be (no AVX2 form exists). */
#define PORTABLE_SHARE_KERNELS                               \
    .scale_argument5 = ps_plf_scale_argument5_base,          \
    .copy_segments5 = ps_plf_copy_segments5_base,            \
    .compress5 = ps_plf_compress5_base,                      \
    .compose_build5 = ps_plf_compose_build5_base

/* One constant table per level, each entry the widest form the level has. */
static const struct ps_kernels tables[] = {
    [PS_ISA_BASE] = {
        .level = PS_ISA_BASE,
        PORTABLE_SHARE_KERNELS,
        .compose_compress5 = ps_plf_compose_compress5_base,
        .sum_summand5 = ps_plf_sum_summand5_base,
        .crossing = ps_plf_crossing_base,
    },
#if defined(PS_ISA_HAVE_WIDE)
    [PS_ISA_AVX2] = {
        .level = PS_ISA_AVX2,
        PORTABLE_SHARE_KERNELS,
        .compose_compress5 = ps_plf_compose_compress5_avx2,
        .sum_summand5 = ps_plf_sum_summand5_avx2,
        .crossing = ps_plf_crossing_avx2,
    },
    [PS_ISA_AVX512] = {
        .level = PS_ISA_AVX512,
        .scale_argument5 = ps_plf_scale_argument5_avx512,
        .copy_segments5 = ps_plf_copy_segments5_avx512,
        .compress5 = ps_plf_compress5_avx512,
        .compose_build5 = ps_plf_compose_build5_avx512,
        .compose_compress5 = ps_plf_compose_compress5_avx512,
        .sum_summand5 = ps_plf_sum_summand5_avx512,
        .crossing = ps_plf_crossing_avx2, /* three halvings per step were no faster */
    },
#endif
};

/* The engine's one process-wide state: facts about the process (the CPU, and the environment's
 * POOLSCHED_ISA, read once: any thread may be the first; they all store the same value,
 * atomically), a cap a shell sets before updates, and the table they select. */
static int detected = -1;
static int cap = PS_ISA_AVX512;
const struct ps_kernels *ps_kernels_active;

static int cpu_level(void)
{
    int level = PS_ISA_BASE;
#if defined(PS_ISA_HAVE_WIDE)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        level = PS_ISA_AVX2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        level = PS_ISA_AVX512;
#endif
    return level;
}

enum ps_isa ps_isa_detected(void)
{
    int level = __atomic_load_n(&detected, __ATOMIC_RELAXED);
    if (level < 0) {
        level = cpu_level();
        /* CI's portable run and anyone comparing levels may lower it for the whole process. */
        const char *env = getenv("POOLSCHED_ISA");
        int ceiling = env && *env ? ps_isa_parse(env) : -1;
        if (ceiling >= 0 && ceiling < level)
            level = ceiling;
        __atomic_store_n(&detected, level, __ATOMIC_RELAXED);
    }
    return (enum ps_isa)level;
}

static const struct ps_kernels *select_table(void)
{
    int d = (int)ps_isa_detected(), c = __atomic_load_n(&cap, __ATOMIC_RELAXED);
    const struct ps_kernels *k = &tables[d < c ? d : c];
    __atomic_store_n(&ps_kernels_active, k, __ATOMIC_RELEASE);
    return k;
}

const struct ps_kernels *ps_kernels_init(void)
{
    return select_table();
}

enum ps_isa ps_isa_level(void)
{
    return ps_kernels()->level;
}

void ps_isa_cap(enum ps_isa max)
{
    __atomic_store_n(&cap, (int)max, __ATOMIC_RELAXED);
    select_table();
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
