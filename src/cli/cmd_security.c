/* cmd_security.c — check-permission, add-member and remove-member: the scheduler's
 * check_permission, add_member and remove_member (docs/api.md "Users, groups and ACLs").
 * Users and groups themselves are created and removed with `create user|group` and `remove`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli_client.h"
#include "cli/commands.h"

static const char *const formats[] = {"text", "json", "yson", NULL};

static const char check_usage[] =
    "usage: poolsched check-permission USER PERMISSION PATH\n"
    "\n"
    "Prints allow or deny: whether USER has PERMISSION (use, read, write, administer, remove,\n"
    "modify_children, ...) on PATH (//sys/pool_trees, a tree or a pool), from the ACLs as\n"
    "upstream's check_permission answers. --format json prints {action}.\n"
    "  poolsched check-permission alice use //sys/pool_trees/physical/research\n";

int ps_cmd_check_permission(int argc, char **argv)
{
    const char *cmd = "check-permission";
    static const struct ps_cli_opt opts[] = {PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, opts, 3, 3, "USER PERMISSION PATH",
                                  check_usage, &args);
    if (rc >= 0)
        return rc;
    struct ps_cli_client c = {0};
    if ((rc = ps_cli_client_open(&c, cmd, &args, formats)) != 0)
        return rc;
    json_t *body = json_pack("{s:s, s:s, s:s}", "user", ps_cli_args_positional(&args, 0),
                             "permission", ps_cli_args_positional(&args, 1), "path",
                             ps_cli_args_positional(&args, 2));
    json_t *reply = NULL;
    rc = ps_cli_call(&c, "check_permission", body, &reply, NULL, 0);
    json_decref(body);
    if (rc == 0 && c.format != PS_CLI_FORMAT_TEXT)
        rc = ps_cli_print_value(&c, reply);
    else if (rc == 0)
        printf("%s\n", json_string_value(json_object_get(reply, "action")));
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char member_usage[] =
    "usage: poolsched add-member MEMBER GROUP\n"
    "       poolsched remove-member MEMBER GROUP\n"
    "\n"
    "Adds MEMBER (a user or a group) to GROUP, or removes it (a superuser only).\n";

static int member(const char *cmd, const char *command, int argc, char **argv)
{
    static const struct ps_cli_opt opts[] = {PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, opts, 2, 2, "MEMBER GROUP", member_usage,
                                  &args);
    if (rc >= 0)
        return rc;
    return ps_cli_send(cmd, &args, formats, command,
                       json_pack("{s:s, s:s}", "member", ps_cli_args_positional(&args, 0),
                                 "group", ps_cli_args_positional(&args, 1)));
}

int ps_cmd_add_member(int argc, char **argv)
{
    return member("add-member", "add_member", argc, argv);
}

int ps_cmd_remove_member(int argc, char **argv)
{
    return member("remove-member", "remove_member", argc, argv);
}
