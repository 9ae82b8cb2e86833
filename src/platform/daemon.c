#include "platform/daemon.h"
#include "platform/file.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
}

int ps_daemon_signals_block(struct ps_error *err)
{
    sigset_t set;
    stop_set(&set);
    int rc = pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (rc != 0)
        return ps_error_set(err, PS_EIO, "pthread_sigmask: %s", strerror(rc));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &sa, NULL) != 0)
        return ps_error_set(err, PS_EIO, "sigaction(SIGPIPE): %s", strerror(errno));
    /* An inherited SIG_IGN for SIGCHLD would make the kernel reap children itself, and wait4
     * would never see how a job ended. */
    sa.sa_handler = SIG_DFL;
    if (sigaction(SIGCHLD, &sa, NULL) != 0)
        return ps_error_set(err, PS_EIO, "sigaction(SIGCHLD): %s", strerror(errno));
    return 0;
}

enum ps_daemon_event ps_daemon_wait(int64_t timeout_ms)
{
    if (timeout_ms < 0)
        timeout_ms = 0;
    sigset_t set;
    stop_set(&set);
    struct timespec ts = {(time_t)(timeout_ms / 1000), (long)(timeout_ms % 1000) * 1000000L};
    int sig = sigtimedwait(&set, NULL, &ts);
    if (sig == SIGCHLD)
        return PS_DAEMON_CHILD;
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
        return PS_DAEMON_STOP;
    return PS_DAEMON_TIMEOUT;   /* EAGAIN, or EINTR from a stopped/continued process */
}

void ps_daemon_hostname(char *buf, size_t size)
{
    if (size == 0)
        return;
    char tmp[256];
    if (gethostname(tmp, sizeof tmp) != 0 || tmp[0] == '\0') {
        snprintf(buf, size, "localhost");
        return;
    }
    tmp[sizeof tmp - 1] = '\0';
    snprintf(buf, size, "%s", tmp);
}

int ps_daemon_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

int64_t ps_daemon_physical_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    return (int64_t)pages * (int64_t)page;
}

int64_t ps_daemon_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long ps_daemon_pid(void)
{
    return (long)getpid();
}

int ps_daemon_make_dirs(const char *path, unsigned mode, struct ps_error *err)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return ps_error_set(err, PS_EINVAL, "directory path \"%.60s\": empty or too long", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
            return ps_error_set(err, PS_EIO, "mkdir(%s): %s", buf, strerror(errno));
        buf[i] = c;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return ps_error_set(err, PS_EIO, "%s: not a directory", path);
    return 0;
}

bool ps_daemon_is_root(void)
{
    return geteuid() == 0;
}

int ps_daemon_self_exe(char *buf, size_t size, struct ps_error *err)
{
    ssize_t n = readlink("/proc/self/exe", buf, size);
    if (n < 0)
        return ps_error_set(err, PS_EIO, "readlink(/proc/self/exe): %s", strerror(errno));
    if ((size_t)n >= size)
        return ps_error_set(err, PS_EINVAL, "the executable's path is too long");
    buf[n] = '\0';
    return 0;
}

int ps_daemon_make_temp_dir(char *template_path, unsigned mode, struct ps_error *err)
{
    int rc = ps_file_make_temp_dir(template_path, err);
    if (rc != 0)
        return rc;
    if (chmod(template_path, (mode_t)mode) != 0)
        return ps_error_set(err, PS_EIO, "chmod(%s): %s", template_path, strerror(errno));
    return 0;
}
