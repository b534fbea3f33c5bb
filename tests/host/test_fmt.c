/* tests/host/test_fmt.c - lib/fmt.c byte for byte against the host C library's snprintf,
 * over a generated grid of flags, widths, precisions, length modifiers and values, at every
 * interesting buffer size; plus the behaviour that is ours alone. */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include "ticklab/fmt.h"
#include "test.h"

#define GUARD 16        /* bytes past `size` that must stay untouched */
#define SENTINEL 0xa5

/* fmt_vsnprintf without the format attribute, for formats built at run time and for the
 * conversions the compiler would rightly warn about. */
static int ours(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = fmt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

/* One truncated call: result, NUL placement and the guard bytes. */
static bool check_size(const char *fmt, va_list ap, size_t size, const char *want, int want_n)
{
    unsigned char buf[512 + GUARD];
    size_t keep;
    va_list args;
    int n;
    bool ok = true;

    memset(buf, SENTINEL, sizeof(buf));
    va_copy(args, ap);
    n = fmt_vsnprintf((char *)buf, size, fmt, args);
    va_end(args);
    keep = size == 0 ? 0 : ((size_t)want_n < size - 1 ? (size_t)want_n : size - 1);

    ok &= CHECK_EQ_I64(n, want_n);
    if (size > 0) {
        ok &= CHECK_EQ_MEM(buf, want, keep);
        ok &= CHECK_EQ_U64(buf[keep], 0);
    }
    for (size_t i = size; i < size + GUARD; i++)
        ok &= CHECK_EQ_U64(buf[i], SENTINEL);
    if (!ok)
        printf("    format \"%s\", size %zu, want \"%s\"\n", fmt, size, want);
    return ok;
}

/* Compares against vsnprintf at sizes 0, 1, 2, 3, len-1, len, len+1 and roomy; also
 * size 0 with a NULL buffer. Stops at the first mismatch so a broken case prints once. */
static bool vcompare(const char *fmt, va_list ap)
{
    char want[512];
    size_t sizes[8] = { 0, 1, 2, 3, 0, 0, 0, 400 };
    va_list args;
    int want_n;

    va_copy(args, ap);
    want_n = vsnprintf(want, sizeof(want), fmt, args);
    va_end(args);
    if (!CHECK(want_n >= 0 && want_n < 400))
        return false;
    sizes[4] = want_n > 0 ? (size_t)want_n - 1 : 0;
    sizes[5] = (size_t)want_n;
    sizes[6] = (size_t)want_n + 1;
    for (int i = 0; i < 8; i++) {
        if (!check_size(fmt, ap, sizes[i], want, want_n))
            return false;
    }
    va_copy(args, ap);
    want_n = CHECK_EQ_I64(fmt_vsnprintf(NULL, 0, fmt, args), want_n);
    va_end(args);
    return want_n;
}

static int n_compared, n_mismatched;

static bool compare(const char *fmt, ...)
{
    va_list ap;
    bool ok;

    va_start(ap, fmt);
    ok = vcompare(fmt, ap);
    va_end(ap);
    n_compared++;
    n_mismatched += !ok;
    return ok;
}

/* ---- the generated grid ----------------------------------------------------------------- */

static const char *const flag_sets[] = {
    "", "-", "0", "+", " ", "#", "-0", "+ ", "0+", "-+", "0#", "-#", " 0", "+0#", "-0+ #",
};
static const char *const widths[] = { "", "1", "2", "7", "23" };
static const char *const precs[] = { "", ".", ".0", ".1", ".3", ".21" };
static const char *const len_mods[] = { "", "hh", "h", "l", "ll", "z", "t", "j" };

static const int64_t signed_values[] = {
    0, 1, -1, 7, -42, 127, -128, 300, 32767, -32768, 70000, 1234567, INT_MAX, INT_MIN,
    -1000000000000LL, INT64_MAX, INT64_MIN,
};
static const uint64_t unsigned_values[] = {
    0, 1, 8, 255, 256, 65535, 65536, 0xdeadbeefu, UINT_MAX, 0x100000000ull,
    01234567012345670123456ull, 1ull << 63, UINT64_MAX,
};

/* Passes v as the type the length modifier names, as a caller would. */
static bool compare_signed(const char *fmt, const char *len, int64_t v)
{
    if (!strcmp(len, "l"))
        return compare(fmt, (long)v);
    if (!strcmp(len, "ll"))
        return compare(fmt, (long long)v);
    if (!strcmp(len, "z") || !strcmp(len, "t"))
        return compare(fmt, (ptrdiff_t)v);
    if (!strcmp(len, "j"))
        return compare(fmt, (intmax_t)v);
    return compare(fmt, (int)v);   /* "", hh and h all take an int */
}

static bool compare_unsigned(const char *fmt, const char *len, uint64_t v)
{
    if (!strcmp(len, "l"))
        return compare(fmt, (unsigned long)v);
    if (!strcmp(len, "ll"))
        return compare(fmt, (unsigned long long)v);
    if (!strcmp(len, "z") || !strcmp(len, "t"))
        return compare(fmt, (size_t)v);
    if (!strcmp(len, "j"))
        return compare(fmt, (uintmax_t)v);
    return compare(fmt, (unsigned)v);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* '#' is undefined behaviour with d, i and u, so the grid leaves it out there. */
static bool flags_defined_for(const char *flags, char conv)
{
    return !(strchr(flags, '#') && (conv == 'd' || conv == 'i' || conv == 'u'));
}

static void grid_one(char conv, const char *flags, const char *width, const char *prec,
                     const char *len)
{
    char fmt[32];
    bool is_signed = conv == 'd' || conv == 'i';

    snprintf(fmt, sizeof(fmt), "[%%%s%s%s%s%c]", flags, width, prec, len, conv);
    if (is_signed) {
        for (size_t v = 0; v < COUNT(signed_values); v++)
            compare_signed(fmt, len, signed_values[v]);
    } else {
        for (size_t v = 0; v < COUNT(unsigned_values); v++)
            compare_unsigned(fmt, len, unsigned_values[v]);
    }
}

/* A systematic bug would print thousands of mismatches; a dozen tell the story. */
#define GRID_MAX_MISMATCHES 12

static void grid(char conv)
{
    int compared_before = n_compared;

    n_mismatched = 0;
    for (size_t f = 0; f < COUNT(flag_sets); f++) {
        if (!flags_defined_for(flag_sets[f], conv))
            continue;
        for (size_t w = 0; w < COUNT(widths); w++)
            for (size_t p = 0; p < COUNT(precs); p++)
                for (size_t l = 0; l < COUNT(len_mods); l++) {
                    if (n_mismatched >= GRID_MAX_MISMATCHES)
                        return;
                    grid_one(conv, flag_sets[f], widths[w], precs[p], len_mods[l]);
                }
    }
    CHECK(n_compared > compared_before);
}

TEST(fmt_grid_d) { grid('d'); }
TEST(fmt_grid_i) { grid('i'); }
TEST(fmt_grid_u) { grid('u'); }
TEST(fmt_grid_x) { grid('x'); }
TEST(fmt_grid_X) { grid('X'); }
TEST(fmt_grid_o) { grid('o'); }

/* ---- hand-picked cases ------------------------------------------------------------------ */

TEST(fmt_extremes)
{
    compare("%lld %lld", (long long)INT64_MIN, (long long)INT64_MAX);
    compare("%llu %llx %llo", (unsigned long long)UINT64_MAX, (unsigned long long)UINT64_MAX,
            (unsigned long long)UINT64_MAX);
    compare("%jd|%zu|%td", (intmax_t)INT64_MIN, (size_t)SIZE_MAX, (ptrdiff_t)PTRDIFF_MIN);
    compare("%d %i %d", INT_MIN, INT_MAX, -1);
    compare("%+.0d|% .0d|%+5.0d|%-+5d|%05d|%-05d", 0, 0, 0, 0, -3, -3);
    compare("%#o|%#.0o|%#x|%#.0x|%#5.3o|%#08x", 0u, 0u, 0u, 0u, 9u, 255u);
}

TEST(fmt_strings_and_chars)
{
    compare("%s|%5s|%-5s|%.2s|%5.1s|%-5.0s|%.10s", "abc", "abc", "abc", "abc", "abc", "abc",
            "abc");
    compare("[%s][%10s][%-3s]", "", "", "");
    compare("%c%c%c|%3c|%-3c|", 'a', 0xe9, 'z', 'x', 'y');
    compare("%s", "(null) is what NULL prints");
    compare("%s|%12s", (char *)NULL, (char *)NULL);   /* glibc agrees when no precision */
    compare("100%% %d%%", 5);
    compare("no conversions at all");
    compare("%s", "");
}

TEST(fmt_star_width_and_precision)
{
    compare("[%*d]", 6, 42);
    compare("[%*d]", -6, 42);          /* negative width means '-' */
    compare("[%.*d]", 4, 42);
    compare("[%.*d]", -4, 42);         /* negative precision means none */
    compare("[%0.*d]", -4, 42);        /* ...so '0' applies again */
    compare("[%*.*s]", 8, 2, "abcdef");
    compare("[%-*.*x]", 10, 6, 0xabcu);
}

TEST(fmt_pointer)
{
    int x;

    compare("%p", (void *)&x);
    compare("[%20p][%-20p]", (void *)&x, (void *)&x);
    compare("%p|%10p|%-10p|", (void *)NULL, (void *)NULL, (void *)NULL);
    compare("%p", (void *)(uintptr_t)0xffffffffffffffffull);
}

/* The rest is where we choose differently from glibc, or glibc's choice is undefined in C. */

TEST(fmt_null_string_with_precision_is_truncated)
{
    char buf[32];

    CHECK_EQ_I64(ours(buf, sizeof(buf), "[%.3s]", (char *)NULL), 5);
    CHECK_EQ_STR(buf, "[(nu]");
}

TEST(fmt_precision_reads_no_further_than_asked)
{
    /* Not NUL-terminated: ASan objects if %s reads past it. */
    char *text = malloc(4);
    char buf[16];

    REQUIRE(text);
    memcpy(text, "abcd", 4);
    CHECK_EQ_I64(ours(buf, sizeof(buf), "%.4s|%.2s", text, text), 7);
    CHECK_EQ_STR(buf, "abcd|ab");
    free(text);
}

TEST(fmt_unknown_conversions_copied_through)
{
    char buf[64];
    int n = 12345;

    CHECK_EQ_I64(ours(buf, sizeof(buf), "a%yb%5qc%-#0w"), 13);
    CHECK_EQ_STR(buf, "a%yb%5qc%-#0w");
    /* %n would write through a pointer taken from the caller's arguments: never. */
    CHECK_EQ_I64(ours(buf, sizeof(buf), "x%ny", &n), 4);
    CHECK_EQ_STR(buf, "x%ny");
    CHECK_EQ_I64(n, 12345);
    CHECK_EQ_I64(ours(buf, sizeof(buf), "tail%"), 5);
    CHECK_EQ_STR(buf, "tail%");
    CHECK_EQ_I64(ours(buf, sizeof(buf), "tail%-08.3l"), 11);
    CHECK_EQ_STR(buf, "tail%-08.3l");
}

TEST(fmt_size_zero_writes_nothing)
{
    char c = 'q';

    CHECK_EQ_I64(ours(&c, 0, "%d", 12345), 5);
    CHECK_EQ_U64(c, 'q');
    CHECK_EQ_I64(ours(&c, 1, "%d", 12345), 5);
    CHECK_EQ_U64(c, 0);
}

TEST(fmt_result_longer_than_int_max_is_minus_one)
{
    char buf[16];

    /* The padding beyond the buffer is counted, not written: this must be instant. */
    CHECK_EQ_I64(ours(buf, sizeof(buf), "%2147483647d", 1), INT_MAX);
    CHECK_EQ_U64(strlen(buf), sizeof(buf) - 1);
    CHECK_EQ_I64(ours(buf, sizeof(buf), "%2147483647d%d", 1, 2), -1);
    CHECK_EQ_I64(ours(buf, sizeof(buf), "%2147483648d", 1), -1);
    CHECK_EQ_I64(ours(buf, sizeof(buf), "%99999999999999999999999d", 1), -1);
    CHECK_EQ_I64(ours(buf, sizeof(buf), "%.2147483648d", 1), -1);
    CHECK_EQ_I64(ours(buf, sizeof(buf), "%*d", INT_MIN, 1), -1);
    CHECK_EQ_U64(buf[sizeof(buf) - 1], 0);
}

TEST(fmt_snprintf_wrapper)
{
    char buf[8];

    CHECK_EQ_I64(fmt_snprintf(buf, sizeof(buf), "%s-%u", "abcdef", 42u), 9);
    CHECK_EQ_STR(buf, "abcdef-");
}

TEST(fmt_ns_reads_in_the_unit_its_magnitude_calls_for)
{
    char b[40];
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 0), "0 ns");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 281), "281 ns");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 999), "999 ns");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 1000), "1.00 us");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 1234), "1.23 us");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 1235), "1.24 us");       /* half rounds up */
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 12345), "12.3 us");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 877719), "878 us");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 2924872), "2.92 ms");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 114029), "114 us");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 1000000000), "1.00 s");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), 3600000000000ll), "3600 s");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), -2500), "-2.50 us");
    CHECK_EQ_STR(fmt_ns(b, sizeof(b), INT64_MIN), "-9223372037 s");
    /* an interval's ends in its figure's unit and decimals */
    CHECK_EQ_STR(fmt_ns_in(b, sizeof(b), 2801000, 2924872, false), "2.80");
    CHECK_EQ_STR(fmt_ns_in(b, sizeof(b), 12000000, 2924872, true), "12.00 ms");
    CHECK_EQ_STR(fmt_ns_in(b, sizeof(b), 278, 281, false), "278");
    CHECK_EQ_STR(fmt_ns_in(b, sizeof(b), 990, 1200, false), "0.99");
}

TEST(fmt_fixed_keeps_the_sign_of_small_values)
{
    char b[32];
    CHECK_EQ_STR(fmt_fixed(b, sizeof(b), -43, 4, true), "-0.0043");
    CHECK_EQ_STR(fmt_fixed(b, sizeof(b), 43, 4, true), "+0.0043");
    CHECK_EQ_STR(fmt_fixed(b, sizeof(b), 43, 4, false), "0.0043");
    CHECK_EQ_STR(fmt_fixed(b, sizeof(b), -90770, 4, true), "-9.0770");
    CHECK_EQ_STR(fmt_fixed(b, sizeof(b), 0, 2, true), "+0.00");
    CHECK_EQ_STR(fmt_fixed(b, sizeof(b), -5, 0, false), "-5");
    CHECK_EQ_STR(fmt_fixed(b, sizeof(b), INT64_MIN, 3, false), "-9223372036854775.808");
    CHECK_EQ_STR(fmt_fixed(b, 6, -123456, 2, false), "-1234");    /* cut, NUL-terminated */
}
