/* cgroup_impl.h — what the cgroup files share: the system and job records, the backend
 * interface that cgroup_v1.c and cgroup_v2.c implement (cgroup.c chooses one), and the file
 * helpers (cgroup_util.c). Not for use outside src/platform/cgroup*.c. */
#ifndef PS_PLATFORM_CGROUP_IMPL_H
#define PS_PLATFORM_CGROUP_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "platform/cgroup.h"

/* v1 hierarchies, in this order everywhere. For v2 only slot 0 is used. */
enum { H_CPU, H_CPUACCT, H_MEMORY, H_COUNT };

#define REASON_MAX 512

struct ps_cg_backend;

struct ps_cgroup_system {
    enum ps_cgroup_mode mode;
    const struct ps_cg_backend *be;     /* NULL when mode is PS_CGROUP_NONE */
    struct ps_cgroup_caps caps;
    char node_id[72];
    char name[96];                  /* poolsched-<node_id>[-<instance_id>] */
    char summary[2048];
    bool remove_stale_jobs;
    char lock_dir[PATH_MAX];        /* instance_lock.h: where instances' locks live */
    int lock_fd;                    /* this instance's lock, -1 when not held */

    /* v2 */
    char v2_agent_cg[PATH_MAX];     /* the agent's cgroup when it started */
    char v2_leaf[PATH_MAX];         /* <parent>/agent, where the agent moved itself */
    bool v2_moved_self;
    bool v2_enabled_in_agent_cg;    /* we wrote +cpu/+memory into the agent's cgroup */
    char v2_enabled_list[32];       /* what we enabled there, e.g. "cpu memory" */

    /* the parent dir poolsched-<node_id> per hierarchy; "" when unused. v2 uses slot 0. */
    char parent[H_COUNT][PATH_MAX];
    bool created_parent[H_COUNT];
    int job_count;
    /* v1 job cgroup pool (cgroup.h job_pool_size): emptied, reset jobs ready for reuse */
    int pool_size, pool_count;
    struct ps_cgroup_job *pool[64];
};

struct ps_cgroup_job {
    struct ps_cgroup_system *sys;
    struct ps_cgroup_caps caps;
    char dir[H_COUNT][PATH_MAX];    /* the job's dir per hierarchy ("" unused); v2: slot 0 */
    bool unique[H_COUNT];           /* false when the same dir as an earlier slot (co-mounted) */
    bool has_peak;                  /* v2 memory.peak exists */
    bool has_kill;                  /* v2 cgroup.kill exists */
    char procs_dir[PATH_MAX];       /* where cgroup.procs is read for killing and counting */
    char procs_file[H_COUNT][PATH_MAX + 16];    /* <dir>/cgroup.procs of the unique dirs */
    const char *procs_list[H_COUNT + 1];        /* NULL-terminated, for joining */
    int64_t base_oom_kills, base_throttled;     /* reused v1 cgroup: counters at reuse */
    /* What this process last wrote to the limit files ("" unknown): a value already there is
     * not written again (the CPU monitor sets the guarantee on every adjustment period). */
    char last_cpu_quota[64];        /* v2 cpu.max, v1 cpu.cfs_quota_us (period is constant) */
    char last_cpu_weight[32];       /* v2 cpu.weight, v1 cpu.shares */
    char last_memory_limit[32];     /* v2 memory.max, v1 memory.limit_in_bytes */
    /* A reused v1 cgroup: limits its new job has not set yet, still the previous job's values
     * until ps_cgroup_job_unset_limits_default writes the defaults (the job's own setters
     * usually write the same values again, so the pool skips a reset and a rewrite). */
    bool default_cpu_quota, default_cpu_weight, default_memory_limit;
    /* The usage files, opened once and re-read with pread from offset 0 (kernfs regenerates
     * them): a sample was an open and a path walk per file. Kept across pool reuse (a rename
     * keeps open files valid); closed before the directories are removed. */
    struct read_fd {
        const char *dir, *name;     /* dir is one of this job's dir[] slots */
        int fd;
    } rfd[8];
    int rfd_count;
};

/* What detection reads once: the agent's mounts and its cgroup (from proc_root/self). */
struct ps_cg_facts {
    char mountinfo[65536];
    size_t mountinfo_len;
    char self_cgroup[8192];
    size_t self_cgroup_len;
};

/* One cgroup version. cgroup.c tries v2, then v1, and calls the chosen one's functions for
 * everything that differs between them; optional entries may be NULL. */
struct ps_cg_backend {
    /* Makes the node cgroup(s) below the agent's: sets sys->parent, caps, mode and summary and
     * returns true; false with why when this version is not usable (nothing left behind). */
    bool (*setup)(struct ps_cgroup_system *sys, const struct ps_cg_facts *f, char *why,
                  size_t why_size);
    /* At exit: frees what the backend keeps; idle (no job left) also undoes setup. */
    void (*teardown)(struct ps_cgroup_system *sys, bool idle);
    /* Optional: after the vanished node cgroup of slot h was made again. 0 or the errno. */
    int (*parent_remade)(struct ps_cgroup_system *sys, int h, char *why, size_t why_size);
    /* Optional: an earlier job's emptied cgroup renamed for job_id, or NULL. */
    struct ps_cgroup_job *(*reuse)(struct ps_cgroup_system *sys, const char *job_id);
    /* Optional: after a fresh job's directories were made. */
    void (*job_made)(struct ps_cgroup_job *job);
    /* Optional: at destroy, with the processes gone; true when kept for reuse. */
    bool (*keep)(struct ps_cgroup_job *job);
    /* The limit files; quota_us < 0 is unlimited, bytes <= 0 unlimited. */
    int (*set_cpu_quota)(struct ps_cgroup_job *job, int64_t quota_us, struct ps_error *err);
    int (*set_cpu_weight)(struct ps_cgroup_job *job, double cores, struct ps_error *err);
    int (*set_memory_limit)(struct ps_cgroup_job *job, int64_t bytes, struct ps_error *err);
    int (*read)(struct ps_cgroup_job *job, struct ps_cgroup_usage *out, struct ps_error *err);
};

extern const struct ps_cg_backend ps_cg_v1, ps_cg_v2;

/* cgroup.c: the directory of the agent's cgroup in the hierarchy of controller (NULL: v2). */
bool ps_cg_agent_dir(const struct ps_cg_facts *f, const char *controller, char *out, size_t size,
                     char *why, size_t why_size);

/* Reading a job's files through descriptors kept open (cgroup_util.c). */
int ps_cg_job_read_int(struct ps_cgroup_job *job, const char *dir, const char *name,
                       int64_t *value, struct ps_error *err);
/* A missing key reads as -1. */
int ps_cg_job_read_key(struct ps_cgroup_job *job, const char *dir, const char *name,
                       const char *key, int64_t *value, struct ps_error *err);
void ps_cg_job_close_reads(struct ps_cgroup_job *job);
/* Writes value to dir/name unless it is `last` (what was written there before); remembers it. */
int ps_cg_write_changed(const char *dir, const char *name, const char *value, char *last,
                        size_t last_size, struct ps_error *err);

/* Helpers of the cgroup files (cgroup_util.c). */
/* snprintf into a fixed buffer where truncating a long path in a message is fine. */
void ps_cg_put(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* a/b, or path, into out of size; false when it does not fit (the copy leaves out unchanged). */
bool ps_cg_path_join(char *out, size_t size, const char *a, const char *b);
bool ps_cg_path_copy(char *out, size_t size, const char *path);
int64_t ps_cg_monotonic_ms(void);
void ps_cg_sleep_ms(int ms);
/* Writes value to dir/name. Returns 0 or the errno; sets err when given. */
int ps_cg_write_file(const char *dir, const char *name, const char *value, struct ps_error *err);
int ps_cg_read_file(const char *dir, const char *name, char *buf, size_t size, size_t *len,
                    struct ps_error *err);
bool ps_cg_file_exists(const char *dir, const char *name);
int ps_cg_read_procs(const char *dir, pid_t *pids, int max, int *total, struct ps_error *err);
int ps_cg_kill_dir(const char *dir, bool use_cgroup_kill, int timeout_ms, struct ps_error *err);
int ps_cg_remove_dir(const char *dir, int timeout_ms, struct ps_error *err);
bool ps_cg_word_in(const char *list, const char *word);
bool ps_cg_make_dir(const char *dir, bool *created, char *why, size_t why_size);
/* The start-up sweep: job-* cgroups an earlier agent left under parent; earlier instances'
 * node cgroups beside it (only dead ones: instance_lock.h). */
void ps_cg_remove_stale(const char *parent, bool v2);
void ps_cg_remove_stale_instances(struct ps_cgroup_system *sys, const char *parent);

#endif
