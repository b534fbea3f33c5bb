/* tests/host/test_json.c - lib/json.c, checked twice: the exact bytes where the format is
 * ours to choose, and with Python's json module as an independent parser for everything
 * else. Each test writes "<json>\t<python expression>" lines to a temporary file; a Python
 * one-liner parses every JSON line strictly (valid UTF-8, no raw control characters) and
 * compares it, types and key order included, with the expression.
 *
 * Strings go to Python as B("<hex of the raw bytes>"), which Python decodes with
 * errors="replace": the writer's U+FFFD substitution must agree with Python's, sequence for
 * sequence. */
#define _POSIX_C_SOURCE 200809L   /* mkstemp, fdopen */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "ticklab/errno.h"
#include "ticklab/json.h"
#include "ticklab/stats.h"
#include "test.h"

/* ---- the Python side -------------------------------------------------------------------- */

#define PYTHON "/usr/bin/python3"

/* No single quotes: it travels inside a single-quoted shell word. */
static const char py_checker[] =
    "import json, sys, decimal\n"
    "D = decimal.Decimal\n"
    "def B(h): return bytes.fromhex(h).decode(\"utf-8\", \"replace\")\n"
    "def same(a, b):\n"
    "    if type(a) is not type(b): return False\n"
    "    if isinstance(a, dict):\n"
    "        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)\n"
    "    if isinstance(a, list):\n"
    "        return len(a) == len(b) and all(map(same, a, b))\n"
    "    return a == b\n"
    "bad = 0\n"
    "for n, raw in enumerate(open(sys.argv[1], \"rb\"), 1):\n"
    "    out, exp = raw.rstrip(b\"\\n\").split(b\"\\t\", 1)\n"
    "    try:\n"
    "        got = json.loads(out.decode(\"utf-8\"), parse_float=D)\n"
    "        ok = same(got, eval(exp.decode(\"ascii\"), {\"D\": D, \"B\": B}))\n"
    "    except Exception as e:\n"
    "        got, ok = repr(e), False\n"
    "    if not ok:\n"
    "        bad += 1\n"
    "        if bad <= 10: print(\"    python: line %d: %r\\n      got  %r\\n      want %s\"\n"
    "                            % (n, out, got, exp.decode()), file=sys.stderr)\n"
    "if bad: print(\"    python: %d of %d lines bad\" % (bad, n), file=sys.stderr)\n"
    "sys.exit(1 if bad else 0)\n";

struct pycheck {
    char path[64];
    FILE *f;
    int lines;
};

static bool py_open(struct pycheck *pc)
{
    int fd;

    snprintf(pc->path, sizeof(pc->path), "/tmp/ticklab-json-XXXXXX");
    fd = mkstemp(pc->path);
    pc->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    pc->lines = 0;
    return CHECK(pc->f != NULL);
}

/* One JSON document and the Python value it must parse to. */
static void py_expect(struct pycheck *pc, const char *json, const char *want_fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void py_expect(struct pycheck *pc, const char *json, const char *want_fmt, ...)
{
    va_list ap;

    fprintf(pc->f, "%s\t", json);
    va_start(ap, want_fmt);
    vfprintf(pc->f, want_fmt, ap);
    va_end(ap);
    fputc('\n', pc->f);
    pc->lines++;
}

static void py_run(struct pycheck *pc)
{
    char cmd[sizeof(py_checker) + 128];
    int status;

    fclose(pc->f);
    if (access(PYTHON, X_OK) != 0) {
        test_fail(__FILE__, __LINE__, "%s is needed to check the JSON and is missing", PYTHON);
    } else {
        snprintf(cmd, sizeof(cmd), "%s -c '%s' %s", PYTHON, py_checker, pc->path);
        fflush(stdout);
        status = system(cmd);
        if (!CHECK_EQ_I64(status, 0))
            printf("    python rejected %s (%d lines; kept for reading)\n", pc->path,
                   pc->lines);
    }
    if (!test_failed)
        unlink(pc->path);
}

/* B("...") for n raw bytes, into dst (which needs 2n + 6 bytes). */
static const char *py_bytes(char *dst, const void *src, size_t n)
{
    const uint8_t *p = src;
    char *d = dst + sprintf(dst, "B(\"");

    for (size_t i = 0; i < n; i++)
        d += sprintf(d, "%02x", p[i]);
    strcpy(d, "\")");
    return dst;
}

/* ---- exact bytes ------------------------------------------------------------------------ */

#define BUF_SIZE 4096

static char out[BUF_SIZE];

/* Finishes j and checks the text and the length returned. */
static bool finish_is(struct json *j, const char *want)
{
    int n = json_finish(j);
    bool ok = CHECK_EQ_STR(out, want);

    ok &= CHECK_EQ_I64(n, (int64_t)strlen(want));
    return ok;
}

TEST(json_empty_object)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    finish_is(&j, "{}");
}

TEST(json_member_types_exact_text)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    json_str(&j, "s", "hi");
    json_strn(&j, "n", "a\0b", 3);
    json_str(&j, "nul", NULL);
    json_u64(&j, "u", UINT64_MAX);
    json_i64(&j, "i", INT64_MIN);
    json_hex(&j, "h", 0x1f);
    json_hex(&j, "h0", 0);
    json_bool(&j, "t", true);
    json_bool(&j, "f", false);
    json_null(&j, "z");
    json_fixed(&j, "ppm", -12345, 3);
    finish_is(&j, "{\"s\":\"hi\",\"n\":\"a\\u0000b\",\"nul\":null,"
                  "\"u\":18446744073709551615,\"i\":-9223372036854775808,\"h\":\"0x1f\","
                  "\"h0\":\"0x0\",\"t\":true,\"f\":false,\"z\":null,\"ppm\":-12.345}");
}

/* One block of statistics, keys in the order asked, every field word and both spellings of
 * the median. */
TEST(json_stats_writes_the_words_asked_in_their_order)
{
    struct json j;
    struct stats st = { .n = 5, .min = -3, .max = 90, .median = 7, .p90 = 80, .p99 = 88,
                        .p999 = 89, .mean = 12, .stddev = UINT64_MAX };

    json_begin(&j, out, sizeof(out));
    json_stats(&j, "late_%s_ns", "max min p50", &st);
    json_stats(&j, "%s_cyc", "median p90 p99 p999 mean stddev", &st);
    json_stats(&j, "%s", "  min  ", &st);
    finish_is(&j, "{\"late_max_ns\":90,\"late_min_ns\":-3,\"late_p50_ns\":7,\"median_cyc\":7,"
                  "\"p90_cyc\":80,\"p99_cyc\":88,\"p999_cyc\":89,\"mean_cyc\":12,"
                  "\"stddev_cyc\":18446744073709551615,\"min\":-3}");
}

/* A word that names no statistic, a format without its hole, a key too long for the
 * writer's buffer: the record is dropped (overflow), never written with a wrong key. */
TEST(json_stats_refuses_what_it_cannot_name)
{
    struct json j;
    struct stats st = { .n = 1 };
    char long_fmt[64];
    memset(long_fmt, 'k', sizeof(long_fmt));
    memcpy(long_fmt + 44, "_%s", 4);
    const char *bad[][2] = { { "%s_ns", "min p98" }, { "min_ns", "min" }, { long_fmt, "median" } };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_begin(&j, out, sizeof(out));
        json_stats(&j, bad[i][0], bad[i][1], &st);
        CHECK(j.overflow);
        CHECK_EQ_I64(json_finish(&j), -ENOSPC);
    }
}

TEST(json_escapes_exact_text)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    json_str(&j, "k\"\\", "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f");
    finish_is(&j, "{\"k\\\"\\\\\":\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\"}");
}

TEST(json_invalid_utf8_exact_text)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    json_str(&j, "k", "\xc3\xa9|\xff|\xe2\x82|\xed\xa0\x80");
    finish_is(&j, "{\"k\":\"\xc3\xa9|\\ufffd|\\ufffd|\\ufffd\\ufffd\\ufffd\"}");
}

/* Pieces of untrusted text that fit a budget of escaped bytes, never cutting an escape or
 * a UTF-8 sequence, and that put back together give the whole text. */
TEST(json_escaped_prefix_cuts_between_characters)
{
    CHECK_EQ_U64(json_escaped_prefix("abc", 3, 3), 3);
    CHECK_EQ_U64(json_escaped_prefix("abc", 3, 2), 2);
    CHECK_EQ_U64(json_escaped_prefix("a\x01b", 3, 6), 1);     /* \u0001 is 6: not in 5 */
    CHECK_EQ_U64(json_escaped_prefix("a\x01b", 3, 7), 2);
    CHECK_EQ_U64(json_escaped_prefix("\"\n", 2, 3), 1);       /* 2 + 2 */
    CHECK_EQ_U64(json_escaped_prefix("\xc3\xa9x", 3, 1), 0);   /* a 2-byte sequence whole */
    CHECK_EQ_U64(json_escaped_prefix("\xc3\xa9x", 3, 2), 2);
    CHECK_EQ_U64(json_escaped_prefix("\xffx", 2, 5), 0);       /* \ufffd is 6 */
    CHECK_EQ_U64(json_escaped_prefix("\xffx", 2, 7), 2);
    CHECK_EQ_U64(json_escaped_prefix("abc", 3, 0), 0);

    /* Every piece of a hostile line, written with json_strn, takes at most the budget. */
    char line[600];
    for (unsigned i = 0; i < sizeof(line); i++)
        line[i] = (char)(1 + (i * 37) % 255);
    size_t at = 0, pieces = 0;
    while (at < sizeof(line)) {
        size_t n = json_escaped_prefix(line + at, sizeof(line) - at, 40);
        CHECK(n > 0);
        struct json j;
        json_begin(&j, out, sizeof(out));
        json_strn(&j, "t", line + at, n);
        int len = json_finish(&j);
        CHECK(len > 0 && (size_t)len <= 40 + 8);          /* {"t":"..."} adds 8 */
        at += n;
        pieces++;
    }
    CHECK_EQ_U64(at, sizeof(line));
    CHECK(pieces >= 15);
}

TEST(json_fixed_exact_text)
{
    static const struct {
        int64_t val;
        unsigned decimals;
        const char *want;
    } cases[] = {
        { 0, 0, "0" },
        { 0, 3, "0.000" },
        { 0, 9, "0.000000000" },
        { -5, 3, "-0.005" },
        { -1, 9, "-0.000000001" },
        { 5, 1, "0.5" },
        { -12345, 3, "-12.345" },
        { 1000, 3, "1.000" },
        { -7, 0, "-7" },
        { INT64_MIN, 0, "-9223372036854775808" },
        { INT64_MIN, 9, "-9223372036.854775808" },
        { INT64_MAX, 9, "9223372036.854775807" },
        { INT64_MAX, 0, "9223372036854775807" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct json j;
        char want[64];

        json_begin(&j, out, sizeof(out));
        json_fixed(&j, "v", cases[i].val, cases[i].decimals);
        snprintf(want, sizeof(want), "{\"v\":%s}", cases[i].want);
        finish_is(&j, want);
    }
}

TEST(json_fixed_more_than_9_decimals_is_refused)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    json_fixed(&j, "v", 1, 10);
    CHECK_EQ_I64(json_finish(&j), -ENOSPC);
}

TEST(json_nesting_exact_text)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    json_arr_open(&j, "a");
    json_elem_u64(&j, 1);
    json_elem_i64(&j, -2);
    json_elem_str(&j, "x");
    json_obj_open(&j, NULL);
    json_u64(&j, "k", 3);
    json_obj_close(&j);
    json_arr_open(&j, NULL);
    json_arr_close(&j);
    json_arr_close(&j);
    json_obj_open(&j, "o");
    json_obj_close(&j);
    json_u64(&j, "after", 4);
    finish_is(&j, "{\"a\":[1,-2,\"x\",{\"k\":3},[]],\"o\":{},\"after\":4}");
}

TEST(json_finish_closes_what_is_open)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    json_obj_open(&j, "o");
    json_arr_open(&j, "a");
    json_obj_open(&j, NULL);
    json_arr_open(&j, "b");
    json_elem_u64(&j, 7);
    finish_is(&j, "{\"o\":{\"a\":[{\"b\":[7]}]}}");
}

TEST(json_key_inside_array_is_ignored)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    json_arr_open(&j, "a");
    json_u64(&j, "ignored", 1);
    json_bool(&j, "ignored", true);
    finish_is(&j, "{\"a\":[1,true]}");
}

/* ---- misuse never yields a document ----------------------------------------------------- */

TEST(json_depth_limit)
{
    struct json j;

    /* The top-level object plus 7 more is JSON_MAX_DEPTH; one more must fail. */
    json_begin(&j, out, sizeof(out));
    for (int i = 1; i < JSON_MAX_DEPTH; i++)
        json_arr_open(&j, "a");
    CHECK(!j.overflow);
    finish_is(&j, "{\"a\":[[[[[[[]]]]]]]}");

    json_begin(&j, out, sizeof(out));
    for (int i = 0; i < JSON_MAX_DEPTH; i++)
        json_obj_open(&j, "o");
    CHECK_EQ_I64(json_finish(&j), -ENOSPC);
}

TEST(json_misuse_is_reported)
{
    struct json j;

    json_begin(&j, out, sizeof(out));
    json_obj_close(&j);   /* the top level is json_finish()'s to close */
    CHECK_EQ_I64(json_finish(&j), -ENOSPC);

    json_begin(&j, out, sizeof(out));
    json_arr_open(&j, "a");
    json_obj_close(&j);   /* wrong kind */
    CHECK_EQ_I64(json_finish(&j), -ENOSPC);

    json_begin(&j, out, sizeof(out));
    json_elem_u64(&j, 1);   /* an element needs an array */
    CHECK_EQ_I64(json_finish(&j), -ENOSPC);

    json_begin(&j, out, sizeof(out));
    json_u64(&j, NULL, 1);   /* a member of an object needs a key */
    CHECK_EQ_I64(json_finish(&j), -ENOSPC);

    json_begin(&j, out, sizeof(out));
    CHECK_EQ_I64(json_finish(&j), 2);
    json_u64(&j, "late", 1);   /* after finish */
    CHECK_EQ_I64(json_finish(&j), -ENOSPC);

    json_begin(&j, NULL, 100);
    CHECK_EQ_I64(json_finish(&j), -ENOSPC);
}

/* ---- overflow at every size ------------------------------------------------------------- */

static void build_record(struct json *j, char *buf, size_t cap)
{
    json_begin(j, buf, cap);
    json_str(j, "type", "esc\"\\\n\x01 \xc3\xa9\xe2\x82\xac\xff!");
    json_u64(j, "n", 1234567890123ull);
    json_i64(j, "d", -42);
    json_hex(j, "addr", 0xfed00000u);
    json_fixed(j, "ppm", -5, 3);
    json_bool(j, "ok", true);
    json_null(j, "none");
    json_arr_open(j, "xs");
    json_elem_u64(j, 1);
    json_obj_open(j, NULL);
    json_str(j, "k", "v");
    json_obj_close(j);
    json_elem_str(j, "s");
    json_arr_close(j);
    json_obj_open(j, "inner");
    json_arr_open(j, "deep");
    /* left open: json_finish closes them, and that must fit too */
}

TEST(json_overflow_at_every_size)
{
    char full[BUF_SIZE];
    struct json j;
    int len;

    build_record(&j, full, sizeof(full));
    len = json_finish(&j);
    REQUIRE(len > 0);
    for (size_t cap = 0; cap <= (size_t)len + 1; cap++) {
        /* Exactly cap bytes on the heap: ASan stops the run on any byte past it. */
        char *buf = malloc(cap ? cap : 1);
        int n;

        REQUIRE(buf);
        build_record(&j, buf, cap);
        n = json_finish(&j);
        if (cap <= (size_t)len) {
            CHECK_EQ_I64(n, -ENOSPC);
            /* What is there is a clean, terminated prefix, never a stray byte. */
            if (cap > 0 && CHECK(strlen(buf) < cap))
                CHECK_EQ_MEM(buf, full, strlen(buf));
        } else {
            CHECK_EQ_I64(n, len);
            CHECK_EQ_STR(buf, full);
        }
        free(buf);
        if (test_failed) {
            printf("    at cap %zu of %d\n", cap, len);
            break;
        }
    }
}

/* ---- Python as the judge ---------------------------------------------------------------- */

TEST(json_python_member_types)
{
    struct pycheck pc;
    struct json j;
    char b1[64], b2[64], b3[64];

    REQUIRE(py_open(&pc));
    json_begin(&j, out, sizeof(out));
    json_str(&j, "s", "hi \"there\"");
    json_strn(&j, "n", "a\0b", 3);
    json_strn(&j, "nn", NULL, 5);
    json_u64(&j, "u0", 0);
    json_u64(&j, "umax", UINT64_MAX);
    json_i64(&j, "imin", INT64_MIN);
    json_i64(&j, "imax", INT64_MAX);
    json_i64(&j, "m1", -1);
    json_hex(&j, "h", UINT64_MAX);
    json_bool(&j, "t", true);
    json_bool(&j, "f", false);
    json_null(&j, "z");
    json_fixed(&j, "f0", -7, 0);
    json_fixed(&j, "f3", -5, 3);
    json_fixed(&j, "f9", INT64_MIN, 9);
    REQUIRE(json_finish(&j) > 0);
    py_expect(&pc, out,
              "{\"s\": %s, \"n\": %s, \"nn\": None, \"u0\": 0, \"umax\": %llu, "
              "\"imin\": %lld, \"imax\": %lld, \"m1\": -1, \"h\": %s, \"t\": True, "
              "\"f\": False, \"z\": None, \"f0\": -7, \"f3\": D(\"-0.005\"), "
              "\"f9\": D(\"-9223372036.854775808\")}",
              py_bytes(b1, "hi \"there\"", 10), py_bytes(b2, "a\0b", 3),
              (unsigned long long)UINT64_MAX, (long long)INT64_MIN, (long long)INT64_MAX,
              py_bytes(b3, "0xffffffffffffffff", 18));
    py_run(&pc);
}

TEST(json_python_nesting)
{
    struct pycheck pc;
    struct json j;

    REQUIRE(py_open(&pc));
    json_begin(&j, out, sizeof(out));
    json_arr_open(&j, "empty");
    json_arr_close(&j);
    json_obj_open(&j, "eo");
    json_obj_close(&j);
    json_arr_open(&j, "mix");
    json_elem_i64(&j, -3);
    json_elem_str(&j, NULL);
    json_arr_open(&j, NULL);
    json_arr_open(&j, NULL);
    json_elem_u64(&j, 9);
    json_arr_close(&j);
    json_arr_close(&j);
    json_obj_open(&j, NULL);
    json_fixed(&j, "x", 15, 1);
    json_obj_open(&j, "y");
    json_null(&j, "z");
    REQUIRE(json_finish(&j) > 0);
    py_expect(&pc, out, "{\"empty\": [], \"eo\": {}, \"mix\": [-3, None, [[9]], "
                        "{\"x\": D(\"1.5\"), \"y\": {\"z\": None}}]}");
    py_run(&pc);
}

/* One string value, raw bytes in, and Python decides what it must read as. */
static void expect_string(struct pycheck *pc, const void *s, size_t n)
{
    static char want_val[2 * 256 + 16], want_key[2 * 256 + 16];
    char key[256 + 1];
    size_t key_len = strnlen(s, n);   /* a key is a C string: it ends at a NUL */
    struct json j;

    REQUIRE(n <= 256);
    memcpy(key, s, key_len);
    key[key_len] = '\0';
    json_begin(&j, out, sizeof(out));
    json_strn(&j, "v", s, n);
    json_str(&j, key, "k");   /* keys are escaped the same way as values */
    if (!CHECK(json_finish(&j) > 0))
        return;
    py_bytes(want_val, s, n);
    py_bytes(want_key, s, key_len);
    if (key_len == 1 && key[0] == 'v')
        py_expect(pc, out, "{\"v\": %s}", "\"k\"");   /* the second "v" wins in Python */
    else
        py_expect(pc, out, "{\"v\": %s, %s: \"k\"}", want_val, want_key);
}

TEST(json_python_tricky_strings)
{
    static const char *const cases[] = {
        "", "\"", "\\", "\"\\\"", "/", "plain ascii",
        "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf",
        "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
        "\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf",
        "\xed\xa0\x80", "\xed\xbf\xbf", "\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf",
        "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80", "\xfe", "\xff",
        "\xc3", "\xe2\x82", "\xf0\x9f\x98", "x\xc3", "\xe2\x82" "A", "\xf0\x9f\xc3\xa9",
        "\xe2\x28\xa1", "\xc3\xc3\xa9", "\xf0\x9f\x98\x80\x80", "\xef\xbb\xbf" "bom",
        "\xe2\x80\xa8\xe2\x80\xa9",   /* U+2028/9: legal in JSON, not in old JavaScript */
    };
    struct pycheck pc;
    char all_ascii[128];

    REQUIRE(py_open(&pc));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_string(&pc, cases[i], strlen(cases[i]));
    for (int c = 0; c < 128; c++)
        all_ascii[c] = (char)c;   /* with the NUL, through json_strn */
    expect_string(&pc, all_ascii, sizeof(all_ascii));
    for (int c = 0; c < 256; c++) {
        char one = (char)c;
        expect_string(&pc, &one, 1);
    }
    py_run(&pc);
}

/* Random bytes, mostly >= 0x80 and mostly sequence-shaped, so that every UTF-8 path runs. */
TEST(json_python_random_bytes)
{
    static const uint8_t pieces[] = { 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2,
                                      0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1,
                                      0xf3, 0xf4, 0xf5, 0xff, 0x00, 0x1f, 0x22, 0x5c, 0x41 };
    uint32_t state = 2463534242u;
    struct pycheck pc;

    REQUIRE(py_open(&pc));
    for (int t = 0; t < 3000; t++) {
        uint8_t s[40];
        size_t n;

        state ^= state << 13, state ^= state >> 17, state ^= state << 5;
        n = state % sizeof(s);
        for (size_t i = 0; i < n; i++) {
            state ^= state << 13, state ^= state >> 17, state ^= state << 5;
            s[i] = (state & 1) ? pieces[(state >> 1) % sizeof(pieces)] : (uint8_t)(state >> 8);
        }
        expect_string(&pc, s, n);
    }
    py_run(&pc);
}
