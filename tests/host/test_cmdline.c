/* tests/host/test_cmdline.c - lib/cmdline.c on malformed and hostile lines.
 *
 * Every line is parsed from a heap copy of exactly its length, so ASan stops the run if the
 * parser reads one byte past the NUL. Each case checks the number of errors, each reason
 * and offending word, and that every option not named by a valid word kept its default. */
#include <stdlib.h>

#include "ticklab/cmdline.h"
#include "test.h"

/* ---- a small option table --------------------------------------------------------------- */

static const char *const clocksources[] = { "tsc", "hpet", "acpi_pm", "pit", "lapic", NULL };
static const char *const exps[] = { "a", "b", "c", NULL };

#define CONSOLE_SIZE 8

struct cfg {
    uint64_t hz, samples, exps;
    unsigned clocksource;
    bool verbose;
    char console[CONSOLE_SIZE];
};

static const struct cfg defaults = { 250, 1000, 0x1, 0, false, "ttyS0" };

enum { OPT_HZ, OPT_SAMPLES, OPT_CLOCKSOURCE, OPT_EXP, OPT_VERBOSE, OPT_CONSOLE, N_OPTS };

static struct cfg cfg;
static struct cmdline_opt opts[N_OPTS];

static void reset_options(void)
{
    cfg = defaults;
    opts[OPT_HZ] = (struct cmdline_opt){ "hz", CMDLINE_UINT, &cfg.hz, 100, 10000, NULL,
                                         "100..10000", false };
    opts[OPT_SAMPLES] = (struct cmdline_opt){ "samples", CMDLINE_UINT, &cfg.samples, 1,
                                              UINT64_MAX, NULL, "1..2^64-1", false };
    opts[OPT_CLOCKSOURCE] = (struct cmdline_opt){ "clocksource", CMDLINE_ENUM,
                                                  &cfg.clocksource, 0, 0, clocksources,
                                                  "tsc|hpet|acpi_pm|pit|lapic", false };
    opts[OPT_EXP] = (struct cmdline_opt){ "exp", CMDLINE_LIST, &cfg.exps, 0, 0, exps,
                                          "a,b,c|all|none", false };
    opts[OPT_VERBOSE] = (struct cmdline_opt){ "verbose", CMDLINE_BOOL, &cfg.verbose, 0, 0,
                                              NULL, "0|1|on|off|yes|no|true|false", false };
    opts[OPT_CONSOLE] = (struct cmdline_opt){ "console", CMDLINE_STR, cfg.console, 0,
                                              CONSOLE_SIZE, NULL, "up to 7 characters",
                                              false };
}

/* ---- recording the errors --------------------------------------------------------------- */

#define MAX_ERRS 16

struct err {
    char word[CMDLINE_MAX_WORD + 1];
    size_t len;
    const char *reason;
    const char *accepted;
};

static struct err errs[MAX_ERRS];
static int n_errs;
static const char *line_start, *line_end;   /* the heap copy being parsed */

static void record_error(void *ctx, const char *word, size_t len, const char *reason,
                         const char *accepted)
{
    struct err *e = &errs[n_errs < MAX_ERRS ? n_errs : MAX_ERRS - 1];

    CHECK(ctx == &n_errs);
    CHECK(len <= CMDLINE_MAX_WORD);
    /* The word must point into the line itself, not at a copy that may be gone. */
    CHECK(word >= line_start && word + len <= line_end);
    memcpy(e->word, word, len);
    e->word[len] = '\0';
    e->len = len;
    e->reason = reason;
    e->accepted = accepted;
    n_errs++;
}

/* Parses a heap copy of exactly len + 1 bytes; returns the error count after checking it
 * against the callback's. */
static int parse_n(const char *line, size_t len)
{
    char *copy = line ? malloc(len + 1) : NULL;
    int n;

    reset_options();
    n_errs = 0;
    if (copy) {
        memcpy(copy, line, len);
        copy[len] = '\0';
    }
    line_start = copy;
    line_end = copy ? copy + len + 1 : NULL;
    n = cmdline_parse(copy, opts, N_OPTS, record_error, &n_errs);
    CHECK_EQ_I64(n, n_errs);
    free(copy);
    return n;
}

static int parse(const char *line)
{
    return parse_n(line, line ? strlen(line) : 0);
}

static bool cfg_equal(const struct cfg *a, const struct cfg *b)
{
    return a->hz == b->hz && a->samples == b->samples && a->exps == b->exps &&
           a->clocksource == b->clocksource && a->verbose == b->verbose &&
           strcmp(a->console, b->console) == 0;
}

static bool all_default(void)
{
    bool ok = CHECK(cfg_equal(&cfg, &defaults));

    for (int i = 0; i < N_OPTS; i++)
        ok &= CHECK(!opts[i].seen);
    return ok;
}

static bool error_is(int i, const char *word, const char *reason)
{
    bool ok;

    if (!CHECK(i < n_errs))
        return false;
    ok = CHECK_EQ_STR(errs[i].word, word);
    ok &= CHECK_EQ_U64(errs[i].len, strlen(word));
    ok &= CHECK_EQ_STR(errs[i].reason, reason);
    return ok;
}

/* The line gives exactly one error, for word, and changes nothing. */
static void one_error(const char *line, const char *word, const char *reason)
{
    bool ok = CHECK_EQ_I64(parse(line), 1);

    ok &= error_is(0, word, reason);
    ok &= all_default();
    if (!ok)
        printf("    line \"%s\"\n", line);
}

/* ---- nothing there ---------------------------------------------------------------------- */

TEST(cmdline_null_empty_and_blank_lines)
{
    CHECK_EQ_I64(parse(NULL), 0);
    all_default();
    CHECK_EQ_I64(parse(""), 0);
    all_default();
    CHECK_EQ_I64(parse("   "), 0);
    all_default();
    CHECK_EQ_I64(parse(" \t\n\r\v\f "), 0);
    all_default();
}

TEST(cmdline_null_callback_and_empty_table)
{
    reset_options();
    CHECK_EQ_I64(cmdline_parse("hz=1 x =", opts, N_OPTS, NULL, NULL), 3);
    CHECK_EQ_U64(cfg.hz, 250);
    n_errs = 0;
    line_start = "hz=500";
    line_end = line_start + 7;
    CHECK_EQ_I64(cmdline_parse(line_start, NULL, 0, record_error, &n_errs), 1);
    error_is(0, "hz=500", "unknown key");
}

/* ---- valid values ----------------------------------------------------------------------- */

TEST(cmdline_valid_values_are_stored)
{
    CHECK_EQ_I64(parse("hz=1000 samples=18446744073709551615 clocksource=acpi_pm exp=a,c "
                       "verbose=yes console=ttyS1"),
                 0);
    CHECK_EQ_U64(cfg.hz, 1000);
    CHECK_EQ_U64(cfg.samples, UINT64_MAX);
    CHECK_EQ_U64(cfg.clocksource, 2);
    CHECK_EQ_U64(cfg.exps, 0x5);
    CHECK(cfg.verbose);
    CHECK_EQ_STR(cfg.console, "ttyS1");
    for (int i = 0; i < N_OPTS; i++)
        CHECK(opts[i].seen);
}

TEST(cmdline_numbers)
{
    CHECK_EQ_I64(parse("hz=0x3e8"), 0);
    CHECK_EQ_U64(cfg.hz, 1000);
    CHECK_EQ_I64(parse("hz=0X3E8"), 0);
    CHECK_EQ_U64(cfg.hz, 1000);
    CHECK_EQ_I64(parse("hz=0100"), 0);   /* decimal: a leading 0 is not octal */
    CHECK_EQ_U64(cfg.hz, 100);
    CHECK_EQ_I64(parse("hz=10000"), 0);
    CHECK_EQ_U64(cfg.hz, 10000);
    CHECK_EQ_I64(parse("samples=0xffffffffffffffff"), 0);
    CHECK_EQ_U64(cfg.samples, UINT64_MAX);
    CHECK_EQ_I64(parse("samples=000000000000000000000000000000000000000000000000000001"), 0);
    CHECK_EQ_U64(cfg.samples, 1);
}

TEST(cmdline_bool_spellings)
{
    static const char *const trues[] = { "1", "on", "yes", "true" };
    static const char *const falses[] = { "0", "off", "no", "false" };
    char line[64];

    for (int i = 0; i < 4; i++) {
        snprintf(line, sizeof(line), "verbose=%s", trues[i]);
        CHECK_EQ_I64(parse(line), 0);
        CHECK(cfg.verbose);
        snprintf(line, sizeof(line), "verbose=1 verbose=%s", falses[i]);
        CHECK_EQ_I64(parse(line), 0);
        CHECK(!cfg.verbose);
    }
}

TEST(cmdline_separators_tab_newline_cr)
{
    CHECK_EQ_I64(parse("\thz=500\tverbose=1\nclocksource=pit\r\nexp=b\v\fconsole=x\n"), 0);
    CHECK_EQ_U64(cfg.hz, 500);
    CHECK(cfg.verbose);
    CHECK_EQ_U64(cfg.clocksource, 3);
    CHECK_EQ_U64(cfg.exps, 0x2);
    CHECK_EQ_STR(cfg.console, "x");
}

TEST(cmdline_duplicate_keys_last_valid_wins)
{
    CHECK_EQ_I64(parse("hz=100 hz=200 hz=300"), 0);
    CHECK_EQ_U64(cfg.hz, 300);
    /* A bad later word stores nothing: the earlier valid value stands. */
    CHECK_EQ_I64(parse("hz=200 hz=abc"), 1);
    error_is(0, "hz=abc", "not a number");
    CHECK_EQ_U64(cfg.hz, 200);
    CHECK(opts[OPT_HZ].seen);
}

/* ---- malformed words -------------------------------------------------------------------- */

TEST(cmdline_malformed_words)
{
    one_error("=x", "=x", "empty key");
    one_error("=", "=", "empty key");
    one_error("==", "==", "empty key");
    one_error("hz", "hz", "missing '='");
    one_error("hz=", "hz=", "empty value");
    one_error("nosuchkey=1", "nosuchkey=1", "unknown key");
    one_error("HZ=100", "HZ=100", "unknown key");   /* keys are case-sensitive */
}

TEST(cmdline_split_word_gives_two_errors)
{
    CHECK_EQ_I64(parse("hz= 500"), 2);
    error_is(0, "hz=", "empty value");
    error_is(1, "500", "missing '='");
    all_default();
}

TEST(cmdline_accepted_text_is_passed)
{
    CHECK_EQ_I64(parse("hz=5"), 1);
    CHECK_EQ_STR(errs[0].accepted, "100..10000");
    CHECK_EQ_I64(parse("hz="), 1);
    CHECK_EQ_STR(errs[0].accepted, "100..10000");
    CHECK_EQ_I64(parse("nosuchkey=1"), 1);
    CHECK(errs[0].accepted == NULL);
}

TEST(cmdline_bad_numbers)
{
    one_error("hz=abc", "hz=abc", "not a number");
    one_error("hz=0x", "hz=0x", "not a number");
    one_error("hz=0xg", "hz=0xg", "not a number");
    one_error("hz=-1", "hz=-1", "not a number");
    one_error("hz=+500", "hz=+500", "not a number");
    one_error("hz=1e3", "hz=1e3", "not a number");
    one_error("hz=1.5", "hz=1.5", "not a number");
    one_error("hz=500x", "hz=500x", "not a number");
    one_error("hz=99", "hz=99", "out of range");
    one_error("hz=10001", "hz=10001", "out of range");
    one_error("hz=99999999999999999999", "hz=99999999999999999999", "out of range");
    one_error("hz=999999999999999999999999999999x", "hz=999999999999999999999999999999x",
              "not a number");
    one_error("samples=0", "samples=0", "out of range");
    one_error("samples=18446744073709551616", "samples=18446744073709551616", "out of range");
    one_error("samples=0x10000000000000000", "samples=0x10000000000000000", "out of range");
}

TEST(cmdline_non_ascii_bytes)
{
    one_error("\xff\xfe=1", "\xff\xfe=1", "unknown key");
    one_error("hz=1\xe9", "hz=1\xe9", "bad character");
    one_error("hz=\x01", "hz=\x01", "bad character");
    one_error("hz=1\x7f", "hz=1\x7f", "bad character");
    one_error("console=caf\xc3\xa9", "console=caf\xc3\xa9", "bad character");
    one_error("clocksource=tsc\x1b[2J", "clocksource=tsc\x1b[2J", "bad character");
}

TEST(cmdline_enum)
{
    CHECK_EQ_I64(parse("clocksource=lapic"), 0);
    CHECK_EQ_U64(cfg.clocksource, 4);
    one_error("clocksource=HPET", "clocksource=HPET", "not one of the choices");
    one_error("clocksource=hpe", "clocksource=hpe", "not one of the choices");
    one_error("clocksource=hpet2", "clocksource=hpet2", "not one of the choices");
    one_error("clocksource=tsc,hpet", "clocksource=tsc,hpet", "not one of the choices");
    one_error("verbose=maybe", "verbose=maybe", "not one of the choices");
    one_error("verbose=", "verbose=", "empty value");
}

TEST(cmdline_list)
{
    CHECK_EQ_I64(parse("exp=all"), 0);
    CHECK_EQ_U64(cfg.exps, 0x7);
    CHECK_EQ_I64(parse("exp=none"), 0);
    CHECK_EQ_U64(cfg.exps, 0);
    CHECK(opts[OPT_EXP].seen);
    CHECK_EQ_I64(parse("exp=c"), 0);   /* replaces the default set, does not add to it */
    CHECK_EQ_U64(cfg.exps, 0x4);
    CHECK_EQ_I64(parse("exp=b,b,b"), 0);
    CHECK_EQ_U64(cfg.exps, 0x2);
    CHECK_EQ_I64(parse("exp=none,b"), 0);
    CHECK_EQ_U64(cfg.exps, 0x2);
    CHECK_EQ_I64(parse("exp=all,none"), 0);
    CHECK_EQ_U64(cfg.exps, 0);
    one_error("exp=a,,b", "exp=a,,b", "empty value");
    one_error("exp=a,", "exp=a,", "empty value");
    one_error("exp=,a", "exp=,a", "empty value");
    one_error("exp=,", "exp=,", "empty value");
    one_error("exp=a,d", "exp=a,d", "not one of the choices");
    one_error("exp=ALL", "exp=ALL", "not one of the choices");
    one_error("exp=alll", "exp=alll", "not one of the choices");
}

TEST(cmdline_list_of_64_choices)
{
    static char names[65][16];
    static const char *choices[66];
    uint64_t bits = 0;
    struct cmdline_opt opt = { "l", CMDLINE_LIST, &bits, 0, 0, choices, "c0..c64", false };

    for (int i = 0; i < 65; i++) {
        snprintf(names[i], sizeof(names[i]), "c%d", i);
        choices[i] = names[i];
    }
    choices[65] = NULL;
    /* A 65th choice cannot have a bit: the parser refuses it rather than shift by 64. */
    CHECK_EQ_I64(cmdline_parse("l=c64", &opt, 1, NULL, NULL), 1);
    CHECK_EQ_I64(cmdline_parse("l=c63,c0", &opt, 1, NULL, NULL), 0);
    CHECK_EQ_U64(bits, 0x8000000000000001ull);
    CHECK_EQ_I64(cmdline_parse("l=all", &opt, 1, NULL, NULL), 0);
    CHECK_EQ_U64(bits, UINT64_MAX);
}

TEST(cmdline_str)
{
    CHECK_EQ_I64(parse("console=1234567"), 0);   /* 7 characters and the NUL: fits */
    CHECK_EQ_STR(cfg.console, "1234567");
    CHECK_EQ_I64(parse("console=a=b"), 0);   /* split at the first '=' only */
    CHECK_EQ_STR(cfg.console, "a=b");
    one_error("console=12345678", "console=12345678", "out of range");
}

/* ---- long words and long lines ---------------------------------------------------------- */

TEST(cmdline_word_of_300_bytes)
{
    char line[301], want[CMDLINE_MAX_WORD + 1];

    memset(line, '1', 300);
    memcpy(line, "hz=", 3);
    line[300] = '\0';
    memcpy(want, line, CMDLINE_MAX_WORD);
    want[CMDLINE_MAX_WORD] = '\0';
    one_error(line, want, "word too long");
}

TEST(cmdline_word_of_exactly_max_bytes_is_parsed)
{
    char line[CMDLINE_MAX_WORD + 1];

    memset(line, 'x', CMDLINE_MAX_WORD);
    memcpy(line, "console=", 8);
    line[CMDLINE_MAX_WORD] = '\0';
    one_error(line, line, "out of range");   /* the value is checked, not the length */
}

static char *repeat_line(const char *prefix_word, size_t n_spaces, const char *tail)
{
    size_t a = strlen(prefix_word), b = strlen(tail);
    char *s = malloc(a + n_spaces + b + 1);

    memcpy(s, prefix_word, a);
    memset(s + a, ' ', n_spaces);
    memcpy(s + a + n_spaces, tail, b + 1);
    return s;
}

TEST(cmdline_10000_byte_line)
{
    char *s = malloc(10001);

    REQUIRE(s);
    for (size_t i = 0; i < 10000; i++)
        s[i] = "hz=500 "[i % 7];
    s[10000] = '\0';
    /* 585 whole words, then "h" at byte 4095 is cut by the limit. */
    CHECK_EQ_I64(parse(s), 1);
    error_is(0, "hz=500", "line too long");
    CHECK_EQ_U64(cfg.hz, 500);

    memset(s, 'x', 10000);   /* one endless word */
    CHECK_EQ_I64(parse(s), 1);
    CHECK_EQ_STR(errs[0].reason, "line too long");
    CHECK_EQ_U64(errs[0].len, CMDLINE_MAX_WORD);
    all_default();
    free(s);
}

TEST(cmdline_line_limit_edges)
{
    size_t max = CMDLINE_MAX_LINE;
    char *s;

    /* Exactly CMDLINE_MAX_LINE bytes: all of it is read. */
    s = repeat_line("", max - 6, "hz=700");
    CHECK_EQ_I64(parse(s), 0);
    CHECK_EQ_U64(cfg.hz, 700);
    free(s);

    /* One byte more cuts "hz=1000" to "hz=10", which would be valid and wrong. */
    s = repeat_line("", max - 5, "hz=1000");
    CHECK_EQ_I64(parse(s), 1);
    error_is(0, "hz=1000", "line too long");
    CHECK_EQ_U64(cfg.hz, 250);
    free(s);

    /* The limit falls on a separator: the last whole word counts, the next is named. */
    s = repeat_line("", max - 6, "hz=700 verbose=1");
    CHECK_EQ_I64(parse(s), 1);
    error_is(0, "verbose=1", "line too long");
    CHECK_EQ_U64(cfg.hz, 700);
    CHECK(!cfg.verbose);
    free(s);

    /* Only blanks after the limit: still reported, once, with an empty word. */
    s = repeat_line("hz=700", 6000, "");
    CHECK_EQ_I64(parse(s), 1);
    error_is(0, "", "line too long");
    CHECK_EQ_U64(cfg.hz, 700);
    free(s);
}

/* A line cut before the parser saw it (a loader's or the boot block's buffer was full):
 * the word at the end may be a piece ("hz=1000" cut to "hz=1", valid and wrong), so it is
 * refused and named; a cut on a separator lost only whole words. */
static int parse_cut(const char *line)
{
    size_t len = strlen(line);
    char *copy = malloc(len + 1);
    memcpy(copy, line, len + 1);
    reset_options();
    n_errs = 0;
    line_start = copy;
    line_end = copy + len + 1;
    int n = cmdline_parse_cut(copy, true, opts, N_OPTS, record_error, &n_errs);
    CHECK_EQ_I64(n, n_errs);
    free(copy);
    return n;
}

TEST(cmdline_cut_line_refuses_its_last_word)
{
    CHECK_EQ_I64(parse_cut("samples=5 hz=1"), 1);
    error_is(0, "hz=1", "line too long");
    CHECK_EQ_U64(cfg.hz, 250);
    CHECK_EQ_U64(cfg.samples, 5);

    CHECK_EQ_I64(parse_cut("samples=5 hz=700 "), 1);   /* cut on a separator */
    error_is(0, "", "line too long");
    CHECK_EQ_U64(cfg.hz, 700);

    CHECK_EQ_I64(parse_cut(""), 1);
    error_is(0, "", "line too long");
    CHECK(all_default());

    CHECK_EQ_I64(parse_cut("hz=abc hz=1000"), 2);        /* earlier errors still come */
    error_is(0, "hz=abc", "not a number");
    error_is(1, "hz=1000", "line too long");
    CHECK_EQ_U64(cfg.hz, 250);

    /* Longer than the limit as well: the limit's rule, one report. */
    char *s = repeat_line("", CMDLINE_MAX_LINE - 5, "hz=1000");
    CHECK_EQ_I64(parse_cut(s), 1);
    error_is(0, "hz=1000", "line too long");
    free(s);
}

TEST(cmdline_many_errors_on_one_line)
{
    char line[CMDLINE_MAX_LINE];
    size_t n = 0;

    while (n + 2 <= sizeof(line) - 1) {
        line[n++] = 'x';
        line[n++] = ' ';
    }
    line[n] = '\0';
    CHECK_EQ_I64(parse(line), (int64_t)n / 2);
    all_default();
}

/* ---- invariants under random input ------------------------------------------------------ */

static bool printable(const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
            return false;
    }
    return true;
}

/* Random lines built from pieces that come close to valid: whatever comes in, every value
 * stays within what its option accepts, and errors are counted and reported alike. */
TEST(cmdline_random_lines_keep_values_in_range)
{
    static const char *const pieces[] = {
        "hz", "samples", "clocksource", "exp", "verbose", "console", "=", "=", ",", " ",
        "\t", "\n", "0", "1", "9", "0x", "ff", "100", "99999999999999999999", "a", "b",
        "all", "none", "tsc", "hpet", "on", "yes", "\xff", "\xc3\xa9", "\x01", "-", "ttyS0",
    };
    uint32_t state = 0x9e3779b9u;
    char line[200];

    for (int t = 0; t < 20000; t++) {
        size_t n = 0;

        state ^= state << 13, state ^= state >> 17, state ^= state << 5;
        for (int k = (int)(state % 12); k > 0; k--) {
            const char *p;
            state ^= state << 13, state ^= state >> 17, state ^= state << 5;
            p = pieces[state % (sizeof(pieces) / sizeof(pieces[0]))];
            if (n + strlen(p) >= sizeof(line))
                break;
            memcpy(line + n, p, strlen(p));
            n += strlen(p);
        }
        line[n] = '\0';
        parse(line);
        if (!CHECK(cfg.hz >= 100 && cfg.hz <= 10000) || !CHECK(cfg.samples >= 1) ||
            !CHECK(cfg.clocksource < 5) || !CHECK(cfg.exps <= 7) ||
            !CHECK(strlen(cfg.console) < CONSOLE_SIZE && printable(cfg.console))) {
            printf("    line \"%s\"\n", line);
            return;
        }
    }
}
