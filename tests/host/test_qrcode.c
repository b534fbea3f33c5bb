/* tests/host/test_qrcode.c - lib/qrcode.c against independent implementations: every
 * symbol drawn as an image and read back by zbar (zbarimg, Debian's zbar-tools), and the
 * whole module matrix compared bit for bit with Debian's qrencode for the same data,
 * version and level (qrencode picks its own mask; ours is forced to each in turn and one
 * must match). Both programs are in the test package set (scripts/setup-deps.sh test). */
#define _XOPEN_SOURCE 700   /* popen, mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ticklab/errno.h"
#include "ticklab/qrcode.h"
#include "test.h"

#define SCALE 3      /* pixels per module in the test images */
#define QUIET 4      /* modules of light border, as the standard asks */

static struct qr_code q, q2;

static bool tool_present(const char *cmd)
{
    char line[128];
    snprintf(line, sizeof(line), "command -v %s >/dev/null 2>&1", cmd);
    return system(line) == 0;
}

static void fill(uint8_t *buf, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        buf[i] = (uint8_t)x;
    }
}

static bool write_pgm(const struct qr_code *c, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    unsigned w = (c->size + 2 * QUIET) * SCALE;
    fprintf(f, "P5\n%u %u\n255\n", w, w);
    for (unsigned py = 0; py < w; py++) {
        for (unsigned px = 0; px < w; px++) {
            int x = (int)(px / SCALE) - QUIET, y = (int)(py / SCALE) - QUIET;
            bool d = x >= 0 && y >= 0 && x < (int)c->size && y < (int)c->size &&
                     qr_dark(c, (unsigned)x, (unsigned)y);
            fputc(d ? 0 : 255, f);
        }
    }
    return fclose(f) == 0;
}

/* zbar's reading of the image, raw bytes (-Sbinary: no character set guessing, and no
 * newline after the symbol's bytes). -1 when it read nothing. */
static long zbar_read(const char *path, uint8_t *out, size_t cap)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "zbarimg --quiet --raw -Sdisable -Sqrcode.enable -Sbinary %s 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, cap, p);
    int st = pclose(p);
    if (st != 0 || n == 0)
        return -1;
    return (long)n;
}

static char dir[64];

static const char *tmpdir(void)
{
    if (!dir[0]) {
        snprintf(dir, sizeof(dir), "/tmp/ticklab-qr-XXXXXX");
        if (!mkdtemp(dir))
            dir[0] = 0;
    }
    return dir;
}

TEST(qrcode_capacities_match_the_standard)
{
    /* table 7's byte-mode capacities */
    CHECK_EQ_U64(qr_byte_capacity(1, QR_ECC_L), 17);
    CHECK_EQ_U64(qr_byte_capacity(1, QR_ECC_H), 7);
    CHECK_EQ_U64(qr_byte_capacity(7, QR_ECC_M), 122);
    CHECK_EQ_U64(qr_byte_capacity(10, QR_ECC_M), 213);
    CHECK_EQ_U64(qr_byte_capacity(25, QR_ECC_M), 997);
    CHECK_EQ_U64(qr_byte_capacity(40, QR_ECC_L), 2953);
    CHECK_EQ_U64(qr_byte_capacity(40, QR_ECC_M), 2331);
    CHECK_EQ_U64(qr_byte_capacity(40, QR_ECC_H), 1273);
    CHECK_EQ_U64(qr_byte_capacity(0, QR_ECC_L), 0);
    CHECK_EQ_U64(qr_byte_capacity(41, QR_ECC_L), 0);
}

TEST(qrcode_rejects_bad_arguments)
{
    uint8_t b[32] = { 0 };
    CHECK_EQ_I64(qr_encode(&q, b, 18, 1, QR_ECC_L, -1), -E2BIG);
    CHECK_EQ_I64(qr_encode(&q, b, 1, 0, QR_ECC_L, -1), -EINVAL);
    CHECK_EQ_I64(qr_encode(&q, b, 1, 41, QR_ECC_L, -1), -EINVAL);
    CHECK_EQ_I64(qr_encode(&q, b, 1, 1, QR_ECC_L, 8), -EINVAL);
    CHECK_EQ_I64(qr_encode(&q, b, 1, 1, (enum qr_ecc)4, -1), -EINVAL);
    CHECK_EQ_I64(qr_encode(&q, b, 17, 1, QR_ECC_L, -1), 0);
}

/* The chosen mask has the lowest penalty of the eight. */
TEST(qrcode_mask_choice_is_the_lowest_penalty)
{
    uint8_t b[100];
    fill(b, 60, 7);
    REQUIRE(qr_encode(&q, b, 60, 5, QR_ECC_Q, -1) == 0);
    unsigned chosen = qr_penalty(&q);
    for (int m = 0; m < 8; m++) {
        REQUIRE(qr_encode(&q2, b, 60, 5, QR_ECC_Q, m) == 0);
        CHECK(qr_penalty(&q2) >= chosen);
    }
}

/* Every version, the four levels in turn, lengths from empty to full, through zbar. */
TEST(qrcode_zbar_reads_every_version)
{
    if (!tool_present("zbarimg")) {
        test_fail(__FILE__, __LINE__, "zbarimg missing: Debian package zbar-tools "
                  "(scripts/setup-deps.sh test)");
        return;
    }
    static uint8_t data[3000], back[3100];
    char path[128];
    unsigned failures = 0;
    for (unsigned v = 1; v <= QR_VERSION_MAX; v++) {
        enum qr_ecc e = (enum qr_ecc)(v % 4);
        size_t cap = qr_byte_capacity(v, e);
        size_t len = v == 1 ? 1 : v % 3 == 0 ? cap : v % 3 == 1 ? cap / 2 : cap - 1;
        fill(data, len, v);
        REQUIRE(qr_encode(&q, data, len, v, e, -1) == 0);
        snprintf(path, sizeof(path), "%s/v%02u.pgm", tmpdir(), v);
        REQUIRE(write_pgm(&q, path));
        long n = zbar_read(path, back, sizeof(back));
        if (!CHECK(n == (long)len && memcmp(back, data, len) == 0)) {
            fprintf(stderr, "  version %u level %d mask %u, %zu bytes: zbar read %ld\n", v,
                    (int)e, q.mask, len, n);
            failures++;
        } else {
            unlink(path);
        }
    }
    CHECK_EQ_U64(failures, 0);
}

/* Every mask and level at one version, through zbar. */
TEST(qrcode_zbar_reads_every_mask_and_level)
{
    if (!tool_present("zbarimg"))
        return;                      /* said once, above */
    static uint8_t data[400], back[500];
    char path[128];
    for (int m = 0; m < 8; m++) {
        for (int e = 0; e < 4; e++) {
            size_t len = qr_byte_capacity(8, (enum qr_ecc)e) - (size_t)m;
            fill(data, len, (unsigned)(m * 4 + e + 100));
            REQUIRE(qr_encode(&q, data, len, 8, (enum qr_ecc)e, m) == 0);
            snprintf(path, sizeof(path), "%s/m%d%d.pgm", tmpdir(), m, e);
            REQUIRE(write_pgm(&q, path));
            long n = zbar_read(path, back, sizeof(back));
            if (CHECK(n == (long)len && memcmp(back, data, len) == 0))
                unlink(path);
            else
                fprintf(stderr, "  mask %d level %d: zbar read %ld of %zu\n", m, e, n, len);
        }
    }
}

/* qrencode's matrix for the same bytes, version and level: "-t ASCII -m 0" draws each dark
 * module as "##" and a light one as two spaces, one row a line. */
static bool qrencode_matrix(const char *bytes_path, unsigned v, char lvl, uint8_t *mat,
                            unsigned *size)
{
    char cmd[512], line[2 * QR_SIZE_MAX + 8];
    snprintf(cmd, sizeof(cmd), "qrencode -8 -v %u -l %c -m 0 -t ASCII -r %s -o -", v, lvl,
             bytes_path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    unsigned rows = 0, width = 0;
    while (fgets(line, sizeof(line), p) && rows < QR_SIZE_MAX) {
        size_t n = strcspn(line, "\n");
        width = (unsigned)(n / 2);
        for (unsigned x = 0; x < width && x < QR_SIZE_MAX; x++)
            mat[rows * QR_SIZE_MAX + x] = line[2 * x] == '#';
        rows++;
    }
    *size = rows;
    return pclose(p) == 0 && rows == width && rows > 0;
}

TEST(qrcode_matches_qrencode_bit_for_bit)
{
    if (!tool_present("qrencode")) {
        test_fail(__FILE__, __LINE__, "qrencode missing: Debian package qrencode "
                  "(scripts/setup-deps.sh test)");
        return;
    }
    static const struct { unsigned v; enum qr_ecc e; size_t len; } cases[] = {
        { 1, QR_ECC_M, 5 }, { 2, QR_ECC_L, 30 }, { 5, QR_ECC_Q, 40 }, { 7, QR_ECC_H, 60 },
        { 10, QR_ECC_M, 200 }, { 15, QR_ECC_L, 500 }, { 22, QR_ECC_Q, 565 },
        { 32, QR_ECC_M, 1500 }, { 40, QR_ECC_M, 2331 }, { 40, QR_ECC_L, 2953 },
    };
    static uint8_t data[3000], mat[QR_SIZE_MAX * QR_SIZE_MAX];
    char path[128];
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        unsigned v = cases[c].v;
        fill(data, cases[c].len, (unsigned)c + 500);
        snprintf(path, sizeof(path), "%s/in%zu.bin", tmpdir(), c);
        FILE *f = fopen(path, "wb");
        REQUIRE(f && fwrite(data, 1, cases[c].len, f) == cases[c].len && fclose(f) == 0);
        unsigned size = 0;
        REQUIRE(qrencode_matrix(path, v, "LMQH"[cases[c].e], mat, &size));
        unlink(path);
        REQUIRE(CHECK_EQ_U64(size, 17 + 4 * v));
        int same = -1;
        for (int m = 0; m < 8 && same < 0; m++) {
            REQUIRE(qr_encode(&q, data, cases[c].len, v, cases[c].e, m) == 0);
            bool eq = true;
            for (unsigned y = 0; y < size && eq; y++)
                for (unsigned x = 0; x < size && eq; x++)
                    eq = qr_dark(&q, x, y) == mat[y * QR_SIZE_MAX + x];
            if (eq)
                same = m;
        }
        if (!CHECK(same >= 0))
            fprintf(stderr, "  version %u level %d: no mask reproduces qrencode's symbol\n", v,
                    (int)cases[c].e);
    }
}
