#include "platform/job_process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Steps of the child, reported back on failure. */
enum step {
    STEP_SETPGID = 1,
    STEP_CGROUP,
    STEP_STDIO,
    STEP_SETGROUPS,
    STEP_SETGID,
    STEP_SETUID,
    STEP_STILL_ROOT,
    STEP_CHDIR,
    STEP_EXEC,
    STEP_PDEATHSIG,
};

struct child_report {
    int step;
    int err;
};

struct child_args {
    const char *shell;
    char *argv[4];
    char *const *envp;
    const char *cwd;
    bool switch_user;
    uid_t uid;
    gid_t gid;
    int devnull;
    int out_fd, err_fd;
    int go_r, report_w;
    int max_fd;
    bool die_with_parent;
    pid_t parent_pid;
    /* vfork path: join these cgroup.procs files; report failures here (the parent's memory) */
    const char *const *join_procs;
    bool vfork_mode;
    volatile struct child_report *shared;
};

static void child_fail(const struct child_args *a, int step, int e)
{
    if (a->vfork_mode) {
        a->shared->err = e;
        a->shared->step = step;
        _exit(127);
    }
    struct child_report r = {step, e};
    ssize_t w = write(a->report_w, &r, sizeof r);
    (void)w;
    _exit(127);
}

/* A descriptor that is not 0..2, so dup2 onto 0..2 cannot clobber it. */
static int above_stdio(const struct child_args *a, int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (moved < 0)
        child_fail(a, STEP_STDIO, errno);
    return moved;
}

/* Runs in the child: async-signal-safe calls only. Never returns. */
static void child_main(struct child_args *a)
{
    if (setpgid(0, 0) != 0)
        child_fail(a, STEP_SETPGID, errno);
    /* The agent may ignore SIGPIPE or SIGINT; exec keeps ignored signals ignored, and a job must
     * see SIGINT to be interruptible. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)sigaction(sig, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (a->vfork_mode) {
        /* Join the job's cgroups before anything of the job runs; "0" is the writer itself. */
        for (size_t i = 0; a->join_procs && a->join_procs[i]; i++) {
            int fd = open(a->join_procs[i], O_WRONLY | O_CLOEXEC);
            if (fd < 0)
                child_fail(a, STEP_CGROUP, errno);
            ssize_t w;
            do
                w = write(fd, "0", 1);
            while (w < 0 && errno == EINTR);
            if (w != 1) {
                int e = w < 0 ? errno : EIO;
                close(fd);
                child_fail(a, STEP_CGROUP, e);
            }
            close(fd);
        }
    } else {
        char go;
        ssize_t n;
        do
            n = read(a->go_r, &go, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
            _exit(127);     /* the parent gave up (attach failed): nothing to report */
    }

    int devnull = above_stdio(a, a->devnull);
    int out = above_stdio(a, a->out_fd >= 0 ? a->out_fd : devnull);
    int err = above_stdio(a, a->err_fd >= 0 ? a->err_fd : devnull);
    if (dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        child_fail(a, STEP_STDIO, errno);

    if (a->switch_user) {
        /* Raw syscalls: glibc's wrappers would also change the credentials of the agent's other
         * threads (setxid broadcast), which the vfork child shares memory with. They change only
         * the calling process here, which is all a fork child has anyway. */
        gid_t groups[1] = {a->gid};
        if (syscall(SYS_setgroups, 1, groups) != 0)
            child_fail(a, STEP_SETGROUPS, errno);
        if (syscall(SYS_setgid, a->gid) != 0)
            child_fail(a, STEP_SETGID, errno);
        if (syscall(SYS_setuid, a->uid) != 0)
            child_fail(a, STEP_SETUID, errno);
        if (syscall(SYS_setuid, 0) == 0)
            child_fail(a, STEP_STILL_ROOT, EPERM);
    }
    /* After the user switch, which clears the parent-death signal. If the agent died before
     * this point the child has been re-parented already: it must not run the job at all. */
    if (a->die_with_parent) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
            child_fail(a, STEP_PDEATHSIG, errno);
        if (getppid() != a->parent_pid)
            _exit(127);
    }
    if (chdir(a->cwd) != 0)
        child_fail(a, STEP_CHDIR, errno);

    /* Whatever the agent has open (sockets, other jobs' pipes) must not leak into the job. */
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
        for (int fd = 3; fd <= a->max_fd; fd++)
            (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    execve(a->shell, a->argv, a->envp);
    child_fail(a, STEP_EXEC, errno);
}

static const char *step_call(int step)
{
    switch (step) {
    case STEP_SETPGID: return "setpgid";
    case STEP_CGROUP: return "joining the job cgroup (write of \"0\" to cgroup.procs)";
    case STEP_STDIO: return "dup2 of stdin/stdout/stderr";
    case STEP_SETGROUPS: return "setgroups";
    case STEP_SETGID: return "setgid";
    case STEP_SETUID: return "setuid";
    case STEP_STILL_ROOT: return "dropping root (setuid(0) still succeeds)";
    case STEP_CHDIR: return "chdir";
    case STEP_EXEC: return "execve";
    case STEP_PDEATHSIG: return "prctl(PR_SET_PDEATHSIG)";
    default: return "child set-up";
    }
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void reap_blocking(pid_t pid)
{
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

#define VFORK_STACK_SIZE (256 * 1024)

static int vfork_child(void *arg)
{
    child_main(arg);
    return 127;
}

static int report_failure(const struct ps_job_process_spec *spec, const char *shell,
                          int step, int e, struct ps_error *err)
{
    if (step == STEP_CHDIR || step == STEP_EXEC)
        return ps_error_set(err, PS_EIO, "%s(%s)%s: %s", step_call(step),
                            step == STEP_CHDIR ? spec->cwd : shell,
                            spec->switch_user ? " as the job user" : "", strerror(e));
    return ps_error_set(err, PS_EIO, "starting the job: %s failed: %s", step_call(step),
                        strerror(e));
}

/* clone(CLONE_VM | CLONE_VFORK): returns once the child has exec'ed or exited. */
static int spawn_vfork(const struct ps_job_process_spec *spec, struct child_args *a,
                       struct ps_job_process *p, struct ps_error *err)
{
    static void *stack;         /* one agent thread spawns at a time (not thread-safe, as all) */
    if (!stack) {
        void *s = mmap(NULL, VFORK_STACK_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (s == MAP_FAILED)
            return ps_error_set(err, PS_ENOMEM, "mmap of the spawn stack: %s", strerror(errno));
        stack = s;
    }
    volatile struct child_report shared = {0, 0};
    a->vfork_mode = true;
    a->shared = &shared;
    a->join_procs = spec->join_procs;
    a->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (a->devnull < 0)
        return ps_error_set(err, PS_EIO, "open(/dev/null): %s", strerror(errno));

    /* No handler of the agent may run in the child (it shares our memory): block everything
     * until the child has reset the dispositions. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = clone(vfork_child, (char *)stack + VFORK_STACK_SIZE,
                      CLONE_VM | CLONE_VFORK | SIGCHLD, a);
    int clone_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close_fd(&a->devnull);
    if (pid < 0)
        return ps_error_set(err, PS_EIO, "clone: %s", strerror(clone_errno));
    if (shared.step != 0) {
        reap_blocking(pid);
        return report_failure(spec, a->shell, shared.step, shared.err, err);
    }
    p->pid = pid;
    return 0;
}

int ps_job_process_spawn(const struct ps_job_process_spec *spec, struct ps_job_process *p,
                         struct ps_error *err)
{
    memset(p, 0, sizeof *p);
    if (!spec->command || !spec->cwd || !spec->envp)
        return ps_error_set(err, PS_EINVAL, "job process: command, cwd and environment are "
                            "required");
    if (spec->switch_user && spec->uid == 0)
        return ps_error_set(err, PS_EINVAL, "job process: refusing to run a job as root "
                            "(uid 0)");
    struct child_args a = {0};
    a.shell = spec->shell ? spec->shell : "/bin/sh";
    a.argv[0] = (char *)"sh";
    a.argv[1] = (char *)"-c";
    a.argv[2] = (char *)spec->command;
    a.argv[3] = NULL;
    a.envp = spec->envp;
    a.cwd = spec->cwd;
    a.switch_user = spec->switch_user;
    a.uid = spec->uid;
    a.gid = spec->gid;
    a.die_with_parent = spec->die_with_parent;
    a.parent_pid = getpid();
    a.out_fd = spec->stdout_fd;
    a.err_fd = spec->stderr_fd;
    long max_fd = sysconf(_SC_OPEN_MAX);
    a.max_fd = max_fd > 0 && max_fd < 65536 ? (int)max_fd : 65536;
    if (!spec->attach)
        return spawn_vfork(spec, &a, p, err);

    int go[2] = {-1, -1}, report[2] = {-1, -1};
    a.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (a.devnull < 0)
        return ps_error_set(err, PS_EIO, "open(/dev/null): %s", strerror(errno));
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0) {
        int e = errno;
        close_fd(&a.devnull);
        close_fd(&go[0]);
        close_fd(&go[1]);
        return ps_error_set(err, PS_EIO, "pipe2 for job start-up: %s", strerror(e));
    }
    a.go_r = go[0];
    a.report_w = report[1];

    pid_t pid = fork();
    if (pid == 0) {
        close(go[1]);
        close(report[0]);
        child_main(&a);
    }
    int fork_errno = errno;
    close_fd(&go[0]);
    close_fd(&report[1]);
    close_fd(&a.devnull);
    if (pid < 0) {
        close_fd(&go[1]);
        close_fd(&report[0]);
        return ps_error_set(err, PS_EIO, "fork: %s", strerror(fork_errno));
    }
    /* Both sides call setpgid so that the group exists before either goes on. EACCES cannot
     * happen (the child has not exec'ed); ESRCH only if it died already. */
    (void)setpgid(pid, pid);

    int rc = 0;
    if (spec->attach)
        rc = spec->attach(spec->attach_ctx, pid, err);
    if (rc != 0) {
        close_fd(&go[1]);           /* the child reads EOF and exits */
        close_fd(&report[0]);
        kill(pid, SIGKILL);
        reap_blocking(pid);
        return rc;
    }
    ssize_t n;
    do
        n = write(go[1], "g", 1);
    while (n < 0 && errno == EINTR);
    close_fd(&go[1]);

    struct child_report r;
    do
        n = read(report[0], &r, sizeof r);
    while (n < 0 && errno == EINTR);
    close_fd(&report[0]);
    if (n == (ssize_t)sizeof r) {
        reap_blocking(pid);
        return report_failure(spec, a.shell, r.step, r.err, err);
    }
    if (n != 0) {
        kill(pid, SIGKILL);
        reap_blocking(pid);
        return ps_error_set(err, PS_EIO, "starting the job: the child reported nothing "
                            "readable");
    }
    p->pid = pid;
    return 0;
}

int ps_job_process_signal(struct ps_job_process *p, int sig, struct ps_error *err)
{
    if (p->pid <= 0)
        return ps_error_set(err, PS_ESTATE, "job process: not started");
    if (kill(-p->pid, sig) != 0 && errno != ESRCH)
        return ps_error_set(err, PS_EIO, "kill(-%d, %s): %s", (int)p->pid, strsignal(sig),
                            strerror(errno));
    return 0;
}

int ps_job_process_poll(struct ps_job_process *p, bool *exited, struct ps_error *err)
{
    *exited = p->reaped;
    if (p->reaped)
        return 0;
    if (p->pid <= 0)
        return ps_error_set(err, PS_ESTATE, "job process: not started");
    int status;
    struct rusage ru;
    pid_t r;
    do
        r = wait4(p->pid, &status, WNOHANG, &ru);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return ps_error_set(err, PS_EIO, "wait4(%d): %s", (int)p->pid, strerror(errno));
    if (r == 0)
        return 0;
    p->reaped = true;
    p->wait_status = status;
    p->rusage = ru;
    *exited = true;
    return 0;
}

int ps_job_process_wait(struct ps_job_process *p, int timeout_ms, bool *exited,
                        struct ps_error *err)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int step_ms = 1;
    for (;;) {
        int rc = ps_job_process_poll(p, exited, err);
        if (rc != 0 || *exited)
            return rc;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t elapsed = (int64_t)(now.tv_sec - start.tv_sec) * 1000 +
                          (now.tv_nsec - start.tv_nsec) / 1000000;
        if (elapsed >= timeout_ms)
            return 0;
        struct timespec ts = {0, (long)step_ms * 1000000L};
        nanosleep(&ts, NULL);
        if (step_ms < 16)
            step_ms *= 2;
    }
}

int ps_job_process_exit_code(const struct ps_job_process *p)
{
    return p->reaped && WIFEXITED(p->wait_status) ? WEXITSTATUS(p->wait_status) : -1;
}

int ps_job_process_term_signal(const struct ps_job_process *p)
{
    return p->reaped && WIFSIGNALED(p->wait_status) ? WTERMSIG(p->wait_status) : 0;
}

double ps_job_process_rusage_cpu_seconds(const struct ps_job_process *p)
{
    if (!p->reaped)
        return 0;
    const struct rusage *r = &p->rusage;
    return (double)r->ru_utime.tv_sec + (double)r->ru_utime.tv_usec / 1e6 +
           (double)r->ru_stime.tv_sec + (double)r->ru_stime.tv_usec / 1e6;
}

int64_t ps_job_process_rusage_maxrss_bytes(const struct ps_job_process *p)
{
    return p->reaped ? (int64_t)p->rusage.ru_maxrss * 1024 : 0;   /* Linux: kilobytes */
}

void ps_job_process_release(struct ps_job_process *p)
{
    if (p->pid <= 0 || p->reaped)
        return;
    (void)kill(-p->pid, SIGKILL);
    (void)kill(p->pid, SIGKILL);
    int status;
    struct rusage ru;
    pid_t r;
    do
        r = wait4(p->pid, &status, 0, &ru);
    while (r < 0 && errno == EINTR);
    if (r == p->pid) {
        p->wait_status = status;
        p->rusage = ru;
    }
    p->reaped = true;
}
