/* fs_operation.h — the operations' fast path of the fair share functions (fs_operation_fsbs.c). */
#ifndef PS_CORE_FS_OPERATION_H
#define PS_CORE_FS_OPERATION_H

#include <stdbool.h>

#include "core/fs_internal.h"

/* An operation's fair share by fit factor, into dst (cleared; a stack builder of 8 points never
 * grows: 0, up to five fit factors and 2). */
void fs_operation_fsbff(const struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf_buf *dst);

/* An operation's fair share by suggestion, the same points as the generic chain of
 * fs_element_fsbs, left in u->b[5] and *out. False when the operation needs the generic chain
 * (then nothing the caller reads was changed) or when an allocation failed (then u->oom). */
bool fs_operation_fsbs(struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf *out);

/* Which way fs_operation_fsbs_path went (for the tests that compare each with the generic chain). */
enum {
    FS_OP_PATH_SATURATED,
    FS_OP_PATH_IDLE,
    FS_OP_PATH_FUSED,
    FS_OP_PATH_GANG,
    FS_OP_PATH_GENERIC_COMPONENT,  /* FUSED with some component from ps_plf_max_fit_factor_component */
    FS_OP_PATH_IDLE_LINE,          /* an idle operation's result written directly (idle_line) */
    FS_OP_PATH_SATURATED_KEPT,     /* SATURATED without the compression (saturated_kinks_kept) */
    FS_OP_PATH_COUNT
};
bool fs_operation_fsbs_path(struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf *out, int *path);

#endif
