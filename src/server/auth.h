/* auth.h — API tokens: generation, the Authorization header, roles, and the token table.
 *
 * A token is 32 random bytes as 64 lowercase hex characters, sent as
 * `Authorization: OAuth <token>` (the YTsaurus convention). The store keeps only the SHA-256 of
 * each token (table `tokens`), with the user it stands for and a role:
 *   - admin: everything;
 *   - user:  the user API (Cypress-like tree, operations);
 *   - node:  the node agent endpoints (register, heartbeat) only.
 * Why hashes: a copied database file or backup then yields no usable token. Plain SHA-256
 * without salt or stretching is enough because tokens are 256-bit random strings, not passwords:
 * there is no dictionary to try. The token itself exists only in memory, in the client's hands
 * and, for the bootstrap admin, in the 0600 file <data_dir>/admin_token.
 *
 * Timing: token hashes are compared in constant time; the store looks rows up by hash, which
 * can leak timing about the hash, never about the token.
 *
 * HTTP mapping (done by the handlers): a failure of ps_auth_authenticate means "who are you?"
 * -> 401; a failure of ps_auth_require means "not allowed" -> 403. Both return PS_EPERM.
 *
 * Threads: the functions taking a store follow the store's rule (callers serialise); the others
 * are thread-safe.
 */
#ifndef PS_SERVER_AUTH_H
#define PS_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "server/store.h"

#define PS_AUTH_TOKEN_BYTES 32
#define PS_AUTH_TOKEN_LEN (2 * PS_AUTH_TOKEN_BYTES)   /* hex characters */
#define PS_AUTH_MAX_TOKEN_LEN 256                     /* longer header tokens are refused */
#define PS_AUTH_MAX_USER_LEN 127
#define PS_AUTH_ADMIN_TOKEN_FILE "admin_token"

enum ps_role {
    PS_ROLE_NODE = 1,
    PS_ROLE_USER = 2,
    PS_ROLE_ADMIN = 3,
};

/* "node", "user", "admin" ("unknown" otherwise). */
const char *ps_role_name(enum ps_role role);

/* Parses a role name. Errors: PS_EINVAL listing the valid names. */
int ps_role_parse(const char *name, enum ps_role *out, struct ps_error *err);

/* Whether an identity with role `have` may use what requires `need`: admin may use everything,
 * the other roles only their own. */
bool ps_role_allows(enum ps_role have, enum ps_role need);

struct ps_auth_identity {
    char user[PS_AUTH_MAX_USER_LEN + 1];
    enum ps_role role;
};

/* A fresh random token (PS_AUTH_TOKEN_LEN hex characters and a NUL). Errors: PS_EIO. */
int ps_auth_token_generate(char out[PS_AUTH_TOKEN_LEN + 1], struct ps_error *err);

/* Extracts the token from an Authorization header value "OAuth <token>" (scheme in any case,
 * spaces or tabs around the token). *token points into header; *token_len is its length.
 * Errors (PS_EPERM, -> 401): missing header, another scheme, empty token, a token with
 * characters outside visible ASCII or longer than PS_AUTH_MAX_TOKEN_LEN. */
int ps_auth_parse_header(const char *header, const char **token, size_t *token_len,
                         struct ps_error *err);

/* Compares len bytes in time independent of the contents. */
bool ps_auth_equal(const void *a, const void *b, size_t len);

/* Adds a token for user with role. Errors: PS_EINVAL for an empty/overlong user or an empty
 * token, PS_EEXIST if the token is known already, PS_EIO. */
int ps_auth_token_add(struct ps_store *store, const char *token, const char *user,
                      enum ps_role role, struct ps_error *err);

/* Generates and adds a token; out receives it (the only time it is visible). */
int ps_auth_token_issue(struct ps_store *store, const char *user, enum ps_role role,
                        char out[PS_AUTH_TOKEN_LEN + 1], struct ps_error *err);

/* Removes a token. Errors: PS_ENOENT if unknown, PS_EIO. */
int ps_auth_token_revoke(struct ps_store *store, const char *token, struct ps_error *err);

/* Finds the identity of a token of token_len bytes. Errors: PS_EPERM "unknown token" (-> 401),
 * PS_EIO. */
int ps_auth_lookup(struct ps_store *store, const char *token, size_t token_len,
                   struct ps_auth_identity *out, struct ps_error *err);

/* Parses an Authorization header value (NULL when the request had none) and looks the token
 * up. Errors: as ps_auth_parse_header and ps_auth_lookup. */
int ps_auth_authenticate(struct ps_store *store, const char *authorization,
                         struct ps_auth_identity *out, struct ps_error *err);

/* Checks that id may use what requires role need; what names the action for the message
 * ("user 'alice' (role user) may not register nodes: it needs role node"). Errors: PS_EPERM. */
int ps_auth_require(const struct ps_auth_identity *id, enum ps_role need, const char *what,
                    struct ps_error *err);

/* Makes sure an admin can log in after start: if <data_dir>/admin_token holds a token that is an
 * admin token in the store, keeps it; otherwise issues a new admin token for admin_user and
 * writes it to that file (mode 0600, atomically). token_out (may be NULL) receives the token,
 * *created (may be NULL) whether a new one was made. Errors: PS_EPERM if the file exists with
 * loose permissions, PS_EIO, from the store. */
int ps_auth_bootstrap_admin(struct ps_store *store, const char *data_dir,
                            const char *admin_user, char token_out[PS_AUTH_TOKEN_LEN + 1],
                            bool *created, struct ps_error *err);

#endif
