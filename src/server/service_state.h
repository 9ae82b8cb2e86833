/* service_state.h — the scheduler daemon's state: pool trees (the engine's strategy),
 * operations with their tasks and jobs, nodes, and what glues them to HTTP and the store.
 *
 * Threads and locking: one mutex (svc->mu) guards everything below it in struct ps_service.
 * HTTP handlers (pool threads), the engine loop thread (fair share updates, node offline check)
 * and the journal writer take it. Handlers parse and authenticate outside it, hold it while they
 * read or change state and build their reply, append what must become durable to the journal,
 * release it, and then wait for the journal to commit before answering (journal.c): so several
 * requests share one fsync (group commit) and no handler holds the lock during I/O. A failed
 * commit is undone whole: the journal discards it and every record queued after it, and rebuilds
 * this state from the store under the lock before the waiters answer 507/503 (journal.c).
 *
 * Time: now_ms is wall-clock milliseconds since the epoch (the engine is given it), so that
 * times stored in the database (start times, starvation timers) stay meaningful after a restart.
 *
 * Included by the files that read or change these fields; what each part of the daemon offers
 * the others is in its room's header (docs/design.md, "The scheduler service"). */
#ifndef PS_SERVER_SERVICE_STATE_H
#define PS_SERVER_SERVICE_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/cpu_monitor.h"
#include "core/error.h"
#include "core/memory_reserve.h"
#include "core/node_ban.h"
#include "core/preemptible.h"
#include "core/schedule.h"
#include "core/strategy.h"
#include "core/strmap.h"
#include "core/tree_sched.h"
#include "server/auth.h"
#include "server/http_server.h"
#include "server/history.h"
#include "server/job_archive.h"
#include "server/metrics.h"
#include "server/security.h"
#include "server/service_config.h"
#include "server/store.h"

struct ps_journal;
struct ps_persist_cache;
struct ps_svc_gauge_cache;
struct ps_what_if_tasks;

/* ---- jobs ------------------------------------------------------------------------------- */

enum ps_job_state { PS_JOB_RUNNING = 0, PS_JOB_COMPLETED, PS_JOB_FAILED, PS_JOB_ABORTED };

/* The job metrics summed per pool (job_metrics.c). */
#define PS_JOB_METRIC_COUNT 8
const char *ps_job_state_name(int state);

struct ps_svc_op;
struct ps_svc_task;
struct ps_svc_node;
struct ps_event_log_index;

struct ps_svc_job {
    char *id;                      /* "j-..." unique across restarts */
    int64_t alloc_id;              /* allocation id in the engine (this process only) */
    struct ps_svc_op *op;
    int task;                      /* index into op->tasks */
    int64_t job_index;
    int state;                     /* enum ps_job_state */
    char *node_id;
    int tree_slot;                 /* which of op's trees scheduled it */
    int lists_slot;                /* its slot in that tree's preemptible lists (a hint) */
    int64_t start_ms, finish_ms;   /* finish -1 while running */
    double cpu_limit;              /* cores */
    double cpu_guarantee;          /* cores, as last reported (starts at cpu_limit) */
    struct ps_memory_job mem;      /* memory reserve at start */
    struct ps_resources usage;     /* what the engine counts: slot, cpu guarantee, memory */
    /* how long it may wait on the node for resources (ps_operation_spec_waiting_job_timeout
     * at its start), -1: the node's default */
    int64_t waiting_job_timeout_ms;
    char *error, *abort_reason;
    char *preemption_reason;       /* upstream's error attribute of a preempted job, or NULL */
    char *preempted_for_op;        /* the event log's preempted_for: the operation and job the */
    char *preempted_for_job;       /* victim made room for (sched_host.c), or NULL */
    json_t *statistics;            /* as reported, or NULL */
    int64_t metrics[PS_JOB_METRIC_COUNT];   /* its job metrics counted so far (job_metrics.c) */
    json_t *exec_attributes;       /* the node's {gpu_devices: [...]}, or NULL */
    char *stderr_text;             /* tail kept from the node's report, or NULL */
    bool stderr_truncated;
    /* scheduler-side preemption */
    int64_t interrupt_deadline_ms; /* >0: interrupted, abort when passed */
    char *interrupt_reason;
    uint64_t sent_in_heartbeat;    /* node heartbeat sequence it was sent in */
    uint64_t reported_in_heartbeat;/* the last node heartbeat that reported it */
    bool seen_running;             /* the node has reported it */
    /* finished: freed once the journal commits this ticket (job_archive.h) */
    uint64_t retire_ticket;
    bool retire_queued;
    int list_index;                /* its place in svc->job_list */
    struct ps_svc_job *node_next, *node_prev;   /* running jobs of the node */
};

/* ---- operations ------------------------------------------------------------------------- */

struct ps_svc_task {
    char *name;
    char *command;
    json_t *environment;           /* object */
    int64_t job_count;
    double cpu_limit;              /* cores */
    int64_t gpu_limit;             /* gpus of each job (upstream's gpu_limit, default 0) */
    int64_t memory_limit;          /* bytes */
    int64_t tmpfs_size;            /* bytes */
    int64_t port_count;            /* ports the node gives each job, $YT_PORT_<i> (0..50) */
    char *disk_medium;             /* disk_request/medium_name ("default"); NULL: no request */
    int64_t disk_space;            /* disk_request/disk_space, bytes */
    struct ps_memory_task mem;
    /* a new job's resources (ps_svc_task_shape), kept by ps_svc_task_reshape whenever mem's
     * digests move: the quantiles are a pass over their buckets, and the shape is read for
     * every operation at every update and every job event */
    struct ps_resources shape;
    /* job indexes waiting to run, FIFO ring of job_count slots */
    int64_t *queue;
    int64_t q_head, q_len;
    unsigned char *done;           /* per job index: completed */
    struct ps_memory_overdraft_state *overdraft;   /* per job index */
    int64_t running, completed, failed, aborted;
};

struct ps_svc_op_tree {
    int element;                   /* element index in the tree's last snapshot, -1 */
    uint64_t generation;           /* of that snapshot */
    struct ps_preemptible *lists;  /* its allocations in this tree */
    struct ps_resources usage;     /* running jobs scheduled in this tree */
    /* the below_fair_share_since its last document carries for this tree (persist.c): the
     * engine loop writes the document again only when the timer moved */
    int64_t persisted_since_ms;
    bool since_persisted;          /* false: unknown (no document written or read yet) */
    int64_t limiting_since_ms;     /* op_sanity.c: a limiting ancestor seen since, 0: none */
    int64_t saturated_in_tentative_tree;   /* allocations declined: the tree's sample is full */
};

struct ps_svc_op {
    char *id;
    char *user;
    struct ps_operation *sop;      /* the strategy's operation (kept until forgotten) */
    json_t *spec;                  /* as given; never changed (rows share it) */
    json_t *resulting_spec;        /* with defaults filled in */
    char *state;                   /* "pending", "running", "completed", "failed", "aborted" */
    char *error;
    int64_t start_ms, finish_ms;
    bool suspended;
    int task_count;
    struct ps_svc_task *tasks;
    int shape_task;                /* the task whose allocations the snapshots offer, -1 none */
    struct ps_cpu_monitor_config cpu_monitor;
    json_t *cpu_monitor_json;      /* the resulting job_cpu_monitor map */
    json_t *unrecognized_spec;     /* keys of the spec no reader knows (op_spec.h), or NULL */
    int64_t max_failed_job_count;  /* the spec's, else the service config's */
    /* per-operation node bans (upstream's controller; op_spec.h): the nodes where its jobs
     * failed, {node id: true}; not persisted (a restart forgets them) */
    struct ps_node_ban_spec bans;  /* core/node_ban.h */
    json_t *banned_nodes;          /* NULL: none */
    int tree_count;
    struct ps_svc_op_tree *trees;  /* parallel to sop->tree_names */
    int64_t failed_jobs;
    int64_t seq;                   /* creation order (list_operations newest first) */
    bool finished;
    json_t *pool_per_tree;         /* {tree: pool}, kept current and after the finish: replaced
                                      whole, never changed in place (rows share it) */
    json_t *erased_trees;          /* schedule_in_single_tree: the trees not chosen (op_trees.c),
                                      tentative trees refused or banned (op_tentative.c) */
    struct ps_tentative_state *tentative;  /* its tentative trees (core/tentative.h), or NULL */
    json_t *parameters;            /* every update_op_parameters merged, or NULL */
    json_t *runtime_options;       /* {tree: {pool, weight, resource_limits}} in effect (upstream's
                                      runtime_parameters/scheduling_options_per_pool_tree), kept
                                      with pool_per_tree; NULL after a restart of a finished one */
    /* op_sanity.c (node_health.h) */
    bool exec_nodes_seen;          /* a node matching its filter was seen */
    int64_t hangup_active_since_ms;   /* running and not suspended since, 0: not now */
};

/* ---- nodes ------------------------------------------------------------------------------ */

#define PS_SVC_INSTANCE_ID_MAX 64

struct ps_svc_node {
    char *id;
    int64_t num;                   /* creation order: the engine's node id */
    char **tags;                   /* the agent's */
    int tag_count;
    char **user_tags;              /* @user_tags (node_tags.h) */
    int user_tag_count;
    bool tree_conflict;            /* its tags match two trees: offline, alert (node_tags.h) */
    struct ps_resources limits;    /* as the scheduler counts them: cpu in vcpu (below) */
    double cpu_to_vcpu_factor;     /* the agent's (upstream's exec node setting); 0: none */
    json_t *media;                 /* its heartbeat's disk_space_per_medium (medium -> bytes),
                                      owned; NULL: no media */
    bool registered;               /* known to the strategy */
    int64_t last_seen_ms;
    char instance_id[PS_SVC_INSTANCE_ID_MAX + 1];  /* the agent that holds the id ("" unknown) */
    uint64_t heartbeat_seq;        /* per processing; a reply's reply_seq (api_nodes.c) */
    int64_t last_preempt_ms;
    int64_t overcommit_since_ms;   /* usage above limits since (PS_NO_OVERCOMMIT: not) */
    struct ps_sched_filter_cache *filter_cache;
    struct ps_svc_job *jobs;       /* running jobs (list) */
    int job_count;
    char address[64];              /* where its last heartbeat came from ("" unknown) */
    /* health (node_health.h): out of scheduling while banned */
    int consecutive_job_aborts;    /* node_error aborts since the last job that ran */
    bool banned;
    bool banned_by_admin;          /* else banned by the scheduler for its aborts */
    int64_t banned_at_ms;
    int64_t unban_at_ms;           /* scheduler bans: disable_jobs_timeout later; 0 never */
    char ban_message[512];
    char last_abort_error[512];
    /* long-poll (long_poll.c): its heartbeat is held by the HTTP server */
    bool held;
    uint64_t hold_gen;             /* its tree's work_gen when it was held */
};

/* ---- the service ------------------------------------------------------------------------ */

struct ps_svc_tree_state {
    char *name;
    struct ps_tree_sched sched;
    int64_t next_update_ms;
    bool dirty;                    /* operations changed: update soon */
    bool updating;                 /* the engine loop runs this tree's fair share computation
                                      without svc->mu (engine_loop.c): ts->sched.next and its
                                      workspace are the loop's until it clears this */
    bool removed;                  /* removed while updating: the loop frees it */
    uint64_t work_gen;             /* counts updates after changes (long_poll.c) */
    int64_t dirty_since_ms;        /* when the loop saw it dirty (engine_loop.c); 0 clean */
    /* ps_persist_tree_dynamic_hash of the tree's last document (persist.c): the engine loop
     * writes it again after an update only when a volume or a timer moved */
    uint64_t persisted_dynamic;
    bool dynamic_persisted;        /* false: none written by this state yet */
    struct ps_persist_cache *pool_docs;   /* each pool's config JSON by config_version
                                             (persist_tree.c) */
    struct ps_svc_gauge_cache *gauges;    /* its pools' gauge series (pool_gauges.c) */
    /* operations whose starvation timer moved from their document's in the update being
     * applied (ps_svc_since_moved); since_rescan: the list is incomplete (out of memory, or a
     * refresh skipped while commits fail), the next refresh looks at every operation */
    struct ps_svc_op **since_moved;
    int since_moved_count, since_moved_cap;
    bool since_rescan;
};

struct ps_service {
    struct ps_service_config cfg;
    struct ps_store *store;        /* guarded by store_mu (journal thread and auth) */
    struct ps_store *mirror;       /* PostgreSQL only: its objects in memory (store_mirror.h) */
    bool store_down;               /* the state is the mirror's: reads only (store_mirror.h) */
    uint64_t store_up_from;        /* journal tickets up to this one were made while it was */
    pthread_mutex_t store_mu;
    struct ps_journal *journal;
    struct ps_metrics *metrics;
    struct ps_http_server *http;
    char cluster_secret[PS_AUTH_TOKEN_LEN + 1];
    char admin_token[PS_AUTH_TOKEN_LEN + 1];
    char boot_id[9];               /* random hex per process: job ids stay unique */

    /* token cache (auth_mu) */
    pthread_mutex_t auth_mu;
    struct ps_strmap token_cache;  /* token -> struct ps_auth_identity * (keys owned) */

    pthread_mutex_t mu;            /* everything below */
    pthread_cond_t loop_cv;
    bool stopping;
    struct ps_strategy *strategy;
    struct ps_security *security;  /* users, groups, //sys/pool_trees' ACL (security.h); the
                                    * strategy borrows its access view */
    int64_t connected_at_ms;       /* process start: the strategy's connection time (kept by a
                                    * state reload, which is no reconnection) */
    int tree_count;
    struct ps_svc_tree_state **trees;
    struct ps_strmap ops;          /* id -> struct ps_svc_op * */
    struct ps_svc_op **op_list;    /* creation order */
    int op_count, op_cap;
    int64_t op_seq;
    struct ps_strmap jobs;         /* id -> struct ps_svc_job * */
    struct ps_svc_job **job_list;  /* jobs in memory: running, and finished ones until their
                                      final record is committed (job_archive.h) */
    int job_count, job_cap;
    int64_t next_alloc_id;
    uint64_t event_log_first, event_log_next;   /* the rows' sequence numbers (event_log.h) */
    struct ps_event_log_index *event_log_index; /* the blocks' timestamp spans (event_log.c),
                                                   NULL until the first read */
    bool pools_info_due;           /* the pool trees changed since the last pools_info row */
    json_t *default_tentative_pool_trees;  /* //sys/scheduler/config's (sched_config.c): an
                                              array of tree names, or NULL */
    json_t *nodes_config;          /* //sys/cluster_nodes/@config (nodes_config.c), or NULL */
    uint64_t nodes_config_version; /* bumped by each change; agents get the config when theirs
                                      differs */
    int64_t pools_info_next_ms;    /* the next pools_info row not before (event_log.h) */
    int64_t event_log_state_seq;   /* the newest state rows' first sequence number while they
                                      are in the log; -1: none there (event_log.h) */
    int64_t event_log_state_ms;    /* their timestamp */
    uint64_t job_counter;
    struct ps_strmap nodes;        /* id -> struct ps_svc_node * */
    struct ps_svc_node **node_list;
    int node_count, node_cap;
    struct ps_job_archive *archive;   /* finished jobs: retire queue, store reader */
    struct ps_history *history;    /* fair share over time, for the web UI (history.h) */
    struct ps_what_if_tasks *what_if;   /* what-if tasks (what_if_task.h) */
    pthread_t loop_thread;
    bool loop_started;
    int64_t started_ms;            /* when the state was loaded (safe_scheduler_online_time) */
    int64_t next_exec_nodes_check_ms, next_hangup_check_ms, next_demand_check_ms;
    bool reload_failed;            /* the last ps_svc_state_reload failed: the state is partial,
                                      so requests are refused (503) until a reload succeeds */

    /* hot metrics */
    struct ps_metric *m_heartbeats, *m_allocations, *m_preemptions, *m_jobs_finished;
    struct ps_metric_family *m_preempted_cpu;   /* by tree and preemption_reason */
    struct ps_metric *m_hb_latency, *m_fs_duration, *m_fs_locked, *m_commits, *m_nodes, *m_jobs_in_memory;
    struct ps_metric *m_leader_epoch, *m_standbys;   /* --ha (ha.h) */
    int ha_standbys;   /* standbys the leader saw at its last renewal (atomic; -1 unknown) */
    pthread_mutex_t ha_mu;             /* guards ha_view */
    struct ps_store_leader ha_view;    /* --ha: the leader row at the last renewal (orchid) */
    struct ps_metric_family *f_pool_fair_share, *f_pool_usage, *f_pool_demand;
    struct ps_metric_family *f_pool_satisfaction;   /* {tree, pool, quantile} */
    struct ps_metric_family *f_pool_count;   /* poolsched_pool_count{tree} */
    struct ps_metric_family *f_tree_nodes;   /* node_count_per_tree{tree} */
    struct ps_metric_family *f_job_metrics[PS_JOB_METRIC_COUNT];   /* {tree, pool} */
};

/* ---- helpers every room uses ------------------------------------------------------------ */

/* *dst = a copy of s (NULL stays NULL), freeing the old one. */
void ps_svc_set_str(char **dst, const char *s);
struct ps_svc_tree_state *ps_svc_tree(struct ps_service *svc, const char *name);
int ps_svc_add_tree_state(struct ps_service *svc, const char *name, struct ps_error *err);
void ps_svc_remove_tree_state(struct ps_service *svc, const char *name);
void ps_svc_tree_state_free(struct ps_svc_tree_state *t);
/* Notes op in ts->since_moved. */
void ps_svc_since_moved(struct ps_svc_tree_state *ts, struct ps_svc_op *op);
struct ps_svc_op *ps_svc_find_op(struct ps_service *svc, const char *id);

#endif
