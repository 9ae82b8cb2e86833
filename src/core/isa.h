/* isa.h — which vector instruction set the engine's kernels use.
 *
 * The fair share kernels have a baseline (x86-64 SSE2) form and, where it pays, forms compiled
 * for wider vectors (functions with __attribute__((target(...)))). Every form performs the same
 * IEEE operations on the same operands in the same order (no fused multiply-add: the build has
 * -ffp-contract=off), so all give the same bits; the choice changes only the speed. The level is
 * detected from the CPU on first use and selects the kernel table (isa_kernels.h) once; the
 * environment variable POOLSCHED_ISA=base|avx2 lowers it for the whole process (CI runs the
 * engine's tests at the portable level so), and a shell may cap it (`poolsched bench fair-share
 * --isa`, the tests that compare the forms).
 */
#ifndef PS_CORE_ISA_H
#define PS_CORE_ISA_H

enum ps_isa {
    PS_ISA_BASE = 0,    /* x86-64 baseline (SSE2), or any other architecture */
    PS_ISA_AVX2 = 1,    /* AVX2 (256-bit vectors) */
    PS_ISA_AVX512 = 2,  /* AVX-512 F, VL, DQ (512-bit vectors, masks) */
};

/* The level the kernels use: the CPU's, capped by ps_isa_cap. */
enum ps_isa ps_isa_level(void);

/* The level the CPU supports, lowered by POOLSCHED_ISA when set. */
enum ps_isa ps_isa_detected(void);

/* Caps the level at max (PS_ISA_AVX512 lifts the cap) and selects that level's kernel table.
 * Call before updates: an update in flight may mix the tables (each gives the same bits). */
void ps_isa_cap(enum ps_isa max);

/* "base", "avx2", "avx512"; ps_isa_parse returns -1 for an unknown name. */
const char *ps_isa_name(enum ps_isa isa);
int ps_isa_parse(const char *name);

#endif
