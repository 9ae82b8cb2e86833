/* cmd_bench.h — the entry of `poolsched bench NAME [OPTIONS]` (cmd_bench.c), which the command
 * table (cli/commands.c) names; the benchmarks themselves are bench.h's. */
#ifndef PS_BENCH_CMD_BENCH_H
#define PS_BENCH_CMD_BENCH_H

/* Runs one benchmark; the exit code as cli/commands.h describes. */
int ps_cmd_bench(int argc, char **argv);

#endif
