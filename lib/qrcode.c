/* lib/qrcode.c - see qrcode.h. Coordinates are (x, y): column, row; (0, 0) top left. */
#include "ticklab/qrcode.h"

#include "ticklab/errno.h"
#include "ticklab/kstring.h"

/* ISO/IEC 18004 table 9, by level (L, M, Q, H) and version (index 0 unused): the ECC
 * codewords of each block, and the number of blocks. */
static const uint8_t ecc_per_block[4][QR_VERSION_MAX + 1] = {
    { 0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
      28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 },
    { 0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
      26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28 },
    { 0, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
      28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 },
    { 0, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
      30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 },
};
static const uint8_t blocks[4][QR_VERSION_MAX + 1] = {
    { 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
      8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25 },
    { 0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
      17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49 },
    { 0, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
      23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68 },
    { 0, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
      25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81 },
};
/* The two format-information bits of each level (table 12): L 01, M 00, Q 11, H 10. */
static const uint8_t ecc_format_bits[4] = { 1, 0, 3, 2 };

/* ---- GF(256) and Reed-Solomon ------------------------------------------------------- */

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
    unsigned r = 0, x = a;
    for (; b; b >>= 1) {            /* shift-and-add, reducing by 0x11D as x overflows */
        if (b & 1)
            r ^= x;
        x <<= 1;
        if (x & 0x100)
            x ^= 0x11D;
    }
    return (uint8_t)r;
}

/* The generator polynomial prod (x - alpha^i), i < n, as its n low coefficients (the
 * leading 1 is implied), highest degree first. */
static void rs_generator(uint8_t *g, unsigned n)
{
    memset(g, 0, n);
    g[n - 1] = 1;                   /* the polynomial "1" */
    uint8_t root = 1;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < n; j++) {   /* g = g * x + root * g */
            g[j] = gf_mul(g[j], root);
            if (j + 1 < n)
                g[j] ^= g[j + 1];
        }
        root = gf_mul(root, 2);
    }
}

/* The remainder of data(x) * x^n divided by g(x): the block's n ECC codewords. */
static void rs_remainder(const uint8_t *data, unsigned len, const uint8_t *g, unsigned n,
                         uint8_t *ecc)
{
    memset(ecc, 0, n);
    for (unsigned i = 0; i < len; i++) {
        uint8_t f = data[i] ^ ecc[0];
        memmove(ecc, ecc + 1, n - 1);
        ecc[n - 1] = 0;
        for (unsigned j = 0; j < n; j++)
            ecc[j] ^= gf_mul(g[j], f);
    }
}

/* ---- function patterns -------------------------------------------------------------- */

static void set_func(struct qr_code *q, int x, int y, bool dark)
{
    if (x < 0 || y < 0 || x >= (int)q->size || y >= (int)q->size)
        return;
    q->mod[y * q->size + x] = (uint8_t)(QR_FUNC | (dark ? QR_DARK : 0));
}

static bool is_func(const struct qr_code *q, unsigned x, unsigned y)
{
    return q->mod[y * q->size + x] & QR_FUNC;
}

/* A 7x7 finder centred on (cx, cy) with its light separator ring (cut at the edge). */
static void draw_finder(struct qr_code *q, int cx, int cy)
{
    for (int dy = -4; dy <= 4; dy++) {
        for (int dx = -4; dx <= 4; dx++) {
            int d = dx < 0 ? -dx : dx, e = dy < 0 ? -dy : dy;
            int ring = d > e ? d : e;            /* 0 centre .. 4 separator */
            set_func(q, cx + dx, cy + dy, ring != 2 && ring != 4);
        }
    }
}

static void draw_alignment(struct qr_code *q, int cx, int cy)
{
    for (int dy = -2; dy <= 2; dy++) {
        for (int dx = -2; dx <= 2; dx++) {
            int d = dx < 0 ? -dx : dx, e = dy < 0 ? -dy : dy;
            set_func(q, cx + dx, cy + dy, (d > e ? d : e) != 1);
        }
    }
}

/* Table E.1's row and column centres: the first at 6, the last at size - 7, the rest
 * spaced evenly by an even step counted from the last (version 32's step is 26, one below
 * what the even-spacing rule gives). Returns how many. */
static unsigned alignment_centres(unsigned version, unsigned *pos)
{
    if (version == 1)
        return 0;
    unsigned n = version / 7 + 2, size = 17 + 4 * version;
    unsigned step = version == 32 ? 26 : (version * 4 + n * 2 + 1) / (n * 2 - 2) * 2;
    pos[0] = 6;
    for (unsigned i = n - 1, p = size - 7; i >= 1; i--, p -= step)
        pos[i] = p;
    return n;
}

/* The BCH remainder of value * x^deg modulo gen (deg its degree). */
static unsigned bch(unsigned value, unsigned gen, unsigned deg)
{
    unsigned r = value << deg;
    for (int b = 30; b >= (int)deg; b--) {
        if (r & (1u << b))
            r ^= gen << (b - deg);
    }
    return r;
}

static void draw_format(struct qr_code *q, unsigned mask)
{
    unsigned v = ecc_format_bits[q->ecc] << 3 | mask;
    unsigned bits = (v << 10 | bch(v, 0x537, 10)) ^ 0x5412;
    int s = (int)q->size;
    for (int i = 0; i < 15; i++) {
        bool b = bits >> i & 1;
        /* the copy around the top-left finder: down column 8 (skipping the timing row),
         * then left along row 8 (skipping the timing column) */
        if (i < 6)
            set_func(q, 8, i, b);
        else if (i < 8)
            set_func(q, 8, i + 1, b);
        else if (i == 8)
            set_func(q, 7, 8, b);
        else
            set_func(q, 14 - i, 8, b);
        /* the split copy: along row 8 from the right edge, then up column 8 from the bottom */
        if (i < 8)
            set_func(q, s - 1 - i, 8, b);
        else
            set_func(q, 8, s - 15 + i, b);
    }
    set_func(q, 8, s - 8, true);                 /* the dark module */
}

static void draw_version(struct qr_code *q)
{
    if (q->version < 7)
        return;
    unsigned bits = q->version << 12 | bch(q->version, 0x1F25, 12);
    for (unsigned i = 0; i < 18; i++) {
        int a = (int)q->size - 11 + (int)(i % 3), b = (int)(i / 3);
        set_func(q, a, b, bits >> i & 1);        /* above the bottom-left finder */
        set_func(q, b, a, bits >> i & 1);        /* left of the top-right finder */
    }
}

static void draw_function_patterns(struct qr_code *q)
{
    int s = (int)q->size;
    memset(q->mod, 0, (size_t)q->size * q->size);
    for (int i = 0; i < s; i++) {
        set_func(q, 6, i, i % 2 == 0);
        set_func(q, i, 6, i % 2 == 0);
    }
    draw_finder(q, 3, 3);
    draw_finder(q, s - 4, 3);
    draw_finder(q, 3, s - 4);
    unsigned pos[7], n = alignment_centres(q->version, pos);
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < n; j++) {
            bool on_finder = (i == 0 && j == 0) || (i == 0 && j == n - 1) ||
                             (i == n - 1 && j == 0);
            if (!on_finder)
                draw_alignment(q, (int)pos[i], (int)pos[j]);
        }
    }
    draw_format(q, 0);       /* reserves the format areas; the real bits come with the mask */
    draw_version(q);
}

/* Codewords the version has: its data modules, whole bytes (the rest are remainder bits). */
static unsigned total_codewords(unsigned version)
{
    unsigned size = 17 + 4 * version;
    unsigned bits = size * size;
    bits -= 3 * 64 + 2 * 15 + 1;                 /* finders with separators, format, dark */
    bits -= 2 * (size - 16);                     /* timing rows between the separators */
    if (version >= 2) {
        unsigned n = version / 7 + 2;
        /* n*n - 3 alignment patterns of 25 modules; the ones on the timing rows share 5
         * modules each with them (2 * (n - 2) patterns) */
        bits -= (n * n - 3) * 25 - 2 * (n - 2) * 5;
    }
    if (version >= 7)
        bits -= 36;
    return bits / 8;
}

size_t qr_byte_capacity(unsigned version, enum qr_ecc ecc)
{
    if (version < 1 || version > QR_VERSION_MAX || (unsigned)ecc > QR_ECC_H)
        return 0;
    unsigned data_cw = total_codewords(version) - ecc_per_block[ecc][version] *
                                                  blocks[ecc][version];
    unsigned head_bits = 4 + (version <= 9 ? 8 : 16);
    return (data_cw * 8 - head_bits) / 8;
}

/* ---- the codeword sequence --------------------------------------------------------- */

struct bitbuf {
    uint8_t *buf;
    unsigned bits;
};

static void put_bits(struct bitbuf *b, unsigned value, unsigned n)
{
    for (unsigned i = n; i-- > 0;) {
        if (value >> i & 1)
            b->buf[b->bits >> 3] |= (uint8_t)(0x80 >> (b->bits & 7));
        b->bits++;
    }
}

/* The data codewords into q->data, then each block's ECC, interleaved into q->seq. */
static unsigned build_sequence(struct qr_code *q, const uint8_t *bytes, size_t len)
{
    unsigned v = q->version, total = total_codewords(v);
    unsigned nb = blocks[q->ecc][v], ne = ecc_per_block[q->ecc][v];
    unsigned data_cw = total - nb * ne;
    struct bitbuf b = { q->data, 0 };
    memset(q->data, 0, sizeof(q->data));
    put_bits(&b, 4, 4);                              /* byte mode */
    put_bits(&b, (unsigned)len, v <= 9 ? 8 : 16);
    for (size_t i = 0; i < len; i++)
        put_bits(&b, bytes[i], 8);
    unsigned room = data_cw * 8 - b.bits;
    b.bits += room < 4 ? room : 4;                   /* the terminator */
    b.bits = (b.bits + 7) & ~7u;
    for (uint8_t pad = 0xEC; b.bits < data_cw * 8; pad ^= 0xEC ^ 0x11)
        put_bits(&b, pad, 8);

    /* nb blocks: the first `shorts` hold short_len data codewords, the rest one more. */
    unsigned short_len = data_cw / nb, shorts = nb - data_cw % nb;
    uint8_t gen[30], ecc[30];
    rs_generator(gen, ne);
    unsigned at = 0;
    for (unsigned k = 0, off = 0; k < nb; k++) {     /* the ECC after the data in q->data */
        unsigned dl = short_len + (k >= shorts);
        rs_remainder(q->data + off, dl, gen, ne, ecc);
        memcpy(q->data + data_cw + k * ne, ecc, ne);
        off += dl;
    }
    for (unsigned i = 0; i <= short_len; i++) {      /* data column by column */
        for (unsigned k = 0, off = 0; k < nb; k++) {
            unsigned dl = short_len + (k >= shorts);
            if (i < dl)
                q->seq[at++] = q->data[off + i];
            off += dl;
        }
    }
    for (unsigned i = 0; i < ne; i++) {
        for (unsigned k = 0; k < nb; k++)
            q->seq[at++] = q->data[data_cw + k * ne + i];
    }
    return at;
}

/* Two-module columns from the right, up then down, the timing column skipped. */
static void place_sequence(struct qr_code *q, unsigned n_cw)
{
    unsigned i = 0, s = q->size, nbits = n_cw * 8;
    for (int right = (int)s - 1; right >= 1; right -= 2) {
        if (right == 6)
            right = 5;
        bool upward = ((right + 1) & 2) == 0;
        for (unsigned vert = 0; vert < s; vert++) {
            unsigned y = upward ? s - 1 - vert : vert;
            for (int j = 0; j < 2; j++) {
                unsigned x = (unsigned)(right - j);
                if (is_func(q, x, y))
                    continue;
                bool dark = i < nbits && (q->seq[i >> 3] >> (7 - (i & 7)) & 1);
                q->mod[y * s + x] = dark ? QR_DARK : 0;   /* remainder bits are light */
                i++;
            }
        }
    }
}

static bool mask_bit(unsigned mask, unsigned x, unsigned y)
{
    switch (mask) {
    case 0: return (x + y) % 2 == 0;
    case 1: return y % 2 == 0;
    case 2: return x % 3 == 0;
    case 3: return (x + y) % 3 == 0;
    case 4: return (x / 3 + y / 2) % 2 == 0;
    case 5: return x * y % 2 + x * y % 3 == 0;
    case 6: return (x * y % 2 + x * y % 3) % 2 == 0;
    default: return ((x + y) % 2 + x * y % 3) % 2 == 0;
    }
}

/* XOR: applying it twice takes it off. */
static void apply_mask(struct qr_code *q, unsigned mask)
{
    for (unsigned y = 0; y < q->size; y++) {
        for (unsigned x = 0; x < q->size; x++) {
            uint8_t *m = &q->mod[y * q->size + x];
            if (!(*m & QR_FUNC) && mask_bit(mask, x, y))
                *m ^= QR_DARK;
        }
    }
}

/* ---- penalty ----------------------------------------------------------------------- */

static bool dark_at(const struct qr_code *q, int x, int y, bool by_col)
{
    if (x < 0 || y < 0 || x >= (int)q->size || y >= (int)q->size)
        return false;                            /* beyond the symbol: the light quiet zone */
    return by_col ? qr_dark(q, (unsigned)y, (unsigned)x) : qr_dark(q, (unsigned)x, (unsigned)y);
}

/* N1 and N3 along one row (or column: by_col swaps the axes). */
static unsigned line_penalty(const struct qr_code *q, int line, bool by_col)
{
    static const uint8_t finder_like[11] = { 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0 };
    unsigned p = 0, run = 0;
    int s = (int)q->size;
    for (int i = 0; i < s; i++) {
        bool d = dark_at(q, i, line, by_col);
        run = (i > 0 && d == dark_at(q, i - 1, line, by_col)) ? run + 1 : 1;
        if (run == 5)
            p += 3;
        else if (run > 5)
            p += 1;
    }
    for (int i = -4; i < s; i++) {               /* 1:1:3:1:1 with 4 light on one side */
        bool fwd = true, back = true;
        for (int k = 0; k < 11; k++) {
            bool d = dark_at(q, i + k, line, by_col);
            fwd = fwd && d == finder_like[k];
            back = back && d == finder_like[10 - k];
        }
        p += 40 * (fwd + back);
    }
    return p;
}

unsigned qr_penalty(const struct qr_code *q)
{
    unsigned p = 0, dark = 0, s = q->size;
    for (unsigned i = 0; i < s; i++)
        p += line_penalty(q, (int)i, false) + line_penalty(q, (int)i, true);
    for (unsigned y = 0; y < s; y++) {
        for (unsigned x = 0; x < s; x++) {
            bool d = qr_dark(q, x, y);
            dark += d;
            if (x + 1 < s && y + 1 < s && d == qr_dark(q, x + 1, y) &&
                d == qr_dark(q, x, y + 1) && d == qr_dark(q, x + 1, y + 1))
                p += 3;
        }
    }
    unsigned total = s * s;
    unsigned diff = dark * 20 > total * 10 ? dark * 20 - total * 10 : total * 10 - dark * 20;
    return p + diff / total * 10;                /* 10 per whole 5 % away from half dark */
}

int qr_encode(struct qr_code *q, const uint8_t *bytes, size_t len, unsigned version,
              enum qr_ecc ecc, int mask)
{
    if (version < 1 || version > QR_VERSION_MAX || (unsigned)ecc > QR_ECC_H || mask < -1 ||
        mask > 7)
        return -EINVAL;
    if (len > qr_byte_capacity(version, ecc))
        return -E2BIG;
    q->version = version;
    q->size = 17 + 4 * version;
    q->ecc = ecc;
    draw_function_patterns(q);
    place_sequence(q, build_sequence(q, bytes, len));
    unsigned best = (unsigned)mask;
    if (mask < 0) {
        unsigned best_p = ~0u;
        for (unsigned m = 0; m < 8; m++) {
            apply_mask(q, m);
            draw_format(q, m);
            unsigned p = qr_penalty(q);
            if (p < best_p)
                best_p = p, best = m;
            apply_mask(q, m);
        }
    }
    apply_mask(q, best);
    draw_format(q, best);
    q->mask = best;
    return 0;
}
