/* plf_min.h — the walk of ps_plf_pointwise_min on raw (x, v) arrays (not a public API; shared
 * with the operations' fold in fs_operation_fsbs.c, which runs it on stack buffers). */
#ifndef PS_CORE_PLF_MIN_H
#define PS_CORE_PLF_MIN_H

#include "core/plf.h"

/* The pointwise minimum of the scalar functions fa (fn points) and ga (gn points), appended to
 * the cleared dim-1 buffer dst through the builder's rules. skip > 0 (fs_operation_fsbs'
 * common_prefix: f's and g's points 0..skip are the same and the walk over them would copy f's
 * points 0..skip-1) copies those points and starts the walk at x_skip in the state it would have
 * reached there. A buffer with room for every point it gets (cap) is never grown. */
void ps_plf_min_walk(struct ps_plf_buf *dst, const double *fa, int fn, const double *ga, int gn, int skip);

#endif
