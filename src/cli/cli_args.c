/* cli_args.c — option parsing and value parsers of the client commands (cli_args.h). */
#include "cli/cli_args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A short, one-line rendering of what the user typed, for messages. */
static void quote(char *buf, size_t size, const char *s)
{
    size_t o = 0;
    if (size < 8)
        return;
    buf[o++] = '"';
    for (const char *p = s; *p && o + 6 < size; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        else if (c == '"' || c == '\\')
            o += (size_t)snprintf(buf + o, size - o, "\\%c", c);
        else
            buf[o++] = (char)c;
        if (o + 6 >= size && p[1]) {
            o = size - 6;
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
}

static bool is_positional(const char *arg)
{
    if (arg[0] != '-' || arg[1] == '\0')
        return true;                        /* a name, or "-" (standard input) */
    return isdigit((unsigned char)arg[1]) || (arg[1] == '.' && isdigit((unsigned char)arg[2]));
}

static const struct ps_cli_opt *find_long(const struct ps_cli_opt *opts, const char *name,
                                          size_t len)
{
    for (const struct ps_cli_opt *o = opts; o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static const struct ps_cli_opt *find_short(const struct ps_cli_opt *opts, char c)
{
    for (const struct ps_cli_opt *o = opts; o->name; o++)
        if (o->short_name == c)
            return o;
    return NULL;
}

static int add_item(struct ps_cli_args *out, const struct ps_cli_opt *opt, const char *value,
                    struct ps_error *err)
{
    if (out->count == PS_CLI_MAX_ITEMS)
        return ps_error_set(err, PS_EINVAL, "too many arguments (at most %d)", PS_CLI_MAX_ITEMS);
    if (opt && !opt->repeatable)
        for (size_t i = 0; i < out->count; i++)
            if (out->items[i].opt == opt)
                return ps_error_set(err, PS_EINVAL, "%s given twice", opt->name);
    out->items[out->count++] = (struct ps_cli_item){opt, value};
    return 0;
}

int ps_cli_args_parse(int argc, char **argv, const struct ps_cli_opt *opts,
                      struct ps_cli_args *out, struct ps_error *err)
{
    out->count = 0;
    out->help = false;
    bool only_positional = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        int rc;
        if (only_positional || is_positional(arg)) {
            rc = add_item(out, NULL, arg, err);
        } else if (strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            out->help = true;
            continue;
        } else if (arg[1] != '-') {
            /* -i: a short flag; short options never take values. */
            const struct ps_cli_opt *o = arg[2] == '\0' ? find_short(opts, arg[1]) : NULL;
            if (!o) {
                char q[80];
                quote(q, sizeof q, arg);
                return ps_error_set(err, PS_EINVAL, "unknown option %s", q);
            }
            rc = add_item(out, o, o->takes_value ? NULL : "", err);
            if (rc == 0 && o->takes_value) {
                if (i + 1 >= argc)
                    return ps_error_set(err, PS_EINVAL, "%s needs a value", o->name);
                out->items[out->count - 1].value = argv[++i];
            }
        } else {
            const char *eq = strchr(arg, '=');
            size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
            const struct ps_cli_opt *o = find_long(opts, arg, len);
            if (!o) {
                char q[80], name[64];
                snprintf(name, sizeof name, "%.*s", (int)(len < 60 ? len : 60), arg);
                quote(q, sizeof q, name);
                return ps_error_set(err, PS_EINVAL, "unknown option %s", q);
            }
            const char *value = "";
            if (o->takes_value) {
                value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
                if (!value)
                    return ps_error_set(err, PS_EINVAL, "%s needs a value", o->name);
            } else if (eq) {
                return ps_error_set(err, PS_EINVAL, "%s takes no value", o->name);
            }
            rc = add_item(out, o, value, err);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

const char *ps_cli_args_get(const struct ps_cli_args *a, const char *name)
{
    const char *value = NULL;
    for (size_t i = 0; i < a->count; i++)
        if (a->items[i].opt && strcmp(a->items[i].opt->name, name) == 0)
            value = a->items[i].value;
    return value;
}

bool ps_cli_args_has(const struct ps_cli_args *a, const char *name)
{
    return ps_cli_args_get(a, name) != NULL;
}

size_t ps_cli_args_positional_count(const struct ps_cli_args *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->count; i++)
        if (!a->items[i].opt)
            n++;
    return n;
}

const char *ps_cli_args_positional(const struct ps_cli_args *a, size_t index)
{
    for (size_t i = 0; i < a->count; i++)
        if (!a->items[i].opt && index-- == 0)
            return a->items[i].value;
    return NULL;
}

int ps_cli_parse_size(const char *text, const char *what, int64_t *out_bytes,
                      struct ps_error *err)
{
    const char *p = text;
    uint64_t v = 0;
    bool digits = false;
    bool overflow = false;
    while (isdigit((unsigned char)*p)) {
        digits = true;
        if (v > (UINT64_C(1) << 62) / 10)
            overflow = true;
        else
            v = v * 10 + (uint64_t)(*p - '0');
        p++;
    }
    int shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    case 't': case 'T': shift = 40; p++; break;
    default: break;
    }
    if (shift && (strcmp(p, "B") == 0 || strcmp(p, "iB") == 0 || strcmp(p, "b") == 0))
        p += strlen(p);
    char q[80];
    quote(q, sizeof q, text);
    if (!digits || *p != '\0')
        return ps_error_set(err, PS_EINVAL, "%s: %s is not a size (use bytes or K/M/G/T)",
                            what, q);
    if (overflow || v > ((UINT64_C(1) << 62) >> shift))
        return ps_error_set(err, PS_EINVAL, "%s: %s is too large (at most 4611686018427387904 "
                            "bytes)", what, q);
    *out_bytes = (int64_t)(v << shift);
    return 0;
}

int ps_cli_parse_cpu(const char *text, const char *what, int64_t *out_hundredths,
                     struct ps_error *err)
{
    const char *p = text;
    int64_t whole = 0;
    bool digits = false;
    bool bad = false;
    while (isdigit((unsigned char)*p)) {
        digits = true;
        whole = whole * 10 + (*p - '0');
        if (whole > 1000000)
            bad = true, whole = 1000000;
        p++;
    }
    int64_t frac = 0;
    if (*p == '.') {
        p++;
        int n = 0;
        while (isdigit((unsigned char)*p)) {
            digits = true;
            if (n < 2)
                frac = frac * 10 + (*p - '0');
            else if (*p != '0')
                bad = true;                  /* a third significant decimal */
            n++;
            p++;
        }
        if (n == 1)
            frac *= 10;
    }
    int64_t v = whole * 100 + frac;
    if (!digits || *p != '\0' || bad || v <= 0 || v > 100000000) {
        char q[80];
        quote(q, sizeof q, text);
        return ps_error_set(err, PS_EINVAL, "%s: %s is not a number of cores (> 0, at most "
                            "1000000, at most 2 decimals)", what, q);
    }
    *out_hundredths = v;
    return 0;
}

int ps_cli_parse_int(const char *text, const char *what, int64_t min, int64_t max,
                     int64_t *out, struct ps_error *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || isspace((unsigned char)text[0]) ||
        v < min || v > max) {
        char q[80];
        quote(q, sizeof q, text);
        return ps_error_set(err, PS_EINVAL, "%s: must be an integer from %lld to %lld, got %s",
                            what, (long long)min, (long long)max, q);
    }
    *out = v;
    return 0;
}

int ps_cli_parse_number(const char *text, const char *what, double min, bool min_exclusive,
                        double max, const char *describe, double *out, struct ps_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    bool ok = errno == 0 && end != text && *end == '\0' && !isspace((unsigned char)text[0]) &&
              isfinite(v) && (min_exclusive ? v > min : v >= min) && v <= max &&
              /* no hex floats, nan or inf spelled out */
              strpbrk(text, "xXnNiI") == NULL;
    if (!ok) {
        char q[80];
        quote(q, sizeof q, text);
        return ps_error_set(err, PS_EINVAL, "%s: must be %s, got %s", what, describe, q);
    }
    *out = v;
    return 0;
}
