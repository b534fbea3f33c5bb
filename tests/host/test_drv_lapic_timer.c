/* tests/host/test_drv_lapic_timer.c - libticklab/drivers/lapic_timer.c on the LAPIC model (SDM vol. 3A
 * 11.5.4): the divide encodings, one-shot and periodic timing, the current count, stopping,
 * TSC-deadline mode (and its refusal without CPUID.1:ECX[24]), and the free-running counter
 * as a clocksource. The model's timer clock is 1 GHz (QEMU's), so count * divide clocks is
 * count * divide ns; the fake TSC runs at 2.1 GHz. */
#include "ticklab/io.h"
#include "ticklab/lapic.h"
#include "ticklab/lapic_timer.h"
#include "fake/fake.h"
#include "ticklab/errno.h"
#include "test.h"

#define VEC 0x40

static struct fake_irq_log irqs;
static struct lapic_info li;

static void eoi(int line, void *ctx)
{
    (void)line, (void)ctx;
    lapic_eoi();
}

/* LAPIC enabled (x2APIC when asked), handler logging and sending EOI, interrupts on. */
static bool setup(bool x2apic)
{
    fake_reset();
    memset(&irqs, 0, sizeof(irqs));
    irqs.then = eoi;
    fake_set_irq_handler(fake_irq_log_handler, &irqs);
    if (x2apic)
        fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_X2APIC, true);
    if (!CHECK_EQ_I64(lapic_init(FAKE_LAPIC_BASE, x2apic, 0xFF, 0xFE, &li), 0))
        return false;
    irq_enable();
    return true;
}

static void deadline_cpu(void)
{
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_TSC_DEADLINE, true);
}

/* ---- divide ---------------------------------------------------------------------------- */

/* SDM figure 11-10: bits 3, 1, 0 of the divide configuration register. */
TEST(drv_lapic_timer_divide_encodings)
{
    static const struct { unsigned divide; uint32_t code; } table[] = {
        { 2, 0x0 }, { 4, 0x1 }, { 8, 0x2 }, { 16, 0x3 },
        { 32, 0x8 }, { 64, 0x9 }, { 128, 0xA }, { 1, 0xB },
    };
    uint32_t code;

    for (unsigned i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        code = 0xFF;
        CHECK_EQ_I64(lapic_timer_divide_code(table[i].divide, &code), 0);
        CHECK_EQ_U64(code, table[i].code);
    }
    static const unsigned bad[] = { 0, 3, 6, 256, 512, 0x80000000u };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ_I64(lapic_timer_divide_code(bad[i], &code), -EINVAL);
}

/* One-shot at every divide: the interrupt comes count * divide / timer_hz after the write of
 * the initial count, and the divide register holds the encoding. */
TEST(drv_lapic_timer_oneshot_every_divide)
{
    for (unsigned divide = 1; divide <= 128; divide *= 2) {
        uint32_t code;
        if (!setup(false))
            return;
        REQUIRE(lapic_timer_oneshot(VEC, 1000, divide) == 0);
        uint64_t t0 = vclock_now_ns();
        REQUIRE(lapic_timer_divide_code(divide, &code) == 0);
        CHECK_EQ_U64(lapic_read(LAPIC_TIMER_DIV), code);
        fake_run_for_ns(1000ull * divide * 3);
        if (!CHECK_EQ_U64(irqs.n, 1))
            return;
        CHECK_EQ_U64(irqs.e[0].t_ns - t0, 1000ull * divide);
        CHECK_EQ_I64(irqs.e[0].vector, VEC);
        CHECK_EQ_U64(lapic_timer_current(), 0);      /* one-shot: stays at 0 */
    }
}

/* Periodic: reloads from the initial count; every period exactly, the first one a full
 * period after the start. */
TEST(drv_lapic_timer_periodic_reloads)
{
    REQUIRE(setup(false));
    REQUIRE(lapic_timer_periodic(VEC, 10000, 4) == 0);     /* 40 us */
    uint64_t t0 = vclock_now_ns();
    fake_run_for_ns(405000);
    REQUIRE(irqs.n == 10);
    CHECK_EQ_U64(irqs.e[0].t_ns - t0, 40000);
    for (unsigned i = 1; i < irqs.n; i++)
        CHECK_EQ_U64(irqs.e[i].t_ns - irqs.e[i - 1].t_ns, 40000);
    CHECK(lapic_timer_current() > 0);
}

/* The current-count register counts down at timer_hz / divide. */
TEST(drv_lapic_timer_current_count)
{
    REQUIRE(setup(false));
    REQUIRE(lapic_timer_oneshot(VEC, 1000000, 1) == 0);
    fake_run_for_ns(100000);
    CHECK_EQ_U64(lapic_timer_current(), 1000000 - 100000 - 100);   /* the read takes 100 ns */
    REQUIRE(lapic_timer_oneshot(VEC, 1000000, 8) == 0);
    fake_run_for_ns(800000 - 100);
    CHECK_EQ_U64(lapic_timer_current(), 1000000 - 100000);
}

TEST(drv_lapic_timer_stop)
{
    REQUIRE(setup(false));
    REQUIRE(lapic_timer_periodic(VEC, 10000, 1) == 0);
    fake_run_for_ns(35000);
    CHECK_EQ_U64(irqs.total, 3);
    lapic_timer_stop();
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqs.total, 3);
    CHECK_EQ_U64(lapic_timer_current(), 0);
    CHECK(lapic_read(LAPIC_LVT_TIMER) & LVT_MASKED);
}

/* Vectors 0-31 are the CPU's; a zero count never fires; divides are powers of two to 128.
 * A refused call writes nothing. */
TEST(drv_lapic_timer_refuses_bad_arguments)
{
    REQUIRE(setup(false));
    uint64_t writes = fake_stats.mmio_writes;
    CHECK_EQ_I64(lapic_timer_oneshot(31, 1000, 1), -EINVAL);
    CHECK_EQ_I64(lapic_timer_oneshot(VEC, 0, 1), -EINVAL);
    CHECK_EQ_I64(lapic_timer_periodic(VEC, 1000, 3), -EINVAL);
    CHECK_EQ_I64(lapic_timer_periodic(VEC, 1000, 256), -EINVAL);
    CHECK_EQ_I64(lapic_timer_deadline_mode(15), -EINVAL);
    CHECK_EQ_U64(fake_stats.mmio_writes, writes);
}

/* ---- TSC-deadline ---------------------------------------------------------------------- */

/* CPUID.1:ECX[24] clear (QEMU TCG): the driver refuses the mode and leaves the LVT alone. */
TEST(drv_lapic_timer_deadline_refused_without_cpuid_bit)
{
    REQUIRE(setup(false));
    CHECK(!lapic_timer_has_deadline());
    uint32_t lvt = lapic_read(LAPIC_LVT_TIMER);
    CHECK_EQ_I64(lapic_timer_deadline_mode(VEC), -ENOTSUP);
    CHECK_EQ_U64(lapic_read(LAPIC_LVT_TIMER), lvt);
}

/* And the hardware (the model, like QEMU) ignores the MSR without the CPUID bit, even with
 * the LVT forced into mode 2: nothing is armed, nothing fires. */
TEST(drv_lapic_timer_deadline_ignored_by_cpu_without_cpuid_bit)
{
    REQUIRE(setup(false));
    lapic_write(LAPIC_LVT_TIMER, LAPIC_TIMER_MODE_DEADLINE | VEC);
    lapic_timer_set_deadline(1);
    lapic_timer_set_deadline(rdtsc() + 2100);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqs.total, 0);
    CHECK_EQ_U64(fake_lapic_tsc_deadline(), 0);
    CHECK_EQ_U64(rdmsr(MSR_TSC_DEADLINE), 0);
}

/* SDM 11.5.4.1: fires when the TSC reaches the deadline; the MSR reads 0 afterwards. */
static void check_deadline_fires(bool x2apic)
{
    if (!setup(x2apic))
        return;
    deadline_cpu();
    CHECK(lapic_timer_has_deadline());
    REQUIRE(lapic_timer_deadline_mode(VEC) == 0);
    CHECK_EQ_U64(lapic_read(LAPIC_LVT_TIMER), LAPIC_TIMER_MODE_DEADLINE | VEC);
    uint64_t d = rdtsc() + 2100000;                  /* 1 ms at 2.1 GHz */
    lapic_timer_set_deadline(d);
    CHECK_EQ_U64(fake_lapic_tsc_deadline(), d);
    fake_run_for_ns(2000000);
    REQUIRE(irqs.n == 1);
    CHECK_EQ_U64(irqs.e[0].t_ns, (d * 10 + 20) / 21);   /* first ns with TSC >= d */
    CHECK_EQ_I64(irqs.e[0].vector, VEC);
    CHECK_EQ_U64(rdmsr(MSR_TSC_DEADLINE), 0);
}

TEST(drv_lapic_timer_deadline_fires_at_the_tsc_value)
{
    check_deadline_fires(false);
}

TEST(drv_lapic_timer_deadline_fires_at_the_tsc_value_x2apic)
{
    check_deadline_fires(true);
}

/* SDM: a deadline already in the past fires at once. */
TEST(drv_lapic_timer_deadline_in_the_past_fires_at_once)
{
    REQUIRE(setup(false));
    deadline_cpu();
    REQUIRE(lapic_timer_deadline_mode(VEC) == 0);
    fake_run_for_ns(1000000);
    lapic_timer_set_deadline(rdtsc() - 1000);
    uint64_t t = vclock_now_ns();
    fake_run_for_ns(0);
    REQUIRE(irqs.n == 1);
    CHECK_EQ_U64(irqs.e[0].t_ns, t);
}

/* SDM: writing 0 disarms; leaving the mode (stop) disarms too. */
TEST(drv_lapic_timer_deadline_zero_and_stop_disarm)
{
    REQUIRE(setup(false));
    deadline_cpu();
    REQUIRE(lapic_timer_deadline_mode(VEC) == 0);
    lapic_timer_set_deadline(rdtsc() + 21000);
    lapic_timer_set_deadline(0);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqs.total, 0);
    lapic_timer_set_deadline(rdtsc() + 21000);
    lapic_timer_stop();
    CHECK_EQ_U64(fake_lapic_tsc_deadline(), 0);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqs.total, 0);
}

/* The WRMSR to IA32_TSC_DEADLINE is not serialising: each arming is preceded by one fence
 * (serialize(), a CPUID in this build), and the mode switch ends with one (xAPIC: the LVT's
 * MMIO write must be ordered before the WRMSR). */
TEST(drv_lapic_timer_deadline_writes_are_fenced)
{
    REQUIRE(setup(false));
    deadline_cpu();
    uint64_t cpuids = fake_stats.cpuid_calls;
    REQUIRE(lapic_timer_deadline_mode(VEC) == 0);
    CHECK_EQ_U64(fake_stats.cpuid_calls - cpuids, 2);   /* the feature check, the fence */
    cpuids = fake_stats.cpuid_calls;
    uint64_t msrs = fake_stats.msr_writes;
    lapic_timer_set_deadline(rdtsc() + 21000);
    CHECK_EQ_U64(fake_stats.cpuid_calls - cpuids, 1);
    CHECK_EQ_U64(fake_stats.msr_writes - msrs, 1);
}

/* CPUID.06H:EAX[2]: ARAT (the fake's default, like QEMU's named models). */
TEST(drv_lapic_timer_arat_from_cpuid)
{
    fake_reset();
    CHECK(lapic_timer_arat());
    fake_cpuid_set_bit(6, FAKE_EAX, FAKE_CPUID6_EAX_ARAT, false);
    CHECK(!lapic_timer_arat());
}

/* ---- free-running clocksource ------------------------------------------------------------ */

/* Periodic from 0xFFFFFFFF at divide 1, masked: 0xFFFFFFFF - current counts up at the timer
 * clock and never interrupts, even across its wraps (4.29 s at 1 GHz). */
TEST(drv_lapic_timer_clocksource_counts_up_without_interrupts)
{
    REQUIRE(setup(false));
    struct clocksource *cs = lapic_timer_clocksource_start();
    CHECK_EQ_STR(cs->name, "lapic");
    CHECK_EQ_U64(cs->mask, 0xFFFFFFFFu);
    CHECK_EQ_I64(cs->rating, 50);
    CHECK_EQ_U64(cs->freq_hz, 0);
    uint64_t a = cs->read();
    CHECK_EQ_U64(a, 100);                            /* one read, 100 ns, after the start */
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(cs_delta(cs, cs->read(), a), 1000100);
    fake_run_for_ns(10000000000ull);
    CHECK_EQ_U64(irqs.total, 0);
    CHECK(fake_lapic_stats()->masked_fires >= 2);
}

/* Across the reload: the delta is right to one clock (whether the chip shows 0 before the
 * reload is unspecified: the model's period is 2^32 - 1). */
TEST(drv_lapic_timer_clocksource_delta_across_reload)
{
    REQUIRE(setup(false));
    struct clocksource *cs = lapic_timer_clocksource_start();
    fake_run_for_ns(0xFFFFFFFFull - 1000);
    uint64_t a = cs->read();
    CHECK(a > 0xFFFFF000u);
    fake_run_for_ns(5000);
    uint64_t b = cs->read();
    CHECK(b < a);
    uint64_t d = cs_delta(cs, b, a);
    CHECK(d >= 5100 && d <= 5101);
}
