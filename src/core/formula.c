/* formula.c — boolean tag formulas, parsed once into postfix code over interned tags.
 *
 * Parsing is one left-to-right pass (shunting-yard) with no recursion, so neither a long
 * formula nor a deep one can overflow the C stack. Evaluation runs the postfix code on a small
 * fixed-size stack of booleans; its size is bounded by limiting how deeply parentheses nest
 * (PS_FORMULA_MAX_DEPTH), which is checked at parse time with an error naming the position.
 *
 * The accepted language is YTsaurus's boolean formula (yt/yt/core/misc/arithmetic_formula.cpp
 * in its boolean context): a tag starts with an ASCII letter or '_' and continues with letters,
 * digits and "_/-.:"; `in` is a keyword, never a tag; `%true`/`%false` are literals.
 */
#include "core/formula.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Postfix instructions: the opcode in the low 3 bits, a tag index above them. */
enum { OP_TAG = 0, OP_TRUE = 1, OP_FALSE = 2, OP_NOT = 3, OP_AND = 4, OP_OR = 5 };
#define OP_BITS 3
#define OP_MASK 7u

/* Worst-case operand stack of the postfix code: per nesting level at most one pending operand
 * of '|' and one of '&', plus the operand being built. */
#define EVAL_STACK_MAX (2 * (PS_FORMULA_MAX_DEPTH + 1) + 2)

struct ps_formula {
    char *text;
    uint32_t *code;
    int code_len;
    char **tags;        /* interned tag names, in order of first appearance */
    size_t *tag_len;
    int tag_count;
};

/* ---- character classes (ASCII only, independent of the locale) ------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_tag_start(char c)
{
    return is_alpha(c) || c == '_';
}

static bool is_tag_char(char c)
{
    return is_tag_start(c) || is_digit(c) || c == '/' || c == '-' || c == '.' || c == ':';
}

bool ps_formula_valid_variable(const char *name)
{
    if (!name || !is_tag_start(name[0]))
        return false;
    for (const char *p = name + 1; *p; p++)
        if (!is_tag_char(*p))
            return false;
    return strcmp(name, "in") != 0;
}

/* ---- error messages --------------------------------------------------------------------- */

/* Appends s[0..len) to buf as the inside of a JSON-style string literal (quotes, backslashes and
 * control or non-ASCII bytes escaped), so an error message always stays on one line. */
static void append_escaped(char *buf, size_t size, size_t *used, const char *s, size_t len)
{
    for (size_t i = 0; i < len && *used + 1 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        char tmp[8];
        if (c == '"' || c == '\\')
            snprintf(tmp, sizeof tmp, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            snprintf(tmp, sizeof tmp, "\\x%02x", c);
        else
            snprintf(tmp, sizeof tmp, "%c", c);
        size_t n = strlen(tmp);
        if (*used + n >= size)
            break;
        memcpy(buf + *used, tmp, n);
        *used += n;
    }
    buf[*used] = '\0';
}

static void append_raw(char *buf, size_t size, size_t *used, char c)
{
    if (*used + 1 < size)
        buf[(*used)++] = c;
    buf[*used] = '\0';
}

#define SHOWN_MAX 80   /* characters of a long formula shown around the error position */

/* The formula as shown in messages: quoted, escaped, and cut to a window around pos. */
static void quote_formula(char *buf, size_t size, const char *text, size_t len, size_t pos)
{
    size_t used = 0, from = 0, to = len;
    if (len > SHOWN_MAX) {
        from = pos > SHOWN_MAX / 2 ? pos - SHOWN_MAX / 2 : 0;
        to = from + SHOWN_MAX < len ? from + SHOWN_MAX : len;
    }
    buf[0] = '\0';
    if (from > 0)
        append_escaped(buf, size, &used, "...", 3);
    append_raw(buf, size, &used, '"');
    append_escaped(buf, size, &used, text + from, to - from);
    append_raw(buf, size, &used, '"');
    if (to < len)
        append_escaped(buf, size, &used, "...", 3);
}

/* A character as shown in messages: 'x', escaped when not printable. */
static void describe_char(char *buf, size_t size, char c)
{
    size_t used = 0;
    buf[0] = '\0';
    append_raw(buf, size, &used, '\'');
    append_escaped(buf, size, &used, &c, 1);
    append_raw(buf, size, &used, '\'');
}

static const char expect_operand_msg[] = "expected a tag, '!', '(' or a literal";
static const char expect_operator_msg[] = "expected '&', '|', ')' or the end";

static int syntax_error(struct ps_error *err, const char *text, size_t len, size_t pos,
                        const char *what, const char *expected)
{
    char shown[4 * SHOWN_MAX + 16];
    quote_formula(shown, sizeof shown, text, len, pos);
    return ps_error_set(err, PS_EINVAL, "invalid formula %s: %s at position %zu%s%s", shown, what,
                        pos, expected ? ", " : "", expected ? expected : "");
}

/* ---- parser ----------------------------------------------------------------------------- */

/* Operator stack entries: an opcode or a left parenthesis, with its position for messages. */
enum { STACK_LPAREN = 8 };

struct op_entry {
    int op;
    size_t pos;
};

struct parser {
    const char *text;
    size_t len;
    struct ps_formula *f;
    int code_cap;
    struct op_entry *ops;
    int op_count, op_cap;
    int depth;            /* current parenthesis nesting */
    int stack, max_stack; /* operand stack of the code emitted so far */
    /* tag interning: open addressing over indices into f->tags, -1 empty */
    int *slots;
    int slot_cap;
    int tag_cap;
};

static int precedence(int op)
{
    switch (op) {
    case OP_NOT: return 3;
    case OP_AND: return 2;
    case OP_OR: return 1;
    default: return 0;   /* STACK_LPAREN stops every pop */
    }
}

static int emit(struct parser *p, uint32_t insn, struct ps_error *err)
{
    struct ps_formula *f = p->f;
    if (f->code_len == p->code_cap) {
        int cap = p->code_cap ? 2 * p->code_cap : 16;
        uint32_t *code = realloc(f->code, (size_t)cap * sizeof *code);
        if (!code)
            return ps_error_set(err, PS_ENOMEM, "out of memory parsing a formula");
        f->code = code;
        p->code_cap = cap;
    }
    f->code[f->code_len++] = insn;
    int op = (int)(insn & OP_MASK);
    if (op == OP_TAG || op == OP_TRUE || op == OP_FALSE)
        p->stack++;
    else if (op == OP_AND || op == OP_OR)
        p->stack--;
    if (p->stack > p->max_stack)
        p->max_stack = p->stack;
    return 0;
}

static int push_op(struct parser *p, int op, size_t pos, struct ps_error *err)
{
    if (p->op_count == p->op_cap) {
        int cap = p->op_cap ? 2 * p->op_cap : 16;
        struct op_entry *ops = realloc(p->ops, (size_t)cap * sizeof *ops);
        if (!ops)
            return ps_error_set(err, PS_ENOMEM, "out of memory parsing a formula");
        p->ops = ops;
        p->op_cap = cap;
    }
    p->ops[p->op_count].op = op;
    p->ops[p->op_count].pos = pos;
    p->op_count++;
    return 0;
}

/* Pops operators of precedence >= min_prec into the code (stops at a parenthesis). */
static int pop_ops(struct parser *p, int min_prec, struct ps_error *err)
{
    while (p->op_count > 0) {
        int op = p->ops[p->op_count - 1].op;
        if (op == STACK_LPAREN || precedence(op) < min_prec)
            break;
        p->op_count--;
        int rc = emit(p, (uint32_t)op, err);
        if (rc)
            return rc;
    }
    return 0;
}

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static int grow_slots(struct parser *p, struct ps_error *err)
{
    int cap = p->slot_cap ? 2 * p->slot_cap : 16;
    int *slots = malloc((size_t)cap * sizeof *slots);
    if (!slots)
        return ps_error_set(err, PS_ENOMEM, "out of memory parsing a formula");
    for (int i = 0; i < cap; i++)
        slots[i] = -1;
    for (int t = 0; t < p->f->tag_count; t++) {
        uint32_t h = hash_bytes(p->f->tags[t], p->f->tag_len[t]) & (uint32_t)(cap - 1);
        while (slots[h] >= 0)
            h = (h + 1) & (uint32_t)(cap - 1);
        slots[h] = t;
    }
    free(p->slots);
    p->slots = slots;
    p->slot_cap = cap;
    return 0;
}

/* The index of tag s[0..n), adding it when new. */
static int intern_tag(struct parser *p, const char *s, size_t n, int *index, struct ps_error *err)
{
    struct ps_formula *f = p->f;
    if (2 * (f->tag_count + 1) > p->slot_cap) {
        int rc = grow_slots(p, err);
        if (rc)
            return rc;
    }
    uint32_t mask = (uint32_t)(p->slot_cap - 1);
    uint32_t h = hash_bytes(s, n) & mask;
    for (; p->slots[h] >= 0; h = (h + 1) & mask) {
        int t = p->slots[h];
        if (f->tag_len[t] == n && memcmp(f->tags[t], s, n) == 0) {
            *index = t;
            return 0;
        }
    }
    if (f->tag_count == p->tag_cap) {
        int cap = p->tag_cap ? 2 * p->tag_cap : 8;
        char **tags = realloc(f->tags, (size_t)cap * sizeof *tags);
        if (!tags)
            return ps_error_set(err, PS_ENOMEM, "out of memory parsing a formula");
        f->tags = tags;
        size_t *lens = realloc(f->tag_len, (size_t)cap * sizeof *lens);
        if (!lens)
            return ps_error_set(err, PS_ENOMEM, "out of memory parsing a formula");
        f->tag_len = lens;
        p->tag_cap = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return ps_error_set(err, PS_ENOMEM, "out of memory parsing a formula");
    memcpy(copy, s, n);
    copy[n] = '\0';
    f->tags[f->tag_count] = copy;
    f->tag_len[f->tag_count] = n;
    p->slots[h] = f->tag_count;
    *index = f->tag_count++;
    return 0;
}

/* Reads an operand or operator at pos (not whitespace, not the end); advances *pos. */
static int parse_token(struct parser *p, size_t *pos, bool *expect_operand, struct ps_error *err)
{
    const char *text = p->text;
    size_t len = p->len, at = *pos;
    char c = text[at];
    char what[16];
    int rc;

    if (c == '(') {
        if (!*expect_operand)
            return syntax_error(err, text, len, at, "unexpected '('", expect_operator_msg);
        if (p->depth >= PS_FORMULA_MAX_DEPTH) {
            char msg[96];
            snprintf(msg, sizeof msg, "parentheses nested deeper than %d", PS_FORMULA_MAX_DEPTH);
            return syntax_error(err, text, len, at, msg, NULL);
        }
        p->depth++;
        *pos = at + 1;
        return push_op(p, STACK_LPAREN, at, err);
    }
    if (c == ')') {
        if (*expect_operand)
            return syntax_error(err, text, len, at, "unexpected ')'", expect_operand_msg);
        if ((rc = pop_ops(p, 1, err)))
            return rc;
        if (p->op_count == 0)
            return syntax_error(err, text, len, at, "unmatched ')'", NULL);
        p->op_count--;   /* the matching '(' */
        p->depth--;
        *pos = at + 1;
        return 0;
    }
    if (c == '!') {
        if (!*expect_operand)
            return syntax_error(err, text, len, at, "unexpected '!'", expect_operator_msg);
        *pos = at + 1;
        return push_op(p, OP_NOT, at, err);
    }
    if (c == '&' || c == '|') {
        int op = c == '&' ? OP_AND : OP_OR;
        if (*expect_operand) {
            snprintf(what, sizeof what, "unexpected '%c'", c);
            return syntax_error(err, text, len, at, what, expect_operand_msg);
        }
        if ((rc = pop_ops(p, precedence(op), err)))
            return rc;
        *expect_operand = true;
        *pos = at + 1;
        return push_op(p, op, at, err);
    }
    if (c == '%' && *expect_operand) {
        size_t end = at + 1;
        while (end < len && is_alpha(text[end]))
            end++;
        size_t n = end - at - 1;
        uint32_t op;
        if (n == 4 && memcmp(text + at + 1, "true", 4) == 0)
            op = OP_TRUE;
        else if (n == 5 && memcmp(text + at + 1, "false", 5) == 0)
            op = OP_FALSE;
        else
            return syntax_error(err, text, len, at, "unknown literal",
                                "expected %true or %false");
        *expect_operand = false;
        *pos = end;
        return emit(p, op, err);
    }
    if (is_tag_start(c)) {
        size_t end = at + 1;
        while (end < len && is_tag_char(text[end]))
            end++;
        size_t n = end - at;
        if (!*expect_operand)
            return syntax_error(err, text, len, at, "unexpected tag", expect_operator_msg);
        if (n == 2 && memcmp(text + at, "in", 2) == 0)
            return syntax_error(err, text, len, at, "\"in\" is a keyword, not a tag",
                                expect_operand_msg);
        int index = 0;
        if ((rc = intern_tag(p, text + at, n, &index, err)))
            return rc;
        *expect_operand = false;
        *pos = end;
        return emit(p, OP_TAG | ((uint32_t)index << OP_BITS), err);
    }
    describe_char(what, sizeof what, c);
    char msg[128];
    if (*expect_operand && (is_digit(c) || c == '/' || c == '-' || c == '.' || c == ':')) {
        snprintf(msg, sizeof msg, "unexpected %s (a tag must start with a letter or '_')", what);
        return syntax_error(err, text, len, at, msg, expect_operand_msg);
    }
    snprintf(msg, sizeof msg, "unexpected character %s", what);
    return syntax_error(err, text, len, at, msg,
                        *expect_operand ? expect_operand_msg : expect_operator_msg);
}

static int parse(struct parser *p, struct ps_error *err)
{
    bool expect_operand = true, any_token = false;
    size_t pos = 0;
    int rc;
    for (;;) {
        while (pos < p->len && is_space(p->text[pos]))
            pos++;
        if (pos == p->len)
            break;
        if (p->text[pos] == '\0')
            return syntax_error(err, p->text, p->len, pos, "unexpected NUL byte", NULL);
        any_token = true;
        if ((rc = parse_token(p, &pos, &expect_operand, err)))
            return rc;
    }
    if (!any_token)
        return 0;   /* the empty formula: no code, always true */
    if (expect_operand)
        return syntax_error(err, p->text, p->len, p->len, "unexpected end", expect_operand_msg);
    if ((rc = pop_ops(p, 1, err)))
        return rc;
    if (p->op_count > 0)   /* only '(' can be left: operators were all popped */
        return syntax_error(err, p->text, p->len, p->ops[p->op_count - 1].pos, "unmatched '('",
                            NULL);
    /* The nesting bound implies the stack bound; a failure here is a bug in this file. */
    assert(p->max_stack <= EVAL_STACK_MAX);
    assert(p->stack == 1);
    return 0;
}

int ps_formula_parse(const char *text, struct ps_formula **out, struct ps_error *err)
{
    *out = NULL;
    struct ps_formula *f = calloc(1, sizeof *f);
    if (!f)
        return ps_error_set(err, PS_ENOMEM, "out of memory parsing a formula");
    size_t len = strlen(text);
    f->text = malloc(len + 1);
    if (!f->text) {
        free(f);
        return ps_error_set(err, PS_ENOMEM, "out of memory parsing a formula");
    }
    memcpy(f->text, text, len + 1);

    struct parser p = {.text = f->text, .len = len, .f = f};
    int rc = parse(&p, err);
    free(p.ops);
    free(p.slots);
    if (rc) {
        ps_formula_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

void ps_formula_free(struct ps_formula *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->tag_count; i++)
        free(f->tags[i]);
    free(f->tags);
    free(f->tag_len);
    free(f->code);
    free(f->text);
    free(f);
}

/* ---- evaluation ------------------------------------------------------------------------- */

static bool has_tag(const struct ps_formula *f, int index, const char *const *tags, int tag_count)
{
    const char *name = f->tags[index];
    size_t n = f->tag_len[index];
    for (int i = 0; i < tag_count; i++) {
        const char *t = tags[i];
        if (t && t[0] == name[0] && strncmp(t, name, n) == 0 && t[n] == '\0')
            return true;
    }
    return false;
}

bool ps_formula_eval(const struct ps_formula *f, const char *const *tags, int tag_count)
{
    if (!f || f->code_len == 0)
        return true;
    bool stack[EVAL_STACK_MAX];
    int top = 0;
    /* Tags 0..63 are looked up once per evaluation; later ones (rare) at each use. */
    uint64_t known = 0, value = 0;
    for (int i = 0; i < f->code_len; i++) {
        uint32_t insn = f->code[i];
        switch (insn & OP_MASK) {
        case OP_TAG: {
            int index = (int)(insn >> OP_BITS);
            bool v;
            if (index < 64) {
                uint64_t bit = (uint64_t)1 << index;
                if (!(known & bit)) {
                    known |= bit;
                    if (has_tag(f, index, tags, tag_count))
                        value |= bit;
                }
                v = (value & bit) != 0;
            } else {
                v = has_tag(f, index, tags, tag_count);
            }
            stack[top++] = v;
            break;
        }
        case OP_TRUE: stack[top++] = true; break;
        case OP_FALSE: stack[top++] = false; break;
        case OP_NOT: stack[top - 1] = !stack[top - 1]; break;
        case OP_AND: top--; stack[top - 1] = stack[top - 1] && stack[top]; break;
        case OP_OR: top--; stack[top - 1] = stack[top - 1] || stack[top]; break;
        default: assert(!"bad formula opcode");
        }
    }
    return stack[0];
}

const char *ps_formula_text(const struct ps_formula *f)
{
    return f ? f->text : "";
}

bool ps_formula_is_empty(const struct ps_formula *f)
{
    return !f || f->code_len == 0;
}

int ps_formula_size(const struct ps_formula *f)
{
    return f ? f->code_len : 0;
}

int ps_formula_parse_filter(const char *key, const char *text, struct ps_formula **out,
                            struct ps_error *err)
{
    struct ps_formula *formula = NULL;
    if (out)
        *out = NULL;
    int rc = ps_formula_parse(text, &formula, err);
    if (rc != 0) {
        ps_error_prefix(err, "%s", key);
        return rc;
    }
    int size = ps_formula_size(formula);
    if (size > PS_FORMULA_MAX_FILTER_TOKENS) {
        ps_formula_free(formula);
        return ps_error_set(err, PS_EINVAL,
                            "%s: more than %d tokens in a scheduling tag filter are not allowed, "
                            "got %d in \"%s\"",
                            key, PS_FORMULA_MAX_FILTER_TOKENS, size, text);
    }
    if (out)
        *out = formula;
    else
        ps_formula_free(formula);
    return 0;
}
