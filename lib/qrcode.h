/* lib/qrcode.h - a QR code encoder (ISO/IEC 18004:2015), byte mode only, versions 1-40.
 *
 * What it follows: one byte-mode segment (mode 0100, an 8- or 16-bit count), the terminator
 * and the 0xEC/0x11 pad codewords; Reed-Solomon error correction over GF(256) with the
 * polynomial x^8+x^4+x^3+x^2+1 (0x11D) and generator roots alpha^0..alpha^(n-1); the
 * blocks of the version and level interleaved codeword by codeword (data, then ECC); the
 * finder, separator, timing and alignment patterns, the dark module; the 15-bit format
 * information (BCH(15,5), generator 0x537, XOR 0x5412) and from version 7 the 18-bit
 * version information (BCH(18,6), generator 0x1F25); the eight data masks, chosen by the
 * four penalty rules (N1 runs, N2 2x2 blocks, N3 finder-like 1:1:3:1:1 runs, N4 balance).
 *
 * Freestanding: no allocation, no tables built at run time; the caller owns the state
 * (about 38 KiB, keep it off small stacks). Used by the kernel's last screen
 * (kernel/report/qrscreen.c) and checked on the host against zbar and qrencode. */
#ifndef TICKLAB_LIB_QRCODE_H
#define TICKLAB_LIB_QRCODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QR_VERSION_MAX   40
#define QR_SIZE_MAX      177            /* modules per side at version 40: 17 + 4 * 40 */
#define QR_CODEWORDS_MAX 3706           /* codewords of a version-40 symbol */

enum qr_ecc { QR_ECC_L, QR_ECC_M, QR_ECC_Q, QR_ECC_H };   /* ~7, 15, 25, 30 % recovery */

struct qr_code {
    unsigned version, size;             /* size = 17 + 4 * version modules per side */
    enum qr_ecc ecc;
    unsigned mask;                      /* 0..7, the one applied */
    uint8_t mod[QR_SIZE_MAX * QR_SIZE_MAX];   /* row-major, size * size used: QR_DARK | QR_FUNC */
    uint8_t data[QR_CODEWORDS_MAX];     /* work: the data codewords, then the ECC */
    uint8_t seq[QR_CODEWORDS_MAX];      /* work: the interleaved sequence that is placed */
};
#define QR_DARK 1u
#define QR_FUNC 2u                      /* a function module (not data) */

/* Bytes of data one symbol of this version and level holds in byte mode; 0 for a bad
 * version. */
size_t qr_byte_capacity(unsigned version, enum qr_ecc ecc);

/* Encodes len bytes as one symbol of the given version and level. mask 0..7 forces that
 * mask, -1 chooses the one with the lowest penalty. 0, -EINVAL (version, level or mask out
 * of range) or -E2BIG (len exceeds qr_byte_capacity()). */
int qr_encode(struct qr_code *q, const uint8_t *bytes, size_t len, unsigned version,
              enum qr_ecc ecc, int mask);

static inline bool qr_dark(const struct qr_code *q, unsigned x, unsigned y)
{
    return q->mod[y * q->size + x] & QR_DARK;
}

/* The penalty of the symbol as it stands (the four rules summed): for the tests. */
unsigned qr_penalty(const struct qr_code *q);

#endif
