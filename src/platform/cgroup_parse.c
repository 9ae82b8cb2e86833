/* cgroup_parse.c — the pure part of cgroup.h: value mappings and parsers of cgroup files,
 * /proc/self/cgroup and /proc/self/mountinfo. No OS calls here. */
#include "platform/cgroup.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

int64_t ps_cgroup_cpu_quota_us(double cores)
{
    if (!(cores > 0) || isinf(cores))
        return -1;
    double q = round(cores * (double)PS_CGROUP_CPU_PERIOD_US);
    if (q >= 9.0e15)        /* far beyond any machine; keep the integer conversion defined */
        return -1;
    return q < 1000 ? 1000 : (int64_t)q;
}

static int64_t scaled_clamped(double cores, double per_core, int64_t lo, int64_t hi)
{
    if (!(cores > 0))       /* also NaN */
        return lo;
    double v = round(cores * per_core);
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

int64_t ps_cgroup_cpu_weight_v2(double cores)
{
    return scaled_clamped(cores, 100.0, 1, 10000);
}

int64_t ps_cgroup_cpu_shares_v1(double cores)
{
    return scaled_clamped(cores, 1024.0, 2, 262144);
}

/* Parses an optionally signed decimal from [p, end) that must be followed only by spaces or a
 * newline up to end. */
static bool parse_integer(const char *p, const char *end, int64_t *value)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    bool neg = p < end && *p == '-';
    if (neg)
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return false;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        p++;
    }
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
        p++;
    if (p != end)
        return false;
    *value = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

int ps_cgroup_parse_int(const char *buf, size_t len, int64_t *value)
{
    const char *end = buf + len;
    while (end > buf && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    if (end - buf == 3 && memcmp(buf, "max", 3) == 0) {
        *value = INT64_MAX;
        return 0;
    }
    return parse_integer(buf, end, value) ? 0 : PS_EINVAL;
}

int ps_cgroup_parse_key_value(const char *buf, size_t len, const char *key, int64_t *value)
{
    size_t klen = strlen(key);
    const char *end = buf + len;
    for (const char *line = buf; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *line_end = nl ? nl : end;
        if ((size_t)(line_end - line) > klen && memcmp(line, key, klen) == 0 &&
            line[klen] == ' ')
            return parse_integer(line + klen + 1, line_end, value) ? 0 : PS_EINVAL;
        line = nl ? nl + 1 : end;
    }
    return PS_ENOENT;
}

/* Does the comma-separated list [p, end) hold token as a whole item? */
static bool list_has(const char *p, const char *end, const char *token)
{
    size_t tlen = strlen(token);
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *item_end = comma ? comma : end;
        if ((size_t)(item_end - p) == tlen && memcmp(p, token, tlen) == 0)
            return true;
        p = comma ? comma + 1 : end;
    }
    return false;
}

int ps_cgroup_parse_proc_cgroup(const char *buf, size_t len, const char *controller, char *out,
                                size_t out_size)
{
    const char *end = buf + len;
    for (const char *line = buf; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *line_end = nl ? nl : end;
        const char *c1 = memchr(line, ':', (size_t)(line_end - line));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(line_end - c1 - 1)) : NULL;
        if (c2) {
            bool match;
            if (!controller)
                match = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
            else
                match = list_has(c1 + 1, c2, controller);
            if (match) {
                size_t plen = (size_t)(line_end - (c2 + 1));
                if (plen == 0 || c2[1] != '/')
                    return PS_EINVAL;
                if (plen + 1 > out_size)
                    return PS_EINVAL;
                memcpy(out, c2 + 1, plen);
                out[plen] = '\0';
                return 0;
            }
        }
        line = nl ? nl + 1 : end;
    }
    return PS_ENOENT;
}

/* Copies the space-delimited field [p, q) to out, decoding mountinfo's \ooo octal escapes. */
static bool copy_field(const char *p, const char *q, char *out, size_t out_size)
{
    size_t n = 0;
    while (p < q) {
        char ch = *p++;
        if (ch == '\\' && q - p >= 3 && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' &&
            p[1] <= '7' && p[2] >= '0' && p[2] <= '7') {
            ch = (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0'));
            p += 3;
        }
        if (ch == '\0' || n + 1 >= out_size)
            return false;
        out[n++] = ch;
    }
    out[n] = '\0';
    return true;
}

/* Splits [line, end) at spaces into at most max fields; returns the count. */
static int split_fields(const char *line, const char *end, const char **starts,
                        const char **ends, int max)
{
    int n = 0;
    const char *p = line;
    while (p < end && n < max) {
        while (p < end && *p == ' ')
            p++;
        if (p >= end)
            break;
        starts[n] = p;
        while (p < end && *p != ' ')
            p++;
        ends[n] = p;
        n++;
    }
    return n;
}

static bool field_is(const char *s, const char *e, const char *word)
{
    size_t wl = strlen(word);
    return (size_t)(e - s) == wl && memcmp(s, word, wl) == 0;
}

int ps_cgroup_parse_mountinfo(const char *buf, size_t len, const char *controller,
                              struct ps_cgroup_mount *out)
{
    const char *end = buf + len;
    enum { MAX_FIELDS = 64 };
    const char *fs[MAX_FIELDS], *fe[MAX_FIELDS];
    for (const char *line = buf; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *line_end = nl ? nl : end;
        int n = split_fields(line, line_end, fs, fe, MAX_FIELDS);
        int sep = -1;
        for (int i = 6; i < n; i++)
            if (field_is(fs[i], fe[i], "-")) {
                sep = i;
                break;
            }
        /* id parent dev root mount-point options [optional...] - type source super-options */
        if (sep >= 6 && sep + 1 < n) {
            const char *ts = fs[sep + 1], *te = fe[sep + 1];
            bool is_v2 = field_is(ts, te, "cgroup2");
            bool is_v1 = field_is(ts, te, "cgroup");
            bool match = false;
            if (!controller)
                match = is_v2;
            else if (is_v1 && sep + 3 < n)
                match = list_has(fs[sep + 3], fe[sep + 3], controller);
            if (match) {
                if (!copy_field(fs[3], fe[3], out->root, sizeof out->root) ||
                    !copy_field(fs[4], fe[4], out->mount_point, sizeof out->mount_point))
                    return PS_EINVAL;
                return 0;
            }
        }
        line = nl ? nl + 1 : end;
    }
    return PS_ENOENT;
}
