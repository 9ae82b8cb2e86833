/* ps_plf_max_fit_factor_component (plf.c: the transposed build, then narrowing, trimming and
 * shifting in place in the output buffer) against a verbatim copy of the form it replaced
 * (three buffers: transposed, narrowed, shifted; lead3 d7365b0, which test_plf_reference.c
 * checks against upstream's chain of operations), bit for bit, on random share functions with jumps, flat components, equal points, -0.0 and +0.0
 * values and guarantees, limits and guarantees at, between and outside the values, huge values
 * next to small ones (two arguments that collapse under the shift by -g) and many points. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/plf.h"
#include "core/plf_emit.h"
#include "core/plf_impl.h"
#include "test_rng.h"

/* ---- the reference: ps_plf_max_fit_factor_component of src/core/plf.c at lead3 d7365b0 ----- */

/* A copy on purpose (as are its helpers, which resemble plf.c's): the differential reference
 * must not follow later changes of the kernel it checks, so do not replace it with the src/core
 * code it looks like. */

static inline double *bpt(struct ps_plf_buf *b, int i)
{
    return b->a + (size_t)i * (size_t)(b->dim + 1);
}

static int left_segment(const struct ps_plf *f, double x)
{
    int lo = 1, hi = f->n - 1; /* search points 1..n-1 for the first with X >= x */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (X(f, mid) < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

static int segment_at(const struct ps_plf *f, double x)
{
    int i = left_segment(f, x);
    if (i + 1 <= f->n - 2 && X(f, i + 1) == x && seg_vertical(f, i + 1))
        i++;
    return i;
}

/* The first point index with x > value (n if none). */
static int first_point_above(const struct ps_plf *f, double value)
{
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (X(f, mid) <= value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void ref_component(struct ps_plf_buf *t1, struct ps_plf_buf *t2, struct ps_plf_buf *dst,
                                     const struct ps_plf *fsbff, int r, double limit, double guarantee)
{
    /* Transposition commutes with the builder's merges (they are symmetric in vertical and
     * horizontal), so the component is built transposed in one pass. */
    ps_plf_buf_clear(t1, 1);
    if (fsbff->n >= 2) {
        /* push_segment of each segment: the first adds both ends, the others their right end. */
        struct ps_plf_emitter e = ps_plf_emit_start(t1);
        for (int i = 0; i < fsbff->n; i++)
            ps_plf_emit(&e, V(fsbff, i)[r], X(fsbff, i));
        ps_plf_emit_end(&e);
    }
    struct ps_plf t = ps_plf_buf_view(t1);
    if (t.n < 2)
        return;
    double lv = V(fsbff, 0)[r], rv = V(fsbff, fsbff->n - 1)[r];
    limit = limit < lv ? lv : limit;
    limit = rv < limit ? rv : limit;
    double g = guarantee < lv ? lv : guarantee;
    g = limit < g ? limit : g;

    /* Narrow: the limits at g, every point strictly inside, the limits at limit; a point that
     * the sampling of upstream's Narrow would add twice is dropped by the builder anyway. Only
     * the junctions go through the builder's merge rules: the points in between come from a
     * canonical function, where no merge applies, and are copied. */
    ps_plf_buf_clear(t2, 1);
    double l, rr;
    seg_limits(&t, segment_at(&t, g), g, &l, &rr);
    l += 0.0;
    rr += 0.0;
    buf_add_point_d(t2, 1, g, &l);
    buf_add_point_d(t2, 1, g, &rr);
    if (limit > g) {
        int j = first_point_above(&t, g);
        int end = j;
        while (end < t.n && X(&t, end) < limit)
            end++;
        /* Two points through the builder: rounding at g can make the first piece flat where
         * the original was not, and then it merges with a flat piece after it. */
        for (int first = 0; first < 2 && j < end; first++, j++) {
            double v = V(&t, j)[0] + 0.0;
            buf_add_point_d(t2, 1, X(&t, j), &v);
        }
        if (j < end && ps_plf_buf_reserve(t2, t2->n + (end - j))) {
            double *out = bpt(t2, t2->n);
            for (int q = j; q < end; q++) {
                *out++ = X(&t, q);
                *out++ = V(&t, q)[0] + 0.0;
            }
            t2->n += end - j;
        }
        seg_limits(&t, segment_at(&t, limit), limit, &l, &rr);
        l += 0.0;
        rr += 0.0;
        buf_add_point_d(t2, 1, limit, &l);
        buf_add_point_d(t2, 1, limit, &rr);
    }

    /* TrimLeft without moving the points: a vertical first segment is skipped, or collapsed
     * to its top when it is the only one. */
    struct ps_plf nw = ps_plf_buf_view(t2);
    if (nw.n >= 2 && seg_vertical(&nw, 0)) {
        if (nw.n > 2) {
            nw.a += 2;
            nw.n--;
        } else {
            t2->a[1] = t2->a[3];
        }
    }

    /* Shift by -g. The values do not change, so neither do horizontal segments; the builder's
     * rules can only fire where two different arguments round to the same one, so the points
     * are mapped directly unless that happens (and g == 0 maps them to themselves). */
    ps_plf_buf_clear(dst, 1);
    bool collapsed = false;
    for (int i = 0; i + 1 < nw.n && g != 0.0 && !collapsed; i++)
        collapsed = X(&nw, i) != X(&nw, i + 1) && X(&nw, i) + -g == X(&nw, i + 1) + -g;
    if (collapsed || nw.n < 2) {
        for (int i = 0; i + 1 < nw.n; i++) {
            double a = V(&nw, i)[0] + 0.0, b = V(&nw, i + 1)[0] + 0.0;
            buf_push_segment_d(dst, 1, X(&nw, i) + -g, &a, X(&nw, i + 1) + -g, &b);
        }
    } else if (ps_plf_buf_reserve(dst, nw.n)) {
        double *out = dst->a;
        for (int i = 0; i < nw.n; i++) {
            *out++ = X(&nw, i) + -g;
            *out++ = V(&nw, i)[0] + 0.0;
        }
        dst->n = nw.n;
    }
    /* Extend to 1 with the last value (a copy through a builder is the identity, so the tail
     * is appended in place) and trim. */
    if (dst->n >= 2) {
        double rb = bpt(dst, dst->n - 1)[0];
        if (rb < 1.0) {
            double v = bpt(dst, dst->n - 1)[1];
            buf_push_segment_d(dst, 1, rb, &v, 1.0, &v);
        }
    }
    ps_plf_trim_right(dst);
}

/* ---- random share functions ----------------------------------------------------------------- */

static uint64_t rng = 0x243f6a8885a308d3ull;

/* The next value of a component (share functions are non-decreasing in every component):
 * flat (a zero may change its sign), the next double, a grid step, and (wild) a huge step
 * beside small values, so that two arguments collapse under the shift by -g. */
static double next_value(int wild, double prev)
{
    switch (rng_next(&rng) % (wild ? 7 : 5)) {
    case 0:
        return prev;
    case 1:
        return prev == 0.0 ? (rng_next(&rng) % 2 ? 0.0 : -0.0) : prev;
    case 2:
        return nextafter(prev, INFINITY);
    case 5:
        return prev + 1e17;
    case 6:
        return prev + 0x1p-54;
    default:
        return prev + (double)(1 + rng_next(&rng) % 8) / 32.0;
    }
}

static double first_value(int wild)
{
    static const double s[] = {0.0, -0.0, 0.0, 0.125, -0.25, 0.3};
    return wild ? s[rng_next(&rng) % 6] : s[rng_next(&rng) % 4];
}

static void random_fsbff(struct ps_plf_buf *b, int wild, int max_points)
{
    ps_plf_buf_clear(b, 5);
    int n = 2 + (int)(rng_next(&rng) % (uint64_t)(max_points - 1));
    double v[5];
    for (int k = 0; k < 5; k++)
        v[k] = first_value(wild);
    double x = rng_next(&rng) % 3 == 0 ? 0.25 : 0.0;
    ps_plf_add_point(b, x, v);
    for (int i = 1; i < n; i++) {
        if (rng_next(&rng) % 5 != 0) /* else a jump */
            x += (double)(1 + rng_next(&rng) % 8) / (double)(4 * max_points);
        if (x > 1.0)
            x = 1.0;
        int moving = (int)(rng_next(&rng) % 5);
        for (int k = 0; k < 5; k++)
            if (k == moving || rng_next(&rng) % 3 == 0)
                v[k] = next_value(wild, v[k]);
        ps_plf_add_point(b, x, v);
    }
    if (b->n < 2) {
        v[0] = v[0] + 1.0;
        ps_plf_add_point(b, 1.0, v);
    }
}

static double pick(double lv, double rv, int wild)
{
    switch (rng_next(&rng) % 8) {
    case 0:
        return lv;
    case 1:
        return rv;
    case 2:
        return lv - 1.0;
    case 3:
        return rv + 1.0;
    case 4:
        return wild && rng_next(&rng) % 2 ? -0.0 : 0.0;
    default:
        return lv + (rv - lv) * (double)(rng_next(&rng) % 9) / 8.0;
    }
}

static void check(int rounds, int wild, int max_points)
{
    bool oom = false;
    struct ps_plf_ctx ctx;
    ps_plf_ctx_init(&ctx);
    struct ps_plf_buf in, a, d, e, want, t1, t2, got;
    struct ps_plf_buf *all[] = {&in, &a, &d, &e, &want, &t1, &t2, &got};
    for (int i = 0; i < 8; i++)
        ps_plf_buf_init(all[i], 1, &oom);
    for (int round = 0; round < rounds; round++) {
        random_fsbff(&in, wild, max_points);
        struct ps_plf fsbff = ps_plf_buf_view(&in);
        if (fsbff.n < 2)
            continue;
        int r = (int)(rng_next(&rng) % 5);
        double lv0 = ps_plf_left_value(&fsbff)[r], rv0 = ps_plf_right_value(&fsbff)[r];
        double limit = pick(lv0, rv0, wild), guarantee = pick(lv0, rv0, wild);
        ps_plf_buf_clear(&want, 1);
        ref_component(&a, &d, &want, &fsbff, r, limit, guarantee);
        /* fused */
        ps_plf_max_fit_factor_component(&t1, &t2, &got, &fsbff, r, limit, guarantee);
        assert_false(oom || ctx.oom);
        if (want.n != got.n || memcmp(want.a, got.a, (size_t)want.n * 2 * sizeof(double)) != 0) {
            if (getenv("MFFC_DUMP")) {
                for (int i = 0; i < fsbff.n; i++)
                    print_message("in %a: %a\n", fsbff.a[6 * i], fsbff.a[6 * i + 1 + r]);
                for (int i = 0; i < want.n; i++)
                    print_message("want %a %a\n", want.a[2 * i], want.a[2 * i + 1]);
                for (int i = 0; i < got.n; i++)
                    print_message("got %a %a\n", got.a[2 * i], got.a[2 * i + 1]);
            }
            fail_msg("round %d (wild %d, r %d, limit %a, guarantee %a): %d points wanted, %d got, or different bits",
                     round, wild, r, limit, guarantee, want.n, got.n);
        }
    }
    for (int i = 0; i < 8; i++)
        ps_plf_buf_release(all[i]);
    ps_plf_ctx_release(&ctx);
}

static void test_component_matches_chain(void **state)
{
    (void)state;
    check(100000, 0, 12);
}

static void test_component_matches_chain_wild(void **state)
{
    (void)state;
    check(100000, 1, 12);
}

static void test_component_matches_chain_many_points(void **state)
{
    (void)state;
    check(3000, 1, 600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_component_matches_chain),
        cmocka_unit_test(test_component_matches_chain_wild),
        cmocka_unit_test(test_component_matches_chain_many_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
