/* tests/host/test_drv_rtc.c - drivers/rtc_cmos.c on the MC146818A model (ports 0x70/0x71,
 * IRQ8): the rate-select mapping, probe, the periodic interrupt counted exactly over a second
 * of virtual time, register C gating, stop, interrupts kept off across index + data, the NMI
 * bit left clear, and the "rtc" clockevent through the core. Every port access costs 1 us;
 * the model's periodic edges lie on the 32.768 kHz grid that starts at power on. */
#include "ticklab/rtc_cmos.h"
#include "fake/fake.h"
#include "ticklab/clockevent.h"
#include "ticklab/errno.h"
#include "test.h"

#define IRQ8      FAKE_IRQ_ISA(8)
#define REG_A     0x0A
#define REG_B     0x0B
#define REG_C     0x0C
#define NS_PER_S  1000000000ull

static struct fake_irq_log irqs;
static struct rtc_clockevent rtc;

static void driver_irq(int line, void *ctx)
{
    (void)line, (void)ctx;
    rtc_clockevent_irq(&rtc);
}

/* A fresh machine; every IRQ8 logged, and passed to the driver if `ack`. */
static void machine(bool ack)
{
    fake_reset();
    memset(&irqs, 0, sizeof(irqs));
    memset(&rtc, 0, sizeof(rtc));             /* no owner left from another test */
    irqs.then = ack ? driver_irq : NULL;
    fake_set_irq_handler(fake_irq_log_handler, &irqs);
}

/* ---- rate select ------------------------------------------------------------------------ */

TEST(rtc_rate_code_maps_powers_of_two)
{
    for (unsigned k = 1; k <= 13; k++) {
        CHECK_EQ_I64(rtc_periodic_rate_code(1u << k), 16 - (int)k);
        CHECK_EQ_U64(rtc_periodic_hz(16 - (int)k), 1u << k);
    }
    CHECK_EQ_I64(rtc_periodic_rate_code(1024), 6);    /* the BIOS default, 0x26 */
    CHECK_EQ_I64(rtc_periodic_rate_code(8192), 3);
    CHECK_EQ_I64(rtc_periodic_rate_code(2), 15);
}

TEST(rtc_rate_code_rejects_other_rates)
{
    static const uint32_t bad[] = { 0, 1, 3, 100, 250, 1000, 1023, 16384, 32768, UINT32_MAX };

    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ_I64(rtc_periodic_rate_code(bad[i]), -EINVAL);
    CHECK_EQ_U64(rtc_periodic_hz(0), 0);
    CHECK_EQ_U64(rtc_periodic_hz(1), 0);    /* 256 Hz on the chip, but a repeat: not used */
    CHECK_EQ_U64(rtc_periodic_hz(2), 0);
    CHECK_EQ_U64(rtc_periodic_hz(16), 0);
    CHECK_EQ_U64(rtc_periodic_hz(-1), 0);
}

/* ---- probe ------------------------------------------------------------------------------ */

TEST(rtc_probe_finds_the_model)
{
    machine(false);
    CHECK(rtc_probe());
    CHECK(rtc_probe_reason() == NULL);
    rtc_clockevent_init(&rtc, NULL);
    CHECK(rtc.ce.usable);
    CHECK(rtc.ce.unusable_reason == NULL);
    CHECK_EQ_U64(fake_rtc_reg(REG_B) & 0x40, 0);    /* probing changes nothing */
}

TEST(rtc_probe_absent_reads_ff)
{
    machine(false);
    fake_port_unregister(0x70);
    CHECK(!rtc_probe());
    CHECK_EQ_STR(rtc_probe_reason(), "registers A and D read 0xFF: no RTC on the bus");
    rtc_clockevent_init(&rtc, NULL);
    CHECK(!rtc.ce.usable);
    CHECK_EQ_STR(rtc.ce.unusable_reason, "registers A and D read 0xFF: no RTC on the bus");
    CHECK_EQ_U64(fake_stats.unknown_port_reads, 2);
}

TEST(rtc_probe_divider_stopped)
{
    machine(false);
    outb(0x70, REG_A);
    outb(0x71, 0x06);                         /* DV 000: chain stopped */
    CHECK(!rtc_probe());
    CHECK_EQ_STR(rtc_probe_reason(), "divider not on the 32.768 kHz time base (DV != 010)");
    rtc_clockevent_init(&rtc, NULL);
    CHECK_EQ_STR(rtc.ce.unusable_reason,
                 "divider not on the 32.768 kHz time base (DV != 010)");
    outb(0x70, REG_A);
    outb(0x71, 0x26);
    CHECK(rtc_probe());
}

/* ---- periodic interrupt ----------------------------------------------------------------- */

/* 1024 Hz is 32 cycles of 32.768 kHz, 976,562.5 ns: 1024 of them are exactly one second,
 * so any one-second window holds exactly 1024 edges whatever its phase. */
TEST(rtc_periodic_1024_hz_count_exact_over_one_second)
{
    uint64_t t0;

    machine(true);
    REQUIRE(rtc_start_periodic(1024) == 0);
    CHECK_EQ_U64(fake_rtc_reg(REG_A), 0x26);
    CHECK_EQ_U64(fake_rtc_reg(REG_B), 0x42);  /* PIE added, 24-hour bit kept */
    irq_enable();
    t0 = vclock_now_ns();
    fake_run_until_ns(t0 + NS_PER_S);
    CHECK_EQ_U64(irqs.total, 1024);
    CHECK_EQ_U64(fake_irq_stats(IRQ8)->delivered, 1024);
    CHECK_EQ_U64(fake_rtc_periodic_lost(), 0);
    REQUIRE(irqs.n > 100);
    for (unsigned i = 1; i < 100; i++) {
        uint64_t gap = irqs.e[i].t_ns - irqs.e[i - 1].t_ns;
        if (!CHECK(gap == 976562 || gap == 976563))
            break;
    }
}

/* Registers A and B are battery-backed: after a run nothing of ticklab's may stay in them.
 * The firmware's rate select (6 here, 1024 Hz) comes back after a start at 8192 Hz, and PIE
 * is off again. */
TEST(rtc_stop_restores_the_firmware_rate_select)
{
    machine(true);
    REQUIRE(rtc_probe());
    uint8_t a0 = fake_rtc_reg(REG_A), b0 = fake_rtc_reg(REG_B);
    REQUIRE(rtc_start_periodic(8192) == 0);
    CHECK(fake_rtc_reg(REG_A) != a0);
    rtc_stop();
    CHECK_EQ_U64(fake_rtc_reg(REG_A), a0);
    CHECK_EQ_U64(fake_rtc_reg(REG_B), b0);
}

TEST(rtc_no_second_irq_until_register_c_read)
{
    uint8_t c;

    machine(false);                           /* a handler that forgets register C */
    REQUIRE(rtc_start_periodic(1024) == 0);
    irq_enable();
    fake_run_for_ns(100000000);
    CHECK_EQ_U64(irqs.total, 1);
    c = rtc_ack();
    CHECK(fake_rtc_periodic_lost() >= 95);   /* the model counts them at the read */
    CHECK_EQ_U64(c & (RTC_REG_C_IRQF | RTC_REG_C_PF), RTC_REG_C_IRQF | RTC_REG_C_PF);
    CHECK_EQ_U64(rtc_ack() & RTC_REG_C_IRQF, 0);   /* the read cleared it */
    fake_run_for_ns(1000000);                 /* one more period: one more interrupt */
    CHECK_EQ_U64(irqs.total, 2);
}

TEST(rtc_periodic_rates_measured)
{
    static const uint32_t rates_hz[] = { 2, 64, 1024, 8192 };

    for (unsigned i = 0; i < sizeof(rates_hz) / sizeof(rates_hz[0]); i++) {
        uint64_t period_ns = NS_PER_S / rates_hz[i], gap;
        machine(true);
        REQUIRE(rtc_start_periodic(rates_hz[i]) == 0);
        CHECK_EQ_U64(fake_rtc_reg(REG_A), 0x20 | (uint8_t)rtc_periodic_rate_code(rates_hz[i]));
        irq_enable();
        fake_run_for_ns(4 * period_ns);
        REQUIRE(irqs.n >= 3);
        gap = irqs.e[2].t_ns - irqs.e[1].t_ns;
        CHECK(gap + 1 >= period_ns && gap <= period_ns + 1);
    }
}

TEST(rtc_start_rejects_other_rates_untouched)
{
    machine(true);
    CHECK_EQ_I64(rtc_start_periodic(1000), -EINVAL);
    CHECK_EQ_I64(rtc_start_periodic(16384), -EINVAL);
    CHECK_EQ_U64(fake_rtc_reg(REG_A), 0x26);
    CHECK_EQ_U64(fake_rtc_reg(REG_B), 0x02);
    CHECK_EQ_U64(fake_stats.port_writes, 0);
}

/* A stale PF from before the start must not interrupt at once. */
TEST(rtc_start_clears_stale_flag)
{
    uint64_t t_start;

    machine(true);
    fake_run_for_ns(10000000);                /* PF set long ago, PIE off */
    REQUIRE(fake_rtc_reg(REG_C) & RTC_REG_C_PF);
    REQUIRE(rtc_start_periodic(2) == 0);      /* next edge up to 0.5 s away */
    t_start = vclock_now_ns();
    irq_enable();
    fake_run_for_ns(0);
    CHECK_EQ_U64(irqs.total, 0);
    fake_run_for_ns(NS_PER_S / 2);
    REQUIRE(irqs.n == 1);
    CHECK(irqs.e[0].t_ns > t_start);
}

TEST(rtc_stop_silences_and_restores_rate)
{
    uint64_t before;

    machine(true);
    REQUIRE(rtc_probe());                      /* remembers RS 6 (1024 Hz) */
    REQUIRE(rtc_start_periodic(8192) == 0);
    irq_enable();
    fake_run_for_ns(10000000);
    CHECK(irqs.total >= 80);
    rtc_stop();
    before = irqs.total;
    fake_run_for_ns(NS_PER_S);
    CHECK_EQ_U64(irqs.total, before);
    CHECK_EQ_U64(fake_rtc_reg(REG_B), 0x02);  /* PIE off, the rest as it was */
    CHECK_EQ_U64(fake_rtc_reg(REG_A), 0x26);  /* DV untouched, RS back to the firmware's */
    CHECK_EQ_U64(fake_rtc_reg(REG_C) & RTC_REG_C_IRQF, 0);
}

/* With every primitive a delivery point, an IRQ8 whose handler reads C could land between
 * the driver's index write and its data access, and the driver would read or write register
 * C instead of A or B. The driver keeps interrupts off across each pair, so at 8192 Hz (an
 * edge every 122 us, an access every 1 us) a thousand restarts never corrupt a register. */
TEST(rtc_index_and_data_not_split_by_irq8)
{
    machine(true);
    fake_irq_set_async(true);
    REQUIRE(rtc_start_periodic(8192) == 0);
    irq_enable();
    for (int i = 0; i < 1000; i++) {
        REQUIRE(rtc_start_periodic(i & 1 ? 8192 : 4096) == 0);
        if (!CHECK_EQ_U64(fake_rtc_reg(REG_A), i & 1 ? 0x23 : 0x24) ||
            !CHECK_EQ_U64(fake_rtc_reg(REG_B), 0x42))
            return;
    }
    CHECK(irqs.total > 10);
}

/* ---- port 0x70 bit 7 (NMI mask) ---------------------------------------------------------- */

/* A stand-in RTC at 0x70/0x71 that records every index byte written. */
static struct {
    unsigned index_writes, nmi_bit_writes;
    uint8_t index;
} spy;

static uint64_t spy_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)size;
    if (off == 0)
        return 0xFF;
    return spy.index == REG_A ? 0x26 : spy.index == 0x0D ? 0x80 : 0;
}

static void spy_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)size;
    if (off != 0)
        return;
    spy.index_writes++;
    spy.nmi_bit_writes += (v & 0x80) != 0;
    spy.index = (uint8_t)(v & 0x7F);
}

static const struct fake_io_ops spy_ops = { spy_read, spy_write };

TEST(rtc_index_writes_leave_nmi_unmasked)
{
    machine(false);
    memset(&spy, 0, sizeof(spy));
    fake_port_unregister(0x70);
    REQUIRE(fake_port_register(0x70, 2, &spy_ops, NULL) == 0);
    CHECK(rtc_probe());
    CHECK_EQ_I64(rtc_start_periodic(64), 0);
    (void)rtc_ack();
    rtc_stop();
    CHECK(spy.index_writes >= 8);
    CHECK_EQ_U64(spy.nmi_bit_writes, 0);
}

/* ---- the clockevent through the core ---------------------------------------------------- */

static uint64_t ce_events;

static void on_event(struct clockevent *ce)
{
    (void)ce;
    ce_events++;
}

TEST(rtc_clockevent_periodic_through_core)
{
    struct clockevent *ce;
    uint64_t actual = 0, t0;
    char why[96];
    static int owner;

    machine(true);
    clockevent_test_reset();
    REQUIRE(rtc_probe());
    rtc_clockevent_init(&rtc, NULL);
    ce = &rtc.ce;
    REQUIRE(clockevent_register(ce) == 0);
    CHECK_EQ_U64(ce->features, CE_PERIODIC);
    CHECK_EQ_U64(ce->freq_hz, 32768);
    CHECK(clockevent_select("rtc", CE_PERIODIC, 0, NULL, why, sizeof(why)) == ce);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, why, sizeof(why)) == NULL);
    CHECK_EQ_STR(why, "no usable clockevent with ONESHOT");
    REQUIRE(clockevent_claim(ce, on_event, &owner) == 0);
    ce_events = 0;

    /* 976,562 ns is 31.99998 cycles: 32, a 1024 Hz rate; really 976,562.5 ns */
    REQUIRE(clockevent_set_periodic_ns(ce, 976562, &actual) == 0);
    CHECK_EQ_U64(actual, 976563);
    irq_enable();
    t0 = vclock_now_ns();
    fake_run_until_ns(t0 + NS_PER_S);
    CHECK_EQ_U64(ce->events, 1024);
    CHECK_EQ_U64(ce_events, 1024);
    clockevent_shutdown(ce);
    fake_run_for_ns(NS_PER_S);
    CHECK_EQ_U64(ce->events, 1024);
    clockevent_release(ce);
}

/* IRQ8's line as the host routed it: unmasked when the device leaves SHUTDOWN, masked when
 * it enters it, and never touched per event. */
static unsigned masks, unmasks;
static void line_mask(void *ctx) { (void)ctx; masks++; }
static void line_unmask(void *ctx) { (void)ctx; unmasks++; }

TEST(rtc_clockevent_line_unmasked_leaving_shutdown_masked_entering_it)
{
    static const struct clockevent_line line = { line_mask, line_unmask, NULL };
    static int owner;

    machine(true);
    clockevent_test_reset();
    REQUIRE(rtc_probe());
    rtc_clockevent_init(&rtc, &line);
    REQUIRE(clockevent_register(&rtc.ce) == 0);
    REQUIRE(clockevent_claim(&rtc.ce, on_event, &owner) == 0);
    masks = unmasks = 0;
    ce_events = 0;
    REQUIRE(clockevent_set_periodic_ns(&rtc.ce, NS_PER_S / 1024, NULL) == 0);
    CHECK_EQ_U64(unmasks, 1);
    CHECK_EQ_U64(masks, 0);
    irq_enable();
    fake_run_for_ns(NS_PER_S / 10);
    CHECK(ce_events >= 100);
    CHECK_EQ_U64(unmasks + masks, 1);        /* nothing per event */
    clockevent_release(&rtc.ce);
    CHECK_EQ_U64(masks, 1);
}

TEST(rtc_clockevent_only_power_of_two_periods)
{
    struct clockevent *ce;
    uint64_t actual = 0;

    machine(true);
    clockevent_test_reset();
    REQUIRE(rtc_probe());
    rtc_clockevent_init(&rtc, NULL);
    ce = &rtc.ce;
    REQUIRE(clockevent_register(ce) == 0);
    CHECK_EQ_I64(clockevent_set_periodic_ns(ce, NS_PER_S / 1000, &actual), -EINVAL);  /* 33 */
    CHECK_EQ_I64(clockevent_set_periodic_ns(ce, NS_PER_S / 100, &actual), -EINVAL);   /* 328 */
    CHECK_EQ_I64(clockevent_set_periodic_ns(ce, NS_PER_S, &actual), -ERANGE);   /* 1 Hz */
    CHECK_EQ_I64(clockevent_set_periodic_ns(ce, 61035, &actual), -ERANGE);      /* 16 kHz */
    CHECK_EQ_U64(fake_rtc_reg(REG_B) & 0x40, 0);
    CHECK_EQ_I64(clockevent_set_periodic_ns(ce, NS_PER_S / 8192, &actual), 0);  /* 4 cyc */
    CHECK_EQ_U64(actual, 122070);             /* 122,070.3 */
    CHECK_EQ_U64(fake_rtc_reg(REG_A), 0x23);
    CHECK_EQ_I64(clockevent_set_periodic_ns(ce, NS_PER_S / 2, &actual), 0);     /* 16384 */
    CHECK_EQ_U64(actual, 500000000);
    CHECK_EQ_U64(fake_rtc_reg(REG_A), 0x2F);
    CHECK_EQ_I64(clockevent_program_ns(ce, 1000), -ENOTSUP);
}
