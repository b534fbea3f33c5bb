/* lib/cmdline.c - the kernel command line parser.
 *
 * Everything here treats the line as hostile: every read is bounded by the NUL, by
 * CMDLINE_MAX_LINE and by the word's length, numbers are checked for overflow before each
 * multiply, and a word is validated completely before anything is stored, so a bad word
 * leaves its option exactly as it was (its default, or the value of an earlier valid word). */
#include "ticklab/cmdline.h"
#include "ticklab/kstring.h"

struct parser {
    struct cmdline_opt *opts;
    size_t n_opts;
    cmdline_error_fn on_error;
    void *ctx;
    int errors;
};

/* GRUB and EFI load options can carry tabs and line ends as well as spaces. */
static bool is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void report(struct parser *ps, const char *word, size_t len, const char *reason,
                   const char *accepted)
{
    ps->errors++;
    if (ps->on_error)
        ps->on_error(ps->ctx, word, len, reason, accepted);
}

/* True if the n bytes at s spell exactly name. */
static bool matches(const char *s, size_t n, const char *name)
{
    /* Equal over n bytes means name has no NUL before n (s has none), so name[n] exists. */
    return name && k_strncmp(s, name, n) == 0 && name[n] == '\0';
}

static struct cmdline_opt *find_opt(struct parser *ps, const char *key, size_t len)
{
    for (size_t i = 0; i < ps->n_opts; i++) {
        if (matches(key, len, ps->opts[i].key))
            return &ps->opts[i];
    }
    return NULL;
}

/* Index of the choice spelled by s, or -1. */
static int find_choice(const char *const *choices, const char *s, size_t n)
{
    for (int i = 0; choices && choices[i]; i++) {
        if (matches(s, n, choices[i]))
            return i;
    }
    return -1;
}

/* ---- values: each returns NULL when it stored the value, else the reason ---------------- */

static int digit_value(char c, unsigned base)
{
    int d = -1;

    if (c >= '0' && c <= '9')
        d = c - '0';
    else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
    return d >= 0 && (unsigned)d < base ? d : -1;
}

static const char *parse_uint(const char *s, size_t n, uint64_t *out)
{
    unsigned base = 10;
    uint64_t v = 0;
    bool too_big = false;

    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    }
    /* Keep scanning after an overflow so that "99999999999999999999x" is "not a number". */
    for (size_t i = 0; i < n; i++) {
        int d = digit_value(s[i], base);
        if (d < 0)
            return "not a number";
        if (v > (UINT64_MAX - (unsigned)d) / base)
            too_big = true;
        else
            v = v * base + (unsigned)d;
    }
    if (too_big)
        return "out of range";
    *out = v;
    return NULL;
}

static const char *set_uint(struct cmdline_opt *o, const char *s, size_t n)
{
    uint64_t v;
    const char *why = parse_uint(s, n, &v);

    if (why)
        return why;
    if (v < o->min || v > o->max)
        return "out of range";
    if (o->dest)
        *(uint64_t *)o->dest = v;
    return NULL;
}

static const char *set_bool(struct cmdline_opt *o, const char *s, size_t n)
{
    static const char *const falses[] = { "0", "off", "no", "false", NULL };
    static const char *const trues[] = { "1", "on", "yes", "true", NULL };
    bool v;

    if (find_choice(trues, s, n) >= 0)
        v = true;
    else if (find_choice(falses, s, n) >= 0)
        v = false;
    else
        return "not one of the choices";
    if (o->dest)
        *(bool *)o->dest = v;
    return NULL;
}

static const char *set_enum(struct cmdline_opt *o, const char *s, size_t n)
{
    int i = find_choice(o->choices, s, n);

    if (i < 0)
        return "not one of the choices";
    if (o->dest)
        *(unsigned *)o->dest = (unsigned)i;
    return NULL;
}

static uint64_t all_choices_mask(const char *const *choices)
{
    unsigned n = 0;

    while (choices && choices[n] && n < 64)
        n++;
    return n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

/* The word replaces the whole set (exp=tsc means only tsc, whatever the default). Items
 * apply left to right, so "all,hpet" is all and "none,hpet" just hpet; "all" and "none" are
 * keywords even if a choice has the same name. */
static const char *set_list(struct cmdline_opt *o, const char *s, size_t n)
{
    uint64_t bits = 0;
    size_t start = 0;

    while (start <= n) {
        size_t end = start;
        int i;

        while (end < n && s[end] != ',')
            end++;
        if (end == start)
            return "empty value";
        if (matches(s + start, end - start, "all")) {
            bits = all_choices_mask(o->choices);
        } else if (matches(s + start, end - start, "none")) {
            bits = 0;
        } else {
            i = find_choice(o->choices, s + start, end - start);
            if (i < 0 || i >= 64)
                return "not one of the choices";
            bits |= UINT64_C(1) << i;
        }
        start = end + 1;
    }
    if (o->dest)
        *(uint64_t *)o->dest = bits;
    return NULL;
}

static const char *set_str(struct cmdline_opt *o, const char *s, size_t n)
{
    char *dest = o->dest;

    if ((uint64_t)n >= o->max)
        return "out of range";   /* max is the buffer size and the NUL needs a byte */
    if (dest) {
        for (size_t i = 0; i < n; i++)
            dest[i] = s[i];
        dest[n] = '\0';
    }
    return NULL;
}

static const char *set_value(struct cmdline_opt *o, const char *s, size_t n)
{
    /* Printable ASCII only, for every type: the word ends up in error records and on the
     * console, and no accepted value needs anything else. */
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return "bad character";
    }
    switch (o->type) {
    case CMDLINE_UINT: return set_uint(o, s, n);
    case CMDLINE_BOOL: return set_bool(o, s, n);
    case CMDLINE_ENUM: return set_enum(o, s, n);
    case CMDLINE_LIST: return set_list(o, s, n);
    case CMDLINE_STR: return set_str(o, s, n);
    }
    return "unknown key";   /* a table entry with a type this parser does not know */
}

/* ---- words and the line ----------------------------------------------------------------- */

static void parse_word(struct parser *ps, const char *w, size_t len)
{
    size_t key_len = 0;
    struct cmdline_opt *o;
    const char *why;

    if (len > CMDLINE_MAX_WORD) {
        report(ps, w, CMDLINE_MAX_WORD, "word too long", NULL);
        return;
    }
    while (key_len < len && w[key_len] != '=')
        key_len++;
    if (key_len == len) {
        report(ps, w, len, "missing '='", NULL);
        return;
    }
    if (key_len == 0) {
        report(ps, w, len, "empty key", NULL);
        return;
    }
    o = find_opt(ps, w, key_len);
    if (!o) {
        report(ps, w, len, "unknown key", NULL);
        return;
    }
    if (key_len + 1 == len) {
        report(ps, w, len, "empty value", o->accepted);
        return;
    }
    why = set_value(o, w + key_len + 1, len - key_len - 1);
    if (why)
        report(ps, w, len, why, o->accepted);
    else
        o->seen = true;
}

/* Names the first word not parsed, bounded like any other word, and never past the NUL. */
static void report_line_too_long(struct parser *ps, const char *rest)
{
    size_t skip = 0, len = 0;

    while (skip < CMDLINE_MAX_WORD && rest[skip] && is_sep(rest[skip]))
        skip++;
    while (len < CMDLINE_MAX_WORD && rest[skip + len] && !is_sep(rest[skip + len]))
        len++;
    report(ps, rest + skip, len, "line too long", NULL);
}

int cmdline_parse(const char *line, struct cmdline_opt *opts, size_t n_opts,
                  cmdline_error_fn on_error, void *ctx)
{
    return cmdline_parse_cut(line, false, opts, n_opts, on_error, ctx);
}

int cmdline_parse_cut(const char *line, bool cut, struct cmdline_opt *opts, size_t n_opts,
                      cmdline_error_fn on_error, void *ctx)
{
    struct parser ps = { opts, n_opts, on_error, ctx, 0 };
    size_t n, limit, i = 0;
    bool too_long;

    if (!line)
        line = "";
    n = k_strnlen(line, CMDLINE_MAX_LINE + 1);
    too_long = n > CMDLINE_MAX_LINE;
    limit = too_long ? CMDLINE_MAX_LINE : n;
    if (cut && !too_long) {
        /* Cut before it reached us: the word at the end may be a piece of a longer one, so
         * it is refused like a word cut by the limit; one that ends in a separator lost
         * only whole words, and the report names none. */
        while (i < n) {
            size_t start;
            if (is_sep(line[i])) {
                i++;
                continue;
            }
            start = i;
            while (i < n && !is_sep(line[i]))
                i++;
            if (i == n) {
                report_line_too_long(&ps, line + start);
                return ps.errors;
            }
            parse_word(&ps, line + start, i - start);
        }
        report_line_too_long(&ps, line + n);
        return ps.errors;
    }

    while (i < limit) {
        size_t start;

        if (is_sep(line[i])) {
            i++;
            continue;
        }
        start = i;
        while (i < limit && !is_sep(line[i]))
            i++;
        /* A word cut by the limit is not parsed: "hz=1000" cut to "hz=10" would be valid
         * and wrong. line[limit] exists because the line is longer than limit. */
        if (i == limit && too_long && !is_sep(line[limit])) {
            report_line_too_long(&ps, line + start);
            return ps.errors;
        }
        parse_word(&ps, line + start, i - start);
    }
    if (too_long)
        report_line_too_long(&ps, line + limit);
    return ps.errors;
}
