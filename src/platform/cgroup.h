/* cgroup.h — control groups for jobs: hard CPU limits, CPU guarantees as weights, memory limits
 * and accounting. Detected once at node start; without usable cgroups the node says why, once,
 * and runs jobs without CPU limits, measuring them from /proc instead (procfs.h).
 *
 * Layout. The agent never touches cgroups outside its own: jobs live in
 *     <agent's cgroup>/poolsched-<node_id>/job-<job_id>
 * in every hierarchy used (v2: the unified one; v1: the cpu, cpuacct and memory hierarchies,
 * co-mounted or not, each below the agent's own cgroup in that hierarchy).
 *
 * cgroup v2 is used when the unified hierarchy offers cpu and/or memory in the agent's cgroup
 * (cgroup.controllers). Its "no internal processes" rule means a cgroup that hands controllers to
 * children (cgroup.subtree_control) may hold no process itself, so the agent moves itself into
 * the leaf <agent's cgroup>/poolsched-<node_id>/agent before enabling +cpu +memory in its cgroup
 * and in poolsched-<node_id>. That works when the agent's cgroup is delegated to it (systemd
 * Delegate=yes, or root) and holds no other process; otherwise detection says which step failed.
 * On a hybrid system (cgroup2 mounted, but cpu and memory bound to v1) v2 is not usable and v1
 * is tried.
 *
 * cgroup v1 is used per controller: the cpu hierarchy for limits and weights (cpu.cfs_quota_us,
 * cpu.shares), cpuacct for CPU time (cpuacct.usage), memory for limits and usage
 * (memory.limit_in_bytes, memory.usage_in_bytes, memory.max_usage_in_bytes, oom_kill in
 * memory.oom_control). Each is usable when poolsched-<node_id> can be created below the agent's
 * cgroup and written; the others fall back to /proc.
 *
 * Mappings (both documented at the functions below):
 * - hard limit, cores -> quota per 100 ms period: v2 cpu.max "<quota_us> 100000", v1
 *   cpu.cfs_quota_us <quota_us>; at least 1000 us (the kernel's minimum); <= 0 cores: unlimited.
 * - guarantee, cores -> weight: v2 cpu.weight = 100 per core (100 is the kernel's default for one
 *   cgroup, so a 1-core job weighs as much as an unconfigured neighbour), clamped to [1, 10000];
 *   v1 cpu.shares = 1024 per core (1024 is v1's default), clamped to [2, 262144]. Weights only
 *   matter between siblings, i.e. between the jobs of this node: under contention job i gets
 *   at least guarantee_i / sum(guarantees) of what poolsched-<node_id> gets.
 * - memory limit, bytes -> v2 memory.max, v1 memory.limit_in_bytes; <= 0: unlimited. The kernel
 *   reclaims page cache first and OOM-kills inside the job when that is not enough; v2 also sets
 *   memory.oom.group so the whole job dies. The oom_kill counter tells the runner the job failed
 *   with "Memory limit exceeded".
 *
 * Not thread-safe: one thread (the agent's) drives a system and its jobs.
 */
#ifndef PS_PLATFORM_CGROUP_H
#define PS_PLATFORM_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

enum ps_cgroup_mode {
    PS_CGROUP_NONE = 0,
    PS_CGROUP_V1,
    PS_CGROUP_V2,
};

/* What a system (and each of its jobs) can do. */
struct ps_cgroup_caps {
    bool cpu_limit;         /* hard CPU limit (cpu.max / cpu.cfs_quota_us) */
    bool cpu_weight;        /* guarantee as weight (cpu.weight / cpu.shares) */
    bool cpu_usage;         /* cumulative CPU time (cpu.stat usage_usec / cpuacct.usage) */
    bool memory;            /* memory limit, usage, peak and OOM kill count */
};

struct ps_cgroup_config {
    const char *node_id;    /* required: 1..64 of [A-Za-z0-9._-], not "." or ".." */
    const char *instance_id;    /* NULL, or the agent start's id (16 hex digits): the node's
                                 * cgroup is then poolsched-<node_id>-<instance_id>, so two
                                 * agents never share one */
    const char *proc_root;  /* NULL: "/proc"; a test may point it at a fake tree */
    const char *lock_dir;   /* NULL: ps_instance_lock_dir() (instance_lock.h), machine-wide;
                             * the instance holds <lock_dir>/<its cgroup name>.lock */
    bool disable;           /* do not use cgroups at all (mode NONE, "disabled by config") */
    bool remove_stale_jobs; /* without instance_id: kill and remove job-* cgroups that an
                             * earlier agent with the same node_id left behind; with it: remove
                             * the cgroups of earlier instances (and the pre-instance name)
                             * whose instance lock is free (instance_lock.h: the agent is dead;
                             * a live agent's, even idle, stay) and that hold no process, never
                             * killing anything */
    int job_pool_size;      /* v1 only, 0..64: keep up to this many emptied job cgroups and
                             * reuse them (renamed to job-<new id>) instead of rmdir + mkdir.
                             * A reused cgroup is reset: cpuacct.usage, memory.max_usage_in_bytes
                             * and memory.failcnt to 0, memory.force_empty (no charge of the
                             * previous job left), default cpu.shares, no CPU quota, no memory
                             * limit; the counters that cannot be reset (oom_kill, nr_throttled)
                             * are read as deltas from reuse. 0: every job gets a fresh cgroup. */
};

struct ps_cgroup_system;

/* Detects cgroups and prepares poolsched-<node_id> (see the header comment). Never fails
 * because cgroups are unusable: then the system's mode is PS_CGROUP_NONE and its summary says
 * why. Errors: PS_EINVAL for a bad node_id, PS_ENOMEM. The caller frees *out. */
int ps_cgroup_system_new(const struct ps_cgroup_config *cfg, struct ps_cgroup_system **out,
                         struct ps_error *err);

/* Removes poolsched-<node_id> (and, for v2, moves the agent back and disables the controllers
 * it enabled) when no job cgroup is left; best effort, as it runs at shutdown. NULL is a no-op.
 * Jobs must have been destroyed first. */
void ps_cgroup_system_free(struct ps_cgroup_system *sys);

enum ps_cgroup_mode ps_cgroup_system_mode(const struct ps_cgroup_system *sys);

/* The i-th distinct node cgroup directory (one per hierarchy used), or NULL past the last. */
const char *ps_cgroup_system_dir(const struct ps_cgroup_system *sys, int i);

/* SIGKILLs everything in each job-* cgroup below parent (v2: cgroup.kill first) for up to
 * timeout_ms each and, with remove, removes them; returns how many processes were found. For
 * job_guard.h, which runs it in its own process (removing only once the agent is gone). */
int ps_cgroup_sweep_jobs(const char *parent, bool v2, int timeout_ms, bool remove);
struct ps_cgroup_caps ps_cgroup_system_caps(const struct ps_cgroup_system *sys);

/* One line for the node's log: what was found and why it is (not) used, e.g.
 * "cgroup v1: cpu limit+weight in /sys/fs/cgroup/cpu/poolsched-n1, ...; cgroup2 at
 * /sys/fs/cgroup/unified offers no controllers (hybrid mode)". Valid while sys lives. */
const char *ps_cgroup_system_summary(const struct ps_cgroup_system *sys);

/* ---------------------------------------------------------------------------------------------
 * Job cgroups
 * ------------------------------------------------------------------------------------------- */

struct ps_cgroup_job;

/* Creates job-<job_id> in every usable hierarchy. job_id: 1..128 of [A-Za-z0-9._-]. An existing
 * job cgroup of that name (a leftover) is killed and reused. Errors: PS_ESTATE when the system's
 * mode is NONE; PS_EINVAL for a bad job_id; PS_EIO with "mkdir(<path>): <strerror>"; PS_ENOMEM. */
int ps_cgroup_job_create(struct ps_cgroup_system *sys, const char *job_id,
                         struct ps_cgroup_job **out, struct ps_error *err);

/* Gives the limits not set since ps_cgroup_job_create their defaults (no CPU limit, the
 * weight of one core, no memory limit): a cgroup reused from the v1 pool keeps its previous
 * job's limits until then, so that a job setting the same values costs no write. Call it after
 * the setters, before a process joins through ps_cgroup_job_procs_files (attach calls it).
 * Errors: as the setters. */
int ps_cgroup_job_unset_limits_default(struct ps_cgroup_job *job, struct ps_error *err);

/* Moves process pid into the job cgroup(s) (cgroup.procs). Call it before the process runs
 * the job's command (job_process.h's attach hook) so that its children are born inside.
 * Errors: PS_EIO with "write(<path>/cgroup.procs, "<pid>"): <strerror>". */
int ps_cgroup_job_attach(struct ps_cgroup_job *job, pid_t pid, struct ps_error *err);

/* The job's cgroup.procs files, one per distinct hierarchy dir, NULL-terminated: a process
 * joins the job by writing "0" to each (job_process.h's join_procs). Valid while job lives. */
const char *const *ps_cgroup_job_procs_files(const struct ps_cgroup_job *job);

/* Sets the hard CPU limit in cores (<= 0 or infinite: unlimited). PS_ESTATE when the system
 * cannot limit CPU; PS_EINVAL for NaN; PS_EIO when the write fails. */
int ps_cgroup_job_set_cpu_limit(struct ps_cgroup_job *job, double cores, struct ps_error *err);

/* Sets the CPU guarantee in cores as a weight (mapping in the header comment). PS_ESTATE when
 * the system has no CPU weights; PS_EINVAL for a negative or NaN value; PS_EIO. */
int ps_cgroup_job_set_cpu_guarantee(struct ps_cgroup_job *job, double cores,
                                    struct ps_error *err);

/* Sets the hard memory limit in bytes (<= 0: unlimited). PS_ESTATE without a memory
 * controller; PS_EIO when the write fails (e.g. EBUSY: usage already above the new limit). */
int ps_cgroup_job_set_memory_limit(struct ps_cgroup_job *job, int64_t bytes,
                                   struct ps_error *err);

/* A reading of the job's cgroup. Fields the system cannot provide are -1. */
struct ps_cgroup_usage {
    int64_t cpu_usec;           /* cumulative CPU time of all processes ever in the job */
    int64_t memory_bytes;       /* current charge (anonymous + page cache + kernel) */
    int64_t memory_peak_bytes;  /* v2 memory.peak / v1 max_usage_in_bytes; -1 on v2 kernels
                                 * without memory.peak (< 5.19): callers sample memory_bytes */
    int64_t oom_kills;          /* processes the OOM killer killed inside the job; -1 unknown */
    int64_t limit_hits;         /* v2 memory.events "max", v1 memory.failcnt */
    int64_t cpu_throttled_periods;  /* cpu.stat nr_throttled: periods in which the hard limit
                                     * stopped the job (the kernel's proof that it bites) */
};

/* Reads the current usage. Errors: PS_EIO when a file that exists cannot be read or parsed. */
int ps_cgroup_job_read(struct ps_cgroup_job *job, struct ps_cgroup_usage *out,
                       struct ps_error *err);

/* Number of processes in the job cgroup (cgroup.procs), or a negative PS_E* code. */
int ps_cgroup_job_process_count(struct ps_cgroup_job *job, struct ps_error *err);

/* SIGKILLs every process in the job cgroup (v2 cgroup.kill when the kernel has it, else
 * repeated rounds over cgroup.procs until it stays empty, which also catches processes forked
 * meanwhile) and waits up to timeout_ms for the cgroup to empty. PS_ESTATE ("... still has N
 * processes") when it does not empty in time; PS_EIO. */
int ps_cgroup_job_kill(struct ps_cgroup_job *job, int timeout_ms, struct ps_error *err);

/* Kills what is left, removes the job cgroup(s) and frees job (even on error). Errors: the
 * first failure, e.g. PS_EIO "rmdir(<path>): Device or resource busy". NULL is a no-op. */
int ps_cgroup_job_destroy(struct ps_cgroup_job *job, struct ps_error *err);

/* The job's capabilities (the system's, minus files this kernel lacks). */
struct ps_cgroup_caps ps_cgroup_job_caps(const struct ps_cgroup_job *job);

/* The job's directory in the hierarchy that holds its CPU limit (or, lacking that, its memory),
 * for messages and tests. Valid while job lives. */
const char *ps_cgroup_job_path(const struct ps_cgroup_job *job);

/* ---------------------------------------------------------------------------------------------
 * Pure helpers (exposed for tests and fuzzers)
 * ------------------------------------------------------------------------------------------- */

#define PS_CGROUP_CPU_PERIOD_US 100000

/* CFS quota in microseconds per PS_CGROUP_CPU_PERIOD_US for a limit in cores, rounded to the
 * nearest microsecond and at least 1000; -1 means unlimited (cores <= 0 or infinite). */
int64_t ps_cgroup_cpu_quota_us(double cores);

/* v2 cpu.weight for a guarantee in cores: round(100 * cores) in [1, 10000]. */
int64_t ps_cgroup_cpu_weight_v2(double cores);

/* v1 cpu.shares for a guarantee in cores: round(1024 * cores) in [2, 262144]. */
int64_t ps_cgroup_cpu_shares_v1(double cores);

/* Finds the line "<key> <integer>" in a flat-keyed cgroup file (cpu.stat, memory.events,
 * memory.oom_control). Returns 0, PS_ENOENT when absent, PS_EINVAL when not an integer. */
int ps_cgroup_parse_key_value(const char *buf, size_t len, const char *key, int64_t *value);

/* A single integer file ("123\n", or "max" -> INT64_MAX). Returns 0 or PS_EINVAL. */
int ps_cgroup_parse_int(const char *buf, size_t len, int64_t *value);

/* The agent's path in a hierarchy from /proc/self/cgroup: for controller NULL the v2 line
 * "0::<path>", else the v1 line whose controller list holds controller ("cpu" matches
 * "cpu,cpuacct" but not "cpuset"). Writes the path (starting with '/') to out. Returns 0,
 * PS_ENOENT when there is no such line, PS_EINVAL when out is too small. */
int ps_cgroup_parse_proc_cgroup(const char *buf, size_t len, const char *controller, char *out,
                                size_t out_size);

/* One cgroup mount found in /proc/self/mountinfo. */
struct ps_cgroup_mount {
    char root[512];         /* the mount's root inside the hierarchy (field 4), e.g. "/" */
    char mount_point[512];  /* where it is mounted (field 5), octal escapes decoded */
};

/* Finds the cgroup2 mount (controller NULL) or the v1 mount whose super options hold
 * controller as a whole token. Returns 0, PS_ENOENT, or PS_EINVAL for a line it cannot parse
 * that looks like a cgroup mount. The first match wins. */
int ps_cgroup_parse_mountinfo(const char *buf, size_t len, const char *controller,
                              struct ps_cgroup_mount *out);

#endif
