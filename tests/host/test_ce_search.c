/* tests/host/test_ce_search.c - the min-delta search (libticklab/time/ce_search.c) run against
 * the HPET model through the real HPET driver. The model charges 100 ns of virtual time per
 * MMIO access, so a comparator written only a few counter ticks ahead has already been
 * passed when the write lands: the driver refuses it with -ETIME (or the event is missed),
 * and the search must climb until every trial fires. */
#include "ticklab/hpet.h"
#include "fake/fake.h"
#include "ticklab/ce_search.h"
#include "ticklab/errno.h"
#include "test.h"

#define BASE 0xFED00000u
#define GSI  20u

static uint64_t seen;

static void on_irq(int line, void *ctx)
{
    (void)ctx;
    if (line == FAKE_IRQ_HPET(0)) {
        hpet_ack(0);
        seen++;
    }
}

static int ce_set_next(uint64_t delta)
{
    return hpet_set_oneshot(0, hpet_read() + delta);
}

static void ce_shutdown(void)
{
    hpet_comparator_stop(0);
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

static struct clockevent hpet_ce = {
    .name = "hpet", .features = CE_ONESHOT, .freq_hz = 100000000, .min_delta_cyc = 1,
    .max_delta_cyc = 1ull << 31, .set_next = ce_set_next, .shutdown = ce_shutdown,
};

TEST(ce_search_hpet_finds_the_race_window)
{
    struct hpet_info info;
    fake_reset();
    seen = 0;
    fake_set_irq_handler(on_irq, 0);
    REQUIRE(hpet_init(BASE, false, &info) == 0);
    hpet_enable();
    irq_enable();
    REQUIRE(hpet_comparator_route(0, GSI) == 0);

    struct ce_search_ops ops = { events, wait, 0 };
    uint32_t etime = 0;
    uint64_t min = ce_search_min_delta(&hpet_ce, &ops, &etime);
    /* The read and the comparator write take a few MMIO accesses (100 ns each: 10 ticks
     * of a 100 MHz counter): deltas below that are refused, so the minimum is above 1 and
     * -ETIME was met on the way; and it is small, not the device maximum. */
    CHECK(min > 1);
    CHECK(min < 200);
    CHECK(etime > 0);
    /* The answer holds: at min every programming fires, one below at least one refusal. */
    for (int i = 0; i < 20; i++) {
        uint64_t before = seen;
        CHECK_EQ_I64(ce_set_next(min), 0);
        CHECK(wait(0, before, 1000000));
    }
    int refused = 0;
    for (int i = 0; i < 20; i++) {
        uint64_t before = seen;
        int rc = ce_set_next(min - 1);
        refused += rc == -ETIME || !wait(0, before, 1000000);
    }
    CHECK(refused > 0);
}

static int always_fires(uint64_t delta)
{
    (void)delta;
    seen++;
    return 0;
}

static void nothing(void) {}

TEST(ce_search_device_that_always_fires_gives_one)
{
    struct clockevent ce = { .name = "x", .features = CE_ONESHOT, .freq_hz = 1000000000,
                             .max_delta_cyc = 1000, .set_next = always_fires,
                             .shutdown = nothing };
    struct ce_search_ops ops = { events, wait, 0 };
    uint32_t etime = 0;
    fake_reset();
    CHECK_EQ_U64(ce_search_min_delta(&ce, &ops, &etime), 1);
    CHECK_EQ_U64(etime, 0);
}

static int never_fires(uint64_t delta)
{
    (void)delta;
    return 0;
}

TEST(ce_search_device_that_never_fires_ends_at_max)
{
    struct clockevent ce = { .name = "x", .features = CE_ONESHOT, .freq_hz = 1000000000,
                             .max_delta_cyc = 1000, .set_next = never_fires,
                             .shutdown = nothing };
    struct ce_search_ops ops = { events, wait, 0 };
    uint32_t etime = 0;
    fake_reset();
    CHECK_EQ_U64(ce_search_min_delta(&ce, &ops, &etime), 1000);
}
