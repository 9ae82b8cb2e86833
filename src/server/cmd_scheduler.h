/* cmd_scheduler.h — the scheduler daemon's entry, the `poolsched scheduler` command (docs/api.md).
 * The command table (cli/commands.c) names it; the server includes nothing of cli/. */
#ifndef PS_SERVER_CMD_SCHEDULER_H
#define PS_SERVER_CMD_SCHEDULER_H

/* Runs the scheduler until SIGTERM/SIGINT; the arguments after the command name (argv[0] is
 * the name). Returns the process exit code, as every command of cli/commands.h. */
int ps_cmd_scheduler(int argc, char **argv);

#endif
