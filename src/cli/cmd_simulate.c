/* cmd_simulate.c — `poolsched simulate SCENARIO --output DIR [--pools-period MS]`: replays a
 * scenario in virtual time (shared/spec/formats.md section 3, docs/simulate.md) and writes
 * operations.csv, events.jsonl, pools.csv and summary.json into DIR, and report.html
 * (sim_report.h) from them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli_client.h"
#include "cli/commands.h"
#include "cli/sim_report.h"
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

static FILE *open_output(const char *dir, const char *name, char **path)
{
    size_t size = strlen(dir) + strlen(name) + 2;
    *path = malloc(size);
    if (!*path)
        return NULL;
    snprintf(*path, size, "%s/%s", dir, name);
    FILE *f = fopen(*path, "w");
    if (f)
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

static int close_output(FILE *f, const char *path)
{
    if (!f)
        return 0;
    int failed = ferror(f);
    if (fclose(f) != 0 || failed) {
        ps_cli_error(NULL, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
        return 1;
    }
    return 0;
}

/* Runs sc in chunks of 1/50 of its duration (when it has one), calling progress between. */
static int run_sim(struct ps_sim *sim, const struct ps_scenario *sc,
                   const struct ps_sim_dir_options *o, struct ps_error *err)
{
    if (o && o->progress && sc->duration_ms > 0) {
        for (int step = 1; step <= 50; step++) {
            int rc = ps_sim_run_until(sim, sc->duration_ms * step / 50, err);
            if (rc != 0)
                return rc;
            if (step < 50)
                o->progress(o->progress_ctx, step * 2);
            if (ps_sim_finished(sim))
                break;
        }
    }
    int rc = ps_sim_run(sim, err);
    if (rc == 0 && o && o->progress)
        o->progress(o->progress_ctx, 100);
    return rc;
}

int ps_sim_write_dir(const struct ps_scenario *sc, const char *shown, const char *dir,
                     const struct ps_sim_dir_options *o)
{
    int64_t pools_period = o ? o->pools_period_ms : 0;
    struct ps_error err;
    ps_error_init(&err);
    int rc, code;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        ps_cli_error(NULL, "%s: cannot create: %s", dir, strerror(errno));
        return 1;
    }
    char *paths[4] = {NULL, NULL, NULL, NULL};
    FILE *events = open_output(dir, "events.jsonl", &paths[0]);
    FILE *pools = open_output(dir, "pools.csv", &paths[1]);
    FILE *ops = NULL, *summary = NULL;
    struct ps_sim *sim = NULL;
    code = 0;
    if (!events || !pools) {
        ps_cli_error(NULL, "%s: cannot create: %s", !events ? (paths[0] ? paths[0] : dir) : paths[1],
                   strerror(errno));
        code = 1;
    }
    if (code == 0) {
        struct ps_sim_options options = {.events = events, .pools = pools,
                                         .pools_period_ms = pools_period};
        rc = ps_sim_new(sc, &options, &sim, &err);
        if (rc != 0) {
            ps_cli_error(NULL, "%s: %s", shown, err.msg);
            code = rc == PS_EINVAL ? 2 : 1;
            /* Bad input leaves no outputs behind. */
            fclose(events);
            fclose(pools);
            events = pools = NULL;
            remove(paths[0]);
            remove(paths[1]);
        }
    }
    if (code == 0 && (rc = run_sim(sim, sc, o, &err)) != 0) {
        ps_cli_error(NULL, "%s: %s", shown, err.msg);
        code = 1;
    }
    if (code == 0) {
        ops = open_output(dir, "operations.csv", &paths[2]);
        summary = open_output(dir, "summary.json", &paths[3]);
        if (!ops || !summary) {
            ps_cli_error(NULL, "%s: cannot create: %s", !ops ? (paths[2] ? paths[2] : dir) : paths[3],
                       strerror(errno));
            code = 1;
        }
    }
    if (code == 0 && (ps_sim_write_operations_csv(sim, ops, &err) != 0 ||
                      ps_sim_write_summary(sim, summary, &err) != 0)) {
        ps_cli_error(NULL, "%s: %s", dir, err.msg);
        code = 1;
    }
    FILE *files[4] = {events, pools, ops, summary};
    for (int i = 0; i < 4; i++)
        if (close_output(files[i], paths[i] ? paths[i] : dir) != 0 && code == 0)
            code = 1;
    for (int i = 0; i < 4; i++)
        free(paths[i]);
    if (code == 0 && ps_sim_write_report(dir, &err) != 0) {
        ps_cli_error(NULL, "%s", err.msg);
        code = 1;
    }
    if (code == 0 && !(o && o->quiet)) {
        struct ps_sim_stats s;
        ps_sim_get_stats(sim, &s);
        fprintf(stderr,
                "simulated %lld ms: %lld operations (%lld completed, %lld failed), %lld jobs "
                "(%lld completed), outputs in %s\n",
                (long long)s.now_ms, (long long)s.operations, (long long)s.operations_completed,
                (long long)s.operations_failed, (long long)s.jobs, (long long)s.jobs_completed, dir);
    }
    ps_sim_free(sim);
    return code;
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
    struct ps_sim_dir_options o = {.pools_period_ms = pools_period};
    code = ps_sim_write_dir(sc, shown, dir, &o);
    ps_scenario_free(sc);
    return code;
}
