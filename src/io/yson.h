/* yson.h — YSON text in and out, as jansson values; JSON accepted transparently.
 *
 * Users of poolsched type values the way YTsaurus users do:
 *     poolsched set //sys/pools/a/@integral_guarantees '{guarantee_type=burst; resource_flow={cpu=1000}}'
 * This module turns such text into a json_t (the value model of the whole service) and prints a
 * json_t back as YSON text for `--format yson`. Only the text form of YSON is read; binary YSON
 * (bytes 0x01..0x06 as markers) is refused as unexpected bytes.
 *
 * The YSON text grammar accepted (as upstream's lexer, yt/yt/core/yson):
 *   value    := map | list | string | number | %true | %false | #
 *   map      := '{' [ key '=' value { ';' key '=' value } [ ';' ] ] '}'     key is a string
 *   list     := '[' [ value { ';' value } [ ';' ] ] ']'
 *   string   := "..." with C escapes | unquoted
 *   unquoted := [A-Za-z_] [A-Za-z0-9_.%-]*                                    ("burst", "V100-32")
 *   number   := [+-]digits                     int64   ("42", "-7")
 *             | digits 'u'                     uint64  ("42u")
 *             | [+-]digits '.' [digits] [exp] | [+-]digits exp                 double ("1.5", "1000.", "1e10")
 *   whitespace: space, \t, \n, \r, \v, \f between tokens. No comments.
 * Quoted strings take raw bytes and the escapes \a \b \f \n \r \t \v \\ \" \' \?, \x with one or
 * two hex digits, octal \0..\377 with one to three digits, \uXXXX and \UXXXXXXXX (as UTF-8).
 *
 * Mapping to jansson and what is refused (each with a message naming line, column and why):
 *   map -> object (insertion order kept), list -> array, string -> string, int64 and uint64 ->
 *   integer, double -> real, %true/%false -> true/false, # (entity) -> null.
 *   - Unquoted `true`, `false`, `null` inside YSON are *strings*, as upstream; write %true.
 *   - %nan, %inf, %+inf, %-inf are refused: a json_t cannot hold them and no poolsched setting
 *     takes a non-finite number. So are doubles that overflow (1e999).
 *   - uint64 above INT64_MAX is refused (json_int_t is signed 64-bit).
 *   - Attributes `<a=1>value` are refused, not dropped: silently losing what a user wrote is
 *     worse than telling them. ps_value_parse_attributed reads them (for the YTsaurus face's
 *     parameters, which clients send with attributes).
 *   - Duplicate keys in a map are refused (upstream's tree builder refuses them too).
 *   - Strings must be valid UTF-8 without NUL bytes after unescaping (JSON output must stay
 *     valid, and the rest of the service uses C strings).
 *   - Nesting deeper than PS_YSON_MAX_DEPTH maps and lists is refused.
 *
 * Errors are PS_EINVAL with a message such as
 *     invalid YSON at line 1, column 12: unexpected '}', expected a value
 * (line and column are 1-based; the column counts bytes), or PS_ENOMEM.
 */
#ifndef PS_IO_YSON_H
#define PS_IO_YSON_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"

/* Maps and lists nested deeper than this are refused (for YSON and JSON input alike). */
#define PS_YSON_MAX_DEPTH 64

/* Parses len bytes of YSON text holding exactly one value (surrounding whitespace allowed) into
 * *out, a new reference the caller must json_decref. text need not be NUL-terminated and may
 * contain NUL bytes (they are an error outside quoted strings). On error *out is NULL.
 * Errors: PS_EINVAL (syntax, unsupported value, too deep; message names line and column),
 * PS_ENOMEM. */
int ps_yson_parse(const char *text, size_t len, json_t **out, struct ps_error *err);

/* Parses a value as a user types it: JSON or YSON text.
 * The rule, unambiguous and easy to state: if the whole text is one valid JSON value (RFC 8259,
 * duplicate keys refused), it is read as JSON; otherwise it is read as YSON.
 * The two differ only where a text is valid in both: `true`, `false` and `null` in JSON are a
 * boolean and null, in YSON strings; so `true` and `[true]` are booleans, while `{a=true}` holds
 * the string "true" (write %true). Numbers and quoted strings mean the same in both.
 * When neither parse succeeds, the YSON error is reported, except when YSON failed on a ':' or
 * ',' (JSON's punctuation) and the JSON parser got further into the text: then the user meant
 * JSON and its error is reported, as "invalid JSON at line L, column C: ..." (`{"a": 1,}`,
 * `[1, 2`); `{a=1, b=2}` and `{a: 1}` get the YSON error.
 * Depth limit and ownership as ps_yson_parse. Errors: PS_EINVAL, PS_ENOMEM. */
int ps_value_parse_text(const char *text, size_t len, json_t **out, struct ps_error *err);

/* As ps_value_parse_text, but YSON attributes before a value are read too, into the form
 * YTsaurus's JSON format gives them: <format=pretty>"yson" is
 * {"$attributes": {"format": "pretty"}, "$value": "yson"} (a value takes one set of attributes).
 * For the YTsaurus face's parameters (output_format, input_format), where clients send them. */
int ps_value_parse_attributed(const char *text, size_t len, json_t **out, struct ps_error *err);

/* Flags of ps_yson_print. */
enum ps_yson_flags {
    PS_YSON_COMPACT = 0,     /* one line: {"cpu"=1000;"memory"=5;} */
    PS_YSON_PRETTY = 1,      /* upstream's pretty layout: four-space indent, `"key" = value;` */
    PS_YSON_SORT_KEYS = 2,   /* map keys in byte order instead of insertion order */
};

/* Prints value as YSON text into *out (NUL-terminated, malloc'd, the caller frees it), in the
 * layout of upstream's text writer so that YTsaurus users see what they are used to:
 * strings and keys always quoted with C escapes (non-printable and non-ASCII bytes as \xHH or
 * octal; the output is plain ASCII), integers as digits, reals in the shortest form that reads
 * back to the same double and always with a '.' or an exponent (1000.0 prints as `1000.`),
 * booleans as %true/%false, null as #, and ';' after every item of a map or list.
 * The output parses back, with ps_yson_parse and with ps_value_parse_text, to an equal value
 * (reals to the same double). No trailing newline.
 * Errors: PS_EINVAL (value nested deeper than PS_YSON_MAX_DEPTH, or a real that is not finite),
 * PS_ENOMEM; *out is NULL then. */
int ps_yson_print(const json_t *value, unsigned flags, char **out, struct ps_error *err);

#endif
