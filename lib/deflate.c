/* lib/deflate.c - see deflate.h. */
#include "ticklab/deflate.h"

#include <stdbool.h>

#include "ticklab/errno.h"
#include "ticklab/kstring.h"

#define MIN_MATCH 3
#define MAX_MATCH 258

/* RFC 1951 3.2.5: length codes 257..285 and distance codes 0..29, their bases and extra
 * bits. */
static const uint16_t len_base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                       15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                       67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t dist_base[30] = { 1,    2,    3,    4,    5,    7,     9,     13,
                                        17,   25,   33,   49,   65,   97,    129,   193,
                                        257,  385,  513,  769,  1025, 1537,  2049,  3073,
                                        4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

struct bits {
    uint8_t *out;
    size_t cap, at;
    uint32_t acc;            /* pending bits, the first to go in the lowest position */
    unsigned n;
    bool full;
};

/* Values go out least significant bit first (RFC 1951 3.1.1). */
static void put(struct bits *b, uint32_t value, unsigned n)
{
    b->acc |= value << b->n;
    b->n += n;
    while (b->n >= 8) {
        if (b->at < b->cap)
            b->out[b->at++] = (uint8_t)b->acc;
        else
            b->full = true;
        b->acc >>= 8;
        b->n -= 8;
    }
}

/* Huffman codes go out most significant bit first: reversed into put()'s order. */
static void put_code(struct bits *b, uint32_t code, unsigned n)
{
    uint32_t r = 0;
    for (unsigned i = 0; i < n; i++)
        r |= ((code >> i) & 1) << (n - 1 - i);
    put(b, r, n);
}

/* RFC 1951 3.2.6's fixed literal/length code. */
static void put_symbol(struct bits *b, unsigned sym)
{
    if (sym < 144)
        put_code(b, 0x30 + sym, 8);
    else if (sym < 256)
        put_code(b, 0x190 + sym - 144, 9);
    else if (sym < 280)
        put_code(b, sym - 256, 7);
    else
        put_code(b, 0xC0 + sym - 280, 8);
}

static void put_match(struct bits *b, unsigned len, unsigned dist)
{
    unsigned l = 28;
    while (len_base[l] > len)
        l--;
    put_symbol(b, 257 + l);
    put(b, len - len_base[l], len_extra[l]);
    unsigned d = 29;
    while (dist_base[d] > dist)
        d--;
    put_code(b, d, 5);                       /* fixed distance codes: 5 bits each */
    put(b, dist - dist_base[d], dist_extra[d]);
}

static uint32_t hash3(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - 15);
}

static void insert(struct deflate_state *st, const uint8_t *in, size_t pos)
{
    uint32_t h = hash3(in + pos);
    st->prev[pos % DEFLATE_WINDOW] = st->head[h];
    st->head[h] = (uint32_t)pos + 1;
}

/* The longest earlier match for in[pos..] within the window, its distance in *dist. */
static unsigned longest(const struct deflate_state *st, const uint8_t *in, size_t n, size_t pos,
                        unsigned *dist)
{
    size_t max = n - pos < MAX_MATCH ? n - pos : MAX_MATCH;
    unsigned best = 0;
    uint32_t cand = st->head[hash3(in + pos)];
    for (unsigned tries = 0; cand && tries < DEFLATE_CHAIN; tries++) {
        size_t c = cand - 1;
        if (c >= pos || pos - c > DEFLATE_WINDOW)
            break;
        unsigned l = 0;
        while (l < max && in[c + l] == in[pos + l])
            l++;
        if (l > best) {
            best = l;
            *dist = (unsigned)(pos - c);
            if (l == max)
                break;
        }
        uint32_t next = st->prev[c % DEFLATE_WINDOW];
        if (next >= cand)                    /* the slot was reused: the chain ends */
            break;
        cand = next;
    }
    return best;
}

uint32_t adler32_update(uint32_t a, const uint8_t *p, size_t len)
{
    uint32_t s1 = a & 0xFFFF, s2 = a >> 16;
    while (len) {
        size_t k = len < 5552 ? len : 5552;  /* the most sums before s2 can pass 2^32 */
        len -= k;
        while (k--) {
            s1 += *p++;
            s2 += s1;
        }
        s1 %= 65521;
        s2 %= 65521;
    }
    return s2 << 16 | s1;
}

long zlib_compress(struct deflate_state *st, const uint8_t *in, size_t n, uint8_t *out,
                   size_t cap)
{
    struct bits b = { out, cap, 0, 0, 0, false };
    memset(st->head, 0, sizeof(st->head));
    put(&b, 0x78, 8);                        /* CM 8 (deflate), CINFO 7 (32 KiB window) */
    put(&b, 0x01, 8);                        /* FLEVEL 0, no dictionary; 0x7801 % 31 == 0 */
    put(&b, 1, 1);                           /* BFINAL */
    put(&b, 1, 2);                           /* BTYPE 01: fixed Huffman codes */
    size_t pos = 0;
    while (pos < n && !b.full) {
        unsigned dist = 0, len = 0;
        if (n - pos >= MIN_MATCH) {
            len = longest(st, in, n, pos, &dist);
            insert(st, in, pos);
        }
        if (len >= MIN_MATCH) {
            put_match(&b, len, dist);
            for (size_t i = pos + 1; i < pos + len && n - i >= MIN_MATCH; i++)
                insert(st, in, i);
            pos += len;
        } else {
            put_symbol(&b, in[pos]);
            pos++;
        }
    }
    put_symbol(&b, 256);                     /* end of block */
    if (b.n)
        put(&b, 0, 8 - b.n);                 /* to a byte boundary */
    uint32_t a = adler32_update(1, in, n);
    for (int shift = 24; shift >= 0; shift -= 8)
        put(&b, (a >> shift) & 0xFF, 8);     /* big-endian, RFC 1950 */
    return b.full ? -ENOSPC : (long)b.at;
}
