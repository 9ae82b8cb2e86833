/* job_archive.h — bounded memory for finished work: finished jobs live in the store, not in the
 * scheduler's memory, and finished operations keep only what get_operation needs.
 *
 * Why: the scheduler used to keep every job it ever ran (strings, statistics, up to 64 KiB of
 * stderr each) and every operation's per-job arrays, so a long-running daemon grew without
 * bound. Every finished job's final record is already durable in the store (objects, kind
 * "job"), so memory only has to hold what is still changing.
 *
 * Retention rule (no recent window): a job stays in memory while it runs. When it finishes, its
 * final record is appended to the journal (ps_persist_job) and the job is queued here with that
 * record's ticket; ps_job_archive_sweep, run by the engine loop (at least every 50 ms), frees
 * the queued jobs whose ticket the journal has committed. So a job is in memory or durably
 * stored, never neither, and readers see one or the other:
 *   - list_jobs merges the operation's stored jobs with those in memory (memory wins, it is
 *     newer) and orders them by start time, then id (ps_job_archive_order_cmp);
 *   - get_job_stderr reads the stored record of a job no longer in memory;
 *   - a heartbeat that reports as running a job the scheduler no longer holds is told to abort
 *     it with the stored job's abort reason, as when the job was in memory.
 * All of it under svc->mu; the store is read through a second SQLite connection, so reads never
 * wait for the journal's commit (WAL readers do not block the writer) and see every commit that
 * a sweep relied on.
 *
 * Operations: a finished operation frees its task queues, per-job arrays, memory digests,
 * preemptible lists and the strategy's record (ps_svc_op_release); the light record (id, user,
 * spec, resulting spec, state, times, progress counters) stays for get_operation and
 * list_operations. The stored operation document of a finished operation carries its progress
 * counters (persist.c), so a restart loads neither its jobs nor its arrays; only the jobs of
 * unfinished operations are read back (by the jobs_by_operation index, store_schema.c).
 */
#ifndef PS_SERVER_JOB_ARCHIVE_H
#define PS_SERVER_JOB_ARCHIVE_H

#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "server/store.h"

struct ps_service;
struct ps_svc_job;
struct ps_svc_op;
struct ps_job_archive;

/* Opens the archive's reader connection on the service's data dir (the store must be open, so
 * its migrations have run). Sets svc->archive. Errors: those of ps_store_open, PS_ENOMEM. */
int ps_job_archive_open(struct ps_service *svc, struct ps_error *err);
/* Closes the reader; the queued jobs belong to svc->job_list and are not freed. NULL: no-op. */
void ps_job_archive_free(struct ps_job_archive *a);

/* Queues a finished job whose final record has journal ticket `ticket`. A job queued again
 * (stored once more) keeps its place and takes the newer ticket. Under svc->mu. */
void ps_job_archive_retire(struct ps_service *svc, struct ps_svc_job *job, uint64_t ticket);

/* Forgets the queue (the jobs are freed by the caller): the service's state is being rebuilt
 * from the store (ps_svc_state_reload). */
void ps_job_archive_reset(struct ps_job_archive *a);

/* Frees the queued jobs whose final record is committed (removing them from svc->jobs and
 * svc->job_list) and sets the poolsched_jobs_in_memory gauge. Returns how many were freed.
 * Under svc->mu. */
int ps_job_archive_sweep(struct ps_service *svc);

/* The order of list_jobs: start time, then the id's length, then the id bytewise (job ids are
 * j-<boot>-<hex counter>, so within one boot a shorter id is an earlier job). <0, 0, >0. */
int ps_job_archive_order_cmp(int64_t start_a, const char *id_a, int64_t start_b, const char *id_b);

/* The service's reader connection (for ps_store_jobs_of_operation at load). */
struct ps_store *ps_job_archive_store(struct ps_service *svc);

/* Every job of op, [JOB...] in ps_job_archive_order_cmp order (list_jobs cuts its page from
 * it, job_list.h). Under svc->mu. Errors: PS_EIO, PS_ENOMEM. */
int ps_job_archive_list(struct ps_service *svc, const struct ps_svc_op *op, json_t **out,
                        struct ps_error *err);

/* get_job: the job job_id of op as list_jobs shows it, from memory or else from the store.
 * Errors: PS_ENOENT (no such job of op: "job ... does not exist"), PS_EIO, PS_ENOMEM. Under
 * svc->mu. */
int ps_job_archive_get(struct ps_service *svc, const struct ps_svc_op *op, const char *job_id,
                       json_t **out, struct ps_error *err);

/* get_job_stderr of a job no longer in memory: {"stderr", "truncated"}. Errors: PS_ENOENT
 * (no such job of op), PS_EIO. Under svc->mu. */
int ps_job_archive_stderr(struct ps_service *svc, const struct ps_svc_op *op, const char *job_id,
                          json_t **out, struct ps_error *err);

/* For a job id not in memory: the abort reason a node reporting it as running is told (the
 * stored job's abort_reason, or "job is not running"), malloc'd; NULL when the store has no
 * such job (or cannot be read). Under svc->mu. */
char *ps_job_archive_abort_reason(struct ps_service *svc, const char *job_id);

/* Frees what a finished operation no longer needs (see the top); a no-op for an unfinished
 * one and idempotent. Its jobs must have finished (ps_svc_op_finish ends them). Under svc->mu. */
void ps_svc_op_release(struct ps_service *svc, struct ps_svc_op *op);

#endif
