#include "io/csv.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies the next line (without its end) into *buf; false at the end of the text. */
static int next_line(struct ps_csv *csv, char **buf, size_t *cap, size_t *out_len,
                     struct ps_error *err)
{
    if (csv->pos >= csv->len)
        return 0;
    const char *start = csv->text + csv->pos;
    const char *nl = memchr(start, '\n', csv->len - csv->pos);
    size_t n = nl ? (size_t)(nl - start) : csv->len - csv->pos;
    csv->pos += n + (nl ? 1 : 0);
    csv->line++;
    if (n > 0 && start[n - 1] == '\r')
        n--;
    if (n + 1 > *cap) {
        char *grown = realloc(*buf, n + 1);
        if (!grown)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        *buf = grown;
        *cap = n + 1;
    }
    memcpy(*buf, start, n);
    (*buf)[n] = '\0';
    *out_len = n;
    return 1;
}

/* True iff s[0..n) is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF), as JSON output of the fields requires. */
static bool valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len;
        unsigned min, cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, min = 0x80, cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, min = 0x800, cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, min = 0x10000, cp = c & 0x07;
        } else {
            return false;
        }
        if (i + len > n)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

/* Splits line in place at ','; returns the field count or a negative code. */
static int split(struct ps_csv *csv, char *line, size_t n, const char **fields,
                 struct ps_error *err)
{
    if (memchr(line, '\0', n))
        return ps_error_set(err, PS_EINVAL, "%s:%ld: a NUL byte in the line", csv->source,
                            csv->line);
    if (!valid_utf8((const unsigned char *)line, n))
        return ps_error_set(err, PS_EINVAL, "%s:%ld: the line is not valid UTF-8", csv->source,
                            csv->line);
    if (memchr(line, '"', n))
        return ps_error_set(err, PS_EINVAL,
                            "%s:%ld: quoted fields are not supported (a '\"' in the line)",
                            csv->source, csv->line);
    int count = 0;
    char *p = line;
    for (;;) {
        if (count == PS_CSV_MAX_FIELDS)
            return ps_error_set(err, PS_EINVAL, "%s:%ld: more than %d fields", csv->source,
                                csv->line, PS_CSV_MAX_FIELDS);
        fields[count++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    return count;
}

int ps_csv_init(struct ps_csv *csv, const char *text, size_t len, const char *source,
                struct ps_error *err)
{
    memset(csv, 0, sizeof *csv);
    csv->text = text;
    csv->len = len;
    csv->source = source;
    size_t cap = 0, n = 0;
    int rc;
    do {
        rc = next_line(csv, &csv->header, &cap, &n, err);
    } while (rc == 1 && n == 0);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return ps_error_set(err, PS_EINVAL, "%s: empty file, expected a header line", source);
    rc = split(csv, csv->header, n, csv->columns, err);
    if (rc < 0)
        return rc;
    csv->column_count = rc;
    for (int i = 0; i < csv->column_count; i++) {
        if (csv->columns[i][0] == '\0')
            return ps_error_set(err, PS_EINVAL, "%s:%ld: column %d of the header has no name",
                                source, csv->line, i + 1);
        for (int j = 0; j < i; j++)
            if (strcmp(csv->columns[i], csv->columns[j]) == 0)
                return ps_error_set(err, PS_EINVAL, "%s:%ld: column \"%s\" appears twice",
                                    source, csv->line, csv->columns[i]);
    }
    return 0;
}

void ps_csv_release(struct ps_csv *csv)
{
    free(csv->row);
    free(csv->header);
    csv->row = csv->header = NULL;
}

int ps_csv_column(const struct ps_csv *csv, const char *name)
{
    for (int i = 0; i < csv->column_count; i++)
        if (strcmp(csv->columns[i], name) == 0)
            return i;
    return -1;
}

int ps_csv_require(const struct ps_csv *csv, const char *const *required, struct ps_error *err)
{
    for (const char *const *r = required; *r; r++) {
        if (ps_csv_column(csv, *r) >= 0)
            continue;
        char list[PS_ERROR_MSG_MAX] = "";
        size_t used = 0;
        for (int i = 0; i < csv->column_count && used < sizeof list; i++) {
            int k = snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", csv->columns[i]);
            if (k < 0)
                break;
            used += (size_t)k;
        }
        return ps_error_set(err, PS_EINVAL, "%s: missing column \"%s\" in the header (columns: %s)",
                            csv->source, *r, list);
    }
    return 0;
}

int ps_csv_next(struct ps_csv *csv, struct ps_error *err)
{
    size_t n = 0;
    int rc;
    do {
        rc = next_line(csv, &csv->row, &csv->row_cap, &n, err);
    } while (rc == 1 && n == 0);
    if (rc <= 0)
        return rc;
    rc = split(csv, csv->row, n, csv->fields, err);
    if (rc < 0)
        return rc;
    if (rc != csv->column_count)
        return ps_error_set(err, PS_EINVAL, "%s:%ld: expected %d fields as in the header, got %d",
                            csv->source, csv->line, csv->column_count, rc);
    return 1;
}
