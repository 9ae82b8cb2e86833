/* commands.h — the subcommands of the poolsched binary.
 *
 * Each command takes the arguments after its name (argv[0] is the command name) and returns the
 * process exit code: 0 success, 1 a remote or runtime failure (message shown), 2 bad usage or
 * bad input (one line `error: <what>: <why>` on stderr).
 */
#ifndef PS_CLI_COMMANDS_H
#define PS_CLI_COMMANDS_H

#include "bench/cmd_bench.h"          /* ps_cmd_bench: the benchmarks */
#include "server/cmd_scheduler.h"    /* ps_cmd_scheduler: the scheduler daemon */

struct ps_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

/* The table of commands, terminated by an entry whose name is NULL. */
extern const struct ps_command ps_commands[];

int ps_cmd_fair_share(int argc, char **argv);
int ps_cmd_issue_token(int argc, char **argv);  /* cmd_tokens.c */
int ps_cmd_list_nodes(int argc, char **argv);   /* cmd_nodes.c */
int ps_cmd_revoke_token(int argc, char **argv);
int ps_cmd_check_permission(int argc, char **argv);   /* cmd_security.c */
int ps_cmd_add_member(int argc, char **argv);
int ps_cmd_remove_member(int argc, char **argv);
int ps_cmd_trace(int argc, char **argv);       /* cmd_trace.c: trace import alibaba-gpu */
int ps_cmd_node(int argc, char **argv);        /* cmd_node.c: the node agent */

/* Client commands of the scheduler (docs/api.md); cmd_cypress.c */
int ps_cmd_get(int argc, char **argv);
int ps_cmd_set(int argc, char **argv);
int ps_cmd_list(int argc, char **argv);
int ps_cmd_create(int argc, char **argv);
int ps_cmd_remove(int argc, char **argv);
int ps_cmd_transfer_pool_resources(int argc, char **argv);
int ps_cmd_move(int argc, char **argv);
int ps_cmd_exists(int argc, char **argv);
/* cmd_ops.c */
int ps_cmd_vanilla(int argc, char **argv);
int ps_cmd_start_op(int argc, char **argv);
int ps_cmd_list_operations(int argc, char **argv);
int ps_cmd_get_operation(int argc, char **argv);
int ps_cmd_abort_op(int argc, char **argv);
int ps_cmd_suspend_op(int argc, char **argv);
int ps_cmd_resume_op(int argc, char **argv);
int ps_cmd_complete_op(int argc, char **argv);
int ps_cmd_update_op_parameters(int argc, char **argv);
int ps_cmd_list_jobs(int argc, char **argv);
int ps_cmd_event_log(int argc, char **argv);
int ps_cmd_get_job_stderr(int argc, char **argv);
int ps_cmd_what_if(int argc, char **argv);    /* cmd_what_if.c: what-if --since WHEN ... */
int ps_cmd_simulate(int argc, char **argv);   /* cmd_simulate.c: simulate SCENARIO --output DIR */

#endif
