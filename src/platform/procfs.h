/* procfs.h — what /proc says about processes and the node's memory: the accounting of jobs when
 * no cgroup is usable (cgroup.h), and the node's free memory for resource_overdraft decisions.
 *
 * A job without cgroups is its process group (job_process.h: every job is `sh -c` in a group of
 * its own). Its usage is the sum over the group's live members, found by scanning /proc:
 * - CPU seconds: utime + stime + cutime + cstime of every member. A member's reaped children
 *   move into its cutime/cstime, so a pipeline whose stages `sh` waits for is counted whole.
 *   What is lost: CPU of processes that left the group (setpgid/setsid) and of orphans that
 *   died after being re-parented outside the group (their time goes to the reaper, not to the
 *   job). The sum can also dip for a moment between a child's exit and its parent's wait;
 *   callers keep the running maximum (ps_job_runner does) because the CPU monitor wants a
 *   non-decreasing total. At the end, wait4's rusage of the job's shell is folded in.
 * - Memory: the sum of VmRSS, which counts shared pages (libraries, copy-on-write after fork)
 *   once per process, so it overestimates shared-heavy jobs; and the largest single VmHWM, which
 *   catches a spike of one process between two samples. Neither counts tmpfs or page cache,
 *   which a memory cgroup would.
 * One scan reads every /proc/<pid>/stat: O(processes on the machine) per call.
 *
 * The parsers take a buffer so that tests and fuzzers can feed them anything; they never read
 * past len and never need NUL termination.
 */
#ifndef PS_PLATFORM_PROCFS_H
#define PS_PLATFORM_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

/* The fields of /proc/<pid>/stat that poolsched uses (proc(5)); times in clock ticks. */
struct ps_procfs_stat {
    pid_t pid;
    char state;                 /* 'R', 'S', 'Z', ... */
    pid_t ppid;
    pid_t pgrp;
    pid_t session;
    uint64_t utime_ticks;
    uint64_t stime_ticks;
    uint64_t cutime_ticks;      /* of reaped children */
    uint64_t cstime_ticks;
    uint64_t starttime_ticks;   /* since boot */
};

/* Parses one /proc/<pid>/stat line. The command name (field 2) may hold spaces and ')', so the
 * fields are taken after the *last* ')'. Returns 0 or PS_EINVAL ("/proc stat: ...") when a
 * field is missing or not a number. */
int ps_procfs_parse_stat(const char *buf, size_t len, struct ps_procfs_stat *out,
                         struct ps_error *err);

/* Finds "<key>:  <n> kB" in a /proc status or meminfo text and stores n * 1024 in *bytes.
 * key is matched at the start of a line ("VmRSS", "MemAvailable"). Returns 0, PS_ENOENT when the
 * key is absent (a zombie has no VmRSS) or PS_EINVAL when its value is not "<n> kB". */
int ps_procfs_parse_kb_field(const char *buf, size_t len, const char *key, int64_t *bytes,
                             struct ps_error *err);

/* Usage of one process group (see the header comment for what it counts). */
struct ps_procfs_group_usage {
    int process_count;          /* live members (zombies are not counted; their CPU is) */
    double cpu_seconds;         /* sum of utime+stime+cutime+cstime / CLK_TCK */
    int64_t rss_bytes;          /* sum of VmRSS */
    int64_t max_process_hwm_bytes;  /* the largest VmHWM of one member */
};

/* Scans <proc_root>/[0-9]* for members of process group pgid. Processes that vanish during the
 * scan are skipped. proc_root is "/proc" unless a test says otherwise. Errors: PS_EINVAL for
 * pgid <= 0; PS_EIO when proc_root cannot be listed ("opendir(/proc): ..."). No members is not
 * an error (process_count 0). */
int ps_procfs_group_usage(const char *proc_root, pid_t pgid, struct ps_procfs_group_usage *out,
                          struct ps_error *err);

/* The pids of the live members of process group pgid (zombies excluded: they cannot run
 * and only wait for a parent, often init, to reap them), for killing what is left of a job.
 * Writes up to max pids and returns how many there are (may exceed max), or a negative PS_E*
 * code. */
int ps_procfs_group_pids(const char *proc_root, pid_t pgid, pid_t *pids, int max,
                         struct ps_error *err);

/* The node's memory from <proc_root>/meminfo: MemTotal and MemAvailable, bytes. Errors:
 * PS_ENOENT when the file or a field is missing, PS_EINVAL when a field is malformed, PS_EIO
 * when the file cannot be read; the message names the file. */
int ps_procfs_meminfo(const char *proc_root, int64_t *total_bytes, int64_t *available_bytes,
                      struct ps_error *err);

/* CPU seconds (user + system) of process pid itself and of its children it has reaped (for a
 * node agent: its jobs), from /proc/<pid>/stat. Errors: PS_ENOENT (no such process), PS_EIO,
 * PS_EINVAL. */
int ps_procfs_process_cpu(pid_t pid, double *self_seconds, double *children_seconds,
                          struct ps_error *err);

/* Reads a whole small file (a /proc or cgroup file) into buf, NUL-terminated; *len excludes the
 * NUL. Files longer than size - 1 are truncated. Errors: PS_ENOENT (no such file or process),
 * PS_EIO otherwise, with "<path>: <strerror>". Shared by procfs.c and cgroup.c. */
int ps_procfs_read_small(const char *path, char *buf, size_t size, size_t *len,
                         struct ps_error *err);

/* The first "model name" of proc_root/cpuinfo (e.g. "AMD EPYC 7702 64-Core Processor") into
 * out, or "" when there is none (an architecture without it, no /proc). */
void ps_procfs_cpu_model(const char *proc_root, char *out, size_t size);

#endif
