/* service.h — the scheduler daemon's state: pool trees (the engine's strategy), operations with
 * their tasks and jobs, nodes, and what glues them to HTTP and SQLite.
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
 * Files are split by concern: service.c (lifecycle, operations and jobs model), api_*.c
 * (HTTP commands), persist.c (documents in the store), journal.c (group commit),
 * engine_loop.c (periodic work), cmd_scheduler.c (the `poolsched scheduler` command).
 */
#ifndef PS_SERVER_SERVICE_H
#define PS_SERVER_SERVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/cpu_monitor.h"
#include "core/error.h"
#include "core/memory_reserve.h"
#include "core/preemptible.h"
#include "core/schedule.h"
#include "core/strategy.h"
#include "core/strmap.h"
#include "core/tree_sched.h"
#include "server/auth.h"
#include "server/http_server.h"
#include "server/history.h"
#include "server/what_if_task.h"
#include "server/job_archive.h"
#include "server/metrics.h"
#include "server/security.h"
#include "server/store.h"

#define PS_SERVICE_DEFAULT_HOST "127.0.0.1"
#define PS_SERVICE_DEFAULT_PORT 9013
#define PS_SERVICE_DEFAULT_TREE "physical"
#define PS_SERVICE_CLUSTER_SECRET_FILE "cluster_secret"
#define PS_SERVICE_MAX_STDERR_BYTES (64 * 1024)

struct ps_service_config {
    char host[64];                        /* listen address, numeric */
    int port;                             /* 0 = any free port; -1 = no HTTP (in-process) */
    char data_dir[1024];
    char store[1024];                     /* "" = SQLite in data_dir; else a postgresql:// URI
                                           * (store.h); default $POOLSCHED_STORE */
    int64_t fair_share_update_period_ms;  /* 1000; the default tree's @fair_share_update_period
                                             at first start; each tree follows its own later */
    int64_t heartbeat_period_ms;          /* 5000: told to nodes */
    int64_t node_offline_timeout_ms;      /* 60000: no heartbeat for this long -> offline */
    int http_threads;                     /* 8 */
    int max_failed_job_count;             /* 10: an operation fails at the 10th failed job,
                                           * unless its spec says otherwise */
    int64_t commit_window_ms;             /* 0: the journal commits as soon as it has work */
    int64_t history_bucket_ms;            /* 300000: the charts' history buckets (history.h) */
    /* HTTP limits against hostile or careless clients (docs/api.md "Limits") */
    int64_t http_max_body_size;           /* 1 MiB: bodies of API commands */
    int64_t http_max_start_op_body_size;  /* 16 MiB: start_op (specs with many tasks) */
    int64_t http_max_heartbeat_body_size; /* 32 MiB: node heartbeats (stderr of finished jobs) */
    int64_t http_max_connections;         /* 0: from the fd limit (raised to its hard limit) */
    int64_t http_max_connections_per_ip;  /* 256 */
    int64_t http_header_timeout_ms;       /* 10000: request headers complete within */
    int64_t http_idle_timeout_ms;         /* 60000: idle keep-alive connections close after */
    int metrics_require_token;            /* -1 auto (required unless listening on loopback),
                                             0 no, 1 yes */
    bool allow_insecure_remote;           /* listen beyond loopback without TLS */
    bool enable_schedule_in_single_tree;  /* true: honour the spec's schedule_in_single_tree */
    /* broken nodes and operations that can never run (node_health.h) */
    int max_consecutive_job_aborts;       /* 10: node_error aborts in a row that ban a node */
    int64_t disable_jobs_timeout_ms;      /* 600000: a node banned for them returns; 0 never */
    int64_t available_exec_nodes_check_period_ms;                 /* 5000 */
    int64_t safe_scheduler_online_time_ms;                        /* 600000 */
    int64_t resource_demand_sanity_check_period_ms;               /* 15000 */
    int64_t operation_hangup_check_period_ms;                     /* 60000 */
    int64_t operation_hangup_due_to_limiting_ancestor_safe_timeout_ms;   /* 300000 */
    int64_t operation_hangup_safe_timeout_ms;                     /* 3600000 */
    int64_t operation_hangup_min_schedule_job_attempts;           /* 1000 */
    /* upstream's scheduler option, the default of every tree's key of that name (unset: the
     * tree's own default, 15000) */
    struct ps_opt_int allowed_node_resources_overcommit_duration_ms;
    bool quiet;                           /* no event log on stderr (benchmarks) */
    int64_t event_log_max_row_count;      /* 100000: rows //sys/scheduler/event_log keeps
                                           * (event_log.h); 0: none written */
    /* standby schedulers (ha.h, docs/ha.md): off by default; needs the PostgreSQL store */
    bool ha;                              /* start as a standby, lead when elected */
    int64_t ha_lease_ms;                  /* 2000: the leader's lease */
    int64_t ha_epoch;                     /* set when elected (not a config key): the fence */
    /* The controller's memory reserve knobs (section `controller_agent`, upstream's names;
     * core/memory_reserve.h), for every operation's memory digests. */
    struct ps_memory_controller_config controller_agent;
};

void ps_service_config_init(struct ps_service_config *cfg);

/* Applies a config document (JSON object: listen "host:port", data_dir, store,
 * fair_share_update_period, heartbeat_period, node_offline_timeout, http_threads,
 * max_failed_job_count, commit_window, history_bucket, http_max_body_size, http_max_start_op_body_size,
 * http_max_heartbeat_body_size, http_max_connections, http_max_connections_per_ip,
 * http_header_timeout, http_idle_timeout, metrics_require_token (true, false or "auto"),
 * allow_insecure_remote, and node_health.h's keys; durations in ms, sizes in bytes) through the
 * config's attr table: ranges and messages as every table's; unknown keys are errors (did you
 * mean ...?). On error cfg is unchanged. */
int ps_service_config_apply(struct ps_service_config *cfg, const json_t *doc,
                            struct ps_error *err);

/* Whether the listen address is a loopback one (127.0.0.0/8, ::1). */
bool ps_service_listen_is_loopback(const struct ps_service_config *cfg);

/* Whether GET /metrics needs a token: metrics_require_token, where "auto" means yes unless the
 * service listens on loopback. */
bool ps_service_metrics_require_token(const struct ps_service_config *cfg);

/* Parses "host:port" (host numeric IPv4; "[v6]:port" for IPv6). */
/* Sets cfg->store: "" (SQLite in the data dir) or a postgresql:// URI. Errors: PS_EINVAL. */
int ps_service_parse_store(struct ps_service_config *cfg, const char *url, struct ps_error *err);

int ps_service_parse_listen(struct ps_service_config *cfg, const char *text,
                            struct ps_error *err);

/* ---- jobs ------------------------------------------------------------------------------- */

enum ps_job_state { PS_JOB_RUNNING = 0, PS_JOB_COMPLETED, PS_JOB_FAILED, PS_JOB_ABORTED };
const char *ps_job_state_name(int state);

struct ps_svc_op;
struct ps_svc_task;
struct ps_svc_node;

struct ps_svc_job {
    char *id;                      /* "j-..." unique across restarts */
    int64_t alloc_id;              /* allocation id in the engine (this process only) */
    struct ps_svc_op *op;
    int task;                      /* index into op->tasks */
    int64_t job_index;
    int state;                     /* enum ps_job_state */
    char *node_id;
    int tree_slot;                 /* which of op's trees scheduled it */
    int64_t start_ms, finish_ms;   /* finish -1 while running */
    double cpu_limit;              /* cores */
    double cpu_guarantee;          /* cores, as last reported (starts at cpu_limit) */
    struct ps_memory_job mem;      /* memory reserve at start */
    struct ps_resources usage;     /* what the engine counts: slot, cpu guarantee, memory */
    char *error, *abort_reason;
    char *preemption_reason;       /* upstream's error attribute of a preempted job, or NULL */
    char *preempted_for_op;        /* the event log's preempted_for: the operation and job the */
    char *preempted_for_job;       /* victim made room for (sched_host.c), or NULL */
    json_t *statistics;            /* as reported, or NULL */
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
    json_t *spec;                  /* as given */
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
    bool ban_nodes_with_failed_jobs, ignore_job_failures_at_banned_nodes, fail_on_all_nodes_banned;
    json_t *banned_nodes;          /* NULL: none */
    int tree_count;
    struct ps_svc_op_tree *trees;  /* parallel to sop->tree_names */
    int64_t failed_jobs;
    int64_t seq;                   /* creation order (list_operations newest first) */
    bool finished;
    json_t *pool_per_tree;         /* {tree: pool}, kept current and after the finish */
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

struct ps_journal;

struct ps_persist_cache;
struct ps_svc_gauge_cache;

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
    uint64_t event_log_puts;       /* journal records the event log appended, ever: a heartbeat
                                    * whose only records are log rows may still be held */
    bool pools_info_due;           /* the pool trees changed since the last pools_info row */
    json_t *default_tentative_pool_trees;  /* //sys/scheduler/config's (sched_config.c): an
                                              array of tree names, or NULL */
    int64_t pools_info_next_ms;    /* the next pools_info row not before (event_log.h) */
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
};

/* Opens the data dir (store, tokens, secret), loads the state, starts HTTP and the engine loop.
 * Errors: PS_EIO (files, listen), PS_EINVAL (bad stored state), PS_ENOMEM. */
int ps_service_start(const struct ps_service_config *cfg, struct ps_service **out,
                     struct ps_error *err);
/* Stops HTTP and the loop, flushes the journal and frees. NULL is a no-op. */
void ps_service_stop(struct ps_service *svc);
uint16_t ps_service_port(const struct ps_service *svc);

/* ---- internal API between the files of src/server ---------------------------------------- */

int64_t ps_svc_now_ms(void);
/* One structured line on stderr: `ts=... level=info event=NAME k=v ...` (fmt gives k=v). */
void ps_svc_log(struct ps_service *svc, const char *level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

struct ps_svc_tree_state *ps_svc_tree(struct ps_service *svc, const char *name);
int ps_svc_add_tree_state(struct ps_service *svc, const char *name, struct ps_error *err);
void ps_svc_remove_tree_state(struct ps_service *svc, const char *name);
void ps_svc_tree_state_free(struct ps_svc_tree_state *t);
/* Notes op in ts->since_moved. */
void ps_svc_since_moved(struct ps_svc_tree_state *ts, struct ps_svc_op *op);
/* Sets each pool's gauges of tree after an update, at most once a second (pool_gauges.c). */
void ps_svc_pool_gauges(struct ps_service *svc, struct ps_svc_tree_state *ts,
                        struct ps_pool_tree *tree, int64_t now_ms);
void ps_svc_gauge_cache_free(struct ps_svc_gauge_cache *c);
/* Removes ts's gauge series (its pools', its pool and node counts) from /metrics: a tree
 * the API removes takes them with it. (ps_svc_remove_tree_state alone keeps them: at
 * shutdown the registry goes with the service, after a reload the trees find them again.) */
void ps_svc_pool_gauges_remove(struct ps_service *svc, struct ps_svc_tree_state *ts);
struct ps_svc_op *ps_svc_find_op(struct ps_service *svc, const char *id);

/* Operations and jobs (service.c). All under svc->mu. */
/* in_strategy false: a finished operation restored from the store (no tree membership).
 * restore: NULL for a start; the stored document of an active operation restored after a
 * restart (its pool_per_tree and running_per_tree: it goes back as it was, unchecked). */
int ps_svc_op_create(struct ps_service *svc, const char *id, const char *user, int64_t start_ms,
                     const json_t *spec, bool in_strategy, const json_t *restore,
                     struct ps_svc_op **out, struct ps_error *err);
void ps_svc_op_free(struct ps_svc_op *op);
/* schedule_in_single_tree (op_trees.c): sets op->erased_trees (chosen now, or restore's) and
 * *strategy_spec (a new reference: spec, or a copy without the erased trees). op's tasks must
 * be parsed. */
int ps_svc_op_trees(struct ps_service *svc, struct ps_svc_op *op, const json_t *spec,
                    const json_t *restore, json_t **strategy_spec, struct ps_error *err);
/* The slot of op's trees named tree, -1 when op is not (or no longer) in it. */
int ps_svc_op_tree_slot(const struct ps_svc_op *op, const char *tree);
void ps_svc_op_update_pools(struct ps_svc_op *op);
/* *dst = a copy of s (NULL stays NULL), freeing the old one. */
void ps_svc_set_str(char **dst, const char *s);
/* Logs operation_running for the operations the strategy just activated and stores them
 * (running now: a restart keeps them running). */
void ps_svc_log_activated(struct ps_service *svc);
/* The node-reported memory statistics of a job's statistics map (user_job/max_memory,
 * user_job/memory_reserve, job_proxy/max_memory; keys with or without a leading '/'). */
void ps_svc_read_memory_stats(const json_t *stats, struct ps_memory_job_statistics *out);
void ps_svc_job_learn(struct ps_svc_job *job);
void ps_svc_job_free(struct ps_svc_job *job);
void ps_svc_op_finish(struct ps_service *svc, struct ps_svc_op *op, const char *state,
                      const char *error, int64_t now_ms);
/* One job of the task: a user slot, its cpu_limit and the memory reserve the task's digest
 * gives a new job now. */
struct ps_resources ps_svc_task_shape(const struct ps_svc_task *t);
void ps_svc_task_reshape(struct ps_svc_task *t);
void ps_svc_op_refresh_state(struct ps_svc_op *op);
int64_t ps_svc_op_pending(const struct ps_svc_op *op);
void ps_svc_op_detach(struct ps_service *svc, struct ps_svc_op *op);
void ps_svc_op_update_shape(struct ps_service *svc, struct ps_svc_op *op);
struct ps_svc_job *ps_svc_job_start(struct ps_service *svc, struct ps_svc_op *op, int tree_slot,
                                    struct ps_resources alloc, const char *node_id, int64_t now_ms);
/* Is node_id banned for op (ban_nodes_with_failed_jobs)? */
bool ps_svc_op_node_banned(const struct ps_svc_op *op, const char *node_id);
/* Ends a running job with a final state; updates progress, digests, the engine's usage and the
 * operation's state. requeue: put the job index back (aborted jobs). A failure at a node banned
 * for the operation ends as aborted (node_banned) with ignore_job_failures_at_banned_nodes; a
 * failure bans its node for the operation with ban_nodes_with_failed_jobs. */
void ps_svc_job_finish(struct ps_service *svc, struct ps_svc_job *job, int state,
                       const char *error, const char *abort_reason, json_t *statistics,
                       int64_t now_ms);
/* Applies one preemption victim to a running job (reason: the abort and interrupt reason,
 * "preemption" for every victim of the scheduling loop, as upstream's; preemption_reason, may be
 * NULL: why, for the log, e.g. "resource_overcommit"). timeout_ms 0: abort it now; else
 * interrupt it (once) and abort it at the deadline. The reply arrays (NULL outside a heartbeat)
 * receive the abort or interrupt; without them the node's next heartbeat is told (the job
 * reported running is aborted with the job's abort reason, or listed with its interrupt
 * deadline). */
void ps_svc_job_preempt(struct ps_service *svc, struct ps_svc_job *job, const char *reason,
                        const char *preemption_reason, int64_t timeout_ms, const char *for_op,
                        int64_t now_ms, json_t *interrupt, json_t *abort);
/* enum ps_preempt_reason -> the preemption reason the log names (preempted_for_starving_
 * operation, resource_overcommit, resource_limits_violated, ...) */
const char *ps_svc_preempt_reason(int reason);
/* The service as the scheduling loop's host (sched_host.c, core/tree_sched.h). */
/* After a fair share update of ts: the loop's limits check (victims with reason
 * resource_limits_violated). O(elements), plus O(running jobs) only while some element is
 * over. Errors are logged. */
void ps_svc_limits_check(struct ps_service *svc, struct ps_svc_tree_state *ts, int64_t now_ms);
/* One fair share update of ts through the loop, all under svc->mu (begin, run, finish).
 * Errors: as ps_tree_sched_update. */
int ps_svc_update_tree(struct ps_service *svc, struct ps_svc_tree_state *ts,
                       struct ps_pool_tree *tree, int64_t now_ms, int *starvation_changed,
                       struct ps_error *err);
/* The last phase of an update begun (ps_tree_sched_update_begin, under svc->mu) and run
 * (ps_tree_sched_update_run, without it) on ts: PS_ESTATE, and nothing changed, when the
 * tree's structure changed in between; else the results apply, the operations get their new
 * elements and a new snapshot. Under svc->mu. */
int ps_svc_update_finish(struct ps_service *svc, struct ps_svc_tree_state *ts,
                         struct ps_pool_tree *tree, int *starvation_changed,
                         struct ps_error *err);
/* A node heartbeat's scheduling on the node's tree through the loop: new jobs go to start_out
 * (ps_svc_start_entry), victims to interrupt or abort. */
int ps_svc_schedule_node(struct ps_service *svc, struct ps_svc_node *node, int64_t now_ms,
                         json_t *start_out, json_t *interrupt, json_t *abort, struct ps_error *err);
/* Why an operation with pending jobs waits, in the scheduler's view, for its membership to
 * (element: its element in ts's last update, -1): the rules of ps_pending_scheduler_reason, the
 * simulator's too. Fills info->reason, tree, pool, resource. */
struct ps_pending_info;
void ps_svc_pending_scheduler_reason(struct ps_service *svc, struct ps_svc_tree_state *ts,
                                     const struct ps_tree_op *to, int element,
                                     struct ps_pending_info *info);
/* The node protocol's entry for a job to start (api_nodes.c). */
json_t *ps_svc_start_entry(const struct ps_svc_job *job);
void ps_svc_job_set_guarantee(struct ps_service *svc, struct ps_svc_job *job, double cores);
struct ps_svc_node *ps_svc_node_get(struct ps_service *svc, const char *id, bool create);
void ps_svc_node_offline(struct ps_service *svc, struct ps_svc_node *node, int64_t now_ms);
int ps_svc_job_register(struct ps_service *svc, struct ps_svc_job *job);
void ps_svc_job_attach_node(struct ps_service *svc, struct ps_svc_job *job);
/* Every operation of tree forgets its element (-1), as before an update's results apply. */
void ps_svc_forget_elements(struct ps_service *svc, struct ps_pool_tree *tree);
/* Sets the engine's inputs in each of op's tree memberships (usage, demand, pending jobs,
 * suspended) from the operation as it is now: called wherever one of them changes (a job starts
 * or ends, a job is requeued, the memory digest moves, the operation is suspended or resumed,
 * restored), so that a fair share update reads them as they stand instead of a pass over every
 * operation under the lock (as the simulator's sim_op_demand_changed). */
void ps_svc_op_push_inputs(struct ps_svc_op *op);
/* Debug builds, before each update: every membership's inputs equal what the operation says
 * now; -1 and what is stale in what (a change that did not push). */
int ps_svc_check_engine_inputs(struct ps_service *svc, struct ps_pool_tree *tree, char *what,
                               size_t size);
struct ps_preemptible *ps_svc_sched_op_fn(void *ctx, struct ps_tree_op *op, int element,
                                          struct ps_sched_operation *sched,
                                          struct ps_preempt_operation *preempt);
/* The operation's running jobs in the tree of tree_op by preemption class (enum
 * ps_alloc_class, preemptible.h): counts[PS_ALLOC_CLASS_COUNT], zeros when unknown. */
void ps_svc_op_preemptible_counts(struct ps_tree_op *tree_op, int *counts);

/* Persistence (persist.c): JSON documents and journal records. */
json_t *ps_persist_tree_doc(struct ps_service *svc, struct ps_pool_tree *tree);
/* The tree document's text (NULL when out of memory); cache (may be NULL) keeps each pool's
 * config text between calls and is replaced by one holding the tree's current pools. */
char *ps_persist_tree_text(struct ps_pool_tree *tree, struct ps_persist_cache **cache);
void ps_persist_cache_free(struct ps_persist_cache *c);
json_t *ps_persist_op_doc(struct ps_service *svc, const struct ps_svc_op *op);
json_t *ps_persist_job_doc(const struct ps_svc_job *job);
void ps_persist_tree(struct ps_service *svc, const char *tree);   /* journal put */
void ps_persist_tree_removed(struct ps_service *svc, const char *tree);
void ps_persist_meta(struct ps_service *svc);

/* sched_config.c: //sys/scheduler/config (template_pool_tree_config_map), under svc->mu. */
bool ps_sched_config_claims(const char *path);
int ps_sched_config_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
/* value NULL: remove. Checked and applied to every tree, or refused with nothing changed. */
int ps_sched_config_set(struct ps_service *svc, const char *path, const json_t *value,
                        struct ps_error *err);
void ps_persist_sched_config(struct ps_service *svc);
/* At load, before the trees: the stored config, if any. */
int ps_sched_config_load(struct ps_service *svc, struct ps_error *err);
/* api_cypress.c: after a tree changed (persist it, wake the loop, report started operations). */
void ps_cypress_tree_changed(struct ps_service *svc, struct ps_pool_tree *tree);
/* Also notes in op which below_fair_share_since the document carries (since_persisted). */
void ps_persist_op(struct ps_service *svc, struct ps_svc_op *op);
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
/* Whether some tree's below_fair_share_since of op differs from what its last document
 * carries (unknown counts as none) while op is starving there or the document carries one:
 * the engine loop's refresh after an update. */
bool ps_persist_op_since_changed(const struct ps_svc_op *op);
/* A hash of what a fair share update changes in the tree's document: each stored pool's name,
 * accumulated_resource_volume and below_fair_share_since. ps_persist_tree notes it in the
 * tree's state; the engine loop writes the document again only when it moved. */
uint64_t ps_persist_tree_dynamic_hash(struct ps_pool_tree *tree);
/* A finished job's put also queues it for leaving memory (ps_job_archive_retire). */
void ps_persist_job(struct ps_service *svc, struct ps_svc_job *job);
/* A job from its stored document (not registered, alloc_id 0), or NULL when the document is
 * malformed or names an operation or task not in memory. Caller frees (ps_svc_job_free). */
struct ps_svc_job *ps_persist_job_from_doc(struct ps_service *svc, const json_t *doc);
int ps_persist_load(struct ps_service *svc, struct ps_error *err);
/* Rebuilds the in-memory state (trees, operations, jobs) from the store, as a restart would:
 * the journal's rollback after a failed commit (journal.c). Nodes stay, registered again, and
 * lose their jobs until the stored running jobs re-attach. Under svc->mu (service_life.c). */
int ps_svc_state_reload(struct ps_service *svc, struct ps_error *err);
/* 0, or after a failed reload: tries again, and on failure sets err to PS_EUNAVAIL (requests
 * must not act on, or show, a partial state). Under svc->mu. */
int ps_svc_state_check(struct ps_service *svc, struct ps_error *err);

/* Journal (journal.c): records appended under svc->mu, committed by a writer thread. */
int ps_journal_new(struct ps_service *svc, struct ps_journal **out, struct ps_error *err);
void ps_journal_free(struct ps_journal *j);           /* flushes and joins */
/* Appends a put (value owned: stolen) or, with value NULL, a delete. Returns the ticket. */
uint64_t ps_journal_put(struct ps_journal *j, const char *kind, const char *key, json_t *value);
/* A put of JSON text already built (owned: stolen); NULL text (out of memory) fails the batch
 * like a failed commit. */
uint64_t ps_journal_put_text(struct ps_journal *j, const char *kind, const char *key, char *text);
uint64_t ps_journal_last(struct ps_journal *j);       /* ticket of the last record */
/* Whether records that only refresh derived state (the engine loop's integral volumes and
 * starvation timers) should be appended now: always while commits succeed; after a failed
 * commit (full disk), once per PS_JOURNAL_REFRESH_PROBE_MS, since every failed commit makes
 * the journal reload the state. */
#define PS_JOURNAL_REFRESH_PROBE_MS 10000
bool ps_journal_refresh_due(struct ps_journal *j, int64_t now_ms);
/* Every ticket <= this is settled: durable, or discarded by a failed commit, in which case the
 * state was reloaded from the store before this moved past it (so nothing in memory waits for
 * a discarded ticket any more). */
uint64_t ps_journal_committed(struct ps_journal *j);
/* Waits until the record with this ticket (and every earlier one) is settled. Returns 0 when it
 * is durable; PS_ENOSPC (disk full) or PS_EUNAVAIL (other storage failure) when its commit
 * failed: then the change was discarded, in memory too (journal.c). */
int ps_journal_wait(struct ps_journal *j, uint64_t ticket, struct ps_error *err);

/* HTTP (api_*.c). */
int ps_api_register(struct ps_service *svc, struct ps_error *err);
/* The YTsaurus face (api_yt.c): /api/v3/<command>, /api/v4/<command>, /api, /hosts; every
 * command goes through ps_api_dispatch. */
int ps_api_yt_register(struct ps_service *svc, struct ps_error *err);
/* The web UI's routes: GET / and /ui/... (ui.c). */
int ps_ui_register(struct ps_service *svc, struct ps_error *err);
/* Checks an Authorization header ("OAuth <token>") and fills the caller's identity (api.c). */
int ps_api_authenticate(struct ps_service *svc, const char *header,
                        struct ps_auth_identity *out, struct ps_error *err);
/* Runs one user command in-process (the fuzz target and tests): body as JSON text, identity
 * given. Returns the HTTP status; *reply receives the JSON reply (caller decrefs). */
int ps_api_dispatch(struct ps_service *svc, const char *command, const char *body, size_t len,
                    const struct ps_auth_identity *who, json_t **reply);
/* Resources as the API shows them: cpu in cores, the others as integers, unlimited ones left
 * out (api_orchid.c). */
json_t *ps_api_resources_json(const struct ps_resources *r);
/* A long-poll heartbeat (docs/api.md, "Nodes"; long_poll.c): when the heartbeat would give
 * the node nothing, it is held until deadline_ns instead of answered. */
#define PS_SVC_MAX_WAIT_MS 3600000
struct ps_svc_hold {
    const struct ps_http_request *req;
    struct ps_http_response *resp;
    int64_t deadline_ns;           /* monotonic; 0: answer, do not hold */
    bool rerun;                    /* a released held heartbeat run again: counted once */
    uint64_t held_at;              /* rerun: the node's heartbeat_seq when it was held */
    bool held;                     /* out: held, *reply is NULL */
};
/* One node heartbeat (docs/api.md); remote_addr (may be NULL) is kept as the node's address.
 * hold NULL: answered at once. */
int ps_api_heartbeat_json(struct ps_service *svc, const json_t *req, const char *remote_addr,
                          struct ps_svc_hold *hold, json_t **reply, struct ps_error *err);
/* Under svc->mu, after a fair share update of ts (long_poll.c): releases held heartbeats of
 * the tree's nodes that may now get jobs. changed: the update follows changes. */
void ps_svc_long_poll_wake(struct ps_service *svc, struct ps_svc_tree_state *ts,
                           bool changed);
/* Under svc->mu, at the end of a heartbeat's processing (long_poll.c): holds it when the reply
 * would be empty. Returns whether it is held. */
bool ps_svc_long_poll_hold(struct ps_service *svc, struct ps_svc_node *node,
                           struct ps_svc_hold *hold);

/* Cypress (api_cypress.c) and orchid (api_orchid.c); under svc->mu. */
int ps_cypress_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
int ps_cypress_list(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
int ps_cypress_exists(struct ps_service *svc, const char *path, bool *out, struct ps_error *err);
int ps_cypress_set(struct ps_service *svc, const struct ps_auth_identity *who, const char *path,
                   const json_t *value, struct ps_error *err);
int ps_cypress_create(struct ps_service *svc, const struct ps_auth_identity *who,
                      const json_t *body, struct ps_error *err);
/* move {source_path, destination_path} of a pool within its tree (admin; docs/api.md). */
int ps_cypress_move(struct ps_service *svc, const struct ps_auth_identity *who,
                    const json_t *body, struct ps_error *err);
/* transfer_pool_resources {source_pool, destination_pool, pool_tree (default: the default
 * tree), resource_delta} (admin; docs/api.md). */
int ps_cypress_transfer_pool_resources(struct ps_service *svc, const struct ps_auth_identity *who,
                                       const json_t *body, struct ps_error *err);
int ps_cypress_remove(struct ps_service *svc, const struct ps_auth_identity *who,
                      const char *path, struct ps_error *err);
/* set, create or remove with dry_run (docs/api.md "Dry run"): the same validation on a copy of
 * the tree, the fair share before and after as *reply, nothing applied or journalled. */
int ps_cypress_dry_run(struct ps_service *svc, const struct ps_auth_identity *who,
                       const char *command, const json_t *body, json_t **reply,
                       struct ps_error *err);
/* check_permission {user, permission, path} on //sys/pool_trees and below, or an operation
 * (//sys/operations/<id>): {"action": "allow" or "deny"} as upstream's, by the user's groups,
 * for any caller (api_cypress.c). */
int ps_cypress_check_permission(struct ps_service *svc, const json_t *body, json_t **reply,
                                struct ps_error *err);
/* Whether user has permission (one bit) on operation id by its ACL (api_operations.c).
 * Errors: PS_ENOENT (no such operation). */
int ps_api_op_permission(struct ps_service *svc, const char *id, const char *user,
                         unsigned permission, bool *allowed, struct ps_error *err);
int ps_orchid_get(struct ps_service *svc, char **names, size_t count, json_t **out,
                  struct ps_error *err);

/* JSON of an operation and a job (api_operations.c). */
json_t *ps_svc_op_json(struct ps_service *svc, const struct ps_svc_op *op);
/* The brief form list_operations gives with "brief": true (no specs, no pending reason). */
json_t *ps_svc_op_brief_json(const struct ps_svc_op *op);
json_t *ps_svc_job_json(const struct ps_svc_job *job);

#endif
