#include "server/metrics.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ps_metric {
    struct ps_metric_family *fam;
    char **label_values;          /* fam->label_count copies */
    double value;                 /* counter, gauge */
    uint64_t *bucket_counts;      /* histogram: bound_count + 1, not cumulative; last is +Inf */
    double sum;
    uint64_t count;
};

struct ps_metric_family {
    pthread_mutex_t mu;           /* guards series and every value in them */
    enum ps_metric_type type;
    char *name;
    char *help;
    size_t label_count;
    char **label_names;
    double *bounds;
    size_t bound_count;
    struct ps_metric **series;    /* sorted by label values */
    size_t series_count, series_cap;
};

struct ps_metrics {
    pthread_mutex_t mu;           /* guards the family list; taken before a family's mutex */
    struct ps_metric_family **families;   /* sorted by name */
    size_t family_count, family_cap;
};

/* ---- output buffer ------------------------------------------------------------------------- */

struct buf {
    char *p;
    size_t len, cap;
    int oom;
};

static void buf_reserve(struct buf *b, size_t extra)
{
    if (b->oom || b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void buf_add(struct buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    if (b->oom)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

/* Escapes backslash and newline, and the double quote too when in_label. */
static void buf_escaped(struct buf *b, const char *s, int in_label)
{
    for (const char *run = s;; s++) {
        const char *rep = NULL;
        if (*s == '\\')
            rep = "\\\\";
        else if (*s == '\n')
            rep = "\\n";
        else if (*s == '"' && in_label)
            rep = "\\\"";
        if (rep || *s == '\0') {
            buf_add(b, run, (size_t)(s - run));
            if (!rep)
                return;
            buf_str(b, rep);
            run = s + 1;
        }
    }
}

/* ---- validation ---------------------------------------------------------------------------- */

static int valid_name(const char *s, int allow_colon)
{
    if (!s || !*s)
        return 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

static const char *type_name(enum ps_metric_type t)
{
    switch (t) {
    case PS_METRIC_COUNTER: return "counter";
    case PS_METRIC_GAUGE: return "gauge";
    case PS_METRIC_HISTOGRAM: return "histogram";
    }
    return "untyped";
}

char *ps_metrics_format_double(double v, char buf[32])
{
    if (isnan(v)) {
        strcpy(buf, "NaN");
    } else if (isinf(v)) {
        strcpy(buf, v > 0 ? "+Inf" : "-Inf");
    } else if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, 32, "%.0f", v == 0 ? 0.0 : v);   /* 0.0: never print "-0" */
    } else {
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, 32, "%.*g", prec, v);
            if (strtod(buf, NULL) == v)
                break;
        }
    }
    return buf;
}

/* ---- registry ------------------------------------------------------------------------------ */

int ps_metrics_new(struct ps_metrics **out, struct ps_error *err)
{
    *out = NULL;
    struct ps_metrics *reg = calloc(1, sizeof *reg);
    if (!reg)
        return ps_error_set(err, PS_ENOMEM, "out of memory creating the metrics registry");
    pthread_mutex_init(&reg->mu, NULL);
    *out = reg;
    return 0;
}

static void series_free(struct ps_metric *m, size_t label_count)
{
    if (!m)
        return;
    for (size_t i = 0; i < label_count; i++)
        free(m->label_values ? m->label_values[i] : NULL);
    free(m->label_values);
    free(m->bucket_counts);
    free(m);
}

static void family_free(struct ps_metric_family *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->series_count; i++)
        series_free(f->series[i], f->label_count);
    free(f->series);
    for (size_t i = 0; i < f->label_count; i++)
        free(f->label_names ? f->label_names[i] : NULL);
    free(f->label_names);
    free(f->bounds);
    free(f->name);
    free(f->help);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

void ps_metrics_free(struct ps_metrics *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->family_count; i++)
        family_free(reg->families[i]);
    free(reg->families);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

static int check_definition(enum ps_metric_type type, const char *name, size_t label_count,
                            const char *const *label_names, const double *bounds,
                            size_t bound_count, struct ps_error *err)
{
    if (!valid_name(name, 1))
        return ps_error_set(err, PS_EINVAL, "metric name '%s' is not [a-zA-Z_:][a-zA-Z0-9_:]*",
                            name ? name : "(null)");
    if (label_count > PS_METRICS_MAX_LABELS)
        return ps_error_set(err, PS_EINVAL, "metric %s: %zu labels, at most %d", name,
                            label_count, PS_METRICS_MAX_LABELS);
    for (size_t i = 0; i < label_count; i++) {
        const char *l = label_names[i];
        if (!valid_name(l, 0) || strncmp(l, "__", 2) == 0)
            return ps_error_set(err, PS_EINVAL,
                                "metric %s: label name '%s' is not [a-zA-Z_][a-zA-Z0-9_]* "
                                "without a leading '__'", name, l ? l : "(null)");
        if (type == PS_METRIC_HISTOGRAM && strcmp(l, "le") == 0)
            return ps_error_set(err, PS_EINVAL, "histogram %s: label name 'le' is reserved",
                                name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(label_names[j], l) == 0)
                return ps_error_set(err, PS_EINVAL, "metric %s: label '%s' given twice", name,
                                    l);
    }
    if (type == PS_METRIC_HISTOGRAM) {
        if (bound_count == 0 || !bounds)
            return ps_error_set(err, PS_EINVAL, "histogram %s: needs at least one bucket bound",
                                name);
        for (size_t i = 0; i < bound_count; i++) {
            if (!isfinite(bounds[i]))
                return ps_error_set(err, PS_EINVAL,
                                    "histogram %s: bucket bound %zu is not finite (+Inf is "
                                    "implicit)", name, i);
            if (i > 0 && !(bounds[i] > bounds[i - 1]))
                return ps_error_set(err, PS_EINVAL,
                                    "histogram %s: bucket bounds must increase strictly, but "
                                    "bound %zu is %g after %g", name, i, bounds[i],
                                    bounds[i - 1]);
        }
    }
    return 0;
}

static int same_definition(const struct ps_metric_family *f, enum ps_metric_type type,
                           size_t label_count, const char *const *label_names,
                           const double *bounds, size_t bound_count)
{
    if (f->type != type || f->label_count != label_count)
        return 0;
    for (size_t i = 0; i < label_count; i++)
        if (strcmp(f->label_names[i], label_names[i]) != 0)
            return 0;
    if (type != PS_METRIC_HISTOGRAM)
        return 1;
    if (f->bound_count != bound_count)
        return 0;
    for (size_t i = 0; i < bound_count; i++)
        if (f->bounds[i] != bounds[i])
            return 0;
    return 1;
}

static struct ps_metric_family *family_create(enum ps_metric_type type, const char *name,
                                              const char *help, size_t label_count,
                                              const char *const *label_names,
                                              const double *bounds, size_t bound_count)
{
    struct ps_metric_family *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    pthread_mutex_init(&f->mu, NULL);
    f->type = type;
    f->label_count = label_count;
    f->name = strdup(name);
    f->help = strdup(help ? help : "");
    f->label_names = calloc(label_count ? label_count : 1, sizeof *f->label_names);
    if (!f->name || !f->help || !f->label_names) {
        family_free(f);
        return NULL;
    }
    for (size_t i = 0; i < label_count; i++) {
        f->label_names[i] = strdup(label_names[i]);
        if (!f->label_names[i]) {
            family_free(f);
            return NULL;
        }
    }
    if (type == PS_METRIC_HISTOGRAM) {
        f->bounds = malloc(bound_count * sizeof *f->bounds);
        if (!f->bounds) {
            family_free(f);
            return NULL;
        }
        memcpy(f->bounds, bounds, bound_count * sizeof *f->bounds);
        f->bound_count = bound_count;
    }
    return f;
}

int ps_metrics_register(struct ps_metrics *reg, enum ps_metric_type type, const char *name,
                        const char *help, size_t label_count, const char *const *label_names,
                        const double *bounds, size_t bound_count,
                        struct ps_metric_family **out, struct ps_error *err)
{
    *out = NULL;
    int rc = check_definition(type, name, label_count, label_names, bounds, bound_count, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&reg->mu);
    size_t pos = 0;
    while (pos < reg->family_count && strcmp(reg->families[pos]->name, name) < 0)
        pos++;
    if (pos < reg->family_count && strcmp(reg->families[pos]->name, name) == 0) {
        struct ps_metric_family *f = reg->families[pos];
        pthread_mutex_unlock(&reg->mu);
        if (!same_definition(f, type, label_count, label_names, bounds, bound_count))
            return ps_error_set(err, PS_EEXIST,
                                "metric %s is registered already with another type, labels or "
                                "buckets", name);
        *out = f;
        return 0;
    }
    if (reg->family_count == reg->family_cap) {
        size_t cap = reg->family_cap ? 2 * reg->family_cap : 16;
        struct ps_metric_family **fs = realloc(reg->families, cap * sizeof *fs);
        if (!fs) {
            pthread_mutex_unlock(&reg->mu);
            return ps_error_set(err, PS_ENOMEM, "out of memory registering metric %s", name);
        }
        reg->families = fs;
        reg->family_cap = cap;
    }
    struct ps_metric_family *f =
        family_create(type, name, help, label_count, label_names, bounds, bound_count);
    if (!f) {
        pthread_mutex_unlock(&reg->mu);
        return ps_error_set(err, PS_ENOMEM, "out of memory registering metric %s", name);
    }
    memmove(reg->families + pos + 1, reg->families + pos,
            (reg->family_count - pos) * sizeof *reg->families);
    reg->families[pos] = f;
    reg->family_count++;
    pthread_mutex_unlock(&reg->mu);
    if (label_count == 0) {
        struct ps_metric *unused;
        rc = ps_metric_family_get(f, NULL, &unused, err);
        if (rc)
            return rc;
    }
    *out = f;
    return 0;
}

int ps_metrics_counter(struct ps_metrics *reg, const char *name, const char *help,
                       size_t label_count, const char *const *label_names,
                       struct ps_metric_family **out, struct ps_error *err)
{
    return ps_metrics_register(reg, PS_METRIC_COUNTER, name, help, label_count, label_names,
                               NULL, 0, out, err);
}

int ps_metrics_gauge(struct ps_metrics *reg, const char *name, const char *help,
                     size_t label_count, const char *const *label_names,
                     struct ps_metric_family **out, struct ps_error *err)
{
    return ps_metrics_register(reg, PS_METRIC_GAUGE, name, help, label_count, label_names,
                               NULL, 0, out, err);
}

int ps_metrics_histogram(struct ps_metrics *reg, const char *name, const char *help,
                         size_t label_count, const char *const *label_names,
                         const double *bounds, size_t bound_count,
                         struct ps_metric_family **out, struct ps_error *err)
{
    return ps_metrics_register(reg, PS_METRIC_HISTOGRAM, name, help, label_count, label_names,
                               bounds, bound_count, out, err);
}

/* ---- series -------------------------------------------------------------------------------- */

static int compare_labels(const struct ps_metric_family *f, char *const *a,
                          const char *const *b)
{
    for (size_t i = 0; i < f->label_count; i++) {
        int c = strcmp(a[i], b[i]);
        if (c)
            return c;
    }
    return 0;
}

static struct ps_metric *series_create(struct ps_metric_family *f,
                                       const char *const *label_values)
{
    struct ps_metric *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->fam = f;
    m->label_values = calloc(f->label_count ? f->label_count : 1, sizeof *m->label_values);
    if (!m->label_values) {
        free(m);
        return NULL;
    }
    for (size_t i = 0; i < f->label_count; i++) {
        m->label_values[i] = strdup(label_values[i]);
        if (!m->label_values[i]) {
            series_free(m, f->label_count);
            return NULL;
        }
    }
    if (f->type == PS_METRIC_HISTOGRAM) {
        m->bucket_counts = calloc(f->bound_count + 1, sizeof *m->bucket_counts);
        if (!m->bucket_counts) {
            series_free(m, f->label_count);
            return NULL;
        }
    }
    return m;
}

const char *ps_metric_label(const struct ps_metric *m, size_t i)
{
    return m->label_values[i];
}

void ps_metric_remove(struct ps_metric *m)
{
    struct ps_metric_family *f = m->fam;
    pthread_mutex_lock(&f->mu);
    size_t lo = 0, hi = f->series_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare_labels(f, f->series[mid]->label_values,
                               (const char *const *)m->label_values);
        if (c == 0) {
            memmove(f->series + mid, f->series + mid + 1,
                    (f->series_count - mid - 1) * sizeof *f->series);
            f->series_count--;
            break;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    pthread_mutex_unlock(&f->mu);
    series_free(m, f->label_count);
}

int ps_metric_family_get(struct ps_metric_family *f, const char *const *label_values,
                         struct ps_metric **out, struct ps_error *err)
{
    *out = NULL;
    for (size_t i = 0; i < f->label_count; i++)
        if (!label_values || !label_values[i])
            return ps_error_set(err, PS_EINVAL, "metric %s: no value for label '%s'", f->name,
                                f->label_names[i]);
    pthread_mutex_lock(&f->mu);
    size_t lo = 0, hi = f->series_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare_labels(f, f->series[mid]->label_values, label_values);
        if (c == 0) {
            *out = f->series[mid];
            pthread_mutex_unlock(&f->mu);
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    int rc = 0;
    if (f->series_count >= PS_METRICS_MAX_SERIES) {
        rc = ps_error_set(err, PS_ELIMIT, "metric %s has %d series already, the limit",
                          f->name, PS_METRICS_MAX_SERIES);
        goto out;
    }
    if (f->series_count == f->series_cap) {
        size_t cap = f->series_cap ? 2 * f->series_cap : 8;
        struct ps_metric **s = realloc(f->series, cap * sizeof *s);
        if (!s) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory adding a series to metric %s",
                              f->name);
            goto out;
        }
        f->series = s;
        f->series_cap = cap;
    }
    struct ps_metric *m = series_create(f, label_values);
    if (!m) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory adding a series to metric %s", f->name);
        goto out;
    }
    memmove(f->series + lo + 1, f->series + lo, (f->series_count - lo) * sizeof *f->series);
    f->series[lo] = m;
    f->series_count++;
    *out = m;
out:
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void ps_metric_add(struct ps_metric *m, double delta)
{
    struct ps_metric_family *f = m->fam;
    assert(f->type != PS_METRIC_HISTOGRAM);
    assert(f->type != PS_METRIC_COUNTER || delta >= 0);
    if (f->type == PS_METRIC_HISTOGRAM || isnan(delta) ||
        (f->type == PS_METRIC_COUNTER && delta < 0))
        return;
    pthread_mutex_lock(&f->mu);
    m->value += delta;
    pthread_mutex_unlock(&f->mu);
}

void ps_metric_set(struct ps_metric *m, double value)
{
    struct ps_metric_family *f = m->fam;
    assert(f->type == PS_METRIC_GAUGE);
    if (f->type != PS_METRIC_GAUGE)
        return;
    pthread_mutex_lock(&f->mu);
    m->value = value;
    pthread_mutex_unlock(&f->mu);
}

void ps_metric_observe(struct ps_metric *m, double value)
{
    struct ps_metric_family *f = m->fam;
    assert(f->type == PS_METRIC_HISTOGRAM);
    if (f->type != PS_METRIC_HISTOGRAM || isnan(value))
        return;
    size_t lo = 0, hi = f->bound_count;   /* first bound >= value; bound_count means +Inf */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->bounds[mid] >= value)
            hi = mid;
        else
            lo = mid + 1;
    }
    pthread_mutex_lock(&f->mu);
    m->bucket_counts[lo]++;
    m->sum += value;
    m->count++;
    pthread_mutex_unlock(&f->mu);
}

double ps_metric_value(struct ps_metric *m)
{
    struct ps_metric_family *f = m->fam;
    pthread_mutex_lock(&f->mu);
    double v = f->type == PS_METRIC_HISTOGRAM ? (double)m->count : m->value;
    pthread_mutex_unlock(&f->mu);
    return v;
}

/* ---- rendering ----------------------------------------------------------------------------- */

/* name{l1="v1",...[,le="bound"]} value\n */
static void render_sample(struct buf *b, const struct ps_metric_family *f,
                          const struct ps_metric *m, const char *suffix, const char *le,
                          double value)
{
    char num[32];
    buf_str(b, f->name);
    buf_str(b, suffix);
    if (f->label_count || le) {
        buf_add(b, "{", 1);
        for (size_t i = 0; i < f->label_count; i++) {
            if (i)
                buf_add(b, ",", 1);
            buf_str(b, f->label_names[i]);
            buf_add(b, "=\"", 2);
            buf_escaped(b, m->label_values[i], 1);
            buf_add(b, "\"", 1);
        }
        if (le) {
            if (f->label_count)
                buf_add(b, ",", 1);
            buf_add(b, "le=\"", 4);
            buf_str(b, le);
            buf_add(b, "\"", 1);
        }
        buf_add(b, "}", 1);
    }
    buf_add(b, " ", 1);
    buf_str(b, ps_metrics_format_double(value, num));
    buf_add(b, "\n", 1);
}

static void render_family(struct buf *b, const struct ps_metric_family *f)
{
    buf_str(b, "# HELP ");
    buf_str(b, f->name);
    buf_add(b, " ", 1);
    buf_escaped(b, f->help, 0);
    buf_str(b, "\n# TYPE ");
    buf_str(b, f->name);
    buf_add(b, " ", 1);
    buf_str(b, type_name(f->type));
    buf_add(b, "\n", 1);
    for (size_t s = 0; s < f->series_count; s++) {
        const struct ps_metric *m = f->series[s];
        if (f->type != PS_METRIC_HISTOGRAM) {
            render_sample(b, f, m, "", NULL, m->value);
            continue;
        }
        uint64_t cumulative = 0;
        char le[32];
        for (size_t i = 0; i < f->bound_count; i++) {
            cumulative += m->bucket_counts[i];
            render_sample(b, f, m, "_bucket", ps_metrics_format_double(f->bounds[i], le),
                          (double)cumulative);
        }
        render_sample(b, f, m, "_bucket", "+Inf", (double)m->count);
        render_sample(b, f, m, "_sum", NULL, m->sum);
        render_sample(b, f, m, "_count", NULL, (double)m->count);
    }
}

int ps_metrics_render(struct ps_metrics *reg, char **out, size_t *len, struct ps_error *err)
{
    *out = NULL;
    if (len)
        *len = 0;
    struct buf b = { 0 };
    buf_reserve(&b, 0);
    if (!b.oom)
        b.p[0] = '\0';   /* an empty registry renders as "" */
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < reg->family_count; i++) {
        struct ps_metric_family *f = reg->families[i];
        pthread_mutex_lock(&f->mu);
        render_family(&b, f);
        pthread_mutex_unlock(&f->mu);
    }
    pthread_mutex_unlock(&reg->mu);
    if (b.oom) {
        free(b.p);
        return ps_error_set(err, PS_ENOMEM, "out of memory rendering metrics");
    }
    *out = b.p;
    if (len)
        *len = b.len;
    return 0;
}
