/* lib/stats.c - see stats.h. */
#include "ticklab/stats.h"

#include "ticklab/kstring.h"

#define SIFT_DOWN(T, v, start, end)                                                    \
    do {                                                                               \
        size_t root_ = (start);                                                        \
        while (2 * root_ + 1 <= (end)) {                                               \
            size_t child_ = 2 * root_ + 1;                                             \
            if (child_ + 1 <= (end) && (v)[child_] < (v)[child_ + 1])                  \
                child_++;                                                              \
            if (!((v)[root_] < (v)[child_]))                                           \
                break;                                                                 \
            T t_ = (v)[root_];                                                         \
            (v)[root_] = (v)[child_];                                                  \
            (v)[child_] = t_;                                                          \
            root_ = child_;                                                            \
        }                                                                              \
    } while (0)

#define HEAPSORT(T, v, n)                                                              \
    do {                                                                               \
        if ((n) < 2)                                                                   \
            break;                                                                     \
        for (size_t s_ = (n) / 2; s_-- > 0;)                                           \
            SIFT_DOWN(T, v, s_, (n) - 1);                                              \
        for (size_t e_ = (n) - 1; e_ > 0; e_--) {                                      \
            T t_ = (v)[0];                                                             \
            (v)[0] = (v)[e_];                                                          \
            (v)[e_] = t_;                                                              \
            SIFT_DOWN(T, v, 0, e_ - 1);                                                \
        }                                                                              \
    } while (0)

void sort_u64(uint64_t *v, size_t n)
{
    HEAPSORT(uint64_t, v, n);
}

void sort_i64(int64_t *v, size_t n)
{
    HEAPSORT(int64_t, v, n);
}

static size_t rank_index(size_t n, unsigned per_mille)
{
    if (per_mille > 1000)
        per_mille = 1000;
    /* smallest k (1-based) with k >= n * p / 1000, i.e. ceil; at least 1 */
    uint64_t k = ((uint64_t)n * per_mille + 999) / 1000;
    return k == 0 ? 0 : (size_t)(k - 1);
}

void stats_quantile_interval(const int64_t *sorted, size_t n, unsigned per_mille,
                             int64_t *lo, int64_t *hi)
{
    if (n == 0) {
        *lo = *hi = 0;
        return;
    }
    if (per_mille > 1000)
        per_mille = 1000;
    /* In units of 1/1000 sample: centre n*q, spread 1.96 sd with sd^2 = n q (1 - q). The
     * variance in (1/1000 sample)^2 is n * q_pm * (1000 - q_pm); 1.96 as 196/100. */
    uint64_t centre = (uint64_t)n * per_mille;
    uint64_t sd = isqrt_u64((uint64_t)n * per_mille * (1000 - per_mille));
    uint64_t half = (sd * 196 + 99) / 100;
    /* 1-based ranks: l = floor((centre - half) / 1000), u = ceil((centre + half) / 1000) */
    uint64_t l = centre > half ? (centre - half) / 1000 : 0;
    uint64_t u = (centre + half + 999) / 1000;
    if (l < 1)
        l = 1;
    if (u > n)
        u = n;
    if (u < l)
        u = l;
    *lo = sorted[l - 1];
    *hi = sorted[u - 1];
}

int stats_interval_order(int64_t a_lo, int64_t a_hi, int64_t b_lo, int64_t b_hi)
{
    if (a_hi < b_lo)
        return -1;
    if (b_hi < a_lo)
        return 1;
    return 0;
}

int64_t percentile_sorted_i64(const int64_t *v, size_t n, unsigned per_mille)
{
    return v[rank_index(n, per_mille)];
}

uint64_t percentile_sorted_u64(const uint64_t *v, size_t n, unsigned per_mille)
{
    return v[rank_index(n, per_mille)];
}

uint64_t isqrt_u64(uint64_t x)
{
    uint64_t r = 0, bit = 1ull << 62;
    while (bit > x)
        bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

/* x / d for 128-bit x, by shift-and-subtract (no libgcc). Runs once or twice per statistics
 * call, so 128 steps cost nothing. */
static unsigned __int128 div128(unsigned __int128 x, uint64_t d)
{
    unsigned __int128 rem = 0, q = 0;
    for (int bit = 127; bit >= 0; bit--) {
        rem = (rem << 1) | ((x >> bit) & 1);
        q <<= 1;
        if (rem >= d) {
            rem -= d;
            q |= 1;
        }
    }
    return q;
}

static uint64_t isqrt128(unsigned __int128 x)
{
    /* Scale down by 4^k until x fits 64 bits; the root then scales by 2^k (the lost low
     * bits change the result by less than 2^k, far below any figure we report). */
    unsigned k = 0;
    while (x >> 64) {
        x >>= 2;
        k++;
    }
    return isqrt_u64((uint64_t)x) << k;
}

/* Two passes: the mean (around the median, so a large common offset such as a TSC timestamp
 * does not grow the sums), then squares around the rounded mean. Using the rounded mean adds
 * at most 0.25 to the variance. Samples within +-2^62 keep every deviation in 64 bits and
 * every sum in 128. */
static void moments(const int64_t *v, size_t n, struct stats *out)
{
    __int128 sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (__int128)v[i] - out->median;
    unsigned __int128 abs_sum = (unsigned __int128)(sum < 0 ? -sum : sum);
    int64_t off = (int64_t)div128(abs_sum + n / 2, n);
    out->mean = out->median + (sum < 0 ? -off : off);

    unsigned __int128 sum_sq = 0;
    for (size_t i = 0; i < n; i++) {
        __int128 d = (__int128)v[i] - out->mean;
        sum_sq += (unsigned __int128)(d * d);
    }
    out->stddev = isqrt128(div128(sum_sq, n));
}

void stats_i64(int64_t *v, size_t n, struct stats *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return;
    sort_i64(v, n);
    out->n = n;
    out->min = v[0];
    out->max = v[n - 1];
    out->median = percentile_sorted_i64(v, n, 500);
    out->p90 = percentile_sorted_i64(v, n, 900);
    out->p99 = percentile_sorted_i64(v, n, 990);
    out->p999 = percentile_sorted_i64(v, n, 999);
    moments(v, n, out);
}

void stats_u64(uint64_t *v, size_t n, struct stats *out)
{
    /* Samples below 2^62 read the same as int64_t; reuse the signed path in place. */
    stats_i64((int64_t *)v, n, out);
}
