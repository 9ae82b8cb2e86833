/* devices.h — what a node hands to one job besides CPU and memory: GPU devices by index and
 * network ports (YTsaurus's exec node gpu_manager and job_resource_manager ports).
 *
 * GPUs: the node has gpu_count devices, /dev/nvidia0 .. /dev/nvidia<N-1>. A job with
 * gpu_limit G gets G free devices, picked as upstream's TGpuManager::AcquireGpuSlots does: the
 * devices form groups of 1, 2, 4, 8, ... consecutive indices (a group of size 2^k holds indices
 * i with the same i / 2^k); the first group, smallest size first and lowest index first, with
 * at least G free devices gives its G lowest free ones. So one 1-GPU job on 4 devices gets
 * device 0 and a later 2-GPU job gets 2 and 3, a pair of its own.
 *
 * Ports: the node owns the range start_port .. start_port + port_count - 1 (upstream's
 * job_resource_manager start_port 20000 and port_count 10000). A job with port_count P gets
 * the P lowest free ports of the range that a preliminary bind accepts (upstream's
 * AllocateFreePorts: a port some other process holds is skipped and stays free for later).
 *
 * Both are released when the job ends. Not thread-safe: the job table's one thread drives it.
 */
#ifndef PS_NODE_DEVICES_H
#define PS_NODE_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define PS_NODE_MAX_GPUS 64
#define PS_NODE_MAX_JOB_PORTS 50          /* upstream's user job spec port_count bound */
#define PS_NODE_DEFAULT_START_PORT 20000
#define PS_NODE_DEFAULT_PORT_COUNT 10000

/* May a job be given this port? (a preliminary bind); NULL: every port of the range may. */
typedef bool (*ps_node_port_probe_fn)(int port);

struct ps_node_devices {
    int gpu_count;                      /* 0 .. PS_NODE_MAX_GPUS */
    uint64_t gpu_busy;                  /* bit i: device i is a running job's */
    int start_port, port_count;         /* port_count 0: no ports */
    uint8_t *port_busy;                 /* port_count flags */
    ps_node_port_probe_fn probe;
};

/* Errors: PS_EINVAL (gpu_count or the port range out of bounds), PS_ENOMEM. */
int ps_node_devices_init(struct ps_node_devices *d, int gpu_count, int start_port,
                         int port_count, ps_node_port_probe_fn probe, struct ps_error *err);
void ps_node_devices_release(struct ps_node_devices *d);

/* Takes count GPU devices into out (ascending). PS_ELIMIT when not enough are free (nothing is
 * taken then), naming the free and the required count. */
int ps_node_gpus_acquire(struct ps_node_devices *d, int count, int *out, struct ps_error *err);
void ps_node_gpus_free(struct ps_node_devices *d, const int *gpus, int count);

/* Takes count ports into out (ascending). PS_ELIMIT when not enough bindable free ports
 * (nothing is taken then). */
int ps_node_ports_acquire(struct ps_node_devices *d, int count, int *out, struct ps_error *err);
void ps_node_ports_free(struct ps_node_devices *d, const int *ports, int count);

/* The real preliminary bind: a TCP socket bound to the port on any IPv6 (else IPv4) address,
 * closed at once. */
bool ps_node_port_bindable(int port);

/* env (NULL-terminated "KEY=VALUE", may be NULL) plus what names the job's devices:
 * NVIDIA_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES ("0,2"; only with gpus) and YT_PORT_<i>
 * (upstream's user job environment). A new NULL-terminated array of new strings; free with
 * ps_node_env_free. NULL when out of memory. */
char **ps_node_env_with_devices(const char *const *env, const int *gpus, int gpu_count,
                                const int *ports, int port_count);
void ps_node_env_free(char **env);

#endif
