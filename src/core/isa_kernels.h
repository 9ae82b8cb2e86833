/* isa_kernels.h — the kernel table: the engine's level-dependent kernels as one struct of
 * function pointers per vector level (not a public API).
 *
 * isa.c holds one constant table per level and chooses the one in use once, at first use (the
 * CPU's level, capped by POOLSCHED_ISA), again only when a shell or a test calls ps_isa_cap. The
 * kernels call through ps_kernels() and never test the level themselves. Every entry of every
 * table performs the same IEEE operations in the same order as the baseline's, so the choice
 * changes only the speed.
 *
 * The entries are the share-vector (dim 5) forms; other dimensions always take the portable
 * code in their callers. The forms are defined in the kernel files (plf.c, plf_compress.c,
 * plf_ops.c, plf_sum.c, plf_cross.c) and declared here for isa.c. */
#ifndef PS_CORE_ISA_KERNELS_H
#define PS_CORE_ISA_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/isa.h"

struct ps_plf;
struct ps_plf_buf;
struct ps_plf_ctx;
struct ps_plf_sseg;

/* The wider forms exist for x86-64 with GCC-compatible compilers (target attributes). */
#if defined(__x86_64__) && defined(__GNUC__)
#define PS_ISA_HAVE_WIDE 1
#endif

/* Adds one summand at the sum's points (plf_sum.c; acc, split: the accumulators). */
typedef void ps_sum_summand5_fn(double *restrict acc, size_t st, unsigned char *restrict split,
                                const struct ps_plf *f, const double *restrict pts, int k);

struct ps_kernels {
    enum ps_isa level;
    /* ps_plf_scale_argument into a cleared dst; ps_plf_extend's copy of src's segments */
    void (*scale_argument5)(struct ps_plf_buf *dst, const struct ps_plf *src, double scale);
    void (*copy_segments5)(struct ps_plf_buf *dst, const struct ps_plf *src);
    /* ps_plf_compress into a cleared dst, src with at least two points */
    void (*compress5)(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon);
    /* ps_plf_compose's build from the composition's (x, argument) pairs */
    void (*compose_build5)(struct ps_plf_buf *dst, const struct ps_plf *f, const double *pairs, int total);
    /* ps_plf_compose_compress (fused from AVX2 up; two steps at the baseline) */
    void (*compose_compress5)(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                              const struct ps_plf *f, const struct ps_plf *g, double epsilon);
    ps_sum_summand5_fn *sum_summand5;
    /* ps_plf_crossing (plf_cross.h); scalar segments, but the search has a wide form */
    double (*crossing)(const struct ps_plf_sseg *lo, const struct ps_plf_sseg *hi, double x0, double x1);
};

/* The table in use (isa.c fills it at first use). */
extern const struct ps_kernels *ps_kernels_active;
const struct ps_kernels *ps_kernels_init(void);

static inline const struct ps_kernels *ps_kernels(void)
{
    const struct ps_kernels *k = __atomic_load_n(&ps_kernels_active, __ATOMIC_ACQUIRE);
    return __builtin_expect(k != NULL, 1) ? k : ps_kernels_init();
}

/* The forms, by level: _base is the portable code (the compiler's baseline: SSE2 on x86-64,
 * plain C elsewhere), _avx2 and _avx512 use code compiled for those targets. Each is a thin
 * entry point that calls its kernel directly: the kernels stay static, so the compiler still
 * specialises them for their call sites (constant arguments, fields passed in registers). */
void ps_plf_scale_argument5_base(struct ps_plf_buf *dst, const struct ps_plf *src, double scale);
void ps_plf_copy_segments5_base(struct ps_plf_buf *dst, const struct ps_plf *src);
void ps_plf_compress5_base(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon);
void ps_plf_compose_build5_base(struct ps_plf_buf *dst, const struct ps_plf *f, const double *pairs, int total);
void ps_plf_compose_compress5_base(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                                   const struct ps_plf *f, const struct ps_plf *g, double epsilon);
ps_sum_summand5_fn ps_plf_sum_summand5_base;
double ps_plf_crossing_base(const struct ps_plf_sseg *lo, const struct ps_plf_sseg *hi, double x0, double x1);
#if defined(PS_ISA_HAVE_WIDE)
void ps_plf_compose_compress5_avx2(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                                   const struct ps_plf *f, const struct ps_plf *g, double epsilon);
ps_sum_summand5_fn ps_plf_sum_summand5_avx2;
double ps_plf_crossing_avx2(const struct ps_plf_sseg *lo, const struct ps_plf_sseg *hi, double x0, double x1);
void ps_plf_scale_argument5_avx512(struct ps_plf_buf *dst, const struct ps_plf *src, double scale);
void ps_plf_copy_segments5_avx512(struct ps_plf_buf *dst, const struct ps_plf *src);
void ps_plf_compress5_avx512(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon);
void ps_plf_compose_build5_avx512(struct ps_plf_buf *dst, const struct ps_plf *f, const double *pairs,
                                  int total);
void ps_plf_compose_compress5_avx512(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                                     const struct ps_plf *f, const struct ps_plf *g, double epsilon);
ps_sum_summand5_fn ps_plf_sum_summand5_avx512;
#endif

#endif
