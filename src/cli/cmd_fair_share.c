/* cmd_fair_share.c — `poolsched fair-share FILE [--format json|table]`: one fair share update of
 * a snapshot (shared/spec/formats.md section 2), printed as JSON or as a table.
 *
 * The whole result is built in memory and written at once, so a failure never leaves partial
 * output; bad input gives exit code 2 and one line `error: <file>: <path>: <reason>`.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_client.h"
#include "cli/commands.h"
#include "core/fair_share.h"
#include "io/fs_output.h"
#include "io/snapshot.h"
#include "platform/file.h"

#define MAX_INPUT_BYTES ((size_t)1 << 30)

static const char usage_text[] =
    "usage: poolsched fair-share FILE [--format json|table]\n"
    "\n"
    "Computes one fair share update of the pool tree described by the snapshot FILE (JSON;\n"
    "'-' reads standard input) and prints every pool, including <Root>, and every operation.\n"
    "\n"
    "  --format json    (default) the result as JSON, keys as in shared/spec/formats.md\n"
    "                   section 2; the same input always gives byte-identical output\n"
    "  --format table   an aligned table of the pool tree: fair share and its strong,\n"
    "                   integral and weight-proportional parts, usage and demand, in percent\n"
    "                   of the cluster (largest component)\n"
    "  -h, --help       this text\n"
    "\n"
    "Input keys: total_resources or nodes, now, previous_update_time, tree, pools,\n"
    "operations. Resources: user_slots, cpu (cores, 2 decimals), gpu, memory (bytes),\n"
    "network; in limits maps an omitted key means unlimited. Times in milliseconds.\n"
    "In the output, RESOURCES maps leave out unlimited components the same way.\n"
    "\n"
    "Exit status: 0 success; 2 bad usage or bad input (one line 'error: <what>: <why>');\n"
    "1 any other failure.\n";

static int exit_code(int rc)
{
    return rc == PS_EINVAL ? 2 : 1;
}

static int load_file(const char *path, char **text, size_t *len)
{
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_file_read_max(path, MAX_INPUT_BYTES, text, len, &err);
    if (rc != 0)
        ps_cli_error(NULL, "%s", err.msg);
    return rc == 0 ? 0 : rc == PS_ENOMEM ? 1 : 2;
}

/* Runs the update on snap and renders the result into *out (a malloc'ed buffer). */
static int compute(struct ps_snapshot *snap, bool table, char **out, size_t *out_len,
                   struct ps_error *err)
{
    struct ps_fs_update *update = ps_fs_update_new();
    if (!update)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_fs_update_run(update, snap->elems, snap->count, snap->pools, snap->pool_count, &snap->options, &snap->input,
                              err);
    const char **alerts = NULL;
    int engine_alerts = rc ? 0 : ps_fs_update_alert_count(update);
    int alert_count = engine_alerts + snap->note_count;
    if (!rc && alert_count > 0 && !(alerts = malloc((size_t)alert_count * sizeof *alerts)))
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (!rc) {
        for (int i = 0; i < engine_alerts; i++)
            alerts[i] = ps_fs_update_alert(update, i);
        for (int i = 0; i < snap->note_count; i++)
            alerts[engine_alerts + i] = snap->notes[i];
        FILE *mem = open_memstream(out, out_len);
        if (!mem) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        } else {
            rc = table ? ps_fs_print_table(mem, snap, alerts, alert_count, err)
                       : ps_fs_print_json(mem, snap, alerts, alert_count, err);
            if (fclose(mem) != 0 && !rc)
                rc = ps_error_set(err, PS_ENOMEM, "out of memory rendering the result");
            if (rc) {
                free(*out);
                *out = NULL;
            }
        }
    }
    free(alerts);
    ps_fs_update_free(update);
    return rc;
}

int ps_cmd_fair_share(int argc, char **argv)
{
    const char *path = NULL;
    bool table = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *format = NULL;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(arg, "--format") == 0) {
            if (i + 1 >= argc) {
                ps_cli_error(NULL, "fair-share: --format needs a value: json or table");
                return 2;
            }
            format = argv[++i];
        } else if (strncmp(arg, "--format=", 9) == 0) {
            format = arg + 9;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            ps_cli_error(NULL, "fair-share: unknown option '%s' (see poolsched fair-share --help)", arg);
            return 2;
        } else if (path) {
            ps_cli_error(NULL, "fair-share: one FILE expected, got '%s' and '%s'", path, arg);
            return 2;
        } else {
            path = arg;
        }
        if (format) {
            if (strcmp(format, "json") == 0) {
                table = false;
            } else if (strcmp(format, "table") == 0) {
                table = true;
            } else {
                ps_cli_error(NULL, "fair-share: --format must be json or table, got '%s'", format);
                return 2;
            }
        }
    }
    if (!path) {
        ps_cli_error(NULL, "fair-share: missing FILE (see poolsched fair-share --help)");
        return 2;
    }
    const char *shown = strcmp(path, "-") == 0 ? "<stdin>" : path;

    char *text = NULL;
    size_t len = 0;
    int code = load_file(path, &text, &len);
    if (code)
        return code;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_snapshot *snap = NULL;
    int rc = ps_snapshot_parse(text, len, &snap, &err);
    free(text);
    if (rc) {
        ps_cli_error(NULL, "%s: %s", shown, err.msg);
        return exit_code(rc);
    }
    char *out = NULL;
    size_t out_len = 0;
    rc = compute(snap, table, &out, &out_len, &err);
    ps_snapshot_free(snap);
    if (rc) {
        ps_cli_error(NULL, "%s: %s", shown, err.msg);
        return exit_code(rc);
    }
    size_t written = fwrite(out, 1, out_len, stdout);
    free(out);
    if (written != out_len || fflush(stdout) != 0) {
        ps_cli_error(NULL, "writing the result: %s", strerror(errno));
        return 1;
    }
    return 0;
}
