/* tests/host/test_stats.c - lib/stats.c against straightforward references. */
#include <math.h>
#include <stdlib.h>

#include "ticklab/stats.h"
#include "test.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

TEST(stats_sort_matches_qsort_random)
{
    srand(7);
    for (int round = 0; round < 200; round++) {
        size_t n = (size_t)(rand() % 300);
        int64_t a[300], b[300];
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = (int64_t)rand() - RAND_MAX / 2;
        sort_i64(a, n);
        qsort(b, n, sizeof(b[0]), cmp_i64);
        REQUIRE(memcmp(a, b, n * sizeof(a[0])) == 0);
    }
}

TEST(stats_percentile_nearest_rank)
{
    int64_t v[100];
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;                 /* 1..100 */
    CHECK_EQ_I64(percentile_sorted_i64(v, 100, 500), 50);
    CHECK_EQ_I64(percentile_sorted_i64(v, 100, 990), 99);
    CHECK_EQ_I64(percentile_sorted_i64(v, 100, 999), 100);
    CHECK_EQ_I64(percentile_sorted_i64(v, 100, 1000), 100);
    CHECK_EQ_I64(percentile_sorted_i64(v, 100, 0), 1);
    CHECK_EQ_I64(percentile_sorted_i64(v, 10, 990), 10);   /* p99 of 10 is the largest */
    CHECK_EQ_I64(percentile_sorted_i64(v, 1, 500), 1);
}

TEST(stats_moments_against_double_reference)
{
    srand(11);
    for (int round = 0; round < 100; round++) {
        size_t n = 1 + (size_t)(rand() % 1000);
        int64_t v[1000];
        int64_t offset = (int64_t)rand() * 1000003;      /* large common offset */
        double sum = 0, sq = 0;
        for (size_t i = 0; i < n; i++) {
            v[i] = offset + rand() % 100000 - 50000;
            sum += (double)(v[i] - offset);
        }
        double mean = sum / (double)n;
        for (size_t i = 0; i < n; i++)
            sq += ((double)(v[i] - offset) - mean) * ((double)(v[i] - offset) - mean);
        double sd = sqrt(sq / (double)n);
        struct stats s;
        stats_i64(v, n, &s);
        CHECK(llabs(s.mean - (offset + llround(mean))) <= 1);
        CHECK(fabs((double)s.stddev - sd) <= 1.0 + sd * 1e-9);
        CHECK_EQ_U64(s.n, n);
        CHECK(s.min <= s.median && s.median <= s.p99 && s.p99 <= s.max);
    }
}

TEST(stats_extremes_do_not_overflow)
{
    int64_t v[4] = { -(1ll << 62), (1ll << 62), -(1ll << 62), (1ll << 62) };
    struct stats s;
    stats_i64(v, 4, &s);
    CHECK_EQ_I64(s.mean, 0);
    CHECK_EQ_U64(s.stddev, 1ull << 62);
    CHECK_EQ_I64(s.min, -(1ll << 62));
}

TEST(stats_empty_and_single)
{
    struct stats s;
    stats_i64(NULL, 0, &s);
    CHECK_EQ_U64(s.n, 0);
    int64_t one = -5;
    stats_i64(&one, 1, &s);
    CHECK_EQ_I64(s.mean, -5);
    CHECK_EQ_U64(s.stddev, 0);
    CHECK_EQ_I64(s.p999, -5);
}

TEST(stats_isqrt_exact)
{
    uint64_t xs[] = { 0, 1, 2, 3, 4, 15, 16, 17, 1ull << 32, (1ull << 32) + 1, UINT64_MAX,
                      4294967295ull * 4294967295ull, 4294967296ull * 4294967295ull };
    for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
        uint64_t r = isqrt_u64(xs[i]);
        CHECK((unsigned __int128)r * r <= xs[i]);
        CHECK((unsigned __int128)(r + 1) * (r + 1) > xs[i]);
    }
}
