/* job_guard.c — the process that kills the agent's jobs when the agent dies (job_guard.h). */
#include "platform/job_guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform/cgroup.h"

struct ps_job_guard {
    pid_t pid;
    int fd;             /* the write end; the guard sees EOF when it closes */
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* True when /proc/<pid>/environ holds the entry marker exactly. */
static bool has_marker(const char *pid, const char *marker, char *buf, size_t size)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    size_t len = 0;
    ssize_t n;
    while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = '\0';
    size_t ml = strlen(marker);
    for (size_t i = 0; i < len;) {
        size_t el = strnlen(buf + i, len - i);
        if (el == ml && memcmp(buf + i, marker, ml) == 0)
            return true;
        i += el + 1;
    }
    return false;
}

static int sweep_marker(const char *marker)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    static char buf[256 * 1024];
    pid_t self = getpid();
    int found = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        pid_t pid = (pid_t)atol(de->d_name);
        if (pid == self || !has_marker(de->d_name, marker, buf, sizeof buf))
            continue;
        if (kill(pid, SIGKILL) == 0)
            found++;
    }
    closedir(d);
    return found;
}

int ps_job_guard_sweep(const struct ps_job_guard_config *cfg, bool agent_gone)
{
    int found = 0;
    for (size_t i = 0; cfg->cgroup_dirs && cfg->cgroup_dirs[i]; i++)
        found += ps_cgroup_sweep_jobs(cfg->cgroup_dirs[i], cfg->cgroup_v2, 500, agent_gone);
    if (cfg->marker_env && cfg->marker_env[0])
        found += sweep_marker(cfg->marker_env);
    return found;
}

/* Sweeps until a round finds nothing or the sweep time is up; returns the processes found. */
static int sweep_rounds(const struct ps_job_guard_config *cfg, bool agent_gone,
                        int *rounds_out)
{
    int64_t deadline = mono_ms() + (cfg->sweep_ms > 0 ? cfg->sweep_ms : 5000);
    int total = 0, rounds = 0;
    for (;;) {
        int found = ps_job_guard_sweep(cfg, agent_gone);
        total += found;
        rounds++;
        if (found == 0 || mono_ms() >= deadline)
            break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (rounds_out)
        *rounds_out = rounds;
    return total;
}

static void guard_main(const struct ps_job_guard_config *cfg, int fd)
{
    (void)setsid();
    (void)prctl(PR_SET_NAME, "poolsched-guard", 0, 0, 0);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        (void)sigaction(ignored[i], &ign, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Nothing of the agent's may stay open here (sockets, other pipes, the cgroup files). */
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        close(devnull);
    }
    long max_fd = sysconf(_SC_OPEN_MAX);
    for (int k = 3; k < (max_fd > 0 && max_fd < 65536 ? max_fd : 65536); k++)
        if (k != fd)
            (void)close(k);

    /* Messages: int64 milliseconds until the jobs must be dead unless the agent speaks
     * again (<= 0: no deadline). EOF: the agent is gone. */
    int64_t kill_at = INT64_MAX;
    for (;;) {
        int64_t now = mono_ms();
        int timeout = kill_at == INT64_MAX ? -1
                      : kill_at - now > 60000 ? 60000
                      : kill_at > now ? (int)(kill_at - now) : 0;
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, timeout);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0) {
            if (mono_ms() < kill_at)
                continue;
            int found = sweep_rounds(cfg, false, NULL);
            fprintf(stderr, "node %s: guard: the agent has not confirmed a heartbeat in time "
                    "(stopped or hung?), and the scheduler is about to give its jobs away: "
                    "killed %d job processes\n", cfg->log_name ? cfg->log_name : "-", found);
            kill_at = INT64_MAX;
            continue;
        }
        int64_t msg;
        ssize_t n = pr < 0 ? -1 : read(fd, &msg, sizeof msg);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof msg)
            break;      /* EOF (or an error): the agent is gone */
        kill_at = msg > 0 ? mono_ms() + msg : INT64_MAX;
    }
    int rounds = 0;
    int total = sweep_rounds(cfg, true, &rounds);
    /* The node cgroups, now without job cgroups (on v2 the one holding the agent's leaf, and
     * this guard, stays: the next agent start removes it). */
    for (size_t i = 0; cfg->cgroup_dirs && cfg->cgroup_dirs[i]; i++)
        (void)rmdir(cfg->cgroup_dirs[i]);
    if (total > 0)
        fprintf(stderr, "node %s: guard: the agent is gone; killed %d leftover job processes "
                "in %d rounds\n", cfg->log_name ? cfg->log_name : "-", total, rounds);
    _exit(0);
}

int ps_job_guard_start(const struct ps_job_guard_config *cfg, struct ps_job_guard **out,
                       struct ps_error *err)
{
    *out = NULL;
    struct ps_job_guard *g = calloc(1, sizeof *g);
    if (!g)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        free(g);
        return ps_error_set(err, PS_EIO, "pipe2 for the job guard: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        free(g);
        return ps_error_set(err, PS_EIO, "fork of the job guard: %s", strerror(e));
    }
    if (pid == 0) {
        close(p[1]);
        guard_main(cfg, p[0]);
    }
    close(p[0]);
    g->pid = pid;
    g->fd = p[1];
    *out = g;
    return 0;
}

void ps_job_guard_arm(struct ps_job_guard *g, int64_t kill_in_ms)
{
    if (!g)
        return;
    ssize_t n;
    do
        n = write(g->fd, &kill_in_ms, sizeof kill_in_ms);
    while (n < 0 && errno == EINTR);
}

pid_t ps_job_guard_pid(const struct ps_job_guard *g)
{
    return g ? g->pid : 0;
}

void ps_job_guard_stop(struct ps_job_guard *g)
{
    if (!g)
        return;
    close(g->fd);
    int status;
    while (waitpid(g->pid, &status, 0) < 0 && errno == EINTR) {
    }
    free(g);
}
