/* libFuzzer target: the snapshot parser (src/io/snapshot), then the whole `fair-share` path on
 * what it accepts: one engine update and both printers.
 *
 * Checks: a parse either succeeds or fails with a one-line message and no snapshot; an accepted
 * snapshot is a well-formed element array (root first, parents before children); the update
 * either succeeds or fails with a message; the JSON printer is deterministic and its output
 * parses back as JSON with every pool and operation. */
#include <assert.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fair_share.h"
#include "io/fs_output.h"
#include "io/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void assert_one_line(const char *msg)
{
    assert(msg[0] != '\0');
    for (const char *p = msg; *p; p++)
        assert((unsigned char)*p >= 0x20 && *p != 0x7f);
}

static char *render(const struct ps_snapshot *snap, bool table, const char *const *alerts,
                    int alert_count, size_t *len)
{
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    if (!mem)
        return NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = table ? ps_fs_print_table(mem, snap, alerts, alert_count, &err)
                   : ps_fs_print_json(mem, snap, alerts, alert_count, &err);
    fclose(mem);
    if (rc) {
        free(text);
        return NULL;
    }
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ps_snapshot *snap = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_snapshot_parse((const char *)data, size, &snap, &err);
    if (rc) {
        assert(rc == PS_EINVAL || rc == PS_ENOMEM);
        assert(snap == NULL);
        assert_one_line(err.msg);
        return 0;
    }
    assert(snap->count >= 1 && snap->pool_count >= 1 && snap->pool_count <= snap->count);
    assert(snap->elems[0].in.kind == PS_ELEM_ROOT && snap->elems[0].in.parent == -1);
    for (int i = 1; i < snap->count; i++) {
        const struct ps_fs_element_input *in = &snap->elems[i].in;
        assert(in->parent >= 0 && in->parent < i);
        assert(in->parent < snap->pool_count);
        assert((i < snap->pool_count) == (in->kind == PS_ELEM_POOL));
        assert(in->name && in->name[0]);
    }
    for (int i = 0; i < snap->note_count; i++)
        assert_one_line(snap->notes[i]);

    struct ps_fs_update *update = ps_fs_update_new();
    if (update) {
        ps_error_init(&err);
        rc = ps_fs_update_run(update, snap->elems, snap->count, snap->pools, snap->pool_count,
                              &snap->options, &snap->input, &err);
        if (rc) {
            assert_one_line(err.msg);
        } else {
            const char *alerts[64];
            int n = ps_fs_update_alert_count(update);
            if (n > 64)
                n = 64;
            for (int i = 0; i < n; i++)
                alerts[i] = ps_fs_update_alert(update, i);
            size_t len1 = 0, len2 = 0, len3 = 0;
            char *a = render(snap, false, alerts, n, &len1);
            char *b = render(snap, false, alerts, n, &len2);
            assert(a && b && len1 == len2 && memcmp(a, b, len1) == 0);
            /* Whatever the names hold, the output is JSON with every element. */
            json_error_t jerr;
            json_t *doc = json_loadb(a, len1, 0, &jerr);
            assert(doc != NULL);
            assert((int)json_object_size(json_object_get(doc, "pools")) == snap->pool_count);
            assert((int)json_object_size(json_object_get(doc, "operations")) ==
                   snap->count - snap->pool_count);
            json_decref(doc);
            char *t = render(snap, true, alerts, n, &len3);
            assert(t);
            free(a);
            free(b);
            free(t);
        }
        ps_fs_update_free(update);
    }
    ps_snapshot_free(snap);
    return 0;
}
