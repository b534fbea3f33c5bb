/* tests/host/test_drv_lapic_timer.c - drivers/lapic_timer.c on the LAPIC model (SDM vol. 3A
 * 11.5.4): the divide encodings, one-shot and periodic timing, the current count, stopping,
 * TSC-deadline mode (and the device's refusal without CPUID.1:ECX[24]), the free-running
 * counter as a clocksource, and the two clock event devices of struct lapic_timer_ce (what
 * each event costs in register accesses, the fence rule, the shared hardware). The model's timer clock is 1 GHz (QEMU's), so count * divide clocks is
 * count * divide ns; the fake TSC runs at 2.1 GHz. */
#include "ticklab/cpuid.h"
#include "ticklab/io.h"
#include "ticklab/lapic.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/tsc.h"
#include "fake/fake.h"
#include "ticklab/errno.h"
#include "test.h"
#include "ticklab/timekeeping.h"

/* The drivers' state, as the kernel keeps it. */
static struct lapic the_apic;
static struct lapic_timer_cs the_lapic_cs;
static struct tsc the_tsc;

#define VEC 0x40

static struct fake_irq_log irqs;
static struct lapic_info li;

static void eoi(int line, void *ctx)
{
    (void)line, (void)ctx;
    lapic_eoi(&the_apic);
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
    if (!CHECK_EQ_I64(lapic_init(&the_apic, FAKE_LAPIC_BASE, x2apic, 0xFF, 0xFE, &li), 0))
        return false;
    irq_enable();
    return true;
}

static uint64_t events_seen, last_event_ns;
static void count_event(struct clockevent *ce)
{
    (void)ce;
    events_seen++;
    last_event_ns = time_ns();
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
        REQUIRE(lapic_timer_oneshot(&the_apic, VEC, 1000, divide) == 0);
        uint64_t t0 = vclock_now_ns();
        REQUIRE(lapic_timer_divide_code(divide, &code) == 0);
        CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_TIMER_DIV), code);
        fake_run_for_ns(1000ull * divide * 3);
        if (!CHECK_EQ_U64(irqs.n, 1))
            return;
        CHECK_EQ_U64(irqs.e[0].t_ns - t0, 1000ull * divide);
        CHECK_EQ_I64(irqs.e[0].vector, VEC);
        CHECK_EQ_U64(lapic_timer_current(&the_apic), 0);      /* one-shot: stays at 0 */
    }
}

/* Periodic: reloads from the initial count; every period exactly, the first one a full
 * period after the start. */
TEST(drv_lapic_timer_periodic_reloads)
{
    REQUIRE(setup(false));
    REQUIRE(lapic_timer_periodic(&the_apic, VEC, 10000, 4) == 0);     /* 40 us */
    uint64_t t0 = vclock_now_ns();
    fake_run_for_ns(405000);
    REQUIRE(irqs.n == 10);
    CHECK_EQ_U64(irqs.e[0].t_ns - t0, 40000);
    for (unsigned i = 1; i < irqs.n; i++)
        CHECK_EQ_U64(irqs.e[i].t_ns - irqs.e[i - 1].t_ns, 40000);
    CHECK(lapic_timer_current(&the_apic) > 0);
}

/* The current-count register counts down at timer_hz / divide. */
TEST(drv_lapic_timer_current_count)
{
    REQUIRE(setup(false));
    REQUIRE(lapic_timer_oneshot(&the_apic, VEC, 1000000, 1) == 0);
    fake_run_for_ns(100000);
    CHECK_EQ_U64(lapic_timer_current(&the_apic), 1000000 - 100000 - 100);   /* the read takes 100 ns */
    REQUIRE(lapic_timer_oneshot(&the_apic, VEC, 1000000, 8) == 0);
    fake_run_for_ns(800000 - 100);
    CHECK_EQ_U64(lapic_timer_current(&the_apic), 1000000 - 100000);
}

TEST(drv_lapic_timer_stop)
{
    REQUIRE(setup(false));
    REQUIRE(lapic_timer_periodic(&the_apic, VEC, 10000, 1) == 0);
    fake_run_for_ns(35000);
    CHECK_EQ_U64(irqs.total, 3);
    lapic_timer_stop(&the_apic);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqs.total, 3);
    CHECK_EQ_U64(lapic_timer_current(&the_apic), 0);
    CHECK(lapic_read(&the_apic, LAPIC_LVT_TIMER) & LVT_MASKED);
}

/* Vectors 0-31 are the CPU's; a zero count never fires; divides are powers of two to 128.
 * A refused call writes nothing. */
TEST(drv_lapic_timer_refuses_bad_arguments)
{
    REQUIRE(setup(false));
    uint64_t writes = fake_stats.mmio_writes;
    CHECK_EQ_I64(lapic_timer_oneshot(&the_apic, 31, 1000, 1), -EINVAL);
    CHECK_EQ_I64(lapic_timer_oneshot(&the_apic, VEC, 0, 1), -EINVAL);
    CHECK_EQ_I64(lapic_timer_periodic(&the_apic, VEC, 1000, 3), -EINVAL);
    CHECK_EQ_I64(lapic_timer_periodic(&the_apic, VEC, 1000, 256), -EINVAL);
    CHECK_EQ_I64(lapic_timer_deadline_mode(&the_apic, 15), -EINVAL);
    CHECK_EQ_U64(fake_stats.mmio_writes, writes);
}

/* ---- TSC-deadline ---------------------------------------------------------------------- */

/* CPUID.1:ECX[24] clear (QEMU TCG): cpu_probe() says so, and the "tsc_deadline" device is
 * listed unusable with the reason; nothing touches the LVT. (The CPUID check moved out of
 * lapic_timer_deadline_mode(&the_apic, ), which no longer runs CPUID at all.) */
TEST(drv_lapic_timer_deadline_device_unusable_without_cpuid_bit)
{
    struct cpu_info ci;
    static struct lapic_timer_ce t;
    static int owner;

    REQUIRE(setup(false));
    clockevent_test_reset();
    cpu_probe(&ci);
    CHECK(!ci.tsc_deadline);
    uint32_t lvt = lapic_read(&the_apic, LAPIC_LVT_TIMER);
    uint64_t writes = fake_stats.mmio_writes;
    lapic_timer_ce_init(&t, &the_apic, 0, VEC, 1000000000, NULL, &ci);
    CHECK(!t.deadline.usable);
    CHECK_EQ_STR(t.deadline.unusable_reason,
                 "CPUID.1:ECX[24] is clear (QEMU TCG never offers it)");
    REQUIRE(clockevent_register(&t.deadline) == 0);
    CHECK_EQ_I64(clockevent_claim(&t.deadline, count_event, &owner), -ENODEV);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_LVT_TIMER), lvt);
    CHECK_EQ_U64(fake_stats.mmio_writes, writes);
}

/* And the hardware (the model, like QEMU) ignores the MSR without the CPUID bit, even with
 * the LVT forced into mode 2: nothing is armed, nothing fires. */
TEST(drv_lapic_timer_deadline_ignored_by_cpu_without_cpuid_bit)
{
    REQUIRE(setup(false));
    lapic_write(&the_apic, LAPIC_LVT_TIMER, LAPIC_TIMER_MODE_DEADLINE | VEC);
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
    struct cpu_info ci;
    cpu_probe(&ci);
    CHECK(ci.tsc_deadline);
    REQUIRE(lapic_timer_deadline_mode(&the_apic, VEC) == 0);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_LVT_TIMER), LAPIC_TIMER_MODE_DEADLINE | VEC);
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
    REQUIRE(lapic_timer_deadline_mode(&the_apic, VEC) == 0);
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
    REQUIRE(lapic_timer_deadline_mode(&the_apic, VEC) == 0);
    lapic_timer_set_deadline(rdtsc() + 21000);
    lapic_timer_set_deadline(0);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqs.total, 0);
    lapic_timer_set_deadline(rdtsc() + 21000);
    lapic_timer_stop(&the_apic);
    CHECK_EQ_U64(fake_lapic_tsc_deadline(), 0);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqs.total, 0);
}

/* The WRMSR to IA32_TSC_DEADLINE is not serialising: each arming is preceded by one fence
 * (wrmsr_fence(): MFENCE;LFENCE, counted by the fake), and the mode switch ends with one
 * (xAPIC: the LVT's MMIO write must be ordered before the WRMSR). No CPUID anywhere: under
 * a hypervisor each would be a VM exit. */
TEST(drv_lapic_timer_deadline_writes_are_fenced)
{
    REQUIRE(setup(false));
    deadline_cpu();
    uint64_t cpuids = fake_stats.cpuid_calls, fences = fake_stats.fences;
    REQUIRE(lapic_timer_deadline_mode(&the_apic, VEC) == 0);
    CHECK_EQ_U64(fake_stats.fences - fences, 1);
    fences = fake_stats.fences;
    uint64_t msrs = fake_stats.msr_writes;
    lapic_timer_set_deadline(rdtsc() + 21000);
    CHECK_EQ_U64(fake_stats.fences - fences, 1);
    CHECK_EQ_U64(fake_stats.msr_writes - msrs, 1);
    CHECK_EQ_U64(fake_stats.cpuid_calls, cpuids);
}

/* CPUID.06H:EAX[2]: ARAT (the fake's default, like QEMU's named models), read by
 * cpu_probe(); without it both LAPIC devices are CE_STOPS_IN_IDLE. */
TEST(drv_lapic_timer_arat_from_cpuid)
{
    struct cpu_info ci;
    static struct lapic_timer_ce t;

    fake_reset();
    cpu_probe(&ci);
    CHECK(ci.arat);
    lapic_timer_ce_init(&t, &the_apic, 0, VEC, 1000000000, NULL, &ci);
    CHECK_EQ_U64(t.lapic.features & CE_STOPS_IN_IDLE, 0);
    fake_cpuid_set_bit(6, FAKE_EAX, FAKE_CPUID6_EAX_ARAT, false);
    cpu_probe(&ci);
    CHECK(!ci.arat);
    lapic_timer_ce_init(&t, &the_apic, 0, VEC, 1000000000, NULL, &ci);
    CHECK(t.lapic.features & CE_STOPS_IN_IDLE);
    CHECK(t.deadline.features & CE_STOPS_IN_IDLE);
}

/* ---- free-running clocksource ------------------------------------------------------------ */

/* Periodic from 0xFFFFFFFF at divide 1, masked: 0xFFFFFFFF - current counts up at the timer
 * clock and never interrupts, even across its wraps (4.29 s at 1 GHz). */
TEST(drv_lapic_timer_clocksource_counts_up_without_interrupts)
{
    REQUIRE(setup(false));
    struct clocksource *cs = lapic_timer_clocksource_start(&the_lapic_cs, &the_apic);
    CHECK_EQ_STR(cs->name, "lapic");
    CHECK_EQ_U64(cs->mask, 0xFFFFFFFFu);
    CHECK_EQ_I64(cs->rating, 50);
    CHECK_EQ_U64(cs->freq_hz, 0);
    uint64_t a = cs_read(cs);
    CHECK_EQ_U64(a, 100);                            /* one read, 100 ns, after the start */
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(cs_delta(cs, cs_read(cs), a), 1000100);
    fake_run_for_ns(10000000000ull);
    CHECK_EQ_U64(irqs.total, 0);
    CHECK(fake_lapic_stats()->masked_fires >= 2);
}

/* Across the reload: the delta is right to one clock (whether the chip shows 0 before the
 * reload is unspecified: the model's period is 2^32 - 1). */
TEST(drv_lapic_timer_clocksource_delta_across_reload)
{
    REQUIRE(setup(false));
    struct clocksource *cs = lapic_timer_clocksource_start(&the_lapic_cs, &the_apic);
    fake_run_for_ns(0xFFFFFFFFull - 1000);
    uint64_t a = cs_read(cs);
    CHECK(a > 0xFFFFF000u);
    fake_run_for_ns(5000);
    uint64_t b = cs_read(cs);
    CHECK(b < a);
    uint64_t d = cs_delta(cs, b, a);
    CHECK(d >= 5100 && d <= 5101);
}

/* ---- the two clock event devices ---------------------------------------------------------- */

static struct lapic_timer_ce lt;
static int owner;

/* The host's handler: EOI, then the driver's irq function. */
static void ce_entry(int line, void *ctx)
{
    (void)line, (void)ctx;
    lapic_eoi(&the_apic);
    lapic_timer_ce_irq(&lt);
}

/* The driver's TSC clocksource as cpu_probe() found it, copied so that its calibration here
 * does not outlive the test (the driver keeps one static source). */
static struct clocksource tsc_copy;
static struct clocksource *calibrated_tsc(const struct cpu_info *ci)
{
    tsc_copy = *tsc_clocksource_init(&the_tsc, ci);
    tsc_copy.next = NULL;
    return &tsc_copy;
}

/* A machine with the TSC as time_ns()'s clocksource (calibrated: the fake's 2.1 GHz), both
 * devices filled for CPU 0 and registered, the CPU as cpu_probe() finds it. */
static bool ce_machine(bool x2apic, bool tsc_deadline, struct cpu_info *ci)
{
    if (!setup(x2apic))
        return false;
    irqs.then = ce_entry;
    if (tsc_deadline)
        deadline_cpu();
    cpu_probe(ci);
    timekeeping_test_reset();
    clockevent_test_reset();
    struct clocksource *tsc = calibrated_tsc(ci);
    if (!CHECK_EQ_I64(clocksource_register(tsc), 0) ||
        !CHECK_EQ_I64(clocksource_set_freq(tsc, FAKE_TSC_DEFAULT_HZ), 0) ||
        !CHECK(clocksource_select("tsc", NULL, 0) == tsc))
        return false;
    lapic_timer_ce_init(&lt, &the_apic, 0, VEC, 1000000000, tsc, ci);
    events_seen = 0;
    return CHECK_EQ_I64(clockevent_register(&lt.lapic), 0) &&
           CHECK_EQ_I64(clockevent_register(&lt.deadline), 0);
}

/* Per event the count-down timer needs one thing: the initial count. After the first
 * programming (which enters ONESHOT: divide and LVT once), every clockevent_program_ns() is
 * exactly one MMIO write and nothing else, and each one fires when it should. */
TEST(drv_lapic_timer_ce_oneshot_is_one_mmio_write_per_event)
{
    struct cpu_info ci;
    REQUIRE(ce_machine(false, false, &ci));
    struct clockevent *ce = &lt.lapic;
    CHECK_EQ_STR(ce->name, "lapic");
    CHECK_EQ_U64(ce->features & (CE_ONESHOT | CE_PERIODIC | CE_PERCPU),
                 CE_ONESHOT | CE_PERIODIC | CE_PERCPU);
    CHECK(ce->hw == &lt);
    REQUIRE(clockevent_claim(ce, count_event, &owner) == 0);
    REQUIRE(clockevent_program_ns(ce, 10000) == 0);             /* enters ONESHOT */
    fake_run_for_ns(20000);
    REQUIRE(events_seen == 1);
    for (int i = 0; i < 10; i++) {
        struct fake_stats before = fake_stats;
        uint64_t t0 = vclock_now_ns();
        CHECK_EQ_I64(clockevent_program_ns(ce, 5000 + 1000 * (uint64_t)i), 0);
        CHECK_EQ_U64(fake_stats.mmio_writes - before.mmio_writes, 1);
        CHECK_EQ_U64(fake_stats.mmio_reads - before.mmio_reads, 0);
        CHECK_EQ_U64(fake_stats.msr_writes + fake_stats.msr_reads, before.msr_writes + before.msr_reads);
        CHECK_EQ_U64(fake_stats.cpuid_calls - before.cpuid_calls, 0);
        fake_run_for_ns(20000);
        CHECK_EQ_U64(events_seen, 2 + (uint64_t)i);
        CHECK_EQ_U64(irqs.e[irqs.n - 1].t_ns - t0, 100 + 5000 + 1000 * (uint64_t)i);
    }
    CHECK_EQ_U64(ce->state_changes, 1);
    CHECK_EQ_U64(ce->events, 11);
    clockevent_release(ce);
}

/* The same in x2APIC mode: the one write is one WRMSR. */
TEST(drv_lapic_timer_ce_oneshot_is_one_msr_write_per_event_x2apic)
{
    struct cpu_info ci;
    REQUIRE(ce_machine(true, false, &ci));
    struct clockevent *ce = &lt.lapic;
    REQUIRE(clockevent_claim(ce, count_event, &owner) == 0);
    REQUIRE(clockevent_program_ns(ce, 10000) == 0);
    fake_run_for_ns(20000);
    struct fake_stats before = fake_stats;
    CHECK_EQ_I64(clockevent_program_ns(ce, 5000), 0);
    CHECK_EQ_U64(fake_stats.msr_writes - before.msr_writes, 1);
    CHECK_EQ_U64(fake_stats.mmio_writes + fake_stats.mmio_reads,
                 before.mmio_writes + before.mmio_reads);
    CHECK_EQ_U64(fake_stats.cpuid_calls, before.cpuid_calls);
    fake_run_for_ns(20000);
    CHECK_EQ_U64(events_seen, 2);
    clockevent_release(ce);
}

/* TSC-deadline per arm: one WRMSR behind one fence (Intel), no CPUID, no LVT access; armed
 * by the absolute TSC count of the deadline (time_ns() runs on the TSC), it fires at it. */
TEST(drv_lapic_timer_ce_deadline_is_one_wrmsr_one_fence_no_cpuid_per_arm)
{
    struct cpu_info ci;
    REQUIRE(ce_machine(false, true, &ci));
    struct clockevent *ce = &lt.deadline;
    CHECK(ce->usable);
    CHECK_EQ_STR(ce->name, "tsc_deadline");
    CHECK_EQ_U64(ce->features & (CE_ONESHOT | CE_ABS | CE_PERCPU),
                 CE_ONESHOT | CE_ABS | CE_PERCPU);
    CHECK(lt.fence);
    REQUIRE(clockevent_claim(ce, count_event, &owner) == 0);
    REQUIRE(clockevent_program_ns(ce, 10000) == 0);             /* enters ONESHOT */
    fake_run_for_ns(20000);
    REQUIRE(events_seen == 1);
    for (int i = 0; i < 10; i++) {
        uint64_t now = time_ns(), deadline = now + 7000 + 100 * (uint64_t)i;
        struct fake_stats before = fake_stats;
        CHECK_EQ_I64(clockevent_program_abs_ns(ce, deadline, now), 0);
        CHECK_EQ_U64(fake_stats.msr_writes - before.msr_writes, 1);
        CHECK_EQ_U64(fake_stats.fences - before.fences, 1);
        CHECK_EQ_U64(fake_stats.cpuid_calls, before.cpuid_calls);
        CHECK_EQ_U64(fake_stats.mmio_writes + fake_stats.mmio_reads,
                     before.mmio_writes + before.mmio_reads);
        fake_run_for_ns(20000);
        CHECK_EQ_U64(events_seen, 2 + (uint64_t)i);
        /* never early; late by the handler's EOI (100 ns) and clock read (20 ns) only */
        if (!CHECK(last_event_ns >= deadline && last_event_ns <= deadline + 121))
            printf("    event at %" PRIu64 " ns, deadline %" PRIu64 "\n", last_event_ns, deadline);
    }
    CHECK_EQ_U64(ce->abs_programs, 10);
    /* The relative path is one RDTSC more, still one WRMSR and one fence. */
    struct fake_stats before = fake_stats;
    CHECK_EQ_I64(clockevent_program_ns(ce, 5000), 0);
    CHECK_EQ_U64(fake_stats.msr_writes - before.msr_writes, 1);
    CHECK_EQ_U64(fake_stats.fences - before.fences, 1);
    CHECK_EQ_U64(fake_stats.cpuid_calls, before.cpuid_calls);
    clockevent_release(ce);
    CHECK_EQ_U64(fake_lapic_tsc_deadline(), 0);                 /* shut down: disarmed */
}

/* AMD orders the WRMSR by itself (cpu_info.amd_wrmsr_ordered, from the vendor string, once):
 * no fence per arm. */
TEST(drv_lapic_timer_ce_deadline_on_amd_needs_no_fence)
{
    struct cpu_info ci;
    REQUIRE(setup(false));
    /* "AuthenticAMD" is EBX, EDX, ECX */
    fake_cpuid_set(0, FAKE_CPUID_ANY, (struct cpuid_regs){ 0xD, 0x68747541, 0x444d4163,
                                                           0x69746e65 });
    cpu_probe(&ci);
    CHECK_EQ_STR(ci.vendor, "AuthenticAMD");
    CHECK(ci.amd_wrmsr_ordered);
    deadline_cpu();
    cpu_probe(&ci);
    timekeeping_test_reset();
    clockevent_test_reset();
    struct clocksource *tsc = calibrated_tsc(&ci);
    REQUIRE(clocksource_register(tsc) == 0);
    REQUIRE(clocksource_set_freq(tsc, FAKE_TSC_DEFAULT_HZ) == 0);
    irqs.then = ce_entry;
    lapic_timer_ce_init(&lt, &the_apic, 0, VEC, 1000000000, tsc, &ci);
    CHECK(!lt.fence);
    REQUIRE(clockevent_register(&lt.deadline) == 0);
    REQUIRE(clockevent_claim(&lt.deadline, count_event, &owner) == 0);
    events_seen = 0;
    REQUIRE(clockevent_program_ns(&lt.deadline, 10000) == 0);
    uint64_t fences = fake_stats.fences, msrs = fake_stats.msr_writes;
    CHECK_EQ_I64(clockevent_program_ns(&lt.deadline, 10000), 0);
    CHECK_EQ_U64(fake_stats.fences, fences);
    CHECK_EQ_U64(fake_stats.msr_writes - msrs, 1);
    fake_run_for_ns(20000);
    CHECK_EQ_U64(events_seen, 1);
    clockevent_release(&lt.deadline);
}

/* One timer, two modes: the devices share ->hw, so owning one makes the other unavailable;
 * the interrupt goes to the mode the LVT was last put in. */
TEST(drv_lapic_timer_ce_two_modes_share_the_timer)
{
    struct cpu_info ci;
    static int other;
    REQUIRE(ce_machine(false, true, &ci));
    CHECK(clockevent_shares_hw(&lt.lapic, &lt.deadline));
    REQUIRE(clockevent_claim(&lt.lapic, count_event, &owner) == 0);
    CHECK(!clockevent_is_free(&lt.deadline));
    CHECK_EQ_I64(clockevent_claim(&lt.deadline, count_event, &other), -EBUSY);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, NULL, 0) == NULL);
    REQUIRE(clockevent_program_ns(&lt.lapic, 5000) == 0);
    fake_run_for_ns(10000);
    CHECK_EQ_U64(lt.lapic.events, 1);
    CHECK_EQ_U64(lt.deadline.events, 0);

    clockevent_release(&lt.lapic);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, NULL, 0) == &lt.deadline);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, &lt.deadline, NULL, 0) == NULL);
    REQUIRE(clockevent_claim(&lt.deadline, count_event, &other) == 0);
    REQUIRE(clockevent_program_ns(&lt.deadline, 5000) == 0);
    fake_run_for_ns(10000);
    CHECK_EQ_U64(lt.deadline.events, 1);
    CHECK_EQ_U64(lt.lapic.events, 1);
    clockevent_release(&lt.deadline);
}

/* Periodic through the core: 1 ms at the 1 GHz timer clock is 1,000,000 counts, exact. */
TEST(drv_lapic_timer_ce_periodic_through_core)
{
    struct cpu_info ci;
    uint64_t actual = 0;
    REQUIRE(ce_machine(false, false, &ci));
    REQUIRE(clockevent_claim(&lt.lapic, count_event, &owner) == 0);
    REQUIRE(clockevent_set_periodic_ns(&lt.lapic, 1000000, &actual) == 0);
    CHECK_EQ_U64(actual, 1000000);
    uint64_t t0 = vclock_now_ns();
    fake_run_for_ns(10500000);
    CHECK_EQ_U64(events_seen, 10);
    REQUIRE(irqs.n >= 10);
    CHECK_EQ_U64(irqs.e[0].t_ns - t0, 1000000);      /* a period after the write that starts it */
    clockevent_release(&lt.lapic);
    fake_run_for_ns(5000000);
    CHECK_EQ_U64(events_seen, 10);
}

/* Without a calibrated timer clock the count-down device is listed unusable with a reason;
 * without a calibrated TSC so is the deadline device. */
TEST(drv_lapic_timer_ce_unusable_without_calibration)
{
    struct cpu_info ci;
    REQUIRE(setup(false));
    deadline_cpu();
    cpu_probe(&ci);
    clockevent_test_reset();
    lapic_timer_ce_init(&lt, &the_apic, 0, VEC, 0, NULL, &ci);
    CHECK(!lt.lapic.usable);
    CHECK_EQ_STR(lt.lapic.unusable_reason, "LAPIC timer frequency not calibrated");
    CHECK(!lt.deadline.usable);
    CHECK_EQ_STR(lt.deadline.unusable_reason, "no calibrated TSC");
    /* Both are still listed (the report shows them), with or without a TSC source. */
    CHECK_EQ_I64(clockevent_register(&lt.lapic), 0);
    CHECK_EQ_I64(clockevent_register(&lt.deadline), 0);
    static struct lapic_timer_ce t1;
    struct clocksource uncalibrated = *tsc_clocksource_init(&the_tsc, &ci);
    uncalibrated.freq_hz = 0;
    lapic_timer_ce_init(&t1, &the_apic, 1, VEC, 0, &uncalibrated, &ci);
    CHECK(!t1.deadline.usable);
    CHECK_EQ_STR(t1.deadline.unusable_reason, "no calibrated TSC");
    CHECK_EQ_I64(clockevent_register(&t1.deadline), 0);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, NULL, 0) == NULL);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 1, NULL, NULL, 0) == NULL);
}

/* ---- TSC-deadline errata (Linux's deadline_match[] as facts) ---------------------------- */

static struct cpu_info erratum_cpu(const char *vendor, uint32_t family, uint32_t model,
                                   uint32_t stepping, uint32_t microcode)
{
    struct cpu_info ci;
    memset(&ci, 0, sizeof(ci));
    strcpy(ci.vendor, vendor);
    ci.family = family, ci.model = model, ci.stepping = stepping;
    ci.microcode_valid = true, ci.microcode = microcode;
    ci.tsc_deadline = true;
    return ci;
}

static const char *erratum_state(const struct cpu_info *ci, uint32_t *min)
{
    struct lapic_deadline_erratum e;
    memset(&e, 0xA5, sizeof(e));
    lapic_timer_deadline_erratum(ci, &e);
    *min = e.min_microcode;
    CHECK(!(e.affected && e.unknown));
    CHECK(e.listed || (!e.affected && !e.unknown && e.min_microcode == 0));
    return !e.listed ? "none" : e.affected ? "affected" : e.unknown ? "unknown" : "fixed";
}

/* A Haswell (06-3C) needs microcode 0x22: one below is affected, 0x22 is fixed; the same
 * model under a hypervisor, or with the revision unreadable, is unknown, never "fixed". */
TEST(drv_lapic_timer_deadline_erratum_haswell_by_microcode)
{
    uint32_t min;
    struct cpu_info ci = erratum_cpu("GenuineIntel", 6, 0x3C, 3, 0x21);
    CHECK_EQ_STR(erratum_state(&ci, &min), "affected");
    CHECK_EQ_U64(min, 0x22);
    ci.microcode = 0x22;
    CHECK_EQ_STR(erratum_state(&ci, &min), "fixed");
    ci.microcode = 0x21, ci.hypervisor = true;
    CHECK_EQ_STR(erratum_state(&ci, &min), "unknown");
    ci.hypervisor = false, ci.microcode_valid = false;
    CHECK_EQ_STR(erratum_state(&ci, &min), "unknown");
}

/* The server parts go by stepping: Haswell-X (06-3F) stepping 2 needs 0x3a, stepping 4
 * needs 0x0f, stepping 3 is not listed; Skylake-X (06-55) from stepping 5 (Cascade Lake,
 * Cooper Lake) is listed with minimum 0: fixed on any microcode, also under a hypervisor. */
TEST(drv_lapic_timer_deadline_erratum_server_parts_by_stepping)
{
    uint32_t min;
    struct cpu_info ci = erratum_cpu("GenuineIntel", 6, 0x3F, 2, 0x39);
    CHECK_EQ_STR(erratum_state(&ci, &min), "affected");
    CHECK_EQ_U64(min, 0x3a);
    ci.stepping = 4;
    CHECK_EQ_STR(erratum_state(&ci, &min), "fixed");
    CHECK_EQ_U64(min, 0x0f);
    ci.stepping = 3;
    CHECK_EQ_STR(erratum_state(&ci, &min), "none");
    ci = erratum_cpu("GenuineIntel", 6, 0x55, 4, 0x02000013);
    CHECK_EQ_STR(erratum_state(&ci, &min), "affected");
    CHECK_EQ_U64(min, 0x02000014);
    ci = erratum_cpu("GenuineIntel", 6, 0x55, 7, 0);
    CHECK_EQ_STR(erratum_state(&ci, &min), "fixed");
    ci.hypervisor = true;
    CHECK_EQ_STR(erratum_state(&ci, &min), "fixed");
}

/* Not Intel family 6, or a model the table does not name: no known erratum. */
TEST(drv_lapic_timer_deadline_erratum_none_for_other_cpus)
{
    uint32_t min;
    struct cpu_info ci = erratum_cpu("AuthenticAMD", 6, 0x3C, 3, 0x1);
    CHECK_EQ_STR(erratum_state(&ci, &min), "none");
    ci = erratum_cpu("GenuineIntel", 15, 0x3C, 3, 0x1);
    CHECK_EQ_STR(erratum_state(&ci, &min), "none");
    ci = erratum_cpu("GenuineIntel", 6, 0x97, 2, 0x1);        /* Alder Lake */
    CHECK_EQ_STR(erratum_state(&ci, &min), "none");
    ci.hypervisor = true, ci.microcode_valid = false;
    CHECK_EQ_STR(erratum_state(&ci, &min), "none");
}

/* On an affected CPU "tsc_deadline" is present but unusable, with a reason naming both
 * revisions; nothing is written to the LVT and the device cannot be claimed. On a fixed
 * one it is usable as before. */
TEST(drv_lapic_timer_deadline_device_unusable_on_erratum_microcode)
{
    struct cpu_info ci;
    static int owner;
    REQUIRE(setup(false));
    deadline_cpu();
    cpu_probe(&ci);
    REQUIRE(ci.tsc_deadline);
    strcpy(ci.vendor, "GenuineIntel");
    ci.family = 6, ci.model = 0x5E, ci.stepping = 3;
    ci.hypervisor = false, ci.microcode_valid = true, ci.microcode = 0xb1;
    timekeeping_test_reset();
    clockevent_test_reset();
    struct clocksource *tsc = calibrated_tsc(&ci);
    REQUIRE(clocksource_register(tsc) == 0);
    REQUIRE(clocksource_set_freq(tsc, FAKE_TSC_DEFAULT_HZ) == 0);
    uint32_t lvt = lapic_read(&the_apic, LAPIC_LVT_TIMER);
    lapic_timer_ce_init(&lt, &the_apic, 0, VEC, 1000000000, tsc, &ci);
    CHECK(lt.erratum.affected);
    CHECK(!lt.deadline.usable);
    CHECK_EQ_STR(lt.deadline.unusable_reason,
                 "known erratum on this microcode (0xb1; minimum 0xb2; Linux's table)");
    REQUIRE(clockevent_register(&lt.deadline) == 0);
    CHECK_EQ_I64(clockevent_claim(&lt.deadline, count_event, &owner), -ENODEV);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_LVT_TIMER), lvt);
    CHECK(lt.lapic.usable);
    ci.microcode = 0xb2;
    clockevent_test_reset();
    lapic_timer_ce_init(&lt, &the_apic, 0, VEC, 1000000000, tsc, &ci);
    CHECK(!lt.erratum.affected && lt.erratum.listed);
    CHECK(lt.deadline.usable);
}

/* Armed for an absolute time_ns() moment, the count-down timer is written in line by the
 * core (count_reg): the count worked out from the count of time_ns()'s counter (the TSC here)
 * that reaches the moment, taken before the clock read. Still one device write per event
 * (an MMIO write, or one WRMSR in x2APIC mode), and the event never comes before the moment
 * by time_ns(), and (with accesses that take no time) at most a cycle of rounding after it.
 * A moment already passed gets the shortest count. */
static uint64_t time_at_lapic_event;
static void note_time(struct clockevent *ce)
{
    (void)ce;
    events_seen++;
    time_at_lapic_event = time_ns();
}

static void abs_armed_in_line(bool x2apic)
{
    struct cpu_info ci;
    REQUIRE(ce_machine(x2apic, false, &ci));
    struct clockevent *ce = &lt.lapic;
    CHECK_EQ_U64(ce->count_reg.kind, x2apic ? IO_REG_MSR : IO_REG_MMIO32);
    REQUIRE(clockevent_claim(ce, note_time, &owner) == 0);
    REQUIRE(clockevent_program_ns(ce, 10000) == 0);             /* enters ONESHOT */
    fake_run_for_ns(20000);
    REQUIRE(events_seen == 1);
    /* accesses that take no time: the count alone decides when the timer fires */
    fake_cost.mmio_ns = fake_cost.msr_ns = fake_cost.rdtsc_ns = 0;
    uint64_t worst = 0;
    for (int i = 0; i < 200; i++) {
        struct fake_stats before = fake_stats;
        uint64_t now = time_ns(), deadline = now + 3000 + 997 * (uint64_t)i, target;
        /* the machine time at which the TSC reaches the moment's count */
        REQUIRE(timekeeping_cycles_at(deadline, &tsc_copy, &target) == 0);
        uint64_t due = fake_tsc_time_of(target);
        before = fake_stats;
        CHECK_EQ_I64(clockevent_program_abs_ns(ce, deadline, now), 0);
        if (x2apic) {
            CHECK_EQ_U64(fake_stats.msr_writes - before.msr_writes, 1);
            CHECK_EQ_U64(fake_stats.mmio_writes, before.mmio_writes);
        } else {
            CHECK_EQ_U64(fake_stats.mmio_writes - before.mmio_writes, 1);
            CHECK_EQ_U64(fake_stats.msr_writes, before.msr_writes);
        }
        fake_run_for_ns(3000 + 997 * (uint64_t)i + 5000);
        /* the interrupt itself: at the count, or a cycle of rounding after it, never
         * before */
        uint64_t fired = irqs.e[irqs.n - 1].t_ns;
        if (!CHECK_EQ_U64(events_seen, 2 + (uint64_t)i) ||
            !CHECK(time_at_lapic_event >= deadline) || !CHECK(fired >= due) ||
            !CHECK(fired <= due + 1)) {
            printf("    due %llu fired %llu\n", (unsigned long long)due,
                   (unsigned long long)fired);
            return;
        }
        if (time_at_lapic_event - deadline > worst)
            worst = time_at_lapic_event - deadline;
    }
    CHECK_EQ_U64(ce->inline_programs, 200);
    if (!CHECK(worst <= 2))
        printf("    worst %llu ns late\n", (unsigned long long)worst);
    /* a moment already passed: the shortest count, counted as a short clamp */
    uint64_t shorts = ce->clamped_short, now = time_ns();
    fake_run_for_ns(1000);
    CHECK_EQ_I64(clockevent_program_abs_ns(ce, now, now), 0);
    CHECK_EQ_U64(ce->clamped_short - shorts, 1);
    fake_run_for_ns(1000);
    CHECK_EQ_U64(events_seen, 202);
    clockevent_release(ce);
}

TEST(drv_lapic_timer_ce_abs_moment_armed_in_line_from_the_counter)
{
    abs_armed_in_line(false);
}

TEST(drv_lapic_timer_ce_abs_moment_armed_in_line_from_the_counter_x2apic)
{
    abs_armed_in_line(true);
}
