#include "node/args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/formula.h"

#define SIZE_MAX_BYTES (INT64_C(1) << 62)

int ps_node_parse_size(const char *text, int64_t *out, struct ps_error *err)
{
    const char *p = text;
    if (!isdigit((unsigned char)*p))
        return ps_error_set(err, PS_EINVAL, "size \"%.40s\": must start with a digit", text);
    errno = 0;
    char *end;
    unsigned long long n = strtoull(p, &end, 10);
    if (errno == ERANGE)
        return ps_error_set(err, PS_EINVAL, "size \"%.40s\": too large", text);
    int shift = -1;
    if (*end == '\0' || strcasecmp(end, "b") == 0) {
        shift = 0;
    } else {
        static const char units[] = "kmgtp";
        const char *u = strchr(units, tolower((unsigned char)*end));
        const char *rest = end + 1;
        if (u && *u && (strcasecmp(rest, "") == 0 || strcasecmp(rest, "b") == 0 ||
                        strcasecmp(rest, "i") == 0 || strcasecmp(rest, "ib") == 0))
            shift = 10 * (int)(u - units + 1);
    }
    if (shift < 0)
        return ps_error_set(err, PS_EINVAL, "size \"%.40s\": unknown unit \"%.10s\" (use K, M, "
                            "G, T or P, binary)", text, end);
    if (n > (unsigned long long)(SIZE_MAX_BYTES >> shift))
        return ps_error_set(err, PS_EINVAL, "size \"%.40s\": too large", text);
    *out = (int64_t)(n << shift);
    return 0;
}

int ps_node_parse_resources(const char *text, struct ps_node_resource_args *out,
                            struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    char *copy = strdup(text);
    if (!copy)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            rc = ps_error_set(err, PS_EINVAL, "resources: \"%.40s\" must be KEY=VALUE", item);
            break;
        }
        *eq = '\0';
        const char *key = item, *value = eq + 1;
        if (strcmp(key, "cpu") == 0) {
            char *end;
            errno = 0;
            double x = strtod(value, &end);
            if (out->has_cpu || *value == '\0' || *end || errno || !isfinite(x) || x <= 0 ||
                x > 100000) {
                rc = ps_error_set(err, PS_EINVAL, "resources: cpu=\"%.40s\" must be a number "
                                  "of cores in (0, 100000], given once", value);
                break;
            }
            out->cpu = round(x * 100.0) / 100.0;
            out->has_cpu = true;
        } else if (strcmp(key, "memory") == 0) {
            if (out->has_memory) {
                rc = ps_error_set(err, PS_EINVAL, "resources: memory given twice");
                break;
            }
            if ((rc = ps_node_parse_size(value, &out->memory_bytes, err)))
                break;
            if (out->memory_bytes <= 0) {
                rc = ps_error_set(err, PS_EINVAL, "resources: memory must be positive");
                break;
            }
            out->has_memory = true;
        } else if (strcmp(key, "user_slots") == 0) {
            char *end;
            errno = 0;
            long long x = strtoll(value, &end, 10);
            if (out->has_user_slots || *value == '\0' || *end || errno || x < 1 ||
                x > 1000000) {
                rc = ps_error_set(err, PS_EINVAL, "resources: user_slots=\"%.40s\" must be a "
                                  "whole number in [1, 1000000], given once", value);
                break;
            }
            out->user_slots = x;
            out->has_user_slots = true;
        } else if (strcmp(key, "gpu") == 0) {
            char *end;
            errno = 0;
            long long x = strtoll(value, &end, 10);
            if (out->has_gpu || *value == '\0' || *end || errno || x < 0 || x > 64) {
                rc = ps_error_set(err, PS_EINVAL, "resources: gpu=\"%.40s\" must be a whole "
                                  "number of devices in [0, 64], given once", value);
                break;
            }
            out->gpu = (int)x;
            out->has_gpu = true;
        } else {
            rc = ps_error_set(err, PS_EINVAL, "resources: unknown key \"%.40s\" (cpu, memory, "
                              "user_slots, gpu)", key);
            break;
        }
    }
    free(copy);
    return rc;
}

void ps_node_tags_free(char **tags, size_t count)
{
    if (!tags)
        return;
    for (size_t i = 0; i < count; i++)
        free(tags[i]);
    free(tags);
}

int ps_node_parse_tags(const char *text, char ***tags, size_t *count, struct ps_error *err)
{
    *tags = NULL;
    *count = 0;
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    char **out = calloc(cap, sizeof *out);
    char *copy = strdup(text);
    if (!out || !copy) {
        free(out);
        free(copy);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    size_t n = 0;
    int rc = 0;
    if (*text) {
        char *p = copy;
        for (;;) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            if (!ps_formula_valid_variable(p)) {
                rc = ps_error_set(err, PS_EINVAL, "tags: \"%.40s\" is not a valid tag name", p);
                break;
            }
            for (size_t i = 0; i < n; i++)
                if (strcmp(out[i], p) == 0)
                    rc = ps_error_set(err, PS_EINVAL, "tags: \"%.40s\" given twice", p);
            if (rc)
                break;
            if (!(out[n] = strdup(p))) {
                rc = ps_error_set(err, PS_ENOMEM, "out of memory");
                break;
            }
            n++;
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    free(copy);
    if (rc) {
        ps_node_tags_free(out, n);
        return rc;
    }
    *tags = out;
    *count = n;
    return 0;
}
