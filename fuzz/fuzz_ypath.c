/* Fuzzes the Cypress path parser and builder.
 * Invariants: a failure leaves the path empty with a message; a parsed path formats to a
 * canonical spelling that parses to the same names and formats to itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/ypath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_same(const struct ps_ypath *a, const struct ps_ypath *b)
{
    if (a->node_count != b->node_count || a->attr_count != b->attr_count ||
        a->all_attrs != b->all_attrs)
        abort();
    for (size_t i = 0; i < a->node_count; i++)
        if (strcmp(a->nodes[i], b->nodes[i]) != 0)
            abort();
    for (size_t i = 0; i < a->attr_count; i++)
        if (strcmp(a->attrs[i], b->attrs[i]) != 0)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The parser takes a C string: the input up to its first NUL. */
    char *path = malloc(size + 1);
    if (!path)
        return 0;
    memcpy(path, data, size);
    path[size] = '\0';

    struct ps_ypath p;
    ps_ypath_init(&p);
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_ypath_parse(path, &p, &err);
    if (rc != 0) {
        if (rc >= 0 || err.code != rc || err.msg[0] == '\0' || p.node_count || p.attr_count ||
            p.all_attrs || p.nodes || p.attrs)
            abort();
        free(path);
        return 0;
    }
    char *canonical = NULL;
    if (ps_ypath_format(&p, &canonical, &err) != 0) {
        fprintf(stderr, "format failed: %s\n", err.msg);
        abort();
    }
    struct ps_ypath q;
    ps_ypath_init(&q);
    if (ps_ypath_parse(canonical, &q, &err) != 0) {
        fprintf(stderr, "canonical path %s does not parse: %s\n", canonical, err.msg);
        abort();
    }
    check_same(&p, &q);
    char *again = NULL;
    if (ps_ypath_format(&q, &again, &err) != 0 || strcmp(canonical, again) != 0)
        abort();
    /* Names escape one by one to what the builder writes. */
    for (size_t i = 0; i < p.node_count; i++) {
        char *escaped = NULL;
        if (ps_ypath_escape(p.nodes[i], &escaped, &err) != 0 || !strstr(canonical, escaped))
            abort();
        free(escaped);
    }
    free(again);
    free(canonical);
    ps_ypath_release(&q);
    ps_ypath_release(&p);
    free(path);
    return 0;
}
