/* cli_event_log.c — the CLI reading the scheduler's event log (cli_event_log.h). */
#include "cli/cli_event_log.h"

#include "io/event_page.h"

int ps_cli_event_log_page(void *ctx, int64_t until_ms, int64_t upper_row, int limit,
                          json_t **page, int64_t *first_row, struct ps_error *err)
{
    struct ps_cli_event_log *r = ctx;
    *page = NULL;
    *first_row = PS_EVENT_NO_ROW;
    json_t *body = r->filters ? json_deep_copy(r->filters) : json_object();
    if (!body || json_object_set_new(body, "path", json_string("//sys/scheduler/event_log")) ||
        json_object_set_new(body, "until", json_integer(until_ms)) ||
        json_object_set_new(body, "limit", json_integer(limit)) ||
        (upper_row != PS_EVENT_NO_ROW &&
         json_object_set_new(body, "upper_row_index", json_integer(upper_row)))) {
        json_decref(body);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    const char *text = NULL;
    size_t len = 0;
    int rc = ps_cli_call_text(r->c, "get", body, &text, &len);
    json_decref(body);
    if (rc != 0)   /* printed by ps_cli_call_text */
        return ps_error_set(err, PS_EIO, "%s", "");
    if ((rc = ps_event_page_split(text, len, page, first_row, err)) != 0)
        return rc;
    if (!*page) {
        json_t *reply = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
        *page = json_incref(json_object_get(reply, "value"));
        const json_t *first = json_object_get(reply, "first_row_index");
        if (json_is_integer(first) && json_integer_value(first) >= 0)
            *first_row = json_integer_value(first);
        json_decref(reply);
    }
    if (!json_is_array(*page)) {
        json_decref(*page);
        *page = NULL;
        return ps_error_set(err, PS_EIO, "the reply has no \"value\" list");
    }
    return 0;
}
