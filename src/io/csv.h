/* csv.h — a strict reader of simple CSV text (a header line, then rows; no quoting).
 *
 * Made for trace files such as the Alibaba cluster traces: fields are separated by ',', lines
 * end in "\n" or "\r\n", blank lines are skipped, and a '"' anywhere is an error rather than a
 * guess. Lines must be valid UTF-8 (fields end up in JSON) and hold no NUL byte. Every row must have as many fields as the header. Errors name the source and the
 * 1-based line: `openb_node_list_all_node.csv:12: expected 5 fields, got 4`.
 */
#ifndef PS_IO_CSV_H
#define PS_IO_CSV_H

#include <stddef.h>

#include "core/error.h"

#define PS_CSV_MAX_FIELDS 64

struct ps_csv {
    const char *text;          /* borrowed: the whole input */
    size_t len, pos;
    const char *source;        /* borrowed: a name for messages (a file name) */
    long line;                 /* 1-based line of the current row (or of the header) */
    char *row;                 /* owned copy of the current line, split in place */
    size_t row_cap;
    char *header;              /* owned copy of the header line, split in place */
    const char *columns[PS_CSV_MAX_FIELDS];
    int column_count;
    const char *fields[PS_CSV_MAX_FIELDS];   /* the current row; valid until the next call */
};

/* Starts reading text (len bytes) and reads the header. Column names must be non-empty and
 * distinct. Errors: PS_EINVAL (no header, bad header), PS_ENOMEM. Release with
 * ps_csv_release also after an error. */
int ps_csv_init(struct ps_csv *csv, const char *text, size_t len, const char *source,
                struct ps_error *err);

void ps_csv_release(struct ps_csv *csv);

/* The index of the column named name, or -1. */
int ps_csv_column(const struct ps_csv *csv, const char *name);

/* Checks that every name of required (NULL-terminated) is a column:
 * `<source>: missing column "qos" in the header (columns: name,cpu_milli,...)`. */
int ps_csv_require(const struct ps_csv *csv, const char *const *required, struct ps_error *err);

/* Reads the next row into csv->fields (column_count fields). Returns 1 for a row, 0 at the
 * end, or a negative PS_E* code. */
int ps_csv_next(struct ps_csv *csv, struct ps_error *err);

#endif
