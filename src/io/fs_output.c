#include "io/fs_output.h"
#include "io/tree_order.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- scalars ---------------------------------------------------------------------------- */

void ps_fs_format_double(char *buf, size_t size, double x)
{
    if (!isfinite(x)) {
        snprintf(buf, size, "null");
        return;
    }
    if (x == 0) {   /* also -0 */
        snprintf(buf, size, "0");
        return;
    }
    /* %g drops trailing zeros, so the first precision that round-trips is the shortest. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (prec == 17 || strtod(buf, NULL) == x)
            return;
    }
}

static void put_double(FILE *out, double x)
{
    char buf[40];
    ps_fs_format_double(buf, sizeof buf, x);
    fputs(buf, out);
}

/* A JSON string literal: quotes, backslashes and control characters escaped. The text is UTF-8
 * already (names come from a JSON document), so other bytes pass through. */
static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

/* A stored resource amount in natural units: cpu as an exact decimal of hundredths. */
static void put_amount(FILE *out, int resource, int64_t v)
{
    if (resource != PS_RES_CPU) {
        fprintf(out, "%" PRId64, v);
        return;
    }
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t whole = mag / PS_CPU_SCALE, frac = mag % PS_CPU_SCALE;
    fprintf(out, "%s%" PRIu64, v < 0 ? "-" : "", whole);
    if (frac % 10 == 0 && frac != 0)
        fprintf(out, ".%" PRIu64, frac / 10);
    else if (frac != 0)
        fprintf(out, ".%02" PRIu64, frac);
}

/* ---- maps ------------------------------------------------------------------------------- */

static void put_share(FILE *out, const struct ps_share *s)
{
    fputc('{', out);
    for (int i = 0; i < PS_RES_COUNT; i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", ps_resource_name(i));
        put_double(out, s->v[i]);
    }
    fputc('}', out);
}

static void put_volume(FILE *out, const struct ps_volume *v)
{
    fputc('{', out);
    for (int i = 0; i < PS_RES_COUNT; i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", ps_resource_name(i));
        put_double(out, v->v[i]);
    }
    fputc('}', out);
}

static void put_resources(FILE *out, const struct ps_resources *r)
{
    fputc('{', out);
    bool first = true;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (r->v[i] >= PS_RES_INFINITE)
            continue;   /* unlimited: omitted, as in input limits maps */
        fprintf(out, "%s\"%s\": ", first ? "" : ", ", ps_resource_name(i));
        put_amount(out, i, r->v[i]);
        first = false;
    }
    fputc('}', out);
}

/* ---- JSON ------------------------------------------------------------------------------- */

#define IND "      "   /* indentation of an element's keys */

static void key(FILE *out, bool *first, const char *name)
{
    fprintf(out, "%s\n" IND "\"%s\": ", *first ? "" : ",", name);
    *first = false;
}

static void key_double(FILE *out, bool *first, const char *name, double x)
{
    key(out, first, name);
    put_double(out, x);
}

static void key_share(FILE *out, bool *first, const char *name, const struct ps_share *s)
{
    key(out, first, name);
    put_share(out, s);
}

static const char *resource_label(int resource)
{
    const char *name = ps_resource_name(resource);
    return name ? name : "cpu";   /* the engine's default dominant resource */
}

static void put_element(FILE *out, const struct ps_snapshot *snap, int index)
{
    const struct ps_fs_element *e = &snap->elems[index];
    const struct ps_fs_element_output *o = &e->out;
    const struct ps_detailed_fair_share *d = &o->fair_share;
    /* Operations have no pool entry: their guarantees and integral fields print as zeros. */
    static const struct ps_fs_pool_output no_pool;
    const struct ps_fs_pool_output *po = e->in.kind == PS_ELEM_OPERATION ? &no_pool : &snap->pools[e->in.pool].out;
    bool first = true;

    fputs("{", out);
    key_double(out, &first, "fair_share_ratio", ps_share_max_component(d->total));
    key_double(out, &first, "usage_ratio", ps_share_max_component(o->usage_share));
    key_double(out, &first, "demand_ratio", ps_share_max_component(o->demand_share));
    key(out, &first, "dominant_resource");
    put_string(out, resource_label(o->dominant_resource));
    key(out, &first, "detailed_fair_share");
    fputs("{\n" IND "  \"total\": ", out);
    put_share(out, &d->total);
    fputs(",\n" IND "  \"strong_guarantee\": ", out);
    put_share(out, &d->strong_guarantee);
    fputs(",\n" IND "  \"integral_guarantee\": ", out);
    put_share(out, &d->integral_guarantee);
    fputs(",\n" IND "  \"weight_proportional\": ", out);
    put_share(out, &d->weight_proportional);
    fputs("\n" IND "}", out);
    key_share(out, &first, "demand_share", &o->demand_share);
    key_share(out, &first, "usage_share", &o->usage_share);
    key_share(out, &first, "limits_share", &o->limits_share);
    key_share(out, &first, "strong_guarantee_share", &po->strong_guarantee_share);
    key(out, &first, "resource_limits");
    put_resources(out, &o->resource_limits);
    key_double(out, &first, "accumulated_resource_ratio_volume",
               po->accumulated_resource_ratio_volume);
    key(out, &first, "accumulated_resource_volume");
    put_volume(out, &po->accumulated_resource_volume);
    key(out, &first, "integral_pool_capacity");
    put_volume(out, &po->integral_pool_capacity);
    key_double(out, &first, "specified_burst_ratio", po->specified_burst_ratio);
    key_double(out, &first, "specified_resource_flow_ratio", po->specified_resource_flow_ratio);
    key_double(out, &first, "total_burst_ratio", po->total_burst_ratio);
    key_double(out, &first, "total_resource_flow_ratio", po->total_resource_flow_ratio);
    key_double(out, &first, "estimated_burst_usage_duration_seconds",
               po->estimated_burst_usage_duration_seconds);

    key_double(out, &first, "strong_guarantee_ratio", ps_share_max_component(d->strong_guarantee));
    key_double(out, &first, "integral_guarantee_ratio",
               ps_share_max_component(d->integral_guarantee));
    key_double(out, &first, "weight_proportional_ratio",
               ps_share_max_component(d->weight_proportional));
    key_share(out, &first, "proposed_integral_share", &po->proposed_integral_share);
    key(out, &first, "inferred_strong_guarantee_resources");
    put_resources(out, &po->inferred_strong_guarantee);
    key_double(out, &first, "weight", o->weight);
    key(out, &first, "fifo_index");
    fprintf(out, "%d", o->fifo_index);
    if (e->in.kind == PS_ELEM_OPERATION) {
        key(out, &first, "pool");
        put_string(out, snap->elems[e->in.parent].in.name);
    } else {
        if (e->in.parent >= 0) {
            key(out, &first, "parent");
            put_string(out, snap->elems[e->in.parent].in.name);
        }
        key(out, &first, "mode");
        put_string(out, snap->pools[e->in.pool].in.mode == PS_MODE_FIFO ? "fifo" : "fair_share");
    }
    fputs("\n    }", out);
}

static int finish(FILE *out, struct ps_error *err)
{
    if (fflush(out) != 0 || ferror(out))
        return ps_error_set(err, PS_EIO, "writing the result failed");
    return 0;
}

int ps_fs_print_json(FILE *out, const struct ps_snapshot *snap, const char *const *alerts,
                     int alert_count, struct ps_error *err)
{
    fputs("{\n  \"pools\": {", out);
    for (int i = 0; i < snap->pool_count; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        put_string(out, snap->elems[i].in.name);
        fputs(": ", out);
        put_element(out, snap, i);
    }
    fputs(snap->pool_count ? "\n  },\n  \"operations\": {" : "},\n  \"operations\": {", out);
    for (int i = snap->pool_count; i < snap->count; i++) {
        fputs(i > snap->pool_count ? ",\n    " : "\n    ", out);
        put_string(out, snap->elems[i].in.name);
        fputs(": ", out);
        put_element(out, snap, i);
    }
    fputs(snap->count > snap->pool_count ? "\n  },\n  \"alerts\": [" : "},\n  \"alerts\": [", out);
    for (int i = 0; i < alert_count; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        put_string(out, alerts[i]);
    }
    fputs(alert_count ? "\n  ]\n}\n" : "]\n}\n", out);
    return finish(out, err);
}

/* ---- table ------------------------------------------------------------------------------ */

#define NAME_MIN 16
#define NAME_MAX_WIDTH 60
#define INDENT_MAX 24   /* levels of indentation shown; deeper rows stay at this one */

/* The name as shown in the table: control characters replaced, so columns stay aligned. */
static void put_plain(FILE *out, const char *s, int width)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++, n++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
    for (; n < width; n++)
        fputc(' ', out);
}

static void put_percent(FILE *out, double ratio)
{
    if (!isfinite(ratio))
        fprintf(out, " %8s", "-");
    else
        fprintf(out, " %8.1f", ratio * 100.0);
}

static void put_row(FILE *out, const struct ps_snapshot *snap, int i, int depth, int name_width)
{
    if (depth > INDENT_MAX)   /* a very deep chain would otherwise make the table quadratic */
        depth = INDENT_MAX;
    const struct ps_fs_element *e = &snap->elems[i];
    const struct ps_fs_element_output *o = &e->out;
    for (int k = 0; k < depth; k++)
        fputs("  ", out);
    put_plain(out, e->in.name, name_width - 2 * depth);
    const char *type = e->in.kind == PS_ELEM_OPERATION ? (e->in.is_gang ? "gang op" : "op")
                       : snap->pools[e->in.pool].in.mode == PS_MODE_FIFO ? "fifo"
                                                       : "fair_share";
    char weight[32];
    snprintf(weight, sizeof weight, "%.6g", o->weight);
    fprintf(out, "  %-10s %8s", type, weight);
    put_percent(out, ps_share_max_component(o->fair_share.total));
    put_percent(out, ps_share_max_component(o->fair_share.strong_guarantee));
    put_percent(out, ps_share_max_component(o->fair_share.integral_guarantee));
    put_percent(out, ps_share_max_component(o->fair_share.weight_proportional));
    put_percent(out, ps_share_max_component(o->usage_share));
    put_percent(out, ps_share_max_component(o->demand_share));
    fprintf(out, "  %s\n", resource_label(o->dominant_resource));
}

int ps_fs_print_table(FILE *out, const struct ps_snapshot *snap, const char *const *alerts,
                      int alert_count, struct ps_error *err)
{
    int n = snap->count;
    int *depth = malloc((size_t)n * sizeof *depth);
    int *order = malloc((size_t)n * sizeof *order);
    int *parent = calloc((size_t)n + 1, sizeof *parent);
    if (!depth || !order || !parent) {
        free(depth);
        free(order);
        free(parent);
        return ps_error_set(err, PS_ENOMEM, "out of memory printing the table");
    }
    for (int i = 0; i < n; i++)
        parent[i] = i == 0 ? -1 : snap->elems[i].in.parent;
    if (ps_tree_order(n, parent, order, depth) != 0) {
        free(depth);
        free(order);
        free(parent);
        return ps_error_set(err, PS_ENOMEM, "out of memory printing the table");
    }
    int name_width = NAME_MIN;
    for (int i = 0; i < n; i++) {
        int shown = depth[i] < INDENT_MAX ? depth[i] : INDENT_MAX;
        int w = 2 * shown + (int)strlen(snap->elems[i].in.name);
        if (w > name_width)
            name_width = w < NAME_MAX_WIDTH ? w : NAME_MAX_WIDTH;
    }

    fprintf(out, "%-*s  %-10s %8s %8s %8s %8s %8s %8s %8s  %s\n", name_width, "POOL / OPERATION",
            "TYPE", "WEIGHT", "FAIR%", "STRONG%", "INTEGR%", "WPROP%", "USAGE%", "DEMAND%",
            "DOMINANT");
    for (int k = 0; k < n; k++)
        put_row(out, snap, order[k], depth[order[k]], name_width);
    free(depth);
    free(order);
    free(parent);

    fputs("\ntotal resources:", out);
    for (int i = 0; i < PS_RES_COUNT; i++) {
        fprintf(out, "%s %s ", i ? "," : "", ps_resource_name(i));
        put_amount(out, i, snap->input.total.v[i]);
    }
    if (snap->node_count > 0 || snap->matched_node_count > 0)
        fprintf(out, " (%d of %d nodes match the tree's nodes_filter)", snap->matched_node_count,
                snap->node_count);
    fputc('\n', out);
    if (alert_count > 0) {
        fputs("alerts:\n", out);
        for (int i = 0; i < alert_count; i++) {
            fputs("  - ", out);
            put_plain(out, alerts[i], 0);
            fputc('\n', out);
        }
    }
    return finish(out, err);
}
