/* cli_args.h — argument parsing shared by the client commands (get, set, vanilla, ...).
 *
 * One small, table-driven parser so that every command treats options alike:
 *   --name VALUE, --name=VALUE, a short alias (-i) for flags, `--` ends the options, and any
 *   argument not starting with '-' (or exactly "-", or a negative number such as -1) is
 *   positional. Options may appear anywhere after the command name, as with `yt`.
 * Value parsers for sizes (512M, 2G), cores (1.5) and counts live here too, so the messages are
 * the same everywhere: `--memory: "2X" is not a size (use bytes or K/M/G/T)`.
 *
 * Every fallible function returns 0 or PS_EINVAL and fills err with the message that follows
 * "error: <command>: " on the user's screen; the caller adds that prefix and exits 2.
 */
#ifndef PS_CLI_ARGS_H
#define PS_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* How many options and positionals one command line may hold; more is refused. */
#define PS_CLI_MAX_ITEMS 128

struct ps_cli_opt {
    const char *name;       /* "--pool" */
    char short_name;        /* 'i' for -i, or 0 */
    bool takes_value;
    bool repeatable;        /* otherwise a second occurrence is an error */
};

struct ps_cli_item {
    const struct ps_cli_opt *opt;   /* NULL for a positional argument */
    const char *value;              /* borrowed from argv; NULL for a flag */
};

struct ps_cli_args {
    struct ps_cli_item items[PS_CLI_MAX_ITEMS];   /* in command-line order */
    size_t count;
    bool help;                                    /* -h or --help was given */
};

/* Parses argv[0..argc) (the arguments after the command name) against opts (terminated by an
 * entry whose name is NULL) into *out. Values are borrowed from argv.
 * Errors (PS_EINVAL): unknown option "unknown option '--poool'", a missing value
 * "--pool needs a value", a value given to a flag, a repeated non-repeatable option,
 * too many arguments. */
int ps_cli_args_parse(int argc, char **argv, const struct ps_cli_opt *opts,
                      struct ps_cli_args *out, struct ps_error *err);

/* The value of option name (its last occurrence), or NULL when it was not given. For a flag,
 * "" when given. */
const char *ps_cli_args_get(const struct ps_cli_args *a, const char *name);

/* Whether option name was given. */
bool ps_cli_args_has(const struct ps_cli_args *a, const char *name);

/* The number of positional arguments, and the i-th (0-based) or NULL when there are fewer. */
size_t ps_cli_args_positional_count(const struct ps_cli_args *a);
const char *ps_cli_args_positional(const struct ps_cli_args *a, size_t i);

/* A size in bytes as users type it: digits with an optional binary suffix K, M, G or T (either
 * case, optionally followed by "B" or "iB": 2G, 2GB, 2GiB are 2147483648), e.g. 512M, 2G,
 * 1073741824. Values above 2^62 bytes are refused. `what` names the option in the message.
 * Errors: PS_EINVAL `<what>: "2X" is not a size (use bytes or K/M/G/T)`. */
int ps_cli_parse_size(const char *text, const char *what, int64_t *out_bytes,
                      struct ps_error *err);

/* CPU cores with at most two decimals, greater than 0 and at most 1000000: "1", "1.5", "0.25".
 * *out_hundredths receives the exact value in hundredths of a core (150 for "1.5").
 * Errors: PS_EINVAL `<what>: "1.234" is not a number of cores (at most 2 decimals, > 0)`. */
int ps_cli_parse_cpu(const char *text, const char *what, int64_t *out_hundredths,
                     struct ps_error *err);

/* A decimal integer in [min, max]. Errors: PS_EINVAL `<what>: must be an integer from min to
 * max, got "x"`. */
int ps_cli_parse_int(const char *text, const char *what, int64_t min, int64_t max,
                     int64_t *out, struct ps_error *err);

/* A finite decimal number; min_exclusive says whether min itself is refused.
 * Errors: PS_EINVAL `<what>: must be <describe>, got "x"`. */
int ps_cli_parse_number(const char *text, const char *what, double min, bool min_exclusive,
                        double max, const char *describe, double *out, struct ps_error *err);

#endif
