/* tests/host/test_cs_measure.c - lib/time/cs_measure.c on fake counters: the cost of
 * one read in TSC cycles (the fake's costs are exact: an ordered RDTSC 20 ns, an MMIO access
 * 100 ns, a port access 1 us, at 2.1 GHz 42, 210 and 2100 cycles), the smallest step between
 * successive reads, and steps backwards, on the real HPET and PIT drivers and on test-local
 * counters that are coarse or that jump back. */
#include "ticklab/cs_measure.h"
#include "ticklab/hpet.h"
#include "ticklab/pit8254.h"
#include "fake/fake.h"
#include "test.h"

/* The drivers' state, as the kernel keeps it. */
static struct hpet the_hpet;
static struct clocksource the_pit_cs;

#define TSC_CYC_PER_NS(ns) ((ns) * 21 / 10)   /* 2.1 GHz */

/* The HPET's 64-bit counter: one MMIO read, 210 cycles. Successive reads in the timed loop
 * are a read and two ordered TSC reads apart (140 ns: 14 clocks of 100 MHz), the first pair
 * a read and one TSC read (120 ns: 12 clocks), which is the smallest step seen. */
TEST(cs_measure_hpet_read_cost_is_one_mmio_access)
{
    struct hpet_info info;
    struct cs_measure m;
    fake_reset();
    REQUIRE(hpet_init(&the_hpet, FAKE_HPET_BASE, false, &info) == 0);
    hpet_enable(&the_hpet);
    cs_measure(hpet_clocksource(&the_hpet), fake_tsc_clocksource(), 1000, 10000, &m);
    CHECK_EQ_U64(m.reads, 1000);
    CHECK_EQ_U64(m.tsc_pair_overhead_cyc, TSC_CYC_PER_NS(20));
    CHECK_EQ_U64(m.cost_min_cyc, TSC_CYC_PER_NS(100));
    CHECK_EQ_U64(m.cost_median_cyc, TSC_CYC_PER_NS(100));
    CHECK_EQ_U64(m.cost_p99_cyc, TSC_CYC_PER_NS(100));
    CHECK_EQ_U64(m.resolution_cyc, 12);
    CHECK_EQ_U64(m.mono_reads, 10000);
    CHECK_EQ_U64(m.backward_steps, 0);
    CHECK_EQ_U64(m.largest_backward_cyc, 0);
    /* the monotonicity run: one 100 ns read each, plus the TSC reads around it */
    CHECK(m.elapsed_tsc_cyc >= 10000 * TSC_CYC_PER_NS(100));
    CHECK(m.elapsed_tsc_cyc < 10001 * TSC_CYC_PER_NS(100) + TSC_CYC_PER_NS(100));
}

/* The PIT's latched read: three port accesses, 6300 cycles; 16 bits that wrap every 54.9 ms,
 * which a run of 100,000 reads (0.3 s) crosses five times without a step backwards. */
TEST(cs_measure_pit_read_is_three_port_accesses_and_wraps_forward)
{
    struct cs_measure m;
    fake_reset();
    struct clocksource *cs = pit_clocksource_init(&the_pit_cs, 2100000);
    REQUIRE(cs->usable);
    cs_measure(cs, fake_tsc_clocksource(), 200, 100000, &m);
    CHECK_EQ_U64(m.cost_min_cyc, TSC_CYC_PER_NS(3000));
    CHECK_EQ_U64(m.cost_median_cyc, TSC_CYC_PER_NS(3000));
    /* 3040 ns between reads: 3.6 clocks of 838 ns, so steps of 3 and 4 */
    CHECK_EQ_U64(m.resolution_cyc, 3);
    CHECK_EQ_U64(m.backward_steps, 0);
    CHECK(m.elapsed_tsc_cyc > TSC_CYC_PER_NS(300000000ull));
}

/* A coarse counter (1 us per count) read faster than it counts: most steps are 0, and the
 * resolution is the smallest step that is not: one count. A counter that never moves has no
 * resolution at all (0). */
static uint64_t coarse_read(const struct clocksource *cs)
{
    (void)cs;
    return vclock_now_ns() / 1000;
}
static uint64_t frozen_read(const struct clocksource *cs)
{
    (void)cs;
    return 777;
}

TEST(cs_measure_resolution_is_the_smallest_nonzero_step)
{
    struct cs_measure m;
    fake_reset();
    struct clocksource coarse = { .name = "coarse", .read = coarse_read,
                                  .mask = CLOCKSOURCE_MASK(32), .freq_hz = 1000000 };
    cs_measure(&coarse, fake_tsc_clocksource(), 4096, 1000, &m);
    CHECK_EQ_U64(m.resolution_cyc, 1);
    CHECK_EQ_U64(m.cost_min_cyc, 0);              /* the read itself costs nothing here */
    CHECK_EQ_U64(m.backward_steps, 0);
    struct clocksource frozen = { .name = "frozen", .read = frozen_read,
                                  .mask = CLOCKSOURCE_MASK(32), .freq_hz = 1000000 };
    cs_measure(&frozen, fake_tsc_clocksource(), 100, 1000, &m);
    CHECK_EQ_U64(m.resolution_cyc, 0);
    CHECK_EQ_U64(m.backward_steps, 0);
}

/* A counter that steps back by 5 counts every 100th read (a glitching PM timer, another
 * CPU's unsynchronised TSC): every such step is counted and the largest is 5, while the
 * counter's wrap (a 16-bit counter going 0xFFFF -> 0) is not a step back. */
static uint64_t glitch_count, glitch_reads;
static uint64_t glitch_read(const struct clocksource *cs)
{
    (void)cs;
    glitch_count += 10;
    if (++glitch_reads % 100 == 0)
        glitch_count -= 15;
    return glitch_count & 0xFFFF;
}

TEST(cs_measure_counts_backward_steps_not_wraps)
{
    struct cs_measure m;
    fake_reset();
    struct clocksource g = { .name = "glitch", .read = glitch_read, .mask = 0xFFFF,
                             .freq_hz = 1000000 };
    glitch_count = 0xFF00;
    glitch_reads = 0;
    cs_measure(&g, fake_tsc_clocksource(), 1, 0, &m);                     /* position the count just below a wrap */
    glitch_reads = 0;
    cs_measure(&g, fake_tsc_clocksource(), 1, 100000, &m);
    /* 100,002 reads: one for the timing, the monotonicity run's first and 100,000 more */
    CHECK_EQ_U64(m.mono_reads, 100000);
    CHECK_EQ_U64(m.backward_steps, 1000);
    CHECK_EQ_U64(m.largest_backward_cyc, 5);
    CHECK(glitch_count > 0x10000 * 10);            /* wrapped many times on the way */
}

/* The number of timed reads is at least 1 and at most CS_MEASURE_MAX_READS. */
TEST(cs_measure_reads_clamped)
{
    struct cs_measure m;
    fake_reset();
    struct clocksource coarse = { .name = "coarse", .read = coarse_read,
                                  .mask = CLOCKSOURCE_MASK(32), .freq_hz = 1000000 };
    cs_measure(&coarse, fake_tsc_clocksource(), 0, 0, &m);
    CHECK_EQ_U64(m.reads, 1);
    CHECK_EQ_U64(m.mono_reads, 0);
    cs_measure(&coarse, fake_tsc_clocksource(), CS_MEASURE_MAX_READS + 1, 0, &m);
    CHECK_EQ_U64(m.reads, CS_MEASURE_MAX_READS);
}
