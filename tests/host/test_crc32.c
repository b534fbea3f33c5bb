/* tests/host/test_crc32.c - lib/crc32.c against published check values and against the
 * bitwise definition of the CRC. */
#include <stdlib.h>

#include "ticklab/crc32.h"
#include "test.h"

static uint32_t crc_of(const char *s)
{
    return crc32_update(0, s, strlen(s));
}

/* The definition, one bit at a time, written independently of the table. */
static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;

    while (n--) {
        crc ^= *p++;
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    return ~crc;
}

TEST(crc32_published_vectors)
{
    CHECK_EQ_U64(crc_of("123456789"), 0xcbf43926u);   /* the CRC catalogue's check value */
    CHECK_EQ_U64(crc_of(""), 0);
    CHECK_EQ_U64(crc32_update(0, NULL, 0), 0);
    CHECK_EQ_U64(crc_of("a"), 0xe8b7be43u);
    CHECK_EQ_U64(crc_of("The quick brown fox jumps over the lazy dog"), 0x414fa339u);
}

/* Leading zeros must change the CRC, or a record that lost its head would still match. */
TEST(crc32_zero_bytes_count)
{
    static const uint8_t zeros[4];

    CHECK_EQ_U64(crc32_update(0, zeros, 1), 0xd202ef8du);
    CHECK_EQ_U64(crc32_update(0, zeros, 4), 0x2144df1cu);
}

TEST(crc32_incremental_equals_one_shot)
{
    const char *s = "The quick brown fox jumps over the lazy dog";
    size_t n = strlen(s);
    uint32_t whole = crc32_update(0, s, n);

    for (size_t split = 0; split <= n; split++) {
        uint32_t part = crc32_update(crc32_update(0, s, split), s + split, n - split);
        if (!CHECK_EQ_U64(part, whole))
            printf("    split at %zu\n", split);
    }
}

TEST(crc32_1mib_matches_bitwise_definition)
{
    size_t n = 1u << 20;
    uint8_t *buf = malloc(n);
    uint32_t state = 0x12345678u, crc = 0;

    REQUIRE(buf);
    for (size_t i = 0; i < n; i++) {
        state = state * 1103515245u + 12345u;   /* any fixed byte mix will do */
        buf[i] = (uint8_t)(state >> 16);
    }
    CHECK_EQ_U64(crc32_update(0, buf, n), crc32_bitwise(buf, n));
    /* Uneven chunks cross every table-lookup alignment. */
    for (size_t off = 0, chunk = 1; off < n; off += chunk, chunk = chunk * 3 % 4093 + 1)
        crc = crc32_update(crc, buf + off, off + chunk > n ? n - off : chunk);
    CHECK_EQ_U64(crc, crc32_bitwise(buf, n));
    free(buf);
}
