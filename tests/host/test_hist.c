/* tests/host/test_hist.c - lib/hist.c: the log-spaced latency buckets of wakeup-latency,
 * checked against the edges they promise for every power of two and its neighbours. */
#include "ticklab/hist.h"
#include "test.h"

TEST(hist_log2_edges_hold_their_values)
{
    const unsigned lo = 4, n = 22;
    CHECK_EQ_U64(hist_log2_index(0, lo, n), 0);
    CHECK_EQ_U64(hist_log2_index(15, lo, n), 0);
    CHECK_EQ_U64(hist_log2_index(16, lo, n), 1);
    CHECK_EQ_U64(hist_log2_index(31, lo, n), 1);
    CHECK_EQ_U64(hist_log2_index(32, lo, n), 2);
    /* every bucket k holds [edge(k), edge(k+1)) below the last */
    for (unsigned k = 1; k < n - 1; k++) {
        uint64_t e = hist_log2_edge(k, lo), next = hist_log2_edge(k + 1, lo);
        CHECK_EQ_U64(hist_log2_index(e, lo, n), k);
        CHECK_EQ_U64(hist_log2_index(next - 1, lo, n), k);
        CHECK_EQ_U64(hist_log2_index(e - 1, lo, n), k - 1);
    }
    /* the last bucket is open: 2^24 and everything above, up to UINT64_MAX */
    CHECK_EQ_U64(hist_log2_edge(n - 1, lo), 1ull << 24);
    CHECK_EQ_U64(hist_log2_index(1ull << 24, lo, n), n - 1);
    CHECK_EQ_U64(hist_log2_index(UINT64_MAX, lo, n), n - 1);
    CHECK_EQ_U64(hist_log2_edge(0, lo), 0);
}
