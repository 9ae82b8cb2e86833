/* http_response.c — building the response of a request (http_server.h): bodies, headers, JSON
 * replies and YTsaurus-style error bodies. */
#include "server/http_server.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/textbuf.h"

/* ---- small helpers ------------------------------------------------------------------------- */

/* Replaces every byte that is not part of a valid UTF-8 sequence with '?', in place, so that
 * messages quoting client input always make a valid JSON string. */
static void utf8_sanitize(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t n = 0;
        unsigned min = 0, cp = 0;
        if (*p < 0x80) {
            p++;
            continue;
        } else if ((*p & 0xE0) == 0xC0) {
            n = 1, min = 0x80, cp = *p & 0x1F;
        } else if ((*p & 0xF0) == 0xE0) {
            n = 2, min = 0x800, cp = *p & 0x0F;
        } else if ((*p & 0xF8) == 0xF0) {
            n = 3, min = 0x10000, cp = *p & 0x07;
        } else {
            *p++ = '?';
            continue;
        }
        size_t i = 1;
        for (; i <= n && (p[i] & 0xC0) == 0x80; i++)
            cp = (cp << 6) | (p[i] & 0x3F);
        if (i <= n || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *p++ = '?';
            continue;
        }
        p += n + 1;
    }
}

/* ---- responses ----------------------------------------------------------------------------- */

void ps_http_response_release(struct ps_http_response *resp)
{
    free(resp->body);
    resp->body = NULL;
    for (size_t i = 0; i < resp->header_count; i++) {
        free(resp->header_names[i]);
        free(resp->header_values[i]);
    }
    resp->header_count = 0;
}

int ps_http_response_take(struct ps_http_response *resp, int status, const char *content_type,
                          char *body, size_t len)
{
    free(resp->body);
    resp->body = body;
    resp->body_len = body ? len : 0;
    resp->status = status;
    snprintf(resp->content_type, sizeof resp->content_type, "%s",
             content_type ? content_type : "");
    return 0;
}

int ps_http_response_set(struct ps_http_response *resp, int status, const char *content_type,
                         const void *body, size_t len)
{
    char *copy = NULL;
    if (len) {
        copy = malloc(len);
        if (!copy) {
            resp->failed = 1;
            return PS_ENOMEM;
        }
        memcpy(copy, body, len);
    }
    return ps_http_response_take(resp, status, content_type, copy, len);
}

int ps_http_response_add_header(struct ps_http_response *resp, const char *name,
                                const char *value)
{
    if (strpbrk(name, "\r\n:") || strpbrk(value, "\r\n") || !*name)
        return PS_EINVAL;
    if (resp->header_count == PS_HTTP_MAX_EXTRA_HEADERS)
        return PS_ELIMIT;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        resp->failed = 1;
        return PS_ENOMEM;
    }
    resp->header_names[resp->header_count] = n;
    resp->header_values[resp->header_count] = v;
    resp->header_count++;
    return 0;
}

int ps_http_reply_json(struct ps_http_response *resp, int status, const json_t *json)
{
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    if (json_dump_callback(json, ps_textbuf_dump_cb, &b, JSON_COMPACT) != 0 || b.failed) {
        ps_textbuf_release(&b);
        resp->failed = 1;
        return PS_ENOMEM;
    }
    size_t len = b.len;
    return ps_http_response_take(resp, status, "application/json", ps_textbuf_detach(&b), len);
}

json_t *ps_http_error_body(int code, const char *message)
{
    /* Messages quote client input and may be cut inside a UTF-8 sequence: sanitize a copy
     * here, where every error body is made, or json_pack refuses the string (no reply). */
    char msg[PS_ERROR_MSG_MAX + 64];
    snprintf(msg, sizeof msg, "%s", message ? message : "");
    utf8_sanitize(msg);
    return json_pack("{s:i, s:s, s:s}", "code", code, "error", ps_error_code_name(code),
                     "message", msg);
}

int ps_http_reply_error(struct ps_http_response *resp, int status, int code, const char *fmt,
                        ...)
{
    char msg[PS_ERROR_MSG_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    utf8_sanitize(msg);   /* for the log line; ps_http_error_body sanitizes its own copy */
    const char *rid = resp->request_id_ ? resp->request_id_ : "-";
    json_t *j;
    if (status >= 500) {
        if (resp->server_)
            ps_http_server_log(resp->server_, "request %s: %d: %s", rid, status, msg);
        char generic[96];
        snprintf(generic, sizeof generic, "internal error (request %s)", rid);
        j = ps_http_error_body(code, generic);
        if (j)
            json_object_set_new(j, "request_id", json_string(rid));
    } else {
        j = ps_http_error_body(code, msg);
    }
    if (!j) {
        resp->failed = 1;
        return PS_ENOMEM;
    }
    int rc = ps_http_reply_json(resp, status, j);
    json_decref(j);
    return rc;
}

int ps_http_reply_ps_error(struct ps_http_response *resp, const struct ps_error *err)
{
    int code = err ? err->code : 0;
    const char *msg = err && err->code ? err->msg : "error without a message (a bug)";
    int status;
    switch (code) {
    case PS_EINVAL: status = 400; break;
    case PS_EPERM: status = 403; break;
    case PS_ENOENT: status = 404; break;
    case PS_EEXIST:
    case PS_ESTATE:
    case PS_ELIMIT: status = 409; break;
    default: status = 500; break;
    }
    return ps_http_reply_error(resp, status, code ? code : PS_EIO, "%s", msg);
}
