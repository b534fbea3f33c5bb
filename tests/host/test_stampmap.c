/* tests/host/test_stampmap.c - lib/time/stampmap.c against a model of the two clocks: a
 * counter of res ns whose count is read at a known instant inside each pair's stamps. The
 * interval always holds the true time, and narrows to the pairs' own width once their
 * phases against the count differ. */
#include "ticklab/stampmap.h"
#include "rng.h"
#include "test.h"

/* One pair of the model: true time_ns() at the reference is `truth`; the pair's first stamp
 * comes after_ns after the reference, the count is sampled read_ns after that stamp, the
 * second stamp width_ns after the first. */
static void model_pair(struct stampmap *m, uint64_t truth, uint64_t res, uint64_t after_ns,
                       uint64_t read_ns, uint64_t width_ns)
{
    uint64_t at = truth + after_ns + read_ns;
    stampmap_add(m, at / res * res, res, after_ns, after_ns + width_ns);
}

static bool holds(const struct stampmap *m, uint64_t truth)
{
    return m->lo_ns <= truth && truth <= m->hi_ns;
}

TEST(stampmap_one_pair_is_the_count_plus_the_pair)
{
    struct stampmap m;
    stampmap_start(&m);
    uint64_t w;
    CHECK_EQ_U64(stampmap_at(&m, &w), 0);
    CHECK_EQ_U64(w, 0);
    CHECK(!stampmap_settled(&m, 0));
    /* count 1000 (of 10 ns) read between 40 and 46 ns after the reference: [954, 970] */
    stampmap_add(&m, 1000, 10, 40, 46);
    CHECK_EQ_U64(m.lo_ns, 954);
    CHECK_EQ_U64(m.hi_ns, 970);
    CHECK_EQ_U64(stampmap_at(&m, &w), 962);
    CHECK_EQ_U64(w, 16);
    CHECK(!stampmap_settled(&m, 2));
    CHECK(stampmap_settled(&m, 10));
}

TEST(stampmap_swept_phases_narrow_to_the_pair_width_and_always_hold_the_truth)
{
    rng_seed(0x5a3b1e);
    for (unsigned trial = 0; trial < 20000; trial++) {
        uint64_t res = 1 + rng() % (100);
        uint64_t width = rng() % (20);
        uint64_t read = width ? rng() % (width + 1) : 0;
        uint64_t truth = 1000000 + rng() % (1u << 30);
        struct stampmap m;
        stampmap_start(&m);
        uint64_t after = 5 + rng() % (50);
        for (unsigned i = 0; i < 4 * res + 4; i++) {
            model_pair(&m, truth, res, after, read, width);
            if (!CHECK(holds(&m, truth)) || !CHECK(!m.disagree))
                return;
            after += res + 1;       /* the next pair one ns further in the count's phase */
        }
        uint64_t w, at = stampmap_at(&m, &w);
        /* whole ns: a read one ns before the count's edge is as close as it gets */
        CHECK(w <= width + 1);
        CHECK(stampmap_settled(&m, 1));
        CHECK(at + w / 2 + 1 >= truth && at <= truth + w / 2 + 1);
    }
}

TEST(stampmap_same_phase_pairs_do_not_narrow)
{
    /* every pair at the same phase of a 10 ns count: no better than one */
    struct stampmap m;
    stampmap_start(&m);
    for (unsigned i = 0; i < 8; i++)
        model_pair(&m, 5003, 10, 40 + 10 * i, 3, 6);
    uint64_t w;
    stampmap_at(&m, &w);
    CHECK_EQ_U64(w, 16);
    CHECK(holds(&m, 5003));
}

TEST(stampmap_disagreeing_pairs_fall_back_to_the_narrowest)
{
    struct stampmap m;
    stampmap_start(&m);
    stampmap_add(&m, 1000, 10, 40, 60);     /* [940, 970], 30 wide */
    stampmap_add(&m, 1100, 10, 40, 46);     /* [1054, 1070]: nothing in common */
    CHECK(m.disagree);
    CHECK(stampmap_settled(&m, 0));
    uint64_t w;
    CHECK_EQ_U64(stampmap_at(&m, &w), 1062);
    CHECK_EQ_U64(w, 16);
    stampmap_add(&m, 1000, 10, 40, 42);     /* a later narrower pair is still the fallback */
    CHECK_EQ_U64(stampmap_at(&m, &w), 958 + 6);
    CHECK_EQ_U64(w, 12);
}

TEST(stampmap_bad_pairs_and_the_bottom_of_the_scale)
{
    struct stampmap m;
    stampmap_start(&m);
    stampmap_add(&m, 1000, 10, 50, 40);     /* stamps the wrong way round: ignored */
    stampmap_add(&m, 1000, 0, 40, 50);      /* a count of no length: ignored */
    CHECK_EQ_U64(m.pairs, 0);
    stampmap_add(&m, 5, 10, 20, 30);        /* near time 0: clamped, never wrapped */
    CHECK_EQ_U64(m.lo_ns, 0);
    CHECK_EQ_U64(m.hi_ns, 0);
    uint64_t w;
    CHECK_EQ_U64(stampmap_at(&m, &w), 0);
    CHECK_EQ_U64(w, 0);
}
