/* lib/hist.h - log-spaced histogram buckets for latencies. Bucket 0 holds [0, 2^lo_shift);
 * bucket k (1 <= k < n - 1) holds [2^(lo_shift + k - 1), 2^(lo_shift + k)); the last bucket
 * holds everything from 2^(lo_shift + n - 2) up. With lo_shift 4 and n 22 the edges are
 * 0, 16, 32, 64, ... 2^24 ns (16.8 ms). */
#ifndef TICKLAB_LIB_HIST_H
#define TICKLAB_LIB_HIST_H
#include <stdint.h>

/* The bucket of v; n >= 2, lo_shift + n - 2 < 64. */
unsigned hist_log2_index(uint64_t v, unsigned lo_shift, unsigned n);
/* The lower edge of bucket k (0 for bucket 0). */
uint64_t hist_log2_edge(unsigned k, unsigned lo_shift);

#endif
