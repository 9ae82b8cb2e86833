/* poolsched — one binary, many subcommands (src/cli/commands.h). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

#define PS_VERSION "0.1.0"

static void usage(FILE *out)
{
    fprintf(out, "usage: poolsched COMMAND [ARGS...]\n\ncommands:\n");
    for (const struct ps_command *c = ps_commands; c->name; c++)
        fprintf(out, "  %-20s %s\n", c->name, c->summary);
    fprintf(out, "\n`poolsched COMMAND --help` describes a command.\n");
}

int main(int argc, char **argv)
{
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
