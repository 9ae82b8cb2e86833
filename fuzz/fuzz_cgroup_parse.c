/* libFuzzer target: the cgroup parsers (mountinfo, /proc/self/cgroup, flat-keyed files,
 * integer files) must never read past the buffer, never crash, and return NUL-terminated
 * paths that fit. The first byte picks the parser and the controller. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t len = size - 1;
    char *buf = malloc(len ? len : 1);
    if (!buf)
        return 0;
    memcpy(buf, data + 1, len);
    static const char *const controllers[] = {NULL, "cpu", "cpuacct", "memory"};
    const char *controller = controllers[(data[0] >> 2) & 3];
    switch (data[0] & 3) {
    case 0: {
        struct ps_cgroup_mount m;
        if (ps_cgroup_parse_mountinfo(buf, len, controller, &m) == 0 &&
            (strnlen(m.root, sizeof m.root) == sizeof m.root ||
             strnlen(m.mount_point, sizeof m.mount_point) == sizeof m.mount_point ||
             m.mount_point[0] == '\0'))
            __builtin_trap();
        break;
    }
    case 1: {
        char path[64];
        if (ps_cgroup_parse_proc_cgroup(buf, len, controller, path, sizeof path) == 0 &&
            (strnlen(path, sizeof path) == sizeof path || path[0] != '/'))
            __builtin_trap();
        break;
    }
    case 2: {
        int64_t v;
        (void)ps_cgroup_parse_key_value(buf, len, controller ? controller : "oom_kill", &v);
        break;
    }
    default: {
        int64_t v;
        (void)ps_cgroup_parse_int(buf, len, &v);
        break;
    }
    }
    free(buf);
    return 0;
}
