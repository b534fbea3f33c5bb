/* tests/host/test_ce_search.c - the min-delta search (lib/time/ce_search.c) run against
 * the HPET model through the real HPET driver's clock event device (struct hpet_channel).
 * The model charges 100 ns of virtual time per MMIO access, so a comparator written only a
 * few counter ticks ahead has already been passed when the write lands: the driver refuses
 * it with -ETIME (or the event is missed), and the search must climb until every trial
 * fires. */
#include "ticklab/hpet.h"
#include "fake/fake.h"
#include "ticklab/ce_search.h"
#include "ticklab/errno.h"
#include "test.h"

/* The drivers' state, as the kernel keeps it. */
static struct hpet the_hpet;

#define BASE 0xFED00000u
#define GSI  20u

static uint64_t seen;
static struct hpet_channel ch;

static void on_irq(int line, void *ctx)
{
    (void)ctx;
    if (line == FAKE_IRQ_HPET(0))
        hpet_channel_irq(&ch);
}

static void count_event(struct clockevent *ce)
{
    (void)ce;
    seen++;
}

static uint64_t events(void *ctx)
{
    (void)ctx;
    return seen;
}

static bool wait(void *ctx, uint64_t before, uint64_t bound_ns)
{
    (void)ctx;
    fake_run_for_ns(bound_ns);       /* virtual time: the bound costs nothing */
    return seen > before;
}

TEST(ce_search_hpet_finds_the_race_window)
{
    struct hpet_info info;
    fake_reset();
    clockevent_test_reset();
    seen = 0;
    fake_set_irq_handler(on_irq, 0);
    REQUIRE(hpet_init(&the_hpet, BASE, false, &info) == 0);
    hpet_enable(&the_hpet);
    irq_enable();
    REQUIRE(hpet_comparator_route(&the_hpet, 0, GSI) == 0);
    REQUIRE(hpet_channel_init(&ch, &the_hpet, 0, 0, NULL) == 0);
    REQUIRE(clockevent_register(&ch.ce) == 0);
    REQUIRE(clockevent_claim(&ch.ce, count_event, &seen) == 0);
    struct clockevent *ce = &ch.ce;

    struct ce_search_ops ops = { events, wait, 0 };
    uint32_t etime = 0;
    uint64_t min = ce_search_min_delta(ce, &ops, &etime);
    /* The read and the comparator write take a few MMIO accesses (100 ns each: 10 ticks
     * of a 100 MHz counter): deltas below that are refused, so the minimum is above 1 and
     * -ETIME was met on the way; and it is small, not the device maximum. */
    CHECK(min > 1);
    CHECK(min < 200);
    CHECK(etime > 0);
    /* The answer holds: at min every programming fires, one below at least one refusal. */
    for (int i = 0; i < 20; i++) {
        uint64_t before = seen;
        CHECK_EQ_I64(clockevent_program_cyc(ce, min), 0);
        CHECK(wait(0, before, 1000000));
    }
    int refused = 0;
    for (int i = 0; i < 20; i++) {
        uint64_t before = seen;
        int rc = clockevent_program_cyc(ce, min - 1);
        refused += rc == -ETIME || !wait(0, before, 1000000);
    }
    CHECK(refused > 0);
    clockevent_release(ce);
}

static int always_fires(struct clockevent *ce, uint64_t delta)
{
    (void)ce, (void)delta;
    seen++;
    return 0;
}

static int nothing(struct clockevent *ce)
{
    (void)ce;
    return 0;
}

TEST(ce_search_device_that_always_fires_gives_one)
{
    struct clockevent ce = { .name = "x", .features = CE_ONESHOT, .freq_hz = 1000000000,
                             .max_delta_cyc = 1000, .set_next_event = always_fires,
                             .set_state_oneshot = nothing, .set_state_shutdown = nothing,
                             .usable = true };
    struct ce_search_ops ops = { events, wait, 0 };
    uint32_t etime = 0;
    fake_reset();
    CHECK_EQ_U64(ce_search_min_delta(&ce, &ops, &etime), 1);
    CHECK_EQ_U64(etime, 0);
}

static int never_fires(struct clockevent *ce, uint64_t delta)
{
    (void)ce, (void)delta;
    return 0;
}

TEST(ce_search_device_that_never_fires_ends_at_max)
{
    struct clockevent ce = { .name = "x", .features = CE_ONESHOT, .freq_hz = 1000000000,
                             .max_delta_cyc = 1000, .set_next_event = never_fires,
                             .set_state_oneshot = nothing, .set_state_shutdown = nothing,
                             .usable = true };
    struct ce_search_ops ops = { events, wait, 0 };
    uint32_t etime = 0;
    fake_reset();
    CHECK_EQ_U64(ce_search_min_delta(&ce, &ops, &etime), 1000);
}
