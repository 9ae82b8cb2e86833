/* cmd_tokens.c — issue-token and revoke-token: an admin gives a user (or a node) a token and
 * takes it back (the scheduler's issue_token / revoke_token, docs/api.md "Tokens"). */
#include <stdio.h>
#include <string.h>

#include "cli/cli_client.h"
#include "cli/commands.h"

static const struct ps_cli_opt issue_opts[] = {
    {"--user", 0, true, false}, {"--role", 0, true, false}, PS_CLI_COMMON_OPTS,
    {NULL, 0, false, false}};

static const char issue_usage[] =
    "usage: poolsched issue-token --user USER [--role user|admin|node]\n"
    "\n"
    "Issues a token for USER (admin only) and prints it; the scheduler keeps only its SHA-256,\n"
    "so it is shown once. Role user (the default) is an ordinary user: ACLs decide what it may\n"
    "do (docs/api.md); admin acts as a member of superusers (everything, tokens included);\n"
    "node may only send heartbeats.\n"
    "--format json prints {token, user, role}.\n";

static const char *const token_formats[] = {"text", "json", "yson", NULL};

int ps_cmd_issue_token(int argc, char **argv)
{
    const char *cmd = "issue-token";
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, issue_opts, 0, 0, "", issue_usage, &args);
    if (rc >= 0)
        return rc;
    const char *user = ps_cli_args_get(&args, "--user");
    const char *role = ps_cli_args_get(&args, "--role");
    if (!user || !user[0])
        return ps_cli_usage_error(cmd, "--user: missing (the user the token is for)");
    struct ps_cli_client c = {0};
    if ((rc = ps_cli_client_open(&c, cmd, &args, token_formats)) != 0)
        return rc;
    json_t *body = json_pack("{s:s}", "user", user);
    if (role)
        json_object_set_new(body, "role", json_string(role));
    json_t *reply = NULL;
    rc = ps_cli_call(&c, "issue_token", body, &reply, NULL, 0);
    json_decref(body);
    if (rc == 0 && c.format != PS_CLI_FORMAT_TEXT)
        rc = ps_cli_print_value(&c, reply);
    else if (rc == 0)
        printf("%s\n", json_string_value(json_object_get(reply, "token")));
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char revoke_usage[] =
    "usage: poolsched revoke-token TOKEN\n"
    "\n"
    "Revokes TOKEN (admin only): requests with it are refused from now on.\n";

int ps_cmd_revoke_token(int argc, char **argv)
{
    const char *cmd = "revoke-token";
    static const struct ps_cli_opt opts[] = {PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, opts, 1, 1, "TOKEN", revoke_usage, &args);
    if (rc >= 0)
        return rc;
    return ps_cli_send(cmd, &args, token_formats, "revoke_token",
                       json_pack("{s:s}", "token", ps_cli_args_positional(&args, 0)));
}
