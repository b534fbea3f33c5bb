/* lib/deflate.h - a DEFLATE compressor (RFC 1951) in a zlib wrapper (RFC 1950), so that any
 * zlib (Python's zlib.decompress) reads what it writes.
 *
 * LZ77 over a 32 KiB window: every position is hashed by its next three bytes, each hash
 * keeps a chain of earlier positions, and the longest match (3..258 bytes) among the first
 * DEFLATE_CHAIN candidates is taken, greedily (no lazy evaluation). Literals, lengths and
 * distances are coded in blocks of up to DEFLATE_BLOCK symbols, each with its own
 * Huffman codes (RFC 1951 3.2.7: built from the block's counts, at most 15 bits). On the
 * kernel's records (JSON lines) this gives about 6.6:1 (the quick profile's 149 KB to
 * 22.7 KB; with the fixed codes of 3.2.6 it was 25.9 KB; zlib -9 gets 21 KB). The zlib
 * trailer is the Adler-32 of the input. Freestanding; the caller owns the state (512 KiB). */
#ifndef TICKLAB_LIB_DEFLATE_H
#define TICKLAB_LIB_DEFLATE_H
#include <stddef.h>
#include <stdint.h>

#define DEFLATE_WINDOW (1u << 15)
#define DEFLATE_HASH   (1u << 15)
#define DEFLATE_CHAIN  256          /* candidates tried per position */
#define DEFLATE_BLOCK  (1u << 16)   /* symbols per block: each block has its own codes */

struct deflate_state {
    uint32_t head[DEFLATE_HASH];    /* hash -> the latest position + 1 (0: none) */
    uint32_t prev[DEFLATE_WINDOW];  /* position % window -> the previous one + 1 with its hash */
    uint32_t sym[DEFLATE_BLOCK];    /* the block's literals and matches, before coding */
};

/* Compresses in[0, n) as one zlib stream into out[0, cap). Returns the stream's length, or
 * -ENOSPC when cap is too small (out then holds a partial stream). The worst case is
 * n * 9 / 8 + 16 bytes (every byte a 9-bit literal). */
long zlib_compress(struct deflate_state *st, const uint8_t *in, size_t n, uint8_t *out,
                   size_t cap);

/* The Adler-32 of len bytes, continued from a (start with 1). */
uint32_t adler32_update(uint32_t a, const uint8_t *p, size_t len);

#endif
