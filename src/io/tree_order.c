/* tree_order.c — depth-first print order of a tree (tree_order.h). */
#include "io/tree_order.h"

#include <stdlib.h>

/* par[i] = parent[i] when i reaches a root through valid parents, else -1 (a parent out of
 * range, or a loop: the loop's nodes and those under them become roots). Linear: each node's
 * chain is walked once (mark: 0 unseen, 1 on the current walk, 2 rooted, 3 not). */
static void check_parents(int n, const int *parent, int *par, unsigned char *mark, int *path)
{
    for (int i = 0; i < n; i++) {
        int len = 0, u = i;
        unsigned char verdict;
        for (;;) {
            if (mark[u] >= 2) {
                verdict = mark[u];
                break;
            }
            if (mark[u] == 1) {   /* a loop */
                verdict = 3;
                break;
            }
            mark[u] = 1;
            path[len++] = u;
            int p = parent[u];
            if (p < 0 || p >= n) {
                verdict = p < 0 ? 2 : 3;
                break;
            }
            u = p;
        }
        for (int k = 0; k < len; k++) {
            mark[path[k]] = verdict;
            par[path[k]] = verdict == 2 ? parent[path[k]] : -1;
        }
    }
}

int ps_tree_order(int n, const int *parent, int *order, int *depth)
{
    if (n <= 0)
        return 0;
    int *par = malloc((size_t)n * sizeof *par);
    int *first = calloc((size_t)n + 1, sizeof *first);   /* children of u: child[first[u]..] */
    int *child = malloc((size_t)n * sizeof *child);
    int *stack = malloc((size_t)n * sizeof *stack);
    unsigned char *mark = calloc((size_t)n, 1);
    if (!par || !first || !child || !stack || !mark) {
        free(mark);
        free(par);
        free(first);
        free(child);
        free(stack);
        return -1;
    }
    check_parents(n, parent, par, mark, stack);   /* stack: scratch for the walks */
    for (int i = 0; i < n; i++)
        if (par[i] >= 0)
            first[par[i] + 1]++;
    for (int i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (int i = 0; i < n; i++)
        if (par[i] >= 0)
            child[first[par[i]]++] = i;
    /* first[u] is now the end of u's children; their start is first[u - 1] (0 for u = 0). */
    int top = 0, out = 0;
    for (int r = n - 1; r >= 0; r--)   /* roots, the first on top */
        if (par[r] < 0) {
            stack[top++] = r;
            depth[r] = 0;
        }
    while (top > 0) {
        int u = stack[--top];
        order[out++] = u;
        int start = u == 0 ? 0 : first[u - 1];
        for (int k = first[u] - 1; k >= start; k--) {
            depth[child[k]] = depth[u] + 1;
            stack[top++] = child[k];
        }
    }
    free(mark);
    free(par);
    free(first);
    free(child);
    free(stack);
    return 0;
}
