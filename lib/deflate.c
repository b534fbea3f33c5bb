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

/* ---- Huffman codes --------------------------------------------------------------------- */

#define N_LIT   286
#define N_DIST  30
#define N_CL    19
#define MATCH   0x80000000u    /* a sym entry: MATCH | (len - 3) << 15 | (dist - 1) */

struct tree {
    uint16_t code[N_LIT];
    uint8_t len[N_LIT];
};

/* Code lengths of an optimal prefix code for freq[0, n), none longer than max_bits: Huffman's
 * merge of the two lightest (a linear scan: n <= 286), each symbol's depth its length; too
 * deep, the weights are halved (kept non-zero) and it is built again. At least two symbols
 * get a code, so the code is complete, as inflaters want. */
static void build_lengths(uint32_t *freq, unsigned n, unsigned max_bits, uint8_t *len)
{
    /* static: one compression at a time (the kernel's end of run), off the small stack */
    static uint32_t w[2 * N_LIT];
    static int16_t parent[2 * N_LIT];
    static bool alive[2 * N_LIT];
    unsigned nz = 0;
    for (unsigned i = 0; i < n; i++)
        nz += freq[i] != 0;
    for (unsigned i = 0; nz < 2 && i < n; i++) {
        if (!freq[i])
            freq[i] = 1, nz++;
    }
    for (;;) {
        unsigned nodes = n;
        for (unsigned i = 0; i < n; i++) {
            w[i] = freq[i];
            alive[i] = freq[i] != 0;
            parent[i] = -1;
        }
        for (unsigned left = nz; left > 1; left--) {
            int a = -1, b = -1;
            for (unsigned i = 0; i < nodes; i++) {
                if (!alive[i])
                    continue;
                if (a < 0 || w[i] < w[a])
                    b = a, a = (int)i;
                else if (b < 0 || w[i] < w[b])
                    b = (int)i;
            }
            w[nodes] = w[a] + w[b];
            alive[nodes] = true;
            parent[nodes] = -1;
            alive[a] = alive[b] = false;
            parent[a] = parent[b] = (int16_t)nodes;
            nodes++;
        }
        unsigned deepest = 0;
        for (unsigned i = 0; i < n; i++) {
            unsigned d = 0;
            for (int k = freq[i] ? (int)i : -1; k >= 0 && parent[k] >= 0; k = parent[k])
                d++;
            len[i] = (uint8_t)d;
            if (d > deepest)
                deepest = d;
        }
        if (deepest <= max_bits)
            return;
        for (unsigned i = 0; i < n; i++)
            if (freq[i])
                freq[i] = (freq[i] >> 1) | 1;
    }
}

/* RFC 1951 3.2.2: canonical codes from the lengths. */
static void make_codes(struct tree *t, unsigned n)
{
    uint16_t count[16] = { 0 }, next[16];
    for (unsigned i = 0; i < n; i++)
        count[t->len[i]]++;
    count[0] = 0;
    unsigned code = 0;
    for (unsigned bits = 1; bits < 16; bits++) {
        code = (code + count[bits - 1]) << 1;
        next[bits] = (uint16_t)code;
    }
    for (unsigned i = 0; i < n; i++)
        if (t->len[i])
            t->code[i] = next[t->len[i]]++;
}

static unsigned len_code(unsigned len)
{
    unsigned l = 28;
    while (len_base[l] > len)
        l--;
    return l;
}

static unsigned dist_code(unsigned dist)
{
    unsigned d = 29;
    while (dist_base[d] > dist)
        d--;
    return d;
}

/* The code-length sequence (literal/length lengths then distance lengths) run-length coded
 * with symbols 16 (repeat the last 3-6 times), 17 (3-10 zeros), 18 (11-138 zeros). Returns
 * the number of entries in rle (symbol | extra value << 8). */
static unsigned rle_lengths(const uint8_t *lens, unsigned n, uint16_t *rle)
{
    unsigned out = 0;
    for (unsigned i = 0; i < n;) {
        unsigned run = 1;
        while (i + run < n && lens[i + run] == lens[i])
            run++;
        if (lens[i] == 0 && run >= 3) {
            unsigned r = run > 138 ? 138 : run;
            rle[out++] = r >= 11 ? (uint16_t)(18 | (r - 11) << 8) : (uint16_t)(17 | (r - 3) << 8);
            i += r;
        } else if (lens[i] != 0 && run >= 4) {
            rle[out++] = lens[i];               /* the value once, then repeats of it */
            unsigned r = run - 1 > 6 ? 6 : run - 1;
            rle[out++] = (uint16_t)(16 | (r - 3) << 8);
            i += 1 + r;
        } else {
            rle[out++] = lens[i];
            i++;
        }
    }
    return out;
}

static void put_block(struct bits *b, const uint32_t *sym, unsigned nsym, bool last)
{
    static const uint8_t cl_order[N_CL] = { 16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                            11, 4,  12, 3, 13, 2, 14, 1, 15 };
    static uint32_t flit[N_LIT], fdist[N_DIST], fcl[N_CL];
    static struct tree lit, dist, cl;
    static uint8_t lens[N_LIT + N_DIST];
    static uint16_t rle[N_LIT + N_DIST];
    memset(flit, 0, sizeof(flit));
    memset(fdist, 0, sizeof(fdist));
    memset(fcl, 0, sizeof(fcl));
    memset(&lit, 0, sizeof(lit));
    memset(&dist, 0, sizeof(dist));
    memset(&cl, 0, sizeof(cl));
    for (unsigned i = 0; i < nsym; i++) {
        if (sym[i] & MATCH) {
            flit[257 + len_code(((sym[i] >> 15) & 0xFF) + 3)]++;
            fdist[dist_code((sym[i] & 0x7FFF) + 1)]++;
        } else {
            flit[sym[i]]++;
        }
    }
    flit[256] = 1;
    build_lengths(flit, N_LIT, 15, lit.len);
    build_lengths(fdist, N_DIST, 15, dist.len);
    make_codes(&lit, N_LIT);
    make_codes(&dist, N_DIST);
    unsigned hlit = N_LIT, hdist = N_DIST;
    while (hlit > 257 && !lit.len[hlit - 1])
        hlit--;
    while (hdist > 1 && !dist.len[hdist - 1])
        hdist--;
    memcpy(lens, lit.len, hlit);
    memcpy(lens + hlit, dist.len, hdist);
    unsigned nrle = rle_lengths(lens, hlit + hdist, rle);
    for (unsigned i = 0; i < nrle; i++)
        fcl[rle[i] & 0xFF]++;
    build_lengths(fcl, N_CL, 7, cl.len);
    make_codes(&cl, N_CL);
    unsigned hclen = N_CL;
    while (hclen > 4 && !cl.len[cl_order[hclen - 1]])
        hclen--;
    put(b, last, 1);
    put(b, 2, 2);                            /* BTYPE 10: dynamic Huffman codes */
    put(b, hlit - 257, 5);
    put(b, hdist - 1, 5);
    put(b, hclen - 4, 4);
    for (unsigned i = 0; i < hclen; i++)
        put(b, cl.len[cl_order[i]], 3);
    static const uint8_t rle_extra[3] = { 2, 3, 7 };
    for (unsigned i = 0; i < nrle; i++) {
        unsigned s = rle[i] & 0xFF;
        put_code(b, cl.code[s], cl.len[s]);
        if (s >= 16)
            put(b, rle[i] >> 8, rle_extra[s - 16]);
    }
    for (unsigned i = 0; i < nsym; i++) {
        if (sym[i] & MATCH) {
            unsigned l = ((sym[i] >> 15) & 0xFF) + 3, d = (sym[i] & 0x7FFF) + 1;
            unsigned lc = len_code(l), dc = dist_code(d);
            put_code(b, lit.code[257 + lc], lit.len[257 + lc]);
            put(b, l - len_base[lc], len_extra[lc]);
            put_code(b, dist.code[dc], dist.len[dc]);
            put(b, d - dist_base[dc], dist_extra[dc]);
        } else {
            put_code(b, lit.code[sym[i]], lit.len[sym[i]]);
        }
    }
    put_code(b, lit.code[256], lit.len[256]);   /* end of block */
}

long zlib_compress(struct deflate_state *st, const uint8_t *in, size_t n, uint8_t *out,
                   size_t cap)
{
    struct bits b = { out, cap, 0, 0, 0, false };
    memset(st->head, 0, sizeof(st->head));
    put(&b, 0x78, 8);                        /* CM 8 (deflate), CINFO 7 (32 KiB window) */
    put(&b, 0x01, 8);                        /* FLEVEL 0, no dictionary; 0x7801 % 31 == 0 */
    size_t pos = 0;
    do {
        unsigned nsym = 0;
        while (pos < n && nsym < DEFLATE_BLOCK) {
            unsigned dist = 0, len = 0;
            if (n - pos >= MIN_MATCH) {
                len = longest(st, in, n, pos, &dist);
                insert(st, in, pos);
            }
            if (len >= MIN_MATCH) {
                st->sym[nsym++] = MATCH | (len - 3) << 15 | (dist - 1);
                for (size_t i = pos + 1; i < pos + len && n - i >= MIN_MATCH; i++)
                    insert(st, in, i);
                pos += len;
            } else {
                st->sym[nsym++] = in[pos++];
            }
        }
        put_block(&b, st->sym, nsym, pos >= n);
    } while (pos < n && !b.full);
    if (b.n)
        put(&b, 0, 8 - b.n);                 /* to a byte boundary */
    uint32_t a = adler32_update(1, in, n);
    for (int shift = 24; shift >= 0; shift -= 8)
        put(&b, (a >> shift) & 0xFF, 8);     /* big-endian, RFC 1950 */
    return b.full ? -ENOSPC : (long)b.at;
}
