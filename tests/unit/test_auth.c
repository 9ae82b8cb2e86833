/* Tokens: SHA-256, generation, the Authorization header, constant-time compare, roles, the
 * token table (hashes only) and the admin token file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/private_file.h"
#include "platform/random.h"
#include "server/auth.h"
#include "server/sha256.h"
#include "server/store.h"
#include "store_test_dir.h"

static void test_sha256_vectors(void **state)
{
    (void)state;
    char hex[65];
    ps_sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ps_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ps_sha256_hex(two_blocks, strlen(two_blocks), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    struct ps_sha256 h;
    unsigned char d[32];
    char a[1000];
    memset(a, 'a', sizeof a);
    ps_sha256_init(&h);
    for (int i = 0; i < 1000; i++)
        ps_sha256_update(&h, a, sizeof a);
    ps_sha256_final(&h, d);
    static const unsigned char million_a[32] = {
        0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
        0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0,
    };
    assert_memory_equal(d, million_a, 32);

    /* Any split of the input gives the one-shot digest (block-boundary handling). */
    unsigned char msg[200];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof msg; len += 13) {
        unsigned char whole[32];
        ps_sha256_init(&h);
        ps_sha256_update(&h, msg, len);
        ps_sha256_final(&h, whole);
        for (size_t cut = 0; cut <= len; cut += 5) {
            ps_sha256_init(&h);
            ps_sha256_update(&h, msg, cut);
            ps_sha256_update(&h, msg + cut, len - cut);
            ps_sha256_final(&h, d);
            assert_memory_equal(d, whole, 32);
        }
    }
}

static void test_token_generation(void **state)
{
    (void)state;
    char a[PS_AUTH_TOKEN_LEN + 1], b[PS_AUTH_TOKEN_LEN + 1];
    assert_int_equal(ps_auth_token_generate(a, NULL), 0);
    assert_int_equal(ps_auth_token_generate(b, NULL), 0);
    assert_int_equal(strlen(a), PS_AUTH_TOKEN_LEN);
    assert_int_equal(strspn(a, "0123456789abcdef"), PS_AUTH_TOKEN_LEN);
    assert_string_not_equal(a, b);
    unsigned char zero[64] = { 0 }, buf[64] = { 0 };
    assert_int_equal(ps_random_bytes(buf, sizeof buf, NULL), 0);
    assert_memory_not_equal(buf, zero, sizeof buf);
}

static void test_parse_header(void **state)
{
    (void)state;
    const char *tok;
    size_t len;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_auth_parse_header("OAuth abc123", &tok, &len, &err), 0);
    assert_int_equal(len, 6);
    assert_memory_equal(tok, "abc123", 6);
    assert_int_equal(ps_auth_parse_header("  oauth \t x-y_z.=  ", &tok, &len, &err), 0);
    assert_int_equal(len, 7);
    assert_memory_equal(tok, "x-y_z.=", 7);

    static const char *const bad[] = { "", "OAuth", "OAuth ", "OAuthabc", "Bearer abc",
                                       "OAuth a b", "OAuth caf\xc3\xa9", "Basic YWxhZGRpbjpv" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ps_error_init(&err);
        assert_int_equal(ps_auth_parse_header(bad[i], &tok, &len, &err), PS_EPERM);
        assert_null(tok);
        assert_non_null(strstr(err.msg, "OAuth <token>"));
    }
    ps_error_init(&err);
    assert_int_equal(ps_auth_parse_header(NULL, &tok, &len, &err), PS_EPERM);
    assert_string_equal(err.msg, "authentication required: send 'Authorization: OAuth <token>'");
    char longh[PS_AUTH_MAX_TOKEN_LEN + 16] = "OAuth ";
    memset(longh + 6, 'k', PS_AUTH_MAX_TOKEN_LEN + 1);
    longh[6 + PS_AUTH_MAX_TOKEN_LEN + 1] = '\0';
    assert_int_equal(ps_auth_parse_header(longh, &tok, &len, NULL), PS_EPERM);
    longh[6 + PS_AUTH_MAX_TOKEN_LEN] = '\0';
    assert_int_equal(ps_auth_parse_header(longh, &tok, &len, NULL), 0);
}

static void test_equal_and_roles(void **state)
{
    (void)state;
    assert_true(ps_auth_equal("abcdef", "abcdef", 6));
    assert_false(ps_auth_equal("abcdef", "abcdeg", 6));
    assert_false(ps_auth_equal("xbcdef", "abcdef", 6));
    assert_true(ps_auth_equal("a", "b", 0));

    enum ps_role r;
    assert_int_equal(ps_role_parse("node", &r, NULL), 0);
    assert_int_equal(r, PS_ROLE_NODE);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_role_parse("root", &r, &err), PS_EINVAL);
    assert_string_equal(err.msg, "unknown role 'root': expected admin, user or node");
    assert_true(ps_role_allows(PS_ROLE_ADMIN, PS_ROLE_NODE));
    assert_true(ps_role_allows(PS_ROLE_ADMIN, PS_ROLE_USER));
    assert_true(ps_role_allows(PS_ROLE_USER, PS_ROLE_USER));
    assert_false(ps_role_allows(PS_ROLE_USER, PS_ROLE_ADMIN));
    assert_false(ps_role_allows(PS_ROLE_USER, PS_ROLE_NODE));
    assert_false(ps_role_allows(PS_ROLE_NODE, PS_ROLE_USER));

    struct ps_auth_identity id = { .user = "alice", .role = PS_ROLE_USER };
    ps_error_init(&err);
    assert_int_equal(ps_auth_require(&id, PS_ROLE_NODE, "send node heartbeats", &err), PS_EPERM);
    assert_string_equal(err.msg,
                        "user 'alice' (role user) may not send node heartbeats: it needs role node");
    assert_int_equal(ps_auth_require(&id, PS_ROLE_USER, "start operations", NULL), 0);
}

/* Does any file of the store contain needle? */
static int store_files_contain(const char *dir, const char *needle)
{
    static const char *const names[] = { PS_STORE_FILE_NAME, PS_STORE_FILE_NAME "-wal" };
    for (size_t i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        static char data[1 << 22];
        size_t n = fread(data, 1, sizeof data, f);
        fclose(f);
        if (memmem(data, n, needle, strlen(needle)))
            return 1;
    }
    return 0;
}

static void test_token_table(void **state)
{
    (void)state;
    char *dir = make_store_dir("auth");
    struct ps_store *s;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_open(dir, &s, &err), 0);

    char alice[PS_AUTH_TOKEN_LEN + 1], node[PS_AUTH_TOKEN_LEN + 1];
    assert_int_equal(ps_auth_token_issue(s, "alice", PS_ROLE_USER, alice, &err), 0);
    assert_int_equal(ps_auth_token_issue(s, "node-17", PS_ROLE_NODE, node, &err), 0);
    assert_int_equal(ps_auth_token_add(s, "fixed-token", "bob", PS_ROLE_ADMIN, &err), 0);
    assert_int_equal(ps_auth_token_add(s, "fixed-token", "eve", PS_ROLE_USER, &err), PS_EEXIST);
    ps_error_init(&err);
    assert_int_equal(ps_auth_token_add(s, "t", "", PS_ROLE_USER, &err), PS_EINVAL);
    ps_error_init(&err);

    struct ps_auth_identity id;
    char header[128];
    snprintf(header, sizeof header, "OAuth %s", alice);
    assert_int_equal(ps_auth_authenticate(s, header, &id, &err), 0);
    assert_string_equal(id.user, "alice");
    assert_int_equal(id.role, PS_ROLE_USER);
    assert_int_equal(ps_auth_authenticate(s, "OAuth fixed-token", &id, &err), 0);
    assert_string_equal(id.user, "bob");
    assert_int_equal(id.role, PS_ROLE_ADMIN);

    /* A token one character off is unknown. */
    char wrong[PS_AUTH_TOKEN_LEN + 1];
    memcpy(wrong, node, sizeof wrong);
    wrong[10] = wrong[10] == 'a' ? 'b' : 'a';
    assert_int_equal(ps_auth_lookup(s, wrong, strlen(wrong), &id, &err), PS_EPERM);
    assert_string_equal(err.msg, "unknown token");
    assert_string_equal(id.user, "");
    ps_error_init(&err);
    assert_int_equal(ps_auth_authenticate(s, NULL, &id, &err), PS_EPERM);

    /* Only hashes reach the disk. */
    ps_store_close(s);
    assert_false(store_files_contain(dir, alice));
    assert_false(store_files_contain(dir, "fixed-token"));
    char hash[65];
    ps_sha256_hex(alice, strlen(alice), hash);
    assert_true(store_files_contain(dir, hash));   /* the check above could have failed */

    /* Tokens survive a reopen; revoked ones do not. */
    ps_error_init(&err);
    assert_int_equal(ps_store_open(dir, &s, &err), 0);
    assert_int_equal(ps_auth_lookup(s, node, strlen(node), &id, &err), 0);
    assert_string_equal(id.user, "node-17");
    assert_int_equal(id.role, PS_ROLE_NODE);
    assert_int_equal(ps_auth_token_revoke(s, node, &err), 0);
    assert_int_equal(ps_auth_lookup(s, node, strlen(node), &id, &err), PS_EPERM);
    ps_error_init(&err);
    assert_int_equal(ps_auth_token_revoke(s, node, &err), PS_ENOENT);
    ps_store_close(s);
    remove_store_dir(dir, PS_AUTH_ADMIN_TOKEN_FILE);
}

static void test_admin_bootstrap(void **state)
{
    (void)state;
    char *dir = make_store_dir("auth");
    struct ps_store *s;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_open(dir, &s, &err), 0);
    umask(022);   /* the token file must be 0600 anyway */

    char token[PS_AUTH_TOKEN_LEN + 1], again[PS_AUTH_TOKEN_LEN + 1];
    bool created;
    assert_int_equal(ps_auth_bootstrap_admin(s, dir, "root", token, &created, &err), 0);
    assert_true(created);
    assert_int_equal(strlen(token), PS_AUTH_TOKEN_LEN);

    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, PS_AUTH_ADMIN_TOKEN_FILE);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char *text;
    assert_int_equal(ps_private_file_read(path, 1024, &text, NULL, &err), 0);
    char want[PS_AUTH_TOKEN_LEN + 2];
    snprintf(want, sizeof want, "%s\n", token);
    assert_string_equal(text, want);
    free(text);

    struct ps_auth_identity id;
    assert_int_equal(ps_auth_lookup(s, token, strlen(token), &id, &err), 0);
    assert_string_equal(id.user, "root");
    assert_int_equal(id.role, PS_ROLE_ADMIN);

    /* A restart keeps the token. */
    ps_store_close(s);
    assert_int_equal(ps_store_open(dir, &s, &err), 0);
    assert_int_equal(ps_auth_bootstrap_admin(s, dir, "root", again, &created, &err), 0);
    assert_false(created);
    assert_string_equal(again, token);

    /* A file holding an unknown token is replaced with a new admin token. */
    assert_int_equal(ps_private_file_write(path, "deadbeef\n", 9, &err), 0);
    assert_int_equal(ps_auth_bootstrap_admin(s, dir, "root", again, &created, &err), 0);
    assert_true(created);
    assert_string_not_equal(again, token);
    assert_int_equal(ps_auth_lookup(s, again, strlen(again), &id, &err), 0);

    /* Loose permissions are refused, with the fix in the message. */
    assert_int_equal(chmod(path, 0644), 0);
    ps_error_init(&err);
    assert_int_equal(ps_auth_bootstrap_admin(s, dir, "root", again, &created, &err), PS_EPERM);
    assert_non_null(strstr(err.msg, "mode 0644"));
    assert_non_null(strstr(err.msg, "chmod 600"));
    ps_store_close(s);
    remove_store_dir(dir, PS_AUTH_ADMIN_TOKEN_FILE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_token_generation),
        cmocka_unit_test(test_parse_header),
        cmocka_unit_test(test_equal_and_roles),
        cmocka_unit_test(test_token_table),
        cmocka_unit_test(test_admin_bootstrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
