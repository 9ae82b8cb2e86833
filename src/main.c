/* poolsched — one binary, many subcommands (src/cli/commands.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"

#define PS_VERSION "0.1.0"

static void usage(FILE *out)
{
    fprintf(out, "usage: poolsched COMMAND [ARGS...]\n\ncommands:\n");
    for (const struct ps_command *c = ps_commands; c->name; c++)
        fprintf(out, "  %-20s %s\n", c->name, c->summary);
    fprintf(out, "\nglobal options of the client commands may also stand before the command:\n"
                 "  --proxy URL, --token TOKEN, --data-dir DIR, --format json|yson\n"
                 "\n`poolsched COMMAND --help` describes a command.\n");
}

/* Options that users of `yt` type before the command (`poolsched --proxy H list-operations`);
 * each takes a value, as `--proxy H` or `--proxy=H`. They are moved behind the command, where
 * every client command parses them (and a command that has no such option refuses it). */
static const char *const global_options[] = {"--proxy", "--token", "--data-dir", "--format",
                                             NULL};

static int global_option_length(int argc, char **argv, int i)
{
    for (const char *const *g = global_options; *g; g++) {
        size_t n = strlen(*g);
        if (strncmp(argv[i], *g, n) != 0)
            continue;
        if (argv[i][n] == '=')
            return 1;
        if (argv[i][n] == '\0')
            return i + 1 < argc ? 2 : -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int lead = 1;
    while (lead < argc) {
        int len = global_option_length(argc, argv, lead);
        if (len < 0) {
            fprintf(stderr, "error: %s: needs a value\n", argv[lead]);
            return 2;
        }
        if (len == 0)
            break;
        lead += len;
    }
    if (lead > 1 && lead < argc) {
        /* argv[0], the command, its own arguments, then the global options */
        char **moved = malloc((size_t)(argc + 1) * sizeof *moved);
        if (!moved) {
            fprintf(stderr, "error: out of memory\n");
            return 1;
        }
        int k = 0;
        moved[k++] = argv[0];
        for (int i = lead; i < argc; i++)
            moved[k++] = argv[i];
        for (int i = 1; i < lead; i++)
            moved[k++] = argv[i];
        moved[k] = NULL;
        argv = moved;   /* lives until exit */
    } else if (lead > 1) {
        fprintf(stderr, "error: a command is needed after the global options (see poolsched --help)\n");
        return 2;
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("poolsched %s\n", PS_VERSION);
        return 0;
    }
    for (const struct ps_command *c = ps_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "error: unknown command '%s' (see poolsched --help)\n", name);
    return 2;
}
