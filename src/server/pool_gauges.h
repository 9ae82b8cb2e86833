/* pool_gauges.h — each pool's /metrics gauges (pool_gauges.c), set after a tree's fair share
 * update and removed with the tree. */
#ifndef PS_SERVER_POOL_GAUGES_H
#define PS_SERVER_POOL_GAUGES_H

#include <stdint.h>

struct ps_service;
struct ps_svc_tree_state;
struct ps_svc_gauge_cache;
struct ps_pool_tree;

/* Sets each pool's gauges of tree after an update, at most once a second (pool_gauges.c). */
void ps_svc_pool_gauges(struct ps_service *svc, struct ps_svc_tree_state *ts,
                        struct ps_pool_tree *tree, int64_t now_ms);
void ps_svc_gauge_cache_free(struct ps_svc_gauge_cache *c);
/* Removes ts's gauge series (its pools', its pool and node counts) from /metrics: a tree
 * the API removes takes them with it. (ps_svc_remove_tree_state alone keeps them: at
 * shutdown the registry goes with the service, after a reload the trees find them again.) */
void ps_svc_pool_gauges_remove(struct ps_service *svc, struct ps_svc_tree_state *ts);

#endif
