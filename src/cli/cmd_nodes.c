/* cmd_nodes.c — list-nodes: the cluster's nodes as the scheduler sees them (the orchid's
 * //sys/scheduler/orchid/scheduler/nodes), what `sinfo` shows a Slurm user. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli_client.h"
#include "cli/cli_format.h"
#include "cli/commands.h"
#include "platform/wall_clock.h"

static const char usage[] =
    "usage: poolsched list-nodes [--format table|json|yson]\n"
    "\n"
    "Lists the nodes: id, state (online, offline, banned), address of the last heartbeat,\n"
    "pool tree, tags, cpu / memory / user slots in use of the node's limits, running jobs and\n"
    "the time since the last heartbeat. json and yson print every attribute of\n"
    "//sys/scheduler/orchid/scheduler/nodes (ban message, alerts, abort counts).\n";

static const char *const formats[] = {"table", "json", "yson", NULL};

int ps_cmd_list_nodes(int argc, char **argv)
{
    const char *cmd = "list-nodes";
    static const struct ps_cli_opt opts[] = {PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, opts, 0, 0, "", usage, &args);
    if (rc >= 0)
        return rc;
    struct ps_cli_client c = {0};
    if ((rc = ps_cli_client_open(&c, cmd, &args, formats)) != 0)
        return rc;
    json_t *body = json_pack("{s:s}", "path", "//sys/scheduler/orchid/scheduler/nodes");
    json_t *reply = NULL;
    rc = ps_cli_call(&c, "get", body, &reply, NULL, 0);
    json_decref(body);
    const json_t *nodes = json_object_get(reply, "value");
    if (rc == 0 && !json_is_object(nodes)) {
        ps_cli_error(cmd, "the reply has no map of nodes");
        rc = 1;
    }
    if (rc == 0 && c.format != PS_CLI_FORMAT_TEXT) {
        rc = ps_cli_print_value(&c, nodes);
    } else if (rc == 0) {
        char *text = ps_cli_nodes_table(nodes, ps_wall_clock_ms());
        if (text)
            fputs(text, stdout);
        else
            ps_cli_error(cmd, "out of memory"), rc = 1;
        free(text);
    }
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}
