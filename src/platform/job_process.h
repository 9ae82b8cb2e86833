/* job_process.h — one job's process: `sh -c COMMAND` in a process group of its own, started in
 * its sandbox with a given environment and user, signalled as a group, reaped without blocking.
 *
 * Start-up without spec->attach (the fast path): clone(CLONE_VM | CLONE_VFORK) on a private
 * stack with all signals blocked; the child does setpgid(0, 0), resets signals, joins the
 * cgroups by writing "0" to each spec->join_procs file, then does what the fork path's child does
 * below (raw setgroups/setgid/setuid syscalls, as it shares the agent's memory) and reports a
 * failure as (step, errno) in the suspended parent's memory.
 *
 * Start-up with spec->attach (fork + exec, not posix_spawn: the child must switch user and wait
 * for its cgroup):
 *   child:  setpgid(0, 0); default signal dispositions, empty mask; waits on a pipe;
 *   parent: setpgid(pid, pid) too (no race either way), calls spec->attach (the cgroup joins the
 *           child here, so everything it forks is born inside), then releases the child;
 *   child:  stdin </dev/null, stdout/stderr to the given descriptors, chdir(cwd), then when
 *           switching user setgroups(1, {gid}), setgid, setuid — and checks that it can no
 *           longer become root; marks every other descriptor close-on-exec; execve.
 * Any child failure travels back over a close-on-exec pipe as (step, errno), so spawn reports
 * "chdir(<cwd>) as uid 65534: Permission denied" instead of a mysterious exit code 127. The
 * child calls only async-signal-safe functions: everything is prepared before fork, because the
 * agent has other threads (output readers).
 *
 * Group signals go to -pgid. The group id cannot be recycled while the group has members or its
 * leader is an unreaped zombie; after reaping, signalling the group of a job whose members have
 * all exited gives ESRCH, which is not an error here. Processes that leave the group (setsid)
 * escape group signals: with cgroups the job cgroup catches them (cgroup.h).
 */
#ifndef PS_PLATFORM_JOB_PROCESS_H
#define PS_PLATFORM_JOB_PROCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "core/error.h"

/* Called in the parent with the child's pid while the child waits, before it runs anything of
 * the job. A non-zero return aborts the spawn (the child is killed and reaped) and is returned
 * by ps_job_process_spawn. */
typedef int (*ps_job_process_attach_fn)(void *ctx, pid_t pid, struct ps_error *err);

struct ps_job_process_spec {
    const char *command;            /* run as: <shell> -c <command> */
    const char *shell;              /* NULL: "/bin/sh" */
    const char *cwd;                /* must exist */
    char *const *envp;              /* the whole environment, "K=V", NULL-terminated */
    bool switch_user;               /* drop to uid/gid (needs root) */
    uid_t uid;
    gid_t gid;
    int stdout_fd;                  /* -1: /dev/null */
    int stderr_fd;                  /* -1: /dev/null */
    ps_job_process_attach_fn attach;    /* may be NULL */
    void *attach_ctx;
    /* Without attach: cgroup.procs files (NULL-terminated, may be NULL) the child joins itself
     * by writing "0" before it switches user. Then spawn uses clone(CLONE_VM | CLONE_VFORK)
     * instead of fork: the agent's address space is not copied, and the parent waits until the
     * child has exec'ed or failed. */
    const char *const *join_procs;
    /* The first process (the shell) gets SIGKILL when the thread that spawned it exits
     * (PR_SET_PDEATHSIG, set after the user switch; a child whose parent is already gone exits
     * before running anything). Its own children are not covered: see job_guard.h. */
    bool die_with_parent;
};

struct ps_job_process {
    pid_t pid;                      /* also the process group id */
    bool reaped;
    int wait_status;                /* raw status from wait4, once reaped */
    struct rusage rusage;           /* of the shell and the descendants it waited for */
};

/* Starts the process. On error nothing is left running and p->pid is 0. Errors: PS_EINVAL
 * (missing command/cwd/envp, or switching to uid 0); PS_EIO naming the failed step, e.g.
 * "fork: Resource temporarily unavailable", "execve(/bin/sh): No such file or directory";
 * whatever attach returned. */
int ps_job_process_spawn(const struct ps_job_process_spec *spec, struct ps_job_process *p,
                         struct ps_error *err);

/* Sends sig to the whole process group. Returns 0 also when the group is gone (ESRCH).
 * PS_ESTATE when the process was never started; PS_EIO otherwise. */
int ps_job_process_signal(struct ps_job_process *p, int sig, struct ps_error *err);

/* Reaps the group leader without blocking (wait4 WNOHANG). *exited is true once it has exited
 * (then wait_status and rusage are valid; later calls just repeat that). Errors: PS_EIO. */
int ps_job_process_poll(struct ps_job_process *p, bool *exited, struct ps_error *err);

/* Like poll, but waits up to timeout_ms for the exit (in steps of a few milliseconds). */
int ps_job_process_wait(struct ps_job_process *p, int timeout_ms, bool *exited,
                        struct ps_error *err);

/* Exit code (0..255) if the process exited normally, else -1. */
int ps_job_process_exit_code(const struct ps_job_process *p);

/* The signal that killed the process, else 0. */
int ps_job_process_term_signal(const struct ps_job_process *p);

/* user + system CPU seconds from the reaped rusage (0 before reaping). */
double ps_job_process_rusage_cpu_seconds(const struct ps_job_process *p);

/* ru_maxrss in bytes: the largest resident set of the shell or any one descendant it waited
 * for — not a sum over processes. 0 before reaping. */
int64_t ps_job_process_rusage_maxrss_bytes(const struct ps_job_process *p);

/* If the process is not reaped yet: SIGKILLs the group and reaps it (blocking). Afterwards p
 * holds the final status. Safe to call more than once and on a never-started p (pid 0). */
void ps_job_process_release(struct ps_job_process *p);

#endif
