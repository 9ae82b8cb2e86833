/* op_tentative.h — tentative pool trees (op_tentative.c, core/tentative.h): which of an
 * operation's trees are tentative, the sample bound on its jobs there, and the periodic check
 * that bans slow trees. Under svc->mu. */
#ifndef PS_SERVER_OP_TENTATIVE_H
#define PS_SERVER_OP_TENTATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_svc_op;
struct ps_svc_job;
struct ps_operation_spec;

/* Tentative pool trees (op_tentative.c, core/tentative.h). setup: at a start (restore NULL)
 * or a restore (the stored operation document), op's tentative trees from its parsed spec and
 * the scheduler config's defaults. Left out (banned): those in erased, at a start those whose
 * pools refuse it (appended to erased) or that take no vanilla operations, at a restore those
 * the operation was not in (its pool_per_tree). 0 or the spec's error (upstream's
 * ParsePoolTrees). */
int ps_svc_op_tentative_setup(struct ps_service *svc, struct ps_svc_op *op,
                              const struct ps_operation_spec *parsed, const json_t *restore,
                              json_t *erased, struct ps_error *err);
bool ps_svc_tentative_is(const struct ps_svc_op *op, const char *tree);
/* Whether op may start a job in membership slot now (the sample bound); a refusal counts as
 * the deactivation reason saturated_in_tentative_tree. */
bool ps_svc_tentative_may_start(struct ps_svc_op *op, int slot);
/* The pending job count the scheduling loop sees for op in membership slot: pending, or 0 while
 * the slot is a tentative tree whose sample runs (counted as saturated_in_tentative_tree), so
 * the loop offers it nothing there (upstream deactivates it for a while). */
int64_t ps_svc_tentative_pending(struct ps_svc_op *op, int slot, int64_t pending);
void ps_svc_tentative_job_started(const struct ps_svc_job *job);
/* A stored job read back at a restart: counted as started, and as finished when it is. */
void ps_svc_tentative_replay(const struct ps_svc_job *job);
/* A finished job: its tree's counts; a completed one looks for slow trees to ban. */
void ps_svc_tentative_job_finished(struct ps_service *svc, const struct ps_svc_job *job,
                                   int64_t now_ms);
/* The periodic check (upstream's check_tentative_tree_eligibility_period): bans slow trees. */
void ps_svc_tentative_check(struct ps_service *svc, int64_t now_ms);

#endif
