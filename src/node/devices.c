#include "node/devices.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int ps_node_devices_init(struct ps_node_devices *d, int gpu_count, int start_port,
                         int port_count, ps_node_port_probe_fn probe, struct ps_error *err)
{
    memset(d, 0, sizeof *d);
    if (gpu_count < 0 || gpu_count > PS_NODE_MAX_GPUS)
        return ps_error_set(err, PS_EINVAL, "gpu: %d must be from 0 to %d", gpu_count,
                            PS_NODE_MAX_GPUS);
    if (port_count < 0 || start_port < 1 || start_port > 65535 ||
        (int64_t)start_port + port_count - 1 > 65535)
        return ps_error_set(err, PS_EINVAL, "ports: start_port %d and port_count %d must "
                            "give a range within 1..65535", start_port, port_count);
    if (port_count > 0 && !(d->port_busy = calloc((size_t)port_count, 1)))
        return ps_error_set(err, PS_ENOMEM, "out of memory for the node's ports");
    d->gpu_count = gpu_count;
    d->start_port = start_port;
    d->port_count = port_count;
    d->probe = probe;
    return 0;
}

void ps_node_devices_release(struct ps_node_devices *d)
{
    free(d->port_busy);
    memset(d, 0, sizeof *d);
}

static int popcount(uint64_t x)
{
    return __builtin_popcountll(x);
}

int ps_node_gpus_acquire(struct ps_node_devices *d, int count, int *out, struct ps_error *err)
{
    uint64_t all = d->gpu_count == 64 ? ~UINT64_C(0) : (UINT64_C(1) << d->gpu_count) - 1;
    uint64_t free_mask = all & ~d->gpu_busy;
    if (count <= 0)
        return 0;
    if (popcount(free_mask) < count)
        return ps_error_set(err, PS_ELIMIT, "Cannot find enough empty GPU slots "
                            "(free_slot_count %d, required_slot_count %d)", popcount(free_mask),
                            count);
    /* groups of 2^level consecutive devices, the smallest level that has one with enough */
    for (int size = 1; size <= 64; size *= 2) {
        for (int first = 0; first < d->gpu_count; first += size) {
            uint64_t group = size == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << size) - 1) << first;
            uint64_t avail = free_mask & group;
            if (popcount(avail) < count)
                continue;
            for (int i = 0, n = 0; n < count; i++)
                if (avail & (UINT64_C(1) << i)) {
                    out[n++] = i;
                    d->gpu_busy |= UINT64_C(1) << i;
                }
            return 0;
        }
    }
    return ps_error_set(err, PS_ELIMIT, "Cannot find enough empty GPU slots");
}

void ps_node_gpus_free(struct ps_node_devices *d, const int *gpus, int count)
{
    for (int i = 0; i < count; i++)
        if (gpus[i] >= 0 && gpus[i] < d->gpu_count)
            d->gpu_busy &= ~(UINT64_C(1) << gpus[i]);
}

int ps_node_ports_acquire(struct ps_node_devices *d, int count, int *out, struct ps_error *err)
{
    int n = 0;
    for (int i = 0; i < d->port_count && n < count; i++)
        if (!d->port_busy[i] && (!d->probe || d->probe(d->start_port + i)))
            out[n++] = d->start_port + i;
    if (n < count)
        return ps_error_set(err, PS_ELIMIT, "Not enough bindable free ports (port_count %d, "
                            "free %d of %d..%d)", count, n, d->start_port,
                            d->start_port + d->port_count - 1);
    for (int i = 0; i < n; i++)
        d->port_busy[out[i] - d->start_port] = 1;
    return 0;
}

void ps_node_ports_free(struct ps_node_devices *d, const int *ports, int count)
{
    for (int i = 0; i < count; i++)
        if (ports[i] >= d->start_port && ports[i] - d->start_port < d->port_count)
            d->port_busy[ports[i] - d->start_port] = 0;
}

static bool bind_once(int family, int port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    int rc;
    if (family == AF_INET6) {
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
                                 .sin6_addr = IN6ADDR_ANY_INIT};
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_ANY)};
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    }
    close(fd);
    return rc == 0;
}

bool ps_node_port_bindable(int port)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        close(fd);
        return bind_once(AF_INET6, port);
    }
    return bind_once(AF_INET, port);
}

void ps_node_env_free(char **env)
{
    if (!env)
        return;
    for (char **p = env; *p; p++)
        free(*p);
    free(env);
}

/* "KEY=a,b,c" from the numbers. */
static char *list_var(const char *key, const int *v, int n)
{
    size_t cap = strlen(key) + 2 + (size_t)n * 12;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t len = (size_t)snprintf(s, cap, "%s=", key);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%d", i ? "," : "", v[i]);
    return s;
}

char **ps_node_env_with_devices(const char *const *env, const int *gpus, int gpu_count,
                                const int *ports, int port_count)
{
    size_t n = 0;
    while (env && env[n])
        n++;
    size_t extra = (gpu_count > 0 ? 2 : 0) + (size_t)port_count;
    char **out = calloc(n + extra + 1, sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (; k < n; k++)
        if (!(out[k] = strdup(env[k])))
            goto fail;
    if (gpu_count > 0) {
        if (!(out[k++] = list_var("NVIDIA_VISIBLE_DEVICES", gpus, gpu_count)) ||
            !(out[k++] = list_var("CUDA_VISIBLE_DEVICES", gpus, gpu_count)))
            goto fail;
    }
    for (int i = 0; i < port_count; i++) {
        char name[32];
        snprintf(name, sizeof name, "YT_PORT_%d", i);
        if (!(out[k++] = list_var(name, &ports[i], 1)))
            goto fail;
    }
    return out;
fail:
    ps_node_env_free(out);
    return NULL;
}
