/* tests/host/test_drv_hpet_channel.c - an HPET comparator as a clock event device (struct
 * hpet_channel, drivers/hpet.c) through the core, on the HPET model: what one
 * event costs in register accesses, the comparator-write delay some chipsets have and the
 * margin that keeps it from losing a deadline, absolute arming on the HPET clocksource, its
 * -ETIME fallback, periodic mode, the interrupt line, level-triggered acknowledgement. The
 * model: 100 MHz (10 ns per clock), 3 comparators, 64-bit; every MMIO access 100 ns unless a
 * test sets it to 0 (then the counter stands still between a write and its read-back, the
 * tightest case for the margin). */
#include "ticklab/hpet.h"
#include "fake/fake.h"
#include "ticklab/errno.h"
#include "test.h"
#include "ticklab/timekeeping.h"

/* The drivers' state, as the kernel keeps it. */
static struct hpet the_hpet;

#define GSI 20
#define TN_CMP0 0x108

static struct hpet_channel ch;
static struct fake_irq_log irqs;
static uint64_t events_seen, cnt_at_event;
static int owner;

static void entry(int line, void *ctx)
{
    (void)ctx;
    if (line == FAKE_IRQ_HPET(0))
        hpet_channel_irq(&ch);
}

static void count_event(struct clockevent *ce)
{
    (void)ce;
    events_seen++;
    cnt_at_event = fake_hpet_counter();
}

/* The HPET running, comparator 0 routed to GSI behind `line`, its channel registered and
 * claimed; the HPET clocksource is time_ns()'s. mmio_ns: the cost of one MMIO access;
 * counter32: a 32-bit main counter (and so 32-bit comparators). */
static bool channel_machine_of(uint64_t mmio_ns, const struct clockevent_line *line,
                               bool counter32)
{
    struct hpet_info info;
    fake_reset();
    fake_cost.mmio_ns = mmio_ns;
    fake_hpet_set_counter_32bit(counter32);
    timekeeping_test_reset();
    clockevent_test_reset();
    memset(&irqs, 0, sizeof(irqs));
    irqs.then = entry;
    fake_set_irq_handler(fake_irq_log_handler, &irqs);
    events_seen = cnt_at_event = 0;
    if (!CHECK_EQ_I64(hpet_init(&the_hpet, FAKE_HPET_BASE, false, &info), 0))
        return false;
    hpet_enable(&the_hpet);
    struct clocksource *cs = hpet_clocksource(&the_hpet);
    if (!CHECK_EQ_I64(clocksource_register(cs), 0) ||
        !CHECK(clocksource_select("hpet", NULL, 0) == cs) ||
        !CHECK_EQ_I64(hpet_comparator_route(&the_hpet, 0, GSI), 0) ||
        !CHECK_EQ_I64(hpet_channel_init(&ch, &the_hpet, 0, 0, line), 0) ||
        !CHECK_EQ_I64(clockevent_register(&ch.ce), 0) ||
        !CHECK_EQ_I64(clockevent_claim(&ch.ce, count_event, &owner), 0))
        return false;
    fake_run_for_ns(1000000);          /* 1 ms in, so the counter is well away from 0 */
    irq_enable();
    return true;
}

static bool channel_machine(uint64_t mmio_ns, const struct clockevent_line *line)
{
    return channel_machine_of(mmio_ns, line, false);
}

TEST(hpet_channel_describes_itself)
{
    static struct hpet_channel c1;
    REQUIRE(channel_machine(100, NULL));
    CHECK_EQ_STR(ch.ce.name, "hpet");
    CHECK_EQ_U64(ch.ce.features, CE_ONESHOT | CE_ABS | CE_PERIODIC);
    CHECK_EQ_U64(ch.ce.freq_hz, 100000000);
    /* not measured: the margin's floor plus half of it (Linux's HPET_MIN_PROG_DELTA) */
    CHECK_EQ_U64(ch.ce.min_delta_cyc, HPET_CMP_MARGIN_FLOOR_CYC * 3 / 2);
    CHECK_EQ_U64(ch.ce.max_delta_cyc, UINT64_MAX >> 1);
    CHECK_EQ_I64(ch.ce.rating, HPET_CE_RATING);
    CHECK(ch.ce.abs_cs == hpet_clocksource(&the_hpet));
    CHECK(ch.ce.usable);
    REQUIRE(hpet_channel_init(&c1, &the_hpet, 1, 0, NULL) == 0);
    CHECK_EQ_STR(c1.ce.name, "hpet1");
    fake_hpet_set_periodic_cap(1, false);
    REQUIRE(hpet_channel_init(&c1, &the_hpet, 1, 0, NULL) == 0);
    CHECK_EQ_U64(c1.ce.features, CE_ONESHOT | CE_ABS);
    CHECK_EQ_I64(hpet_channel_init(&c1, &the_hpet, 3, 0, NULL), -EINVAL);   /* 3 comparators: 0..2 */
}

/* Per event an HPET comparator needs one comparator write and the counter read that checks
 * the moment has not passed; its configuration was set once, when it entered ONESHOT. The
 * relative path reads the counter once more (for "now"). */
TEST(hpet_channel_per_event_is_one_comparator_write_and_one_counter_read)
{
    REQUIRE(channel_machine(100, NULL));
    REQUIRE(clockevent_program_ns(&ch.ce, 10000) == 0);          /* enters ONESHOT */
    fake_run_for_ns(20000);
    REQUIRE(events_seen == 1);
    for (int i = 0; i < 10; i++) {
        struct fake_hpet_stats before = *fake_hpet_stats();
        struct fake_stats fs = fake_stats;
        uint64_t now = time_ns(), deadline = now + 5000 + 100 * (uint64_t)i;
        uint64_t reads_for_now = fake_hpet_stats()->counter_reads - before.counter_reads;
        CHECK_EQ_I64(clockevent_program_abs_ns(&ch.ce, deadline, now), 0);
        const struct fake_hpet_stats *after = fake_hpet_stats();
        CHECK_EQ_U64(after->cmp_writes - before.cmp_writes, 1);
        CHECK_EQ_U64(after->counter_reads - before.counter_reads - reads_for_now, 1);
        CHECK_EQ_U64(after->conf_reads + after->conf_writes,
                     before.conf_reads + before.conf_writes);
        CHECK_EQ_U64(fake_stats.mmio_writes - fs.mmio_writes, 1);
        fake_run_for_ns(20000);
        CHECK_EQ_U64(events_seen, 2 + (uint64_t)i);
    }
    CHECK_EQ_U64(ch.ce.abs_programs, 10);
    /* relative: the counter read for "now", the write, the check */
    struct fake_hpet_stats before = *fake_hpet_stats();
    CHECK_EQ_I64(clockevent_program_ns(&ch.ce, 5000), 0);
    CHECK_EQ_U64(fake_hpet_stats()->cmp_writes - before.cmp_writes, 1);
    CHECK_EQ_U64(fake_hpet_stats()->counter_reads - before.counter_reads, 2);
    CHECK_EQ_U64(fake_hpet_stats()->conf_reads + fake_hpet_stats()->conf_writes,
                 before.conf_reads + before.conf_writes);
    /* an edge-triggered comparator's interrupt needs no HPET access at all */
    before = *fake_hpet_stats();
    fake_run_for_ns(20000);
    CHECK_EQ_U64(events_seen, 12);
    CHECK_EQ_U64(fake_hpet_stats()->status_writes, before.status_writes);
}

/* The absolute deadline fires at its count: time_ns() runs on the HPET, so the comparator
 * gets exactly the count at which time_ns() reaches the deadline. */
TEST(hpet_channel_abs_deadline_fires_at_its_count)
{
    REQUIRE(channel_machine(100, NULL));
    uint64_t now = time_ns(), deadline = now + 123450;
    REQUIRE(clockevent_program_abs_ns(&ch.ce, deadline, now) == 0);
    fake_run_for_ns(200000);
    REQUIRE(events_seen == 1);
    uint64_t cyc;
    REQUIRE(timekeeping_cycles_at(deadline, hpet_clocksource(&the_hpet), &cyc) == 0);
    CHECK_EQ_U64(cnt_at_event, cyc);
    CHECK_EQ_U64(ch.ce.abs_programs, 1);
    CHECK_EQ_U64(ch.ce.etime_retries, 0);
}

/* The chip applies a comparator write 16 clocks late (more than the two of ATI SB700/SB800
 * and ICH9/10: the later AMD parts Linux's hpet.c mentions). Written through the raw
 * register (no check), a value up to 16 clocks ahead of the counter is passed before it
 * lands and never fires; 17 ahead fires. The margin is what keeps such a write from being
 * accepted and lost: it is far above the delay. */
TEST(hpet_comparator_write_16_clocks_late_loses_what_is_closer)
{
    for (uint64_t ahead = 14; ahead <= 18; ahead++) {
        REQUIRE(channel_machine(0, NULL));
        fake_hpet_set_cmp_write_delay(16);
        REQUIRE(clockevent_set_state(&ch.ce, CE_STATE_ONESHOT, 0) == 0);
        uint64_t c = fake_hpet_counter();
        mmio_write64(FAKE_HPET_BASE + TN_CMP0, c + ahead);
        fake_run_for_ns(1000000);
        if (!CHECK_EQ_U64(events_seen, ahead > 16 ? 1 : 0))
            printf("    written %" PRIu64 " clocks ahead\n", ahead);
        if (ahead > 16)
            CHECK_EQ_U64(cnt_at_event, c + ahead);
    }
    _Static_assert(HPET_CMP_MARGIN_FLOOR_CYC > 16, "the floor covers this delay");
}

/* With the write 16 clocks late, a channel armed closer than the margin is told -ETIME:
 * never a silent miss. Whenever the driver says 0, the event comes; whatever it refuses may
 * or may not come (it may land in time: the grey zone the core's retry absorbs), and nothing
 * comes twice. */
TEST(hpet_channel_armed_within_margin_is_etime_never_lost)
{
    static const uint64_t ahead[] = { 1, 2, 8, 16, 17, 64, 127, 128, 129, 200 };
    for (unsigned mmio_ns = 0; mmio_ns <= 10; mmio_ns += 10)
        for (unsigned i = 0; i < sizeof(ahead) / sizeof(ahead[0]); i++) {
            REQUIRE(channel_machine(mmio_ns, NULL));
            fake_hpet_set_cmp_write_delay(16);
            REQUIRE(clockevent_set_state(&ch.ce, CE_STATE_ONESHOT, 0) == 0);
            int rc = clockevent_program_cyc(&ch.ce, ahead[i]);
            fake_run_for_ns(1000000000);
            if (mmio_ns == 0)     /* the counter stands still between write and check */
                CHECK_EQ_I64(rc, ahead[i] < the_hpet.cmp_margin_cyc ? -ETIME : 0);
            if (rc == 0)
                CHECK_EQ_U64(events_seen, 1);
            CHECK(events_seen <= 1);
            if (ahead[i] <= 16 && mmio_ns == 0)
                CHECK_EQ_U64(events_seen, 0);     /* passed before it landed: lost, but said */
        }
}

/* The case that matters: a stall (an SMI) between the read of "now" and the comparator write,
 * on a chip that applies the write 16 clocks late. The absolute deadline was 300 clocks
 * ahead; the stall leaves it 10 clocks ahead when the write is made, so the write lands 6
 * clocks after the counter passed it and would never fire. The old 3-clock margin accepted
 * it (10 >= 3) and the event was lost; now the read-back is within the margin: -ETIME, the
 * core re-arms the relative way, and the event comes exactly once. */
TEST(hpet_stall_before_a_late_write_is_etime_and_retried_not_lost)
{
    REQUIRE(channel_machine(0, NULL));
    fake_hpet_set_cmp_write_delay(16);
    REQUIRE(clockevent_set_state(&ch.ce, CE_STATE_ONESHOT, 0) == 0);
    uint64_t now = time_ns(), deadline = now + 3000;           /* 300 clocks */
    fake_stall_next_mmio_write(FAKE_HPET_BASE + TN_CMP0, 2900);
    CHECK_EQ_I64(clockevent_program_abs_ns(&ch.ce, deadline, now), 0);
    CHECK_EQ_U64(fake_stats.stalls, 1);
    CHECK_EQ_U64(ch.ce.abs_programs, 1);
    CHECK_EQ_U64(ch.ce.etime_retries, 1);
    CHECK_EQ_U64(ch.ce.etime_failures, 0);
    uint64_t c = fake_hpet_counter();
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(events_seen, 1);
    CHECK(cnt_at_event >= c + ch.ce.min_delta_cyc);          /* re-armed after the stall */
    CHECK(cnt_at_event <= c + ch.ce.min_delta_cyc + 16);
    fake_run_for_ns(100000000);
    CHECK_EQ_U64(events_seen, 1);
}

/* The same stall, relative: clockevent_program_ns() reads "now", the stall, the late write:
 * -ETIME, retried with min_delta, delivered once. */
TEST(hpet_stall_before_a_late_relative_write_is_retried)
{
    REQUIRE(channel_machine(0, NULL));
    fake_hpet_set_cmp_write_delay(16);
    REQUIRE(clockevent_set_state(&ch.ce, CE_STATE_ONESHOT, 0) == 0);
    fake_stall_next_mmio_write(FAKE_HPET_BASE + TN_CMP0, 1000000);   /* 1 ms: far past it */
    CHECK_EQ_I64(clockevent_program_ns(&ch.ce, 5000), 0);
    CHECK_EQ_U64(ch.ce.etime_retries, 1);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(events_seen, 1);
}

/* hpet_measure_margin(): the write + read-back on this block, in HPET clocks. The model's
 * access costs 100 ns (10 clocks): counter, comparator write, counter is 20 clocks, twice
 * that is under the floor, so the margin is the floor. With 1 us accesses (a chipset behind
 * slow bridges, an emulated HPET) it is 200 clocks, and the margin twice that. */
TEST(hpet_margin_measured_never_below_the_floor)
{
    REQUIRE(channel_machine(100, NULL));
    REQUIRE(hpet_measure_margin(&the_hpet, 1) == 0);
    CHECK(the_hpet.margin.measured);
    CHECK_EQ_U64(the_hpet.margin.tries, HPET_MARGIN_TRIES);
    CHECK_EQ_U64(the_hpet.margin.median_cyc, 20);
    CHECK_EQ_U64(the_hpet.margin.worst_cyc, 20);
    CHECK_EQ_U64(the_hpet.margin.stalls, 0);
    CHECK_EQ_U64(the_hpet.cmp_margin_cyc, HPET_CMP_MARGIN_FLOOR_CYC);
    CHECK_EQ_U64(fake_stats.faults, 0);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(1))->raised, 0);   /* no interrupt from it */

    REQUIRE(channel_machine(1000, NULL));
    REQUIRE(hpet_measure_margin(&the_hpet, 1) == 0);
    CHECK_EQ_U64(the_hpet.margin.worst_cyc, 200);
    CHECK_EQ_U64(the_hpet.cmp_margin_cyc, 2 * 200);
    REQUIRE(hpet_channel_init(&ch, &the_hpet, 0, 0, NULL) == 0);
    CHECK_EQ_U64(ch.ce.min_delta_cyc, 400 + 200);   /* the margin and one programming */
    /* and it is what the check asks: 399 clocks ahead at the read-back is refused (the raw
     * call makes four accesses after "now", 100 clocks each, before its check reads) */
    uint64_t now = hpet_read(&the_hpet);
    CHECK_EQ_I64(hpet_set_oneshot(&the_hpet, 0, now + 500 + 399), -ETIME);
    now = hpet_read(&the_hpet);
    CHECK_EQ_I64(hpet_set_oneshot(&the_hpet, 0, now + 500 + 400), 0);
}

/* A try the CPU was taken away in (an SMI: here 1 ms before one comparator write) is the
 * machine's, not the device's: counted as a stall and left out of the worst, so one SMI
 * does not make every later event wait a millisecond. */
TEST(hpet_margin_leaves_out_a_stalled_try)
{
    REQUIRE(channel_machine(100, NULL));
    fake_stall_next_mmio_write(FAKE_HPET_BASE + TN_CMP0 + 0x20, 1000000);   /* comparator 1 */
    REQUIRE(hpet_measure_margin(&the_hpet, 1) == 0);
    CHECK_EQ_U64(fake_stats.stalls, 1);
    CHECK_EQ_U64(the_hpet.margin.stalls, 1);
    CHECK_EQ_U64(the_hpet.margin.worst_cyc, 20);
    CHECK_EQ_U64(the_hpet.cmp_margin_cyc, HPET_CMP_MARGIN_FLOOR_CYC);
}

/* A counter that does not move cannot be measured: -EIO, the floor stays. */
TEST(hpet_margin_of_a_stopped_counter_is_the_floor)
{
    REQUIRE(channel_machine(100, NULL));
    fake_hpet_set_stuck(true);
    CHECK_EQ_I64(hpet_measure_margin(&the_hpet, 1), -EIO);
    CHECK(!the_hpet.margin.measured);
    CHECK_EQ_U64(the_hpet.cmp_margin_cyc, HPET_CMP_MARGIN_FLOOR_CYC);
}

/* Periodic through the core: 1 ms is 100,000 clocks, exact; shutdown stops it. */
TEST(hpet_channel_periodic_through_core)
{
    uint64_t actual = 0;
    REQUIRE(channel_machine(100, NULL));
    REQUIRE(clockevent_set_periodic_ns(&ch.ce, 1000000, &actual) == 0);
    CHECK_EQ_U64(actual, 1000000);
    fake_run_for_ns(10500000);
    CHECK_EQ_U64(events_seen, 10);
    REQUIRE(irqs.n >= 10);
    for (unsigned i = 1; i < 10; i++)
        CHECK_EQ_U64(irqs.e[i].t_ns - irqs.e[i - 1].t_ns, 1000000);
    clockevent_shutdown(&ch.ce);
    fake_run_for_ns(5000000);
    CHECK_EQ_U64(events_seen, 10);
}

/* The routed line: unmasked when the channel leaves SHUTDOWN, masked when it enters it,
 * never per event. */
static unsigned masks, unmasks;
static void line_mask(void *ctx) { (void)ctx; masks++; }
static void line_unmask(void *ctx) { (void)ctx; unmasks++; }

TEST(hpet_channel_line_unmasked_leaving_shutdown_masked_entering_it)
{
    static const struct clockevent_line line = { line_mask, line_unmask, NULL };
    REQUIRE(channel_machine(100, &line));
    masks = unmasks = 0;
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_I64(clockevent_program_ns(&ch.ce, 5000), 0);
        fake_run_for_ns(10000);
    }
    CHECK_EQ_U64(events_seen, 5);
    CHECK_EQ_U64(unmasks, 1);
    CHECK_EQ_U64(masks, 0);
    clockevent_release(&ch.ce);
    CHECK_EQ_U64(masks, 1);
    REQUIRE(clockevent_claim(&ch.ce, count_event, &owner) == 0);
    REQUIRE(clockevent_set_periodic_ns(&ch.ce, 1000000, NULL) == 0);
    CHECK_EQ_U64(unmasks, 2);
    clockevent_shutdown(&ch.ce);
    CHECK_EQ_U64(masks, 2);
}

/* A level-triggered comparator holds its line until its status bit is cleared: the
 * channel's irq function acknowledges it, so the next event raises the line again. */
TEST(hpet_channel_level_triggered_acknowledged_in_irq)
{
    REQUIRE(channel_machine(100, NULL));
    REQUIRE(hpet_comparator_level(&the_hpet, 0, true) == 0);
    REQUIRE(clockevent_program_ns(&ch.ce, 5000) == 0);           /* takes the level bit */
    fake_run_for_ns(10000);
    CHECK_EQ_U64(events_seen, 1);
    uint64_t acks = fake_hpet_stats()->status_writes;
    REQUIRE(clockevent_program_ns(&ch.ce, 5000) == 0);
    fake_run_for_ns(10000);
    CHECK_EQ_U64(events_seen, 2);
    CHECK_EQ_U64(fake_hpet_stats()->status_writes - acks, 1);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->dropped, 0);
}

/* The example in tests/host/fake/README.md, compiled so that it stays true: a one-shot on a
 * 32-bit counter 256 clocks before its wrap, armed 1000 clocks ahead, fires once. */
static uint64_t readme_seen;
static void readme_count(struct clockevent *ce) { (void)ce; readme_seen++; }

TEST(hpet_oneshot_survives_32bit_wrap)
{
    struct hpet_info info;
    static int readme_owner;

    fake_reset();
    clockevent_test_reset();
    fake_hpet_set_counter_32bit(true);
    fake_hpet_set_counter(0xFFFFFF00u);
    memset(&irqs, 0, sizeof(irqs));
    irqs.then = entry;
    fake_set_irq_handler(fake_irq_log_handler, &irqs);
    readme_seen = 0;

    REQUIRE(hpet_init(&the_hpet, FAKE_HPET_BASE, false, &info) == 0);
    hpet_enable(&the_hpet);
    REQUIRE(hpet_comparator_route(&the_hpet, 0, 20) == 0);
    REQUIRE(hpet_channel_init(&ch, &the_hpet, 0, 0, NULL) == 0);
    REQUIRE(clockevent_register(&ch.ce) == 0);
    REQUIRE(clockevent_claim(&ch.ce, readme_count, &readme_owner) == 0);
    REQUIRE(clockevent_program_ns(&ch.ce, 10000) == 0);
    irq_enable();
    fake_run_for_ns(1000000);

    CHECK_EQ_U64(readme_seen, 1);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->delivered, 1);
    CHECK_EQ_U64(fake_stats.faults, 0);
    CHECK(fake_hpet_counter() < 0xFFFFFF00u);       /* it did wrap */
}

/* The device says whether its armed event is still to come (the counter below the
 * comparator) or has happened: how the hrtimer core tells an interrupt left from an earlier
 * programming (still to come) from a comparator that fired early (happened). */
TEST(hpet_channel_pending_until_the_counter_reaches_the_comparator)
{
    REQUIRE(channel_machine(100, NULL));
    CHECK_EQ_I64(clockevent_pending(&ch.ce), -ENOTSUP);    /* shut down: nothing armed */
    REQUIRE(clockevent_program_ns(&ch.ce, 100000) == 0);
    CHECK_EQ_I64(clockevent_pending(&ch.ce), 1);
    fake_run_for_ns(50000);
    CHECK_EQ_I64(clockevent_pending(&ch.ce), 1);
    fake_run_for_ns(60000);
    CHECK_EQ_U64(events_seen, 1);
    CHECK_EQ_I64(clockevent_pending(&ch.ce), 0);
    REQUIRE(clockevent_program_ns(&ch.ce, 100000) == 0);    /* armed again: still to come */
    CHECK_EQ_I64(clockevent_pending(&ch.ce), 1);
}

/* Intel ICH9/ICH10 may answer the first comparator read after a write with the value before
 * it (Linux's hpet.c). Regression: pending() read the comparator straight after the write,
 * got the previous, already passed value, and said the new event had happened: an interrupt
 * left from the earlier programming would then have been taken for an early fire. The
 * channel now compares the counter with what it wrote. */
TEST(hpet_channel_pending_right_with_a_stale_comparator_readback)
{
    REQUIRE(channel_machine(100, NULL));
    fake_hpet_set_stale_cmp_readback(true);
    REQUIRE(clockevent_program_ns(&ch.ce, 10000) == 0);
    fake_run_for_ns(20000);
    REQUIRE(events_seen == 1);
    REQUIRE(clockevent_program_ns(&ch.ce, 100000) == 0);
    uint64_t stale = fake_hpet_stats()->stale_cmp_reads;
    CHECK_EQ_I64(clockevent_pending(&ch.ce), 1);
    CHECK_EQ_U64(fake_hpet_stats()->stale_cmp_reads, stale);   /* nothing read it back */
    mmio_read64(FAKE_HPET_BASE + TN_CMP0);                     /* what the old code saw */
    CHECK_EQ_U64(fake_hpet_stats()->stale_cmp_reads, stale + 1);
    fake_run_for_ns(110000);
    CHECK_EQ_U64(events_seen, 2);
    CHECK_EQ_I64(clockevent_pending(&ch.ce), 0);
}

/* A level-triggered comparator on an input shared with PCI devices (Intel PCH IRQ 20-23):
 * an interrupt on the line while the comparator's status bit is clear is another device's.
 * It is counted and not passed on; the comparator's own event still comes once. */
TEST(hpet_channel_level_interrupt_without_status_is_not_its_own)
{
    REQUIRE(channel_machine(100, NULL));
    REQUIRE(hpet_comparator_level(&the_hpet, 0, true) == 0);
    REQUIRE(clockevent_program_ns(&ch.ce, 50000) == 0);
    fake_irq_raise(FAKE_IRQ_HPET(0));                 /* a PCI device on the same input */
    fake_run_for_ns(1000);
    CHECK_EQ_U64(events_seen, 0);
    CHECK_EQ_U64(hpet_channel_foreign_irqs(&ch), 1);
    fake_run_for_ns(60000);
    CHECK_EQ_U64(events_seen, 1);
    CHECK_EQ_U64(hpet_channel_foreign_irqs(&ch), 1);
    CHECK_EQ_U64(mmio_read32(FAKE_HPET_BASE + 0x20) & 1, 0);   /* status cleared */
}

/* The level check reads GINTR_STA in place (hpet_channel_irq) with the channel's own bit:
 * on comparator 2, comparator 0's status bit set is another's interrupt, not passed on and
 * not cleared; its own bit set is its event, cleared. */
TEST(hpet_channel_level_check_uses_its_own_status_bit)
{
    static struct hpet_channel ch2;
    static int owner2;
    REQUIRE(channel_machine(100, NULL));
    REQUIRE(hpet_comparator_route(&the_hpet, 2, GSI + 1) == 0);
    REQUIRE(hpet_comparator_level(&the_hpet, 2, true) == 0);
    REQUIRE(hpet_channel_init(&ch2, &the_hpet, 2, 0, NULL) == 0);
    REQUIRE(clockevent_register(&ch2.ce) == 0);
    REQUIRE(clockevent_claim(&ch2.ce, count_event, &owner2) == 0);
    REQUIRE(clockevent_set_state(&ch2.ce, CE_STATE_ONESHOT, 0) == 0);
    CHECK_EQ_U64(ch2.status_reg, FAKE_HPET_BASE + 0x20);
    CHECK_EQ_U64(ch2.status_bit, 1u << 2);
    REQUIRE(hpet_comparator_level(&the_hpet, 0, true) == 0);
    REQUIRE(clockevent_program_ns(&ch.ce, 5000) == 0);        /* comparator 0 sets bit 0 */
    irq_disable();
    fake_run_for_ns(10000);
    REQUIRE((mmio_read32(FAKE_HPET_BASE + 0x20) & 1) == 1);
    uint64_t seen = events_seen;
    hpet_channel_irq(&ch2);
    CHECK_EQ_U64(hpet_channel_foreign_irqs(&ch2), 1);
    CHECK_EQ_U64(events_seen, seen);
    CHECK_EQ_U64(mmio_read32(FAKE_HPET_BASE + 0x20) & 1, 1);   /* not its bit: left alone */
    REQUIRE(clockevent_program_ns(&ch2.ce, 5000) == 0);
    fake_run_for_ns(10000);
    REQUIRE((mmio_read32(FAKE_HPET_BASE + 0x20) & 4) == 4);
    hpet_channel_irq(&ch2);
    CHECK_EQ_U64(hpet_channel_foreign_irqs(&ch2), 1);
    CHECK_EQ_U64(events_seen, seen + 1);
    CHECK_EQ_U64(mmio_read32(FAKE_HPET_BASE + 0x20) & 5, 1);   /* its bit cleared, 0's kept */
    irq_enable();
}

/* ---- FSB delivery: the comparator's own message to the local APIC ------------------------- */

#define MSI_VEC 0x45
#define LAPIC_EOI 0x0B0

static void msi_entry(int line, void *ctx)
{
    (void)ctx;
    if (line == FAKE_IRQ_LAPIC && fake_irq_current_vector() == MSI_VEC)
        hpet_channel_irq(&ch);
    mmio_write32(FAKE_LAPIC_BASE + LAPIC_EOI, 0);
}

/* Comparator 0 with Tn_FSB_INT_DEL_CAP, delivering to APIC ID 2 with vector MSI_VEC: every
 * event arrives as a message on the LAPIC with that vector, none on an IOAPIC input, through
 * every state change (shutdown turns FSB delivery off, one-shot and periodic back on). */
TEST(hpet_channel_fsb_delivers_msi_to_the_lapic)
{
    struct hpet_info info;
    fake_reset();
    fake_cost.mmio_ns = 100;
    timekeeping_test_reset();
    clockevent_test_reset();
    memset(&irqs, 0, sizeof(irqs));
    irqs.then = msi_entry;
    fake_set_irq_handler(fake_irq_log_handler, &irqs);
    events_seen = 0;
    fake_hpet_set_fsb_cap(0, true);
    fake_lapic_set_id(2);
    mmio_write32(FAKE_LAPIC_BASE + 0x0F0, 0x1FF);           /* software-enabled */
    REQUIRE(hpet_init(&the_hpet, FAKE_HPET_BASE, false, &info) == 0);
    hpet_enable(&the_hpet);
    REQUIRE(clocksource_register(hpet_clocksource(&the_hpet)) == 0);
    REQUIRE(clocksource_select("hpet", NULL, 0) != NULL);
    CHECK_EQ_I64(hpet_comparator_fsb(&the_hpet, 1, 0xFEE02000u, MSI_VEC), -ENOTSUP);
    REQUIRE(hpet_comparator_fsb(&the_hpet, 0, 0xFEE00000u | 2u << 12, MSI_VEC) == 0);
    CHECK_EQ_I64(hpet_comparator_level(&the_hpet, 0, true), -EINVAL);   /* messages are edges */
    REQUIRE(hpet_channel_init(&ch, &the_hpet, 0, 0, NULL) == 0);
    REQUIRE(clockevent_register(&ch.ce) == 0);
    REQUIRE(clockevent_claim(&ch.ce, count_event, &owner) == 0);
    irq_enable();
    for (int i = 0; i < 5; i++) {
        REQUIRE(clockevent_program_ns(&ch.ce, 10000) == 0);
        fake_run_for_ns(20000);
    }
    CHECK_EQ_U64(events_seen, 5);
    CHECK_EQ_I64(fake_hpet_route(0), FAKE_HPET_ROUTE_FSB);
    CHECK_EQ_U64(fake_hpet_stats()->fsb_messages, 5);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->raised, 0);
    clockevent_shutdown(&ch.ce);
    CHECK_EQ_U64(fake_hpet_conf(0) & (1u << 14), 0);         /* FSB_EN off when shut down */
    REQUIRE(clockevent_set_periodic_ns(&ch.ce, 1000000, NULL) == 0);
    fake_run_for_ns(3500000);
    CHECK_EQ_U64(events_seen, 8);
    clockevent_shutdown(&ch.ce);
    REQUIRE(clockevent_program_ns(&ch.ce, 10000) == 0);
    fake_run_for_ns(20000);
    CHECK_EQ_U64(events_seen, 9);
    CHECK_EQ_U64(fake_hpet_stats()->fsb_messages, 9);
    CHECK_EQ_U64(fake_lapic_stats()->msi_not_accepted, 0);
    /* back to an IOAPIC input: no more messages */
    clockevent_shutdown(&ch.ce);
    REQUIRE(hpet_comparator_route(&the_hpet, 0, GSI) == 0);
    REQUIRE(clockevent_program_ns(&ch.ce, 10000) == 0);
    fake_run_for_ns(20000);
    CHECK_EQ_U64(fake_hpet_stats()->fsb_messages, 9);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->raised, 1);
}

/* Regression (an early tick when the tick took the HPET after the clock event checks had
 * used it): on QEMU a comparator the counter has passed fires as soon as its interrupt is
 * enabled. Entering one-shot or periodic mode with an earlier event's value still in the
 * comparator gave one event at once. The driver now gives the comparator a value ahead
 * before it enables the interrupt. */
TEST(hpet_channel_state_change_with_a_passed_comparator_fires_nothing_early)
{
    REQUIRE(channel_machine(100, NULL));
    fake_hpet_set_passed_fires(true);
    REQUIRE(clockevent_program_ns(&ch.ce, 10000) == 0);
    fake_run_for_ns(20000);
    REQUIRE(events_seen == 1);                 /* the comparator now holds a passed value */
    clockevent_shutdown(&ch.ce);
    REQUIRE(clockevent_set_state(&ch.ce, CE_STATE_ONESHOT, 0) == 0);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(events_seen, 1);
    clockevent_shutdown(&ch.ce);
    uint64_t t0 = vclock_now_ns();
    REQUIRE(clockevent_set_periodic_ns(&ch.ce, 1000000, NULL) == 0);
    fake_run_for_ns(900000);
    CHECK_EQ_U64(events_seen, 1);              /* nothing before the first period */
    fake_run_for_ns(200000);
    CHECK_EQ_U64(events_seen, 2);
    CHECK(irqs.e[irqs.n - 1].t_ns >= t0 + 1000000);
    clockevent_shutdown(&ch.ce);
    /* the raw call likewise: the old value never fires in between, the new one once */
    uint64_t target = hpet_read(&the_hpet) + 1000;
    REQUIRE(hpet_set_oneshot(&the_hpet, 0, target) == 0);
    fake_run_for_ns(20000);
    CHECK_EQ_U64(events_seen, 3);
    CHECK_EQ_U64(cnt_at_event, target);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->raised, 3);
}

/* A level comparator's status bit proves its count was reached (hpet_channel_irq): the
 * event of an exact absolute arming carries that arming's moment (reached_ns), a relative
 * one nothing. An arming that replaces a count already reached but not yet handled (its
 * interrupt held off) clears the bit that count set, so the interrupt left in flight is
 * not taken for the new count's, and the new count's own event carries its own moment. */
static uint64_t reached_at_event, time_at_event;
static void note_reached(struct clockevent *ce)
{
    events_seen++;
    reached_at_event = ce->reached_ns;
    time_at_event = time_ns();
}

TEST(hpet_channel_level_status_proves_its_count_and_a_rearm_clears_a_reached_one)
{
    REQUIRE(channel_machine(100, NULL));
    REQUIRE(hpet_comparator_level(&the_hpet, 0, true) == 0);
    ch.ce.event = note_reached;
    REQUIRE(clockevent_program_ns(&ch.ce, 5000) == 0);           /* takes the level bit */
    fake_run_for_ns(10000);
    REQUIRE(events_seen == 1);
    CHECK_EQ_U64(reached_at_event, 0);                           /* relative: no proof */

    uint64_t now = time_ns(), d1 = now + 5003;
    REQUIRE(clockevent_program_abs_ns(&ch.ce, d1, now) == 0);
    CHECK_EQ_U64(ch.ce.abs_exact_ns, d1);
    fake_run_for_ns(10000);
    CHECK_EQ_U64(events_seen, 2);
    CHECK_EQ_U64(reached_at_event, d1);
    CHECK(time_at_event >= d1);
    CHECK_EQ_U64(ch.ce.abs_exact_ns, 0);                         /* spent */
    CHECK_EQ_U64(ch.stale_cleared, 0);

    /* reached with the interrupt held off, then replaced by a later count */
    irq_disable();
    now = time_ns();
    uint64_t d2 = now + 3000;
    REQUIRE(clockevent_program_abs_ns(&ch.ce, d2, now) == 0);
    fake_run_for_ns(6000);
    CHECK_EQ_U64(mmio_read32(FAKE_HPET_BASE + 0x20) & 1, 1);    /* d2's match, unhandled */
    now = time_ns();
    uint64_t d3 = now + 20000;
    REQUIRE(clockevent_program_abs_ns(&ch.ce, d3, now) == 0);
    CHECK_EQ_U64(ch.stale_cleared, 1);
    CHECK_EQ_U64(mmio_read32(FAKE_HPET_BASE + 0x20) & 1, 0);
    irq_enable();
    fake_run_for_ns(1000);
    CHECK_EQ_U64(events_seen, 2);                                /* nothing passed on early */
    fake_run_for_ns(30000);
    CHECK_EQ_U64(events_seen, 3);
    CHECK_EQ_U64(reached_at_event, d3);
    CHECK(time_at_event >= d3);

    /* re-armed from its own event (the usual way): no extra status access */
    uint64_t acks = fake_hpet_stats()->status_writes;
    now = time_ns();
    REQUIRE(clockevent_program_abs_ns(&ch.ce, now + 5000, now) == 0);
    CHECK_EQ_U64(fake_hpet_stats()->status_writes, acks);
    fake_run_for_ns(10000);
    CHECK_EQ_U64(events_seen, 4);
    CHECK_EQ_U64(fake_hpet_stats()->status_writes - acks, 1);    /* the event's own clear */
    CHECK_EQ_U64(ch.stale_cleared, 1);
}

/* An edge-triggered comparator's interrupt proves nothing: no moment is passed on. */
TEST(hpet_channel_edge_event_proves_nothing)
{
    REQUIRE(channel_machine(100, NULL));
    ch.ce.event = note_reached;
    uint64_t now = time_ns();
    REQUIRE(clockevent_program_abs_ns(&ch.ce, now + 5000, now) == 0);
    REQUIRE(clockevent_program_ns(&ch.ce, 3000) == 0);
    now = time_ns();
    REQUIRE(clockevent_program_abs_ns(&ch.ce, now + 5000, now) == 0);
    CHECK_EQ_U64(ch.ce.abs_exact_ns, now + 5000);
    fake_run_for_ns(10000);
    CHECK_EQ_U64(events_seen, 1);
    CHECK_EQ_U64(reached_at_event, 0);
}

/* A 32-bit comparator matches its count again at every wrap of the counter's low half,
 * handled or not, so nothing tells a reached count apart from a later wrap's match: its
 * status bit is cleared at every one-shot arming (one more write), and the interrupt still
 * proves the count armed last. A 64-bit comparator re-armed from its own event is not. */
TEST(hpet_channel_32bit_level_comparator_clears_its_status_at_every_arming)
{
    REQUIRE(channel_machine_of(100, NULL, true));
    REQUIRE(hpet_comparator_level(&the_hpet, 0, true) == 0);
    ch.ce.event = note_reached;
    REQUIRE(clockevent_program_ns(&ch.ce, 10000) == 0);          /* enters ONESHOT */
    fake_run_for_ns(20000);
    REQUIRE(events_seen == 1);
    for (int i = 0; i < 5; i++) {
        uint64_t acks = fake_hpet_stats()->status_writes;
        uint64_t now = time_ns();
        REQUIRE(clockevent_program_abs_ns(&ch.ce, now + 5000, now) == 0);
        CHECK_EQ_U64(fake_hpet_stats()->status_writes - acks, 1);    /* the arming's */
        fake_run_for_ns(10000);
        CHECK_EQ_U64(events_seen, 2 + (uint64_t)i);
        CHECK_EQ_U64(fake_hpet_stats()->status_writes - acks, 2);    /* and the event's */
        /* the moment is passed on when the 32-bit count's time is exact (time_ns() on
         * this counter, within a wrap) */
        CHECK(reached_at_event == 0 || reached_at_event == now + 5000);
        CHECK(time_at_event >= now + 5000);
    }
    CHECK_EQ_U64(ch.stale_cleared, 0);
}

/* A shared level input held asserted by another device (nobody services it here) brings the
 * interrupt back at every EOI with the comparator's status bit clear: counted in batches of
 * 64, each batch calls the host's hook, and a watch in the host sees HPET_STORM_IRQS in a
 * row, each batch close behind the last, as one storm (the host masks the line there); a
 * batch slower than batch_cyc starts a new run, so a device that asserts now and then never
 * counts as a storm. Before, the foreign interrupts were only counted, for ever. */
static unsigned storm_calls;
static struct hpet_storm_watch watch;
static void batch_hook(struct hpet_channel *c)
{
    (void)c;
    storm_calls += hpet_storm_batch(&watch);
}

static void storm_machine(void)
{
    REQUIRE(channel_machine(100, NULL));
    REQUIRE(hpet_comparator_level(&the_hpet, 0, true) == 0);
    storm_calls = 0;
    watch = (struct hpet_storm_watch){ .batch_cyc = 84000 };   /* 40 us of a 2.1 GHz TSC */
    hpet_set_foreign_batch_hook(batch_hook);
    irq_disable();
}

TEST(hpet_channel_foreign_storm_called_once_at_the_bound)
{
    storm_machine();
    for (unsigned i = 0; i < HPET_STORM_IRQS - 1; i++)
        hpet_channel_irq_level(&ch);           /* status clear: not its own */
    CHECK_EQ_U64(storm_calls, 0);
    hpet_channel_irq_level(&ch);
    CHECK_EQ_U64(storm_calls, 1);
    CHECK_EQ_U64(watch.storms, 1);
    for (unsigned i = 0; i < 10 * HPET_STORM_IRQS - 1; i++)
        hpet_channel_irq_level(&ch);           /* the line not masked yet: still once */
    CHECK_EQ_U64(storm_calls, 1);
    CHECK_EQ_U64(hpet_channel_foreign_irqs(&ch), 11 * HPET_STORM_IRQS - 1);
    CHECK_EQ_U64(events_seen, 0);
    hpet_set_foreign_batch_hook(NULL);
}

TEST(hpet_channel_foreign_interrupts_with_pauses_are_no_storm)
{
    storm_machine();
    for (unsigned i = 0; i < 3 * HPET_STORM_IRQS; i++) {
        hpet_channel_irq_level(&ch);
        if (i % 500 == 499)
            fake_run_for_ns(50000);            /* the device let go for 50 us */
    }
    CHECK_EQ_U64(storm_calls, 0);
    CHECK_EQ_U64(hpet_channel_foreign_irqs(&ch), 3 * HPET_STORM_IRQS);
    hpet_set_foreign_batch_hook(NULL);
}
