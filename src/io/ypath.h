/* ypath.h — Cypress paths (YPath) as the API takes them, split into names.
 *
 * The paths poolsched serves (formats.md, section 4):
 *   //sys/pool_trees/<tree>/<pool>/<subpool>/@<attr>/<key>/<key>
 *   //sys/pool_trees/@default_tree           //sys/pool_trees/<tree>/@nodes_filter
 *   //sys/pools/<pool>/...                   (alias of the default tree: kept as written, the
 *                                             caller resolves it)
 *   //sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/<tree>/fair_share_info/
 *       pools/<pool>/<attribute>             and .../operations/<id>/<attribute>
 *   //sys/pool_trees/<tree>/<pool>/@         (all attributes of a node)
 * This module only parses; it knows nothing of trees or pools.
 *
 * Syntax (upstream yt/yt/core/ypath tokenizer, restricted to what a Cypress API path needs):
 *   path  := "//" [ names ] [ "/@" [ attrs ] ]    names := name { "/" name }
 *                                                 attrs := name { "/" name }
 *   A name is any bytes except the special characters \ / @ & * [ { unless escaped:
 *   "\" followed by one of them stands for it, "\xHH" for the byte HH. A '&' ending a node
 *   name (`//sys/pools/x&/@`, "do not follow the link", as `yt list -l` sends) is accepted and
 *   dropped: these paths hold no links. So `pool$user`,
 *   `integral-guarantees` and `V100 32` are plain names; `a\/b` is the name "a/b".
 * Refused, each with a message naming the path and the 1-based byte position:
 *   not starting with "//" (object ids #..., relative paths), empty names (`//a//b`, a trailing
 *   '/'), an unescaped special character inside a name (`&` elsewhere than ending a node name, `*`, ranges `[..]`
 *   and `{..}` of rich YPath, `@` not right after '/', a second "/@" in the attribute part),
 *   malformed escapes, names that are not valid UTF-8 or hold control characters (bytes
 *   0x00..0x1F and 0x7F, also when escaped), and paths longer than PS_YPATH_MAX_LEN bytes.
 */
#ifndef PS_IO_YPATH_H
#define PS_IO_YPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

/* Longer paths are refused. */
#define PS_YPATH_MAX_LEN 4096

struct ps_ypath {
    char **nodes;         /* node names after the root, unescaped, NUL-terminated */
    size_t node_count;    /* 0 for the root "//" itself */
    char **attrs;         /* after "/@": the attribute name, then keys inside its value */
    size_t attr_count;    /* 0 when the path has no "/@", or ends with "/@" */
    bool all_attrs;       /* the path ends with "/@": all attributes of the node */
    char *storage;        /* private: holds the names */
};

/* Empties p without allocating (ready for ps_ypath_parse or ps_ypath_release). */
void ps_ypath_init(struct ps_ypath *p);

/* Frees what p holds and empties it. */
void ps_ypath_release(struct ps_ypath *p);

/* Parses the NUL-terminated path into *out, which the caller has ps_ypath_init'ed (anything it
 * held is released first) and must ps_ypath_release. On error *out is left empty.
 * Errors: PS_EINVAL with a message like
 *     invalid path "//sys/pools//a": empty name at position 13
 * PS_ENOMEM. */
int ps_ypath_parse(const char *path, struct ps_ypath *out, struct ps_error *err);

/* Writes name escaped as one YPath name into *out (malloc'd; the caller frees it): special
 * characters get a backslash, everything else is kept, UTF-8 included.
 * Errors: PS_EINVAL (empty name, not valid UTF-8, a control character), PS_ENOMEM. */
int ps_ypath_escape(const char *name, char **out, struct ps_error *err);

/* Builds "//" + escaped nodes joined by '/' + ("/@" + escaped attrs joined by '/', or "/@" when
 * all_attrs and no attrs) into *out (malloc'd). all_attrs with attr_count > 0 is an error.
 * The result parses back with ps_ypath_parse to the same names.
 * Errors: PS_EINVAL (a name ps_ypath_escape refuses, a result longer than PS_YPATH_MAX_LEN),
 * PS_ENOMEM. */
int ps_ypath_build(const char *const *nodes, size_t node_count, const char *const *attrs,
                   size_t attr_count, bool all_attrs, char **out, struct ps_error *err);

/* ps_ypath_build of a parsed path: its canonical spelling. */
int ps_ypath_format(const struct ps_ypath *p, char **out, struct ps_error *err);

#endif
