/* commands.h — the subcommands of the poolsched binary.
 *
 * Each command takes the arguments after its name (argv[0] is the command name) and returns the
 * process exit code: 0 success, 1 a remote or runtime failure (message shown), 2 bad usage or
 * bad input (one line `error: <what>: <why>` on stderr).
 */
#ifndef PS_CLI_COMMANDS_H
#define PS_CLI_COMMANDS_H

struct ps_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

/* The table of commands, terminated by an entry whose name is NULL. */
extern const struct ps_command ps_commands[];

int ps_cmd_fair_share(int argc, char **argv);
int ps_cmd_bench(int argc, char **argv);
int ps_cmd_trace(int argc, char **argv);       /* cmd_trace.c: trace import alibaba-gpu */
int ps_cmd_scheduler(int argc, char **argv);   /* server/cmd_scheduler.c */
int ps_cmd_node(int argc, char **argv);        /* cmd_node.c: the node agent */

#endif
