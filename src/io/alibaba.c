/* alibaba.c — reading the Alibaba GPU trace's CSV files strictly (io/alibaba.h). */
#include "io/alibaba.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"

/* Bounds that keep every derived value (bytes, ms, hundredths of a core) below 2^53. */
#define MAX_CPU_MILLI ((int64_t)1 << 40)
#define MAX_MEMORY_MIB ((int64_t)1 << 32)   /* 4 PiB */
#define MAX_GPU ((int64_t)1 << 20)
#define MAX_TIME_S ((int64_t)1 << 32)       /* 136 years */
#define MAX_GPU_MILLI 1000

static const char *const qos_values[] = {"LS", "Guaranteed", "Burstable", "BE", NULL};

static const char *const node_columns[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model", NULL};
static const char *const pod_columns[] = {"name", "cpu_milli", "memory_mib", "num_gpu",
                                          "gpu_milli", "gpu_spec", "qos", "pod_phase",
                                          "creation_time", "deletion_time", "scheduled_time",
                                          NULL};

/* ---- fields ----------------------------------------------------------------------------- */

struct reader {
    struct ps_csv csv;
    int col[16];
    const char *const *names;
};

static const char *field(const struct reader *r, int i)
{
    return r->csv.fields[r->col[i]];
}

static int bad_field(const struct reader *r, int i, const char *why, struct ps_error *err)
{
    return ps_error_set(err, PS_EINVAL, "%s:%ld: %s: %s, got \"%.60s\"", r->csv.source,
                        r->csv.line, r->names[i], why, field(r, i));
}

/* A non-negative decimal integer <= max; an empty field is NO_TIME when optional. */
static int read_int(const struct reader *r, int i, int64_t max, bool optional, int64_t *out,
                    struct ps_error *err)
{
    const char *s = field(r, i);
    if (s[0] == '\0') {
        if (optional) {
            *out = PS_ALIBABA_NO_TIME;
            return 0;
        }
        return bad_field(r, i, "must not be empty", err);
    }
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return bad_field(r, i, "must be a non-negative integer", err);
        v = v * 10 + (*p - '0');
        if (v > max) {
            char why[64];
            snprintf(why, sizeof why, "must be at most %lld", (long long)max);
            return bad_field(r, i, why, err);
        }
    }
    *out = v;
    return 0;
}

static int read_string(const struct reader *r, int i, bool nonempty, char **out,
                       struct ps_error *err)
{
    if (nonempty && field(r, i)[0] == '\0')
        return bad_field(r, i, "must not be empty", err);
    if (!(*out = strdup(field(r, i))))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

static int open_reader(struct reader *r, const char *text, size_t len, const char *source,
                       const char *const *names, struct ps_error *err)
{
    r->names = names;
    int rc = ps_csv_init(&r->csv, text, len, source, err);
    if (rc == 0)
        rc = ps_csv_require(&r->csv, names, err);
    if (rc != 0)
        return rc;
    for (int i = 0; names[i]; i++)
        r->col[i] = ps_csv_column(&r->csv, names[i]);
    return 0;
}

/* Appends one zeroed element to *items (of *count, capacity *cap); NULL when out of memory. */
static void *grow(void **items, size_t *count, size_t *cap, size_t size)
{
    if (*count == *cap) {
        size_t new_cap = *cap ? *cap * 2 : 256;
        void *grown = realloc(*items, new_cap * size);
        if (!grown)
            return NULL;
        *items = grown;
        *cap = new_cap;
    }
    char *item = (char *)*items + (*count)++ * size;
    memset(item, 0, size);
    return item;
}

struct name_line {
    const char *name;
    long line;
};

static int compare_name_line(const void *a, const void *b)
{
    const struct name_line *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Names must be unique: they become node or operation ids. */
static int check_unique(struct name_line *names, size_t n, const char *source, const char *what,
                        struct ps_error *err)
{
    qsort(names, n, sizeof *names, compare_name_line);
    const struct name_line *dup = NULL;
    for (size_t i = 1; i < n; i++)
        if (strcmp(names[i - 1].name, names[i].name) == 0 && (!dup || names[i].line < dup->line))
            dup = &names[i];
    if (!dup)
        return 0;
    long first = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i].name, dup->name) == 0) {
            first = names[i].line;
            break;
        }
    return ps_error_set(err, PS_EINVAL, "%s:%ld: %s: \"%s\" repeats line %ld", source, dup->line,
                        what, dup->name, first);
}

/* ---- nodes ------------------------------------------------------------------------------ */

static void free_nodes(struct ps_alibaba_node *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(nodes[i].sn);
        free(nodes[i].model);
    }
    free(nodes);
}

static int read_node(struct reader *r, struct ps_alibaba_node *node, struct ps_error *err)
{
    int rc;
    node->line = r->csv.line;
    if ((rc = read_string(r, 0, true, &node->sn, err)) != 0 ||
        (rc = read_int(r, 1, MAX_CPU_MILLI, false, &node->cpu_milli, err)) != 0 ||
        (rc = read_int(r, 2, MAX_MEMORY_MIB, false, &node->memory_mib, err)) != 0 ||
        (rc = read_int(r, 3, MAX_GPU, false, &node->gpu, err)) != 0 ||
        (rc = read_string(r, 4, false, &node->model, err)) != 0)
        return rc;
    if (strlen(node->model) > PS_ALIBABA_MAX_MODEL)
        return bad_field(r, 4, "a GPU model name must have at most 64 characters", err);
    if (node->model[0] != '\0' && !ps_formula_valid_variable(node->model))
        return bad_field(r, 4, "a GPU model must be usable as a node tag (letters, digits, - / . "
                         ": _, starting with a letter)", err);
    if (strcmp(node->model, PS_ALIBABA_CPU_ONLY_TAG) == 0 ||
        strcmp(node->model, PS_ALIBABA_UNKNOWN_GPU_TAG) == 0)
        return bad_field(r, 4, "this name is reserved for nodes without a model", err);
    return 0;
}

int ps_alibaba_read_nodes(struct ps_alibaba_trace *trace, const char *text, size_t len,
                          const char *source, struct ps_error *err)
{
    struct reader r;
    struct ps_alibaba_node *nodes = NULL;
    size_t count = 0, cap = 0;
    struct name_line *names = NULL;
    int rc = open_reader(&r, text, len, source, node_columns, err);
    while (rc == 0 && (rc = ps_csv_next(&r.csv, err)) == 1) {
        struct ps_alibaba_node *node = grow((void **)&nodes, &count, &cap, sizeof *nodes);
        rc = node ? read_node(&r, node, err) : ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    if (rc == 0 && count > 0) {
        if (!(names = malloc(count * sizeof *names))) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < count; i++)
                names[i] = (struct name_line){nodes[i].sn, nodes[i].line};
            rc = check_unique(names, count, source, "sn", err);
        }
    }
    free(names);
    ps_csv_release(&r.csv);
    if (rc != 0) {
        free_nodes(nodes, count);
        return rc;
    }
    free_nodes(trace->nodes, trace->node_count);
    trace->nodes = nodes;
    trace->node_count = count;
    return 0;
}

/* ---- pods ------------------------------------------------------------------------------- */

static void free_pods(struct ps_alibaba_pod *pods, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(pods[i].name);
        free(pods[i].gpu_spec);
        ps_formula_free(pods[i].filter);
        free(pods[i].qos);
    }
    free(pods);
}

static int read_pod(struct reader *r, struct ps_alibaba_pod *pod, struct ps_error *err)
{
    int rc;
    pod->line = r->csv.line;
    if ((rc = read_string(r, 0, true, &pod->name, err)) != 0 ||
        (rc = read_int(r, 1, MAX_CPU_MILLI, false, &pod->cpu_milli, err)) != 0 ||
        (rc = read_int(r, 2, MAX_MEMORY_MIB, false, &pod->memory_mib, err)) != 0 ||
        (rc = read_int(r, 3, MAX_GPU, false, &pod->num_gpu, err)) != 0 ||
        (rc = read_int(r, 4, MAX_GPU_MILLI, false, &pod->gpu_milli, err)) != 0 ||
        (rc = read_string(r, 5, false, &pod->gpu_spec, err)) != 0 ||
        (rc = read_string(r, 6, true, &pod->qos, err)) != 0 ||
        (rc = read_int(r, 8, MAX_TIME_S, false, &pod->creation_time, err)) != 0 ||
        (rc = read_int(r, 9, MAX_TIME_S, true, &pod->deletion_time, err)) != 0 ||
        (rc = read_int(r, 10, MAX_TIME_S, true, &pod->scheduled_time, err)) != 0)
        return rc;
    /* pod_phase (column 7) is required to be there but not used: scheduled_time says whether
     * a pod ran, and the phase at the end of the trace adds nothing to a replay. */
    bool known = false;
    for (const char *const *q = qos_values; *q; q++)
        known = known || strcmp(pod->qos, *q) == 0;
    if (!known)
        return bad_field(r, 6, "unknown qos (expected LS, Guaranteed, Burstable or BE)", err);
    if (pod->gpu_spec[0] == '\0')
        return 0;
    struct ps_error spec_err;
    ps_error_init(&spec_err);
    if ((rc = ps_formula_parse(pod->gpu_spec, &pod->filter, &spec_err)) != 0)
        return ps_error_set(err, rc, "%s:%ld: gpu_spec: %s", r->csv.source, r->csv.line,
                            spec_err.msg);
    if (ps_formula_size(pod->filter) > PS_FORMULA_MAX_FILTER_TOKENS)
        return bad_field(r, 5, "a scheduling_tag_filter may have at most 100 tags and operators", err);
    return 0;
}

int ps_alibaba_read_pods(struct ps_alibaba_trace *trace, const char *text, size_t len,
                         const char *source, struct ps_error *err)
{
    struct reader r;
    struct ps_alibaba_pod *pods = NULL;
    size_t count = 0, cap = 0;
    struct name_line *names = NULL;
    int rc = open_reader(&r, text, len, source, pod_columns, err);
    while (rc == 0 && (rc = ps_csv_next(&r.csv, err)) == 1) {
        struct ps_alibaba_pod *pod = grow((void **)&pods, &count, &cap, sizeof *pods);
        rc = pod ? read_pod(&r, pod, err) : ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    if (rc == 0 && count > 0) {
        if (!(names = malloc(count * sizeof *names))) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < count; i++)
                names[i] = (struct name_line){pods[i].name, pods[i].line};
            rc = check_unique(names, count, source, "name", err);
        }
    }
    free(names);
    ps_csv_release(&r.csv);
    if (rc != 0) {
        free_pods(pods, count);
        return rc;
    }
    free_pods(trace->pods, trace->pod_count);
    trace->pods = pods;
    trace->pod_count = count;
    return 0;
}

void ps_alibaba_trace_release(struct ps_alibaba_trace *trace)
{
    free_nodes(trace->nodes, trace->node_count);
    free_pods(trace->pods, trace->pod_count);
    trace->nodes = NULL;
    trace->pods = NULL;
    trace->node_count = trace->pod_count = 0;
}
