/* plf_emit.h — the builder's add_point for scalar functions with its state in registers (not a
 * public API; used by the pointwise minimum and the max fit factor components). */
#ifndef PS_CORE_PLF_EMIT_H
#define PS_CORE_PLF_EMIT_H

#include <stdbool.h>

#include "core/plf_impl.h"

/* buf_add_point_d for dim 1 (append_d's merge rules, a raw push for the first two points) with
 * the last two points in registers. The common case, a point that differs from the last in both
 * argument and value after two points that differ in one of them, with room left, is a push
 * behind one predicted branch; the rest takes the rules one by one and grows the buffer exactly
 * as push_raw_d does (so the buffers keep the sizes the builder gives them). Start with
 * ps_plf_emit_start on a dim-1 buffer (cleared, or holding points the builder would keep: its
 * last two are loaded), end with ps_plf_emit_end. */

/* append_d's merge rules for (x, v) after the points (lx, lv) and (mx, mv): drop it (it repeats
 * the last point), replace the last point with it (that point would be a point segment, or the
 * middle of two verticals or of two flat segments), or push it. */
enum ps_plf_emit_rule { PS_PLF_EMIT_PUSH, PS_PLF_EMIT_DROP, PS_PLF_EMIT_REPLACE };

static inline enum ps_plf_emit_rule ps_plf_emit_rule(double lx, double lv, double mx, double mv, double x,
                                                     double v)
{
    bool right_vertical_x = mx == x, right_flat = mv == v;
    if (right_vertical_x && right_flat)
        return PS_PLF_EMIT_DROP;
    bool left_vertical_x = lx == mx, left_flat = lv == mv;
    if ((left_vertical_x && left_flat) || (left_vertical_x && right_vertical_x) ||
        (!left_vertical_x && left_flat && !right_vertical_x && right_flat))
        return PS_PLF_EMIT_REPLACE;
    return PS_PLF_EMIT_PUSH;
}

struct ps_plf_emitter;
static inline bool ps_plf_emit_grow(struct ps_plf_emitter *e, int n);

#if defined(__SSE2__)
#include <emmintrin.h>

/* The last two points as (x, v) vectors: the fast path's four comparisons are two packed
 * compares (no NaN branches per compare) and the push one 16-byte store. Packed compares give
 * what the scalar ones give lane by lane (cmpneq is true on NaN, as !=). */
struct ps_plf_emitter {
    struct ps_plf_buf *b;
    double *o;
    int n, cap;
    __m128d l, m; /* the points n - 2 and n - 1 */
};

static inline struct ps_plf_emitter ps_plf_emit_start(struct ps_plf_buf *b)
{
    struct ps_plf_emitter e = {b, b->a, b->n, b->cap, _mm_setzero_pd(), _mm_setzero_pd()};
    if (__builtin_expect(b->n > 0, 0)) {
        e.m = _mm_loadu_pd(b->a + 2 * b->n - 2);
        if (b->n > 1)
            e.l = _mm_loadu_pd(b->a + 2 * b->n - 4);
    }
    return e;
}

static inline void ps_plf_emit_end(struct ps_plf_emitter *e)
{
    e->b->n = e->n;
}

static __attribute__((noinline, unused)) void ps_plf_emit_slow(struct ps_plf_emitter *e, __m128d p)
{
    int n = e->n;
    double x = _mm_cvtsd_f64(p), v = _mm_cvtsd_f64(_mm_unpackhi_pd(p, p));
    if (n >= 2) {
        double lx = _mm_cvtsd_f64(e->l), lv = _mm_cvtsd_f64(_mm_unpackhi_pd(e->l, e->l));
        double mx = _mm_cvtsd_f64(e->m), mv = _mm_cvtsd_f64(_mm_unpackhi_pd(e->m, e->m));
        enum ps_plf_emit_rule rule = ps_plf_emit_rule(lx, lv, mx, mv, x, v);
        if (rule == PS_PLF_EMIT_DROP)
            return;
        if (rule == PS_PLF_EMIT_REPLACE) {
            _mm_storeu_pd(e->o + 2 * n - 2, p);
            e->m = p;
            return;
        }
    }
    if (n >= e->cap && !ps_plf_emit_grow(e, n))
        return;
    _mm_storeu_pd(e->o + 2 * n, p);
    e->l = e->m;
    e->m = p;
    e->n = n + 1;
}

PLF_INLINE void ps_plf_emit(struct ps_plf_emitter *e, double x, double v)
{
    int n = e->n;
    __m128d p = _mm_unpacklo_pd(_mm_set_sd(x), _mm_set_sd(v));
    int differ = _mm_movemask_pd(_mm_cmpneq_pd(e->m, p));
    int left_same = _mm_movemask_pd(_mm_cmpeq_pd(e->l, e->m));
    /* One branch, the conditions combined without jumps; 2 <= n < cap as one unsigned compare
     * (n <= cap always: it also admits n = 0 with cap = 1, where the slow path would push the
     * point the same way, no rule applying before two points). */
    bool fast = ((unsigned)(n - 2) < (unsigned)(e->cap - 2)) & (differ == 3) & (left_same != 3);
    if (__builtin_expect(fast, 1)) {
        _mm_storeu_pd(e->o + 2 * n, p);
        e->l = e->m;
        e->m = p;
        e->n = n + 1;
        return;
    }
    ps_plf_emit_slow(e, p);
}

#else

struct ps_plf_emitter {
    struct ps_plf_buf *b;
    double *o;
    int n, cap;
    double lx, lv, mx, mv; /* the points n - 2 and n - 1 */
};

static inline struct ps_plf_emitter ps_plf_emit_start(struct ps_plf_buf *b)
{
    struct ps_plf_emitter e = {b, b->a, b->n, b->cap, 0.0, 0.0, 0.0, 0.0};
    if (b->n > 0) {
        e.mx = b->a[2 * b->n - 2];
        e.mv = b->a[2 * b->n - 1];
        if (b->n > 1) {
            e.lx = b->a[2 * b->n - 4];
            e.lv = b->a[2 * b->n - 3];
        }
    }
    return e;
}

static inline void ps_plf_emit_end(struct ps_plf_emitter *e)
{
    e->b->n = e->n;
}

/* Appends (x, v) as point n (room checked by the caller) and shifts the last two. */
PLF_INLINE void ps_plf_emit_append(struct ps_plf_emitter *e, int n, double x, double v)
{
    e->o[2 * n] = x;
    e->o[2 * n + 1] = v;
    e->lx = e->mx;
    e->lv = e->mv;
    e->mx = x;
    e->mv = v;
    e->n = n + 1;
}

static __attribute__((noinline, unused)) void ps_plf_emit_slow(struct ps_plf_emitter *e, double x, double v)
{
    int n = e->n;
    if (n >= 2) {
        enum ps_plf_emit_rule rule = ps_plf_emit_rule(e->lx, e->lv, e->mx, e->mv, x, v);
        if (rule == PS_PLF_EMIT_DROP)
            return;
        if (rule == PS_PLF_EMIT_REPLACE) {
            e->o[2 * n - 2] = x;
            e->o[2 * n - 1] = v;
            e->mx = x;
            e->mv = v;
            return;
        }
    }
    if (n >= e->cap && !ps_plf_emit_grow(e, n))
        return;
    ps_plf_emit_append(e, n, x, v);
}

PLF_INLINE void ps_plf_emit(struct ps_plf_emitter *e, double x, double v)
{
    int n = e->n;
    if (__builtin_expect(n >= 2 && n < e->cap && e->mx != x && e->mv != v && !(e->lx == e->mx && e->lv == e->mv),
                         1)) {
        ps_plf_emit_append(e, n, x, v);
        return;
    }
    ps_plf_emit_slow(e, x, v);
}

#endif /* __SSE2__ */

/* push_raw_d's growth for the point n of a full buffer; false (the point is lost and the
 * builder reports oom) when it fails. */
static inline bool ps_plf_emit_grow(struct ps_plf_emitter *e, int n)
{
    e->b->n = n;
    if (!ps_plf_buf_reserve(e->b, n + 1))
        return false;
    e->o = e->b->a;
    e->cap = e->b->cap;
    return true;
}

#endif
