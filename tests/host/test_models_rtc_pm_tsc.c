/* tests/host/test_models_rtc_pm_tsc.c - the CMOS RTC (MC146818A periodic interrupt and
 * register C), the ACPI PM timer (rate, 24/32-bit wrap) and the TSC (rate, error, MSRs). */
#include "fake/fake.h"
#include "test.h"

static struct fake_irq_log irqlog;

static void reset_with_log(void)
{
    fake_reset();
    memset(&irqlog, 0, sizeof(irqlog));
    fake_set_irq_handler(fake_irq_log_handler, &irqlog);
}

static uint8_t cmos_read(uint8_t reg)
{
    outb(0x70, reg);
    return inb(0x71);
}

static void cmos_write(uint8_t reg, uint8_t v)
{
    outb(0x70, reg);
    outb(0x71, v);
}

static void read_c(int line, void *ctx)
{
    (void)line, (void)ctx;
    (void)cmos_read(0x0C);
}

/* ---- RTC ------------------------------------------------------------------------------- */

TEST(models_rtc_periodic_1024_hz_with_register_c_read)
{
    reset_with_log();
    irqlog.then = read_c;
    CHECK_EQ_U64(cmos_read(0x0A), 0x26);    /* 32.768 kHz, rate 6 = 1024 Hz */
    cmos_write(0x0B, (uint8_t)(cmos_read(0x0B) | 0x40));
    (void)cmos_read(0x0C);                  /* drop the PF that is already set */
    irq_enable();
    fake_run_until_ns(1000000000);
    CHECK(irqlog.total >= 1023 && irqlog.total <= 1024);
    REQUIRE(irqlog.n > 10);
    CHECK_EQ_I64(irqlog.e[5].line, 8);
    /* 32 ticks of 32.768 kHz: 976,562.5 ns */
    CHECK(irqlog.e[6].t_ns - irqlog.e[5].t_ns >= 976562);
    CHECK(irqlog.e[6].t_ns - irqlog.e[5].t_ns <= 976563);
    CHECK_EQ_U64(fake_rtc_periodic_lost(), 0);
}

/* No read of register C in the handler: IRQF stays set, IRQ8 never comes again. */
TEST(models_rtc_register_c_unread_gates_irq8)
{
    reset_with_log();
    cmos_write(0x0B, 0x42);
    (void)cmos_read(0x0C);
    irq_enable();
    fake_run_for_ns(100000000);
    CHECK_EQ_U64(irqlog.total, 1);
    CHECK_EQ_U64(cmos_read(0x0C) & 0xC0, 0xC0);   /* IRQF and PF; the read clears them */
    CHECK(fake_rtc_periodic_lost() >= 100);
    CHECK_EQ_U64(fake_rtc_reg(0x0C) & 0x80, 0);
    fake_run_for_ns(2000000);
    CHECK_EQ_U64(irqlog.total, 2);
}

TEST(models_rtc_stale_pf_interrupts_when_pie_is_set)
{
    reset_with_log();
    fake_run_for_ns(10000000);              /* PF sets with PIE clear */
    CHECK(fake_rtc_reg(0x0C) & 0x40);
    CHECK_EQ_U64(fake_rtc_reg(0x0C) & 0x80, 0);
    irq_enable();
    cmos_write(0x0B, 0x42);
    CHECK_EQ_U64(irqlog.total, 0);          /* raised; delivered at the next point */
    fake_run_for_ns(0);
    CHECK_EQ_U64(irqlog.total, 1);
}

TEST(models_rtc_rates)
{
    static const struct { uint8_t rs; uint64_t period_ns; } rates[] = {
        { 3, 122070 }, { 1, 3906250 }, { 2, 7812500 }, { 15, 500000000 },
    };

    for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        uint64_t p;
        reset_with_log();
        irqlog.then = read_c;
        cmos_write(0x0A, (uint8_t)(0x20 | rates[i].rs));
        cmos_write(0x0B, 0x42);
        (void)cmos_read(0x0C);
        irq_enable();
        fake_run_for_ns(3 * rates[i].period_ns + 10000);
        if (!CHECK(irqlog.n >= 2))
            return;
        p = irqlog.e[1].t_ns - irqlog.e[0].t_ns;
        CHECK(p + 1 >= rates[i].period_ns && p <= rates[i].period_ns + 1);
    }
    reset_with_log();
    cmos_write(0x0A, 0x20);                 /* rate 0: no periodic interrupt */
    cmos_write(0x0B, 0x42);
    (void)cmos_read(0x0C);
    irq_enable();
    fake_run_for_ns(1000000000);
    CHECK_EQ_U64(irqlog.total, 0);
}

TEST(models_rtc_time_registers_bcd_and_binary)
{
    struct fake_rtc_time t = { 2025, 12, 31, 4, 23, 59, 58 };

    fake_reset();
    fake_rtc_set_time(&t);
    CHECK_EQ_U64(cmos_read(0x00), 0x58);
    CHECK_EQ_U64(cmos_read(0x04), 0x23);
    CHECK_EQ_U64(cmos_read(0x09), 0x25);
    CHECK_EQ_U64(cmos_read(0x32), 0x20);
    cmos_write(0x0B, 0x04);                 /* binary, 12-hour */
    CHECK_EQ_U64(cmos_read(0x00), 58);
    CHECK_EQ_U64(cmos_read(0x04), 0x80 | 11);
    CHECK_EQ_U64(cmos_read(0x0D), 0x80);
    cmos_write(0x40, 0xA5);                 /* CMOS RAM */
    CHECK_EQ_U64(cmos_read(0x40), 0xA5);
}

/* ---- PM timer -------------------------------------------------------------------------- */

TEST(models_pmtimer_rate_and_24bit_wrap)
{
    uint32_t a, b;

    fake_reset();
    a = inl(0x608);
    CHECK_EQ_U64(a, 3);                     /* 1 us after power on at 3.579545 MHz */
    fake_run_for_ns(1000000 - 2000);
    b = inl(0x608);
    CHECK_EQ_U64(b, 3579);                  /* 1 ms */
    fake_run_until_ns(4686000000ull);       /* 2^24 / 3,579,545 Hz = 4.687 s */
    CHECK(inl(0x608) > 0xFFF000);
    fake_run_until_ns(4688000000ull);
    b = inl(0x608);
    CHECK(b < 0x2000);
    CHECK_EQ_U64(b >> 24, 0);
}

TEST(models_pmtimer_32bit_and_stuck)
{
    uint32_t v;

    fake_reset();
    fake_pmtimer_set_32bit(true);
    fake_pmtimer_set_value(0xFFFFFFFEu);
    CHECK_EQ_U64(inl(0x608), 1);            /* 1 us = 3.6 ticks later: 32-bit wrap */
    fake_pmtimer_set_stuck(true);
    v = inl(0x608);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(inl(0x608), v);
    fake_pmtimer_set_port(0xB008);
    CHECK_EQ_U64(inl(0x608), 0xFFFFFFFFu);  /* nothing there any more */
    CHECK_EQ_U64(inl(0xB008), v);
}

/* ---- TSC ------------------------------------------------------------------------------- */

TEST(models_tsc_rate_error_and_msrs)
{
    uint32_t aux = 0;

    fake_reset();
    CHECK_EQ_U64(rdtsc(), 42);              /* 20 ns at 2.1 GHz */
    fake_tsc_set_value(1000000);
    fake_tsc_set_hz(1000000000);
    fake_tsc_set_error_ppm(50);             /* runs 50 ppm fast */
    fake_run_for_ns(1000000000 - 20);
    CHECK_EQ_U64(rdtsc(), 1000000 + 1000050000);
    wrmsr(0x10, 5);
    CHECK_EQ_U64(rdtsc(), 5 + 20);          /* set at the end of the WRMSR; 20 ns on */
    CHECK_EQ_U64(rdmsr(0x10) >> 8, 0);
    wrmsr(0xC0000103u, 7);
    (void)rdtscp_aux(&aux);
    CHECK_EQ_U64(aux, 7);
    fake_tsc_set_error_ppb(-1000);
    CHECK_EQ_U64(fake_tsc_time_of(fake_tsc_read()), vclock_now_ns());
}
