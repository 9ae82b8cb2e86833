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

/* Appends the dump of v; false when out of memory. */
static void append_dump(struct buf *b, const json_t *v, size_t flags)
{
    char *text = json_dumps(v, flags);
    if (!text) {
        b->failed = true;
        return;
    }
    append_str(b, text);
    free(text);
}

char *ps_scenario_format(const json_t *doc)
{
    struct buf b = {0};
    const json_t *ops = json_object_get(doc, "operations");
    json_t *head = json_copy((json_t *)doc);   /* shallow: shares the values */
    if (!head)
        return NULL;
    json_object_del(head, "operations");
    if (!ops) {
        append_dump(&b, head, DUMP_FLAGS | JSON_INDENT(2));
        append_str(&b, "\n");
    } else {
        if (json_object_size(head) == 0) {
            append_str(&b, "{\n");
        } else {
            /* The indented head ends in "\n}": continue its key list with the operations. */
            append_dump(&b, head, DUMP_FLAGS | JSON_INDENT(2));
            if (!b.failed)
                b.len -= 2;
            append_str(&b, ",\n");
        }
        append_str(&b, "  \"operations\": [");
        size_t n = json_array_size(ops);
        for (size_t i = 0; i < n; i++) {
            append_str(&b, i == 0 ? "\n    " : ",\n    ");
            append_dump(&b, json_array_get(ops, i), DUMP_FLAGS | JSON_COMPACT);
        }
        append_str(&b, n ? "\n  ]\n}\n" : "]\n}\n");
    }
    json_decref(head);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
