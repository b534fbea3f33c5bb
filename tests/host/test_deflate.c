/* tests/host/test_deflate.c - lib/deflate.c's streams read back by an independent inflater:
 * Python's zlib (the one `tools/ticklab decode` uses), through /usr/bin/python3. */
#define _XOPEN_SOURCE 700   /* popen, mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ticklab/deflate.h"
#include "ticklab/errno.h"
#include "test.h"

static struct deflate_state st;
static uint8_t in[300000], out[340000], back[300000];

/* Python's zlib.decompress of the stream; the bytes it gave, or -1 when it refused. */
static long python_inflate(const uint8_t *z, size_t n, uint8_t *dst, size_t cap)
{
    char path[64] = "/tmp/ticklab-deflate-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "wb");
    bool ok = f && fwrite(z, 1, n, f) == n;
    if (f)
        fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"import sys,zlib; sys.stdout.buffer.write("
             "zlib.decompress(open('%s','rb').read()))\" 2>/dev/null", path);
    FILE *p = ok ? popen(cmd, "r") : NULL;
    long got = -1;
    if (p) {
        size_t r = fread(dst, 1, cap, p);
        got = pclose(p) == 0 ? (long)r : -1;
    }
    unlink(path);
    return got;
}

static void round_trip(const uint8_t *data, size_t n, const char *what)
{
    long z = zlib_compress(&st, data, n, out, sizeof(out));
    if (!CHECK(z > 0)) {
        fprintf(stderr, "  %s: compress gave %ld\n", what, z);
        return;
    }
    long got = python_inflate(out, (size_t)z, back, sizeof(back));
    if (!CHECK(got == (long)n && memcmp(back, data, n) == 0))
        fprintf(stderr, "  %s: %zu bytes -> %ld -> python read %ld\n", what, n, z, got);
}

static size_t records_like(uint8_t *buf, size_t cap)
{
    size_t at = 0;
    for (unsigned i = 0; at + 200 < cap; i++)
        at += (size_t)snprintf((char *)buf + at, cap - at,
                               "TLR %08x {\"type\":\"result\",\"exp\":\"wakeup-latency\","
                               "\"device\":\"hpet\",\"p50_ns\":%u,\"p99_ns\":%u}\n",
                               i * 2654435761u, 1000 + i % 97, 5000 + (i * 7919) % 1013);
    return at;
}

TEST(deflate_python_reads_every_shape)
{
    round_trip(in, 0, "empty");
    in[0] = 'x';
    round_trip(in, 1, "one byte");
    round_trip((const uint8_t *)"abcabcabcabcabcabcabcabc", 24, "short repeat");
    memset(in, 'a', 100000);
    round_trip(in, 100000, "one byte repeated (length 258, distance 1)");
    uint32_t x = 12345;
    for (size_t i = 0; i < 70000; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        in[i] = (uint8_t)x;
    }
    round_trip(in, 70000, "random (literals only, all 256 values)");
    for (size_t i = 0; i < 200000; i++)   /* matches at every distance up to the window */
        in[i] = (uint8_t)(i % 32771 < 40000 ? (i * 31) % 251 : i);
    round_trip(in, 200000, "long-distance repeats");
    size_t n = records_like(in, sizeof(in));
    round_trip(in, n, "records");
    /* symbol i about 2^-i of the time: a Huffman code deeper than 15 bits, which the
     * builder must flatten (and 4 blocks of codes of their own) */
    for (size_t i = 0; i < 250000; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        in[i] = (uint8_t)(x ? __builtin_ctz(x) : 32);
    }
    round_trip(in, 250000, "skewed symbols, several blocks");
}

TEST(deflate_compresses_records_and_says_when_out_is_short)
{
    size_t n = records_like(in, 150000);
    long z = zlib_compress(&st, in, n, out, sizeof(out));
    REQUIRE(z > 0);
    CHECK((size_t)z * 4 < n);                       /* JSON lines shrink at least 4:1 */
    CHECK_EQ_I64(zlib_compress(&st, in, n, out, (size_t)z - 1), -ENOSPC);
    CHECK_EQ_I64(zlib_compress(&st, in, n, out, (size_t)z), z);
}

TEST(deflate_adler32_known_values)
{
    CHECK_EQ_U64(adler32_update(1, (const uint8_t *)"Wikipedia", 9), 0x11E60398u);
    CHECK_EQ_U64(adler32_update(1, NULL, 0), 1);
    memset(in, 0xFF, 100000);                       /* the s2 overflow bound, checked */
    uint32_t s1 = 1, s2 = 0;
    for (size_t i = 0; i < 100000; i++) {
        s1 = (s1 + 0xFF) % 65521;
        s2 = (s2 + s1) % 65521;
    }
    CHECK_EQ_U64(adler32_update(1, in, 100000), s2 << 16 | s1);
}
