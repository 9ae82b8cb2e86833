/* api.h — the API faces' entry (api.c, api_yt.c, ui.c): the HTTP routes of the native API,
 * the YTsaurus API and the web UI, the caller's authentication, and one command run in-process
 * (tests, fuzzing, benchmarks). */
#ifndef PS_SERVER_API_H
#define PS_SERVER_API_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_auth_identity;

int ps_api_register(struct ps_service *svc, struct ps_error *err);
/* The YTsaurus face (api_yt.c): /api/v3/<command>, /api/v4/<command>, /api, /hosts; every
 * command goes through ps_api_dispatch. */
int ps_api_yt_register(struct ps_service *svc, struct ps_error *err);
/* The web UI's routes: GET / and /ui/... (ui.c). */
int ps_ui_register(struct ps_service *svc, struct ps_error *err);
/* Checks an Authorization header ("OAuth <token>") and fills the caller's identity (api.c). */
int ps_api_authenticate(struct ps_service *svc, const char *header,
                        struct ps_auth_identity *out, struct ps_error *err);
/* Runs one user command in-process (the fuzz target and tests): body as JSON text, identity
 * given. Returns the HTTP status; *reply receives the JSON reply (caller decrefs). */
int ps_api_dispatch(struct ps_service *svc, const char *command, const char *body, size_t len,
                    const struct ps_auth_identity *who, json_t **reply);
/* Whether a /api/v1 command changes the state (dry_run aside): refused while the store is
 * down; the YTsaurus face's commands that write (POST, is_volatile) are these (api.c). */
bool ps_api_command_writes(const char *command);

#endif
