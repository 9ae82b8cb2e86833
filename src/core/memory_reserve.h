/* memory_reserve.h — how much memory the controller asks for each job, learnt per task from
 * what earlier jobs used (YTsaurus's memory digest, semantics.md 5.2, docs memory-digest.md).
 *
 * A job has two processes: the user job, limited by the spec's memory_limit, and the job proxy
 * (in YTsaurus the process that feeds it; in poolsched whatever the node accounts to the job
 * beside the user's processes). Each has a log digest of "used / expected" factors; a new job
 * reserves a quantile of each digest (upstream task.cpp: ApplyMemoryReserve), completed jobs and
 * jobs aborted for resource_overdraft add samples (UpdateMemoryDigests), and a job aborted for
 * resource_overdraft is retried with a larger dedicated factor (OnJobResourceOverdraft).
 *
 * Typical use by the controller, per task:
 *   ps_memory_task_init(&task, &controller_cfg, &task_spec, err);
 *   ps_memory_task_reserve(&task, overdraft_state_or_NULL, &job);   -> job.memory_bytes
 *   ... the job runs; the node reports /user_job/max_memory ...
 *   completed:             ps_memory_task_add_samples(&task, &job, &stats, false, NULL);
 *   aborted, overdraft:    ps_memory_task_add_samples(&task, &job, &stats, true, NULL);
 *                          ps_memory_task_on_resource_overdraft(&task, &job, &stats, &state, NULL);
 *   and the next job for the same piece of work reserves with that state.
 *
 * Choices where upstream's values do not carry over (documented per field below):
 * - footprint_memory_bytes defaults to 128 MiB: upstream's GetFootprintMemorySize(), 64 MiB of
 *   footprint plus 64 MiB allocator reserve (controller_agent/controllers/job_memory.cpp).
 * - job_proxy_memory_bytes (upstream's per-job estimate from table readers and writers)
 *   defaults to 0: poolsched runs vanilla operations, for which upstream also estimates 0. So by
 *   default the job proxy reserve is 0 bytes whatever its factor, and the job proxy sample is
 *   max_memory / footprint.
 * - Every task has a user job (vanilla); upstream's tasks without one are not modelled.
 * - Validation is stricter than upstream in two places: memory_reserve_factor must be in (0, 1]
 *   (upstream accepts any value and builds a digest whose lower bound exceeds its upper bound),
 *   and the user job digest must fit the log digest's 1000-bucket limit (upstream builds it
 *   without validating, so a tiny user_job_memory_digest_lower_bound or precision passes there).
 */
#ifndef PS_CORE_MEMORY_RESERVE_H
#define PS_CORE_MEMORY_RESERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/stat_sample.h"

/* Statistics paths the node reports and the controller reads. */
#define PS_STAT_USER_JOB_MAX_MEMORY "/user_job/max_memory"
#define PS_STAT_USER_JOB_MEMORY_LIMIT "/user_job/memory_limit"
#define PS_STAT_USER_JOB_MEMORY_RESERVE "/user_job/memory_reserve"
#define PS_STAT_USER_JOB_MEMORY_RESERVE_FACTOR_X10000 "/user_job/memory_reserve_factor_x10000"
#define PS_STAT_JOB_PROXY_MAX_MEMORY "/job_proxy/max_memory"
/* Statistics the controller adds (ps_memory_controller_statistics). */
#define PS_STAT_TIME_TOTAL "/time/total"
#define PS_STAT_JOB_PROXY_ESTIMATED_MEMORY "/job_proxy/estimated_memory"
#define PS_STAT_JOB_PROXY_MEMORY_RESERVE "/job_proxy/memory_reserve"
#define PS_STAT_JOB_PROXY_CUMULATIVE_ESTIMATED_MEMORY "/job_proxy/cumulative_estimated_memory"
#define PS_STAT_JOB_PROXY_CUMULATIVE_MEMORY_RESERVE "/job_proxy/cumulative_memory_reserve"
#define PS_STAT_JOB_PROXY_MEMORY_RESERVE_FACTOR_X10000 "/job_proxy/memory_reserve_factor_x10000"
#define PS_STAT_USER_JOB_CUMULATIVE_MAX_MEMORY "/user_job/cumulative_max_memory"
#define PS_STAT_USER_JOB_CUMULATIVE_MEMORY_RESERVE "/user_job/cumulative_memory_reserve"
#define PS_STAT_JOB_PROXY_CUMULATIVE_MAX_MEMORY "/job_proxy/cumulative_max_memory"

/* ---------------------------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------------------------- */

/* Knobs of the controller (upstream TControllerAgentConfig), shared by all operations. */
struct ps_memory_controller_config {
    double user_job_memory_digest_precision;            /* 0.01; > 0 */
    double user_job_memory_reserve_quantile;            /* 0.95; [0, 1] */
    double job_proxy_memory_reserve_quantile;           /* 0.95; [0, 1] */
    double memory_digest_resource_overdraft_factor;     /* 1.1; [1, 10] */
    struct ps_opt_double user_job_resource_overdraft_memory_multiplier;   /* unset; [1, 10] */
    struct ps_opt_double job_proxy_resource_overdraft_memory_multiplier;  /* unset; [1, 10] */
    /* false: the two multipliers above apply; true: the operation spec's do. */
    bool use_resource_overdraft_memory_multiplier_from_spec;
    int64_t footprint_memory_bytes;                     /* 128 MiB; >= 0 (key footprint_memory) */
};

/* The schema of these knobs under upstream's names (the controller agent config keys above,
 * footprint_memory in bytes): the scheduler's config section `controller_agent` and the
 * scenario's top-level `controller_agent` set them through the generic functions of attr.h,
 * then call ps_memory_controller_config_validate. */
extern const struct ps_attr_table ps_memory_controller_config_table;

void ps_memory_controller_config_init(struct ps_memory_controller_config *cfg);
int ps_memory_controller_config_validate(const struct ps_memory_controller_config *cfg,
                                         struct ps_error *err);

/* One task's options from the operation spec (its user job spec, upstream TUserJobSpec, and
 * the operation-level job proxy digest). */
struct ps_memory_task_spec {
    int64_t memory_limit_bytes;                     /* 512 MiB; (0, 16 TiB] */
    int64_t tmpfs_size_bytes;                       /* 0; total of all tmpfs volumes,
                                                     * [0, memory_limit_bytes] */
    double user_job_memory_digest_default_value;    /* 0.5; (0, 1] */
    double user_job_memory_digest_lower_bound;      /* 0.05; (0, 1] */
    bool has_memory_reserve_factor;                 /* unset */
    double memory_reserve_factor;                   /* (0, 1]; sets both values above */
    bool ignore_memory_reserve_factor_less_than_one;    /* false: a factor below 1 is ignored
                                                         * when true */
    struct ps_log_digest_config job_proxy_memory_digest;  /* L 0.5, U 2.0, default 1.0,
                                                           * relative_precision 0.01 */
    /* Used only with use_resource_overdraft_memory_multiplier_from_spec. For the job proxy the
     * caller puts the user job spec's value if set, else the operation spec's. [1, 10]. */
    bool has_user_job_resource_overdraft_memory_multiplier;
    double user_job_resource_overdraft_memory_multiplier;
    bool has_job_proxy_resource_overdraft_memory_multiplier;
    double job_proxy_resource_overdraft_memory_multiplier;
    int64_t job_proxy_memory_bytes;                 /* 0; the job proxy estimate, >= 0 */
};

void ps_memory_task_spec_init(struct ps_memory_task_spec *spec);

/* Puts an operation spec's memory keys (user_job_memory_digest_default_value / lower_bound,
 * memory_reserve_factor, job_proxy_memory_digest; core/op_spec.h) over spec's values: the one
 * mapping the service and the simulator use. */
struct ps_operation_spec;
void ps_memory_task_spec_from_operation(struct ps_memory_task_spec *spec,
                                        const struct ps_operation_spec *op);
/* PS_EINVAL naming the key, e.g. "memory reserve: tmpfs size 600 bytes is more than
 * memory_limit 500 bytes". */
int ps_memory_task_spec_validate(const struct ps_memory_task_spec *spec, struct ps_error *err);

/* ---------------------------------------------------------------------------------------------
 * Per-task state
 * ------------------------------------------------------------------------------------------- */

struct ps_memory_task {
    struct ps_log_digest user_job_digest;       /* factors of memory_limit */
    struct ps_log_digest job_proxy_digest;      /* factors of job proxy estimate + footprint */
    double user_job_memory_reserve_quantile;
    double job_proxy_memory_reserve_quantile;
    double overdraft_factor;                    /* memory_digest_resource_overdraft_factor */
    bool has_user_job_multiplier;
    double user_job_multiplier;
    bool has_job_proxy_multiplier;
    double job_proxy_multiplier;
    double job_proxy_upper_bound;               /* the job proxy digest's U */
    int64_t memory_limit_bytes;
    int64_t tmpfs_size_bytes;
    int64_t footprint_memory_bytes;
    int64_t job_proxy_memory_bytes;
    /* The user job digest's effective bounds after memory_reserve_factor and tmpfs. */
    double user_job_digest_lower_bound;
    double user_job_digest_default_value;
};

/* Validates both configs and builds the two digests. The user job digest has
 * L = user_job_memory_digest_lower_bound and default = user_job_memory_digest_default_value,
 * both replaced by memory_reserve_factor when it is set (and either it is 1 or
 * ignore_memory_reserve_factor_less_than_one is false), then both raised to at least
 * min(1, tmpfs / memory_limit) and the default to at least L; U = 1; relative precision from the
 * controller. Errors: PS_EINVAL, PS_ENOMEM. On error nothing needs releasing. */
int ps_memory_task_init(struct ps_memory_task *t, const struct ps_memory_controller_config *cfg,
                        const struct ps_memory_task_spec *spec, struct ps_error *err);
void ps_memory_task_release(struct ps_memory_task *t);

/* The current reserve factors: the digests' quantiles at the configured quantiles. */
double ps_memory_task_user_job_reserve_factor(const struct ps_memory_task *t);
double ps_memory_task_job_proxy_reserve_factor(const struct ps_memory_task *t);

/* ---------------------------------------------------------------------------------------------
 * Jobs
 * ------------------------------------------------------------------------------------------- */

enum ps_overdraft_status {
    PS_OVERDRAFT_NONE = 0,
    PS_OVERDRAFT_ONCE,              /* retried with factor x multiplier */
    PS_OVERDRAFT_MULTIPLE_TIMES,    /* retried with the upper bound */
};

/* What the controller remembers about one piece of work (upstream: per output cookie; for a
 * vanilla task, per job index) whose jobs were aborted for resource_overdraft. Keep it until
 * that piece of work completes. */
struct ps_memory_overdraft_state {
    enum ps_overdraft_status user_job_status;
    enum ps_overdraft_status job_proxy_status;
    double dedicated_user_job_memory_reserve_factor;
    double dedicated_job_proxy_memory_reserve_factor;
};

void ps_memory_overdraft_state_init(struct ps_memory_overdraft_state *st);

/* The memory side of one job (upstream's joblet fields), fixed when the job is scheduled and
 * handed back when it finishes. */
struct ps_memory_job {
    int64_t memory_limit_bytes;             /* the user job's limit */
    int64_t job_proxy_memory_bytes;         /* the job proxy estimate */
    int64_t footprint_memory_bytes;
    double user_job_memory_reserve_factor;
    double job_proxy_memory_reserve_factor;
    bool user_job_factor_from_overdraft;    /* the factors came from an overdraft state */
    bool job_proxy_factor_from_overdraft;
    /* max((int64)(user factor x memory_limit), tmpfs size): what the user job may use before
     * it counts as overdrafting; reported by the node as /user_job/memory_reserve. */
    int64_t user_job_memory_reserve_bytes;
    int64_t job_proxy_memory_reserve_bytes; /* (int64)(estimate x job proxy factor) */
    /* What the scheduler must find on a node: footprint + estimate x job proxy factor +
     * memory_limit x user factor, each addition truncated to bytes as upstream. */
    int64_t memory_bytes;
};

/* Fills *job for a new job of the task. With a state whose status is not NONE, the dedicated
 * factor of that state replaces the digest quantile (per process); st may be NULL. */
void ps_memory_task_reserve(const struct ps_memory_task *t,
                            const struct ps_memory_overdraft_state *st,
                            struct ps_memory_job *job);

/* The parts of a finished job's statistics that matter here. */
struct ps_memory_job_statistics {
    bool has_user_job_max_memory;
    int64_t user_job_max_memory_bytes;          /* /user_job/max_memory */
    bool has_user_job_memory_reserve;
    int64_t user_job_memory_reserve_bytes;      /* /user_job/memory_reserve, as reported */
    bool has_job_proxy_max_memory;
    int64_t job_proxy_max_memory_bytes;         /* /job_proxy/max_memory */
};

/* What ps_memory_task_add_samples did, for logs and tests. */
struct ps_memory_samples {
    bool user_job_added;            /* a sample was offered to the user job digest */
    bool user_job_counted;          /* ... and counted (not discarded, e.g. 0 bytes) */
    double user_job_sample;
    bool job_proxy_added;
    bool job_proxy_counted;
    double job_proxy_sample;
};

/* UpdateMemoryDigests: for each process whose max memory is known, adds
 *   user job:  max_memory / memory_limit
 *   job proxy: max_memory / (job proxy estimate + footprint)
 * and when resource_overdraft is true (the job was aborted for it) and the sample is >= 1,
 * adds max(sample, the job's factor x memory_digest_resource_overdraft_factor) instead, since
 * statistics lag behind the actual peak. Call it for completed jobs (false) and for jobs
 * aborted with resource_overdraft (true), never for other aborts. out may be NULL. */
void ps_memory_task_add_samples(struct ps_memory_task *t, const struct ps_memory_job *job,
                                const struct ps_memory_job_statistics *stats,
                                bool resource_overdraft, struct ps_memory_samples *out);

/* Which process overdrafted, as decided by ps_memory_task_on_resource_overdraft. */
struct ps_memory_overdraft_verdict {
    bool user_job;
    bool job_proxy;
    bool by_gap;        /* neither exceeded its reserve; the smaller free gap decided */
};

/* OnJobResourceOverdraft, for a job aborted with resource_overdraft: the user job overdrafted
 * if its max memory (0 if unknown) exceeds its reserve bytes, the job proxy if its max memory
 * exceeds estimate x factor; if neither, the one with the smaller gap (reserve - max memory;
 * the job proxy on a tie). For each overdrafting process the state moves on: the first time,
 * with a multiplier configured, to min(job factor x multiplier, upper bound) (ONCE); otherwise
 * to the upper bound (MULTIPLE_TIMES): 1.0 for the user job, the job proxy digest's U for the
 * job proxy. out may be NULL. */
void ps_memory_task_on_resource_overdraft(const struct ps_memory_task *t,
                                          const struct ps_memory_job *job,
                                          const struct ps_memory_job_statistics *stats,
                                          struct ps_memory_overdraft_state *st,
                                          struct ps_memory_overdraft_verdict *out);

/* ---------------------------------------------------------------------------------------------
 * Statistics
 * ------------------------------------------------------------------------------------------- */

/* The node-side user job statistics about its reserve, as upstream's job proxy reports them:
 * /user_job/memory_limit, /user_job/memory_reserve and /user_job/memory_reserve_factor_x10000
 * = (int)(1e4 x reserve / limit). Returns 3. */
#define PS_MEMORY_USER_JOB_STAT_COUNT 3
size_t ps_memory_user_job_statistics(const struct ps_memory_job *job,
                                     struct ps_stat_sample out[PS_MEMORY_USER_JOB_STAT_COUNT]);

/* Byte-seconds of `bytes` held for duration_ms: (int64)(bytes x ms / 1000.0), computed in
 * double as upstream to avoid int64 overflow; saturates; a negative duration counts as 0. */
int64_t ps_memory_cumulative_byte_seconds(int64_t bytes, int64_t duration_ms);

/* The statistics the controller adds to a finished (or running) job, as upstream's
 * UpdateJobletFromSummary: /time/total (ms), /job_proxy/estimated_memory,
 * /job_proxy/memory_reserve, /job_proxy/cumulative_estimated_memory,
 * /job_proxy/cumulative_memory_reserve, /job_proxy/memory_reserve_factor_x10000, and, each only
 * when the node reported its source value, /user_job/cumulative_max_memory,
 * /user_job/cumulative_memory_reserve and /job_proxy/cumulative_max_memory.
 * duration_ms is from the job's start to max(finish, last status update). Returns how many. */
#define PS_MEMORY_CONTROLLER_STAT_MAX 9
size_t ps_memory_controller_statistics(const struct ps_memory_job *job,
                                       const struct ps_memory_job_statistics *stats,
                                       int64_t duration_ms,
                                       struct ps_stat_sample out[PS_MEMORY_CONTROLLER_STAT_MAX]);

#endif
