#include "server/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "platform/private_file.h"
#include "platform/random.h"
#include "server/sha256.h"

const char *ps_role_name(enum ps_role role)
{
    switch (role) {
    case PS_ROLE_NODE: return "node";
    case PS_ROLE_USER: return "user";
    case PS_ROLE_ADMIN: return "admin";
    }
    return "unknown";
}

int ps_role_parse(const char *name, enum ps_role *out, struct ps_error *err)
{
    static const enum ps_role roles[] = { PS_ROLE_ADMIN, PS_ROLE_USER, PS_ROLE_NODE };
    for (size_t i = 0; i < sizeof roles / sizeof *roles; i++) {
        if (name && strcmp(name, ps_role_name(roles[i])) == 0) {
            *out = roles[i];
            return 0;
        }
    }
    return ps_error_set(err, PS_EINVAL, "unknown role '%s': expected admin, user or node",
                        name ? name : "(null)");
}

bool ps_role_allows(enum ps_role have, enum ps_role need)
{
    return have == PS_ROLE_ADMIN || have == need;
}

bool ps_auth_equal(const void *a, const void *b, size_t len)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= (unsigned char)(x[i] ^ y[i]);
    return diff == 0;
}

int ps_auth_token_generate(char out[PS_AUTH_TOKEN_LEN + 1], struct ps_error *err)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char raw[PS_AUTH_TOKEN_BYTES];
    out[0] = '\0';
    int rc = ps_random_bytes(raw, sizeof raw, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof raw; i++) {
        out[2 * i] = digits[raw[i] >> 4];
        out[2 * i + 1] = digits[raw[i] & 15];
    }
    out[PS_AUTH_TOKEN_LEN] = '\0';
    memset(raw, 0, sizeof raw);
    return 0;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

int ps_auth_parse_header(const char *header, const char **token, size_t *token_len,
                         struct ps_error *err)
{
    *token = NULL;
    *token_len = 0;
    if (!header)
        return ps_error_set(err, PS_EPERM,
                            "authentication required: send 'Authorization: OAuth <token>'");
    const char *p = header;
    while (is_blank(*p))
        p++;
    if (strncasecmp(p, "OAuth", 5) != 0 || !is_blank(p[5]))
        return ps_error_set(err, PS_EPERM,
                            "the Authorization header must be 'OAuth <token>'");
    p += 5;
    while (is_blank(*p))
        p++;
    const char *start = p;
    while (*p > ' ' && *p <= '~')
        p++;
    size_t n = (size_t)(p - start);
    while (is_blank(*p))
        p++;
    if (n == 0 || *p != '\0')
        return ps_error_set(err, PS_EPERM,
                            "the Authorization header must be 'OAuth <token>' with one token "
                            "of visible ASCII characters");
    if (n > PS_AUTH_MAX_TOKEN_LEN)
        return ps_error_set(err, PS_EPERM, "the token is longer than %d characters",
                            PS_AUTH_MAX_TOKEN_LEN);
    *token = start;
    *token_len = n;
    return 0;
}

static int check_user(const char *user, struct ps_error *err)
{
    if (!user || !*user)
        return ps_error_set(err, PS_EINVAL, "a token needs a user name");
    if (strlen(user) > PS_AUTH_MAX_USER_LEN)
        return ps_error_set(err, PS_EINVAL, "user name '%.40s...' is longer than %d bytes", user,
                            PS_AUTH_MAX_USER_LEN);
    return 0;
}

int ps_auth_token_add(struct ps_store *store, const char *token, const char *user,
                      enum ps_role role, struct ps_error *err)
{
    int rc = check_user(user, err);
    if (rc)
        return rc;
    size_t n = token ? strlen(token) : 0;
    if (n == 0 || n > PS_AUTH_MAX_TOKEN_LEN)
        return ps_error_set(err, PS_EINVAL, "a token must have 1 to %d characters",
                            PS_AUTH_MAX_TOKEN_LEN);
    char hash[2 * PS_SHA256_BYTES + 1];
    ps_sha256_hex(token, n, hash);
    return ps_store_token_put(store, hash, user, ps_role_name(role), err);
}

int ps_auth_token_issue(struct ps_store *store, const char *user, enum ps_role role,
                        char out[PS_AUTH_TOKEN_LEN + 1], struct ps_error *err)
{
    int rc = check_user(user, err);
    if (!rc)
        rc = ps_auth_token_generate(out, err);
    if (!rc)
        rc = ps_auth_token_add(store, out, user, role, err);
    if (rc)
        memset(out, 0, PS_AUTH_TOKEN_LEN + 1);
    return rc;
}

int ps_auth_token_revoke(struct ps_store *store, const char *token, struct ps_error *err)
{
    char hash[2 * PS_SHA256_BYTES + 1];
    ps_sha256_hex(token, strlen(token), hash);
    return ps_store_token_delete(store, hash, err);
}

int ps_auth_lookup(struct ps_store *store, const char *token, size_t token_len,
                   struct ps_auth_identity *out, struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    if (!token || token_len == 0 || token_len > PS_AUTH_MAX_TOKEN_LEN)
        return ps_error_set(err, PS_EPERM, "unknown token");
    char hash[2 * PS_SHA256_BYTES + 1];
    ps_sha256_hex(token, token_len, hash);
    char stored[2 * PS_SHA256_BYTES + 2], role[16];
    struct ps_error get_err;
    ps_error_init(&get_err);
    int rc = ps_store_token_get(store, hash, stored, sizeof stored, out->user, sizeof out->user,
                                role, sizeof role, &get_err);
    if (rc == PS_ENOENT || (rc == 0 && (strlen(stored) != 2 * PS_SHA256_BYTES ||
                                        !ps_auth_equal(stored, hash, 2 * PS_SHA256_BYTES)))) {
        memset(out, 0, sizeof *out);
        return ps_error_set(err, PS_EPERM, "unknown token");
    }
    if (rc) {
        memset(out, 0, sizeof *out);
        return ps_error_set(err, rc, "%s", get_err.msg);
    }
    rc = ps_role_parse(role, &out->role, err);
    if (rc) {
        memset(out, 0, sizeof *out);
        ps_error_prefix(err, "token table of %s", ps_store_path(store));
        return PS_EIO;
    }
    return 0;
}

int ps_auth_authenticate(struct ps_store *store, const char *authorization,
                         struct ps_auth_identity *out, struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    const char *token;
    size_t len;
    int rc = ps_auth_parse_header(authorization, &token, &len, err);
    if (!rc)
        rc = ps_auth_lookup(store, token, len, out, err);
    return rc;
}

int ps_auth_require(const struct ps_auth_identity *id, enum ps_role need, const char *what,
                    struct ps_error *err)
{
    if (ps_role_allows(id->role, need))
        return 0;
    return ps_error_set(err, PS_EPERM, "user '%s' (role %s) may not %s: it needs role %s",
                        id->user, ps_role_name(id->role), what, ps_role_name(need));
}

int ps_auth_bootstrap_admin(struct ps_store *store, const char *data_dir,
                            const char *admin_user, char token_out[PS_AUTH_TOKEN_LEN + 1],
                            bool *created, struct ps_error *err)
{
    if (created)
        *created = false;
    if (token_out)
        token_out[0] = '\0';
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", data_dir, PS_AUTH_ADMIN_TOKEN_FILE) >=
        sizeof path)
        return ps_error_set(err, PS_EINVAL, "data dir path is too long");

    char *text = NULL;
    struct ps_error read_err;
    ps_error_init(&read_err);
    int rc = ps_private_file_read(path, 4 * PS_AUTH_MAX_TOKEN_LEN, &text, NULL, &read_err);
    if (rc && rc != PS_ENOENT && rc != PS_ELIMIT)
        return ps_error_set(err, rc, "%s", read_err.msg);
    if (rc == 0) {
        size_t n = strlen(text);
        while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || is_blank(text[n - 1])))
            text[--n] = '\0';
        struct ps_auth_identity id;
        struct ps_error lookup_err;
        ps_error_init(&lookup_err);
        rc = ps_auth_lookup(store, text, n, &id, &lookup_err);
        if (rc == 0 && id.role == PS_ROLE_ADMIN && n <= PS_AUTH_TOKEN_LEN) {
            if (token_out)
                snprintf(token_out, PS_AUTH_TOKEN_LEN + 1, "%s", text);
            memset(text, 0, n);
            free(text);
            return 0;
        }
        memset(text, 0, n);
        free(text);
        if (rc && rc != PS_EPERM)   /* a store failure, not an unknown token */
            return ps_error_set(err, rc, "%s", lookup_err.msg);
    }

    char token[PS_AUTH_TOKEN_LEN + 1];
    rc = ps_auth_token_issue(store, admin_user, PS_ROLE_ADMIN, token, err);
    if (rc)
        return rc;
    char line[PS_AUTH_TOKEN_LEN + 2];
    snprintf(line, sizeof line, "%s\n", token);
    rc = ps_private_file_write(path, line, strlen(line), err);
    memset(line, 0, sizeof line);
    if (rc) {
        ps_auth_token_revoke(store, token, NULL);
        memset(token, 0, sizeof token);
        return rc;
    }
    if (token_out)
        memcpy(token_out, token, sizeof token);
    memset(token, 0, sizeof token);
    if (created)
        *created = true;
    return 0;
}
