/* scenario_format.c — writes scenario documents (io/scenario.h, ps_scenario_format). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "io/scenario.h"

/* 15 significant digits print every 2-decimal cpu value below 1e13 as its shortest decimal,
 * which parses back to the same double. */
#define DUMP_FLAGS (JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY)

struct buf {
    char *data;
    size_t len, cap;
    bool failed;
};

static void append(struct buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *data = realloc(b->data, cap);
        if (!data) {
            b->failed = true;
            return;
        }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void append_str(struct buf *b, const char *s)
{
    append(b, s, strlen(s));
}

/* Appends the dump of v, with "\n" followed by indent inside multi-line dumps. */
static void append_dump(struct buf *b, const json_t *v, size_t flags, const char *indent)
{
    char *text = json_dumps(v, flags);
    if (!text) {
        b->failed = true;
        return;
    }
    for (const char *p = text;;) {
        const char *nl = strchr(p, '\n');
        if (!nl) {
            append_str(b, p);
            break;
        }
        append(b, p, (size_t)(nl - p) + 1);
        append_str(b, indent);
        p = nl + 1;
    }
    free(text);
}

/* A list of objects or lists, one compact element per line. */
static bool is_list_of_containers(const json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return false;
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        if (!json_is_object(e) && !json_is_array(e))
            return false;
    }
    return true;
}

char *ps_scenario_format(const json_t *doc)
{
    struct buf b = {0};
    if (!json_is_object(doc) || json_object_size(doc) == 0) {
        append_dump(&b, doc, DUMP_FLAGS, "");
        append_str(&b, "\n");
    } else {
        append_str(&b, "{");
        const char *key;
        json_t *value;
        bool first = true;
        json_object_foreach((json_t *)doc, key, value) {
            append_str(&b, first ? "\n  " : ",\n  ");
            first = false;
            json_t *name = json_string(key);
            if (!name) {
                b.failed = true;
                break;
            }
            append_dump(&b, name, DUMP_FLAGS, "");
            json_decref(name);
            append_str(&b, ": ");
            if (is_list_of_containers(value)) {
                append_str(&b, "[");
                for (size_t i = 0; i < json_array_size(value); i++) {
                    append_str(&b, i == 0 ? "\n    " : ",\n    ");
                    append_dump(&b, json_array_get(value, i), DUMP_FLAGS, "");
                }
                append_str(&b, "\n  ]");
            } else {
                append_dump(&b, value, DUMP_FLAGS | JSON_INDENT(2), "  ");
            }
        }
        append_str(&b, "\n}\n");
    }
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
