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
 * ps_plf_emit_start on a cleared dim-1 buffer, end with ps_plf_emit_end. */
struct ps_plf_emitter {
    struct ps_plf_buf *b;
    double *o;
    int n, cap;
    double lx, lv, mx, mv; /* the points n - 2 and n - 1 */
};

static inline struct ps_plf_emitter ps_plf_emit_start(struct ps_plf_buf *b)
{
    struct ps_plf_emitter e = {b, b->a, b->n, b->cap, 0.0, 0.0, 0.0, 0.0};
    return e;
}

static inline void ps_plf_emit_end(struct ps_plf_emitter *e)
{
    e->b->n = e->n;
}

static __attribute__((noinline, unused)) void ps_plf_emit_slow(struct ps_plf_emitter *e, double x, double v)
{
    int n = e->n;
    if (n >= 2) {
        bool right_vertical_x = e->mx == x, right_flat = e->mv == v;
        if (right_vertical_x && right_flat)
            return;
        bool left_vertical_x = e->lx == e->mx, left_flat = e->lv == e->mv;
        if ((left_vertical_x && left_flat) || (left_vertical_x && right_vertical_x) ||
            (!left_vertical_x && left_flat && !right_vertical_x && right_flat)) {
            e->o[2 * n - 2] = x;
            e->o[2 * n - 1] = v;
            e->mx = x;
            e->mv = v;
            return;
        }
    }
    if (n >= e->cap) {
        e->b->n = n;
        if (!ps_plf_buf_reserve(e->b, n + 1))
            return;
        e->o = e->b->a;
        e->cap = e->b->cap;
    }
    e->o[2 * n] = x;
    e->o[2 * n + 1] = v;
    e->lx = e->mx;
    e->lv = e->mv;
    e->mx = x;
    e->mv = v;
    e->n = n + 1;
}

PLF_INLINE void ps_plf_emit(struct ps_plf_emitter *e, double x, double v)
{
    int n = e->n;
    if (__builtin_expect(n >= 2 && n < e->cap && e->mx != x && e->mv != v && !(e->lx == e->mx && e->lv == e->mv),
                         1)) {
        e->o[2 * n] = x;
        e->o[2 * n + 1] = v;
        e->lx = e->mx;
        e->lv = e->mv;
        e->mx = x;
        e->mv = v;
        e->n = n + 1;
        return;
    }
    ps_plf_emit_slow(e, x, v);
}

#endif
