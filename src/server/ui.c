/* ui.c — the web UI (docs/ui.md): GET /ui/<file> serves the files embedded at build time
 * (ui_assets.h), GET / and GET /ui redirect to /ui/.
 *
 * The files are code and styles only, no data: they are served without a token. The page asks
 * for one, keeps it in the tab's sessionStorage and sends it with every API call
 * (`Authorization: OAuth <token>`), so reads and writes go through the API's own checks
 * (the ACLs, docs/api.md "Users, groups and ACLs"); the pages offer only what check_permission
 * allows the user.
 */
#include <string.h>

#include "server/api.h"
#include "server/service_state.h"
#include "server/ui_assets.h"

static const char *content_type(const char *path)
{
    static const struct { const char *ext, *type; } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".txt", "text/plain; charset=utf-8"},
        {".json", "application/json"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

static void redirect(struct ps_http_response *resp)
{
    static const char body[] = "see /ui/\n";
    ps_http_response_set(resp, 302, "text/plain; charset=utf-8", body, sizeof body - 1);
    ps_http_response_add_header(resp, "Location", "/ui/");
}

static void root_handler(const struct ps_http_request *req, struct ps_http_response *resp,
                         void *ctx)
{
    (void)req;
    (void)ctx;
    redirect(resp);
}

static void ui_handler(const struct ps_http_request *req, struct ps_http_response *resp,
                       void *ctx)
{
    (void)ctx;
    if (strcmp(req->path, "/ui") == 0) {
        redirect(resp);
        return;
    }
    const char *file = req->path + strlen("/ui/");
    if (*file == '\0')
        file = "index.html";
    for (const struct ps_ui_asset *a = ps_ui_assets; a->path; a++) {
        if (strcmp(a->path, file) != 0)
            continue;
        if (ps_http_response_set(resp, 200, content_type(a->path), a->data, a->len) == 0) {
            /* the files change with the binary only: revalidate rather than cache for good */
            ps_http_response_add_header(resp, "Cache-Control", "no-cache");
            ps_http_response_add_header(resp, "X-Content-Type-Options", "nosniff");
        }
        return;
    }
    ps_http_reply_error(resp, 404, PS_ENOENT, "no such file of the web UI: %s", req->path);
}

int ps_ui_register(struct ps_service *svc, struct ps_error *err)
{
    int rc;
    if ((rc = ps_http_server_route(svc->http, "GET", "/", PS_HTTP_EXACT, root_handler, svc,
                                   err)) != 0 ||
        (rc = ps_http_server_route(svc->http, "GET", "/ui", PS_HTTP_PREFIX, ui_handler, svc,
                                   err)) != 0)
        return rc;
    return 0;
}
