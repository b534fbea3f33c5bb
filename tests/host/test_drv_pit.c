/* tests/host/test_drv_pit.c - drivers/pit8254.c on the 8254 model (ports 0x40-0x43,
 * 0x61; 1,193,182 Hz, one clock 838.1 ns; every port access 1 us): channel 2 as the "pit"
 * clocksource (probe, up-counting across its 16-bit wrap, a latched read that an interrupt
 * handler reading the same counter cannot split), channel 0 as the "pit" clock event device
 * through the core (per event the count's two bytes and nothing else; the IRQ0 line
 * unmasked before any count is loaded; one-shot and periodic timing). */
#include <string.h>

#include "ticklab/pit8254.h"
#include "fake/fake.h"
#include "ticklab/clocksource.h"
#include "ticklab/errno.h"
#include "test.h"

/* The drivers' state, as the kernel keeps it. */
static struct clocksource the_pit_cs;

#define PROBE_CYC 2100000ull          /* 1 ms of the fake's 2.1 GHz TSC */

static struct pit_clockevent pit;
static struct fake_irq_log irqs;
static uint64_t events_seen;
static int owner;

static void entry(int line, void *ctx)
{
    (void)ctx;
    if (line == FAKE_IRQ_ISA(0))
        pit_clockevent_irq(&pit);
}

static void count_event(struct clockevent *ce)
{
    (void)ce;
    events_seen++;
}

static void machine(void)
{
    fake_reset();
    clockevent_test_reset();
    memset(&irqs, 0, sizeof(irqs));
    irqs.then = entry;
    fake_set_irq_handler(fake_irq_log_handler, &irqs);
    events_seen = 0;
}

/* ---- channel 2: the clocksource --------------------------------------------------------- */

TEST(pit_clocksource_counts_up_at_the_pit_rate)
{
    machine();
    struct clocksource *cs = pit_clocksource_init(&the_pit_cs, PROBE_CYC);
    REQUIRE(cs != NULL);
    CHECK_EQ_STR(cs->name, "pit");
    CHECK(cs->usable);
    CHECK_EQ_U64(cs->mask, 0xFFFF);
    CHECK_EQ_U64(cs->freq_hz, PIT_HZ);
    CHECK_EQ_U64(cs->nominal_hz, PIT_HZ);
    CHECK_EQ_I64(cs->rating, PIT_RATING);
    uint64_t a = cs_read(cs);
    fake_run_for_ns(10000000);                      /* 10 ms: 11931.8 clocks */
    uint64_t b = cs_read(cs);
    uint64_t d = cs_delta(cs, b, a);
    CHECK(d >= 11931 + 3 && d <= 11932 + 4);        /* + the read itself: 3 us, 3.6 clocks */
    /* Across many 16-bit wraps (54.9 ms each) every step is a small positive delta. */
    uint64_t prev = cs_read(cs), total = 0;
    for (int i = 0; i < 2000; i++) {
        fake_run_for_ns(40000000);                  /* 40 ms: under a wrap */
        uint64_t v = cs_read(cs);
        uint64_t step = cs_delta(cs, v, prev);
        if (!CHECK(step > 47000 && step < 48000))
            return;
        total += step;
        prev = v;
    }
    CHECK(total > 2000ull * 47727);
}

/* No PIT on the bus: every port reads 0xFF, the latched count never moves. */
TEST(pit_clocksource_absent_is_unusable_with_reason)
{
    machine();
    fake_port_unregister(0x40);
    struct clocksource *cs = pit_clocksource_init(&the_pit_cs, PROBE_CYC);
    CHECK(!cs->usable);
    CHECK_EQ_STR(cs->unusable_reason, "channel 2 does not count");
    CHECK(!pit_probe(PROBE_CYC));
}

/* Channel 0, the one that interrupts: counting (NULL), gated (the ports answer, the count
 * stands still: many 2020s boards), or absent (all ones). The check itself makes no IRQ0
 * edge, so no interrupt is left pending for the checks after it. */
TEST(pit_ch0_check_tells_counting_gated_and_absent_apart)
{
    machine();
    CHECK(pit_ch0_check(PROBE_CYC) == NULL);
    fake_run_for_ns(100000000);                     /* 100 ms: no edge was left armed */
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_ISA(0))->raised, 0);

    machine();
    fake_pit_set_gated(true);
    const char *why = pit_ch0_check(PROBE_CYC);
    CHECK(why && strstr(why, "gated"));
    /* ... and channel 2 is gated as well: the clocksource says so, no frequency is trusted */
    struct clocksource *cs = pit_clocksource_init(&the_pit_cs, PROBE_CYC);
    CHECK(!cs->usable);
    CHECK_EQ_STR(cs->unusable_reason, "channel 2 does not count");
    fake_run_for_ns(100000000);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_ISA(0))->raised, 0);

    machine();
    fake_port_unregister(0x40);
    why = pit_ch0_check(PROBE_CYC);
    CHECK(why && strstr(why, "all ones"));
}

/* The latched read is three port accesses; an interrupt that lands between the latch command
 * and the second inb and whose handler reads the same counter would latch again (ignored by
 * the chip while a latch is pending) and take the interrupted read's bytes: its low byte
 * becomes the handler's, and the interrupted read then gets an unlatched, torn value. The
 * read runs with interrupts off: the handler comes after it, and both values are right. */
static struct vclock_event poke;
static uint64_t handler_value, handler_at_ns;
static unsigned handler_reads;

static void poke_fires(void *ctx)
{
    (void)ctx;
    fake_irq_raise(FAKE_IRQ_ISA(3));
}

static void reading_handler(int line, void *ctx)
{
    (void)line, (void)ctx;
    handler_reads++;
    handler_at_ns = vclock_now_ns();
    handler_value = pit_ch2_read_up();
}

/* The read at t0 after a fixed start, with an interrupt raised `irq_after_ns` into it (0:
 * none). Returns the read's value; the machine is deterministic, so two runs agree. */
static uint64_t read_at(uint64_t t0, uint64_t irq_after_ns)
{
    fake_reset();
    handler_reads = 0;
    fake_set_irq_handler(reading_handler, NULL);
    if (!CHECK(pit_clocksource_init(&the_pit_cs, PROBE_CYC)->usable))
        return 0;
    fake_run_until_ns(t0);
    vclock_event_init(&poke, "test interrupt", poke_fires, NULL);
    if (irq_after_ns)
        vclock_event_arm(&poke, t0 + irq_after_ns);
    fake_irq_set_async(true);                       /* an interrupt at any instruction */
    irq_enable();
    uint64_t v = pit_ch2_read_up();
    fake_run_for_ns(10000);
    irq_disable();
    fake_irq_set_async(false);
    return v;
}

TEST(pit_latch_read_not_split_by_an_interrupt)
{
    const uint64_t t0 = 20000000;                   /* 20 ms in */
    uint64_t want = read_at(t0, 0);
    CHECK_EQ_U64(handler_reads, 0);
    /* 500 ns: raised during the latch command (delivered after it, before the low byte);
     * 1500 ns: during the low byte's read (delivered before the high byte's). */
    static const uint64_t into[] = { 500, 1500, 2500 };
    for (unsigned i = 0; i < sizeof(into) / sizeof(into[0]); i++) {
        uint64_t got = read_at(t0, into[i]);
        CHECK_EQ_U64(got, want);                    /* the interrupted read is whole */
        CHECK_EQ_U64(handler_reads, 1);
        CHECK(handler_at_ns >= t0 + 3000);          /* the handler ran after the read */
        uint64_t d = (handler_value - want) & 0xFFFF;   /* and read a later count */
        if (!CHECK(d >= 3 && d <= 6))
            printf("    irq %" PRIu64 " ns in: read %" PRIu64 ", handler %" PRIu64 "\n",
                   into[i], got, handler_value);
    }
}

/* ---- channel 0: the clock event device -------------------------------------------------- */

static unsigned masks, unmasks;
static uint64_t writes_at_unmask;
static void line_mask(void *ctx)
{
    (void)ctx;
    masks++;
    fake_irq_mask(FAKE_IRQ_ISA(0), true);
}
static void line_unmask(void *ctx)
{
    (void)ctx;
    unmasks++;
    writes_at_unmask = fake_stats.port_writes;
    fake_irq_mask(FAKE_IRQ_ISA(0), false);
}
static const struct clockevent_line irq0 = { line_mask, line_unmask, NULL };

static bool pit_machine(void)
{
    machine();
    masks = unmasks = 0;
    pit_clockevent_init(&pit, &irq0);
    irq_enable();
    return CHECK_EQ_I64(clockevent_register(&pit.ce), 0) &&
           CHECK_EQ_I64(clockevent_claim(&pit.ce, count_event, &owner), 0);
}

TEST(pit_clockevent_describes_itself)
{
    REQUIRE(pit_machine());
    CHECK_EQ_STR(pit.ce.name, "pit");
    CHECK_EQ_U64(pit.ce.features, CE_PERIODIC | CE_ONESHOT);
    CHECK_EQ_U64(pit.ce.freq_hz, PIT_HZ);
    CHECK_EQ_U64(pit.ce.max_delta_cyc, PIT_MAX_ONESHOT_COUNT);
    CHECK_EQ_I64(pit.ce.rating, PIT_CE_RATING);
    CHECK(pit.ce.hw == NULL);
    CHECK(pit.ce.state == CE_STATE_SHUTDOWN);
    CHECK_EQ_U64(masks + unmasks, 0);              /* init leaves the line to the host */
}

/* Per event the PIT needs the count's two bytes: mode 0 was set once, when the device
 * entered ONESHOT, and the line was unmasked then. No port reads, no line access, and each
 * event ends count clocks after the high byte is written. */
TEST(pit_clockevent_per_event_is_two_port_writes_no_line_access)
{
    REQUIRE(pit_machine());
    REQUIRE(clockevent_program_ns(&pit.ce, 100000) == 0);      /* enters ONESHOT */
    fake_run_for_ns(200000);
    REQUIRE(events_seen == 1);
    CHECK_EQ_U64(unmasks, 1);
    for (int i = 0; i < 20; i++) {
        uint64_t count = 100 + 37 * (uint64_t)i;
        struct fake_stats before = fake_stats;
        CHECK_EQ_I64(clockevent_program_cyc(&pit.ce, count), 0);
        uint64_t t_load = vclock_now_ns();
        CHECK_EQ_U64(fake_stats.port_writes - before.port_writes, 2);
        CHECK_EQ_U64(fake_stats.port_reads - before.port_reads, 0);
        fake_run_for_ns(1000000);                  /* at most 803 clocks: 673 us */
        CHECK_EQ_U64(events_seen, 2 + (uint64_t)i);
        /* loaded at the next clock edge, terminal count `count` clocks on */
        uint64_t took = irqs.e[irqs.n - 1].t_ns - t_load;
        uint64_t lo = count * 1000000000ull / PIT_HZ, hi = (count + 1) * 1000000000ull / PIT_HZ + 1;
        if (!CHECK(took >= lo && took <= hi))
            printf("    count %" PRIu64 ": %" PRIu64 " ns\n", count, took);
    }
    CHECK_EQ_U64(masks, 0);
    CHECK_EQ_U64(unmasks, 1);
    CHECK_EQ_U64(pit.ce.state_changes, 1);
    clockevent_release(&pit.ce);
    CHECK_EQ_U64(masks, 1);
}

/* Regression (the masked-edge bug, 782894c): the line is unmasked when the device leaves
 * SHUTDOWN and before any count is loaded, so a short one-shot cannot end while its IOAPIC
 * entry is still masked (an edge that meets a masked entry is lost). */
TEST(pit_clockevent_unmasks_its_line_before_any_count)
{
    REQUIRE(pit_machine());
    for (int i = 0; i < 5; i++) {
        uint64_t writes = fake_stats.port_writes;
        REQUIRE(clockevent_program_cyc(&pit.ce, 1) == 0);      /* the shortest: 1 clock */
        CHECK_EQ_U64(unmasks, 1 + (uint64_t)i);
        CHECK_EQ_U64(writes_at_unmask, writes);                 /* before the mode word */
        fake_run_for_ns(100000);
        CHECK_EQ_U64(events_seen, 1 + (uint64_t)i);
        clockevent_shutdown(&pit.ce);
        CHECK_EQ_U64(masks, 1 + (uint64_t)i);
    }
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_ISA(0))->delivered, 5);
}

/* Periodic through the core: 1 ms is 1193 clocks, 999,847 ns (1000.152 Hz). Shutdown stops
 * it: no further IRQ0. */
TEST(pit_clockevent_periodic_through_core)
{
    uint64_t actual = 0;
    REQUIRE(pit_machine());
    REQUIRE(clockevent_set_periodic_ns(&pit.ce, 1000000, &actual) == 0);
    CHECK_EQ_U64(actual, 999847);
    CHECK_EQ_U64(unmasks, 1);
    fake_run_for_ns(1000000000);
    CHECK(events_seen == 1000 || events_seen == 1001);
    REQUIRE(irqs.n > 100);
    for (unsigned i = 1; i < 100; i++) {
        uint64_t gap = irqs.e[i].t_ns - irqs.e[i - 1].t_ns;
        if (!CHECK(gap == 999847 || gap == 999848))
            break;
    }
    uint64_t n = events_seen;
    clockevent_shutdown(&pit.ce);
    fake_run_for_ns(100000000);
    CHECK_EQ_U64(events_seen, n);
    CHECK_EQ_U64(masks, 1);
    /* mode 2 cannot count 1 */
    CHECK_EQ_I64(clockevent_set_periodic_ns(&pit.ce, 838, NULL), -ERANGE);
}
