/* tree_order.h — the depth-first order in which a tree is printed as an indented table
 * (`fair-share --format table`, the CLI's dry-run diff): each parent before its children,
 * children in index order, with each row's depth. */
#ifndef PS_IO_TREE_ORDER_H
#define PS_IO_TREE_ORDER_H

/* parent[i] is i's parent index, or -1 for a root (several roots: a forest, in index order).
 * Parents need not come before their children. A parent index outside [0, n), or a chain that
 * loops, makes the node a root, so every node is printed once. order[] receives the n indices
 * in print order and depth[i] the depth of node i (0 for a root). Returns 0, or -1 when out of
 * memory (order and depth are then unset). */
int ps_tree_order(int n, const int *parent, int *order, int *depth);

#endif
