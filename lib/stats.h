/* lib/stats.h - order statistics and moments of integer samples, without floating point.
 *
 * Percentiles use the nearest-rank definition: p-th percentile = the smallest sample with at
 * least p% of the samples at or below it (so p99 of 100 samples is the 99th smallest, and of
 * 10 samples the largest). stats_u64/stats_i64 sort the array in place (heapsort: O(n log n),
 * no recursion, no allocation). Means are rounded to nearest; the standard deviation is the
 * population one (divide by n), from an integer square root, rounded down. */
#ifndef TICKLAB_LIB_STATS_H
#define TICKLAB_LIB_STATS_H
#include <stddef.h>
#include <stdint.h>

struct stats {
    size_t n;
    int64_t min, max, median, p90, p99, p999;
    int64_t mean;             /* rounded to nearest */
    uint64_t stddev;          /* population standard deviation, rounded down */
};

void sort_u64(uint64_t *v, size_t n);
void sort_i64(int64_t *v, size_t n);
/* Nearest-rank percentile of a SORTED array, per_mille in 0..1000 (990 = p99). n > 0. */
int64_t percentile_sorted_i64(const int64_t *v, size_t n, unsigned per_mille);
uint64_t percentile_sorted_u64(const uint64_t *v, size_t n, unsigned per_mille);
/* Sorts v, fills out. n == 0 leaves out zeroed with n = 0. Samples must lie within
 * +-2^62 so that sums of squares fit the 128-bit accumulator's documented range. */
void stats_i64(int64_t *v, size_t n, struct stats *out);
void stats_u64(uint64_t *v, size_t n, struct stats *out);   /* samples below 2^62 */
uint64_t isqrt_u64(uint64_t x);

/* A distribution-free 95 % confidence interval for the per_mille quantile of the population
 * a SORTED sample of n was drawn from: the order statistics x(l) and x(u) whose ranks lie
 * 1.96 binomial standard deviations either side of n * q (the normal approximation to the
 * binomial count of samples below the quantile, ranks rounded outwards, clamped to 1..n).
 * For p99 of 500 samples: ranks 490 and 500. n == 0 gives 0, 0. Samples need not be
 * independent of anything but each other: the interval is as good as that assumption. */
void stats_quantile_interval(const int64_t *sorted, size_t n, unsigned per_mille,
                             int64_t *lo, int64_t *hi);

/* Two intervals compared as a decision: -1 when a lies wholly below b, +1 when wholly
 * above, 0 when they overlap ("too close to call": no difference is excluded). */
int stats_interval_order(int64_t a_lo, int64_t a_hi, int64_t b_lo, int64_t b_hi);

#endif
