/* ui_assets.h — the web UI's files embedded in the binary (generated from web/ by
 * cmake/embed_assets.cmake; served by ui.c under /ui/). */
#ifndef PS_SERVER_UI_ASSETS_H
#define PS_SERVER_UI_ASSETS_H

#include <stddef.h>

struct ps_ui_asset {
    const char *path;            /* below /ui/: "index.html", "vendor/uPlot.iife.min.js" */
    const unsigned char *data;   /* NUL-terminated copy; len excludes the NUL */
    size_t len;
};

/* Ends with {NULL, NULL, 0}. */
extern const struct ps_ui_asset ps_ui_assets[];

#endif
