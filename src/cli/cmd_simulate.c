/* cmd_simulate.c — `poolsched simulate SCENARIO --output DIR [--pools-period MS]`: replays a
 * scenario in virtual time (shared/spec/formats.md section 3, docs/simulate.md) and writes
 * operations.csv, events.jsonl, pools.csv and summary.json into DIR, and report.html
 * (sim_report.h) from them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli_client.h"
#include "cli/commands.h"
#include "whatif/sim_report.h"
#include "io/scenario.h"
#include "platform/file.h"
#include "sim/sim.h"

static const char usage_text[] =
    "usage: poolsched simulate SCENARIO --output DIR [--pools-period MS]\n"
    "\n"
    "Replays the workload of the scenario file SCENARIO (JSON, shared/spec/formats.md section 3;\n"
    "'-' reads standard input) in virtual time on the scheduling engine: node heartbeats,\n"
    "fair share updates, operations and their jobs. Writes into DIR (created if missing):\n"
    "  operations.csv  one row per operation (the YTsaurus simulator's columns)\n"
    "  events.jsonl    operation and job events, in time order\n"
    "  pools.csv       fair share, usage and demand of every pool at every fair share update\n"
    "  summary.json    totals, fairness metrics per pool, job wait times, pending reasons\n"
    "  report.html     the charts of the web UI's charts page over these outputs, one\n"
    "                  self-contained page (open it in a browser; docs/ui.md)\n"
    "The same scenario always gives byte-identical outputs.\n"
    "\n"
    "  --output DIR        where the outputs go (required)\n"
    "  --pools-period MS   write pools.csv rows at most every MS milliseconds of virtual time\n"
    "                      (default: at every fair share update period)\n"
    "  -h, --help          this text\n"
    "\n"
    "Exit status: 0 success; 2 bad usage or bad input, e.g. overlapping pool trees (one line\n"
    "'error: <what>: <why>'); 1 any other failure.\n";

static int read_input(const char *path, char **text, size_t *len)
{
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_file_read_max(path, 0, text, len, &err);
    if (rc != 0)
        ps_cli_error(NULL, "%s", err.msg);
    return rc == 0 ? 0 : rc == PS_ENOMEM ? 1 : 2;
}

int ps_cmd_simulate(int argc, char **argv)
{
    const char *scenario_path = NULL, *dir = NULL;
    long long pools_period = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(arg, "--output") == 0 || strcmp(arg, "--pools-period") == 0) {
            if (i + 1 >= argc) {
                ps_cli_error(NULL, "simulate: %s needs a value", arg);
                return 2;
            }
            if (strcmp(arg, "--output") == 0) {
                dir = argv[++i];
            } else {
                char *end = NULL;
                errno = 0;
                pools_period = strtoll(argv[++i], &end, 10);
                if (end == argv[i] || *end || errno || pools_period < 0) {
                    ps_cli_error(NULL, "simulate: --pools-period must be a whole number of milliseconds >= 0, got '%s'",
                               argv[i]);
                    return 2;
                }
            }
        } else if (strncmp(arg, "--output=", 9) == 0) {
            dir = arg + 9;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            ps_cli_error(NULL, "simulate: unknown option '%s' (see poolsched simulate --help)", arg);
            return 2;
        } else if (scenario_path) {
            ps_cli_error(NULL, "simulate: one SCENARIO expected, got '%s' and '%s'", scenario_path, arg);
            return 2;
        } else {
            scenario_path = arg;
        }
    }
    if (!scenario_path || !dir || !*dir) {
        ps_cli_error(NULL, "simulate: %s (see poolsched simulate --help)",
                   !scenario_path ? "missing SCENARIO" : "missing --output DIR");
        return 2;
    }
    const char *shown = strcmp(scenario_path, "-") == 0 ? "<stdin>" : scenario_path;
    char *text = NULL;
    size_t len = 0;
    int code = read_input(scenario_path, &text, &len);
    if (code != 0)
        return code;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_scenario *sc = NULL;
    int rc = ps_scenario_parse(text, len, &sc, &err);
    free(text);
    if (rc != 0) {
        ps_cli_error(NULL, "%s: %s", shown, err.msg);
        return rc == PS_EINVAL ? 2 : 1;
    }
    struct ps_sim_stats s = {0};
    struct ps_sim_dir_options o = {.pools_period_ms = pools_period, .stats = &s};
    rc = ps_sim_write_dir(sc, shown, dir, &o, &err);
    ps_scenario_free(sc);
    if (rc != 0) {
        ps_cli_error(NULL, "%s", err.msg);
        return rc == PS_EINVAL ? 2 : 1;
    }
    fprintf(stderr,
            "simulated %lld ms: %lld operations (%lld completed, %lld failed), %lld jobs "
            "(%lld completed), outputs in %s\n",
            (long long)s.now_ms, (long long)s.operations, (long long)s.operations_completed,
            (long long)s.operations_failed, (long long)s.jobs, (long long)s.jobs_completed, dir);
    return 0;
}
