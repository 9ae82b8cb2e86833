/* Fuzzes the YSON parser, the JSON-or-YSON reader (also with attributes) and the printer.
 * Invariants checked beyond "no crash, no leak": a failure sets a negative code and a message;
 * whatever parses prints in every layout, and the printout parses back to an equal value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int rc, const json_t *v, const struct ps_error *err)
{
    if (rc >= 0 || v != NULL || err->code != rc || err->msg[0] == '\0')
        abort();
}

static void check_round_trip(const json_t *v)
{
    static const unsigned styles[] = {PS_YSON_COMPACT, PS_YSON_PRETTY,
                                      PS_YSON_COMPACT | PS_YSON_SORT_KEYS};
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++) {
        struct ps_error err;
        ps_error_init(&err);
        char *text = NULL;
        if (ps_yson_print(v, styles[i], &text, &err) != 0) {
            fprintf(stderr, "print failed: %s\n", err.msg);
            abort();
        }
        json_t *back = NULL;
        if (ps_yson_parse(text, strlen(text), &back, &err) != 0 || !json_equal(v, back)) {
            fprintf(stderr, "printout does not parse back: %s\n%s\n", err.msg, text);
            abort();
        }
        json_decref(back);
        back = NULL;
        if (ps_value_parse_text(text, strlen(text), &back, &err) != 0 || !json_equal(v, back)) {
            fprintf(stderr, "printout reads back differently as JSON-or-YSON: %s\n%s\n", err.msg,
                    text);
            abort();
        }
        json_decref(back);
        free(text);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct ps_error err;
    json_t *v = NULL;

    ps_error_init(&err);
    int rc = ps_yson_parse(text, size, &v, &err);
    if (rc == 0) {
        check_round_trip(v);
        json_decref(v);
    } else {
        check_failure(rc, v, &err);
    }

    ps_error_init(&err);
    v = NULL;
    rc = ps_value_parse_text(text, size, &v, &err);
    if (rc == 0) {
        check_round_trip(v);
        json_decref(v);
    } else {
        check_failure(rc, v, &err);
    }

    /* with attributes: {"$attributes", "$value"} maps, which may nest deeper than the printer
     * takes, so no round trip; no crash, no leak, a proper failure */
    ps_error_init(&err);
    v = NULL;
    rc = ps_value_parse_attributed(text, size, &v, &err);
    if (rc == 0)
        json_decref(v);
    else
        check_failure(rc, v, &err);
    return 0;
}
