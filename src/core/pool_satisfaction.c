#include "core/pool_satisfaction.h"

#include <stdlib.h>

#include "core/digest.h"
#include "core/operation.h"

/* The row of pool p: 0 for the root, its index + 1 otherwise. */
static int row_of(const struct ps_pool *p)
{
    return p->is_root ? 0 : p->index + 1;
}

static bool counted(const struct ps_tree_op *op)
{
    return op->dynamic.valid && op->fs_index >= 0 && op->pool;
}

int ps_pool_satisfaction_quantiles(const struct ps_pool_tree *tree, double **out, int *quantile_count,
                                   struct ps_error *err)
{
    const struct ps_tree_config *cfg = ps_pool_tree_config(tree);
    const struct ps_double_list *q = &cfg->per_pool_satisfaction_profiling_quantiles;
    *out = NULL;
    *quantile_count = q->count;
    if (q->count == 0)
        return 0;
    int rows = ps_pool_tree_pool_count(tree) + 1;
    int ops = ps_pool_tree_operation_count(tree);
    struct ps_histogram_digest_config dcfg;
    ps_tree_config_satisfaction_digest(cfg, &dcfg);
    struct ps_histogram_digest digest = {0};
    int rc = ps_histogram_digest_init(&digest, &dcfg, err);
    if (rc != 0)
        return rc;
    /* samples grouped by row: start[r] .. start[r + 1] in samples */
    int *start = calloc((size_t)rows + 1, sizeof *start);
    int *fill = calloc((size_t)rows, sizeof *fill);
    double *result = malloc((size_t)rows * (size_t)q->count * sizeof *result);
    double *samples = NULL;
    if (!start || !fill || !result)
        goto nomem;
    for (int k = 0; k < ops; k++) {
        const struct ps_tree_op *op = ps_pool_tree_operation_at(tree, k);
        if (counted(op))
            for (const struct ps_pool *p = op->pool; p; p = p->parent)
                start[row_of(p) + 1]++;
    }
    for (int r = 0; r < rows; r++)
        start[r + 1] += start[r];
    if (start[rows] > 0 && !(samples = malloc((size_t)start[rows] * sizeof *samples)))
        goto nomem;
    for (int k = 0; k < ops; k++) {
        const struct ps_tree_op *op = ps_pool_tree_operation_at(tree, k);
        if (!counted(op))
            continue;
        for (const struct ps_pool *p = op->pool; p; p = p->parent) {
            int r = row_of(p);
            samples[start[r] + fill[r]++] = op->dynamic.satisfaction_ratio;
        }
    }
    for (int r = 0; r < rows; r++) {
        ps_histogram_digest_reset(&digest);
        for (int i = start[r]; i < start[r + 1]; i++)
            ps_histogram_digest_add_sample(&digest, samples[i]);
        for (int j = 0; j < q->count; j++)
            result[(size_t)r * (size_t)q->count + (size_t)j] =
                ps_histogram_digest_quantile(&digest, q->items[j]);
    }
    free(samples);
    free(fill);
    free(start);
    ps_histogram_digest_release(&digest);
    *out = result;
    return 0;
nomem:
    free(samples);
    free(result);
    free(fill);
    free(start);
    ps_histogram_digest_release(&digest);
    return ps_error_set(err, PS_ENOMEM, "pool satisfaction digest: out of memory");
}
