/* persist.h — the state's documents in the store (persist.c, persist_tree.c): each tree,
 * operation and job as a JSON document put through the journal (journal.h), the state loaded
 * from the store at start, and rebuilt from it after a failed commit (service_life.c). The API
 * faces, the engine loop and the model reach the store only through here, journal.h and
 * store_mirror.h (tests/scripts/room_includes.sh). */
#ifndef PS_SERVER_PERSIST_H
#define PS_SERVER_PERSIST_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_svc_op;
struct ps_svc_job;
struct ps_pool_tree;
struct ps_persist_cache;

void ps_persist_tree(struct ps_service *svc, const char *tree);   /* journal put */
void ps_persist_tree_removed(struct ps_service *svc, const char *tree);
json_t *ps_persist_tree_doc(struct ps_service *svc, struct ps_pool_tree *tree);
/* The tree document's text (NULL when out of memory); cache (may be NULL) keeps each pool's
 * config text between calls and is replaced by one holding the tree's current pools. */
char *ps_persist_tree_text(struct ps_pool_tree *tree, struct ps_persist_cache **cache);
void ps_persist_cache_free(struct ps_persist_cache *c);
/* A hash of what a fair share update changes in the tree's document: each stored pool's name,
 * accumulated_resource_volume and below_fair_share_since. ps_persist_tree notes it in the
 * tree's state; the engine loop writes the document again only when it moved. */
uint64_t ps_persist_tree_dynamic_hash(struct ps_pool_tree *tree);
/* Also notes in op which below_fair_share_since the document carries (since_persisted). */
void ps_persist_op(struct ps_service *svc, struct ps_svc_op *op);
json_t *ps_persist_op_doc(struct ps_service *svc, const struct ps_svc_op *op);
/* Whether some tree's below_fair_share_since of op differs from what its last document
 * carries (unknown counts as none) while op is starving there or the document carries one:
 * the engine loop's refresh after an update. */
bool ps_persist_op_since_changed(const struct ps_svc_op *op);
/* A finished job's put also queues it for leaving memory (ps_job_archive_retire). */
void ps_persist_job(struct ps_service *svc, struct ps_svc_job *job);
json_t *ps_persist_job_doc(const struct ps_svc_job *job);
/* A job from its stored document (not registered, alloc_id 0), or NULL when the document is
 * malformed or names an operation or task not in memory. Caller frees (ps_svc_job_free). */
struct ps_svc_job *ps_persist_job_from_doc(struct ps_service *svc, const json_t *doc);
void ps_persist_meta(struct ps_service *svc);
/* The stored document meta/<key> (a JSON map; caller decrefs), read from where the state loads
 * (the store, or its mirror while the store is down: store_mirror.h): 0 with *doc NULL when it
 * was never stored; PS_EINVAL when it is not a JSON map; the store's errors. Under svc->mu,
 * store_mu not held. Every meta reader at load goes through here. */
int ps_persist_meta_get(struct ps_service *svc, const char *key, json_t **doc,
                        struct ps_error *err);
int ps_persist_load(struct ps_service *svc, struct ps_error *err);
/* Rebuilds the in-memory state (trees, operations, jobs) from the store, as a restart would:
 * the journal's rollback after a failed commit (journal.c). Nodes stay, registered again, and
 * lose their jobs until the stored running jobs re-attach. Under svc->mu (service_life.c). */
int ps_svc_state_reload(struct ps_service *svc, struct ps_error *err);
/* 0, or after a failed reload: tries again, and on failure sets err to PS_EUNAVAIL (requests
 * must not act on, or show, a partial state). Under svc->mu. */
int ps_svc_state_check(struct ps_service *svc, struct ps_error *err);

#endif
