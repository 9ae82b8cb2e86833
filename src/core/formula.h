/* formula.h — boolean tag formulas (nodes_filter, scheduling_tag_filter).
 *
 * Grammar (YTsaurus boolean_formula): variables are node tags; operators `!` (highest), `&`,
 * `|`; parentheses; literals `%true` and `%false`; whitespace between tokens. A variable is a
 * run of ASCII letters, digits and `-` `/` `.` `:` `_` that starts with a letter or `_` (as
 * upstream: so not with a digit, `/`, `-`, `.` or `:`), and is not the keyword `in`
 * (case-sensitive). The empty formula is true for every node.
 * Parse once, evaluate many times.
 */
#ifndef PS_CORE_FORMULA_H
#define PS_CORE_FORMULA_H

#include <stdbool.h>

#include "core/error.h"

struct ps_formula;

/* Parentheses may nest at most this deep (a parse error beyond), which bounds the fixed-size
 * stack ps_formula_eval uses. */
#define PS_FORMULA_MAX_DEPTH 64

/* Parses text. On success *out owns a new formula (free with ps_formula_free). On a syntax
 * error returns PS_EINVAL and err says the formula, the 0-based character position and what
 * was expected, e.g. `invalid formula "a&(": unexpected end at position 3, expected a tag,
 * '!', '(' or a literal`. text must not be NULL ("" is the empty formula). */
int ps_formula_parse(const char *text, struct ps_formula **out, struct ps_error *err);

void ps_formula_free(struct ps_formula *formula);   /* NULL is a no-op */

/* True iff the node with these tags satisfies the formula. NULL formula is true. */
bool ps_formula_eval(const struct ps_formula *formula, const char *const *tags, int tag_count);

/* The text the formula was parsed from; valid while the formula lives. */
const char *ps_formula_text(const struct ps_formula *formula);

/* True for the empty formula (satisfied by every node). */
bool ps_formula_is_empty(const struct ps_formula *formula);

/* The number of tokens of the parsed formula (tags, literals and operators, not parentheses),
 * as YTsaurus's TBooleanFormula::Size(); 0 for the empty formula. scheduling_tag_filter allows at
 * most 100 (MaxSchedulingTagRuleCount). */
int ps_formula_size(const struct ps_formula *formula);

/* YTsaurus's limit on a scheduling_tag_filter: at most this many tokens (MaxSchedulingTagRuleCount). */
#define PS_FORMULA_MAX_FILTER_TOKENS 100

/* Parses text as a scheduling_tag_filter: a formula of at most PS_FORMULA_MAX_FILTER_TOKENS
 * tokens. key names the setting in messages ("scheduling_tag_filter: invalid formula ...").
 * On success *out (when out is not NULL) owns the formula; with out NULL the text is only
 * validated. On error *out is NULL. */
int ps_formula_parse_filter(const char *key, const char *text, struct ps_formula **out,
                            struct ps_error *err);

/* True iff name is a valid variable (tag) name by the grammar above. */
bool ps_formula_valid_variable(const char *name);

#endif
